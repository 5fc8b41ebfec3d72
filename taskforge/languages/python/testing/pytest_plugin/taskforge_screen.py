"""A fork server for screening many candidate deletions in one pytest process.

Loaded with `-p taskforge_screen` next to `taskforge_pytest_plugin`, inside the project's
own environment (so it imports nothing from taskforge). Mutation testing's trick (mutmut):
collect once, then fork a child per job; the child swaps the code of the functions a job
names for a stub and runs only that job's tests. Interpreter start, imports and collection
are paid once for all candidates instead of once per candidate.

TASKFORGE_SCREEN is a JSON-lines file of jobs:
  {"id": ..., "modules": [import names], "targets": [[file, firstlineno, name], ...],
   "body": "raise" | a trivial solution of BODIES | "original", "tests": [node ids], "repeats": n,
   "stop_on_failure": bool (report only the tests up to the first one that does not pass)}
("original" swaps nothing: the job runs its tests on the original code, in the same forked,
selected context as the other bodies; that is the reference state of every candidate.)
A job runs its tests in the session's collection order, as a fresh run that selects them
does (the confirmation's, the grader's), whatever order the job lists them in: a test may
fail only after another (one that fills a list in place), and the screen must see what
those runs see. A job may name follow-ups, "then": [[id, body], ...] with "order": its
tests quickest first. When its runs agree and some tests failed in every one, each
follow-up runs once on those tests, stopping at the first that does not pass (one such
test settles a trivial solution or a reference); it is reported under its own id. A
trivial solution runs them in "order" (its first failure settles it, so the quickest
first, and once one trivial solution failed a test, that test first for the next); the
original code ("original") in collection order, as the task state ran them. A trivial
solution that passes them all, or is cut off, settles the candidate (no task): the
follow-ups after it do not run. A trivial solution that returns a constant is settled
without a fork where one of those tests is nothing but `assert f(...) == expected` of the
job's own function and a plain value that constant does not equal
(`_settled_by_comparison`): a fork of the server costs ~15 ms on humanize, whatever the
test, and seven trivial solutions ran for every candidate.
The server decides this itself, so one process (one collection) serves both rounds.
Results go to TASKFORGE_SCREEN_OUT, one JSON line per job:
  {"id": ..., "runs": [{node id: outcome}, ...], "unscreenable": reason or null,
   "pytest_seconds": what pytest spent running the tests in the forked children,
   "wall_seconds": with forking, "compared": true (only where settled by comparison)}
and last {"session_seconds": the server's session, collection included} (the server writes
no JUnit file: its JUnit writer is unregistered before the first fork, and its terminal
reporter hears no test's report).
The screen can only reject candidates: every task it lets through is confirmed in a fresh
process on its real workspace.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import importlib
import json
import os
import select
import signal
import sys
import time
import types

import pytest

_outcomes: dict[str, str] = {}
# The task's stub and the trivial solutions (taskforge's python NULL_BODIES; a test holds
# the two alike: this module runs in the project's environment and imports no taskforge).
BODIES = {"raise": "raise NotImplementedError", "pass": "pass", "return-none": "return None",
          "return-true": "return True", "return-false": "return False",
          "return-zero": "return 0", "return-empty-str": 'return ""',
          "return-empty-list": "return []", "return-empty-dict": "return {}"}
_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def pytest_runtest_logreport(report):
    """Each test's worst outcome over setup, call and teardown."""
    if report.when == "call":
        outcome = report.outcome
    elif report.outcome == "failed":
        outcome = "error"
    elif report.outcome == "skipped":
        outcome = "skipped"
    else:
        return  # a setup or teardown that passed says nothing about the test
    previous = _outcomes.get(report.nodeid)
    if previous is None or _RANK[outcome] > _RANK[previous]:
        _outcomes[report.nodeid] = outcome


def _functions_by_code():
    """Every live function object, keyed by (file, first line, name) of its code."""
    index, real = {}, {}
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType):
            code = obj.__code__
            # (each file's real path found once: ~10,000 functions in ~300 files on
            # humanize, and a path's every component is a system call)
            path = real.get(code.co_filename)
            if path is None:
                path = real[code.co_filename] = os.path.realpath(code.co_filename)
            index.setdefault((path, code.co_firstlineno, code.co_name), []).append(obj)
    return index


