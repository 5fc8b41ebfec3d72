"""Artifact rules: each named rule removes what it names, spares what the repository tracks,
and leaves ordinary source files alone."""

from __future__ import annotations

import contextlib
import fnmatch
import itertools
import os
import random
import shutil
from pathlib import Path, PurePosixPath

import pytest

from taskforge.artifacts import (
    RULES,
    git_exclude_lines,
    match_dir,
    remove_artifacts,
    rule_for,
    rule_for_path,
    tracked_paths,
)
from taskforge.sanitize import (
    fingerprint_deletion,
    read_tree,
    remove_vcs_dirs,
    sanitize_and_scan,
    sanitize_workspace,
)

# (rule, a file to create, the artifact path the rule removes: the file or its directory)
CASES = [
    ("python-bytecode", "pkg/__pycache__/mod.cpython-311.pyc", "pkg/__pycache__"),
    ("python-bytecode", "pkg/mod.pyc", "pkg/mod.pyc"),
    ("python-bytecode", "pkg/mod.pyo", "pkg/mod.pyo"),
    ("python-tool-caches", ".mypy_cache/3.11/pkg/mod.data.json", ".mypy_cache"),
    ("python-tool-caches", ".pytype/pyi/pkg/mod.pyi", ".pytype"),
    ("python-tool-caches", ".pyre/server/x.json", ".pyre"),
    ("python-tool-caches", ".ruff_cache/0.6.0/123", ".ruff_cache"),
    ("python-tool-caches", ".pytest_cache/v/cache/lastfailed", ".pytest_cache"),
    ("python-tool-caches", "sub/.hypothesis/examples/ab/cd", "sub/.hypothesis"),
    ("python-tool-caches", ".tox/py311/lib/x.py", ".tox"),
    ("python-tool-caches", ".nox/tests/lib/x.py", ".nox"),
    ("python-tool-caches", ".eggs/dep-1.0.egg", ".eggs"),
    ("python-tool-caches", ".dmypy.json", ".dmypy.json"),
    ("virtualenvs", ".venv/lib/python3.11/site-packages/pkg/mod.py", ".venv"),
    ("virtualenvs", "venv/bin/activate", "venv"),
    ("virtualenv-any-name", "myenv/pyvenv.cfg", "myenv"),
    ("build-outputs", "build/lib/pkg/mod.py", "build"),
    ("build-outputs", "dist/pkg-1.0-py3-none-any.whl", "dist"),
    ("build-outputs", "src/pkg.egg-info/SOURCES.txt", "src/pkg.egg-info"),
    ("build-outputs", "wheelhouse/pkg-1.0-py3-none-any.whl",
     "wheelhouse/pkg-1.0-py3-none-any.whl"),
    ("build-outputs", "eggs/pkg-1.0-py3.11.egg", "eggs/pkg-1.0-py3.11.egg"),
    ("sdists", "vendor/pkg-1.0.tar.gz", "vendor/pkg-1.0.tar.gz"),
    ("coverage-outputs", ".coverage", ".coverage"),
    ("coverage-outputs", ".coverage.host.1234.567", ".coverage.host.1234.567"),
    ("coverage-outputs", "coverage.xml", "coverage.xml"),
    ("coverage-outputs", "coverage.json", "coverage.json"),
    ("coverage-outputs", "lcov.info", "lcov.info"),
    ("coverage-outputs", "htmlcov/pkg_mod_py.html", "htmlcov"),
    ("coverage-outputs", ".nyc_output/abc.json", ".nyc_output"),
    ("rendered-docs", "docs/_build/html/_modules/pkg/mod.html", "docs/_build"),
    ("rendered-docs", "docs/.doctrees/index.doctree", "docs/.doctrees"),
    ("rendered-docs", "docs/api.doctree", "docs/api.doctree"),
    ("sphinx-module-pages", "site/html/_modules/pkg/mod.html", "site/html/_modules"),
    ("editor-leftovers", ".idea/workspace.xml", ".idea"),
    ("editor-leftovers", "pkg/mod.py~", "pkg/mod.py~"),
    ("editor-leftovers", "pkg/.mod.py.swp", "pkg/.mod.py.swp"),
    ("editor-leftovers", "pkg/.mod.py.swo", "pkg/.mod.py.swo"),
    ("editor-leftovers", "pkg/mod.py.bak", "pkg/mod.py.bak"),
    ("editor-leftovers", "pkg/#mod.py#", "pkg/#mod.py#"),
    ("editor-leftovers", "pkg/.#mod.py", "pkg/.#mod.py"),
    ("merge-leftovers", "pkg/mod.py.orig", "pkg/mod.py.orig"),
    ("merge-leftovers", "pkg/mod.py.rej", "pkg/mod.py.rej"),
    ("merge-leftovers", "pkg/mod_BACKUP_4242.py", "pkg/mod_BACKUP_4242.py"),
    ("tag-files", "tags", "tags"),
    ("tag-files", "TAGS", "TAGS"),
    ("tag-files", "GTAGS", "GTAGS"),
    ("tag-files", "cscope.out", "cscope.out"),
    ("notebook-checkpoints", "nb/.ipynb_checkpoints/explore-checkpoint.ipynb",
     "nb/.ipynb_checkpoints"),
    ("jvm-bytecode", "java/com/ex/Scores.class", "java/com/ex/Scores.class"),
    ("jvm-archives", "jars/scores.jar", "jars/scores.jar"),
    ("jvm-archives", "jars/scores.war", "jars/scores.war"),
    ("build-directories", "target/classes/Scores.class", "target"),
    ("build-directories", "out/production/app/Scores.class", "out"),
    ("build-directories", ".gradle/8.0/fileHashes/x.bin", ".gradle"),
    ("eclipse-output", "bin/com/ex/Scores.class", "bin"),
    ("maven-local-repository", ".m2/repository/com/ex/scores/1.0/scores-1.0.pom", ".m2"),
    ("java-ide-metadata", ".settings/org.eclipse.jdt.core.prefs", ".settings"),
    ("java-ide-metadata", ".classpath", ".classpath"),
    ("java-ide-metadata", "scores.iml", "scores.iml"),
    ("jdk-cds-archives", "cds/app.jsa", "cds/app.jsa"),
    ("js-caches", ".parcel-cache/data.mdb", ".parcel-cache"),
    ("source-maps", "static/app.js.map", "static/app.js.map"),
    ("source-maps", "static/site.css.map", "static/site.css.map"),
    # node_modules/.cache goes with its node_modules (js-caches names it for trees where
    # node_modules is tracked)
    ("node-modules", "web/node_modules/.cache/babel-loader/1f.json", "web/node_modules"),
    ("node-modules", "node_modules/jsdemo/src/store.js", "node_modules"),
    ("js-tool-caches", ".eslintcache", ".eslintcache"),
    ("js-tool-caches", "tsconfig.tsbuildinfo", "tsconfig.tsbuildinfo"),
    ("js-tool-caches", "node_modules_cache/.vite/deps/_metadata.json", "node_modules_cache/.vite"),
    ("js-compiled-outputs", "lib/index.js", "lib"),
    ("js-compiled-outputs", "packages/core/esm/index.mjs", "packages/core/esm"),
    ("js-coverage-outputs", "coverage/lcov-report/store.js.html", "coverage"),
]

