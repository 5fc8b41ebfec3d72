"""Per-test coverage of the Python subprocesses a test starts (coverage.py's documented way:
a start-up hook that starts measuring in every new interpreter).

The runner puts this directory on PYTHONPATH only for the runs that record the test map (the
baseline's first two), so every Python a test launches with that environment imports this
module at start-up; other runs never see it (it would shadow a project's own sitecustomize). It
does nothing until a test is running (our pytest plugin sets TASKFORGE_TEST_CONTEXT to the node
id when each test starts). Then the subprocess's lines are recorded under that test's id, by
the run's tracer: coverage.py into a parallel data file (TASKFORGE_COVERAGE), or
sys.monitoring into `<TASKFORGE_TRACE>.<pid>.<random>.json`. The baseline combines them with
the main process's map: a function reached only through a subprocess
(`subprocess.run([sys.executable, "-c", ...])`) still has its covering test.
"""

import os
import sys


def _start() -> None:
    context = os.environ.get("TASKFORGE_TEST_CONTEXT")
    root = os.environ.get("TASKFORGE_COVER_ROOT", ".")
    if not context:
        return
    import atexit

    trace_file = os.environ.get("TASKFORGE_TRACE")
    if trace_file:
        if not hasattr(sys, "monitoring"):
            return  # another, older interpreter a test started: not the suite's own
        try:
            from taskforge_tracer import Tracer
        except ImportError:
            return
        tracer = Tracer(root, context=context,
                        lines=os.environ.get("TASKFORGE_TRACE_FUNCTIONS") != "1")
        tracer.start()

        def save_trace() -> None:
            tracer.stop()
            tracer.save(f"{trace_file}.{os.getpid()}.{os.urandom(4).hex()}.json")

        atexit.register(save_trace)
        return
    data_file = os.environ.get("TASKFORGE_COVERAGE")
    if not data_file:
        return
    try:
        import coverage
    except ImportError:
        return
    cov = coverage.Coverage(data_file=data_file, data_suffix=True, config_file=False,
                            context=context, source=[root])
    cov.start()

    def save() -> None:
        cov.stop()
        cov.save()

    atexit.register(save)


_start()
