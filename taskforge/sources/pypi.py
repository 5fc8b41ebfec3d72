"""A pinned PyPI sdist (`NAME==VERSION`), downloaded with pip and unpacked; sdists often ship tests."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from taskforge.cache import digest
from taskforge.errors import UserError
from taskforge.model import Snapshot
from taskforge.sources.generated import restore_version_files
from taskforge.sources.store import recall, remember, snapshot_from_tree, write_notes

_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.!+_-]+)$")


def ingest_pypi(spec: str, cache: Path) -> Snapshot:
    match = _PINNED.match(spec.strip())
    if not match:
        raise UserError(f"pypi:{spec}: pin an exact version, as NAME==VERSION")
    name = match.group(1)
    key = digest("pypi", spec.strip().lower())
    known = recall(cache, key)
    if known:
        return known
    tmp = cache / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tmp, prefix="sdist-") as scratch:
        archive = download_sdist(spec.strip(), name, Path(scratch) / "download")
        unpacked = Path(scratch) / "unpacked"
        root = _unpack(archive, unpacked)
        notes = restore_version_files(root)
        snapshot = snapshot_from_tree(root, name=name, source=f"pypi:{spec.strip()}", cache=cache,
                                      archive=True)
    write_notes(cache, snapshot.source, notes)
    remember(cache, key, snapshot)
    return snapshot


def download_sdist(spec: str, name: str, dest: Path) -> Path:
    """Download the sdist of `spec` (NAME==VERSION) into `dest`; return the archive.

    Only the package itself is taken as source (`--no-binary NAME`): pip prepares its
    metadata, and with `:all:` the build backend (hatchling, hatch-vcs, ...) had to be built
    from source too, which fails for backends whose own build needs themselves."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", name,
         "--disable-pip-version-check", "-d", str(dest), spec],
        capture_output=True, text=True)
    archives = sorted(dest.glob("*")) if dest.is_dir() else []
    if proc.returncode != 0 and not archives:
        lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        errors = [ln.removeprefix("ERROR:").strip() for ln in lines if ln.startswith("ERROR:")]
        # The last error says what failed ("Failed to build ... when installing build
        # dependencies"), an earlier one what is missing ("No matching distribution ...").
        missing = [e for e in errors if e.startswith("No matching distribution")]
        reason = "; ".join(dict.fromkeys([*missing[:1], *(errors or lines or
                                                           ["pip download failed"])[-1:]]))
        raise UserError(f"pypi:{spec}: cannot download the sdist: {reason}")
    if not archives:
        raise UserError(f"pypi:{spec}: no sdist was downloaded")
    return archives[0]


def _unpack(archive: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    if archive.name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar")):
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
    elif archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                if member.startswith("/") or ".." in Path(member).parts:
                    raise UserError(f"{archive.name}: unsafe path in archive: {member}")
            zf.extractall(dest)
    else:
        raise UserError(f"{archive.name}: not an sdist (expected .tar.gz or .zip)")
    entries = list(dest.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else dest