SOURCES = ["pkg/__init__.py", "pkg/mod.py", "pkg/out.py", "pkg/target.py", "pkg/build_info.py",
           "pkg/_modules/__init__.py", "README.md", "web/index.js",
           "docs/conf.py", "docs/index.rst", "tests/test_mod.py",
           "tools/bin/run.sh",  # a bin/ without classes is not Eclipse's output
           # what makes a `lib/` or `esm/` beside them compiled output
           "src/index.ts", "packages/core/src/index.ts"]


def make_tree(root: Path, files: list[str]) -> None:
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n")


def test_every_rule_is_tested() -> None:
    assert {rule.name for rule in RULES} == {rule for rule, _f, _a in CASES}
    assert len({rule.name for rule in RULES}) == len(RULES)


@pytest.mark.parametrize(("rule", "planted", "artifact"), CASES,
                         ids=[f"{r}:{p}" for r, p, _a in CASES])
def test_rule_removes_its_artifact(tmp_path: Path, rule: str, planted: str, artifact: str) -> None:
    make_tree(tmp_path, [*SOURCES, planted])
    removed = remove_artifacts(tmp_path)
    assert removed == {rule: [artifact]}
    assert not (tmp_path / artifact).exists()
    for rel in SOURCES:
        assert (tmp_path / rel).is_file(), f"{rel} was removed"


@pytest.mark.parametrize(("rule", "planted", "artifact"), CASES,
                         ids=[f"{r}:{p}" for r, p, _a in CASES])
