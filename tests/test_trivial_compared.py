"""The screen settles a trivial solution without a run where a FAIL_TO_PASS test is nothing but
`assert f(...) == expected` of the deleted function and a plain value the solution's constant
does not equal (the server's `_settled_by_comparison`): a fork of the server costs ~15 ms on
humanize whatever the test, and seven trivial solutions ran for every candidate.

The attack on that shortcut: a test of that shape in which something of the project runs
between collection and the assertion, so that the constant is not what the comparison sees
(an autouse fixture that wraps the function, a decorator that swallows the assertion's error,
an indirect parameter whose fixture turns the value into another, a conftest hook that wraps
the function). For each, the constant that wins really passes the test (a pytest run of the
project with the function's body replaced by it: its positive control) although it differs
from the value the test's source names, so a comparison of the two alone would call it a
failure and let the candidate through as a task. The screen runs it instead and rejects the
candidate (`trivial-solution`), while the same shape with nothing around it (`scale`, also
under a freezegun-style decorator, and a test whose first assertion is followed by others) is
settled by comparison, every trivial solution, no fork."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import (
    PathProject,
    ingest_path_project,
    make_project,
    passes_with_body,
    setuptools_pyproject,
)

from taskforge.executors import LocalExecutor
from taskforge.languages.python import NULL_BODIES
from taskforge.languages.python.testing import screen as screen_module
from taskforge.languages.python.testing.screen import SCREENED_NULLS

pytestmark = pytest.mark.slow  # a real environment, baseline and screen server

FILES = {
    "pyproject.toml": setuptools_pyproject("compared", "0.1"),
    "compared/__init__.py": "",
    "compared/_vendor/__init__.py": "",
    "compared/_vendor/freezegun/__init__.py": "from .api import freeze_time\n",
    # a stand-in for freezegun's decorator, found by the file its wrapper's code is in
    "compared/_vendor/freezegun/api.py": """\
        import functools


        def freeze_time(moment):
            def decorate(test):
                @functools.wraps(test)
                def wrapper(*args, **kwargs):
                    return test(*args, **kwargs)
                return wrapper
            return decorate
        """,
    "compared/core.py": """\
        def scale(value, factor=2):
            times = int(factor)
            scaled = value * times
            return scaled


        def label(value):
            number = float(value)
            positive = number > 0
            return positive


        def total(values):
            numbers = [float(v) for v in values]
            summed = sum(numbers)
            return int(summed)


        def sign(value):
            number = float(value)
            positive = number > 0
            return positive


        def hooked(value):
            number = int(value)
            doubled = number * 2
            return doubled
        """,
    "tests/test_scale.py": """\
        import pytest

        from compared import core
        from compared._vendor.freezegun import freeze_time
        from compared.core import scale


        @pytest.mark.parametrize("value, expected", [(1, 2), (3, 6), ("ab", "abab")])
        def test_scale(value, expected):
            assert core.scale(value) == expected


        def test_scale_by_three():
            \"\"\"A literal on the left.\"\"\"
            assert 9 == scale(3, 3)


        @freeze_time("2020-01-01")
        @pytest.mark.parametrize("values, expected", [([1, 2], [1, 2, 1, 2])])
        def test_scale_a_list(values, expected):
            assert scale(values) == expected
            assert len(scale(values)) == 4
        """,
    # the function wrapped by an autouse fixture: `return True` gives "True"
    "tests/test_label.py": """\
        import pytest

        from compared import core


        @pytest.fixture(autouse=True)
        def labels_as_text(monkeypatch):
            real = core.label
            monkeypatch.setattr(core, "label", lambda value: str(real(value)))


        def test_label():
            assert core.label(1) == "True"
        """,
    # a decorator that swallows the assertion's error: any constant passes
    "tests/test_total.py": """\
        import functools

        from compared import core


        def lenient(test):
            @functools.wraps(test)
            def run(*args, **kwargs):
                try:
                    test(*args, **kwargs)
                except AssertionError:
                    pass
            return run


        @lenient
        def test_total():
            assert core.total([2, 3]) == 5
        """,
    # an indirect parameter: the test compares with the fixture's value, True, not 5
    "tests/test_sign.py": """\
        import pytest

        from compared import core


        @pytest.fixture
        def expected(request):
            return request.param > 0


        @pytest.mark.parametrize("expected", [5], indirect=True)
        def test_sign(expected):
            assert core.sign(5) == expected
        """,
    # a conftest hook that wraps the function around each test here: `pass` gives "none"
    "tests/hooked/conftest.py": """\
        from compared import core

        REAL = core.hooked


        def pytest_runtest_setup(item):
            core.hooked = lambda value: REAL(value) or "none"


        def pytest_runtest_teardown(item):
            core.hooked = REAL
        """,
    "tests/hooked/test_hooked.py": """\
        from compared import core


        def test_hooked():
            assert core.hooked(0) == "none"
        """,
}
# Each attack: the trivial solution that passes its test, and the value the test's source
# compares the call with (a comparison alone would call the constant a failure)
WON_BY = {"label": ("return-true", "True"), "total": ("pass", 5),
          "sign": ("return-true", 5), "hooked": ("pass", "none")}
TEST_OF = {"label": "tests/test_label.py", "total": "tests/test_total.py",
           "sign": "tests/test_sign.py", "hooked": "tests/hooked/test_hooked.py"}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path) -> PathProject:
    return ingest_path_project(make_project(tmp_path_factory.mktemp("compared"), FILES),
                               tf_cache)


@pytest.fixture(scope="module")
def screened(project: PathProject) -> tuple[dict, dict]:
    """The screen's verdicts on every function, and its results by (function, body)."""
    results: dict[tuple[str, str], screen_module.ScreenResult] = {}
    real = screen_module.screen

    def kept(jobs, *args, **kwargs):
        found = real(jobs, *args, **kwargs)
        for job_id, result in found.items():
            key, body = job_id.split("\0")
            results[key.rsplit(".", 1)[-1], body] = result
        return found

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(screen_module, "screen", kept)
        verdicts = project.verifier().screen(list(project.candidates.values()),
                                             LocalExecutor(1))
    by_name = {c.symbol.rsplit(".", 1)[-1]: verdicts[c.key] for c in project.candidates.values()}
    return by_name, results


