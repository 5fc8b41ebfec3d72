"""Adversarial leak tests: plant one kind of residue of a deleted function in a task workspace
(or its environment), then check that the scanner reports it and that the sanitizer leaves
none: after `sanitize_and_scan` the scan is clean, or the task is rejected as `leak:workspace` /
`leak:env` with the file named in the detail.

Everything is real: real git repositories, real compiled bytecode, real zip/tar/gzip/bz2/xz,
SQLite and git packs written by their own tools.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import py_compile
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import textwrap
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from taskforge.errors import Rejected
from taskforge.gitcmd import fresh_repository_problems
from taskforge.sanitize import (
    PendingScan,
    ScanRemoves,
    fingerprint_workspace,
    sanitize_and_scan,
    scan,
    tracked_paths,
)
from taskforge.sanitize.fingerprints import Fingerprints

MODULE = "pkg/scores.py"

ORIGINAL = textwrap.dedent('''\
    """Scoreboard helpers."""


    def normalize_scores(records, *, floor=0.0):
        """Scale the scores of `records` to 0..1."""
        spread_values = [r.score for r in records if r.score is not None]
        if not spread_values:
            raise ValueError("cannot normalise an empty scoreboard")
        lowest, highest = min(spread_values), max(spread_values)
        width = (highest - lowest) or 1.0
        return [max(floor, (r.score - lowest) / width) for r in records]


    def top_three(records):
        """The three best normalised scores."""
        return sorted(normalize_scores(records), reverse=True)[:3]
''')

TASK = textwrap.dedent('''\
    """Scoreboard helpers."""


    def normalize_scores(records, *, floor=0.0):
        """Scale the scores of `records` to 0..1."""
        raise NotImplementedError


    def top_three(records):
        """The three best normalised scores."""
        return sorted(normalize_scores(records), reverse=True)[:3]
''')

DELETED_FUNCTION = ORIGINAL[ORIGINAL.index("def normalize_scores"):ORIGINAL.index("def top_three")]
LITERAL = "cannot normalise an empty scoreboard"

FILES = {
    "pkg/__init__.py": '"""Scores."""\n',
    MODULE: TASK,
    "tests/test_scores.py": textwrap.dedent('''\
        from types import SimpleNamespace

        from pkg.scores import normalize_scores, top_three


        def test_top_three():
            records = [SimpleNamespace(score=s) for s in (1, 2, 3, 4)]
            assert top_three(records) == [1.0, 2 / 3, 1 / 3]


        def test_normalize():
            assert normalize_scores([SimpleNamespace(score=2)]) == [0.0]
        '''),
    "README.md": "# pkg\n\nScoreboards.\n",
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0.1"\n',
}

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com",
    "GIT_AUTHOR_DATE": "2022-02-02T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2022-02-02T00:00:00+00:00",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(ws: Path, *args: str, input: bytes | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    proc = subprocess.run(["git", *args], cwd=ws, env={**env, **GIT_ENV}, input=input,
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode().strip()


@dataclass
class Task:
    ws: Path
    fingerprints: Fingerprints
    keep: frozenset[str]

    def write(self, rel: str, data: bytes | str) -> Path:
        path = self.ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return make_task(tmp_path)


def make_task(tmp_path: Path) -> Task:
    """The task workspace of FILES under `tmp_path/ws`, with its fingerprints."""
    ws = tmp_path / "ws"
    for rel, text in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    keep = tracked_paths(ws)
    fingerprints = fingerprint_workspace(ws, {MODULE: ORIGINAL})
    return Task(ws, fingerprints, keep)


def test_fingerprints_are_distinctive(task: Task) -> None:
    texts = {f.text for f in task.fingerprints.texts}
    assert LITERAL in texts
    assert "spread_values" in texts  # a local name of the deleted body
    assert "normalize_scores" not in texts  # still used at call sites and in the tests
    assert "records" not in texts
    assert any(q == "normalize_scores" for q, _sig in task.fingerprints.code)
    assert scan(task.fingerprints, [task.ws]) == []  # the clean workspace: no hit


# -- residue builders -------------------------------------------------------------------------
def original_pyc(tmp: Path) -> bytes:
    src = tmp / "scores_src.py"
    src.write_text(ORIGINAL)
    out = tmp / "scores.pyc"
    py_compile.compile(str(src), cfile=str(out), doraise=True)
    return out.read_bytes()


def zip_bytes(members: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def targz_bytes(members: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in members.items():
            raw = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    return buffer.getvalue()


def sqlite_bytes(tmp: Path, rows: list[tuple[str, str]]) -> bytes:
    path = tmp / "db.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE file (path TEXT, source TEXT)")
    con.executemany("INSERT INTO file VALUES (?, ?)", rows)
    con.commit()
    con.close()
    return path.read_bytes()


def sphinx_page() -> str:
    """A `[source]` page as Sphinx renders it: Pygments' HTML, a span per token."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    body = highlight(ORIGINAL, PythonLexer(), HtmlFormatter())
    assert '<span class="n">spread_values</span>' in body  # no source line survives as is
    return f"<!DOCTYPE html>\n<html><head><title>pkg.scores</title></head><body>{body}</body></html>\n"