def _stub_code(original, body):
    """A code object with the original's free variables whose body is BODIES[body]."""
    freevars = original.co_freevars
    is_async = bool(original.co_flags & 0x80)  # CO_COROUTINE
    statement = BODIES[body]
    lines = ["def _outer():"]
    lines += [f"    {name} = None" for name in freevars]
    lines.append(f"    {'async ' if is_async else ''}def stub(*args, **kwargs):")
    if freevars:
        lines.append(f"        if False: ({', '.join(freevars)},)")
    lines.append(f"        {statement}")
    lines.append("    return stub")
    namespace = {}
    exec("\n".join(lines), namespace)
    code = namespace["_outer"]().__code__
    if code.co_freevars != freevars:
        return None
    return code.replace(co_name=original.co_name, co_qualname=original.co_qualname) \
        if hasattr(code, "co_qualname") else code.replace(co_name=original.co_name)


def _target_functions(index, job):
    """The live function objects of the job's targets (those whose code a child swaps)."""
    return [f for t in job["targets"]
            for f in index.get((os.path.realpath(t[0]), t[1], t[2]), [])]


def _run_job(session, items_by_id, index, job):
    functions = _target_functions(index, job)
    if not functions:
        return None, "function not found in memory"
    for function in functions if job["body"] != "original" else ():
        stub = _stub_code(function.__code__, job["body"])
        if stub is None:
            return None, "free variables differ"
        function.__code__ = stub
    selected = [items_by_id[t] for t in job["tests"] if t in items_by_id]
    missing = [t for t in job["tests"] if t not in items_by_id]
    if missing and job.get("stop_on_failure"):
        return {missing[0]: "error"}, None
    _outcomes.clear()
    for i, item in enumerate(selected):
        nextitem = selected[i + 1] if i + 1 < len(selected) else None
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        if job.get("stop_on_failure") and _outcomes.get(item.nodeid) != "passed":
            # one failure settles the question (a trivial solution does not pass them all)
            return {it.nodeid: _outcomes.get(it.nodeid, "error") for it in selected[:i + 1]}, None
    return {t: _outcomes.get(t, "error") for t in job["tests"]}, None


class _Parked:
    """A child forked ahead of its job, waiting for it on a pipe.

    The server only waits while a job runs; forking the next job's child then takes the
    fork and the child's first steps (the interpreter's at-fork work, its first copied
    pages) out of the time between one job and the next, where they sat for every job
    (what the server spends on a boltons job besides its tests, 2.5-3.4 ms by the median,
    fell to 1.9-2.3). It is forked from the state a job's own fork would be: the server
    changes nothing between jobs but the file it writes results to, which it has flushed.
    The end of its pipe without a job ends it. (It does not touch pages ahead as the
    zygote's does: the server's session holds every collected test, and copying them on
    the other core while a job runs made boltons' jobs slower, 3.6-5.2 ms against 2.5-2.9.)"""

    def __init__(self, session, items_by_id, index):
        job_read, self._job_write = os.pipe()
        self.results, results_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # never returns
            os.close(self._job_write)
            os.close(self.results)
            _child(session, items_by_id, index, job_read, results_write)
        os.close(job_read)
        os.close(results_write)

    def start(self, job):
        """Give it `job`; False when it cannot take it (it is gone)."""
        data = json.dumps(job).encode()
        try:
            if os.waitpid(self.pid, os.WNOHANG) != (0, 0):
                return False
            while data:
                data = data[os.write(self._job_write, data):]
            return True
        except OSError:
            return False
        finally:
            os.close(self._job_write)

    def dismiss(self):
        """End it unused (its pipe's end is its sign), and reap it."""
        with contextlib.suppress(OSError):
            os.close(self._job_write)
        os.close(self.results)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _child(session, items_by_id, index, job_read, results_write):
    """A job's child: wait for the job, run it, write what it found; never returns."""
    code = 0
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        data = b""
        while chunk := os.read(job_read, 1 << 16):
            data += chunk
        if not data:  # dismissed
            os._exit(0)
        job = json.loads(data)
        started = time.monotonic()
        outcomes, why = _run_job(session, items_by_id, index, job)
        # what pytest spent on the job's tests: their setup, call and teardown, and its
        # own protocol around each (hooks, reports), as in the time a session reports
        payload = json.dumps({"outcomes": outcomes, "unscreenable": why,
                              "seconds": time.monotonic() - started}).encode()
        # Every descriptor of the child closed before its report (a test's socket, a lock
        # held by an open file): the server does not wait for its exit (`_exiting`), and the
        # next job must not find them still held while the kernel frees the child's memory
        # (which it does before it closes the files).
        _close_all_but(results_write)
        with os.fdopen(results_write, "wb") as pipe:
            pipe.write(payload)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