def test_a_plain_comparison_settles_every_trivial_solution_without_a_run(screened) -> None:
    verdicts, results = screened
    verdict = verdicts["scale"]
    assert verdict.screened and verdict.rejection is None, verdict
    assert set(verdict.fail_to_pass) == {
        "tests/test_scale.py::test_scale[1-2]", "tests/test_scale.py::test_scale[3-6]",
        "tests/test_scale.py::test_scale[ab-abab]", "tests/test_scale.py::test_scale_by_three",
        "tests/test_scale.py::test_scale_a_list[values0-expected0]"}
    for body in SCREENED_NULLS:
        result = results["scale", body]
        assert result.compared and result.wall_seconds == 0.0, (body, result)
        (run,) = result.runs
        assert list(run.values()) == ["failed"], (body, run)
    # every trivial solution scored, each failing the first test it met
    assert verdict.null_solutions == {body: {"passed": 0, "of": 5} for body in NULL_BODIES}


@pytest.mark.parametrize("name", sorted(WON_BY))
def test_the_constant_that_passes_is_run_and_rejects_the_candidate(
        name: str, screened, project: PathProject, tmp_path: Path) -> None:
    body, named = WON_BY[name]
    constant = NULL_BODIES[body]
    # The positive control: the constant passes the test in a real run, although it is not
    # the value the test's source compares the call with.
    assert _returned(constant) != named
    assert passes_with_body(project, "compared/core.py", name, constant, TEST_OF[name],
                            tmp_path)
    verdicts, results = screened
    verdict = verdicts[name]
    assert verdict.rejection is not None and verdict.rejection.reason == "trivial-solution", \
        verdict
    assert constant in verdict.rejection.detail, verdict.rejection
    # nothing of it was settled by comparison: every trivial solution that ran was a run
    ran = [results[name, b] for b in SCREENED_NULLS if (name, b) in results]
    assert ran and not any(r.compared for r in ran), ran


def _returned(statement: str) -> object:
    return None if statement == "pass" else ast.literal_eval(statement.removeprefix("return "))