def commit_task(ws: Path) -> None:
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "task")


def commit_original_then_task(ws: Path) -> str:
    """History that holds the original: commit it, then the task state on top."""
    git(ws, "init", "-q", "-b", "main")
    (ws / MODULE).write_text(ORIGINAL)
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "original")
    original = git(ws, "rev-parse", "HEAD")
    (ws / MODULE).write_text(TASK)
    git(ws, "commit", "-q", "-am", "task")
    return original


def orphan_task_branch(ws: Path) -> str:
    """An original commit that `main` does not reach (only some other ref or log does)."""
    original = commit_original_then_task(ws)
    git(ws, "checkout", "-q", "--orphan", "fresh")
    git(ws, "commit", "-q", "-m", "task only")
    git(ws, "branch", "-q", "-D", "main")
    git(ws, "branch", "-q", "-m", "main")
    return original


# Each kind: plant(task, tmp) -> the path (relative to the workspace) that holds the residue.
def plant_pyc(t: Task, tmp: Path) -> str:
    t.write("pkg/__pycache__/scores.cpython-311.pyc", original_pyc(tmp))
    return "pkg/__pycache__/scores.cpython-311.pyc"


def plant_pyc_renamed(t: Task, tmp: Path) -> str:  # no rule names it: only the magic tells
    t.write("data/blob.bin", original_pyc(tmp))
    return "data/blob.bin"


def plant_mypy_cache(t: Task, tmp: Path) -> str:
    data = {".class": "MypyFile", "_fullname": "pkg.scores", "names": {
        "normalize_scores": {"node": {"arg_names": ["records", "floor"],
                                      "locals": ["spread_values", "lowest", "highest"]}}}}
    t.write(".mypy_cache/3.11/pkg/scores.data.json", json.dumps(data))
    return ".mypy_cache/3.11/pkg/scores.data.json"


def plant_pytest_cache(t: Task, tmp: Path) -> str:
    t.write(".pytest_cache/v/cache/lastfailed",
            json.dumps({f"tests/test_scores.py::test_normalize[{LITERAL}]": True}))
    return ".pytest_cache/v/cache/lastfailed"


def plant_hypothesis(t: Task, tmp: Path) -> str:
    t.write(".hypothesis/examples/9f2c/41aa", b"\x00\x01" + LITERAL.encode() + b"\xff")
    return ".hypothesis/examples/9f2c/41aa"


def plant_stash(t: Task, tmp: Path) -> str:
    commit_task(t.ws)
    (t.ws / MODULE).write_text(ORIGINAL)
    git(t.ws, "stash", "-q")
    assert (t.ws / MODULE).read_text() == TASK
    return ".git"


def plant_dangling_blob(t: Task, tmp: Path) -> str:
    commit_task(t.ws)
    git(t.ws, "hash-object", "-w", "--stdin", input=ORIGINAL.encode())
    return ".git"


