"""What an environment has installed, read from its files (never by running its interpreter).

Grading disables pytest's plugin autoloading, which would also load entry points from package
metadata a solution plants in an import root, and loads instead exactly the `pytest11` entry
points of the environment's own distributions: the set autoloading finds in the baseline,
since the environment is rebuilt from the record and is not the agent's.
"""

from __future__ import annotations

import functools
from importlib.metadata import distributions
from pathlib import Path


def site_packages(venv: Path) -> list[Path]:
    return sorted(venv.glob("lib/python*/site-packages"))


@functools.cache
def pytest_plugins(venv: Path, extra: tuple[Path, ...] = ()) -> tuple[str, ...]:
    """Names of the `pytest11` entry points of the venv's distributions (and of `extra`
    directories, e.g. the snapshot's own metadata in its import roots), sorted."""
    paths = [str(p) for p in (*site_packages(venv), *extra)]
    names = {ep.name for dist in distributions(path=paths) for ep in dist.entry_points
             if ep.group == "pytest11"}
    return tuple(sorted(names))


@functools.cache
def installed_modules(venv: Path) -> frozenset[str]:
    """Top-level module names importable from the venv's site-packages."""
    names = set()
    for site in site_packages(venv):
        for entry in site.iterdir():
            if entry.name.endswith((".dist-info", ".egg-info", ".pth")) or entry.name == "__pycache__":
                continue
            stem = entry.name.split(".", 1)[0]
            if stem.isidentifier():
                names.add(stem)
    return frozenset(names)
