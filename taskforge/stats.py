"""Figures of a task directory: the funnel, reasons and per-strategy yield from its shards'
manifests (merged, so a directory holding the shards of many jobs reads as one run),
difficulty from the tasks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from taskforge.model import TaskRecord
from taskforge.store.manifest import merge_manifests
from taskforge.store.shards import read_records
from taskforge.store.strategies import strategy_table


def collect_stats(directory: Path, records: list[TaskRecord] | None = None) -> dict[str, Any]:
    """The figures of `directory`; `records` are its task records when the caller has read
    them already."""
    manifest = merge_manifests(directory)
    records = read_records(directory) if records is None else records
    per_repo = Counter(r["repo"] for r in records)
    sources = [{**s, "emitted": per_repo.get(s["name"], 0)} for s in manifest.get("sources", [])]
    return {"recipe": manifest.get("recipe"), "shards": sorted(manifest["shards"]),
            "missing_shards": manifest["missing_shards"],
            "funnel": manifest.get("funnel", {}),
            "rejections": manifest.get("rejections", {}), "sources": sources,
            "strategies": strategy_table(manifest["strategies"], records), "tasks": len(records),
            "timing": manifest.get("timing", {}), "warnings": manifest.get("warnings", [])}
