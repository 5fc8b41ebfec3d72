"""Bad input through the real CLI: exit 2, one plain line on stderr naming what and where,
never a traceback, and nothing written to --out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import commit_all, init_repo, make_project, run_cli, stderr_lines, write_recipe

CODE = """\
    def clamp(value, low, high):
        if value < low:
            return low
        return min(value, high)
"""


def assert_one_line_error(proc: subprocess.CompletedProcess[str], out: Path,
                          *words: str) -> str:
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert not out.exists(), f"{out} was created: {sorted(p.name for p in out.iterdir())}"
    errors = [ln for ln in stderr_lines(proc) if ln.startswith("taskforge: error:")]
    assert len(errors) == 1, proc.stderr
    for word in words:
        assert word in errors[0], f"{word!r} not in {errors[0]!r}"
    # The whole of stderr is that one line (a sandbox warning aside).
    assert stderr_lines(proc) == errors, proc.stderr
    return errors[0]


def generate(tmp_path: Path, recipe_text: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    recipe = write_recipe(tmp_path / "recipe.yaml", recipe_text)
    out = tmp_path / "out"
    return run_cli("generate", str(recipe), "--out", str(out), cwd=tmp_path), out


def test_path_source_that_does_not_exist(tmp_path: Path) -> None:
    proc, out = generate(tmp_path, """\
        name: missing
        sources:
          - path: projects/not-here
    """)
    assert_one_line_error(proc, out, "projects/not-here", "does not exist", "recipe.yaml",
                          "sources[0].path")


def test_git_url_that_cannot_be_cloned(tmp_path: Path) -> None:
    url = f"file://{tmp_path}/no-such-repository"
    proc, out = generate(tmp_path, f"""\
        name: unclonable
        sources:
          - git: {url}
    """)
    assert_one_line_error(proc, out, url, "cannot clone")


def test_git_ref_that_does_not_exist(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"pkg/__init__.py": "", "pkg/core.py": CODE}, name="origin")
    init_repo(root)
    commit_all(root, "initial")
    proc, out = generate(tmp_path, f"""\
        name: badref
        sources:
          - git: file://{root}
            ref: release-9.9
    """)
    assert_one_line_error(proc, out, str(root), "release-9.9", "does not exist")


@pytest.mark.slow
def test_repository_without_tests(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"pkg/__init__.py": "", "pkg/core.py": CODE}, name="notests")
    proc, out = generate(tmp_path, f"""\
        name: notests
        sources:
          - path: {root}
    """)
    assert_one_line_error(proc, out, str(root), "no tests")


@pytest.mark.slow
def test_suite_where_every_test_fails(tmp_path: Path) -> None:
    root = make_project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/core.py": CODE,
        "tests/test_core.py": """\
            from pkg.core import clamp


            def test_low():
                assert clamp(-5, 0, 10) == -5


            def test_high():
                assert clamp(50, 0, 10) == 50
        """,
    }, name="allfail")
    proc, out = generate(tmp_path, f"""\
        name: allfail
        sources:
          - path: {root}
    """)
    assert_one_line_error(proc, out, str(root), "no test passes")


def test_malformed_recipe(tmp_path: Path) -> None:
    proc, out = generate(tmp_path, """\
        name: malformed
        sources:
          - path: [this is not closed
        seed: 1
    """)
    assert_one_line_error(proc, out, "recipe.yaml", "YAML", "line")


def test_unknown_recipe_key(tmp_path: Path) -> None:
    proc, out = generate(tmp_path, """\
        name: typo
        sources:
          - path: anywhere
        verify: {repeat: 3}
    """)
    assert_one_line_error(proc, out, "recipe.yaml", "verify.repeat", "unknown key")


def test_missing_recipe_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli("generate", "no-such-recipe.yaml", "--out", str(out), cwd=tmp_path)
    assert_one_line_error(proc, out, "no-such-recipe.yaml", "does not exist")


@pytest.mark.slow
def test_source_file_with_a_syntax_error_is_skipped_with_a_warning(tmp_path: Path) -> None:
    root = make_project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/core.py": CODE,
        "pkg/legacy.py": """\
            def old_style(x):
                print "python 2 was here"
                return x
        """,
        "tests/test_core.py": """\
            from pkg.core import clamp


            def test_inside():
                assert clamp(5, 0, 10) == 5


            def test_below():
                assert clamp(-1, 0, 10) == 0
        """,
    }, name="halfbroken")
    proc = run_cli("candidates", str(root), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    warnings = [ln for ln in stderr_lines(proc) if "warning" in ln and "legacy.py" in ln]
    assert len(warnings) == 1, proc.stderr
    assert "pkg/legacy.py" in warnings[0] and "syntax error" in warnings[0]
    found = json.loads(proc.stdout)
    assert [c["symbol"] for c in found] == ["pkg.core.clamp"]
    assert sorted(found[0]["covering_tests"]) == ["tests/test_core.py::test_below",
                                                  "tests/test_core.py::test_inside"]


GOOD_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/core.py": CODE,
    "tests/test_core.py": """\
        from pkg.core import clamp


        def test_inside():
            assert clamp(5, 0, 10) == 5


        def test_below():
            assert clamp(-1, 0, 10) == 0
    """,
}


@pytest.mark.slow
@pytest.mark.parametrize("link", ["outside", "absolute-inside", "loop"])
def test_git_source_with_a_bad_symlink_is_set_aside_and_the_run_goes_on(tmp_path: Path,
                                                                        link: str) -> None:
    bad = make_project(tmp_path, GOOD_PROJECT, name="linked")
    if link == "outside":
        (bad / "pkg" / "host").symlink_to("/etc/passwd")
    elif link == "absolute-inside":
        (bad / "pkg" / "alias.py").symlink_to(bad / "pkg" / "core.py")
    else:
        (bad / "pkg" / "a").symlink_to("b")
        (bad / "pkg" / "b").symlink_to("a")
    init_repo(bad)
    commit_all(bad, "with a symlink")
    good = make_project(tmp_path, GOOD_PROJECT, name="good")
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: links
        sources:
          - git: file://{bad}
          - path: {good}
        select: {{min_body_lines: 2}}
        verify: {{repeats: 1}}
        sandbox: none
    """)
    proc = run_cli("generate", str(recipe), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    aside = [ln for ln in stderr_lines(proc) if "set aside" in ln]
    assert len(aside) == 1 and str(bad) in aside[0] and "symlink" in aside[0], proc.stderr
    # Alone, the same source is one line with exit code 2.
    alone = write_recipe(tmp_path / "alone.yaml", f"""\
        name: alone
        sources:
          - git: file://{bad}
        sandbox: none
    """)
    out = tmp_path / "out-alone"
    assert_one_line_error(run_cli("generate", str(alone), "--out", str(out), cwd=tmp_path), out,
                          "symlink")


@pytest.mark.parametrize("where", ["under-a-file", "dev-null", "read-only"])
def test_an_output_directory_that_cannot_be_written(tmp_path: Path, where: str) -> None:
    root = make_project(tmp_path, GOOD_PROJECT, name="proj")
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: unwritable
        sources:
          - path: {root}
        sandbox: none
    """)
    (tmp_path / "a-file").write_text("")
    out = {"under-a-file": tmp_path / "a-file" / "out", "dev-null": Path("/dev/null"),
           # Read-only even for root: the kernel refuses new entries under /proc.
           "read-only": Path("/proc/self/out")}[where]
    proc = run_cli("generate", str(recipe), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(stderr_lines(proc)) == 1 and str(out) in proc.stderr, proc.stderr
    # Refused before the expensive work: no baseline was run.
    assert "baseline" not in proc.stdout


def test_a_cache_that_is_a_file(tmp_path: Path) -> None:
    root = make_project(tmp_path, GOOD_PROJECT, name="proj")
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: cachefile
        sources:
          - path: {root}
        sandbox: none
    """)
    (tmp_path / "cache-file").write_text("")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "taskforge", "generate", str(recipe), "--out",
                           str(out)], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "TASKFORGE_CACHE": str(tmp_path / "cache-file")})
    assert_one_line_error(proc, out, "cache-file", "TASKFORGE_CACHE", "not a writable directory")


