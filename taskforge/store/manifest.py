"""Manifests of an output directory: one per shard job, and their merge.

Every `generate --shard I/N` job writes `manifest-IIIII-of-NNNNN.json` beside its shard file:
the recipe hash, seed, counts, funnel and rejections of that job alone, and the sha256 of its
shard. Because the names never collide, the outputs of many jobs can be copied into one
directory (a CI merge step is `cp -r job-*/. merged/`) and the directory stays consistent.
`manifest.json` is the merge of the per-shard manifests present when it was written; readers
(`stats`, `export`) recompute the merge from the per-shard files, so a `manifest.json`
overwritten by whichever job was copied last never misleads them.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from taskforge.cache import read_json, sha256_file, write_json
from taskforge.errors import UserError
from taskforge.store.shards import manifest_name, read_records, shard_name
from taskforge.store.strategies import merge_strategy_counts, strategy_table

MERGED = "manifest.json"
FUNNEL_STAGES = ("candidates", "tried", "deleted", "verified", "emitted")
# The stages whose seconds a manifest records per source (its `timing`), in the order they run.
TIMED_STAGES = ("ingest", "environment", "baseline", "self_grade", "screen", "confirmation",
                "scan")
_SHARD_MANIFEST = re.compile(r"manifest-(\d{5})-of-(\d{5})\.json")
# Per-source figures that add up across shards; every other per-source figure (tests, stable,
# license ...) describes the snapshot and is the same in every shard.
ADDITIVE_SOURCE_FIELDS = ("candidates", "selected", "tried", "emitted")
# Per-source rejection counts add up reason by reason.
ADDITIVE_SOURCE_COUNTERS = ("rejections",)
# What every shard of one run shares; shards that differ here come from different runs: the
# recipe, seed and shard count, and the taskforge that verified their tasks (its version and
# build, `generator`: a CI matrix whose jobs ran two commits) with the difficulty model.
RUN_FIELDS = ("recipe_sha256", "seed", "shard_count", "generator", "difficulty")


def write_manifests(out: Path, index: int, count: int, manifest: dict[str, Any]) -> None:
    """Write this job's manifest (with its shard's sha256), then the directory's merge, whose
    per-strategy figures also hold the difficulty of the tasks of every shard present."""
    shard = out / shard_name(index, count)
    written = shard.is_file()  # a shard without tasks has no file
    write_json(out / manifest_name(index, count), {
        **manifest, "shard": f"{index}/{count}", "shard_count": count,
        "shard_file": shard.name if written else None,
        "sha256": sha256_file(shard) if written else None})
    merged = merge_manifests(out, check_files=False)
    records = [r for name in sorted(merged["shards"]) for r in read_records(out / name)
               if (out / name).is_file()]
    write_json(out / MERGED, {**merged, "strategies": strategy_table(merged["strategies"], records)})


def merge_manifests(directory: Path, check_files: bool = True) -> dict[str, Any]:
    """One manifest for every shard in `directory`, from its per-shard manifests.

    Counts, funnel, rejections and per-source figures are summed, so N shards of a run merge
    to the manifest of the unsharded run. `timing` (seconds per source and stage) is summed
    too: the time every job spent, each having ingested every source. With `check_files`,
    every shard file must be there with the sha256 its manifest recorded, and no shard file
    may lack a manifest.
    """
    found = sorted(p for p in directory.glob("manifest-*-of-*.json") if _SHARD_MANIFEST.fullmatch(p.name))
    if not found:
        raise UserError(f"{directory}: no shard manifests (manifest-IIIII-of-NNNNN.json); "
                        "not a taskforge output directory")
    parts = [(path, read_json(path)) for path in found]
    first_path, first = parts[0]
    for path, part in parts[1:]:
        for key in RUN_FIELDS:
            if part.get(key) != first.get(key):
                raise UserError(f"{path.name}: {key} {part.get(key)!r} differs from "
                                f"{first_path.name}'s {first.get(key)!r}; shards of different runs "
                                "cannot share a directory")
    if check_files:
        _check_shard_files(directory, parts)
    count = first["shard_count"]
    present = {part["shard"] for _path, part in parts}
    funnel: Counter[str] = Counter()
    rejections: Counter[str] = Counter()
    tasks = 0
    sources: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    timing: dict[str, Counter[str]] = {}
    for _path, part in parts:
        funnel.update(part.get("funnel", {}))
        rejections.update(part.get("rejections", {}))
        tasks += part.get("counts", {}).get("tasks", 0)
        for source in part.get("sources", []):
            merged = sources.get(source["snapshot"])
            if merged is None:
                sources[source["snapshot"]] = dict(source)
                continue
            for key in ADDITIVE_SOURCE_FIELDS:
                merged[key] = merged.get(key, 0) + source.get(key, 0)
            for key in ADDITIVE_SOURCE_COUNTERS:
                if key in merged or key in source:
                    total = Counter(merged.get(key, {}))
                    total.update(source.get(key, {}))
                    merged[key] = dict(sorted(total.items()))
        warnings += [w for w in part.get("warnings", []) if w not in warnings]
        for snapshot, stages in part.get("timing", {}).items():
            timing.setdefault(snapshot, Counter()).update(stages)
    return {
        "recipe": first.get("recipe"), "recipe_sha256": first["recipe_sha256"],
        "seed": first["seed"], "generator": first.get("generator"), "shard_count": count,
        "missing_shards": [f"{i}/{count}" for i in range(count) if f"{i}/{count}" not in present],
        "counts": {"tasks": tasks}, "funnel": dict(sorted(funnel.items())),
        "rejections": dict(sorted(rejections.items())),
        "strategies": merge_strategy_counts(part.get("strategies", {}) for _path, part in parts),
        "sources": list(sources.values()),
        "warnings": warnings,
        "timing": {snapshot: {stage: round(s, 3) for stage, s in stages.items()}
                   for snapshot, stages in timing.items()},
        "shards": {part["shard_file"]: part["sha256"] for _path, part in parts
                   if part["shard_file"]},
    }


def _check_shard_files(directory: Path, parts: list[tuple[Path, dict[str, Any]]]) -> None:
    listed = {part["shard_file"] for _path, part in parts}
    for shard in sorted(directory.glob("tasks-*-of-*.jsonl")):
        if shard.name not in listed:
            index, count = (int(n) for n in re.findall(r"\d{5}", shard.name)[:2])
            raise UserError(f"{shard}: no {manifest_name(index, count)} beside it; copy it with "
                            "its shard, or re-run that shard to finish it")
    for path, part in parts:
        if part["shard_file"] is None:
            continue
        shard = directory / part["shard_file"]
        if not shard.is_file():
            raise UserError(f"{path}: its shard {shard.name} is missing from {directory}")
        if sha256_file(shard) != part["sha256"]:
            raise UserError(f"{shard}: sha256 differs from the one in {path.name} "
                            "(changed or truncated after it was written)")