def test_rule_spares_tracked_files(tmp_path: Path, rule: str, planted: str, artifact: str) -> None:
    make_tree(tmp_path, [*SOURCES, planted])
    assert rule_for_path(tmp_path, planted).name == rule  # type: ignore[union-attr]
    assert remove_artifacts(tmp_path, keep=tracked_paths(tmp_path)) == {}
    assert (tmp_path / planted).is_file()


def test_untracked_files_inside_a_tracked_artifact_dir_go(tmp_path: Path) -> None:
    make_tree(tmp_path, ["build/fixture.txt", "build/lib/pkg/mod.py", "build/tmp/x.o"])
    removed = remove_artifacts(tmp_path, keep={"build/fixture.txt"})
    assert removed == {"build-outputs": ["build/lib", "build/tmp"]}
    assert (tmp_path / "build/fixture.txt").is_file()


def test_a_python_package_named_modules_is_not_sphinx_output(tmp_path: Path) -> None:
    make_tree(tmp_path, ["pkg/_modules/__init__.py", "pkg/_modules/loader.py"])
    assert remove_artifacts(tmp_path) == {}


def test_links_are_removed_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    make_tree(outside, ["keep-me.py"])
    tree = tmp_path / "tree"
    make_tree(tree, ["pkg/mod.py"])
    os.symlink(outside, tree / "build")
    os.symlink(outside / "keep-me.py", tree / "pkg/mod.pyc")
    removed = remove_artifacts(tree)
    assert removed == {"build-outputs": ["build"], "python-bytecode": ["pkg/mod.pyc"]}
    assert (outside / "keep-me.py").is_file()


def test_snapshot_rules_stay_name_only() -> None:
    """Rules for things a repository may track on purpose (a .jar fixture, an `out/` dir)
    are left to the scan: snapshots keep them and source discovery does not skip them."""
    lines = git_exclude_lines()
    for line in (".git/", "__pycache__/", "*.pyc", ".mypy_cache/", "build/", "*.egg-info/",
                 "htmlcov/", ".coverage", "*.orig", "tags", ".ipynb_checkpoints/"):
        assert line in lines
    for line in ("*.jar", "*.class", "target/", "out/", "*.map", "_modules/", "*/"):
        assert line not in lines
    assert rule_for("build", True) is not None
    assert rule_for("target", True) is None
    assert rule_for("out", True) is None
    assert rule_for("scores.jar", False) is None


def test_vcs_dirs_anywhere_are_removed(tmp_path: Path) -> None:
    make_tree(tmp_path, ["pkg/mod.py", "vendor/lib/.git/HEAD", "vendor/other/.hg/store",
                         "sub/.svn/entries", ".git/HEAD"])
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt/.git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert remove_vcs_dirs(tmp_path) == ["sub/.svn", "vendor/lib/.git", "vendor/other/.hg",
                                         "wt/.git"]  # the top-level one is replaced
    assert not (tmp_path / ".git").exists()
    assert (tmp_path / "pkg/mod.py").is_file()


def test_sanitize_workspace_reports_and_commits(tmp_path: Path) -> None:
    make_tree(tmp_path, ["pkg/mod.py", "pkg/__pycache__/mod.cpython-311.pyc", "lib/x.jar",
                         "vendor/dep/.git/HEAD"])
    removed = sanitize_workspace(tmp_path, keep={"pkg/mod.py", "lib/x.jar"},
                                 also_remove=["lib/x.jar"])
    assert removed == {"leak-scan": ["lib/x.jar"], "python-bytecode": ["pkg/__pycache__"],
                       "version-control": ["vendor/dep/.git"]}
    assert (tmp_path / ".git/HEAD").is_file()


def _rule_of_dir_as_written_first(parts: tuple[str, ...], path: Path | None):
    for rule in RULES:
        hit = any(fnmatch.fnmatchcase(parts[-1], p) for p in rule.dirs) or any(
            len(parts) >= len(p.split("/")) and all(
                fnmatch.fnmatchcase(a, b)
                for a, b in zip(parts[-len(p.split("/")):], p.split("/"), strict=True))
            for p in rule.paths)
        if hit and (rule.check is None or (path is not None and rule.check(path))):
            return rule
    return None


