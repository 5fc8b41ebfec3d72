"""Shard files, the resume journal and the manifest of an output directory.

Work results are appended to a journal one complete line at a time (flushed and fsynced),
so a killed run loses at most the candidate it was working on; the shard file itself is
written once, atomically, sorted by instance id, so it is byte-identical however often the
run was interrupted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from taskforge.cache import write_atomic
from taskforge.errors import UserError
from taskforge.model import TaskRecord, validate_record


def strip_timing(record: TaskRecord) -> TaskRecord:
    """A copy of `record` without its timing fields (`created_at`, and every `*seconds`
    figure under `verification`): what must be identical across reruns, resumes, shards."""
    stripped = json.loads(json.dumps(record))
    stripped.pop("created_at", None)

    def drop_seconds(node: Any) -> None:
        if isinstance(node, dict):
            for key in [k for k in node if k.endswith("seconds")]:
                del node[key]
            for value in node.values():
                drop_seconds(value)
        elif isinstance(node, list):
            for value in node:
                drop_seconds(value)

    drop_seconds(stripped.get("verification"))
    return stripped


def shard_name(index: int, count: int) -> str:
    return f"tasks-{index:05d}-of-{count:05d}.jsonl"


def manifest_name(index: int, count: int) -> str:
    """The manifest of one shard job; names never collide, so jobs' outputs can be merged."""
    return f"manifest-{index:05d}-of-{count:05d}.json"


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` with 0 <= I < N (0-based, like a data-parallel rank)."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise UserError(f"--shard {text}: expected I/N, e.g. 0/4") from None
    if n < 1 or not 0 <= i < n:
        raise UserError(f"--shard {text}: need 0 <= I < N")
    return i, n


class Journal:
    """Append-only record of finished candidates, keyed by candidate id."""

    def __init__(self, path: Path, resume: bool) -> None:
        self.path = path
        self.done: dict[str, dict[str, Any]] = {}
        path.parent.mkdir(parents=True, exist_ok=True)
        if not resume and path.exists():
            path.unlink()
        if path.exists():
            lines = path.read_text(errors="replace").splitlines()
            for n, line in enumerate(lines, 1):
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    if n == len(lines):
                        continue  # the torn last line of a killed run
                    entry = None
                if not _is_entry(entry):
                    raise UserError(f"{path}:{n}: not a journal entry (the file was edited or "
                                    "damaged); start this shard over with --no-resume")
                self.done[entry["key"]] = entry
            # Rewrite without a torn tail so appends start on a fresh line.
            write_atomic(path, "".join(json.dumps(e, sort_keys=True) + "\n"
                                       for e in self.done.values()))

    def add(self, entry: dict[str, Any]) -> None:
        self.done[entry["key"]] = entry
        with self.path.open("a") as f:
            f.write(json.dumps(entry, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())


def _is_entry(entry: Any) -> bool:
    """A finished candidate as `generate` journals it: a task record, or a rejection reason."""
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        return False
    if entry.get("status") == "emitted":
        return isinstance(entry.get("record"), dict)
    return entry.get("status") == "rejected" and isinstance(entry.get("reason"), str)


def write_shard(out: Path, index: int, count: int, records: list[TaskRecord]) -> Path | None:
    """Write the shard's tasks sorted by instance id; a shard without tasks is no file at all
    (JSON loaders such as datasets.load_dataset cannot read an empty file), and its manifest
    records it as empty."""
    path = out / shard_name(index, count)
    if not records:
        path.unlink(missing_ok=True)
        return None
    ordered = sorted(records, key=lambda r: r["instance_id"])
    write_atomic(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in ordered))
    return path


def remove_partial_writes(out: Path, index: int, count: int) -> None:
    """Remove the temporary files a killed run left while writing this shard or its manifest
    (never visible to readers: they are renamed into place only once complete)."""
    for prefix in (shard_name(index, count), manifest_name(index, count), "manifest.json",
                   "report.html"):
        for leftover in out.glob(f"{prefix}.*.tmp"):
            leftover.unlink(missing_ok=True)


def read_records(tasks: Path) -> list[TaskRecord]:
    """Every task record of an output directory (all shards) or of one shard file."""
    if tasks.is_dir():
        files = sorted(tasks.glob("tasks-*.jsonl"))
        if not files and not any(tasks.glob("manifest*.json")):
            raise UserError(f"{tasks}: no task shards (tasks-*.jsonl) in this directory")
    elif tasks.is_file():
        files = [tasks]
    else:
        raise UserError(f"{tasks}: no such task directory or shard file")
    records = []
    seen: dict[str, str] = {}
    for file in files:
        for n, line in enumerate(file.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = validate_record(json.loads(line), f"{file}:{n}")
            except json.JSONDecodeError:
                raise UserError(f"{file}:{n}: not a JSON task record") from None
            where = f"{file.name}:{n}"
            first = seen.setdefault(record.get("instance_id", where), where)
            if first != where:
                # Two runs' shards in one directory (e.g. 0/1 beside 0/3) would double tasks.
                raise UserError(f"{file}:{n}: task {record['instance_id']} is also at {first}; "
                                "the directory mixes shards of different runs")
            records.append(record)
    return records


def task_dir(tasks: Path) -> Path:
    """The output directory a TASKS argument belongs to (where snapshots/ lives)."""
    return tasks if tasks.is_dir() else tasks.parent
