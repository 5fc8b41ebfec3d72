"""Environment detection, one rule at a time, on small purpose-built projects.

Most tests call the detection functions on files written to tmp_path (no build). The last
ones build real environments with uv and run the real suites, to show that what detection
decided actually works: neutralised addopts, deselected network tests, doctests, a
namespace package's import root, a stray tests.py, a setup.py-only project.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import make_project

from taskforge.errors import UserError
from taskforge.ingest import ingest
from taskforge.languages.python.env.declared import pick_test_sets, requirement_lines
from taskforge.languages.python.env.detect import detect_spec
from taskforge.languages.python.env.layout import read_layout
from taskforge.languages.python.env.pytest_config import plan_addopts, read_pytest_config
from taskforge.languages.python.env.pythons import available_interpreters
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox

OURS = f"{sys.version_info.major}.{sys.version_info.minor}"
CODE = """\
    def double(x):
        return x * 2
"""
TEST = """\
    from pkg.core import double


    def test_double():
        assert double(2) == 4
"""


def spec_of(root: Path, **overrides: object):
    return detect_spec(root, SourceSpec(kind="path", location=str(root), **overrides))


def project(tmp_path: Path, files: dict[str, str], name: str = "proj") -> Path:
    return make_project(tmp_path, {"pkg/__init__.py": "", "pkg/core.py": CODE,
                                   "tests/test_core.py": TEST, **files}, name=name)


def pyproject(extra: str = "", requires: str = ">=3.9") -> str:
    return f"""\
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "proj"
        version = "1.0"
        requires-python = "{requires}"
        {extra}
    """


# ------------------------------------------------------------------ requires-python


def test_requires_python_keeps_our_interpreter_when_it_fits(tmp_path: Path) -> None:
    spec = spec_of(project(tmp_path, {"pyproject.toml": pyproject(requires=f">={OURS}")}))
    assert spec.python == OURS
    assert any("requires-python" in d and "pyproject.toml" in d for d in spec.decisions)


def test_requires_python_picks_the_newest_interpreter_that_fits(tmp_path: Path) -> None:
    minor = sys.version_info.minor + 1
    root = project(tmp_path, {"pyproject.toml": pyproject(requires=f">=3.{minor}")})
    fitting = [v for v, _ in available_interpreters() if int(v.split(".")[1]) >= minor]
    if fitting:
        newest = max(fitting, key=lambda v: int(v.split(".")[1]))
        assert spec_of(root).python == ".".join(newest.split(".")[:2])
    else:  # this machine has none: the rejection must say so
        with pytest.raises(UserError, match="no interpreter"):
            spec_of(root)


def test_requires_python_nobody_satisfies_is_a_clear_rejection(tmp_path: Path) -> None:
    root = project(tmp_path, {"setup.py": "from setuptools import setup\n"
                                          "setup(name='proj', python_requires='<3.0')\n"})
    with pytest.raises(UserError) as info:
        spec_of(root)
    message = str(info.value)
    assert "'<3.0'" in message and "setup.py" in message and "no interpreter" in message
    assert OURS in message  # names what the machine has
    assert "\n" not in message


def test_requires_python_from_setup_cfg_and_the_recipe_override(tmp_path: Path) -> None:
    root = project(tmp_path, {"setup.cfg": "[options]\npython_requires = >=3.6\n"})
    spec = spec_of(root)
    assert spec.python == OURS
    assert any("setup.cfg" in d for d in spec.decisions)
    assert spec_of(root, python="3.99").python == "3.99"


# ------------------------------------------------------------------ declared test dependencies


def test_extras_named_for_tests_win(tmp_path: Path) -> None:
    root = project(tmp_path, {"pyproject.toml": pyproject(
        '[project.optional-dependencies]\ntest = ["attrs"]\ndocs = ["sphinx"]\ndev = ["ruff"]')})
    assert spec_of(root).project_install == ".[test]"


def test_extra_requiring_pytest_is_the_test_extra_without_its_tools(tmp_path: Path) -> None:
    root = project(tmp_path, {"pyproject.toml": pyproject(
        '[project.optional-dependencies]\nall = ["pytest>=8", "hypothesis", "mypy>=1", "ruff",'
        ' "proj[docs]"]\ndocs = ["sphinx"]')})
    spec = spec_of(root)
    assert spec.project_install == "."
    assert {"pytest>=8", "hypothesis"} <= set(spec.requirements)
    assert not {"mypy>=1", "ruff", "proj[docs]"} & set(spec.requirements)
    text = "\n".join(spec.decisions)
    assert "extra [all]" in text and "requires pytest" in text
    assert "left out (tools the tests do not import): mypy, ruff" in text


def test_a_tool_the_tests_import_is_kept(tmp_path: Path) -> None:
    root = project(tmp_path, {"requirements-test.txt": "mypy\nblack\n",
                              "tests/test_plugin.py": "import mypy.api\n\ndef test_api():\n"
                                                      "    assert mypy.api\n"})
    requirements = spec_of(root).requirements
    assert "mypy" in requirements and "black" not in requirements


DATEUTIL_CONFTEST = """\
    import pytest


    def pytest_collection_modifyitems(items):
        for item in items:
            item.add_marker(pytest.mark.no_cover)