_parked = None  # the next job's child, forked while the job before it ran


_exiting = []  # children that reported, reaped once they are gone (`_reap`)


def _reap(block=False):
    """Reap the children of `_exiting` that are gone (with `block`, every one)."""
    for pid in list(_exiting):
        try:
            if os.waitpid(pid, 0 if block else os.WNOHANG) == (0, 0):
                continue  # still exiting
        except ChildProcessError:
            pass  # reaped already
        _exiting.remove(pid)


def _close_all_but(kept):
    """Close every descriptor of this process but `kept`: the ones Linux lists as open, else
    the whole range (which costs a close per descriptor up to the limit, a million in some
    containers, where the C library has no `close_range`)."""
    try:
        opened = [int(name) for name in os.listdir("/proc/self/fd")]
    except (OSError, ValueError):
        os.closerange(0, kept)
        os.closerange(kept + 1, os.sysconf("SC_OPEN_MAX"))
        return
    for fd in opened:
        if fd != kept:
            with contextlib.suppress(OSError):  # the listing's own, closed by now
                os.close(fd)


def _fork_job(session, items_by_id, index, job, timeout):
    global _parked
    _reap()
    sent = time.monotonic()
    child, _parked = _parked, None
    if child is None or not child.start(job):
        if child is not None:
            child.dismiss()
        child = _Parked(session, items_by_id, index)
        child.start(job)
    _parked = _Parked(session, items_by_id, index)  # while this job runs
    read_fd, pid = child.results, child.pid
    deadline = sent + timeout
    chunks, timed_out = [], False
    while True:
        # Woken by the child's output or its end, not polled: a job of quick tests costs a
        # few milliseconds, and a polling interval would be most of it.
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([read_fd], [], [], left)[0]:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            break  # the child closed the pipe
        chunks.append(chunk)
    os.close(read_fd)
    if timed_out:
        os.waitpid(pid, 0)
        # Its tests ran until the limit: that time is theirs (a session running them would
        # report it), not the server's to share out over every job.
        return {"outcomes": None, "unscreenable": "timeout", "seconds": time.monotonic() - sent}
    # It reported, every descriptor of its closed first (`_child`): what is left is its
    # exit, the kernel freeing its copy of the server's memory (2-4 ms a job here), done on
    # the other core while the next job runs instead of between the two.
    _exiting.append(pid)
    try:
        return json.loads(b"".join(chunks) or b"null") or {"outcomes": None,
                                                            "unscreenable": "child crashed"}
    except ValueError:
        return {"outcomes": None, "unscreenable": "child crashed"}


