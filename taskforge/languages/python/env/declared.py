"""What a project declares its tests need: extras, PEP 735 groups, requirements files, tox and
nox deps, read from its own files (never executed). Every finding comes with a decision line."""

from __future__ import annotations

import ast
import configparser
import re
from dataclasses import dataclass, field
from pathlib import Path

TEST_NAMES = ("test", "tests", "testing")
FALLBACK_NAMES = ("dev",)
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass
class Declared:
    extras: list[str] = field(default_factory=list)  # extras of the project to install
    # what those extras bring (installed with the project, not as requirements)
    extras_requirements: list[str] = field(default_factory=list)
    requirements: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)

    def add_requirements(self, items: list[str], decision: str) -> None:
        new = [r for r in items if r not in self.requirements]
        self.requirements += new
        shown = ", ".join(new[:6]) + (f" (+{len(new) - 6} more)" if len(new) > 6 else "")
        self.decisions.append(f"{decision}: {shown or 'nothing new'}")


def normalized_name(name: str) -> str:
    """A package, extra or dependency-group name as the standards compare them (PEP 503,
    PEP 685, PEP 735): `Lint`, `lint_` and `LINT.` are one name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    match = _REQUIREMENT_NAME.match(requirement)
    return normalized_name(match.group(1)) if match else ""


def pick_test_sets(sets: dict[str, list[str]]) -> tuple[list[str], str]:
    """The names of the test-ish sets (extras or groups) and why: named test/tests/testing,
    else the ones requiring pytest, else dev."""
    named = [n for n in sorted(sets) if n.lower() in TEST_NAMES]
    if named:
        return named, "named for tests"
    with_pytest = [n for n in sorted(sets)
                   if any(requirement_name(r) == "pytest" for r in sets[n] if isinstance(r, str))]
    if with_pytest:
        return with_pytest, "requires pytest"
    return [n for n in sorted(sets) if n.lower() in FALLBACK_NAMES], "named dev"


def requirement_lines(path: Path, seen: set[Path] | None = None) -> list[str]:
    """Requirement strings of a requirements file, following `-r` includes."""
    seen = set() if seen is None else seen
    if path in seen or not path.is_file():
        return []
    seen.add(path)
    out: list[str] = []
    for raw in path.read_text(errors="replace").splitlines():
        line = raw.split(" #", 1)[0].strip().rstrip("\\").strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ", "-r")) and not line.startswith("-r-"):
            target = line.split(None, 1)[1] if " " in line else line[2:]
            out += requirement_lines(path.parent / target.strip(), seen)
        elif line.startswith("-") or line.startswith((".", "/")) or "://" in line:
            continue  # options, local paths and URLs are not portable requirements
        else:
            out.append(line)
    return out


def _dependency_group(groups: dict, name: str, depth: int = 0) -> list[str]:
    """The requirements of a PEP 735 group of `groups` (keys normalised), with its includes."""
    out: list[str] = []
    for item in groups.get(normalized_name(name), []):
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and "include-group" in item and depth < 10:
            out += _dependency_group(groups, str(item["include-group"]), depth + 1)
    return out


def _setup_py_extras(path: Path) -> dict[str, list[str]]:
    """`extras_require` of a setup.py, when it is a literal (or a name bound to one)."""
    try:
        tree = ast.parse(path.read_text(errors="replace"))
    except SyntaxError:
        return {}
    bound: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            bound[node.targets[0].id] = node.value
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg != "extras_require":
                continue
            value = keyword.value
            if isinstance(value, ast.Name):
                value = bound.get(value.id, value)
            try:
                extras = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                return {}
            if isinstance(extras, dict):
                return {str(k): [v] if isinstance(v, str) else list(v) for k, v in extras.items()}
    return {}


def _setup_cfg_extras(path: Path) -> dict[str, list[str]] | None:
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(path)
    except configparser.Error:
        return None
    if not cfg.has_section("options.extras_require"):
        return {}
    return {name: [ln.strip() for ln in value.splitlines() if ln.strip()]
            for name, value in cfg.items("options.extras_require")}


_TEST_FACTOR = re.compile(r"(unit|integration)?tests?|testing|test_?\w*")


def _strip_factor(line: str) -> str | None:
    """`py311,tests: pytest` -> `pytest`; None for a line that only other environments get
    (`mypy: mypy`): a factor condition counts when it names tests or a Python version. A
    factor that only mentions a test tool is another environment's (pluggy's
    `pytestmain: git+https://...pytest.git@main`, pytest's development branch)."""
    head, sep, tail = line.partition(":")
    if sep and re.fullmatch(r"[\w.,!-]+", head.strip()) and not tail.startswith(("/", "=")):
        factors = re.split(r"[,-]", head.strip().lstrip("!"))
        if any(_TEST_FACTOR.fullmatch(f.lower()) or re.fullmatch(r"py\d*", f) for f in factors):
            return tail.strip()
        return None
    return line


