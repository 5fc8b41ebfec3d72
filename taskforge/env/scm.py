"""A version for a build that reads it from git metadata a snapshot does not have.

setuptools-scm and hatch-vcs (which uses setuptools-scm) ask git for the version while the
project is built. A snapshot is a tree without `.git`, so a clone whose project declares no
fallback version does not build. setuptools-scm reads a version for one distribution from
SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<NAME>: the version its PKG-INFO declares (an sdist), else
0.0.0. Named for the project only, so dependencies built from source keep their own; hatch-vcs
does not tell setuptools-scm the distribution's name, so there the unnamed variable is set
(a dependency built from source with setuptools-scm in the same install would take it too).
pdm-backend's `source = "scm"` reads PDM_BUILD_SCM_VERSION.
"""

from __future__ import annotations

import configparser
import tomllib
from pathlib import Path

from taskforge.env.declared import normalized_name, requirement_name
from taskforge.sources.generated import declared_version

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
    if (root / ".git").exists() or not (_uses_scm(config, root) or _pdm_version(config)) \
            or _has_fallback(config):
        return {}, None
    name = _project_name(config, root)
    if not name:
        return {}, None
    version = declared_version(root) or UNKNOWN_VERSION
    # setuptools-scm's own normalisation of the distribution name.
    variable = PDM_VARIABLE if _pdm_version(config) else \
        "SETUPTOOLS_SCM_PRETEND_VERSION" if _uses_hatch_vcs(config) else \
        "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_" + normalized_name(name).replace("-", "_").upper()
    where = "PKG-INFO" if version != UNKNOWN_VERSION else "no git metadata and no fallback"
    return {variable: version}, (f"version from git metadata (setuptools-scm/hatch-vcs/pdm): the "
                                 f"snapshot has none; the build gets {version} ({where}, "
                                 f"{variable})")
