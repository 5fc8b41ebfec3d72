"""The grader's audit hook on its own (taskforge_pytest_plugin's `_install_audit`): what it
charges to the solution's files when they take a frame or read a cache, and what it leaves to
honest code. Each case runs a module of the "solution" in a fresh interpreter with the hook
installed, as a grading run has it, and reads the findings it wrote. The whole grader runs
these attacks in tests/test_grade_tamper.py; here are the honest uses a review of session
64's change found charged, beside a control the hook does charge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from taskforge.languages.python.testing.runner import PLUGIN_DIR

SITE_PACKAGES = Path(pytest.__file__).resolve().parent.parent  # pytest, for the plugin
PY312 = Path.home() / ".pyenv/versions/3.12.1/bin/python"


def findings(tmp_path: Path, code: str, python: Path | str = sys.executable) -> list[str]:
    """What the hook records while `sol.main()` runs (`sol.py`: the solution's file)."""
    workspace, audit = tmp_path / "ws", tmp_path / "audit"
    workspace.mkdir(parents=True, exist_ok=True)
    audit.mkdir()
    (workspace / "sol.py").write_text(textwrap.dedent(code))
    (audit / "solution.txt").write_text("sol.py\n")
    (audit / "protected.txt").write_text("")
    (audit / "frames.txt").write_text("")
    done = subprocess.run(
        [str(python), "-c", "import taskforge_pytest_plugin, sol; sol.main()"], cwd=workspace,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": f"{PLUGIN_DIR}:{SITE_PACKAGES}",
             "PYTHONDONTWRITEBYTECODE": "1", "TASKFORGE_AUDIT": str(audit)},
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = (audit / "findings.jsonl").read_text().splitlines() \
        if (audit / "findings.jsonl").is_file() else []
    return [json.loads(line)["message"] for line in lines if '"message"' in line]


def test_the_standard_librarys_own_frames_are_not_the_solutions(tmp_path: Path) -> None:
    """namedtuple reads its caller's module name, traceback formats and clears a caught
    exception's frames, inspect looks at a generator's state: nothing charged."""
    assert findings(tmp_path, """\
        import collections, inspect, logging, traceback

        def main():
            collections.namedtuple("Pair", "a b")
            try:
                int("x")
            except ValueError as caught:
                traceback.format_exc()
                logging.getLogger("sol").exception("as expected")
                traceback.clear_frames(caught.__traceback__)
            pending = (n for n in range(3))
            assert inspect.getgeneratorstate(pending) == "GEN_CREATED"
        """) == []


def test_frames_the_solution_takes_are_charged(tmp_path: Path) -> None:
    """The control: a frame taken directly, and one walked out of a traceback by traceback."""
    assert findings(tmp_path, """\
        import sys, traceback

        def main():
            sys._getframe(1)
            try:
                int("x")
            except ValueError as caught:
                next(traceback.walk_tb(caught.__traceback__))
        """) == ["reaches into the call stack (sys._getframe) from sol.py",
                 "reaches into the call stack (tb_frame) from sol.py"]


def test_inspect_asked_by_a_standard_module_is_not_the_solution(tmp_path: Path) -> None:
    """Python 3.12's `importlib.resources.files()` asks inspect.stack() for its caller; the
    solution calling inspect.stack() itself is charged (the control)."""
    assert PY312.is_file(), f"{PY312}: the interpreter this test needs"
    assert findings(tmp_path / "resources", """\
        import importlib.resources

        def main():
            try:
                importlib.resources.files()
            except Exception:
                pass  # (a module outside a package has no resources: the event came first)
        """, PY312) == []
    assert findings(tmp_path / "stack", """\
        import inspect

        def main():
            inspect.stack()
        """, PY312) == ["reaches into the call stack (sys._getframe) from sol.py"]


def test_an_environment_under_a_cache_directory_is_not_a_cache(tmp_path: Path) -> None:
    """taskforge's environments lie under ~/.cache/taskforge: a read of the environment's
    files (package metadata, data) is no cache read. A cache directory inside the workspace
    still is (the control)."""
    venv = tmp_path / ".cache" / "taskforge" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (tmp_path / "ws" / ".cache").mkdir(parents=True)
    (tmp_path / "ws" / ".cache" / "answer.txt").write_text("42")
    assert findings(tmp_path, """\
        import os, sys

        def main():
            open(os.path.join(sys.prefix, "pyvenv.cfg")).read()
            open(".cache/answer.txt").read()
        """, venv / "bin" / "python") == [
        "reads bytecode or caches (.cache/answer.txt) from sol.py"]


def test_a_file_is_compiled_quietly_whatever_the_warnings_filter(tmp_path: Path) -> None:
    """Whether code is its file's compiles the file inside the test process, where a test's
    `filterwarnings = error` may be in force: an invalid escape in it is no reason to call
    the code not its file's."""
    sys.path.insert(0, str(PLUGIN_DIR))
    try:
        from taskforge_integrity import code_of_file
    finally:
        sys.path.remove(str(PLUGIN_DIR))
    module = tmp_path / "escapes.py"
    module.write_text('import re\n\n\ndef digits():\n    return re.compile("\\d+")\n')
    scope: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(module.read_text(), str(module), "exec"), scope)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert code_of_file(scope["digits"].__code__, str(module))