def plant_packed_ref(t: Task, tmp: Path) -> str:
    original = orphan_task_branch(t.ws)
    git(t.ws, "update-ref", "refs/heads/before", original)
    git(t.ws, "pack-refs", "--all")
    git(t.ws, "repack", "-q", "-a", "-d")  # objects into a pack: the scanner parses packs
    assert "refs/heads/before" in (t.ws / ".git/packed-refs").read_text()
    return ".git"


def plant_reflog(t: Task, tmp: Path) -> str:
    git(t.ws, "init", "-q", "-b", "main")
    (t.ws / MODULE).write_text(ORIGINAL)
    git(t.ws, "add", "-A")
    git(t.ws, "commit", "-q", "-m", "original")
    (t.ws / MODULE).write_text(TASK)
    git(t.ws, "commit", "-q", "--amend", "-am", "task")  # the original: only the reflog has it
    assert "original" in git(t.ws, "reflog")
    return ".git"


def plant_orig_head(t: Task, tmp: Path) -> str:
    original = orphan_task_branch(t.ws)
    (t.ws / ".git/ORIG_HEAD").write_text(original + "\n")
    git(t.ws, "reflog", "expire", "--expire=now", "--all")
    return ".git"


def plant_git_note(t: Task, tmp: Path) -> str:
    commit_task(t.ws)
    git(t.ws, "notes", "add", "-m", DELETED_FUNCTION)
    return ".git"


def plant_tag(t: Task, tmp: Path) -> str:
    original = orphan_task_branch(t.ws)
    git(t.ws, "tag", "-a", "v0.1", "-m", "release", original)
    return ".git"


def plant_wheel_in_cache(t: Task, tmp: Path) -> str:
    t.write(".cache/pip/wheels/3a/7f/pkg-0.1-py3-none-any.whl",
            zip_bytes({MODULE: ORIGINAL, "pkg-0.1.dist-info/METADATA": "Name: pkg\n"}))
    return ".cache/pip/wheels/3a/7f/pkg-0.1-py3-none-any.whl"


def plant_build_lib(t: Task, tmp: Path) -> str:
    t.write("build/lib/pkg/scores.py", ORIGINAL)
    return "build/lib/pkg/scores.py"


def plant_egg_info(t: Task, tmp: Path) -> str:
    t.write("pkg.egg-info/PKG-INFO", "Name: pkg\n\n    >>> " + DELETED_FUNCTION)
    return "pkg.egg-info/PKG-INFO"


def plant_class_file(t: Task, tmp: Path) -> str:
    literal = LITERAL.encode()
    constant_pool = b"\x01" + len(literal).to_bytes(2, "big") + literal
    t.write("java/out/Scores.class", b"\xca\xfe\xba\xbe\x00\x00\x00\x3d\x00\x02" + constant_pool)
    return "java/out/Scores.class"


def plant_source_map(t: Task, tmp: Path) -> str:
    t.write("static/app.js.map", json.dumps({"version": 3, "sources": ["scores.py"],
                                             "sourcesContent": [ORIGINAL], "mappings": "AAAA"}))
    return "static/app.js.map"


def plant_targz(t: Task, tmp: Path) -> str:  # no rule: only the scan finds it
    t.write("attic/old-tree.tar.gz", targz_bytes({"old/" + MODULE: ORIGINAL}))
    return "attic/old-tree.tar.gz"


def plant_sdist(t: Task, tmp: Path) -> str:
    t.write("pkg-0.1.tar.gz", targz_bytes({"pkg-0.1/" + MODULE: ORIGINAL}))
    return "pkg-0.1.tar.gz"


def plant_zip(t: Task, tmp: Path) -> str:
    t.write("attic/code.zip", zip_bytes({"scores.py": ORIGINAL}))
    return "attic/code.zip"


def plant_gzip(t: Task, tmp: Path) -> str:
    t.write("logs/scores.py.gz", gzip.compress(ORIGINAL.encode()))
    return "logs/scores.py.gz"


def plant_bz2(t: Task, tmp: Path) -> str:
    t.write("logs/scores.bz2", bz2.compress(ORIGINAL.encode()))
    return "logs/scores.bz2"


def plant_xz(t: Task, tmp: Path) -> str:
    t.write("logs/scores.xz", lzma.compress(ORIGINAL.encode()))
    return "logs/scores.xz"