def _remove_artifacts_as_written_first(root: Path, keep: frozenset[str]) -> dict[str, list[str]]:
    """`remove_artifacts` as it was first written (pathlib throughout, each rule asked in
    turn): the reference its faster walk must agree with."""
    kept_dirs: set[str] = set()
    for rel in keep:
        parent = PurePosixPath(rel).parent
        while str(parent) != ".":
            kept_dirs.add(str(parent))
            parent = parent.parent
    removed: dict[str, list[str]] = {}

    def rule_of_file(name: str):
        return next((r for r in RULES if any(fnmatch.fnmatchcase(name, p) for p in r.files)),
                    None)

    def drop(path: Path, rule) -> None:
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        removed.setdefault(rule.name, []).append(path.relative_to(root).as_posix())

    def walk(here: Path, inside) -> None:
        for entry in sorted(os.scandir(here), key=lambda e: e.name):
            path = Path(entry.path)
            rel = path.relative_to(root).as_posix()
            if entry.is_dir(follow_symlinks=False):
                if entry.name in (".git", ".hg", ".svn"):
                    continue
                rule = inside or _rule_of_dir_as_written_first(PurePosixPath(rel).parts, path)
                if rule and rel not in kept_dirs:
                    drop(path, rule)
                else:
                    walk(path, rule)
            else:
                rule = inside or rule_of_file(entry.name)
                if rule is None and entry.is_symlink():
                    rule = _rule_of_dir_as_written_first(PurePosixPath(rel).parts, None)
                if rule and rel not in keep:
                    drop(path, rule)

    walk(root, None)
    return {k: sorted(v) for k, v in sorted(removed.items())}


# Names that rules match by name, by place (`node_modules/.cache`) or by what a directory
# holds (a pyvenv.cfg, class files, Sphinx's markers), and names no rule matches.
_DIR_NAMES = ["pkg", "src", "build", "lib", "node_modules", ".cache", "_modules", "bin", "venv",
              "env", "html", "_static", "__pycache__", "out", "target", "docs", ".git"]
_FILE_NAMES = ["mod.py", "x.pyc", "A.class", "pyvenv.cfg", "index.html", "objects.inv",
               "app.js.map", "notes.txt", "pkg-1.0.tar.gz", "tags", "a.jar", ".coverage"]


def _random_case(root: Path, seed: int) -> frozenset[str]:
    """A random tree at `root` and the files of it to keep (the same for the same seed)."""
    rng = random.Random(seed)
    files: set[str] = set()
    for _ in range(rng.randint(5, 40)):
        depth = rng.randint(0, 4)
        rel = "/".join([*(rng.choice(_DIR_NAMES) for _ in range(depth)), rng.choice(_FILE_NAMES)])
        path = root / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(rel)
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue  # a file where the path needs a directory, or the reverse
        files.add(rel)
    for _ in range(rng.randint(0, 3)):  # an empty directory, and links to a file and a dir
        (root / rng.choice(_DIR_NAMES) / rng.choice(_DIR_NAMES)).mkdir(parents=True,
                                                                       exist_ok=True)
    with contextlib.suppress(OSError):
        os.symlink("mod.py", root / rng.choice(_DIR_NAMES + _FILE_NAMES))
    with contextlib.suppress(OSError):
        os.symlink(".", root / "pkg" / rng.choice(_DIR_NAMES))
    return frozenset(rng.sample(sorted(files), rng.randint(0, len(files))))


def _walked(remove, original: Path, tree: Path, keep: frozenset[str]):
    """What `remove` removes from a copy of `original` at `tree`, and what it leaves."""
    shutil.copytree(original, tree, symlinks=True)
    return remove(tree, keep), sorted(os.path.relpath(os.path.join(d, n), tree)
                                      for d, dirs, names in os.walk(tree) for n in dirs + names)


@pytest.mark.parametrize("seed", range(60))
def test_the_walk_agrees_with_the_rules_asked_one_by_one(tmp_path: Path, seed: int) -> None:
    """On random trees of names the rules match by name, place and content (nested, kept,
    linked, empty), `remove_artifacts` removes exactly what the first, plain walk removed,
    and leaves the same tree (that the trees hold artifacts at all: the test below)."""
    keep = _random_case(tmp_path / "original", seed)
    assert _walked(remove_artifacts, tmp_path / "original", tmp_path / "fast", keep) \
        == _walked(_remove_artifacts_as_written_first, tmp_path / "original",
                   tmp_path / "reference", keep)


def test_the_random_trees_hold_artifacts(tmp_path: Path) -> None:
    """The differential test above is no test if its cases remove nothing: most do."""
    removing = 0
    for seed in range(60):
        keep = _random_case(tmp_path / f"original-{seed}", seed)
        removed, _left = _walked(remove_artifacts, tmp_path / f"original-{seed}",
                                 tmp_path / f"walked-{seed}", keep)
        removing += bool(removed)
    assert removing >= 30