def test_the_source_scan_names_frames_taken_not_a_projects_own_frame_objects(
        tmp_path: Path) -> None:
    """The static scan's side: a frame's attributes read, and the frame functions named
    with their module, are named; a project's own `Frame` setting such attributes, another
    object's `_getframe` and a local module called inspect are not."""
    from taskforge.languages.python.grading.static import scan_solution

    snapshot, copy = tmp_path / "snapshot", tmp_path / "copy"
    for root in (snapshot, copy):
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "own.py").write_text("")
        (root / "pkg" / "taken.py").write_text("")
    (copy / "pkg" / "own.py").write_text(textwrap.dedent("""\
        from .inspect import stack


        class Frame:
            def __init__(self, parent):
                self.f_back = parent
                self.f_locals = {}


        def still(video):
            return video._getframe(3)
        """))
    (copy / "pkg" / "taken.py").write_text(textwrap.dedent("""\
        import sys
        from inspect import currentframe


        def caller():
            return sys._getframe(1).f_back.f_locals
        """))
    assert [f.message for f in scan_solution(copy, snapshot, ["pkg/own.py", "pkg/taken.py"])] \
        == ["reaches into the call stack (_getframe): pkg/taken.py",
            "reaches into the call stack (currentframe): pkg/taken.py",
            "reaches into the call stack (f_back): pkg/taken.py",
            "reaches into the call stack (f_locals): pkg/taken.py"]


def test_a_run_without_sys_getframe_for_a_while_is_audited_as_before(tmp_path: Path) -> None:
    """attrs' own tests delete sys._getframe through monkeypatch (make_class on a Python
    without it) and open files meanwhile: the hook, which looked it up at each event, raised
    AttributeError into the open, monkeypatch never put it back, and the grader failed attrs'
    unchanged code (set aside by the self-grade). It takes sys._getframe when installed."""
    (tmp_path / "ws" / "__pycache__").mkdir(parents=True)
    (tmp_path / "ws" / "__pycache__" / "answer.txt").write_text("42")
    assert findings(tmp_path, """\
        import sys

        def main():
            taken = sys._getframe
            del sys._getframe
            try:
                open(__file__).read()
                open("__pycache__/answer.txt").read()
            finally:
                sys._getframe = taken
        """) == ["reads bytecode or caches (__pycache__/answer.txt) from sol.py"]


def test_a_solution_that_replaces_sys_getframe_is_still_seen(tmp_path: Path) -> None:
    """A sys._getframe that answers with no frame hid the solution's cache read from a hook
    that looked it up at each event (the solution's file was then on no frame it walked)."""
    (tmp_path / "ws" / "__pycache__").mkdir(parents=True)
    (tmp_path / "ws" / "__pycache__" / "answer.txt").write_text("42")
    assert findings(tmp_path, """\
        import sys

        def main():
            sys._getframe = lambda depth=0: None
            open("__pycache__/answer.txt").read()
        """) == ["reads bytecode or caches (__pycache__/answer.txt) from sol.py"]
