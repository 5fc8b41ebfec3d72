"""No false positives: a clean task workspace gives zero hits, for every function the project's
own strategy stubs in every sample repository and in a real package (cachetools' sdist), and a
real environment (the one running these tests) holds nothing that rejects a clean task."""

from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from taskforge.errors import Rejected
from taskforge.languages.python.delete.project import PythonProject
from taskforge.languages.python.delete.stub_function import StubFunction
from taskforge.languages.strategy import TaskOptions
from taskforge.model import Candidate
from taskforge.sanitize import (
    fingerprint_deletion,
    read_tree,
    remove_vcs_dirs,
    sanitize_and_scan,
    scan,
    tracked_paths,
)

SAMPLES = {"textkit": ".", "spans": "src", "exprcalc": "."}


def functions(project: PythonProject) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function or method with at least two statements besides its docstring."""
    found = []
    for path in project.source_files:
        for node in ast.walk(ast.parse(project.text(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = node.body[1:] if ast.get_docstring(node) else node.body
                if len(body) >= 2 and body[0].lineno > node.lineno:
                    found.append((path, node))
    return found


def stubbed(text: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """`text` with the function's body (docstring kept) replaced by `raise NotImplementedError`:
    the deletion produced directly, for checking many functions quickly."""
    body = node.body[1:] if ast.get_docstring(node) else node.body
    lines = text.splitlines(keepends=True)
    indent = " " * body[0].col_offset
    end = node.end_lineno or len(lines)
    return "".join([*lines[:body[0].lineno - 1], indent + "raise NotImplementedError\n",
                    *lines[end:]])


def with_strategy(project: PythonProject, path: str, node: ast.AST) -> dict[str, str] | None:
    """The same deletion made by the project's own `stub-function` strategy (LibCST)."""
    candidate = Candidate(strategy="stub-function", path=path, symbol=f"{path}:{node.name}",
                          kind="function", start_line=node.lineno, end_line=node.end_lineno,
                          body_lines=node.end_lineno - node.lineno, covering_tests=())
    try:
        return dict(StubFunction().apply(project, candidate, TaskOptions()).new_texts)
    except Rejected:
        return None


def check_clean(root: Path, import_root: str, tmp_path: Path, strategy_runs: int = 3
                ) -> tuple[int, int]:
    """Stub each function in a copy of `root` (the first few with the project's strategy, the
    rest directly); each stubbed tree must give zero hits. Returns (tasks, fingerprinted)."""
    ws = tmp_path / "ws"
    shutil.copytree(root, ws, symlinks=True)
    remove_vcs_dirs(ws)
    project = PythonProject(ws, (import_root,))
    targets = functions(project)
    assert targets, f"no functions found under {root}"
    tree = read_tree(ws)
    with_fingerprints = 0
    for n, (path, node) in enumerate(targets):
        new_texts = with_strategy(project, path, node) if n < strategy_runs else None
        if new_texts is None:
            new_texts = {path: stubbed(tree[path].decode(), node)}
        originals = {p: tree[p] for p in new_texts}
        task = {**tree, **{p: t.encode() for p, t in new_texts.items()}}
        fingerprints = fingerprint_deletion(originals, task)
        with_fingerprints += bool(fingerprints)
        for rel, text in new_texts.items():
            (ws / rel).write_text(text)
        try:
            hits = scan(fingerprints, [ws])
        finally:
            for rel in new_texts:
                (ws / rel).write_bytes(tree[rel])
        assert hits == [], f"{path}:{node.name}: false positives {[str(h) for h in hits]}"
    return len(targets), with_fingerprints


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_repository_has_no_false_positives(name: str, tmp_path: Path) -> None:
    checked, fingerprinted = check_clean(REPO_ROOT / "sample_repos" / name, SAMPLES[name],
                                         tmp_path)
    assert checked >= 5
    assert fingerprinted >= checked * 0.8  # nearly every deletion leaves something to find


@pytest.fixture(scope="module")
def cachetools_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real sdist of cachetools 8.0.1, through taskforge's own PyPI source."""
    from taskforge.cache import cache_root
    from taskforge.sources.pypi import ingest_pypi

    return ingest_pypi("cachetools==8.0.1", cache_root(None)).root


def test_real_package_has_no_false_positives(cachetools_root: Path, tmp_path: Path) -> None:
    checked, fingerprinted = check_clean(cachetools_root, "src", tmp_path)
    assert checked >= 40
    assert fingerprinted >= checked * 0.6


def test_real_environment_does_not_reject_clean_tasks(cachetools_root: Path,
                                                      tmp_path: Path) -> None:
    """The environment running these tests (pytest, libcst, coverage, pygments, rich, uv...)
    is a real one: words and phrases it shares with the deleted code are background."""
    env = Path(sys.prefix)
    project = PythonProject(cachetools_root, ("src",))
    targets = [(p, f) for p, f in functions(project)
               if f.name in ("__setitem__", "expire", "__get__")][:4]
    assert targets
    tree = read_tree(cachetools_root)
    for n, (path, node) in enumerate(targets):
        ws = tmp_path / f"ws{n}"
        shutil.copytree(cachetools_root, ws, symlinks=True)
        (ws / path).write_text(stubbed(tree[path].decode(), node))
        fingerprints = fingerprint_deletion({path: tree[path]}, read_tree(ws))
        assert fingerprints
        try:
            record = sanitize_and_scan(ws, env, fingerprints, tracked_paths(cachetools_root))
        except Rejected as e:  # pragma: no cover - the failure message is the point
            pytest.fail(f"{path}:{node.name}: clean task rejected: {e}")
        assert record["leak_scan"]["clean"] is True
        assert record["leak_scan"]["scanned"] == ["workspace", "environment"]


def test_idiomatic_lines_in_the_environment_are_background(tmp_path: Path) -> None:
    """`textkit.wrap.indent` shares `for line in text.splitlines(keepends=True):` with
    coverage's own code: one idiom in a library is not a copy of the deleted body."""
    root = REPO_ROOT / "sample_repos/textkit"
    project = PythonProject(root, (".",))
    (path, node), = [(p, f) for p, f in functions(project) if f.name == "indent"]
    tree = read_tree(root)
    ws = tmp_path / "ws"
    shutil.copytree(root, ws)
    (ws / path).write_text(stubbed(tree[path].decode(), node))
    fingerprints = fingerprint_deletion({path: tree[path]}, read_tree(ws))
    assert "for line in text.splitlines(keepends=True):" in {f.text for f in fingerprints.texts}
    env = tmp_path / "env/lib/python3.11/site-packages/coverage"
    env.mkdir(parents=True)
    (env / "debug.py").write_text(
        "def lines(text):\n    for line in text.splitlines(keepends=True):\n        yield line\n")
    record = sanitize_and_scan(ws, tmp_path / "env", fingerprints)
    assert record["leak_scan"]["background"] >= 1  # the line, and `keepends`
    (env / "textkit_copy.py").write_bytes(tree[path])
    with pytest.raises(Rejected) as err:
        sanitize_and_scan(ws, tmp_path / "env", fingerprints)
    assert (err.value.reason, err.value.detail.split(":")[0]) == (
        "leak:env", "env/lib/python3.11/site-packages/coverage/textkit_copy.py")
