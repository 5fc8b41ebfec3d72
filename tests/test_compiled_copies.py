"""Compiled copies of the code a deletion edits never reach a task workspace.

`cypkg/core.py` is compiled by Cython in pure-Python mode (a `.so` of the same name, its C
and annotated HTML beside it, both quoting the source); `cypkg/_fast.pyx` is an ordinary
Cython extension the tests need. The attack, each time shown to win against a naive
pipeline first: a compiled `core` computes the deleted function although `core.py` is
stubbed, and Cython's C holds its lines. Cython and setuptools come from the package index
through uv, as in any environment build; the C compiler is the machine's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import apply_patch, commit_all, init_repo, make_project, write_recipe
from uv import find_uv_bin

import taskforge
from taskforge.ingest import ingest
from taskforge.model import SourceSpec
from taskforge.patches import apply_patch as apply_record_patch
from taskforge.sandbox import get_sandbox
from taskforge.sanitize import sanitize_workspace
from taskforge.sanitize.compiled import compiled_copies

DELETED_LINE = "total += value * weight"
PY312 = Path.home() / ".pyenv/versions/3.12.1/bin/python"
PY313 = Path.home() / ".pyenv/versions/3.13.0/bin/python"

FILES = {
    "pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=64", "Cython>=3"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "cypkg"
        version = "1.0"
        requires-python = ">=3.12,<3.13"
    """,
    "setup.py": """\
        from Cython.Build import cythonize
        from setuptools import setup

        setup(packages=["cypkg"],
              ext_modules=cythonize(["cypkg/core.py", "cypkg/_fast.pyx"], annotate=True))
    """,
    "cypkg/__init__.py": "",
    # short names only: no identifier of the body is distinctive, so what finds a compiled
    # copy must not rely on the leak scan seeing names in a binary
    "cypkg/core.py": f"""\
        def weighted_total(values, weights):
            total = 0
            for value, weight in zip(values, weights):
                {DELETED_LINE}
            return total
    """,
    "cypkg/_fast.pyx": "def add_one(long x):\n    return x + 1\n",
    "tests/test_core.py": """\
        from cypkg import _fast
        from cypkg.core import weighted_total


        def test_weighted_total():
            assert weighted_total([1, 2, 3], [3, 2, 1]) == 10


        def test_fast():
            assert _fast.add_one(41) == 42
    """,
}
COMPILED_CALL = "from cypkg.core import weighted_total; print(weighted_total([1, 2, 3], [3, 2, 1]))"


def build_in_place(root: Path, python: Path) -> set[str]:
    """What `setup.py build_ext --inplace` writes (Cython from the index): the attack's
    material, and what a naive pipeline would carry into every workspace."""
    return build_in_place_with(root, ["cython>=3", "setuptools>=64"], python)


def build_in_place_with(root: Path, requirements: list[str], python: Path = PY312) -> set[str]:
    before = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    proc = subprocess.run(
        [find_uv_bin(), "run", "--no-project", "--python", str(python),
         *[arg for r in requirements for arg in ("--with", r)],
         "--", "python", "setup.py", "-q", "build_ext", "--inplace"],
        cwd=root, capture_output=True, text=True,
        env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} - before


def stub_core(root: Path) -> None:
    (root / "cypkg/core.py").write_text(
        "def weighted_total(values, weights):\n    raise NotImplementedError\n")


def run_compiled(root: Path, python: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-c", COMPILED_CALL], cwd=root, capture_output=True,
                          text=True)


def copies_of_core(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "cypkg").iterdir()
                  if p.name.startswith("core.") and p.name != "core.py")


@pytest.mark.slow
def test_a_build_s_compiled_copy_of_a_module_is_not_carried(tmp_path: Path,
                                                            tf_cache: Path) -> None:
    # Attack: what the build writes holds the original code of `weighted_total`, runnable
    # after core.py is stubbed, and quoted in Cython's C.
    naive = make_project(tmp_path, FILES, name="naive")
    written = build_in_place(naive, PY312)
    stub_core(naive)
    assert run_compiled(naive, PY312).stdout.strip() == "10"  # the deleted code, compiled
    assert DELETED_LINE in (naive / "cypkg/core.c").read_text()
    assert {"cypkg/core.c", "cypkg/core.html", "cypkg/_fast.c"} <= written

    # The clone as upstream has it: nothing generated is committed.
    repo = make_project(tmp_path, {**FILES, ".gitignore": "*.so\n*.c\n*.html\nbuild/\n"},
                        name="cypkg")
    init_repo(repo)
    commit_all(repo, "initial")
    source = ingest(SourceSpec(kind="git", location=str(repo)), cache=tf_cache,
                    base_dir=tmp_path, sandbox=get_sandbox("none"), repeats=2, timeout=120)
    # The extension the tests need is carried; every copy of core and Cython's C are not.
    [fast] = source.env.outputs
    assert fast.startswith("cypkg/_fast.cpython-312") and fast.endswith(".so")
    assert copies_of_core(source.snapshot.root) == []
    assert not (source.snapshot.root / "cypkg/_fast.c").exists()
    notes = sorted(note.split(":")[0] for note in source.env.build_notes)
    assert [n for n in notes if not n.endswith(".so")] == [
        "cypkg/_fast.c", "cypkg/_fast.html", "cypkg/core.c", "cypkg/core.html"]
    assert any(n.startswith("cypkg/core.cpython-312") for n in notes)
    assert set(source.baseline.stable) == {"tests/test_core.py::test_weighted_total",
                                           "tests/test_core.py::test_fast"}