def _tox_values(parser: configparser.ConfigParser, key: str) -> list[str]:
    if not parser.has_option("testenv", key):
        return []
    out = []
    text = parser.get("testenv", key)
    # extras and groups are lists ("a, b"); a dependency is one a line, and its commas
    # separate version clauses (zope.interface's "setuptools >= 78.1.1,< 82": before, "< 82"
    # became a requirement of its own and uv could not parse it)
    lines = text.splitlines() if key == "deps" else text.replace(",", "\n").splitlines()
    for line in lines:
        line = _strip_factor(line.strip()) or ""
        if line and "{" not in line and not line.startswith("#"):
            out.append(line)
    return out


def _noxfile_installs(path: Path) -> list[str]:
    """Arguments of `session.install(...)` in nox sessions whose name mentions tests."""
    try:
        tree = ast.parse(path.read_text(errors="replace"))
    except SyntaxError:
        return []
    out: list[str] = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef) or "test" not in func.name.lower():
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "install":
                out += [a.value for a in node.args
                        if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return out


def _requirement_files(root: Path) -> list[Path]:
    """Requirements files that name tests, else ones that name dev."""
    patterns = ("requirements*.txt", "requirements/*.txt", "*requirements*.txt", "*-requirements.txt",
                "tests/requirements*.txt", "test/requirements*.txt", "requirements*/*.txt")
    found = sorted({p for pattern in patterns for p in root.glob(pattern) if p.is_file()})
    tests = [p for p in found if "test" in p.relative_to(root).as_posix().lower()]
    return tests or [p for p in found if "dev" in p.name.lower()]


def read_declared(root: Path, pyproject: dict, python: str | None = None) -> Declared:
    """Test dependencies declared in `root`; `python` (X.Y) picks tox's CI environments."""
    found = Declared()
    extras_sets: dict[str, list[str]] = dict(pyproject.get("project", {}).get(
        "optional-dependencies", {}) or {})
    where = "pyproject.toml"
    if not extras_sets and (root / "setup.cfg").is_file():
        cfg_extras = _setup_cfg_extras(root / "setup.cfg")
        if cfg_extras is None:
            found.decisions.append("setup.cfg unreadable; ignored")
        elif cfg_extras:
            extras_sets, where = cfg_extras, "setup.cfg"
    if not extras_sets and (root / "setup.py").is_file():
        extras_sets, where = _setup_py_extras(root / "setup.py"), "setup.py"
    if extras_sets:
        names, why = pick_test_sets(extras_sets)
        if names and why == "requires pytest":
            # A grab-bag extra (`all`): its requirements one by one, so the tools in it can be
            # left out like any other; a reference to the project itself is not one of them.
            own = requirement_name(str(pyproject.get("project", {}).get("name", "")))
            for name in names:
                found.add_requirements(
                    [r for r in extras_sets[name] if isinstance(r, str)
                     and requirement_name(r) != own],
                    f"extra [{name}] from {where} ({why}), its requirements")
        elif names:
            found.extras += names
            # those sure to be installed: a marker may leave one out on this Python
            found.extras_requirements += [r for name in names for r in extras_sets[name]
                                          if isinstance(r, str) and ";" not in r]
            found.decisions.append(f"test extras [{','.join(names)}] from {where} ({why})")
    raw_groups = pyproject.get("dependency-groups", {}) or {}
    # PEP 735 compares group names normalised: `include-group = "Lint"` names `lint`.
    groups = {normalized_name(str(n)): v for n, v in raw_groups.items()} \
        if isinstance(raw_groups, dict) else {}
    if groups:
        names, why = pick_test_sets({n: _dependency_group(groups, n) for n in groups})
        for name in names:
            found.add_requirements(_dependency_group(groups, name),
                                   f"dependency group {name!r} (PEP 735, {why})")
    for path in _requirement_files(root):
        found.add_requirements(requirement_lines(path),
                               f"requirements file {path.relative_to(root).as_posix()}")
    _read_tox(root, found, extras_sets, groups, python)
    if (root / "noxfile.py").is_file():
        _read_nox(root, found, extras_sets)
    return found


def _tox_ci_envs(parser: configparser.ConfigParser, python: str | None) -> list[str]:
    """The tox environments the project's CI runs on `python`, from the tox-gh ([gh]) or
    tox-gh-actions ([gh-actions]) mapping: `3.11: py311-extra`."""
    for section in ("gh", "gh-actions"):
        if python and parser.has_option(section, "python"):
            for line in parser.get(section, "python").splitlines():
                version, _, envs = line.partition(":")
                if version.strip() == python:
                    return [e.strip() for e in re.split(r"[,\s]+", envs) if e.strip()]
    return []


def _read_tox(root: Path, found: Declared, extras_sets: dict, groups: dict,
              python: str | None) -> None:
    if not (root / "tox.ini").is_file():
        return
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(root / "tox.ini")
    except configparser.Error:
        found.decisions.append("tox.ini unreadable; ignored")
        return
    deps: list[str] = []
    for line in _tox_values(parser, "deps"):
        if line.startswith("-r"):
            deps += requirement_lines(root / line[2:].strip())
        elif not line.startswith(("-", ".")):
            deps.append(line)
    if deps:
        found.add_requirements(deps, "tox.ini [testenv] deps")
    for env in _tox_ci_envs(parser, python):
        section = f"testenv:{env}"
        if parser.has_option(section, "deps"):
            env_deps = [ln.strip() for ln in parser.get(section, "deps").splitlines()
                        if ln.strip() and not ln.strip().startswith(("-", ".", "#", "{"))]
            found.add_requirements(env_deps, f"tox.ini [{section}] deps (the environment its CI "
                                             f"runs on Python {python})")
    # tox's extras and groups fill in only where the metadata named none for tests: tox
    # environments also install linters and coverage plugins that would change the run.
    extras = [e for e in _tox_values(parser, "extras") if e in extras_sets and not found.extras]
    if extras:
        found.extras += extras
        found.decisions.append(f"test extras [{','.join(extras)}] from tox.ini [testenv] extras")
    chose_group = any("dependency group" in d for d in found.decisions)
    for name in _tox_values(parser, "dependency_groups"):
        if normalized_name(name) in groups and not chose_group:
            found.add_requirements(_dependency_group(groups, name),
                                   f"dependency group {name!r} from tox.ini [testenv]")


def _read_nox(root: Path, found: Declared, extras_sets: dict) -> None:
    args = _noxfile_installs(root / "noxfile.py")
    requirements: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-r", "--requirement") and i + 1 < len(args):
            requirements += requirement_lines(root / args[i + 1])
            i += 1
        elif arg.startswith(".[") and arg.endswith("]"):
            extras = [e.strip() for e in arg[2:-1].split(",")
                      if e.strip() in extras_sets and e.strip() not in found.extras]
            if extras:
                found.extras += extras
                found.decisions.append(f"test extras [{','.join(extras)}] from noxfile.py")
        elif not arg.startswith(("-", ".", "/")):
            requirements.append(arg)
        i += 1
    if requirements:
        found.add_requirements(requirements, "noxfile.py session.install in test sessions")
