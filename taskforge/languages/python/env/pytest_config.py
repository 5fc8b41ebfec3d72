"""The project's pytest configuration, and what taskforge must change about it.

pytest reads its `addopts` before anything else, so an option whose plugin is missing stops
every run ("unrecognized arguments"), and some options defeat the baseline (a second
coverage tracer, xdist workers, stop at first failure, reruns that hide flaky tests). Each
such option is either served (its plugin installed) or neutralised (the ini value is
overridden with `-o addopts=` and the kept options are passed again), and each choice is
recorded.
"""

from __future__ import annotations

import configparser
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# (option prefix, whether a separate value may follow, why it is dropped)
_DROPPED: tuple[tuple[str, bool, str], ...] = (
    ("--cov", True, "pytest-cov: taskforge records coverage itself and two tracers conflict"),
    ("--cov-", True, "pytest-cov: taskforge records coverage itself and two tracers conflict"),
    ("--no-cov", False, "pytest-cov: taskforge records coverage itself"),
    ("--no-cov-", False, "pytest-cov: taskforge records coverage itself"),
    ("-n", True, "pytest-xdist: per-test coverage and the reverse-order run need one process"),
    ("--numprocesses", True, "pytest-xdist: the baseline runs in one process"),
    ("--maxprocesses", True, "pytest-xdist: the baseline runs in one process"),
    ("--dist", True, "pytest-xdist: the baseline runs in one process"),
    ("--benchmark-", True, "pytest-benchmark: benchmarks run once, as tests (--benchmark-disable)"),
    ("-x", False, "the baseline runs every test"),
    ("--exitfirst", False, "the baseline runs every test"),
    ("--maxfail", True, "the baseline runs every test"),
    ("--sw", False, "the baseline runs every test"),
    ("--stepwise", False, "the baseline runs every test"),
    ("--lf", False, "the baseline runs every test"),
    ("--last-failed", False, "the baseline runs every test"),
    ("--ff", False, "the baseline runs every test in a fixed order"),
    ("--failed-first", False, "the baseline runs every test in a fixed order"),
    ("--nf", False, "the baseline runs every test in a fixed order"),
    ("--reruns", True, "pytest-rerunfailures: reruns would hide flaky tests"),
    ("--only-rerun", True, "pytest-rerunfailures: reruns would hide flaky tests"),
    ("--junitxml", True, "taskforge writes its own JUnit XML"),
    ("--junit-xml", True, "taskforge writes its own JUnit XML"),
    ("--html", True, "report plugins are not needed"),
    ("--flake8", False, "a linter's checks are not tests"),
    ("--mypy", False, "a type checker's checks are not tests"),
    ("--ruff", False, "a linter's checks are not tests"),
    ("--black", False, "a formatter's checks are not tests"),
    ("--isort", False, "a linter's checks are not tests"),
    ("--pylint", False, "a linter's checks are not tests"),
    ("--pycodestyle", False, "a linter's checks are not tests"),
    ("--checkdocs", False, "a packaging check is not a test"),
)
# `-p NAME` loads of the plugins whose options are dropped above (propcache's `-p pytest_cov`:
# "Error importing plugin pytest_cov" and no test ran when pytest-cov is not installed).
_DROPPED_PLUGINS = {"pytest_cov": "pytest-cov: taskforge records coverage itself",
                    "xdist": "pytest-xdist: the baseline runs in one process",
                    "xdist.plugin": "pytest-xdist: the baseline runs in one process",
                    "pytest_rerunfailures": "pytest-rerunfailures: reruns would hide flaky tests"}
# Options that are kept, with the plugin that must be installed for pytest to know them.
_SERVED: tuple[tuple[str, str], ...] = (
    ("--timeout", "pytest-timeout"),
    ("--asyncio-mode", "pytest-asyncio"),
    ("--hypothesis-", "hypothesis"),
    ("--mock-use-standalone-module", "pytest-mock"),
    ("--randomly-", "pytest-randomly"),
)
# Short options with their value glued on (`-nauto`, `-n4`).
_GLUED = ("-n",)
# pytest's short flags without a value, and those whose value may follow in the same word:
# `-xvs` is `-x -v -s`, `-vrA` is `-v -rA`. Unbundled so `-x` is seen and neutralised.
_SHORT_FLAGS = frozenset("xvqslh")
_SHORT_WITH_VALUE = frozenset("kmprcnoW")


@dataclass
class PytestConfig:
    """What the project's ini file says, as far as taskforge acts on it."""

    where: str | None = None  # the file pytest would read, None: no configuration
    addopts: list[str] = field(default_factory=list)
    markers: list[str] = field(default_factory=list)
    required_plugins: list[str] = field(default_factory=list)
    python_files: list[str] = field(default_factory=list)
    testpaths: list[str] = field(default_factory=list)


@dataclass
class AddoptsPlan:
    """What the test command does about the configured addopts."""

    kept: list[str]
    dropped: list[tuple[str, str]]  # (option, why)
    plugins: list[tuple[str, str]]  # (requirement, the option that needs it)
    # The configured `-m` expression, taken out of `kept`: a second `-m` on the command line
    # (the network deselection) would replace it, so the test command joins the two.
    markexpr: str | None = None

    @property
    def override(self) -> bool:
        return bool(self.dropped) or self.markexpr is not None


