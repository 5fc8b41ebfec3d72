"""Find what a project's tests need from its own files, and record every decision.

The rules live beside the files they read: `pythons` (requires-python), `declared` (extras,
dependency groups, requirements files, tox, nox), `pytest_config` (addopts and plugins),
`layout` (src, namespace packages, test files, network markers). This module puts their
answers together into the EnvSpec, and the decisions into its record.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path

from taskforge.languages.python.env.declared import read_declared, requirement_name
from taskforge.languages.python.env.layout import network_exclusion, read_layout
from taskforge.languages.python.env.pytest_config import plan_addopts, read_pytest_config
from taskforge.languages.python.env.pythons import choose_python
from taskforge.languages.python.env.scm import scm_version, version_from_describe
from taskforge.languages.python.testing.runner import split_command
from taskforge.model import EnvSpec, SourceSpec

# What taskforge itself needs inside every environment: the runner and the per-test tracer.
TOOLING = ("pytest", "coverage")
# Linters, type checkers, formatters, docs and release tools: test extras and dev files list
# them, tests do not run them (their pytest plugins are neutralised). Left out unless a test
# imports them: smaller environments, and less unrelated code in them for the leak scan.
NOT_FOR_TESTS = ("mypy", "ruff", "ty", "pyright", "pyrefly", "black", "isort", "flake8",
                 "pylint", "pycodestyle", "pyflakes", "pre-commit", "tox", "nox", "sphinx",
                 "twine", "build", "mkdocs", "codespell", "check-manifest", "pytest-mypy",
                 "pytest-ruff", "pytest-flake8", "pytest-black", "pytest-checkdocs",
                 "pytest-cov", "pytest-xdist", "pytest-codspeed")
# Marks those pytest plugins register: a suite that uses one needs the plugin even when no
# test imports it (python-dateutil's conftest marks tests `no_cover`, and its
# `filterwarnings = error` makes an unknown mark fail collection).
PLUGIN_MARKERS = {"pytest-cov": {"no_cover"}, "pytest-xdist": {"xdist_group"}}
DEFAULT_TEST_COMMAND = "python -m pytest"


def _pyproject(root: Path, decisions: list[str]) -> dict:
    if not (root / "pyproject.toml").is_file():
        return {}
    try:
        return tomllib.loads((root / "pyproject.toml").read_text(errors="replace"))
    except tomllib.TOMLDecodeError as e:
        decisions.append(f"pyproject.toml unreadable ({e}); ignored")
        return {}


def _project_install(root: Path, pyproject: dict, extras: list[str],
                     decisions: list[str]) -> str | None:
    buildable = any((root / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg"))
    if pyproject and "build-system" not in pyproject and "project" not in pyproject \
            and not (root / "setup.py").is_file():
        buildable = False
    if not buildable:
        decisions.append("no build metadata: the project is imported from the workspace only")
        return None
    install = f".[{','.join(extras)}]" if extras else "."
    how = "setup.py only (setuptools)" if (root / "setup.py").is_file() and not pyproject \
        else "pyproject.toml" if pyproject else "setup.cfg"
    decisions.append(f"editable install of the project: {install} ({how})")
    return install


def _test_command(root: Path, source: SourceSpec, requirements: list[str],
                  decisions: list[str], from_extras: Sequence[str] = ()) -> list[str]:
    """The pytest argv: the project's addopts made safe, network tests deselected.
    `requirements` (added to here) are installed on their own, `from_extras` with the project.

    Built as a list of words, never joined and split again: an option's value may hold
    spaces (`-m "not slow"`), and a re-split one becomes a path pytest cannot find."""
    if source.test_command:
        decisions.append(f"test command from the recipe: {source.test_command}")
        return list(split_command(source.test_command))
    config = read_pytest_config(root)
    layout = read_layout(root, config.python_files)
    decisions += layout.decisions()
    _drop_tools(requirements, layout.imports, layout.markers, decisions)
    words = list(split_command(DEFAULT_TEST_COMMAND))
    if config.where:
        decisions.append(f"pytest configuration: {config.where}")
    plan = plan_addopts(config.addopts)
    extra: list[str] = []  # options taskforge adds
    for why in dict.fromkeys(why for _, why in plan.dropped):
        options = " ".join(option for option, reason in plan.dropped if reason == why)
        decisions.append(f"addopts: {options} neutralised ({why})")
    for requirement, option in plan.plugins:
        if requirement_name(requirement) not in {requirement_name(r) for r in requirements}:
            requirements.append(requirement)
            decisions.append(f"addopts: {option} kept; installed {requirement}")
    installed = {requirement_name(r) for r in [*requirements, *from_extras]}
    if any(opt.startswith("--benchmark-") for opt, _ in plan.dropped) or \
            "pytest-benchmark" in installed:
        if "pytest-benchmark" not in installed:
            requirements.append("pytest-benchmark")
            decisions.append("installed pytest-benchmark (the benchmark fixture)")
        extra.append("--benchmark-disable")
        decisions.append("pytest-benchmark: --benchmark-disable (benchmarks run once, as tests)")
    if any(opt.startswith("--doctest") for opt in plan.kept):
        decisions.append("doctests: collected as the configuration asks ("
                         + " ".join(o for o in plan.kept if o.startswith("--doctest")) + ")")
    if plan.override:
        words += ["-o", "addopts=", *plan.kept]
    words += extra
    for plugin in config.required_plugins:
        if requirement_name(plugin) not in {requirement_name(r) for r in requirements}:
            requirements.append(plugin)
            decisions.append(f"required_plugins: installed {plugin}")
    expressions = [e for e in (plan.markexpr, layout.network_markers and
                               network_exclusion(list(layout.network_markers))) if e]
    if len(expressions) == 2:
        decisions.append(f"addopts: -m {plan.markexpr!r} kept, joined with the network "
                         "deselection (a second -m would replace it)")
    if expressions:
        words += ["-m", " and ".join(f"({e})" for e in expressions)
                  if len(expressions) > 1 else expressions[0]]
    words += layout.stray_test_files
    return words


def _drop_tools(requirements: list[str], imported: set[str], markers: set[str],
                decisions: list[str]) -> None:
    """Remove (in place) the NOT_FOR_TESTS requirements no test or conftest imports, nor
    uses a mark of (PLUGIN_MARKERS)."""
    dropped = [r for r in requirements if requirement_name(r) in NOT_FOR_TESTS
               and requirement_name(r).replace("-", "_") not in imported
               and not PLUGIN_MARKERS.get(requirement_name(r), set()) & markers]
    if dropped:
        requirements[:] = [r for r in requirements if r not in dropped]
        decisions.append("left out (tools the tests do not import): "
                         + ", ".join(requirement_name(r) for r in dropped))


def detect_spec(root: Path, source: SourceSpec, describe: str | None = None) -> EnvSpec:
    """How to build and test the project at `root`; `describe` is what `git describe` said
    of a git source's commit (`Snapshot.describe`), for a version the build reads from git."""
    decisions: list[str] = []
    python, why = choose_python(root, source.python, source.describe())
    decisions.append(why)
    pyproject = _pyproject(root, decisions)
    declared = read_declared(root, pyproject, python)
    decisions += declared.decisions
    if not declared.extras and not declared.requirements:
        decisions.append("no test dependencies declared: pytest and coverage only")
    project_install = _project_install(root, pyproject, declared.extras, decisions)
    tagged = version_from_describe(root, describe)
    _version_env, version_decision = scm_version(root, tagged, describe)
    if project_install is not None and version_decision:
        decisions.append(version_decision)
    requirements = list(declared.requirements)
    test_command = _test_command(root, source, requirements, decisions,
                                 declared.extras_requirements if project_install else ())
    if source.install:
        decisions.append("install commands from the recipe")
    return EnvSpec(
        python=python,
        project_install=project_install,
        requirements=tuple(dict.fromkeys([*requirements, *TOOLING])),
        install=tuple(source.install or ()),
        test_command=tuple(test_command),
        decisions=tuple(decisions),
        scm_version=tagged if version_decision else None,
    )
