"""A version for a build that reads it from git metadata a snapshot does not have.

setuptools-scm, hatch-vcs (which uses setuptools-scm) and pdm-backend (`source = "scm"`) ask
git for the version while the project is built. A snapshot is a tree without `.git`, so a
clone whose project declares no fallback version does not build (an sdist does: the backends
read its PKG-INFO). A git source records what `git describe --tags --long` says of the
ingested commit (`Snapshot.describe`, `sources/git.py`): the tag, read with the project's own
tag pattern, gives the version as setuptools-scm's default scheme would (the tag's version at
the tag; the next patch release's `.devN` N commits later). Without a tag no version is
known, and the build is told 0.0.0. The build is told through
SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<NAME> for setuptools-scm, named for the project so that
dependencies built from source keep their own; hatch-vcs does not pass the name on, so there
the unnamed variable is set (a dependency built from source with setuptools-scm in the same
install would take it too); pdm-backend by PDM_BUILD_SCM_VERSION.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path

from packaging.version import InvalidVersion, Version

from taskforge.languages.python.env.declared import normalized_name, requirement_name

SCM_BACKENDS = {"setuptools-scm", "hatch-vcs"}
PDM_VARIABLE = "PDM_BUILD_SCM_VERSION"
UNKNOWN_VERSION = "0.0.0"
# setuptools-scm's default tag_regex (hatch-vcs and pdm-backend read tags the same way): an
# optional `name-` prefix, an optional `v`, then the version.
DEFAULT_TAG_REGEX = r"^(?:[\w-]+-)?(?P<version>[vV]?\d+(?:\.\d+){0,2}[^\+]*)(?:\+.*)?$"
_DESCRIBE = re.compile(r"^(?P<tag>.+)-(?P<distance>\d+)-g(?P<sha>[0-9a-f]+)$")


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


def _tag_regex(config: dict) -> str:
    """The project's own tag pattern (setuptools-scm, hatch-vcs raw-options or tag-pattern,
    pdm-backend), else setuptools-scm's default."""
    tool = config.get("tool", {})
    hatch = tool.get("hatch", {}).get("version", {})
    hatch = hatch if isinstance(hatch, dict) else {}
    raw = hatch.get("raw-options", {})
    for table, key in ((tool.get("setuptools_scm", {}), "tag_regex"),
                       (raw if isinstance(raw, dict) else {}, "tag_regex"),
                       (hatch, "tag-pattern"), (_pdm_version(config), "tag_regex")):
        if isinstance(table, dict) and isinstance(table.get(key), str):
            return table[key]
    return DEFAULT_TAG_REGEX


def version_from_describe(root: Path, describe: str | None) -> str | None:
    """The version `git describe --tags --long` output (`v1.2.3-0-gabc1234`) gives the project
    at `root`, read with its tag pattern; None when there is no tag or it holds no version.

    At the tag: the tag's version. N commits later: setuptools-scm's default scheme
    (guess-next-dev): the tag's last number bumped, `.devN` (1.2.3 -> 1.2.4.devN, 2.0 ->
    2.1.devN, 2.0rc1 -> 2.0rc2.devN); the `+g<sha>` local part is left out, a resolver does
    not read it and some projects drop it (`local_scheme`)."""
    match = _DESCRIBE.match(describe or "")
    if not match:
        return None
    config = _pyproject(root) if (root / "pyproject.toml").is_file() else {}
    try:
        found = re.search(_tag_regex(config), match["tag"])
    except re.error:
        return None
    if not found:
        return None
    text = found.groupdict().get("version") or (found.group(1) if found.groups() else found[0])
    try:
        version = Version(text)
    except (InvalidVersion, TypeError):
        return None
    distance = int(match["distance"])
    if distance == 0:
        return str(version)
    public = version.public
    if version.is_devrelease:  # a dev tag is the next release already: its own devN
        return f"{public.rsplit('.dev', 1)[0]}.dev{distance}"
    last = re.match(r"(.*?)(\d+)$", public)
    bumped = f"{last[1]}{int(last[2]) + 1}" if last else public
    return f"{bumped}.dev{distance}"


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


def needs_version(root: Path) -> bool:
    """Whether the project at `root` takes its version from git with nothing to fall back on
    (no .git, no PKG-INFO, no fallback version): then only the repository's tags can give it."""
    config = _pyproject(root) if (root / "pyproject.toml").is_file() else {}
    return not ((root / ".git").exists() or (root / "PKG-INFO").is_file()
                or not (_uses_scm(config, root) or _pdm_version(config))
                or _has_fallback(config)) and bool(_project_name(config, root))


def scm_version(root: Path, tagged: str | None = None,
                describe: str | None = None) -> tuple[dict[str, str], str | None]:
    """The environment variables that give the build a version, and the decision line; none
    when the project does not take its version from git or declares a fallback. `tagged` is
    the version the repository's tags gave (`version_from_describe`), else it is 0.0.0;
    `describe` the `git describe` it came from, for the decision line."""
    if not needs_version(root):
        return {}, None
    config = _pyproject(root) if (root / "pyproject.toml").is_file() else {}
    name = _project_name(config, root)
    assert name  # needs_version checked it
    version = tagged or UNKNOWN_VERSION
    # setuptools-scm's own normalisation of the distribution name.
    variable = PDM_VARIABLE if _pdm_version(config) else \
        "SETUPTOOLS_SCM_PRETEND_VERSION" if _uses_hatch_vcs(config) else \
        "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_" + normalized_name(name).replace("-", "_").upper()
    if tagged:
        return {variable: version}, (
            f"version from git metadata (setuptools-scm/hatch-vcs/pdm): the snapshot has no "
            f".git; the repository's tags give {version} (git describe: {describe}); the "
            f"build gets it ({variable})")
    return {variable: version}, (f"version from git metadata (setuptools-scm/hatch-vcs/pdm): the "
                                 f"snapshot has none, no tag of its repository gives one and "
                                 f"the project no fallback; the build "
                                 f"gets {version} ({variable})")
