"""The snapshot bytecode that verification workspaces get: it is used (pytest finds its
rewritten test modules, the interpreter its compiled sources), it never stands in for a file
that changed, and the environment comes with its own compiled."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import make_project, setuptools_pyproject

from taskforge.ingest import ingest
from taskforge.languages.base import Runner
from taskforge.languages.python.testing import bytecode as bytecode_module
from taskforge.languages.python.testing import runner
from taskforge.languages.python.testing.bytecode import seed_bytecode, snapshot_bytecode, source_of
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox

# A real environment's bytecode:
# not in the quick loop (`make test-quick`).
pytestmark = pytest.mark.slow


def project(tmp_path: Path) -> Path:
    return make_project(tmp_path, {
        "pyproject.toml": setuptools_pyproject("calc", "1.0"),
        "calc/__init__.py": "",
        "calc/ops.py": "def answer():\n    return 41\n",
        "tests/test_ops.py": "from calc.ops import answer\n\n\ndef test_answer():\n"
                             "    assert answer() == 41\n",
    })


def run(source, workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = workspace.parent / "home"
    home.mkdir(exist_ok=True)
    env = runner.environment_variables(source.env, workspace, home)
    return subprocess.run([*runner.test_argv(source.env), *args], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=120)


def test_verification_bytecode_is_used_and_never_stands_in_for_a_changed_file(
        tmp_path: Path, tf_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path)
    box = get_sandbox("none")
    source = ingest(SourceSpec(kind="path", location=str(root)), cache=tf_cache,
                    base_dir=root.parent, sandbox=box, repeats=1, timeout=120)
    tests_run = Runner(source.language, source.env, box, 120, cache=tf_cache)
    # Made by the ingest, with the baseline (once a snapshot), not by whatever asks first:
    # a first screen paid for it in its candidates' time (6.5 s on boltons).
    with monkeypatch.context() as patched:
        patched.setattr(bytecode_module, "_build", lambda *_args: pytest.fail("built late"))
        bytecode = snapshot_bytecode(source.snapshot, tests_run)
    pycs = sorted(p.relative_to(bytecode).as_posix() for p in bytecode.rglob("*.pyc"))
    # pytest's rewritten test module, and the source compiled hash-checked; nothing else of
    # the collect-only run (its own pyc of calc/ops.py was dropped and compiled again here)
    assert any(p.startswith("tests/__pycache__/test_ops.") and "-pytest-" in p for p in pycs)
    ops_pyc = bytecode / next(p for p in pycs if p.startswith("calc/__pycache__/ops."))
    assert int.from_bytes(ops_pyc.read_bytes()[4:8], "little") == 0b11  # checked hash
    assert source_of(Path("calc/__pycache__/ops.cpython-311.pyc")) == "calc/ops.py"
    assert snapshot_bytecode(source.snapshot, tests_run) == bytecode

    workspace = tmp_path / "ws" / "workspace"
    shutil.copytree(source.snapshot.root, workspace)
    assert seed_bytecode(workspace, bytecode, changed=()) == len(pycs)
    debug = tmp_path / "pytest-debug.log"
    proc = run(source, workspace, "-p", "no:cacheprovider", f"--debug={debug}", "-q")
    assert proc.returncode == 0, proc.stdout
    assert "found cached rewritten pyc" in debug.read_text()
    python = str(source.env.venv / "bin" / "python")
    loaded = subprocess.run([python, "-v", "-c", "import calc.ops"], cwd=workspace,
                            env={**os.environ, "PYTHONPATH": str(workspace)},
                            capture_output=True, text=True)
    assert "calc/__pycache__/ops." in loaded.stderr  # imported from the seeded bytecode

    # The worst case: the file changed with the same size and time stamp, and its bytecode
    # was seeded all the same. Hash-checked bytecode is not used; the new code runs.
    ops = workspace / "calc/ops.py"
    stat = ops.stat()
    ops.write_text(ops.read_text().replace("41", "42"))
    os.utime(ops, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert ops.stat().st_size == stat.st_size
    proc = run(source, workspace, "-p", "no:cacheprovider", "-q")
    assert proc.returncode == 1 and "assert 42 == 41" in proc.stdout

    # And a changed file gets none: seeding skips it.
    fresh = tmp_path / "ws2" / "workspace"
    shutil.copytree(source.snapshot.root, fresh)
    assert seed_bytecode(fresh, bytecode, changed={"calc/ops.py"}) == len(pycs) - 1
    assert not list((fresh / "calc").rglob("ops.*.pyc"))

    # Copies, not links: a run that rewrites its seeded bytecode in place changes neither the
    # cache nor what the next workspace gets, whether the tree is held in memory or copied
    # from disk (a tree past KEPT_BYTES).
    seeded = [p for p in pycs if p.startswith("tests/")]
    for pyc in seeded:
        with open(workspace / pyc, "r+b") as f:
            f.write(b"tampered")
    for limit in (bytecode_module.KEPT_BYTES, 0):
        monkeypatch.setattr(bytecode_module, "KEPT_BYTES", limit)
        bytecode_module._kept_tree.cache_clear()
        again = tmp_path / f"ws-{limit}" / "workspace"
        shutil.copytree(source.snapshot.root, again)
        assert seed_bytecode(again, bytecode, changed=()) == len(pycs)
        for pyc in pycs:
            assert (again / pyc).read_bytes() == (bytecode / pyc).read_bytes()
            assert (again / pyc).stat().st_ino != (bytecode / pyc).stat().st_ino
        assert not (bytecode / seeded[0]).read_bytes().startswith(b"tampered")
    bytecode_module._kept_tree.cache_clear()


def test_a_run_s_test_modules_alone_get_their_bytecode(tmp_path: Path, tf_cache: Path) -> None:
    """Given the files of the tests its runs will run, a workspace gets the bytecode of
    those test modules only (every source module's still, and the conftest's):
    pytest uses it for them, and a test module run all the same without its bytecode is
    rewritten from its source and runs as it would have."""
    root = make_project(tmp_path, {
        "pyproject.toml": setuptools_pyproject("calc", "1.0"),
        "calc/__init__.py": "",
        "calc/ops.py": "def answer():\n    return 41\n",
        "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef base():\n    return 1\n",
        "tests/test_ops.py": "from calc.ops import answer\n\n\ndef test_answer():\n"
                             "    assert answer() == 41\n",
        "tests/test_more.py": "from calc.ops import answer\n\n\ndef test_more(base):\n"
                              "    assert answer() + base == 42\n",
    })
    box = get_sandbox("none")
    source = ingest(SourceSpec(kind="path", location=str(root)), cache=tf_cache,
                    base_dir=root.parent, sandbox=box, repeats=1, timeout=120)
    bytecode = snapshot_bytecode(source.snapshot,
                                 Runner(source.language, source.env, box, 120, cache=tf_cache))
    pycs = sorted(p.relative_to(bytecode).as_posix() for p in bytecode.rglob("*.pyc"))
    more = [p for p in pycs if p.startswith("tests/__pycache__/test_more.")]
    assert any("-pytest-" in p for p in more)  # the control: there is one to leave out
    workspace = tmp_path / "ws" / "workspace"
    shutil.copytree(source.snapshot.root, workspace)
    assert seed_bytecode(workspace, bytecode, changed=(),
                         run_files={"tests/test_ops.py"}) == len(pycs) - len(more)
    seeded = sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*.pyc"))
    assert seeded == [p for p in pycs if p not in more]
    assert any(p.startswith("tests/__pycache__/conftest.") for p in seeded)
    debug = tmp_path / "pytest-debug.log"
    proc = run(source, workspace, "-p", "no:cacheprovider", f"--debug={debug}", "-q",
               "tests/test_ops.py", "tests/test_more.py")
    assert proc.returncode == 0 and "2 passed" in proc.stdout, proc.stdout
    lines = debug.read_text().splitlines()
    assert any("found cached rewritten pyc" in ln and "test_ops" in ln for ln in lines)
    assert any("rewriting" in ln and "test_more.py" in ln for ln in lines)  # anew
    assert not any("found cached rewritten pyc" in ln and "test_more" in ln for ln in lines)


def test_environment_packages_are_compiled(tmp_path: Path, tf_cache: Path) -> None:
    root = project(tmp_path)
    source = ingest(SourceSpec(kind="path", location=str(root)), cache=tf_cache,
                    base_dir=root.parent, sandbox=get_sandbox("none"), repeats=1, timeout=120)
    # Asked of the environment's interpreter: its cache tag and source hash are its own.
    check = """
import importlib.util, pathlib, _pytest
init = pathlib.Path(_pytest.__file__)
header = pathlib.Path(importlib.util.cache_from_source(str(init))).read_bytes()[:16]
print(int.from_bytes(header[4:8], "little"), header[8:16] == importlib.util.source_hash(init.read_bytes()))
"""
    proc = subprocess.run([str(source.env.venv / "bin" / "python"), "-c", check],
                          capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["3", "True"]  # hash-checked: still valid in an image