def plant_coverage_db(t: Task, tmp: Path) -> str:
    padding = "x" * 9000  # forces overflow pages: the text is split across pages on disk
    t.write(".coverage", sqlite_bytes(tmp, [(MODULE, padding + ORIGINAL)]))
    return ".coverage"


def plant_sqlite_elsewhere(t: Task, tmp: Path) -> str:
    t.write("data/cache.db", sqlite_bytes(tmp, [(MODULE, ORIGINAL)]))
    return "data/cache.db"


def plant_sphinx_build(t: Task, tmp: Path) -> str:
    t.write("docs/_build/html/_modules/pkg/scores.html", sphinx_page())
    return "docs/_build/html/_modules/pkg/scores.html"


def plant_orig(t: Task, tmp: Path) -> str:
    t.write(MODULE + ".orig", ORIGINAL)
    return MODULE + ".orig"


def plant_rej(t: Task, tmp: Path) -> str:
    t.write(MODULE + ".rej", "".join("-" + ln for ln in DELETED_FUNCTION.splitlines(True)))
    return MODULE + ".rej"


def plant_swap_file(t: Task, tmp: Path) -> str:
    t.write("pkg/.scores.py.swp", b"b0VIM 9.0\x00" + ORIGINAL.encode())
    return "pkg/.scores.py.swp"


def plant_notebook_checkpoint(t: Task, tmp: Path) -> str:
    cells = [{"cell_type": "code", "source": DELETED_FUNCTION.splitlines(True),
              "metadata": {}, "outputs": [], "execution_count": 1}]
    t.write("notebooks/.ipynb_checkpoints/explore-checkpoint.ipynb",
            json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {}}))
    return "notebooks/.ipynb_checkpoints/explore-checkpoint.ipynb"


def plant_tags_file(t: Task, tmp: Path) -> str:
    t.write("tags", "spread_values\tpkg/scores.py\t/^    spread_values = [r.score for r in "
                    'records if r.score is not None]$/;"\tv\n')
    return "tags"


def plant_git_bundle(t: Task, tmp: Path) -> str:  # a whole history in one file
    repo = tmp / "other"
    shutil.copytree(t.ws, repo)
    commit_original_then_task(repo)
    git(repo, "bundle", "create", str(t.ws / "backup.bundle"), "--all")
    return "backup.bundle"


def plant_loose_object_copy(t: Task, tmp: Path) -> str:
    obj = zlib.compress(b"blob %d\0" % len(ORIGINAL.encode()) + ORIGINAL.encode())
    t.write("stuff/3f/a1b2c3", obj)
    return "stuff/3f/a1b2c3"


def plant_nested_containers(t: Task, tmp: Path) -> str:  # a .pyc in a zip in a tar.gz
    inner = zip_bytes({"pkg/__pycache__/scores.cpython-311.pyc": original_pyc(tmp)})
    t.write("vendor/bundle.tgz", targz_bytes({"lib/app.pyz": inner}))
    return "vendor/bundle.tgz"


def plant_utf16_copy(t: Task, tmp: Path) -> str:
    t.write("notes/scores.txt", ORIGINAL.encode("utf-16"))
    return "notes/scores.txt"


def plant_virtualenv_copy(t: Task, tmp: Path) -> str:
    t.write("env/pyvenv.cfg", "home = /usr/bin\n")
    t.write("env/lib/python3.11/site-packages/pkg/scores.py", ORIGINAL)
    return "env/lib/python3.11/site-packages/pkg/scores.py"


def plant_node_cache(t: Task, tmp: Path) -> str:
    t.write("web/node_modules/.cache/babel-loader/4f1e.json",
            json.dumps({"code": ORIGINAL, "map": None}))
    return "web/node_modules/.cache/babel-loader/4f1e.json"


def plant_jar(t: Task, tmp: Path) -> str:
    t.write("lib/scores.jar", zip_bytes({"META-INF/MANIFEST.MF": "Manifest-Version: 1.0\n",
                                         "scores.py": ORIGINAL}))
    return "lib/scores.jar"


def plant_target_dir(t: Task, tmp: Path) -> str:
    t.write("target/classes/scores.py", ORIGINAL)
    return "target/classes/scores.py"