def _dismiss_parked():
    global _parked
    if _parked is not None:
        _parked.dismiss()
        _parked = None
    _reap(block=True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    jobs_file = os.environ.get("TASKFORGE_SCREEN")
    if not jobs_file:
        return None
    out_file = os.environ["TASKFORGE_SCREEN_OUT"]
    timeout = float(os.environ.get("TASKFORGE_SCREEN_TIMEOUT", "120"))
    items_by_id = {item.nodeid: item for item in session.items}
    position = {item.nodeid: i for i, item in enumerate(session.items)}
    with open(jobs_file, encoding="utf-8") as handle:
        jobs = [json.loads(line) for line in handle if line.strip()]
    for module in sorted({m for job in jobs for m in job.get("modules", [])}):
        # so its functions exist before indexing; one that does not import is reported
        # per job as "function not found"
        with contextlib.suppress(Exception):
            importlib.import_module(module)
    index = _functions_by_code()
    # The children report through `_outcomes`, their output goes nowhere and they die
    # without writing a JUnit file, yet two plugins that only present reports did their
    # per-test work in every child: pytest's JUnit writer (its XML entry for every test, its
    # regular expressions compiled anew in each child) leaves before any fork; the terminal
    # reporter stays (plugins and fixtures may ask for it) but hears no test's report. No
    # test runs otherwise: the `record_*` fixtures keep the writer they find in the config.
    # The seconds the JUnit file gave are this session's (`_session_out`).
    _drop_junit_writer(session.config)
    _mute_terminal_reporter(session.config)
    # Where each test is (`item.location`, which every report needs: its file, line and
    # name, found through `inspect`) is computed once per item, not once in every child that
    # runs it (a candidate's tests run in two or three). Nothing of a test runs for it.
    for item in session.items:
        with contextlib.suppress(Exception):
            item.location  # noqa: B018  (a cached property: read to compute it)
    # The collected session (its garbage collected first) is never collected again, in a
    # child either: a test that triggers a full collection does not walk (and copy) every
    # page of it. A child's `gc.get_objects()` leaves these objects out; the screen may only
    # reject, and every task it lets through is confirmed in a fresh run.
    gc.collect()
    gc.freeze()
    with open(out_file, "a", encoding="utf-8") as out:
        for job in jobs:
            # (a node id not collected goes last: it is reported as an error)
            job = {**job, "tests": sorted(job["tests"],
                                          key=lambda t: position.get(t, len(position)))}
            runs, why = _screen_job(session, items_by_id, index, job, timeout, out)
            failing = _failing_in_every_run(runs, job.get("order") or job["tests"])
            if why or not failing or _unstable(runs):
                continue
            in_collection_order = [t for t in job["tests"] if t in set(failing)]
            order = failing
            for follow_id, body in job.get("then", []):
                compared = body != "original" and _settled_by_comparison(
                    items_by_id, index, job, body, order)
                if compared:
                    runs = [{compared: "failed"}]
                    _report(out, follow_id, runs, None, 0.0, 0.0, compared=True)
                    order = _failed_first(order, runs)
                    continue
                runs, why = _screen_job(session, items_by_id, index,
                                        {**job, "id": follow_id, "body": body,
                                         "tests": in_collection_order if body == "original"
                                         else order,
                                         "repeats": 1, "stop_on_failure": True}, timeout, out)
                if body == "original":
                    continue
                if why == "timeout" or (runs and len(runs[0]) == len(failing)
                                        and all(o == "passed" for o in runs[0].values())):
                    break  # a trivial solution that passes them all, or hangs: no task
                order = _failed_first(order, runs)
        _dismiss_parked()
        _session_out(out)
    return True


_session_started = time.monotonic()  # (a fallback: pytest_sessionstart sets it)


def pytest_sessionstart(session):
    global _session_started
    _session_started = time.monotonic()


def _session_out(out):
    """The last line: the server's session seconds, collection included, as the JUnit file
    it no longer writes gave them (`screen` shares them out over the jobs)."""
    out.write(json.dumps({"session_seconds": time.monotonic() - _session_started}) + "\n")
    out.flush()


def _drop_junit_writer(config):
    """Unregister pytest's JUnit XML writer (`_pytest.junitxml.LogXML`), whatever its
    version calls the key it keeps it under, and forget it where the config keeps it: its
    own `pytest_unconfigure` unregisters what it finds there, and failed the server's end
    (`AssertionError: plugin is not registered`) once it was gone."""
    try:
        from _pytest.junitxml import LogXML
    except ImportError:
        return
    for plugin in list(config.pluginmanager.get_plugins()):
        if isinstance(plugin, LogXML):
            config.pluginmanager.unregister(plugin)
    with contextlib.suppress(Exception):
        from _pytest.junitxml import xml_key

        if isinstance(config.stash.get(xml_key, None), LogXML):
            del config.stash[xml_key]


# The terminal reporter's hooks that write each test's progress (a line formatted per test).
PER_TEST_REPORTING = ("pytest_runtest_logstart", "pytest_runtest_logreport",
                      "pytest_runtest_logfinish")


def _mute_terminal_reporter(config):
    """Register pytest's terminal reporter again, under its name, without its per-test hooks:
    `get_plugin("terminalreporter")` still finds it, writes through it still go nowhere."""
    try:
        from _pytest.terminal import TerminalReporter
    except ImportError:
        return
    manager = config.pluginmanager
    for plugin in list(manager.get_plugins()):
        if isinstance(plugin, TerminalReporter):
            name = manager.get_name(plugin)
            manager.unregister(plugin)
            for hook in PER_TEST_REPORTING:
                setattr(plugin, hook, None)  # an attribute pluggy does not take for a hook
            manager.register(plugin, name)


def _screen_job(session, items_by_id, index, job, timeout, out):
    """Run one job `repeats` times, each in its own forked child; report it to `out`."""
    runs, why, seconds = [], None, 0.0
    started = time.monotonic()
    for _ in range(job.get("repeats", 1)):
        result = _fork_job(session, items_by_id, index, job, job.get("timeout") or timeout)
        seconds += result.get("seconds", 0.0)
        if result.get("unscreenable"):
            why = result["unscreenable"]
            break
        runs.append(result["outcomes"])
    _report(out, job["id"], runs, why, seconds, time.monotonic() - started)
    return runs, why


def _report(out, job_id, runs, why, seconds, wall, *, compared=False):
    out.write(json.dumps({"id": job_id, "runs": runs, "unscreenable": why,
                          "pytest_seconds": seconds, "wall_seconds": wall,
                          **({"compared": True} if compared else {})}) + "\n")
    out.flush()


# A trivial solution's one statement, `return VALUE` (or `pass`): what it returns.
def _returned(body):
    statement = BODIES[body]
    return None if statement == "pass" else ast.literal_eval(statement[len("return "):])


# Codes that do not return what their body returns (a generator, a coroutine, an async
# generator: CO_GENERATOR, CO_COROUTINE, CO_ITERABLE_COROUTINE, CO_ASYNC_GENERATOR).
_NOT_PLAIN = 0x20 | 0x80 | 0x100 | 0x200
_PLAIN_VALUES = (str, bytes, int, float, complex, bool, type(None))
_shapes = {}  # test function -> its comparison's shape, or None (`_comparison_shape`)
_expected = {}  # (test, its job's functions) -> what `_expected_of` found


def _settled_by_comparison(items_by_id, index, job, body, order):
    """The first test of `order` that the trivial solution `body` fails without a run: a plain
    test function whose first statement is `assert f(...) == expected` (or its mirror), `f`
    naming one of the job's functions itself (the object whose code a child swaps, no
    wrapper between), `expected` a literal or a parameter of the test's own parametrization
    holding a plain value, with nothing of the project's running before that statement (no
    fixture, no hook of its own, no wrapper but `_TRANSPARENT_WRAPPERS`). The call then
    returns the body's constant whatever its arguments, so the assertion holds only if that
    constant equals `expected`, and the server computes exactly that; where it does not, the
    test fails whatever follows. A test that does not fit, or a constant equal to its value,
    is left to a forked run. None when no test of `order` settles it."""
    if body not in BODIES or body == "raise":
        return None
    functions = _target_functions(index, job)
    if not functions or any(f.__code__.co_flags & _NOT_PLAIN for f in functions):
        return None
    returned = _returned(body)
    for test in order:
        item = items_by_id.get(test)
        if item is None:
            continue
        key = (test, tuple(map(id, functions)))  # each test read once for all seven bodies
        if key not in _expected:
            _expected[key] = _expected_of(item, functions)
        expected = _expected[key]
        if expected is None:
            continue
        value, call_first = expected
        try:
            equal = (returned == value) if call_first else (value == returned)
        except Exception:
            continue
        if equal is False:
            return test
    return None


def _expected_of(item, functions):
    """`(expected, call_first)` where `item` is such a test of one of `functions`, else None."""
    try:
        if type(item) is not pytest.Function:  # a unittest case (its setUp), a plugin's item
            return None
        function = _unwrapped(getattr(item, "obj", None))
        if function is None:
            return None
        if function not in _shapes:
            _shapes[function] = _comparison_shape(function)
        shape = _shapes[function]
        if shape is None:
            return None
        callee, expected, call_first = shape
        if not any(_resolve(callee, function.__globals__) is f for f in functions):
            return None
        if not _nothing_around(item):
            return None
        if isinstance(expected, ast.Constant):
            value = expected.value
        elif expected.id in item.fixturenames:  # a direct parameter (`_nothing_around`)
            value = item.callspec.params[expected.id]
        else:
            return None
        return (value, call_first) if _plain(value) else None
    except Exception:
        return None


# Decorators known to run the test as it is and let what it raises through: freezegun's
# `freeze_time` (the function's code runs under a frozen clock). Any other wrapper might
# catch the assertion's error, so its tests are left to a run.
# (Known by the file of the wrapper's code: `functools.wraps` gives it the test's module.)
_TRANSPARENT_WRAPPERS = (os.path.join("freezegun", "api.py"),)


def _unwrapped(function):
    """The test's own function under `_TRANSPARENT_WRAPPERS`, or None (another wrapper, no
    function)."""
    function = getattr(function, "__func__", function)  # a test method
    while isinstance(function, types.FunctionType) and hasattr(function, "__wrapped__"):
        if not function.__code__.co_filename.endswith(_TRANSPARENT_WRAPPERS):
            return None
        function = getattr(function.__wrapped__, "__func__", function.__wrapped__)
    return function if isinstance(function, types.FunctionType) else None


# The hooks that could run the project's code between collection and a test's first
# statement (and rebind what its callee names, say).
_AROUND_A_TEST = ("pytest_runtest_setup", "pytest_runtest_call", "pytest_pyfunc_call")


def _nothing_around(item):
    """Whether nothing of the project's runs before `item`'s first statement but its own
    parametrization: no fixture but its direct parameters (no autouse one, no xunit
    `setup_method`, no `usefixtures`), no hook of the project's (a conftest's, a plugin
    module under the rootdir) around its call."""
    from _pytest.python import get_direct_param_fixture_func

    definitions = item._fixtureinfo.name2fixturedefs
    for name in item.fixturenames:
        found = definitions.get(name) or ()
        if name != "request" and (
                not found or found[-1].func is not get_direct_param_fixture_func):
            return False
    root = str(item.config.rootpath)
    for hook in _AROUND_A_TEST:
        for implementation in getattr(item.ihook, hook).get_hookimpls():
            path = _defined_in(implementation.plugin)
            if not path or os.path.realpath(path).startswith(root + os.sep):
                return False
    return True


def _defined_in(plugin):
    """The file of a plugin's module, or of its class's (a plugin object), or None."""
    if isinstance(plugin, types.ModuleType):
        return getattr(plugin, "__file__", None)
    module = sys.modules.get(type(plugin).__module__)
    return getattr(module, "__file__", None)


def _comparison_shape(function):
    """`(callee, expected, call_first)` of a test function whose first statement (its
    docstring aside) is `assert CALLEE(...) == EXPECTED` or its mirror: CALLEE a name or a
    dotted name, EXPECTED a literal or one of the function's parameters. Where that assertion
    fails the test fails, whatever follows it. None otherwise."""
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, ast.FunctionDef):
        return None
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body or not isinstance(body[0], ast.Assert):
        return None
    test = body[0].test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    arguments = node.args
    parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    for call, expected, call_first in ((test.left, test.comparators[0], True),
                                       (test.comparators[0], test.left, False)):
        if not isinstance(call, ast.Call) or _dotted(call.func) is None:
            continue
        if isinstance(expected, ast.Constant) or (
                isinstance(expected, ast.Name) and expected.id in parameters):
            return _dotted(call.func), expected, call_first
    return None