@pytest.mark.slow
def test_compiled_copies_shipped_in_the_tree_are_removed_from_the_task(tmp_path: Path,
                                                                       tf_cache: Path) -> None:
    """A tree that ships what an in-place build wrote (an sdist made from a built tree, a
    local checkout): Cython's C and HTML of core.py, and core compiled for another Python
    than the environment's, so the deletion still verifies and the copy would go unnoticed."""
    root = make_project(tmp_path, FILES, name="cypkg")
    build_in_place(root, PY313)
    shutil.rmtree(root / "build")
    shipped = copies_of_core(root)
    assert {"cypkg/core.c", "cypkg/core.html"} < set(shipped) and len(shipped) == 3

    recipe = write_recipe(tmp_path / "cy.yaml", f"""\
        name: cy
        sources:
          - path: {root}
        strategies: [stub-function]
        select: {{min_body_lines: 2}}
        sandbox: none
    """)
    out = tmp_path / "out"
    taskforge.generate(recipe, out=out, cache=tf_cache)
    [task] = taskforge.load_tasks(out, cache=tf_cache)
    assert task.record["deleted"][0]["symbol"] == "cypkg.core.weighted_total"
    assert task.record["FAIL_TO_PASS"] == ["tests/test_core.py::test_weighted_total"]

    # Attack: a naive workspace (the snapshot, the deletion applied) keeps all three, and
    # Python 3.13 there computes the deleted function from the shipped extension.
    naive = tmp_path / "naive"
    shutil.copytree(task.snapshot_root(), naive)
    apply_record_patch(naive, task.record["deletion_patch"])
    assert "NotImplementedError" in (naive / "cypkg/core.py").read_text()
    assert copies_of_core(naive) == shipped
    assert run_compiled(naive, PY313).stdout.strip() == "10"
    assert compiled_copies(naive, ["cypkg/core.py"]) == shipped

    # The task's workspace has none of them, says so, and the reference solution grades 1.0.
    workspace = task.materialize(tmp_path / "ws")
    assert copies_of_core(workspace) == []
    assert (workspace / "cypkg/_fast.pyx").is_file()
    removed = task.record["sanitizer"]["artifacts_removed"]
    assert removed["compiled-copies"] == shipped
    assert run_compiled(workspace, PY313).returncode != 0
    apply_patch(workspace, task.record["patch"])
    assert task.grade(workspace, sandbox="none").reward == 1.0


MYPYC_FILES = {
    "pkg/__init__.py": "",
    "pkg/a.py": "def double(x: int) -> int:\n    twice = x + x\n    return twice\n",
    "pkg/b.py": "from pkg.a import double\n\n\ndef quadruple(x: int) -> int:\n"
                "    return double(double(x))\n",
    "setup.py": "from mypyc.build import mypycify\nfrom setuptools import setup\n\n"
                "setup(name='pkg', packages=['pkg'], ext_modules=mypycify(['pkg/a.py', 'pkg/b.py']))\n",
}


def python_says(root: Path, code: str) -> str:
    proc = subprocess.run([str(PY312), "-c", code], cwd=root, capture_output=True, text=True)
    return proc.stdout.strip() or proc.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_mypyc_s_library_goes_with_every_shim(tmp_path: Path) -> None:
    """mypyc compiles a.py and b.py into one shared library and a shim per module. After a
    deletion from a.py the library still computes the original; without it, every shim
    fails to import (there is no fallback to the .py), so all of them go."""
    built = make_project(tmp_path, MYPYC_FILES, name="built")
    written = {p for p in build_in_place_with(built, ["mypy", "setuptools>=64"])
               if p.endswith(".so") and not p.startswith("build/")}
    library = next(p for p in written if "__mypyc." in p)
    shims = sorted(written - {library})
    assert [s.split(".")[0] for s in shims] == ["pkg/a", "pkg/b"]
    shutil.rmtree(built / "build")
    (built / "pkg/a.py").write_text("def double(x: int) -> int:\n    raise NotImplementedError\n")

    # Attack: the stubbed a.py is not what runs.
    assert python_says(built, "from pkg.a import double; print(double(2))") == "4"
    # Removing only the edited module's copies breaks its neighbour.
    partial = tmp_path / "partial"
    shutil.copytree(built, partial)
    for rel in (library, shims[0]):
        (partial / rel).unlink()
    assert "No module named" in python_says(partial, "import pkg.b")

    assert compiled_copies(built, ["pkg/a.py"]) == sorted([library, *shims])
    removed = sanitize_workspace(built, changed=["pkg/a.py"])
    assert removed["compiled-copies"] == sorted([library, *shims])
    assert python_says(built, "from pkg.b import quadruple; quadruple(1)").startswith(
        "NotImplementedError")