def plant_backup_file(t: Task, tmp: Path) -> str:
    t.write(MODULE + "~", ORIGINAL)
    return MODULE + "~"


PLANTS: dict[str, Callable[[Task, Path], str]] = {
    name.removeprefix("plant_"): fn for name, fn in dict(globals()).items()
    if name.startswith("plant_")
}

# Residue that no artifact rule names: the scan is the only defence, the task is rejected.
ONLY_THE_SCAN_FINDS = {"pyc_renamed", "targz", "zip", "gzip", "bz2", "xz", "sqlite_elsewhere",
                       "git_bundle", "loose_object_copy", "nested_containers", "utf16_copy"}


def test_at_least_twenty_kinds() -> None:
    assert len(PLANTS) >= 20, sorted(PLANTS)


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_scanner_reports_and_sanitizer_leaves_none(kind: str, task: Task, tmp_path: Path) -> None:
    planted = PLANTS[kind](task, tmp_path)
    hits = scan(task.fingerprints, [task.ws])
    assert any(h.path == planted or h.path.startswith(planted + "/") for h in hits), (
        f"{kind}: no hit in {planted}; hits: {[str(h) for h in hits]}")
    for hit in hits:
        assert hit.fingerprint and hit.kind in ("line", "block", "ident", "literal", "code")

    if kind in ONLY_THE_SCAN_FINDS:
        with pytest.raises(Rejected) as err:
            sanitize_and_scan(task.ws, None, task.fingerprints, task.keep)
        assert err.value.reason == "leak:workspace"
        assert err.value.detail.startswith(f"{planted}: ")
        return
    record = sanitize_and_scan(task.ws, None, task.fingerprints, task.keep)
    assert record["leak_scan"]["clean"] is True
    assert record["fresh_git"] is True
    assert scan(task.fingerprints, [task.ws]) == []
    assert not fresh_repository_problems(task.ws / ".git", full=True)
    assert (task.ws / MODULE).read_text() == TASK  # the task itself is untouched
    if planted != ".git":
        assert not (task.ws / planted).exists()
        removed = [p for paths in record["artifacts_removed"].values() for p in paths]
        assert any(planted == p or planted.startswith(p + "/") for p in removed), removed


def test_code_fingerprint_finds_bytecode_of_the_body(task: Task, tmp_path: Path) -> None:
    """The compiled original is recognised by its code object, not only by its strings."""
    task.write("data/blob.bin", original_pyc(tmp_path))
    hits = scan(task.fingerprints, [task.ws])
    code_hits = [h for h in hits if h.kind == "code"]
    assert {h.fingerprint for h in code_hits} == {
        "normalize_scores", "normalize_scores.<locals>.<listcomp>"}  # the body and its parts
    assert any(h.container.endswith("!code:normalize_scores") for h in code_hits)


def test_bytecode_of_the_task_state_is_no_hit(task: Task, tmp_path: Path) -> None:
    src = tmp_path / "task_src.py"
    src.write_text(TASK)
    py_compile.compile(str(src), cfile=str(task.ws / "data/task.pyc"), doraise=True)
    assert scan(task.fingerprints, [task.ws]) == []


def test_container_path_names_the_member(task: Task, tmp_path: Path) -> None:
    plant_nested_containers(task, tmp_path)
    wheres = {h.container for h in scan(task.fingerprints, [task.ws])}
    assert "!gunzip!lib/app.pyz!pkg/__pycache__/scores.cpython-311.pyc" in wheres
    assert any(w.endswith("!code:normalize_scores") for w in wheres)


def test_tracked_artifact_is_kept_unless_it_holds_residue(task: Task, tmp_path: Path) -> None:
    """A `.jar` fixture the repository tracks stays; one that holds residue is removed."""
    task.write("tests/fixtures/clean.jar", zip_bytes({"a.txt": "fixture data"}))
    task.write("docs/html/_static/basic.css", "body {}\n")
    task.write("docs/html/_modules/pkg/scores.html", sphinx_page())
    keep = tracked_paths(task.ws)
    record = sanitize_and_scan(task.ws, None, task.fingerprints, keep)
    assert (task.ws / "tests/fixtures/clean.jar").is_file()
    assert not (task.ws / "docs/html/_modules/pkg/scores.html").exists()
    assert record["artifacts_removed"]["leak-scan"] == ["docs/html/_modules/pkg/scores.html"]
    assert scan(task.fingerprints, [task.ws]) == []
    # the commit was remade without it
    assert "_modules" not in git(task.ws, "ls-tree", "-r", "--name-only", "HEAD")