def _dotted(node):
    """`a.b.c` of a name or an attribute chain over one, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _resolve(dotted, namespace):
    """What `dotted` names in a module's `namespace`, through modules' own dictionaries only
    (no attribute hook runs); None where it leaves them."""
    head, *rest = dotted
    if head not in namespace:
        return None
    value = namespace[head]
    for name in rest:
        if not isinstance(value, types.ModuleType) or name not in vars(value):
            return None
        value = vars(value)[name]
    return value


def _plain(value, depth=0):
    """A value whose `==` with a constant runs no code of the project's: plain scalars and
    tuples, lists, dicts, sets of them."""
    if depth > 20:
        return False
    if type(value) in _PLAIN_VALUES:
        return True
    if type(value) in (tuple, list, set, frozenset):
        return all(_plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(_plain(k, depth + 1) and _plain(v, depth + 1) for k, v in value.items())
    return False


def _failed_first(order, runs):
    """`order` with the test a trivial solution's run stopped at moved to the front: the
    next trivial solution most often fails there too (a test that checks what the function
    returns fails for every constant but its expected value), so it runs one test, not the
    quick ones before it that pass whatever the function returns (three on humanize)."""
    stopped = next((t for t in order if runs and runs[0].get(t, "passed") != "passed"), None)
    return order if stopped is None else [stopped, *(t for t in order if t != stopped)]


def _failing_in_every_run(runs, order):
    return [t for t in order if runs and all(r.get(t) != "passed" for r in runs)]


def _unstable(runs):
    tests = set(runs[0]) if runs else set()
    return any(len({r.get(t) == "passed" for r in runs}) > 1 for t in tests)
