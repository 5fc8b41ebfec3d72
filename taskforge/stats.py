"""Figures of a task directory: the funnel and reasons from its manifest, difficulty from tasks."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from taskforge.cache import read_json
from taskforge.errors import UserError
from taskforge.store.shards import read_records


def collect_stats(directory: Path) -> dict[str, Any]:
    manifest_path = directory / "manifest.json"
    if not manifest_path.is_file():
        raise UserError(f"{directory}: no manifest.json (not a taskforge output directory)")
    manifest = read_json(manifest_path)
    records = read_records(directory)
    by_strategy: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_strategy[record["strategy"]].append(record)
    strategies = {
        name: {"tasks": len(rs),
               "mean_lines_deleted": sum(r["difficulty"]["lines_deleted"] for r in rs) / len(rs),
               "mean_fail_to_pass": sum(r["difficulty"]["fail_to_pass"] for r in rs) / len(rs)}
        for name, rs in sorted(by_strategy.items())}
    per_repo = Counter(r["repo"] for r in records)
    sources = [{**s, "emitted": per_repo.get(s["name"], 0)} for s in manifest.get("sources", [])]
    return {"shards": sorted(manifest.get("shards", {})), "funnel": manifest.get("funnel", {}),
            "rejections": manifest.get("rejections", {}), "sources": sources,
            "strategies": strategies, "tasks": len(records)}
