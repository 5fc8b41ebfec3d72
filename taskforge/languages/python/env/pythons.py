"""Which Python an environment gets: the project's `requires-python` against the interpreters
this machine has (ours, pyenv's, the system's)."""

from __future__ import annotations

import configparser
import os
import re
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from taskforge.errors import UserError

# pytest and coverage, which run inside every environment, need at least this.
OLDEST_USABLE = (3, 9)
_SETUP_PY_REQUIRES = re.compile(r"""python_requires\s*=\s*(['"])([^'"]+)\1""")


def declared_requires_python(root: Path) -> tuple[str, str] | None:
    """The project's requires-python and the file that says it, from the first of:
    pyproject.toml, setup.cfg, setup.py, PKG-INFO."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            value = tomllib.loads(pyproject.read_text(errors="replace")).get("project", {}).get(
                "requires-python")
        except tomllib.TOMLDecodeError:
            value = None
        if isinstance(value, str) and value.strip():
            return value.strip(), "pyproject.toml"
    if (root / "setup.cfg").is_file():
        cfg = configparser.ConfigParser(interpolation=None)
        try:
            cfg.read(root / "setup.cfg")
            if cfg.has_option("options", "python_requires"):
                return cfg.get("options", "python_requires").strip(), "setup.cfg"
        except configparser.Error:
            pass
    if (root / "setup.py").is_file():
        match = _SETUP_PY_REQUIRES.search((root / "setup.py").read_text(errors="replace"))
        if match:
            return match.group(2).strip(), "setup.py"
    if (root / "PKG-INFO").is_file():
        for line in (root / "PKG-INFO").read_text(errors="replace").splitlines():
            if line.startswith("Requires-Python:"):
                return line.split(":", 1)[1].strip(), "PKG-INFO"
    return None


def _version_of(binary: Path) -> str | None:
    try:
        out = subprocess.run([str(binary), "-c", "import platform;print(platform.python_version())"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out or None


@cache
def available_interpreters() -> tuple[tuple[str, str], ...]:
    """(full version, path) of the usable interpreters: ours first, then pyenv's (whose shims
    uv cannot query, so the real binaries), then the system's, newest first."""
    found: dict[str, str] = {}
    ours = ".".join(map(str, sys.version_info[:3]))
    found[ours] = sys.executable
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    for binary in sorted((pyenv_root / "versions").glob("3.*/bin/python3")):
        version = binary.parent.parent.name
        if re.fullmatch(r"3\.\d+\.\d+", version):
            found.setdefault(version, str(binary))
    for directory in ("/usr/bin", "/usr/local/bin"):
        for binary in sorted(Path(directory).glob("python3.*")):
            if re.fullmatch(r"python3\.\d+", binary.name):
                version = _version_of(binary)
                if version:
                    found.setdefault(version, str(binary))
    usable = [(v, p) for v, p in found.items()
              if tuple(Version(v).release[:2]) >= OLDEST_USABLE]
    rest = sorted((item for item in usable if item[0] != ours), key=lambda i: Version(i[0]),
                  reverse=True)
    return tuple([item for item in usable if item[0] == ours] + rest)


def choose_python(root: Path, override: str | None, source: str) -> tuple[str, str]:
    """The `X.Y` version the environment gets and the decision line that explains it.

    Ours when it satisfies requires-python (one interpreter for most snapshots), else the
    newest available that does; none: a UserError naming the requirement and what we have.
    """
    if override:
        return override, f"python {override} from the recipe"
    declared = declared_requires_python(root)
    ours = f"{sys.version_info.major}.{sys.version_info.minor}"
    if declared is None:
        return ours, f"python {ours}: no requires-python declared"
    requirement, where = declared
    try:
        spec = SpecifierSet(requirement)
    except InvalidSpecifier:
        return ours, f"python {ours}: requires-python {requirement!r} ({where}) is unparsable; ignored"
    interpreters = available_interpreters()
    for version, _path in interpreters:
        if spec.contains(version, prereleases=True):
            short = ".".join(version.split(".")[:2])
            return short, f"python {short}: satisfies requires-python {requirement!r} ({where})"
    have = ", ".join(v for v, _ in interpreters) or "none"
    raise UserError(f"{source}: requires-python {requirement!r} ({where}): no interpreter "
                    f"available satisfies it (have {have})")


def interpreter_for(version: str) -> str:
    """What uv should use for `X.Y`: a known binary of that version, else the version itself
    (uv searches for it)."""
    for full, path in available_interpreters():
        if ".".join(full.split(".")[:2]) == version:
            return path
    return version
