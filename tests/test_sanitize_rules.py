"""Artifact rules: each named rule removes what it names, spares what the repository tracks,
and leaves ordinary source files alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taskforge.artifacts import (
    RULES,
    git_exclude_lines,
    remove_artifacts,
    rule_for,
    rule_for_path,
    tracked_paths,
)
from taskforge.sanitize import remove_vcs_dirs, sanitize_workspace

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
           "tools/bin/run.sh"]  # a bin/ without classes is not Eclipse's output


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