@pytest.mark.slow
def test_a_malformed_journal_line(tmp_path: Path) -> None:
    root = make_project(tmp_path, GOOD_PROJECT, name="proj")
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: journal
        sources:
          - path: {root}
        select: {{min_body_lines: 2}}
        verify: {{repeats: 1}}
        sandbox: none
    """)
    out = tmp_path / "out"
    first = run_cli("generate", str(recipe), "--out", str(out), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    journal = out / ".journal" / "tasks-00000-of-00001.jsonl"
    journal.write_text('{"no": "key"}\n' + journal.read_text())
    proc = run_cli("generate", str(recipe), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert stderr_lines(proc) == [f"taskforge: error: {journal}:1: not a journal entry (the file "
                                  "was edited or damaged); start this shard over with --no-resume"]


@pytest.mark.parametrize("text", ["verify: {repeats: 3, repeats: 2}",
                                  "verify:\n  repeats: 3\n  repeats: 2"])
def test_a_duplicate_recipe_key(tmp_path: Path, text: str) -> None:
    proc, out = generate(tmp_path, "name: dup\nsources:\n  - path: anywhere\n" + text + "\n")
    assert_one_line_error(proc, out, "recipe.yaml", "duplicate key 'repeats'")


def test_a_binary_recipe(tmp_path: Path) -> None:
    recipe = tmp_path / "recipe.yaml"
    recipe.write_bytes(bytes(range(256)) * 4)
    out = tmp_path / "out"
    proc = run_cli("generate", str(recipe), "--out", str(out), cwd=tmp_path)
    assert_one_line_error(proc, out, "recipe.yaml", "not a YAML text file")


def test_a_directory_given_as_the_recipe(tmp_path: Path) -> None:
    (tmp_path / "recipes").mkdir()
    out = tmp_path / "out"
    proc = run_cli("generate", "recipes", "--out", str(out), cwd=tmp_path)
    assert_one_line_error(proc, out, "recipes", "a directory, not a recipe file")


@pytest.mark.parametrize("args", [("generate", "r.yaml", "--workers", "0"),
                                  ("export", ".", "--format", "nosuch", "--out", "x"),
                                  ("generate", "r.yaml", "--out", "a-file"),
                                  ("generate",), ("nosuch-command",)])
def test_clicks_own_usage_errors_are_one_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    (tmp_path / "a-file").write_text("")
    proc = run_cli(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert len(stderr_lines(proc)) == 1 and proc.stderr.startswith("taskforge: error: "), \
        proc.stderr
    assert "Usage:" not in proc.stderr


def test_max_tasks_per_source_zero_warns(tmp_path: Path) -> None:
    root = make_project(tmp_path, GOOD_PROJECT, name="proj")
    proc, _out = generate(tmp_path, f"""\
        name: zero
        sources:
          - path: {root}
        select: {{max_tasks_per_source: 0}}
        verify: {{repeats: 1}}
        sandbox: none
    """)
    assert proc.returncode == 0, proc.stderr
    warnings = [ln for ln in stderr_lines(proc) if "max_tasks_per_source is 0" in ln]
    assert len(warnings) == 1 and warnings[0].startswith("taskforge: warning:"), proc.stderr
