"""Files a build writes into the source tree, restored in an unpacked sdist.

hatch-vcs and setuptools-scm write the version module (`version-file`, `write_to`) while the
project is built; some sdists leave it out. Tests import the project from the workspace, not
from the built copy, so the module must be in the snapshot: it is written from the version
the sdist's PKG-INFO declares, with the project's own template when it names one.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

_DEFAULT_TEMPLATE = (
    "# written by taskforge from PKG-INFO: the build writes this file, the sdist left it out\n"
    "__version__ = version = {version!r}\n"
    "__version_tuple__ = version_tuple = {version_tuple!r}\n"
    "__commit_id__ = commit_id = None\n"
)


def version_files(pyproject: dict) -> list[tuple[str, str | None]]:
    """(path, template) of every version file the build backends' configuration names."""
    tool = pyproject.get("tool", {})
    found = []
    vcs_hook = tool.get("hatch", {}).get("build", {}).get("hooks", {}).get("vcs", {})
    if isinstance(vcs_hook, dict) and isinstance(vcs_hook.get("version-file"), str):
        found.append((vcs_hook["version-file"], vcs_hook.get("template")))
    scm = tool.get("setuptools_scm", {})
    if isinstance(scm, dict):
        for key, template_key in (("version_file", "version_file_template"),
                                  ("write_to", "write_to_template")):
            if isinstance(scm.get(key), str):
                found.append((scm[key], scm.get(template_key)))
                break
    return found


def _declared_version(root: Path) -> str | None:
    pkg_info = root / "PKG-INFO"
    if not pkg_info.is_file():
        return None
    for line in pkg_info.read_text(errors="replace").splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip() or None
    return None


def restore_version_files(root: Path) -> list[str]:
    """Write the missing version files of an unpacked sdist at `root`; return one note each."""
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return []
    try:
        config = tomllib.loads(pyproject.read_text(errors="replace"))
    except tomllib.TOMLDecodeError:
        return []
    version = _declared_version(root)
    notes = []
    for rel, template in version_files(config):
        target = root / rel
        if version is None or target.exists() or ".." in Path(rel).parts or Path(rel).is_absolute():
            continue
        parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"[.+]", version))
        text = (template if isinstance(template, str) else _DEFAULT_TEMPLATE).format(
            version=version, version_tuple=parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        notes.append(f"{rel} written from PKG-INFO (version {version}): the build writes it "
                     "and the sdist left it out")
    return notes
