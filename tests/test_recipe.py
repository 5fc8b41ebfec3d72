"""Recipes: strict validation, one-line errors naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO_ROOT, run_cli, stderr_lines, write_recipe

from taskforge.errors import UserError
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.recipe import VerifyOptions, load_recipe

GOOD = """\
    name: demo
    seed: 7
    sources:
      - path: projects/alpha
      - git: https://example.com/owner/beta.git
        ref: 0123456789abcdef0123456789abcdef01234567
        install: pip install -e .
        test_command: pytest -x tests
        python: "3.11"
      - pypi: "cachetools==5.3.3"
    strategies: [{stub-function: 2}]
    select: {min_covering_tests: 2, min_body_lines: 4, max_tasks_per_source: 9}
    task: {tests_visible: true, keep_docstrings: false}
    verify: {repeats: 3, timeout_s: 60, full_suite: true}
    sandbox: none
"""


def test_good_recipe_is_parsed(tmp_path: Path) -> None:
    path = write_recipe(tmp_path / "good.yaml", GOOD)
    recipe = load_recipe(path)
    assert recipe.name == "demo"
    assert recipe.seed == 7
    assert [(s.kind, s.location, s.ref) for s in recipe.sources] == [
        ("path", "projects/alpha", None),
        ("git", "https://example.com/owner/beta.git", "0123456789abcdef0123456789abcdef01234567"),
        ("pypi", "cachetools==5.3.3", None),
    ]
    git_source = recipe.sources[1]
    assert git_source.install == ("pip install -e .",)
    assert git_source.test_command == "pytest -x tests"
    assert git_source.python == "3.11"
    assert recipe.strategies == {"stub-function": 2.0}
    assert recipe.select == SelectOptions(min_covering_tests=2, min_body_lines=4)
    assert recipe.max_tasks_per_source == 9
    assert recipe.task == TaskOptions(keep_docstrings=False, tests_visible=True)
    assert recipe.verify == VerifyOptions(repeats=3, timeout_s=60.0, full_suite=True)
    assert recipe.sandbox == "none"
    assert recipe.path == path


def test_minimal_recipe_gets_the_documented_defaults(tmp_path: Path) -> None:
    recipe = load_recipe(write_recipe(tmp_path / "min.yaml", """\
        name: minimal
        sources:
          - path: somewhere
    """))
    assert recipe.seed == 0
    assert recipe.strategies == {"stub-function": 1.0}
    assert recipe.select == SelectOptions(min_covering_tests=1, min_body_lines=3)
    assert recipe.max_tasks_per_source == 50
    assert recipe.task == TaskOptions(keep_docstrings=True, tests_visible=True)
    assert recipe.verify == VerifyOptions(repeats=2, timeout_s=300.0, full_suite=False)
    assert recipe.sandbox == "auto"


def test_recipe_hash_is_the_sha256_of_the_file(tmp_path: Path) -> None:
    import hashlib

    path = write_recipe(tmp_path / "good.yaml", GOOD)
    assert load_recipe(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_text(path.read_text().replace("seed: 7", "seed: 8"))
    assert load_recipe(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_licenses_and_size_limit_are_read(tmp_path: Path) -> None:
    recipe = load_recipe(write_recipe(tmp_path / "lic.yaml", """\
        name: licensed
        sources:
          - path: somewhere
        select: {licenses: [mit, Apache-2.0, GPL-3.0], max_source_mb: 50, min_stable_tests: 20}
    """))
    assert recipe.licenses == ("MIT", "Apache-2.0", "GPL-3.0-only")  # canonical SPDX ids
    assert recipe.max_source_mb == 50.0
    assert recipe.min_stable_tests == 20
    assert load_recipe(write_recipe(tmp_path / "all.yaml", "name: all\n" + MINIMAL_SOURCES)
                       ).licenses is None


def test_line_range_in_either_spelling_and_hidden_tests(tmp_path: Path) -> None:
    def select(text: str) -> SelectOptions:
        return load_recipe(write_recipe(tmp_path / "r.yaml", f"name: r\nselect: {text}\n"
                                        + MINIMAL_SOURCES)).select

    assert select("{min_lines: 4, max_lines: 30}") == select("{lines: [4, 30]}") == \
        SelectOptions(min_lines=4, max_lines=30)
    assert select("{min_lines: 4}") == SelectOptions(min_lines=4, max_lines=None)
    assert select("{max_lines: 30}") == SelectOptions(min_lines=0, max_lines=30)
    hidden = load_recipe(write_recipe(tmp_path / "h.yaml", "name: h\ntask: {tests_visible: false}\n"
                                      + MINIMAL_SOURCES))
    assert hidden.task == TaskOptions(tests_visible=False)


def test_bundled_corpus_recipe_pins_every_sdist() -> None:
    recipe = load_recipe(REPO_ROOT / "recipes" / "pypi-corpus.yaml")
    assert len(recipe.sources) >= 12
    assert all(s.kind == "pypi" and "==" in s.location for s in recipe.sources)
    # no per-package overrides: detection reads what each package needs
    assert all(s.install is None and s.test_command is None and s.python is None
               for s in recipe.sources)


def test_bundled_quickstart_recipe_loads() -> None:
    recipe = load_recipe(REPO_ROOT / "recipes" / "quickstart.yaml")
    assert recipe.name == "quickstart"
    assert all(s.kind == "path" for s in recipe.sources)
    assert all((REPO_ROOT / s.location).is_dir() for s in recipe.sources)
    # Java's sample costs minutes a task (every run compiles): it has a cap of its own.
    caps = {Path(s.location).name: s.max_tasks for s in recipe.sources}
    assert caps["javademo"] == 4 and caps["textkit"] is None
    # make run emits Python, JavaScript and TypeScript tasks (and Java)
    assert {"textkit", "jsdemo", "tsdemo", "javademo"} <= set(caps)


MINIMAL_SOURCES = "sources:\n  - path: somewhere\n"

# case id -> (recipe text, words the one-line message must contain besides the file name)
BAD = {
    "unknown-top-level-key": ("name: x\ncolour: blue\n" + MINIMAL_SOURCES, ["colour", "unknown"]),
    "unknown-select-key": ("name: x\nselect: {min_tests: 3}\n" + MINIMAL_SOURCES,
                           ["select.min_tests", "unknown"]),
    "lines-both-spellings": ("name: x\nselect: {lines: [2, 9], max_lines: 9}\n" + MINIMAL_SOURCES,
                             ["select.max_lines", "not both"]),
    "max-lines-below-min": ("name: x\nselect: {min_lines: 5, max_lines: 2}\n" + MINIMAL_SOURCES,
                            ["select.max_lines", "at least"]),
    "min-lines-wrong-type": ("name: x\nselect: {min_lines: many}\n" + MINIMAL_SOURCES,
                             ["select.min_lines"]),
    "unknown-source-key": ("name: x\nsources:\n  - path: somewhere\n    branch: main\n",
                           ["sources[0].branch", "unknown"]),
    "seed-wrong-type": ('name: x\nseed: "x"\n' + MINIMAL_SOURCES, ["seed"]),
    "seed-boolean": ("name: x\nseed: true\n" + MINIMAL_SOURCES, ["seed"]),
    "repeats-zero": ("name: x\nverify: {repeats: 0}\n" + MINIMAL_SOURCES, ["verify.repeats"]),
    "timeout-wrong-type": ("name: x\nverify: {timeout_s: soon}\n" + MINIMAL_SOURCES,
                           ["verify.timeout_s"]),
    "missing-name": (MINIMAL_SOURCES, ["name", "missing"]),
    "empty-sources": ("name: x\nsources: []\n", ["sources"]),
    "no-sources": ("name: x\n", ["sources"]),
    "path-and-pypi": ('name: x\nsources:\n  - path: somewhere\n    pypi: "a==1"\n',
                      ["sources[0]", "path", "pypi"]),
    "ref-on-path-source": ("name: x\nsources:\n  - path: somewhere\n    ref: main\n",
                           ["sources[0].ref"]),
    "unknown-strategy": ("name: x\nstrategies: [delete-everything]\n" + MINIMAL_SOURCES,
                         ["strategies", "delete-everything"]),
    "bad-strategy-weight": ("name: x\nstrategies: [{stub-function: -1}]\n" + MINIMAL_SOURCES,
                            ["strategies.stub-function"]),
    "unknown-sandbox": ("name: x\nsandbox: chroot\n" + MINIMAL_SOURCES, ["sandbox", "chroot"]),
    "not-a-mapping": ("- just\n- a list\n", ["mapping"]),
    "licenses-not-a-list": ("name: x\nselect: {licenses: MIT}\n" + MINIMAL_SOURCES,
                            ["select.licenses", "list"]),
    "test-timeout-zero": ("name: x\nverify: {test_timeout_s: 0}\n" + MINIMAL_SOURCES,
                          ["verify.test_timeout_s", "positive"]),
    "min-stable-tests-zero": ("name: x\nselect: {min_stable_tests: 0}\n" + MINIMAL_SOURCES,
                              ["select.min_stable_tests", "at least 1"]),
    "licenses-not-ids": ("name: x\nselect: {licenses: [MIT, 'BSD License']}\n" + MINIMAL_SOURCES,
                         ["select.licenses[1]", "SPDX"]),
    "max-source-mb-negative": ("name: x\nselect: {max_source_mb: -5}\n" + MINIMAL_SOURCES,
                               ["select.max_source_mb", "negative"]),
    "invalid-yaml": ("name: x\nsources:\n  - path: [unclosed\n", ["line", "YAML"]),
    "source-max-tasks-text": ("name: x\nsources:\n  - path: somewhere\n    max_tasks: many\n",
                              ["sources[0].max_tasks", "int"]),
    "source-max-tasks-negative": ("name: x\nsources:\n  - path: somewhere\n    max_tasks: -1\n",
                                  ["sources[0].max_tasks", "negative"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_recipe_is_one_line_naming_file_and_key(tmp_path: Path, case: str) -> None:
    text, words = BAD[case]
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as info:
        load_recipe(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\nseed: 1\nsources:\n  - path: [unclosed\n")
    with pytest.raises(UserError, match=r"broken\.yaml: line \d+: not valid YAML"):
        load_recipe(path)


def test_missing_recipe_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "recipe.yaml"
    with pytest.raises(UserError) as info:
        load_recipe(path)
    assert str(path) in str(info.value)
    assert "does not exist" in str(info.value)


def test_python_version_written_as_a_yaml_number_is_not_silently_changed(tmp_path: Path) -> None:
    # YAML reads `python: 3.10` as the float 3.1: either refuse it (naming the key) or keep 3.10,
    # never build an environment for Python 3.1.
    path = write_recipe(tmp_path / "py.yaml", """\
        name: x
        sources:
          - path: somewhere
            python: 3.10
    """)
    try:
        recipe = load_recipe(path)
    except UserError as e:
        assert "sources[0].python" in str(e) and str(path) in str(e)
    else:
        assert recipe.sources[0].python == "3.10"


def test_cli_generate_with_bad_recipe_exits_2_with_one_line(tmp_path: Path) -> None:
    recipe = write_recipe(tmp_path / "bad.yaml", "name: x\nfrobnicate: yes\n" + MINIMAL_SOURCES)
    out = tmp_path / "out"
    proc = run_cli("generate", str(recipe), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = stderr_lines(proc)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("taskforge: error:")
    assert str(recipe) in lines[0] and "frobnicate" in lines[0]
    assert not out.exists()
