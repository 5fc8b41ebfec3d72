"""A version for a build that reads it from git metadata a snapshot does not have.

setuptools-scm, hatch-vcs (which uses setuptools-scm) and pdm-backend (`source = "scm"`) ask
git for the version while the project is built. A snapshot is a tree without `.git`, so a
clone whose project declares no fallback version does not build (an sdist does: the backends
read its PKG-INFO). No version is known, so the build is told 0.0.0: setuptools-scm by
SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<NAME>, named for the project so that dependencies built
from source keep their own; hatch-vcs does not pass the name on, so there the unnamed
variable is set (a dependency built from source with setuptools-scm in the same install
would take it too); pdm-backend by PDM_BUILD_SCM_VERSION.
"""

from __future__ import annotations

import configparser
import tomllib
from pathlib import Path

from taskforge.languages.python.env.declared import normalized_name, requirement_name

SCM_BACKENDS = {"setuptools-scm", "hatch-vcs"}
PDM_VARIABLE = "PDM_BUILD_SCM_VERSION"
UNKNOWN_VERSION = "0.0.0"


def _pyproject(root: Path) -> dict:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text(errors="replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _requires(config: dict) -> set[str]:
    return {requirement_name(str(r)) for r in config.get("build-system", {}).get("requires", [])}


def _uses_hatch_vcs(config: dict) -> bool:
    hatch_version = config.get("tool", {}).get("hatch", {}).get("version", {})
    return "hatch-vcs" in _requires(config) or \
        (isinstance(hatch_version, dict) and hatch_version.get("source") == "vcs")


def _pdm_version(config: dict) -> dict:
    """pdm-backend's [tool.pdm.version] table when it takes the version from git, else {}."""
    table = config.get("tool", {}).get("pdm", {}).get("version", {})
    return table if isinstance(table, dict) and table.get("source") == "scm" else {}


def _uses_scm(config: dict, root: Path) -> bool:
    if _requires(config) & SCM_BACKENDS or _uses_hatch_vcs(config) \
            or "setuptools_scm" in config.get("tool", {}):
        return True
    setup_py = root / "setup.py"
    return setup_py.is_file() and "use_scm_version" in setup_py.read_text(errors="replace")


def _has_fallback(config: dict) -> bool:
    tool = config.get("tool", {})
    hatch_version = tool.get("hatch", {}).get("version", {})
    raw = hatch_version.get("raw-options", {}) if isinstance(hatch_version, dict) else {}
    return any(isinstance(table, dict) and ("fallback_version" in table
                                            or "fallback-version" in table)
               for table in (tool.get("setuptools_scm", {}), hatch_version, raw,
                             _pdm_version(config)))


def _project_name(config: dict, root: Path) -> str | None:
    name = config.get("project", {}).get("name")
    if isinstance(name, str) and name:
        return name
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(root / "setup.cfg")
        return parser.get("metadata", "name", fallback=None)
    except configparser.Error:
        return None


def scm_version(root: Path) -> tuple[dict[str, str], str | None]:
    """The environment variables that give the build a version, and the decision line; none
    when the project does not take its version from git or declares a fallback."""
    config = _pyproject(root) if (root / "pyproject.toml").is_file() else {}
    if (root / ".git").exists() or (root / "PKG-INFO").is_file() \
            or not (_uses_scm(config, root) or _pdm_version(config)) or _has_fallback(config):
        return {}, None
    name = _project_name(config, root)
    if not name:
        return {}, None
    version = UNKNOWN_VERSION
    # setuptools-scm's own normalisation of the distribution name.
    variable = PDM_VARIABLE if _pdm_version(config) else \
        "SETUPTOOLS_SCM_PRETEND_VERSION" if _uses_hatch_vcs(config) else \
        "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_" + normalized_name(name).replace("-", "_").upper()
    return {variable: version}, (f"version from git metadata (setuptools-scm/hatch-vcs/pdm): the "
                                 f"snapshot has none and the project no fallback; the build "
                                 f"gets {version} ({variable})")
