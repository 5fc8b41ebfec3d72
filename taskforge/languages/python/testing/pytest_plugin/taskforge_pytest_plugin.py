"""Loaded into the project's own pytest with `-p taskforge_pytest_plugin`.

It must import nothing from taskforge: it runs inside the project's environment. It is
steered by environment variables so that the command line stays the project's own:
- TASKFORGE_SELECT: a file of node ids, one a line; every other item is deselected (and
  outside grading, the test functions and classes of a module no selected id sits under
  are not built: `pytest_pycollect_makeitem`).
- TASKFORGE_REVERSE=1: run the items in reverse order (the flaky gate's second run).
- TASKFORGE_EXCLUDE: a file of node ids, one a line, deselected (tests found to hang).
- TASKFORGE_TEST_TIMEOUT / TASKFORGE_HUNG_OUT: a test (setup, call and teardown) that runs
  longer than this many seconds ends the run at once: its node id is written to that file
  and the process exits with HUNG_EXIT. The runner starts again without it; a signal-based
  timeout would not stop a test that blocks signals or waits in C code.
- TASKFORGE_COLLECT_OUT: write the collected node ids (and `<collect-error>::path` for each
  file that failed to collect) to this file, one a line.
- TASKFORGE_COVERAGE / TASKFORGE_COVER_ROOT: record per-test line coverage of the files under
  the root into that coverage data file, with the node id as the context; lines run before
  the first test (imports, collection) keep the empty context. Python subprocesses a test
  starts are measured too, under the test's id (testing/subprocess_coverage/sitecustomize.py).
  A fixture wider than a function is measured under a context of its own, and
  `<data file>-fixtures.json` names the tests that use it (see FIXTURE_CONTEXT).
- TASKFORGE_TRACE / TASKFORGE_COVER_ROOT: the same map from sys.monitoring (Python 3.12+,
  taskforge_tracer.py) into that JSON file; with TASKFORGE_TRACE_FUNCTIONS=1, only which
  functions each test entered (bench/testmap_cost.py measures that lighter map).
- TASKFORGE_ISOLATED / TASKFORGE_COVER_ROOT / TASKFORGE_ISOLATED_TIMEOUT: every test runs alone
  in a fork of the collected session and only its lines are recorded, no outcome
  (taskforge_isolated.py: what a test reaches only when no earlier test filled a cache).
- TASKFORGE_STATE_OUT: write there, for each test, the module-level state it left changed
  (taskforge_state.py: what a test that fails half-way may leave for later tests).
Every test case in the JUnit XML gets a `taskforge_nodeid` property, so results are read by
node id from the XML and never parsed from console text.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import pytest

try:  # pytest's own report types (their names and arguments are those of pytest 3 on)
    from _pytest._code.code import ReprExceptionInfo as _ShortRepr
    from _pytest._code.code import ReprFileLocation as _Crash
    from _pytest._code.code import ReprTracebackNative as _OneLine
except ImportError:  # a pytest without them: its own reports
    _ShortRepr = None

_coverage = None
_tracer = None


def pytest_load_initial_conftests(early_config, parser, args):
    global _coverage, _tracer
    if os.environ.get("TASKFORGE_TRACE") and _tracer is None:
        from taskforge_tracer import Tracer

        _tracer = Tracer(os.environ.get("TASKFORGE_COVER_ROOT", "."),
                         lines=os.environ.get("TASKFORGE_TRACE_FUNCTIONS") != "1")
        _tracer.start()
    data_file = os.environ.get("TASKFORGE_COVERAGE")
    if data_file and _coverage is None:
        import coverage

        _coverage = coverage.Coverage(data_file=data_file, config_file=False,
                                      source=[os.environ.get("TASKFORGE_COVER_ROOT", ".")])
        _coverage.start()


# pytest-randomly's seed wherever the project sets none (any fixed number would do).
RANDOMLY_SEED = 1
# Plugins that run a failed test again until it passes, on a `flaky` marker or decorator
# with no option anywhere, or an ini setting (pytest-rerunfailures, pytest-retry, flaky), by
# module name.
RERUNNERS = ("pytest_rerunfailures", "pytest_retry.retry_plugin", "flaky.flaky_pytest_plugin")


_rerunners_out = False


def pytest_plugin_registered(plugin, manager):
    # A rerun plugin passes a test that fails now and then once one try passes: both baseline
    # runs and every grading would pass it, the flaky gate blind to it. Unregistered the
    # moment it registers, however (entry point, `-p`, `pytest_plugins`, TASKFORGE_PLUGINS;
    # those registered before this plugin are replayed to it), so each test runs once. Here
    # and not in pytest_configure: pluggy 1.1-1.3 run a hook over the live list of its
    # implementations, which an unregistration there would shift.
    global _rerunners_out
    if getattr(plugin, "__name__", None) in RERUNNERS:
        manager.unregister(plugin)
        _rerunners_out = True


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    # Plugins that act once installed, with no option anywhere (a test extra, a dependency
    # of a dependency brings them): their options are set here, before they read them (their
    # own pytest_configure), whatever registered them. A plugin's options exist only when it
    # is loaded.
    # pytest-randomly (3.10.2 on; older ones fail without the cache provider taskforge turns
    # off) shuffles the tests and reseeds `random` from a new seed in every session: the
    # baseline's two orders would not be the collected order and its reverse, and a test
    # drawing random numbers would draw others in every run. The collected order, and a
    # fixed seed (it still reseeds before each test, from the seed and the test's id, so a
    # test draws the same numbers alone or in the whole suite); a seed the project fixed
    # itself stays.
    if hasattr(config.option, "randomly_reorganize"):
        config.option.randomly_reorganize = False
        if config.getoption("randomly_seed", None) in ("default", "last"):
            config.option.randomly_seed = RANDOMLY_SEED
    # pytest-benchmark calibrates and repeats each benchmark for about a second, in every
    # run: each runs once, as a test (as the test command's `--benchmark-disable` says where
    # the environment's requirements show the plugin).
    if hasattr(config.option, "benchmark_disable"):
        config.option.benchmark_disable = True
    if _rerunners_out:  # the `flaky` marker stays known for projects with strict markers
        config.addinivalue_line("markers", "flaky: taskforge runs each test once")
    out = os.environ.get("TASKFORGE_ISOLATED")
    if out and not config.pluginmanager.has_plugin("taskforge-isolated"):
        from taskforge_isolated import Isolated

        config.pluginmanager.register(
            Isolated(out, os.environ.get("TASKFORGE_COVER_ROOT", "."),
                     float(os.environ.get("TASKFORGE_ISOLATED_TIMEOUT", "60"))),
            "taskforge-isolated")
    out = os.environ.get("TASKFORGE_STATE_OUT")
    if out and not config.pluginmanager.has_plugin("taskforge-state"):
        from taskforge_state import StateWatch

        root = getattr(config, "rootpath", None) or config.rootdir  # pytest < 6.1: rootdir
        config.pluginmanager.register(StateWatch(out, str(root)), "taskforge-state")


def pytest_sessionstart(session):
    # Hypothesis (its plugin loads once installed) draws new examples in every session,
    # replays first the failures it saved in the workspace (`.hypothesis/`), and fails an
    # example that ran past a deadline or a health check that found generation slow: labels
    # and rewards that change from run to run and with the machine's load. What its own CI
    # profile sets, over the profile the project loaded (conftests did, before this), before
    # any test module makes its `@settings`: examples derived from each test unless the
    # project fixed a seed (either way no database: hypothesis keeps none then), no deadline
    # (taskforge's timeouts end a hang), no too-slow check. A setting a test gives itself
    # still wins, and so does a profile project code loads later.
    if hasattr(session.config.option, "hypothesis_seed"):
        _steady_hypothesis(derandomize=session.config.getoption("hypothesis_seed") is None)


def _steady_hypothesis(derandomize):
    try:
        from hypothesis import HealthCheck, settings
    except Exception:  # a broken install: the tests that import it will say so
        return
    current = settings.default
    suppressed = list(dict.fromkeys([*current.suppress_health_check, HealthCheck.too_slow]))
    steady = {"derandomize": True} if derandomize else {}
    settings.register_profile("taskforge", current, deadline=None,
                              suppress_health_check=suppressed, **steady)
    settings.load_profile("taskforge")
    # Recent versions also mix the literals of every "local" module loaded so far into the
    # draws: a test's examples would change with the files a run imported (the test alone or
    # the whole suite; taskforge's own modules when grading). Without them, what it draws
    # depends on the test alone. (Private; older versions have no such thing.)
    try:
        from hypothesis.internal.conjecture import providers

        if callable(getattr(providers, "_get_local_constants", None)):
            none = providers.Constants()
            providers._get_local_constants = lambda: none
    except Exception:
        pass


def _ids(path):
    with open(path, encoding="utf-8") as handle:
        return {line for line in handle.read().split("\n") if line}


_selected_names = None  # module node id -> the top-level names its selected tests sit under


def _names_selected_in(module_id):
    """The names at the top of module `module_id` (functions, classes) that a selected node
    id sits under (`tests/t.py::TestA::test_b[x::y]` -> `TestA`); None for a module no
    selected id names, which is collected whole."""
    global _selected_names
    if _selected_names is None:
        _selected_names = {}
        for nodeid in _ids(os.environ["TASKFORGE_SELECT"]):
            path, sep, rest = nodeid.partition("::")
            if sep:
                top = rest.split("[", 1)[0].split("::", 1)[0]
                _selected_names.setdefault(path, set()).add(top)
    return _selected_names.get(module_id)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector, name, obj):
    """A selecting run (verification's, not the grader's) collects, of a module its
    selection names, only the test functions and classes a selected id sits under: pytest
    would build the module's every item (each parametrization of each function, with its
    `pytest_generate_tests`) and deselect all but a few afterwards, which on humanize's
    `test_time.py` was 40 of a fresh run's 160 ms. The module is imported and its fixtures
    found as before; a selected test that is not built reports nothing, which fails the run
    closed (`protocol.ran`)."""
    # (a grading run, always audited, builds the module as the project's own run would)
    if "TASKFORGE_SELECT" not in os.environ or "TASKFORGE_AUDIT" in os.environ \
            or not isinstance(collector, pytest.Module):
        return None
    names = _names_selected_in(collector.nodeid)
    if names is None or name in names:
        return None
    try:
        skipped = collector.istestfunction(obj, name) or collector.istestclass(obj, name)
    except Exception:  # another pytest, or an object that will not say: built as before
        return None
    return [] if skipped else None


def pytest_collection_modifyitems(session, config, items):
    select = os.environ.get("TASKFORGE_SELECT")
    exclude = os.environ.get("TASKFORGE_EXCLUDE")
    if select or exclude:
        wanted = _ids(select) if select else None
        unwanted = _ids(exclude) if exclude else set()
        keep = [item for item in items if (wanted is None or item.nodeid in wanted)
                and item.nodeid not in unwanted]
        dropped = [item for item in items if (wanted is not None and item.nodeid not in wanted)
                   or item.nodeid in unwanted]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    if os.environ.get("TASKFORGE_REVERSE") == "1":
        items.reverse()
    # Outside grading, a failing test's report says only where it raised and what: results
    # are read as outcomes, and pytest's traceback report (built whatever --tb says, though
    # only printed as a line) costs up to a millisecond or two a failure, which adds up where
    # a stub fails hundreds (bench/failure_report_cost.py). The grader keeps pytest's own
    # (its observer compares the runner's code).
    short = os.environ.get("TASKFORGE_INTEGRITY") is None and _ShortRepr is not None
    for item in items:
        item.user_properties.append(("taskforge_nodeid", item.nodeid))
        if short and isinstance(item, pytest.Function):
            item.repr_failure = _crash_line


def _crash_line(excinfo, *args, **kwargs):
    """A failing test's report: where it raised and what (`path:line: Type: message`, what
    `--tb=line` prints), as pytest's own report type, so that a project's hook that reads
    `report.longrepr.reprcrash` or `.reprtraceback` finds them."""
    try:
        what = excinfo.exconly(tryshort=True)
    except Exception:  # a message that cannot be made (its __str__ raises)
        what = excinfo.typename
    tb = excinfo.tb
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    path, line = (tb.tb_frame.f_code.co_filename, tb.tb_lineno) if tb is not None else ("", 0)
    what = what[:1000]
    return _ShortRepr(_OneLine([f"{path}:{line}: {what}\n"]), _Crash(path, line, what))


_collect_errors: list[str] = []


def pytest_collectreport(report):
    if report.failed:
        _collect_errors.append(f"<collect-error>::{report.nodeid}")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session):
    target = os.environ.get("TASKFORGE_COLLECT_OUT")
    if target:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write("".join(f"{line}\n" for line in
                                 [item.nodeid for item in session.items] + _collect_errors))


# Attributes whose reading Python audits and which hand out a frame (a traceback's, a
# suspended generator's or coroutine's): the way to a caller's frame without sys._getframe.
FRAME_ATTRIBUTES = ("tb_frame", "gi_frame", "cr_frame", "ag_frame")
HUNG_EXIT = 75  # with the hung-test file written: the runner's sign of a hung test


class _Watchdog:
    """One daemon thread that ends the process when the running test passes its limit."""

    def __init__(self, limit, out):
        self.limit, self.out = limit, out
        self.current = None  # (node id, monotonic start) of the running test
        threading.Thread(target=self._watch, name="taskforge-watchdog", daemon=True).start()

    def _watch(self):
        while True:
            time.sleep(min(0.25, self.limit / 4))
            current = self.current
            if current is not None and time.monotonic() - current[1] > self.limit:
                with open(self.out, "w", encoding="utf-8") as handle:
                    handle.write(current[0] + "\n")
                sys.stderr.write(f"\ntaskforge: {current[0]} ran past {self.limit:g}s; "
                                 "the run ends here\n")
                sys.stderr.flush()
                os._exit(HUNG_EXIT)


_watchdog = _Watchdog(float(os.environ["TASKFORGE_TEST_TIMEOUT"]),
                      os.environ["TASKFORGE_HUNG_OUT"]) \
    if os.environ.get("TASKFORGE_TEST_TIMEOUT") and os.environ.get("TASKFORGE_HUNG_OUT") \
    else None


# A fixture wider than a function (session, package, module, class: unittest's setUpClass and
# setUpModule too) is set up once, during the first test that needs it; what its setup runs
# can decide every test that uses it (a setup that raises errors them all). Its lines are
# recorded under a context of its own, "<fixture>N:name", and the map gives them to every test
# whose fixture closure holds it (`<map file>-fixtures.json`: context -> node ids).
FIXTURE_CONTEXT = "<fixture>"
_contexts = []  # the test's node id, then the wider fixtures being set up inside it
_fixture_users = {}  # fixture context -> node ids of the tests that use it
_fixtures_set_up = set()


def _switch(context):
    if _coverage is not None:
        _coverage.switch_context(context)
    if _tracer is not None:
        _tracer.switch(context)
    # Python subprocesses started from here measure themselves under this context
    # (testing/subprocess_coverage/sitecustomize.py).
    os.environ["TASKFORGE_TEST_CONTEXT"] = context


def _fixture_context(fixturedef):
    return f"{FIXTURE_CONTEXT}{id(fixturedef)}:{fixturedef.argname}"


def _wide_fixtures(item):
    info = getattr(item, "_fixtureinfo", None)
    for definitions in (info.name2fixturedefs.values() if info is not None else ()):
        for fixturedef in definitions:  # an override may request what it overrides
            if fixturedef.scope != "function":
                yield fixturedef


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _watchdog is not None:
        _watchdog.current = (item.nodeid, time.monotonic())
    if _coverage is not None or _tracer is not None:
        for fixturedef in _wide_fixtures(item):
            _fixture_users.setdefault(_fixture_context(fixturedef), set()).add(item.nodeid)
        _contexts[:] = [item.nodeid]
        _switch(item.nodeid)
    yield
    if _watchdog is not None:
        _watchdog.current = None


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    if (_coverage is None and _tracer is None) or fixturedef.scope == "function" \
            or not _contexts:
        yield
        return
    context = _fixture_context(fixturedef)
    _fixtures_set_up.add(context)
    _contexts.append(context)
    _switch(context)
    try:
        yield
    finally:
        _contexts.pop()
        _switch(_contexts[-1])


def _save_fixture_users(map_file):
    users = {context: sorted(_fixture_users.get(context, ()))
             for context in sorted(_fixtures_set_up)}
    with open(map_file + "-fixtures.json", "w", encoding="utf-8") as handle:
        json.dump(users, handle)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    global _coverage, _tracer
    if _tracer is not None:
        _tracer.stop()
        _tracer.save(os.environ["TASKFORGE_TRACE"])
        _save_fixture_users(os.environ["TASKFORGE_TRACE"])
        _tracer = None
    if _coverage is not None:
        _coverage.stop()
        _coverage.save()
        _save_fixture_users(os.environ["TASKFORGE_COVERAGE"])
        _coverage = None


# ---- grading: explicitly loaded plugins and the audit hook ---------------------------------
# TASKFORGE_PLUGINS: comma-separated pytest11 entry point names to load (grading runs with
#   PYTEST_DISABLE_PLUGIN_AUTOLOAD=1). Loaded when this plugin registers, which is after the
#   project's own `-p no:NAME` options (they come first on the command line), so a plugin the
#   project blocks stays blocked, as under autoloading.
# TASKFORGE_AUDIT: a directory with `solution.txt` and `protected.txt` (workspace-relative
#   paths, one a line: the files the solution changed or added; the restored tests and
#   config). An audit hook (it cannot be removed once added) appends findings to
#   `findings.jsonl` there: what code of the solution did at run time. Writes by the solution
#   to the restored files, and by anything but pytest's junitxml to the JUnit file or to this
#   directory, are refused.
# TASKFORGE_INTEGRITY: the same directory, holding the per-grading `key`: the runner's
#   integrity observer (taskforge_integrity.py) starts when this module is imported, before
#   any project code, and writes `integrity.jsonl` there.


def pytest_addhooks(pluginmanager):
    if _observer is not None and not pluginmanager.is_registered(_observer):
        pluginmanager.register(_observer, "taskforge-integrity")
    names = [name for name in os.environ.get("TASKFORGE_PLUGINS", "").split(",") if name]
    for name in names:
        if not pluginmanager.is_blocked(name) and pluginmanager.get_plugin(name) is None:
            pluginmanager.import_plugin(name, consider_entry_points=True)
    if _observer is not None:
        _observer.trust_plugins([pluginmanager.get_plugin(name) for name in names])


def _junit_path():
    for i, arg in enumerate(sys.argv):
        if arg.startswith("--junitxml=") or arg.startswith("--junit-xml="):
            return os.path.realpath(arg.split("=", 1)[1])
        if arg in ("--junitxml", "--junit-xml") and i + 1 < len(sys.argv):
            return os.path.realpath(sys.argv[i + 1])
    return None


def _listed(directory, name):
    """The real paths of the workspace-relative paths listed in `directory/name`."""
    root = os.getcwd()
    with open(os.path.join(directory, name), encoding="utf-8") as handle:
        return {os.path.realpath(os.path.join(root, line))
                for line in handle.read().split("\n") if line}


def _install_audit(directory):
    import atexit
    import hashlib

    from taskforge_integrity import code_of_file

    root = os.getcwd()
    solution = frozenset(_listed(directory, "solution.txt"))
    protected = frozenset(_listed(directory, "protected.txt"))
    # The solution's files whose snapshot version reaches into the call stack itself: there
    # the feature may need it, so their frame access does not count.
    # (none where the grader listed none: a run audited by other callers)
    frames_allowed = frozenset(_listed(directory, "frames.txt")) \
        if os.path.isfile(os.path.join(directory, "frames.txt")) else frozenset()
    out = os.path.join(directory, "findings.jsonl")
    junit = _junit_path()
    guarded_dir = os.path.realpath(directory) + os.sep
    # The base interpreter's standard library (a venv's "platstdlib" would be its own lib/).
    stdlib = os.path.realpath(os.path.dirname(os.__file__)) + os.sep
    third_party = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)
    plugin_files = {os.path.realpath(__file__)}
    environment = tuple(p + os.sep for p in dict.fromkeys(
        os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)))
    inspect_file = os.path.join(stdlib, "inspect.py")
    traceback_file = os.path.join(stdlib, "traceback.py")
    junitxml = None
    markers = ("__pycache__", ".pyc", ".pyo", ".pytest_cache", ".mypy_cache", ".ruff_cache",
               "/.cache/", "/pip/", "/uv/")
    spawns = {"subprocess.Popen": 1, "os.exec": 1, "os.posix_spawn": 1, "os.spawn": 2,
              "os.system": 0}
    state = threading.local()
    # Taken now: a test may delete sys._getframe for a while (attrs' tests of a Python
    # without it, through monkeypatch), and a solution may replace it.
    getframe = sys._getframe
    real = {}
    seen = set()
    verified = {}  # id(code) -> (code, whether it is its file's: `genuine`)

    def realpath(name):
        if not os.path.isabs(name):  # (the working directory may change)
            return os.path.realpath(name)
        path = real.get(name)
        if path is None:
            path = real[name] = os.path.realpath(name)
        return path

    def culprit(verify=True):
        """The file of the first frame outside the standard library, frozen and generated
        code (a generated frame is charged to whoever ran it), and whether the import system
        is on the way (then the open is an import's, judged by the import event). With
        `verify`, a frame on the way whose code is not what its file compiles to was
        compiled at run time under that name (a standard module's, an installed one's:
        `compile(source, json.__file__, ...)` run in a thread of its own had no frame of the
        solution's at all) and is the culprit, `<not the code of FILE>`, charged as the
        solution's (`blamed`)."""
        frame = getframe(1)
        via_import = False
        while frame is not None:
            code = frame.f_code
            name = code.co_filename
            if name.startswith("<"):
                via_import = via_import or name.startswith("<frozen importlib")
            else:
                path = realpath(name)
                if verify and path not in solution and path not in plugin_files \
                        and not genuine(code, path):
                    return f"<not the code of {path}>", via_import
                if (not path.startswith(stdlib) or any(t in path for t in third_party)) \
                        and path not in plugin_files:
                    return path, via_import
            frame = frame.f_back
        return None, via_import

    def genuine(code, path):
        known = verified.get(id(code))
        if known is None or known[0] is not code:
            known = verified[id(code)] = (code, code_of_file(code, path))
        return known[1]

    def blamed(who):
        return who in solution or (who or "").startswith("<not the code of ")

    def reads_the_stack(what):
        """Who took a frame (`what`: the event, or the attribute read). The audited call's
        caller decides: the solution's code is charged; so is the solution behind inspect
        (whose functions hand out frames) and behind traceback's stack functions or its
        walks of a traceback that hand the frames out. traceback's formatting of a caught
        exception reads its frames inside the module (an honest `logger.exception`), and
        `clear_frames` hands nothing out: neither is. Nor are inspect's reads of a
        generator's or coroutine's frame and inspect called by another standard module
        (`importlib.resources.files()` asks it for its caller), the standard library's
        other uses (namedtuple, typing, enum and logging read their caller's module name),
        pytest's, an installed library's and the project's unchanged code; nor the
        solution's files whose snapshot version takes frames itself. A standard module's
        code that is not its file's, and code under a file name that exists nowhere, are
        the solution's (`<not the code of FILE>`)."""
        try:
            frame = getframe(3)  # this, _on, hook: then the caller of the audited call
        except ValueError:  # called from no Python code at all
            return None
        name = frame.f_code.co_filename
        if name.startswith("<"):  # generated code: charged to whoever ran it
            who, _ = culprit()
        else:
            path = realpath(name)
            library = not path.startswith(stdlib) or any(t in path for t in third_party)
            if path in solution:
                who = path
            elif path in plugin_files:
                return None
            elif library:
                if os.path.exists(path) or importable_elsewhere(frame):
                    return None  # an installed library's, the project's: not judged here
                who = f"<not the code of {path}>"
            elif not genuine(frame.f_code, path):
                who = f"<not the code of {path}>"
            elif path == traceback_file and what in FRAME_ATTRIBUTES:
                above = frame.f_back
                if frame.f_code.co_name == "clear_frames" or (
                        above is not None
                        and realpath(above.f_code.co_filename) == traceback_file):
                    return None  # formatted or cleared inside the module
                who, _ = culprit()
            elif path == inspect_file:
                if what in ("gi_frame", "cr_frame", "ag_frame") or by_the_standard_library(frame):
                    return None
                who, _ = culprit()
            elif path == traceback_file:
                who, _ = culprit()
            else:
                return None
        if who in frames_allowed or not blamed(who):
            return None
        return who

    def importable_elsewhere(frame):
        """Whether the frame's module came from a zip or from bytecode alone (its file name
        names no file on disk)."""
        loader = frame.f_globals.get("__loader__")
        return type(loader).__name__ in ("zipimporter", "SourcelessFileLoader")

    def by_the_standard_library(frame):
        """Whether the first caller of inspect outside it is a standard module's own code."""
        above = frame.f_back
        while above is not None and realpath(above.f_code.co_filename) == inspect_file:
            above = above.f_back
        if above is None or above.f_code.co_filename.startswith("<"):
            return False
        path = realpath(above.f_code.co_filename)
        return path.startswith(stdlib) and not any(t in path for t in third_party) \
            and path not in (traceback_file,) and genuine(above.f_code, path)

    def record(message, disqualifies=True):
        if message in seen:
            return
        seen.add(message)
        with open(out, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"message": message, "disqualifies": disqualifies}) + "\n")

    def cache_read(name):
        """Whether opening `name` reads bytecode or a tool's cache: judged on the path below
        the workspace where it is inside it (the workspace may lie under a cache directory),
        and not at all inside the environment and the interpreter (taskforge's environments
        lie under ~/.cache; the leak scan searched them)."""
        path = os.path.abspath(name)
        if path.startswith(root + os.sep):
            return any(m in path[len(root):] for m in markers)
        if path.startswith(environment) or os.path.realpath(path).startswith(environment):
            return False
        return any(m in name for m in markers)

    def relative(path):
        return os.path.relpath(path, root) if path.startswith(root + os.sep) else path

    def writes(mode, flags):
        if isinstance(mode, str):
            return any(c in mode for c in "wax+")
        return bool((flags or 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC))

    def guard_results(path, action):
        nonlocal junitxml
        if path != junit and not path.startswith(guarded_dir):
            return
        who, _ = culprit()
        if junitxml is None and "_pytest.junitxml" in sys.modules:
            junitxml = realpath(sys.modules["_pytest.junitxml"].__file__)
        if who is not None and who == junitxml:
            return
        record(f"{action} the test results ({relative(path)}) from {relative(who or '?')}")
        raise PermissionError(f"taskforge: {path} belongs to the grader")

    def guard_protected(path, action):
        if path in protected:
            who, _ = culprit()
            if blamed(who):
                record(f"{action} {relative(path)} at run time from {relative(who)}")
                raise PermissionError(f"taskforge: {path} is restored by the grader")

    def hook(event, args):
        if getattr(state, "busy", False):
            return
        state.busy = True
        try:
            _on(event, args)
        finally:
            state.busy = False

    def _on(event, args):
        if event == "open":
            name = args[0]
            if not isinstance(name, str | bytes):
                return
            name = os.fsdecode(name)
            if writes(args[1], args[2]):
                path = os.path.realpath(name)
                guard_results(path, "writes")
                guard_protected(path, "writes")
            elif cache_read(name):
                who, via_import = culprit(verify=False)  # (most are imports': no compiling)
                if not via_import and not blamed(who):
                    who, via_import = culprit()
                if blamed(who) and not via_import:
                    path = os.path.realpath(name)
                    record(f"reads bytecode or caches ({relative(path)}) from {relative(who)}")
        elif event in ("sys._getframe", "sys._current_frames") or (
                event == "object.__getattr__" and len(args) > 1 and args[1] in FRAME_ATTRIBUTES):
            # A frame of the caller's caller holds the test's own values: its locals (a
            # parametrized `expected`) and the line it is on. A stub that read them answered
            # every test it was called from (session 64's red team: reward 1.0, hidden tests
            # too), so taking a frame from the solution's code disqualifies.
            what = event if event != "object.__getattr__" else args[1]
            who = reads_the_stack(what)
            if who is not None:
                record(f"reaches into the call stack ({what}) from {relative(who)}")
        elif event in ("os.rename", "os.remove", "os.truncate", "os.chmod", "os.symlink",
                       "os.link"):
            for name in args[:2]:
                if isinstance(name, str | bytes):
                    path = os.path.realpath(os.fsdecode(name))
                    guard_results(path, "changes")
                    guard_protected(path, "changes")
        elif event in spawns:
            who, _ = culprit()
            if blamed(who):
                argv = args[spawns[event]]
                text = argv if isinstance(argv, str | bytes) else " ".join(map(str, argv or ()))
                words = os.fsdecode(text).split()
                program = os.path.basename(words[0]) if words else "?"
                if "git" in (program, *(os.path.basename(w) for w in words[1:3])):
                    record(f"runs git from {relative(who)}", disqualifies=False)
                else:
                    record(f"runs {program} from {relative(who)}", disqualifies=False)
        elif event in ("socket.connect", "socket.getaddrinfo", "socket.sendto"):
            who, _ = culprit()
            if blamed(who):
                record(f"uses the network from {relative(who)}", disqualifies=False)
        elif event == "import":
            top = str(args[0]).split(".")[0]
            if top in ("_pytest", "pluggy", "taskforge_pytest_plugin"):
                who, _ = culprit()
                if blamed(who):
                    record(f"imports pytest internals ({args[0]}) from {relative(who)}")
        elif event in ("marshal.loads", "marshal.load"):
            who, via_import = culprit()
            if blamed(who) and not via_import:
                record(f"loads bytecode (marshal) from {relative(who)}")
        elif event in ("gc.get_objects", "gc.get_referrers", "gc.get_referents",
                       "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata", "sys.setprofile",
                       "sys.settrace"):
            who, _ = culprit()
            if blamed(who):
                record(f"reaches into the interpreter ({event}) from {relative(who)}")

    def digest():
        if junit is None or not os.path.isfile(junit):
            return None
        with open(junit, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()

    def finish(key):
        state.busy = True  # the grader's own reads and writes
        try:
            with open(out, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({key: digest()}) + "\n")
        finally:
            state.busy = False

    sys.addaudithook(hook)
    # Registered before any code of the solution runs, so it runs after all of theirs.
    atexit.register(finish, "exit_junit_sha256")
    return finish


def _install_integrity(directory):
    """The runner's integrity observer (taskforge_integrity.py), started before the audit
    hook: it deletes the key file, which the audit hook would refuse."""
    from taskforge_integrity import install

    return install(directory, _listed(directory, "solution.txt"), os.getcwd(),
                   _listed(directory, "protected.txt"))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    # After junitxml wrote its file (in its pytest_sessionfinish): what pytest reported.
    if _observer is not None:
        _observer.finish(config)
    if _audit_finish is not None:
        _audit_finish("junit_sha256")


# Started last, so that the snapshot holds every function of this module.
_observer = _install_integrity(os.environ["TASKFORGE_INTEGRITY"]) \
    if os.environ.get("TASKFORGE_INTEGRITY") else None
_audit_finish = _install_audit(os.environ["TASKFORGE_AUDIT"]) \
    if os.environ.get("TASKFORGE_AUDIT") else None