"""


def test_a_plugin_whose_mark_the_suite_uses_is_kept(tmp_path: Path) -> None:
    """python-dateutil's conftest marks every test `no_cover` (pytest-cov registers it), and
    `filterwarnings = error` makes an unknown mark fail collection: with pytest-cov left out
    (no test imports it) the clone was set aside, "no tests found"."""
    root = project(tmp_path, {"requirements-dev.txt": "pytest-cov\npytest-xdist\n",
                              "tests/conftest.py": DATEUTIL_CONFTEST})
    spec = spec_of(root)
    assert "pytest-cov" in spec.requirements and "pytest-xdist" not in spec.requirements
    assert "left out (tools the tests do not import): pytest-xdist" in spec.decisions


def test_dev_extra_is_the_last_resort(tmp_path: Path) -> None:
    assert pick_test_sets({"dev": ["black"], "docs": ["sphinx"]}) == (["dev"], "named dev")
    assert pick_test_sets({"docs": ["sphinx"]})[0] == []


def test_setup_cfg_extras(tmp_path: Path) -> None:
    root = project(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup()\n",
        "setup.cfg": "[metadata]\nname = proj\n[options.extras_require]\n"
                     "testing =\n    pytest\n    freezegun\ndocs = sphinx\n"})
    spec = spec_of(root)
    assert spec.project_install == ".[testing]"
    assert any("setup.cfg" in d for d in spec.decisions)


def test_setup_py_only_with_extras_bound_to_a_name(tmp_path: Path) -> None:
    root = project(tmp_path, {"setup.py": """\
        from setuptools import setup

        EXTRAS = {"tests": ["pytest", "mock"], "docs": ["sphinx"]}
        setup(name="proj", version="1.0", extras_require=EXTRAS)
    """})
    spec = spec_of(root)
    assert spec.project_install == ".[tests]"
    assert any("setup.py only" in d for d in spec.decisions)


def test_pep735_group_with_include_group(tmp_path: Path) -> None:
    root = project(tmp_path, {"pyproject.toml": pyproject(
        '[dependency-groups]\nbase = ["attrs"]\ntests = [{include-group = "base"}, "pytest-mock"]\n'
        'lint = ["ruff"]')})
    spec = spec_of(root)
    assert "attrs" in spec.requirements and "pytest-mock" in spec.requirements
    assert "ruff" not in spec.requirements
    assert spec.project_install == "."


def test_pep735_group_names_are_normalised(tmp_path: Path) -> None:
    """`include-group = "Lint"` names the group `lint` (PEP 735 normalises names like PEP 503);
    read literally it resolved to nothing and the group's requirements were lost."""
    root = project(tmp_path, {"pyproject.toml": pyproject(
        '[dependency-groups]\nBase_Deps = ["attrs"]\n'
        'Tests = [{include-group = "base-deps"}, {include-group = "Lint"}, "pytest-mock"]\n'
        'lint = ["flake8-bugbear"]')})
    spec = spec_of(root)
    assert {"attrs", "pytest-mock", "flake8-bugbear"} <= set(spec.requirements)


def test_requirements_files_follow_includes(tmp_path: Path) -> None:
    root = project(tmp_path, {
        "requirements/base.txt": "attrs>=20  # runtime\n",
        "requirements/tests.txt": "-r base.txt\npytest-mock\n--index-url http://127.0.0.1/\n",
        "requirements/docs.txt": "sphinx\n",
    })
    spec = spec_of(root)
    assert "attrs>=20" in spec.requirements and "pytest-mock" in spec.requirements
    assert "sphinx" not in spec.requirements
    assert any("requirements/tests.txt" in d for d in spec.decisions)


