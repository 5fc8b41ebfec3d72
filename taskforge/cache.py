"""Content-addressed cache directories, locks and atomic writes.

Everything expensive (snapshots, environments, baselines) is keyed by a hash of what it
depends on and built at most once: concurrent workers wait on a file lock, and a build is
visible only after its final rename, so a killed run never leaves a half-built entry.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

from taskforge.errors import UserError

ENV_VAR = "TASKFORGE_CACHE"


def cache_root(override: str | os.PathLike[str] | None = None) -> Path:
    if override:
        root = Path(override)
    elif os.environ.get(ENV_VAR):
        root = Path(os.environ[ENV_VAR])
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "taskforge"
    root = root.expanduser().resolve()
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix=".probe-"):
            pass
    except OSError as e:  # a file, a read-only place: say so now, not after the baseline ran
        raise UserError(f"cache {root} (--cache, ${ENV_VAR}): not a writable directory "
                        f"({e.strerror})") from None
    return root


def digest(*parts: Any) -> str:
    """A stable sha256 over JSON-encodable parts."""
    blob = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


@functools.cache
def taskforge_version() -> str:
    """taskforge's installed version, as records, manifests and exports carry it: read once
    (`importlib.metadata` scans every distribution on sys.path, ~4 ms a call, once per task
    record and per exported line before)."""
    return version("taskforge")


@functools.cache
def build_digest() -> str:
    """A hash of taskforge's own files (its code, plugins, canaries and support files): what
    tells two builds apart where the version does not (it is not bumped per change). What a
    build decided (a self-grade, a resumed run's journaled verdicts) is not reused by another.
    Its first 16 hex digits, as records and manifests carry it."""
    h = hashlib.sha256()
    package = Path(__file__).parent
    for path in sorted(package.rglob("*")):
        relative = path.relative_to(package)
        # an editor's swap and backup files, bytecode: nothing taskforge runs
        if "__pycache__" in relative.parts or any(p.startswith(".") for p in relative.parts) \
                or path.name.endswith(_NOT_SHIPPED) or not path.is_file():
            continue
        try:
            h.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
        except FileNotFoundError:  # gone since it was listed (an editor's probe file)
            continue
    return h.hexdigest()[:16]


_NOT_SHIPPED = ("~", ".swp", ".swo", ".orig", ".rej", ".tmp", ".bak")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_once(final: Path, build: Callable[[Path], None]) -> Path:
    """Return `final`, building it first into a sibling temp dir if it does not exist yet."""
    if final.exists():
        return final
    with file_lock(final.with_name(final.name + ".lock")):
        if final.exists():
            return final
        staging = Path(tempfile.mkdtemp(prefix=final.name + ".tmp-", dir=final.parent))
        try:
            build(staging)
            staging.rename(final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return final


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write a file so readers see the old content or the new, never a partial one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide outputs from other users
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def write_json(path: Path, obj: Any) -> None:
    write_atomic(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")
