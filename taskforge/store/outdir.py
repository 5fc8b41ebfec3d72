"""The output directory: whether a run may write into it, and who is writing now.

A run writes only into a new or empty directory, or into one that runs of the same work wrote
(the same recipe bytes, seed, shard count, generator version and curriculum): resuming anything
else would mix two datasets in one directory, and a user's own directory is not ours to fill.
Everything else is refused before any work, in one line that says how to start over.

Each shard job holds a lock for its whole run (`.journal/<shard>.lock`, naming its pid, host and
start time), so a second run of the same shard is refused and says who holds it; shards of one
run may still work side by side in one directory. The lock is an flock: the kernel releases it
when its holder dies, so the lock of a killed run is taken over by the next one. A short
directory-wide lock makes "check who wrote this directory, then claim it" one step.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from taskforge.cache import file_lock, read_json, write_json
from taskforge.errors import UserError
from taskforge.store.shards import manifest_name, shard_name

JOURNALS = ".journal"
# What makes two runs the same work; a directory holds the output of exactly one.
# "build": a hash of taskforge's files (`build_digest`), which a change of code alters where
# the version stays: a resumed run must not keep verdicts another build decided.
IDENTITY_FIELDS = ("recipe_sha256", "seed", "shard_count", "generator", "build", "difficulty")
_SHARD_MANIFEST = re.compile(r"manifest-\d{5}-of-\d{5}\.json")
_SHARD_FILE = re.compile(r"tasks-\d{5}-of-\d{5}\.jsonl")
START_OVER = "start over with --no-resume --out NEW_DIR, or pass --force to replace its tasks"


def run_file(out: Path, index: int, count: int) -> Path:
    """Who a shard's journal belongs to: written before its first line."""
    return out / JOURNALS / (shard_name(index, count).removesuffix(".jsonl") + ".run.json")


def is_output_dir(path: Path) -> bool:
    """A directory a taskforge run wrote: its journals, or a per-shard manifest."""
    journals = path / JOURNALS
    if journals.is_dir() and any(journals.glob("tasks-*")):
        return True
    return any(_SHARD_MANIFEST.fullmatch(p.name) for p in path.glob("manifest-*.json"))


def check_writable(path: Path, what: str) -> None:
    """Refuse, before any expensive work, a path that cannot become a writable directory:
    a file, a device, something under a file, a read-only place."""
    probe = path
    while not probe.exists() and not probe.is_symlink():
        probe = probe.parent
    if not probe.is_dir():
        where = "is not a directory" if probe == path else f"is under {probe}, which is not a directory"
        raise UserError(f"{what} {path}: {where}")
    try:
        fd, name = tempfile.mkstemp(prefix=".taskforge-probe-", dir=probe)
        os.close(fd)
        os.unlink(name)
    except OSError as e:
        raise UserError(f"{what} {path}: cannot write in {probe} ({e.strerror})") from None


def _differences(there: dict[str, Any], here: dict[str, Any]) -> str:
    """What differs between the run that wrote a file and this one, e.g. `seed 1 there, 7 here`."""
    if "recipe_sha256" not in there:
        return f"written by {there.get('recipe')}"
    names = {"recipe_sha256": "recipe sha256", "shard_count": "shard count",
             "generator": "taskforge version", "build": "taskforge build",
             "difficulty": "--difficulty stats"}

    def show(key: str, value: Any) -> str:
        return str(value)[:12] if key in ("recipe_sha256", "difficulty") and value else str(value)

    return ", ".join(f"{names.get(k, k)} {show(k, there.get(k))} there, {show(k, here.get(k))} here"
                     for k in IDENTITY_FIELDS if there.get(k) != here.get(k))


def _identities(out: Path) -> list[tuple[str, dict[str, Any]]]:
    """Who wrote what is in `out`: every shard manifest and every journal's run file."""
    found = []
    for path in sorted(out.glob("manifest-*.json")):
        if _SHARD_MANIFEST.fullmatch(path.name):
            part = _read(path)
            generator = part.get("generator")
            if isinstance(generator, dict):  # a manifest's {"version", "build"}
                part = {**part, "generator": generator.get("version"),
                        "build": generator.get("build")}
            found.append((path.name, part))
    journals = out / JOURNALS
    for journal in sorted(journals.glob("tasks-*-of-*.jsonl")):
        run = journal.with_name(journal.name.removesuffix(".jsonl") + ".run.json")
        if run.is_file():
            found.append((f"{JOURNALS}/{run.name}", _read(run)))
        elif not (out / ("manifest-" + journal.name[len("tasks-"):-len(".jsonl")] + ".json")).is_file():
            found.append((f"{JOURNALS}/{journal.name}", {"recipe": "unknown (no run file)"}))
    found += [(f"{JOURNALS}/{run.name}", _read(run)) for run in sorted(journals.glob("*.run.json"))
              if not run.with_name(run.name.removesuffix(".run.json") + ".jsonl").is_file()]
    return found