def test_requirements_dev_file_when_none_names_tests(tmp_path: Path) -> None:
    root = project(tmp_path, {"requirements-dev.txt": "freezegun\n", "requirements.txt": "attrs\n"})
    assert "freezegun" in spec_of(root).requirements
    assert "attrs" not in spec_of(root).requirements
    assert requirement_lines(root / "requirements-dev.txt") == ["freezegun"]


def test_tox_deps_keep_test_factors_only(tmp_path: Path) -> None:
    root = project(tmp_path, {"tox.ini": """\
        [tox]
        envlist = py311, mypy
        [testenv]
        deps =
            pytest
            py311: freezegun
            tests: hypothesis
            mypy: mypy
            pytestmain: git+https://github.com/pytest-dev/pytest.git@main
            setuptools >= 78.1.1,< 82
            {[base]deps}
    """})
    requirements = spec_of(root).requirements
    # zope.interface's: one requirement, its commas join version clauses
    assert "setuptools >= 78.1.1,< 82" in requirements and "< 82" not in requirements
    assert "freezegun" in requirements and "hypothesis" in requirements
    assert "mypy" not in requirements
    # pluggy's: the environment against pytest's development branch is not the tests' own
    # (before: "Git operation failed", the clone of an unreachable repository)
    assert not any("git+" in r for r in requirements)
    assert not any("{" in r for r in requirements)


def test_tox_ci_environment_for_our_python(tmp_path: Path) -> None:
    root = project(tmp_path, {"tox.ini": f"""\
        [gh]
        python =
            3.99: py399
            {OURS}: py-extra, lint
        [testenv]
        deps = pytest
        [testenv:py-extra]
        deps =
            numpy
            -r requirements.txt
        [testenv:py399]
        deps = ancient
    """})
    spec = spec_of(root)
    assert "numpy" in spec.requirements and "ancient" not in spec.requirements
    assert any("[testenv:py-extra]" in d and "CI" in d for d in spec.decisions)


def test_noxfile_test_sessions(tmp_path: Path) -> None:
    root = project(tmp_path, {
        "pyproject.toml": pyproject('[project.optional-dependencies]\ncli = ["click"]'),
        "requirements/test.txt": "pytest-mock\n",
        "noxfile.py": """\
            import nox


            @nox.session
            def tests(session):
                session.install("-r", "requirements/test.txt", ".[cli]", "hypothesis")
                session.run("pytest")


            @nox.session
            def docs(session):
                session.install("sphinx")
        """})
    spec = spec_of(root)
    assert "hypothesis" in spec.requirements and "pytest-mock" in spec.requirements
    assert "sphinx" not in spec.requirements
    assert spec.project_install == ".[cli]"
    assert any("noxfile.py" in d for d in spec.decisions)


# ------------------------------------------------------------------ pytest configuration


def test_addopts_plugins_are_neutralised_or_served() -> None:
    plan = plan_addopts(["-ra", "--cov", "pkg", "--cov-report=term", "-n", "auto", "--dist",
                         "loadscope", "-x", "--doctest-modules", "--timeout=30", "--reruns", "2",
                         "--import-mode", "importlib", "-nauto"])
    assert plan.kept == ["-ra", "--doctest-modules", "--timeout=30", "--import-mode",
                         "importlib"]
    assert [option for option, _ in plan.dropped] == [
        "--cov pkg", "--cov-report=term", "-n auto", "--dist loadscope", "-x", "--reruns 2",
        "-nauto"]
    assert plan.plugins == [("pytest-timeout", "--timeout")]
    assert plan_addopts(["-ra", "--strict-markers"]).override is False


def test_loading_a_neutralised_plugin_is_neutralised_too() -> None:
    """propcache's `-p pytest_cov` (with its --cov options): pytest-cov is not installed, so
    pytest stopped at "Error importing plugin pytest_cov" and the source was set aside."""
    plan = plan_addopts(["--doctest-modules", "-p", "pytest_cov", "--cov", "-pxdist",
                         "-p", "no:cacheprovider", "-p", "pytester"])
    assert [option for option, _ in plan.dropped] == ["-p pytest_cov", "--cov", "-p xdist"]
    assert plan.kept == ["--doctest-modules", "-p", "no:cacheprovider", "-p", "pytester"]


