"""Ctrl-C exits 130 whenever it lands, also inside an `exec` of a string.

CPython 3.11 under `python -m` marks a KeyboardInterrupt that leaves such an `exec` (a
dataclass's generated methods are built that way while a module imports) and ends the
process by SIGINT at exit, whatever exit code the program chose after catching it:
`tests/test_outdir.py`'s Ctrl-C test saw `-2` instead of 130 now and then, with the
"interrupted" line printed. `exit_interrupted` clears the mark."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

PROBE = """\
import signal
import sys
import time

from taskforge.cli import exit_interrupted

try:
    # Ctrl-C lands inside an exec of a string: sent once "ready" is read
    exec('print("ready", flush=True); time.sleep(60)')
except KeyboardInterrupt:
    if sys.argv[1:] == ["naive"]:  # what exit_interrupted did before
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    exit_interrupted("interrupted")
"""


def interrupted(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "interrupted_probe.py").write_text(PROBE)
    run = subprocess.Popen([sys.executable, "-m", "interrupted_probe", *args], cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        assert run.stdout is not None and run.stdout.readline() == "ready\n"
        run.send_signal(signal.SIGINT)
        stdout, stderr = run.communicate(timeout=60)
    finally:
        run.kill()
        run.wait()
    return subprocess.CompletedProcess(run.args, run.returncode, stdout, stderr)


def test_ctrl_c_inside_an_exec_still_exits_130(tmp_path: Path) -> None:
    done = interrupted(tmp_path)
    assert done.returncode == 130 and done.stderr == "interrupted\n", done


def test_positive_control_sys_exit_alone_dies_by_the_signal(tmp_path: Path) -> None:
    """The same catch and `sys.exit(130)` without clearing the mark: CPython ends the process
    by SIGINT after the message."""
    done = interrupted(tmp_path, "naive")
    assert done.stderr == "interrupted\n", done
    assert done.returncode == -signal.SIGINT, done