def test_tracked_residue_no_rule_names_rejects(task: Task) -> None:
    task.write("docs/notes.md", "Old version:\n\n" + DELETED_FUNCTION)
    with pytest.raises(Rejected) as err:
        sanitize_and_scan(task.ws, None, task.fingerprints, tracked_paths(task.ws))
    assert (err.value.reason, err.value.detail.split(":")[0]) == ("leak:workspace", "docs/notes.md")


# -- the environment --------------------------------------------------------------------------
def make_env(tmp: Path) -> Path:
    env = tmp / "env"
    site = env / "lib/python3.11/site-packages"
    (site / "otherlib").mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr/bin\n")
    # third-party code that happens to share a name and one phrase with the deleted body
    (site / "otherlib/stats.py").write_text(
        "def spread(spread_values):\n    width = (highest - lowest) or 1.0\n    return 1\n")
    return env


def test_environment_copy_of_the_original_rejects(task: Task, tmp_path: Path) -> None:
    env = make_env(tmp_path)
    (env / "lib/python3.11/site-packages/pkg").mkdir()
    (env / "lib/python3.11/site-packages/pkg/scores.py").write_text(ORIGINAL)
    with pytest.raises(Rejected) as err:
        sanitize_and_scan(task.ws, env, task.fingerprints, task.keep)
    assert (err.value.reason, err.value.detail.split(":")[0]) == (
        "leak:env", "env/lib/python3.11/site-packages/pkg/scores.py")


def test_a_pending_scan_judges_the_workspace_as_it_was_read(task: Task, tmp_path: Path) -> None:
    """`PendingScan` reads the workspace when it begins, the environment on a thread: what
    is written into the workspace afterwards (its hidden tests coming back, a test run's
    output while the environment is searched) is not what the agent gets, nor the verdict."""
    env = make_env(tmp_path)
    interval = sys.getswitchinterval()
    with PendingScan(task.ws, env, task.fingerprints, task.keep) as pending:
        (task.ws / "pkg/written_later.py").write_text(ORIGINAL)
        record = pending.finish()
    assert record is not None and record["leak_scan"]["clean"] is True
    assert sys.getswitchinterval() == interval  # lowered while the thread searched, restored
    # positive control: the same file is a leak to a scan that reads the workspace now
    with pytest.raises(Rejected) as err:
        sanitize_and_scan(task.ws, env, task.fingerprints, task.keep)
    assert (err.value.reason, err.value.detail.split(":")[0]) == (
        "leak:workspace", "pkg/written_later.py")


def test_a_pending_scan_finds_what_the_workspace_held_when_read(task: Task,
                                                                tmp_path: Path) -> None:
    """The workspace's bytes are read when the scan begins and searched on its thread while
    the tests run: a copy of the deleted code there is a leak though a test run removes the
    file, or writes it over, before the verdict (the agent's workspace, made afresh, holds
    it)."""
    env = make_env(tmp_path)
    for undo in ("remove", "rewrite"):
        copy = task.ws / "pkg/scores_copy.py"
        copy.write_text(ORIGINAL)
        with PendingScan(task.ws, env, task.fingerprints, task.keep) as pending, \
                pytest.raises(Rejected) as err:
            copy.unlink() if undo == "remove" else copy.write_text("SCORES = {}\n")
            pending.finish()
        assert (err.value.reason, err.value.detail.split(":")[0]) == (
            "leak:workspace", "pkg/scores_copy.py"), undo
        # positive control: a scan that read the workspace after the run is fooled
        assert sanitize_and_scan(task.ws, env, task.fingerprints,
                                 task.keep)["leak_scan"]["clean"] is True