def test_combined_short_flags_are_unbundled_and_x_neutralised() -> None:
    """`-xvs` stopped the baseline at the first failure: `-x` hid inside the cluster."""
    plan = plan_addopts(["-xvs", "-vrA", "-ra", "-p", "no:warnings"])
    assert [option for option, _ in plan.dropped] == ["-x"]
    assert plan.kept == ["-v", "-s", "-v", "-rA", "-ra", "-p", "no:warnings"]


def test_addopts_value_with_spaces_stays_one_word(tmp_path: Path) -> None:
    """`-m "not slow"` was joined with spaces and split again: pytest took `slow` as a path.
    With network markers, a second `-m` would replace the project's; the two are joined."""
    root = project(tmp_path, {"pyproject.toml": pyproject(
        '[tool.pytest.ini_options]\naddopts = \'--cov=pkg -m "not slow"\'\n')})
    command = spec_of(root).test_command
    assert command == ("python", "-m", "pytest", "-o", "addopts=", "-m", "not slow")
    (root / "tests/test_net.py").write_text("import pytest\n\n@pytest.mark.network\n"
                                            "def test_remote():\n    pass\n")
    command = spec_of(root).test_command
    assert command[-2:] == ("-m", "(not slow) and ((not(network)))")


def test_ini_file_precedence(tmp_path: Path) -> None:
    root = make_project(tmp_path, {
        "setup.cfg": "[tool:pytest]\naddopts = -x\n",
        "tox.ini": "[pytest]\naddopts = --cov=a\nmarkers =\n    network: needs it\n",
    })
    config = read_pytest_config(root)
    assert config.where == "tox.ini [pytest]" and config.addopts == ["--cov=a"]
    assert config.markers == ["network: needs it"]
    (root / "pyproject.toml").write_text('[tool.pytest]\naddopts = ["--doctest-modules"]\n')
    assert read_pytest_config(root).addopts == ["--doctest-modules"]
    (root / "pytest.ini").write_text("[pytest]\n")
    assert read_pytest_config(root).where == "pytest.ini"
    (root / "pytest.toml").write_text('[pytest]\naddopts = ["-n", "2"]\n')
    assert read_pytest_config(root).addopts == ["-n", "2"]


def test_test_command_overrides_addopts_and_installs_plugins(tmp_path: Path) -> None:
    root = project(tmp_path, {"pyproject.toml": pyproject(
        '[tool.pytest.ini_options]\naddopts = "--cov=pkg --benchmark-skip --timeout=60 -q"\n'
        'required_plugins = "pytest-randomly>=3"')})
    spec = spec_of(root)
    assert spec.test_command == ("python", "-m", "pytest", "-o", "addopts=", "--timeout=60", "-q",
                                 "--benchmark-disable")
    assert {"pytest-timeout", "pytest-benchmark", "pytest-randomly>=3"} <= set(spec.requirements)
    text = "\n".join(spec.decisions)
    assert "--cov=pkg" in text and "neutralised" in text
    assert "required_plugins: installed pytest-randomly>=3" in text



def test_benchmark_plugin_from_a_test_extra_runs_benchmarks_once(tmp_path: Path) -> None:
    # humanize 4.17.0: pytest-benchmark comes with the project's own `tests` extra (installed
    # as `.[tests]`), not in a requirements list; its benchmarks then ran for a second each,
    # in every run of every covering test, until the extra's requirements counted too.
    root = project(tmp_path, {"pyproject.toml": pyproject(
        '[project.optional-dependencies]\ntests = ["pytest>=8", "pytest-benchmark"]\n')})
    spec = spec_of(root)
    assert spec.project_install == ".[tests]"
    assert spec.test_command[-1] == "--benchmark-disable"
    assert "pytest-benchmark" not in spec.requirements  # the extra installs it
    assert "pytest-benchmark: --benchmark-disable (benchmarks run once, as tests)" in spec.decisions
    plain = project(tmp_path / "plain", {"pyproject.toml": pyproject(
        '[project.optional-dependencies]\ntests = ["pytest>=8"]\n')})
    assert "--benchmark-disable" not in spec_of(plain).test_command

# ------------------------------------------------------------------ layout


