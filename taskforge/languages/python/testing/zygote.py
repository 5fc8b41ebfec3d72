"""Warm runs: fresh pytest runs forked from a process that has imported pytest and nothing of
the project (`pytest_plugin/taskforge_zygote.py`), instead of a new interpreter each time.

Verification runs a candidate's tests in fresh processes: the confirmation, re-verification's
gates. On a suite of a few hundred fast tests, starting the interpreter and importing pytest
is a third of such a run; a zygote pays it once per environment and worker. Each run is
still fresh where it matters: the child imports the project's code and tests anew from its
own workspace, with the environment, working directory, `sys.path` and `sys.argv` a new
`python -m pytest` would have.

Only verification uses it, and only for workspaces made under a warm root
(`taskforge.workspace.warm_dir`): the zygote's sandbox sees that root (read-write, as it
sees a single workspace otherwise), so it can run in any of them. Grading never does: a
graded solution always runs in a new process of its own. `TASKFORGE_WARM_RUNS=0` turns warm
runs off. A zygote that cannot start or stops answering is dropped, and the run is made the
usual way.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from taskforge.leftovers import owned
from taskforge.model import Environment
from taskforge.sandbox import ExecResult, Mounts, Sandbox

SERVER = Path(__file__).parent / "pytest_plugin" / "taskforge_zygote.py"
LIFETIME = 24 * 3600.0  # the sandbox's own limit on a zygote; it ends with its host's jobs
READY_SECONDS = 300.0  # the first start may build a docker environment image
ANSWER_MARGIN = 60.0  # a result later than a run's timeout plus this: the zygote is broken
# Zygotes kept alive at once (each a sandbox with an interpreter, ~40 MB): a run over many
# sources ends the least recently used idle one past this.
KEEP = max(4, 2 * (os.cpu_count() or 1))


def enabled() -> bool:
    return os.environ.get("TASKFORGE_WARM_RUNS", "1") != "0"


class Zygote:
    """One warm pytest process in a sandbox, running one job at a time."""

    def __init__(self, env: Environment, sandbox: Sandbox, root: Path, mounts: Mounts,
                 variables: Mapping[str, str]) -> None:
        self.sandbox = sandbox
        self.dir = Path(tempfile.mkdtemp(dir=root, prefix=owned("zygote-")))
        jobs, results = self.dir / "jobs", self.dir / "results"
        os.mkfifo(jobs, 0o600)
        os.mkfifo(results, 0o600)
        # Read-write opens of a FIFO do not wait for the other end (Linux): a server that
        # never starts cannot hang us here, and our end keeps the FIFO open for it.
        self._jobs = os.open(jobs, os.O_RDWR)
        self._results = os.open(results, os.O_RDWR | os.O_NONBLOCK)
        self._buffer = b""
        self._ids = 0
        self.templated = 0  # runs whose pytest configuration started from the server's template
        self.broken = False
        self.last_used = time.monotonic()
        self.moved = sandbox.paths_inside(mounts)  # the job's host paths as the server sees them
        self.exit: ExecResult | None = None
        python = str(env.venv / "bin" / "python")
        # the server tells what the sandbox added to these from what taskforge gave
        given = {**variables, "TASKFORGE_ZYGOTE_GIVEN": ",".join(sorted(variables))}
        self._thread = threading.Thread(
            target=self._serve, daemon=True, name=f"zygote-{self.dir.name}",
            args=([python, str(SERVER), str(jobs), str(results)], given, mounts))
        self._thread.start()
        ready = self._answer(READY_SECONDS)
        if not ready or not ready.get("ready"):
            self.close()
            self.broken = True

    def _serve(self, argv: list[str], variables: dict[str, str], mounts: Mounts) -> None:
        try:
            self.exit = self.sandbox.exec(argv, workspace=self.dir, env=variables,
                                          timeout=LIFETIME, mounts=mounts)
        except Exception:
            self.exit = ExecResult(exit_code=-1, output="", duration_s=0.0, timed_out=False)

    def _answer(self, timeout: float) -> dict | None:
        """The server's next line, or None when it ended or said nothing in time."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            if self.exit is not None and not self._thread.is_alive():
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([self._results], [], [], min(left, 0.5))
            if readable:
                with contextlib.suppress(BlockingIOError):
                    self._buffer += os.read(self._results, 1 << 16)
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return None

    def run(self, args: Sequence[str], *, cwd: Path, variables: Mapping[str, str],
            timeout: float, log: Path) -> ExecResult | None:
        """pytest with `args` in `cwd`; None when the zygote could not run it (it is then
        broken: the caller runs the command the usual way)."""
        if self.broken:
            return None
        self._ids += 1
        job = {"id": self._ids, "cwd": self._inside(str(cwd)),
               "env": {k: self._inside(v) for k, v in variables.items()},
               "args": [self._inside(a) for a in args], "timeout": timeout,
               "log": self._inside(str(log))}
        start = time.monotonic()
        try:
            os.write(self._jobs, (json.dumps(job) + "\n").encode())
        except OSError:
            self.broken = True
            return None
        answer = self._answer(timeout + ANSWER_MARGIN)
        if not answer or answer.get("id") != job["id"]:
            self.broken = True
            self.close()
            return None
        self.templated += bool(answer.get("template"))
        output = ""
        with contextlib.suppress(OSError), open(log, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 8000))
            output = f.read().decode(errors="replace")
        return ExecResult(exit_code=int(answer["exit_code"]), output=output,
                          duration_s=time.monotonic() - start,
                          timed_out=bool(answer["timed_out"]))

    def _inside(self, text: str) -> str:
        for host, inside in self.moved.items():
            text = text.replace(host, inside)
        return text

    def close(self, wait: float = 0.0) -> None:
        """End the server (end of its jobs FIFO) and remove its directory."""
        for fd in (self._jobs, self._results):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._jobs = self._results = -1
        self.broken = True
        if wait:
            self._thread.join(wait)
        shutil.rmtree(self.dir, ignore_errors=True)


