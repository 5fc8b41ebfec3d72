"""One test that never ends costs only itself: it runs past the per-test limit, the run
starts again without it, it is left out like a flaky test and named in the ingest report,
and the rest of the suite still gives tasks.

Before: the baseline waited for the whole suite's timeout and the source was set aside
("the test suite did not finish within 30s").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_project, write_recipe

import taskforge
from taskforge.ingest import ingest_recipe
from taskforge.sandbox import get_sandbox

FILES = {
    "calc/__init__.py": "",
    "calc/core.py": """\
        def add(a, b):
            total = a
            total += b
            return total


        def scale(values, factor):
            out = []
            for v in values:
                out.append(v * factor)
            return out
    """,
    "tests/test_core.py": """\
        from calc.core import add, scale


        def test_add():
            assert add(2, 3) == 5


        def test_scale():
            assert scale([1, 2], 3) == [3, 6]
    """,
    # Waits in C with signals blocked: a SIGALRM-based timeout (pytest-timeout's default)
    # could not end it; only ending the process does.
    "tests/test_wait.py": """\
        import signal
        import threading

        from calc.core import add


        def test_waits_for_an_event_nobody_sets():
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGINT})
            assert add(1, 1) == 2
            threading.Event().wait()
    """,
}
HUNG = "tests/test_wait.py::test_waits_for_an_event_nobody_sets"


@pytest.mark.slow
def test_one_hanging_test_costs_only_itself(tmp_path: Path, tf_cache: Path) -> None:
    root = make_project(tmp_path, FILES, name="calc")
    recipe = write_recipe(tmp_path / "calc.yaml", f"""\
        name: calc
        seed: 1
        sources:
          - path: {root}
        strategies: [stub-function]
        select: {{min_covering_tests: 1, min_body_lines: 2, max_tasks_per_source: 5}}
        verify: {{repeats: 2, timeout_s: 30, test_timeout_s: 3}}
        sandbox: none
    """)
    out = tmp_path / "out"
    taskforge.generate(recipe, out=out, cache=tf_cache)
    records = [json.loads(line)
               for line in (out / "tasks-00000-of-00001.jsonl").read_text().splitlines()]
    assert {r["deleted"][0]["symbol"] for r in records} == {"calc.core.add", "calc.core.scale"}
    assert all(HUNG not in r["FAIL_TO_PASS"] + r["PASS_TO_PASS"] for r in records)
    lines: list[str] = []
    (row,) = ingest_recipe(recipe, cache=tf_cache, sandbox=get_sandbox("none"), out=out,
                           log=lines.append)
    assert row.failed is None and row.hung == (HUNG,) and row.stable == 2
    assert row.to_dict()["hung"] == [HUNG]
    assert row.tasks == 2


@pytest.mark.slow
def test_the_log_names_the_hung_test_and_the_limit(tmp_path: Path, tf_cache: Path) -> None:
    from taskforge.ingest import ingest_sources
    from taskforge.model import SourceSpec

    root = make_project(tmp_path, FILES, name="calc-log")
    lines: list[str] = []
    (done,), _ = ingest_sources((SourceSpec(kind="path", location=str(root)),), cache=tf_cache,
                                base_dir=tmp_path, sandbox=get_sandbox("none"), repeats=2,
                                timeout=30, test_timeout=2, log=lines.append)
    assert done.baseline.hung == (HUNG,)
    assert HUNG not in done.baseline.tests and HUNG not in done.baseline.flaky
    assert f"calc-log: 1 test ran past 2s and is left out: {HUNG}" in lines
