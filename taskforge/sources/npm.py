"""A pinned npm package (`NAME@VERSION`): the registry tarball, fetched with `npm pack` from
the registry npm is configured with, and unpacked. Some packages ship their tests (qs,
minimist do); the ones that do not give no baseline and are set aside."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from taskforge.cache import digest
from taskforge.errors import UserError
from taskforge.model import Snapshot
from taskforge.sources.store import recall, remember, snapshot_from_tree

# name@exact-version; a scope (`@scope/name`) is allowed, a range or a tag is not.
_PINNED = re.compile(r"^((?:@[a-z0-9][\w.~-]*/)?[a-z0-9][\w.~-]*)@(\d+\.\d+\.\d+(?:[-+][\w.+-]+)?)$")


def ingest_npm(spec: str, cache: Path) -> Snapshot:
    match = _PINNED.match(spec.strip())
    if not match:
        raise UserError(f"npm:{spec}: pin an exact version, as NAME@VERSION (e.g. qs@6.13.0)")
    name = match.group(1)
    key = digest("npm", spec.strip())
    known = recall(cache, key)
    if known:
        return known
    tmp = cache / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tmp, prefix="npm-") as scratch:
        archive = download_tarball(spec.strip(), Path(scratch) / "download", cache)
        unpacked = Path(scratch) / "unpacked"
        unpacked.mkdir()
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
        entries = list(unpacked.iterdir())
        root = entries[0] if len(entries) == 1 and entries[0].is_dir() else unpacked
        snapshot = snapshot_from_tree(root, name=name.rsplit("/", 1)[-1],
                                      source=f"npm:{spec.strip()}", cache=cache, archive=True)
    remember(cache, key, snapshot)
    return snapshot


def download_tarball(spec: str, dest: Path, cache: Path) -> Path:
    """`npm pack NAME@VERSION` into `dest` (no scripts run); the tarball's path."""
    npm = shutil.which("npm")
    if npm is None:
        raise UserError(f"npm:{spec}: npm is not installed")
    dest.mkdir(parents=True)
    env = {**os.environ, "npm_config_cache": str(cache / "npm"),
           "npm_config_update_notifier": "false", "npm_config_loglevel": "error"}
    proc = subprocess.run([npm, "pack", spec, "--ignore-scripts", "--pack-destination", str(dest)],
                          cwd=dest, env=env, capture_output=True, text=True)
    archives = sorted(dest.glob("*.tgz"))
    if proc.returncode != 0 or not archives:
        lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        errors = [ln.removeprefix("npm error").strip() for ln in lines
                  if ln.startswith("npm error") and "A complete log" not in ln]
        raise UserError(f"npm:{spec}: cannot fetch the package: "
                        f"{'; '.join((errors or lines or ['npm pack failed'])[:2])[:300]}")
    return archives[0]