def test_layout_facts(tmp_path: Path) -> None:
    root = make_project(tmp_path, {
        "src/ns/pkg/__init__.py": "",
        "src/ns/pkg/core.py": CODE,
        "conftest.py": "",
        "tests/conftest.py": "",
        "tests/unit/conftest.py": "",
        "tests/unit/test_a.py": "import unittest\n\nclass TestA(unittest.TestCase):\n"
                                "    def test_a(self):\n        pass\n",
        "tests/unit/data/sample.json": "{}",
        "tests/test_net.py": "import pytest\n\npytestmark = pytest.mark.online\n\n"
                             "@pytest.mark.network\ndef test_fetch():\n    pass\n",
    })
    layout = read_layout(root)
    assert layout.src_layout and layout.namespace_packages == ["ns"]
    assert layout.conftests == [".", "tests", "tests/unit"]
    assert layout.unittest_files == 1 and layout.data_files == 1
    assert layout.network_markers == {"network": ["tests/test_net.py"],
                                      "online": ["tests/test_net.py"]}
    text = "\n".join(layout.decisions())
    assert "namespace package ns" in text and "3 levels" in text and "network" in text


def test_network_markers_are_deselected_and_stray_tests_py_passed(tmp_path: Path) -> None:
    root = make_project(tmp_path, {
        "mod.py": CODE,
        "tests.py": "import pytest\nfrom mod import double\n\n@pytest.mark.internet\n"
                    "def test_remote():\n    pass\n\ndef test_double():\n    assert double(1) == 2\n",
    })
    spec = spec_of(root)
    assert spec.test_command == ("python", "-m", "pytest", "-m", "(not(internet))", "tests.py")
    assert spec.project_install is None


def test_a_stray_test_py_in_the_tests_directory_is_passed(tmp_path: Path) -> None:
    """decorator's suite is tests/test.py (not a name pytest collects): "no tests found"."""
    root = make_project(tmp_path, {
        "mod.py": CODE,
        "tests/test.py": "from mod import double\n\ndef test_double():\n    assert double(1) == 2\n",
    })
    assert spec_of(root).test_command == ("python", "-m", "pytest", "tests/test.py")


def test_a_tests_py_inside_the_package_is_passed(tmp_path: Path) -> None:
    """zope.event's suite is src/zope/event/tests.py, inside the package: "no tests found"."""
    root = make_project(tmp_path, {
        "src/zope/event/__init__.py": CODE,
        "src/zope/event/tests.py": "import unittest\n\nclass T(unittest.TestCase):\n"
                                   "    def test_it(self):\n        pass\n",
    })
    assert spec_of(root).test_command[-1] == "src/zope/event/tests.py"


# ------------------------------------------------------------------ real environments


def ingest_root(root: Path, cache: Path):
    return ingest(SourceSpec(kind="path", location=str(root)), cache=cache, base_dir=root.parent,
                  sandbox=get_sandbox("none"), repeats=2, timeout=120)


def test_real_suite_with_cov_addopts_network_tests_and_doctests(tmp_path: Path,
                                                                tf_cache: Path) -> None:
    """pytest-cov is not installed: without neutralising `--cov` no test would even run."""
    root = project(tmp_path, {
        "pyproject.toml": pyproject('[tool.pytest.ini_options]\n'
                                    'addopts = "--cov=pkg --cov-report=term-missing -x '
                                    '--doctest-modules"\ntestpaths = ["pkg", "tests"]\n'
                                    'markers = ["network: reaches the internet"]'),
        "pkg/core.py": 'def double(x):\n    """\n    >>> double(3)\n    6\n    """\n'
                       "    return x * 2\n",
        "tests/test_net.py": "import socket\nimport pytest\n\n@pytest.mark.network\n"
                             "def test_download():\n"
                             "    socket.create_connection(('127.0.0.1', 9), timeout=1)\n",
        "tests/conftest.py": "",
        "tests/data/input.txt": "4\n",
        "tests/test_data.py": "from pathlib import Path\nfrom pkg.core import double\n\n"
                              "def test_from_file():\n"
                              "    n = int((Path(__file__).parent / 'data/input.txt').read_text())\n"
                              "    assert double(n) == 8\n",
    })
    src = ingest_root(root, tf_cache)
    assert set(src.baseline.tests) == {"pkg/core.py::pkg.core.double", "tests/test_core.py::test_double",
                                       "tests/test_data.py::test_from_file"}
    assert src.baseline.stable == src.baseline.tests
    assert src.env.pythonpath == (".",)