def test_a_pending_scan_gives_the_environment_s_verdict(task: Task, tmp_path: Path) -> None:
    """The environment, searched on the scan's thread, still decides: a copy there rejects
    when the verdict is asked for, or when the caller is rejected meanwhile; and
    `removals=False` raises ScanRemoves, not a removal, for what a rule would remove (the caller
    scans again, before its runs)."""
    env = make_env(tmp_path)
    copy = env / "lib/python3.11/site-packages/pkg/scores.py"
    copy.parent.mkdir()
    copy.write_text(ORIGINAL)
    with PendingScan(task.ws, env, task.fingerprints, task.keep) as pending, \
            pytest.raises(Rejected) as err:
        pending.finish()
    assert err.value.reason == "leak:env"
    # rejected meanwhile (its runs timed out, say): the leak is the reason, as it was when
    # the scan came first; without it, the timeout is
    with pytest.raises(Rejected) as err, PendingScan(task.ws, env, task.fingerprints, task.keep):
        raise Rejected("timeout", "task state")
    assert err.value.reason == "leak:env"
    copy.unlink()
    with pytest.raises(Rejected) as err, PendingScan(task.ws, env, task.fingerprints, task.keep):
        raise Rejected("timeout", "task state")
    assert err.value.reason == "timeout"
    # rendered docs the repository tracks (so sanitizing keeps them), with the source
    docs = "docs/html/_modules/pkg/scores.html"
    (task.ws / docs).parent.mkdir(parents=True)
    (task.ws / docs).write_text(ORIGINAL)
    keep = {*task.keep, docs}
    with PendingScan(task.ws, env, task.fingerprints, keep) as pending, \
            pytest.raises(ScanRemoves):
        pending.finish(removals=False)
    assert (task.ws / docs).exists()
    record = sanitize_and_scan(task.ws, env, task.fingerprints, keep)
    assert record["artifacts_removed"]["leak-scan"] == [docs]


def test_environment_wheel_in_cache_rejects(task: Task, tmp_path: Path) -> None:
    env = make_env(tmp_path)
    wheel = env / "cache/wheels/pkg-0.1-py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    wheel.write_bytes(zip_bytes({MODULE: ORIGINAL}))
    with pytest.raises(Rejected) as err:
        sanitize_and_scan(task.ws, env, task.fingerprints, task.keep)
    assert (err.value.reason, err.value.detail.split(":")[0]) == (
        "leak:env", "env/cache/wheels/pkg-0.1-py3-none-any.whl")


def test_environment_bytecode_is_removed(task: Task, tmp_path: Path) -> None:
    env = make_env(tmp_path)
    pyc = env / "lib/python3.11/site-packages/__pycache__/scores.cpython-311.pyc"
    pyc.parent.mkdir(parents=True)
    pyc.write_bytes(original_pyc(tmp_path))
    record = sanitize_and_scan(task.ws, env, task.fingerprints, task.keep)
    assert not pyc.exists()
    assert record["leak_scan"]["clean"] is True


def test_environment_sharing_a_name_is_background_not_a_leak(task: Task, tmp_path: Path) -> None:
    env = make_env(tmp_path)
    hits = scan(task.fingerprints, [env])
    assert {h.fingerprint for h in hits} >= {"spread_values"}
    record = sanitize_and_scan(task.ws, env, task.fingerprints, task.keep)
    assert record["leak_scan"]["background"] >= 1
    assert record["leak_scan"]["scanned"] == ["workspace", "environment"]


SMALL_ORIGINAL = textwrap.dedent("""\
    class Box:
        def get(self, key, default=None):
            if key in self:
                return self[key]
            else:
                return default

        def keys(self):
            return list(self._data)
    """)
SMALL_TASK = SMALL_ORIGINAL.replace(
    "        if key in self:\n            return self[key]\n        else:\n"
    "            return default\n", "        raise NotImplementedError\n")