def _read(path: Path) -> dict[str, Any]:
    try:
        data = read_json(path)
    except (OSError, ValueError):
        data = None
    return data if isinstance(data, dict) else {"recipe": f"unreadable {path.name}"}


def directory_lock(out: Path) -> contextlib.AbstractContextManager[None]:
    """The short, waiting lock for directory-wide steps (claiming, merging the manifests)."""
    return file_lock(out / JOURNALS / "directory.lock")


class ShardLock:
    """An exclusive, non-blocking lock on one shard of an output directory, naming its holder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle: Any = None

    def acquire(self, what: str) -> None:
        while True:
            handle = self.path.open("a+")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip()
                handle.close()
                raise UserError(f"{what} is being written by another run ({_holder(holder)}); "
                                "wait for it to finish, or use another --out") from None
            # The previous holder removes the file on release: make sure ours is still it.
            try:
                same = os.stat(self.path).st_ino == os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            handle.close()
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                 "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))
        handle.flush()
        self.handle = handle

    def release(self) -> None:
        if self.handle is None:
            return
        self.path.unlink(missing_ok=True)  # still holding it: nobody can have it meanwhile
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()
        self.handle = None

    def is_held_elsewhere(self) -> str | None:
        """The holder of this lock if another process holds it, else None."""
        if not self.path.exists():
            return None
        with self.path.open("a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                return _holder(handle.read().strip())
            fcntl.flock(handle, fcntl.LOCK_UN)
        return None


def _holder(text: str) -> str:
    try:
        info = json.loads(text)
        return f"pid {info['pid']} on {info['host']}, started {info['started']}"
    except (ValueError, KeyError, TypeError):
        return "holder unknown"


def _remove_outputs(out: Path) -> None:
    """What taskforge wrote in `out` (shards, manifests, journals, snapshots); nothing else."""
    for path in out.iterdir():
        if _SHARD_FILE.fullmatch(path.name) or _SHARD_MANIFEST.fullmatch(path.name) \
                or path.name == "manifest.json":
            path.unlink()
    shutil.rmtree(out / "snapshots", ignore_errors=True)
    for path in (out / JOURNALS).glob("*"):
        if not path.name.endswith(".lock"):
            path.unlink()


@contextlib.contextmanager
def claim_output(out: Path, identity: dict[str, Any], shard: tuple[int, int], *,
                 force: bool = False) -> Iterator[None]:
    """Hold shard `shard` of `out` for this run of `identity` (see the module's docstring).

    If the run fails before its shard journaled anything, what the claim wrote is removed
    again: the directory itself when it did not exist before.
    """
    check_writable(out, "--out")
    created = not out.exists()
    had_journals = (out / JOURNALS).exists()
    if not created and any(out.iterdir()) and not is_output_dir(out) and not force:
        raise UserError(f"--out {out}: a non-empty directory that is not a taskforge output; "
                        "give a new or empty directory (--force writes into it anyway)")
    index, count = shard
    journals = out / JOURNALS
    journals.mkdir(parents=True, exist_ok=True)
    lock = ShardLock(journals / (shard_name(index, count).removesuffix(".jsonl") + ".lock"))
    mine = run_file(out, index, count)
    wrote_run_file = False
    try:
        lock.acquire(f"--out {out}: shard {index}/{count}")
        with directory_lock(out):
            others = [(name, found) for name, found in _identities(out)
                      if any(found.get(k) != identity.get(k) for k in IDENTITY_FIELDS)]
            if others and not force:
                name, found = others[0]
                raise UserError(f"--out {out}: holds another run's output ({name}: "
                                f"{_differences(found, identity)}); resuming would mix them: "
                                f"{START_OVER}")
            if others:
                busy = [(p.name, held) for p in journals.glob("*.lock") if p != lock.path
                        and p.name != "directory.lock"
                        and (held := ShardLock(p).is_held_elsewhere())]
                if busy:
                    raise UserError(f"--out {out}: --force cannot replace a directory another "
                                    f"run is writing ({busy[0][0]}: {busy[0][1]})")
                _remove_outputs(out)
            wrote_run_file = not mine.is_file()
            write_json(mine, identity)
        yield
    except BaseException:
        journal = out / JOURNALS / shard_name(index, count)
        untouched = not (journal.is_file() and journal.stat().st_size) \
            and not (out / manifest_name(index, count)).is_file()
        if untouched and wrote_run_file:
            mine.unlink(missing_ok=True)
        lock.release()
        if untouched and not had_journals:
            _remove_if_only_ours(out, created)
        raise
    lock.release()


def _remove_if_only_ours(out: Path, created: bool) -> None:
    """Remove the journal directory this run created (and `out` if it did), unless another
    run wrote into them meanwhile."""
    journals = out / JOURNALS
    if {p.name for p in journals.iterdir()} <= {"directory.lock"}:
        (journals / "directory.lock").unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            journals.rmdir()
            if created:
                out.rmdir()  # only if empty
