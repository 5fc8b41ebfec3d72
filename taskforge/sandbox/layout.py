"""What a contained command sees: every host path at the same path inside, nothing else.

Both contained backends expose the workspace and the writable mounts read-write, the read-only
mounts read-only, and the base interpreter of any virtual environment among them read-only
too (a venv's `bin/python` is a symlink to it). Because each path keeps its host name, the
runner's argv and environment need no translation, and one environment serves every task.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass
from pathlib import Path

from taskforge.sandbox.base import Mounts

# A system prefix the sandbox already provides (bwrap binds the host's /usr; a Docker image has
# its own): never bound from the host over the image.
SYSTEM_PREFIXES = (Path("/usr"), Path("/"))


@dataclass(frozen=True)
class Bind:
    source: Path  # on the host, symlinks resolved
    target: Path  # inside, the path as the command names it
    writable: bool


def invoking_home() -> Path | None:
    """The home directory of the user running taskforge (by passwd and by $HOME)."""
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
    except KeyError:
        home = os.environ.get("HOME")
        return Path(home).resolve() if home else None


def interpreter_prefixes(venv: Path) -> list[Path]:
    """The installation prefixes of the interpreter a virtual environment runs on."""
    prefixes: list[Path] = []
    cfg = venv / "pyvenv.cfg"
    if not cfg.is_file():
        return prefixes
    for line in cfg.read_text(errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = Path(value.strip()).resolve()
            prefixes.append(home.parent if home.name == "bin" else home)
    for name in ("python", "python3"):
        exe = venv / "bin" / name
        if exe.exists():
            real = exe.resolve()
            if not real.is_relative_to(venv.resolve()):
                prefixes.append(real.parent.parent if real.parent.name == "bin" else real.parent)
    return sorted(set(prefixes))


def binds_for(workspace: Path, mounts: Mounts | None, *, skip_system: bool) -> list[Bind]:
    """The binds for one command, parents before children (so nested binds stack correctly).

    Refuses "/" and any ancestor of the invoking user's home: those would expose the home.
    `skip_system` leaves out interpreter prefixes the sandbox's own root already provides.
    """
    mounts = mounts or Mounts()
    wanted: dict[Path, tuple[Path, bool]] = {}

    def add(path: Path, writable: bool) -> None:
        target = Path(os.path.abspath(path))
        previous = wanted.get(target)
        wanted[target] = (path.resolve(), writable or (previous[1] if previous else False))

    add(workspace, True)
    for path in mounts.writable:
        add(path, True)
    for path in mounts.readonly:
        add(path, False)
    for path in mounts.readonly:
        for prefix in interpreter_prefixes(path):
            if skip_system and prefix in SYSTEM_PREFIXES:
                continue
            if prefix not in wanted and not any(prefix.is_relative_to(t) for t in wanted):
                add(prefix, False)
    home = invoking_home()
    for target, (source, _) in wanted.items():
        for path in (target, source):
            if path == Path("/") or (home is not None and home.is_relative_to(path)):
                raise ValueError(f"sandbox: refusing to expose {path}: it holds the user's home "
                                 "or the whole host")
    binds = [Bind(source, target, writable) for target, (source, writable) in wanted.items()]
    return sorted(binds, key=lambda b: (len(b.target.parts), str(b.target)))