@pytest.mark.parametrize("copy", [False, True])
def test_one_common_line_is_background_a_copy_is_not(tmp_path: Path, copy: bool) -> None:
    """A body whose only distinctive line is a common phrase (`return self[key]`, which
    pytest's own code holds): the library is background; a verbatim copy is a leak."""
    ws = tmp_path / "ws"
    (ws / "box").mkdir(parents=True)
    (ws / "box/__init__.py").write_text(SMALL_TASK)
    (ws / "box/other.py").write_text(
        "def lookup(self, key, default=None):\n    if key in self:\n        return default\n")
    fingerprints = fingerprint_workspace(ws, {"box/__init__.py": SMALL_ORIGINAL})
    assert [f.text for f in fingerprints.texts if f.kind == "line"] == ["return self[key]"]
    site = tmp_path / "env/lib/python3.11/site-packages"
    (site / "thirdparty").mkdir(parents=True)
    (site / "thirdparty/stash.py").write_text(
        "class Stash:\n    def __getitem__(self, key):\n        return self[key]\n")
    if copy:
        (site / "box").mkdir()
        (site / "box/__init__.py").write_text(SMALL_ORIGINAL)
        with pytest.raises(Rejected) as err:
            sanitize_and_scan(ws, tmp_path / "env", fingerprints)
        assert (err.value.reason, err.value.detail.split(":")[0]) == (
            "leak:env", "env/lib/python3.11/site-packages/box/__init__.py")
    else:
        record = sanitize_and_scan(ws, tmp_path / "env", fingerprints)
        assert record["leak_scan"]["background"] == 1


LONG_ORIGINAL = textwrap.dedent("""\
    def schedule(jobs, clock):
        pending = sorted(jobs, key=lambda job: job.priority)
        finished_jobs = []
        for job in pending:
            started_at = clock.now()
            outcome = job.run(started_at)
            if outcome.retry_later:
                pending.append(job.with_backoff(outcome.delay_seconds))
                continue
            finished_jobs.append((job.name, outcome.value))
            clock.advance(outcome.elapsed_seconds)
        summary = {name: value for name, value in finished_jobs}
        summary["__count__"] = len(finished_jobs)
        summary["__retried__"] = sum(1 for job in pending if job.attempts > 1)
        slowest = max(finished_jobs, key=lambda pair: pair[1].elapsed, default=None)
        if slowest is not None:
            summary["__slowest__"] = slowest[0]
        clock.record_batch(len(pending), summary["__count__"])
        return summary
    """)
IDIOMS = ("for job in pending:", "started_at = clock.now()",
          "finished_jobs.append((job.name, outcome.value))")


@pytest.mark.parametrize("held", [3, len(LONG_ORIGINAL.splitlines()) - 1])
def test_a_long_deletions_idioms_are_background_a_copy_is_not(tmp_path: Path, held: int) -> None:
    """Three lines of a nineteen-line body in a library are idioms it shares (JavaScript's
    `clearTimeout(timer);` in vitest's runner, for a deleted emitter class): background. A
    library holding the body is a copy, though the first line differs."""
    ws = tmp_path / "ws"
    (ws / "jobs").mkdir(parents=True)
    (ws / "jobs/__init__.py").write_text(
        LONG_ORIGINAL[:LONG_ORIGINAL.index("\n") + 1] + "    raise NotImplementedError\n")
    fingerprints = fingerprint_workspace(ws, {"jobs/__init__.py": LONG_ORIGINAL})
    lines = LONG_ORIGINAL.splitlines()[1:]
    held_lines = [line for line in lines if line.strip() in IDIOMS] if held == 3 else lines
    site = tmp_path / "env/lib/python3.11/site-packages"
    (site / "thirdparty").mkdir(parents=True)
    (site / "thirdparty/queue.py").write_text(
        "def drain(pending, clock, finished_jobs):\n"
        + "".join(f"    # {i}\n{line}\n" for i, line in enumerate(held_lines)))
    if held == 3:
        record = sanitize_and_scan(ws, tmp_path / "env", fingerprints)
        assert record["leak_scan"]["background"] >= 3
    else:
        with pytest.raises(Rejected) as err:
            sanitize_and_scan(ws, tmp_path / "env", fingerprints)
        assert (err.value.reason, err.value.detail.split(":")[0]) == (
            "leak:env", "env/lib/python3.11/site-packages/thirdparty/queue.py")