class Zygotes:
    """The idle zygotes of this process, by environment, sandbox and warm root: a worker
    thread takes one (or starts one) for a run and gives it back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[tuple, list[Zygote]] = {}
        self._all: list[Zygote] = []
        self._failed: set[tuple] = set()
        self._pid = os.getpid()
        self.served = 0  # runs a zygote answered, ever (a count that retiring does not lower)
        atexit.register(self.close_all)

    def _forget_inherited(self) -> None:
        """In a process forked from the one that started them, the zygotes are the parent's:
        their FIFOs are shared with it, so this process starts its own (and never ends those)."""
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            self._idle, self._all, self._failed = {}, [], set()

    def run(self, env: Environment, sandbox: Sandbox, root: Path, mounts: Mounts,
            start_variables: Mapping[str, str], args: Sequence[str], *, cwd: Path,
            variables: Mapping[str, str], timeout: float, log: Path) -> ExecResult | None:
        """Run pytest `args` warm; None when no zygote can (the caller runs it fresh)."""
        key = (str(env.venv), sandbox.name, id(sandbox), str(root), mounts)
        with self._lock:
            self._forget_inherited()
            if key in self._failed:
                return None
            idle = self._idle.setdefault(key, [])
            zygote = idle.pop() if idle else None
        if zygote is None:
            zygote = Zygote(env, sandbox, root, mounts, start_variables)
            if zygote.broken:
                with self._lock:
                    self._failed.add(key)
                return None
            with self._lock:
                self._all.append(zygote)
        result = zygote.run(args, cwd=cwd, variables=variables, timeout=timeout, log=log)
        retired: list[Zygote] = []
        with self._lock:
            if result is not None:
                self.served += 1
            if not zygote.broken:
                zygote.last_used = time.monotonic()
                self._idle[key].append(zygote)
            self._all = [z for z in self._all if not z.broken]
            idle = sorted((z for zs in self._idle.values() for z in zs),
                          key=lambda z: z.last_used)
            while len(self._all) > KEEP and idle:
                oldest = idle.pop(0)
                self._idle = {k: [z for z in zs if z is not oldest]
                              for k, zs in self._idle.items()}
                self._all.remove(oldest)
                retired.append(oldest)
        for old in retired:
            old.close()
        return result

    def close_all(self) -> None:
        with self._lock:
            if os.getpid() != self._pid:
                return  # the parent's zygotes: it ends them
            zygotes, self._all, self._idle = self._all, [], {}
        for zygote in zygotes:
            zygote.close(wait=5.0)


ZYGOTES = Zygotes()