def test_a_directory_s_rule_is_the_rules_asked_one_by_one() -> None:
    """`match_dir` by name and place alone (`node_modules/.cache` spans two components),
    against the rules asked in turn, for every path of up to three of the names above."""
    for depth in (1, 2, 3):
        for parts in itertools.product([*_DIR_NAMES, "a"], repeat=depth):
            assert match_dir(parts) == _rule_of_dir_as_written_first(parts, None), parts


GET_NAME = """\
'use strict'
const PATTERN = /at\\s(.*)/

module.exports = function getName (fn) {
  return fn.name || pickName(new Error('x').stack)
}

function pickName (stack) {
  const m = stack.match(PATTERN)
  if (!m) return 'anonymous'
  return m[1].trim().replace(/:\\d+$/, '')
}
module.exports.pickName = pickName
"""
STUBBED = GET_NAME.replace("""  const m = stack.match(PATTERN)
  if (!m) return 'anonymous'
  return m[1].trim().replace(/:\\d+$/, '')
""", '  throw new Error("not implemented");\n')


def _lib_package(root: Path, extra: dict[str, str]) -> None:
    """A package whose sources are in `lib/`, as fastify-plugin's and qs' are."""
    files = {"index.js": "module.exports = require('./lib')\n",  # not a build's source
             "lib/index.js": "module.exports = require('./getName')\n",
             "lib/getName.js": GET_NAME,
             "lib/camel.js": "module.exports = (s) => s.replace(/-(.)/g, (_, c) => c.toUpperCase())\n",
             "test/getName.js": "require('../lib/getName')\n",  # a test named like its module
             "types/index.d.ts": "export default function getName(fn: Function): string\n",
             **extra}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_a_lib_of_sources_is_no_compiled_output(tmp_path: Path) -> None:
    """A tracked `lib/` of sources stays, and counts as the task tree: taken for compiled
    output, the leak scan found the stubbed file's own names (not in the tree it read) in it
    and removed it, and the task's reference no longer applied (fastify-plugin 6.0.1)."""
    _lib_package(tmp_path, {"lib/pkg/mod.py": "x = 1\n"})  # a Python `lib/` too
    assert remove_artifacts(tmp_path) == {}
    assert {"lib/getName.js", "lib/camel.js", "lib/pkg/mod.py"} <= set(read_tree(tmp_path))
    (tmp_path / "lib/getName.js").write_text(STUBBED)
    fingerprints = fingerprint_deletion({"lib/getName.js": GET_NAME}, read_tree(tmp_path))
    assert len(fingerprints) and fingerprints.copied is None
    sanitizer = sanitize_and_scan(tmp_path, None, fingerprints, keep=read_tree(tmp_path))
    assert sanitizer["artifacts_removed"] == {} and sanitizer["leak_scan"]["clean"]
    assert (tmp_path / "lib/getName.js").read_text() == STUBBED


@pytest.mark.parametrize("beside", ["src/{}.ts",  # tsc --outDir lib
                                    "lib/{}.js.map",  # source maps
                                    "src/{}.js",  # babel src -> lib
                                    "{}.ts"])  # tsc, the project's root its root
def test_a_compiled_lib_is_an_artifact(tmp_path: Path, beside: str) -> None:
    _lib_package(tmp_path, {beside.format(stem): '{"version":3,"mappings":""}'
                            for stem in ("getName", "camel", "index")})
    assert remove_artifacts(tmp_path) == {"js-compiled-outputs": ["lib"]}


@pytest.mark.parametrize("beside", [
    {"src/index.js": "x\n"},  # one shared name: a browser app's src/ beside the package
    {"lib/vendor/pako.min.js": "x\n",  # a vendored bundle with its map
     "lib/vendor/pako.min.js.map": '{"version":3,"mappings":""}'},
    {"lib/tables/cp437.map": "0x80 0x00C7\n"},  # a data file, no source map
    {"es/getName.js": "x\n", "es/camel.js": "x\n", "es/index.js": "x\n"},  # built from lib/
])
def test_a_lib_of_sources_stays_beside_lookalikes(tmp_path: Path, beside: dict[str, str]) -> None:
    _lib_package(tmp_path, beside)
    assert "js-compiled-outputs" not in remove_artifacts(tmp_path)
    assert (tmp_path / "lib" / "getName.js").is_file()
