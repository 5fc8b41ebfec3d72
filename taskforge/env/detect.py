"""Find what a project's tests need from its own metadata, and record every decision."""

from __future__ import annotations

import configparser
import re
import sys
import tomllib
from pathlib import Path

from taskforge.model import EnvSpec, SourceSpec
from taskforge.testing.runner import split_command

TEST_GROUPS = ("test", "tests", "testing")
FALLBACK_GROUPS = ("dev",)
# What taskforge itself needs inside every environment: the runner and the per-test tracer.
TOOLING = ("pytest", "coverage")
DEFAULT_TEST_COMMAND = "python -m pytest"


def _pick(names: list[str]) -> list[str]:
    """The test-ish names present: test/tests/testing, else dev."""
    chosen = [n for n in names if n.lower() in TEST_GROUPS]
    return chosen or [n for n in names if n.lower() in FALLBACK_GROUPS]


def _requirement_lines(path: Path, seen: set[Path]) -> list[str]:
    """Requirement strings of a requirements file, following `-r` includes."""
    if path in seen or not path.is_file():
        return []
    seen.add(path)
    out: list[str] = []
    for raw in path.read_text(errors="replace").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ")):
            out += _requirement_lines(path.parent / line.split(None, 1)[1], seen)
        elif line.startswith("-") or line.startswith((".", "/")) or "://" in line:
            continue  # options, local paths and URLs are not portable requirements
        else:
            out.append(line)
    return out


def _dependency_group(groups: dict, name: str, depth: int = 0) -> list[str]:
    out: list[str] = []
    for item in groups.get(name, []):
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and "include-group" in item and depth < 10:
            out += _dependency_group(groups, item["include-group"], depth + 1)
    return out


def _tox_deps(path: Path) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path)
    except configparser.Error:
        return []
    if not parser.has_option("testenv", "deps"):
        return []
    out: list[str] = []
    for line in parser.get("testenv", "deps").splitlines():
        line = line.strip()
        if not line or "{" in line or line.startswith("#"):
            continue
        if line.startswith("-r"):
            out += _requirement_lines(path.parent / line[2:].strip(), set())
        elif not line.startswith(("-", ".")):
            out.append(line)
    return out


def detect_spec(root: Path, source: SourceSpec) -> EnvSpec:
    decisions: list[str] = []
    extras: list[str] = []
    requirements: list[str] = []
    pyproject: dict = {}
    if (root / "pyproject.toml").is_file():
        try:
            pyproject = tomllib.loads((root / "pyproject.toml").read_text(errors="replace"))
        except tomllib.TOMLDecodeError as e:
            decisions.append(f"pyproject.toml unreadable ({e}); ignored")
    project = pyproject.get("project", {})
    optional = project.get("optional-dependencies", {}) or {}
    if optional:
        extras += _pick(sorted(optional))
    if (root / "setup.cfg").is_file():
        cfg = configparser.ConfigParser(interpolation=None)
        try:
            cfg.read(root / "setup.cfg")
            if cfg.has_section("options.extras_require"):
                extras += [e for e in _pick(cfg.options("options.extras_require"))
                           if e not in extras]
        except configparser.Error:
            decisions.append("setup.cfg unreadable; ignored")
    if extras:
        decisions.append(f"test extras from package metadata: {', '.join(extras)}")
    groups = pyproject.get("dependency-groups", {}) or {}
    for name in _pick(sorted(groups)):
        requirements += _dependency_group(groups, name)
        decisions.append(f"dependency group {name!r}")
    candidates = sorted(root.glob("requirements*.txt")) + sorted(root.glob("requirements/*.txt"))
    candidates += sorted(root.glob("test*requirements*.txt")) + sorted(root.glob("dev*requirements*.txt"))
    req_files = [p for p in dict.fromkeys(candidates) if re.search(r"test", p.name)]
    req_files = req_files or [p for p in dict.fromkeys(candidates) if re.search(r"dev", p.name)]
    for path in req_files:
        requirements += _requirement_lines(path, set())
        decisions.append(f"requirements file {path.relative_to(root)}")
    if not extras and not groups and not req_files and (root / "tox.ini").is_file():
        tox = _tox_deps(root / "tox.ini")
        if tox:
            requirements += tox
            decisions.append("tox.ini [testenv] deps")
    buildable = any((root / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg"))
    if pyproject and "build-system" not in pyproject and "project" not in pyproject \
            and not (root / "setup.py").is_file():
        buildable = False
    project_install = None
    if buildable:
        project_install = f".[{','.join(extras)}]" if extras else "."
        decisions.append(f"editable install of the project: {project_install}")
    else:
        decisions.append("no build metadata: the project is imported from the workspace only")
    python = source.python or f"{sys.version_info.major}.{sys.version_info.minor}"
    test_command = source.test_command or DEFAULT_TEST_COMMAND
    if source.test_command:
        decisions.append(f"test command from the recipe: {source.test_command}")
    if source.install:
        decisions.append("install commands from the recipe")
    return EnvSpec(
        python=python,
        project_install=project_install,
        requirements=tuple(dict.fromkeys([*requirements, *TOOLING])),
        install=tuple(source.install or ()),
        test_command=split_command(test_command),
        decisions=tuple(decisions),
    )