def _as_list(value: object, split: bool) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        return shlex.split(value) if split else [ln.strip() for ln in value.splitlines()
                                                 if ln.strip()]
    return []


def _from_table(table: dict, where: str) -> PytestConfig:
    def words(key: str) -> list[str]:
        value = table.get(key)
        return value if isinstance(value, list) else str(value or "").split()

    return PytestConfig(where=where, addopts=_as_list(table.get("addopts"), split=True),
                        markers=_as_list(table.get("markers"), split=False),
                        required_plugins=words("required_plugins"),
                        python_files=words("python_files"), testpaths=words("testpaths"))


def read_pytest_config(root: Path) -> PytestConfig:
    """The configuration pytest itself would pick: pytest.toml, .pytest.toml (pytest 9),
    pytest.ini, .pytest.ini, pyproject.toml, tox.ini, setup.cfg, the first that holds a
    pytest section."""
    for name in ("pytest.toml", ".pytest.toml"):
        if (root / name).is_file():
            try:
                table = tomllib.loads((root / name).read_text(errors="replace")).get("pytest", {})
            except tomllib.TOMLDecodeError:
                table = {}
            return _from_table(table if isinstance(table, dict) else {}, f"{name} [pytest]")
    for name in ("pytest.ini", ".pytest.ini"):
        if (root / name).is_file():
            return _ini_section(root / name, "pytest", name) or PytestConfig(where=name)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            tool = tomllib.loads(pyproject.read_text(errors="replace")).get("tool", {})
        except tomllib.TOMLDecodeError:
            tool = {}
        pytest_table = tool.get("pytest")
        if isinstance(pytest_table, dict):
            if isinstance(pytest_table.get("ini_options"), dict):
                return _from_table(pytest_table["ini_options"],
                                   "pyproject.toml [tool.pytest.ini_options]")
            return _from_table(pytest_table, "pyproject.toml [tool.pytest]")
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        if (root / name).is_file():
            found = _ini_section(root / name, section, f"{name} [{section}]")
            if found:
                return found
    return PytestConfig()


def _ini_section(path: Path, section: str, where: str) -> PytestConfig | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path)
    except configparser.Error:
        return None
    if not parser.has_section(section):
        return None
    return _from_table(dict(parser.items(section)), where)


def _rule(token: str) -> tuple[str, bool, str] | None:
    for prefix, takes_value, why in _DROPPED:
        if token == prefix or (token.startswith(prefix) and (
                prefix.endswith("-") or token[len(prefix)] == "=" or prefix in _GLUED)):
            return prefix, takes_value, why
    return None


def unbundle(token: str) -> list[str]:
    """`-xvs` as `-x -v -s` and `-vrA` as `-v -rA`; any other word unchanged (an unknown
    letter keeps the word whole: it is not pytest's, so it is not split on a guess)."""
    if len(token) < 3 or token[0] != "-" or token[1] == "-" or token[1] not in _SHORT_FLAGS:
        return [token]
    out: list[str] = []
    for i, letter in enumerate(token[1:], start=1):
        if letter in _SHORT_WITH_VALUE:
            return [*out, f"-{token[i:]}"]
        if letter not in _SHORT_FLAGS:
            return [token]
        out.append(f"-{letter}")
    return out


def plan_addopts(addopts: list[str]) -> AddoptsPlan:
    """Split the configured addopts into kept options, neutralised ones and plugins to install."""
    kept: list[str] = []
    dropped: list[tuple[str, str]] = []
    plugins: list[tuple[str, str]] = []
    markexpr: str | None = None
    tokens = [word for token in addopts for word in unbundle(token)]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "-m" and i + 1 < len(tokens):
            markexpr, i = tokens[i + 1], i + 2
            continue
        if token.startswith("-m") and token[2:3] not in ("", "-"):
            markexpr, i = token[2:].removeprefix("="), i + 1
            continue
        plugin = tokens[i + 1] if token == "-p" and i + 1 < len(tokens) else \
            token[2:] if token.startswith("-p") and token[2:3] not in ("", "-") else None
        if plugin in _DROPPED_PLUGINS:
            dropped.append((f"-p {plugin}", _DROPPED_PLUGINS[plugin]))
            i += 2 if token == "-p" else 1
            continue
        rule = _rule(token)
        if rule:
            prefix, takes_value, why = rule
            shown = token
            joined = "=" in token or (prefix in _GLUED and token != prefix)
            if takes_value and not joined and i + 1 < len(tokens) \
                    and not tokens[i + 1].startswith("-"):
                i += 1
                shown = f"{token} {tokens[i]}"
            dropped.append((shown, why))
        else:
            kept.append(token)
            for prefix, requirement in _SERVED:
                if token.startswith(prefix) and (requirement, token) not in plugins:
                    plugins.append((requirement, token.split("=", 1)[0]))
        i += 1
    return AddoptsPlan(kept=kept, dropped=dropped, plugins=plugins, markexpr=markexpr)
