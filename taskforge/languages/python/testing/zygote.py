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

Environment modules: every run reports the modules of the environment (the standard
library, site-packages) its collection imported that its zygote had not: humanize's test
files import freezegun, and asyncio, dateutil and sqlite3 with it, ~25% of a confirmation
run. Once runs have reported some, a second zygote for the environment is started in the
background that imports those that qualify (`pytest_plugin/taskforge_preload.py`: an import
that reads nothing that differs between runs and changes nothing that was there before it),
and the runs that only write their results (`env_modules`: a test run's, not the screen's
server or a collection's) go to it once it is ready, to the plain one until then. A run it
cannot give what a fresh run has (a variable one of them read is the run's own; the run's
tree holds a module of one's name; a test set a variable one of them read) is run on the
plain zygote instead, its results from the first removed. `TASKFORGE_ENV_MODULES=0` turns
that second zygote off.
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

from taskforge.fileio import write_all
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


# Zygotes with environment modules started for one environment, at most: each new one
# imports what runs reported since the one before.
ENV_GENERATIONS = 3


def enabled() -> bool:
    return os.environ.get("TASKFORGE_WARM_RUNS", "1") != "0"


def env_modules_enabled() -> bool:
    return os.environ.get("TASKFORGE_ENV_MODULES", "1") != "0"


class Zygote:
    """One warm pytest process in a sandbox, running one job at a time."""

    def __init__(self, env: Environment, sandbox: Sandbox, root: Path, mounts: Mounts,
                 variables: Mapping[str, str], preload: Sequence[str] = ()) -> None:
        self.sandbox = sandbox
        self.dir = Path(tempfile.mkdtemp(dir=root, prefix=owned("zygote-")))
        self.offered = tuple(preload)  # the environment modules it was asked to import
        self.preloaded: tuple[str, ...] = ()  # those it imported
        self.refused: dict[str, str] = {}  # those it did not, and why
        self.answer: dict = {}  # its last run's
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
        self.ahead = False  # started by `Zygotes.prestart`, before any run asked for it
        self.broken = False
        self.last_used = time.monotonic()
        self.moved = sandbox.paths_inside(mounts)  # the job's host paths as the server sees them
        self.exit: ExecResult | None = None
        python = str(env.venv / "bin" / "python")
        # the server tells what the sandbox added to these from what taskforge gave
        given = {**variables, "TASKFORGE_ZYGOTE_GIVEN": ",".join(sorted(variables))}
        argv = [python, str(SERVER), str(jobs), str(results)]
        if self.offered:
            listed = self.dir / "environment-modules.json"
            listed.write_text(json.dumps(list(self.offered)))
            argv.append(self._inside(str(listed)))
        self._thread = threading.Thread(
            target=self._serve, daemon=True, name=f"zygote-{self.dir.name}",
            args=(argv, given, mounts))
        self._thread.start()
        ready = self._answer(READY_SECONDS)
        if ready:
            self.preloaded = tuple(ready.get("preloaded") or ())
            self.refused = dict(ready.get("refused") or {})
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
        self.answer = {}
        if self.broken:
            return None
        self._ids += 1
        job = {"id": self._ids, "cwd": self._inside(str(cwd)),
               "env": {k: self._inside(v) for k, v in variables.items()},
               "args": [self._inside(a) for a in args], "timeout": timeout,
               "log": self._inside(str(log)),
               "report": self._inside(str(self.dir / f"report-{self._ids}.json"))}
        start = time.monotonic()
        try:
            write_all(self._jobs, (json.dumps(job) + "\n").encode())
        except OSError:
            self.broken = True
            return None
        answer = self._answer(timeout + ANSWER_MARGIN)
        if not answer or answer.get("id") != job["id"]:
            self.broken = True
            self.close()
            return None
        self.answer = answer
        if answer.get("fresh"):
            return None  # it could not run there (`Zygotes.run` runs it elsewhere)
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
    thread takes one (or starts one) for a run and gives it back. Per environment, a plain
    zygote and, once runs have reported environment modules, one that imports them
    (`env_modules` runs go to it; see the module's docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # notified when a zygote started ahead (`prestart`) is ready or failed
        self._prestarted = threading.Condition(self._lock)
        self._prestarting: dict[tuple, int] = {}  # key -> zygotes started ahead, not ready
        self._idle: dict[tuple, list[Zygote]] = {}
        self._all: list[Zygote] = []
        self._failed: set[tuple] = set()
        self._learned: dict[tuple, list[str]] = {}  # environment modules runs reported
        self._generations: dict[tuple, int] = {}  # zygotes with them started
        self._offered: dict[tuple, int] = {}  # how many the newest of those was given
        self._starting: set[tuple] = set()
        self._pid = os.getpid()
        self.served = 0  # runs a zygote answered, ever (a count that retiring does not lower)
        self.elsewhere = 0  # runs a zygote with environment modules sent to the plain one
        atexit.register(self.close_all)

    def _forget_inherited(self) -> None:
        """In a process forked from the one that started them, the zygotes are the parent's:
        their FIFOs are shared with it, so this process starts its own (and never ends those)."""
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            self._idle, self._all, self._failed = {}, [], set()
            self._learned, self._generations, self._starting = {}, {}, set()
            self._offered, self._prestarting = {}, {}

    def run(self, env: Environment, sandbox: Sandbox, root: Path, mounts: Mounts,
            start_variables: Mapping[str, str], args: Sequence[str], *, cwd: Path,
            variables: Mapping[str, str], timeout: float, log: Path,
            env_modules: bool = False, outputs: Sequence[Path] = ()) -> ExecResult | None:
        """Run pytest `args` warm; None when no zygote can (the caller runs it fresh).
        `env_modules`: the run may go to a zygote that imported the environment's modules;
        where that one cannot give it what a fresh run has, `outputs` (the files its results
        are read from) are removed and it runs on the plain zygote."""
        key = self._key(env, sandbox, root, mounts)
        with self._lock:
            self._forget_inherited()
        start = (env, sandbox, root, mounts, start_variables)
        if env_modules and env_modules_enabled():
            warm = self._take((*key, "env"))
            if warm is not None:
                result = self._use((*key, "env"), warm, args, cwd=cwd, variables=variables,
                                   timeout=timeout, log=log, start=start)
                if result is not None or not warm.answer.get("fresh"):
                    return result
                with self._lock:
                    self.elsewhere += 1
                for path in outputs:
                    with contextlib.suppress(OSError):
                        path.unlink()
        zygote = self._take(key)
        if zygote is None:
            with self._lock:
                if key in self._failed:
                    return None
            zygote = Zygote(env, sandbox, root, mounts, start_variables)
            if zygote.broken:
                with self._lock:
                    self._failed.add(key)
                return None
            with self._lock:
                self._all.append(zygote)
        return self._use(key, zygote, args, cwd=cwd, variables=variables, timeout=timeout,
                         log=log, start=start)

    @staticmethod
    def _key(env: Environment, sandbox: Sandbox, root: Path, mounts: Mounts) -> tuple:
        return (str(env.venv), sandbox.name, id(sandbox), str(root), mounts)

    def prestart(self, env: Environment, sandbox: Sandbox, root: Path, mounts: Mounts,
                 start_variables: Mapping[str, str], count: int = 1) -> None:
        """Start, in the background, the plain zygotes the next `count` runs at once of this
        environment, sandbox and warm root would start themselves (fewer where some are idle
        or starting already), so that they find them ready: their interpreter's start and
        pytest's import (~0.25 s on boltons, ~0.5 s on humanize, where its environment's
        plugins import more) then overlap whatever the caller does meanwhile (finding the
        candidates) instead of delaying the first run. The same zygotes `run` starts;
        a run that comes while one is starting waits for it."""
        key = self._key(env, sandbox, root, mounts)
        with self._lock:
            self._forget_inherited()
            if key in self._failed:
                return
            wanted = count - len(self._idle.get(key, ())) - self._prestarting.get(key, 0)
            if wanted <= 0:
                return
            self._prestarting[key] = self._prestarting.get(key, 0) + wanted
        for _ in range(wanted):
            threading.Thread(target=self._start_ahead, daemon=True, name="zygote-ahead",
                             args=(key, env, sandbox, root, mounts, start_variables)).start()

    def _start_ahead(self, key: tuple, env: Environment, sandbox: Sandbox, root: Path,
                     mounts: Mounts, start_variables: Mapping[str, str]) -> None:
        zygote: Zygote | None = None
        retired: list[Zygote] = []
        try:
            zygote = Zygote(env, sandbox, root, mounts, start_variables)
        except Exception:  # as a start that failed: the runs that come go fresh, quietly
            zygote = None
        finally:
            with self._lock:
                self._prestarting[key] -= 1
                if zygote is None or zygote.broken:
                    self._failed.add(key)  # as a run's own start that failed: runs go fresh
                else:
                    zygote.ahead = True
                    self._all.append(zygote)
                    self._idle.setdefault(key, []).append(zygote)
                    retired = self._retire()
                self._prestarted.notify_all()
        for old in retired:
            old.close()

    def _take(self, key: tuple) -> Zygote | None:
        """An idle zygote of `key` (of those with environment modules, the one given most),
        waiting for one started ahead (`prestart`), which is as good as one started now."""
        with self._lock:
            while self._prestarting.get(key) and not self._idle.get(key):
                self._prestarted.wait()
            idle = self._idle.setdefault(key, [])
            idle.sort(key=lambda z: len(z.offered))
            return idle.pop() if idle else None

    def _use(self, key: tuple, zygote: Zygote, args: Sequence[str], *, cwd: Path,
             variables: Mapping[str, str], timeout: float, log: Path,
             start: tuple) -> ExecResult | None:
        """Run on `zygote` (taken from the idle ones of `key`), learn what the run imported,
        give it back; where it taught something new, start a zygote that imports it."""
        result = zygote.run(args, cwd=cwd, variables=variables, timeout=timeout, log=log)
        base = key[:5]
        retired: list[Zygote] = []
        with self._lock:
            if result is not None:
                self.served += 1
            learned = self._learned.setdefault(base, [])
            known = set(learned)
            for name in zygote.answer.get("imported") or ():
                if name not in known:
                    known.add(name)
                    learned.append(name)
            if not zygote.broken:
                zygote.last_used = time.monotonic()
                self._idle.setdefault(key, []).append(zygote)
            retired = self._retire()
            if env_modules_enabled():
                self._start_with_env_modules(base, *start)
        for old in retired:
            old.close()
        return result

    def _retire(self) -> list[Zygote]:
        """Past KEEP live zygotes, the least recently used idle ones (under the lock)."""
        self._all = [z for z in self._all if not z.broken]
        # an idle one ended from outside (its owner closed it) is no longer one
        self._idle = {k: [z for z in zs if not z.broken] for k, zs in self._idle.items()}
        idle = sorted((z for zs in self._idle.values() for z in zs), key=lambda z: z.last_used)
        retired = []
        while len(self._all) > KEEP and idle:
            oldest = idle.pop(0)
            self._idle = {k: [z for z in zs if z is not oldest] for k, zs in self._idle.items()}
            self._all.remove(oldest)
            retired.append(oldest)
        return retired

    def _start_with_env_modules(self, key: tuple, env: Environment, sandbox: Sandbox,
                                root: Path, mounts: Mounts,
                                start_variables: Mapping[str, str]) -> None:
        """(Under the lock.) Start, in the background, a zygote of `key` that imports the
        environment modules runs reported, unless one that was given all of them is
        starting or there (at most ENV_GENERATIONS, each given what runs reported since)."""
        env_key = (*key, "env")
        learned = tuple(self._learned.get(key, ()))
        if not learned or env_key in self._failed or env_key in self._starting \
                or len(learned) <= self._offered.get(env_key, 0) \
                or self._generations.get(key, 0) >= ENV_GENERATIONS:
            return
        self._generations[key] = self._generations.get(key, 0) + 1
        self._offered[env_key] = len(learned)
        self._starting.add(env_key)
        threading.Thread(target=self._started_with_env_modules, daemon=True,
                         name="zygote-env-modules",
                         args=(env_key, env, sandbox, root, mounts, start_variables,
                               learned)).start()

    def _started_with_env_modules(self, env_key: tuple, env: Environment, sandbox: Sandbox,
                                  root: Path, mounts: Mounts,
                                  start_variables: Mapping[str, str],
                                  learned: tuple[str, ...]) -> None:
        zygote = Zygote(env, sandbox, root, mounts, start_variables, preload=learned)
        if zygote.preloaded or zygote.broken:
            retired = self._add_with_env_modules(env_key, zygote, len(learned))
        else:  # nothing qualified: no better than the plain one
            with self._lock:
                self._starting.discard(env_key)
            retired = [zygote]
        for old in retired:
            old.close()

    def _add_with_env_modules(self, env_key: tuple, zygote: Zygote, offered: int
                              ) -> list[Zygote]:
        """Take in a zygote with environment modules just started (or note that it failed:
        an import did not go as its trial did); the older ones are to be closed."""
        with self._lock:
            self._starting.discard(env_key)
            if zygote.broken:
                self._failed.add(env_key)
                return []
            older = [z for z in self._idle.get(env_key, []) if len(z.offered) < offered]
            self._idle[env_key] = [z for z in self._idle.get(env_key, [])
                                   if z not in older] + [zygote]
            self._all = [z for z in self._all if z not in older] + [zygote]
            return older + self._retire()

    def close_all(self) -> None:
        with self._lock:
            if os.getpid() != self._pid:
                return  # the parent's zygotes: it ends them
            zygotes, self._all, self._idle = self._all, [], {}
        for zygote in zygotes:
            zygote.close(wait=5.0)


ZYGOTES = Zygotes()