@pytest.mark.slow
def test_real_suite_with_a_marker_expression_and_bundled_exitfirst(tmp_path: Path,
                                                                   tf_cache: Path) -> None:
    """Before: the source was set aside ("file or directory not found: slow"), and once that
    ran, `-xvs` stopped the baseline at the first failing test, losing every later one."""
    root = project(tmp_path, {
        "pyproject.toml": pyproject('[tool.pytest.ini_options]\n'
                                    'addopts = \'--cov=pkg -m "not slow" -xvs\'\n'
                                    'markers = ["slow: takes long"]'),
        "tests/test_a_first.py": "def test_broken():\n    assert False\n",
        "tests/test_slow.py": "import pytest\n\n@pytest.mark.slow\ndef test_long():\n"
                              "    pass\n",
    })
    src = ingest_root(root, tf_cache)
    assert set(src.baseline.tests) == {"tests/test_a_first.py::test_broken",
                                       "tests/test_core.py::test_double"}
    assert src.baseline.stable == ("tests/test_core.py::test_double",)


@pytest.mark.slow
def test_real_suite_that_marks_its_tests_no_cover_with_warnings_as_errors(
        tmp_path: Path, tf_cache: Path) -> None:
    """python-dateutil: every test marked `no_cover` by the conftest, warnings are errors."""
    root = project(tmp_path, {
        "pyproject.toml": pyproject('[tool.pytest.ini_options]\nfilterwarnings = ["error"]'),
        "requirements-dev.txt": "pytest-cov\n",
        "tests/conftest.py": DATEUTIL_CONFTEST,
    })
    src = ingest_root(root, tf_cache)
    assert src.baseline.stable == ("tests/test_core.py::test_double",)


@pytest.mark.slow
def test_a_conflicting_pinned_requirements_file_names_the_conflict(tmp_path: Path,
                                                                   tf_cache: Path) -> None:
    """Before: "No solution found when resolving dependencies", and no word of which."""
    root = project(tmp_path, {"requirements-test.txt": "pytest==7.0.0\nattrs==19.1.0\n"})
    with pytest.raises(UserError) as caught:
        ingest_root(root, tf_cache)
    message = str(caught.value)
    assert "No solution found" in message
    assert "pytest==7.0.0 depends on attrs>=19.2.0" in message and "attrs==19.1.0" in message


def test_real_namespace_package_in_src_layout(tmp_path: Path, tf_cache: Path) -> None:
    root = make_project(tmp_path, {
        "pyproject.toml": pyproject('[tool.setuptools.packages.find]\nwhere = ["src"]\n'
                                    'namespaces = true'),
        "src/acme/tools/__init__.py": "",
        "src/acme/tools/core.py": CODE,
        "tests/test_tools.py": "from acme.tools.core import double\n\n"
                               "def test_double():\n    assert double(5) == 10\n",
    }, name="acme-tools")
    src = ingest_root(root, tf_cache)
    assert src.env.pythonpath == ("src",)  # the directory holding `acme`, not `acme` itself
    assert src.baseline.stable == ("tests/test_tools.py::test_double",)
    assert any("namespace package acme" in d for d in src.env.spec.decisions)


def test_real_setup_py_only_unittest_suite_in_tests_py(tmp_path: Path, tf_cache: Path) -> None:
    root = make_project(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='mod', version='1.0', "
                    "py_modules=['mod'], python_requires='>=3.6')\n",
        "mod.py": CODE,
        "tests.py": "import unittest\nfrom mod import double\n\n"
                    "class DoubleTest(unittest.TestCase):\n"
                    "    def test_double(self):\n        self.assertEqual(double(4), 8)\n",
    }, name="mod")
    src = ingest_root(root, tf_cache)
    assert src.baseline.stable == ("tests.py::DoubleTest::test_double",)
    assert src.env.spec.project_install == "."


def test_suite_that_needs_the_network_is_rejected_with_that_reason(tmp_path: Path,
                                                                   tf_cache: Path) -> None:
    """The sandbox has no network; a suite failing on name resolution says so in its reason
    (the resolver error is raised here as the socket module raises it, no address is used)."""
    root = project(tmp_path, {"tests/test_core.py": """\
        import socket


        def test_remote_double():
            raise socket.gaierror(-3, "Temporary failure in name resolution")
    """}, name="online")
    with pytest.raises(UserError) as info:
        ingest_root(root, tf_cache)
    assert "no test passes" in str(info.value)
    assert str(info.value).endswith("the suite needs the network, which the sandbox denies")
