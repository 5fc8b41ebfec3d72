"""`--executor local` against `--executor ray` (a Ray instance started for the run) at 1 and 2
workers, on several bundled sample repositories, in the same run; then the per-stage costs a
cluster multiplies, and a projection for 10 and 100 nodes worked out from them.

Each input is one sample repository in a recipe of its own (stub-function, a few tasks, sandbox
none: the executor's cost, not the sandbox's). Caches are warmed by an untimed run first, so every
timed run does the same work: screen and confirm its candidates, write its shard. Printed per
input and configuration: candidates tried per minute, seconds, the ratio of Ray's seconds to
local's at the same worker count, and Ray's overhead per candidate ((ray - local) / tried, and
without the start and stop of the Ray instance every such run pays once).

Per-stage costs (measured here, then used on paper):
- Ray start and stop for the run; a no-op task's round trip (submit, schedule, get);
- the job a wave ships to the workers (the pickled closure: candidate source, baseline, test map);
- the driver's work per finished candidate (a journal append with fsync) and the shard writer's
  per task (write_shard on the records of the runs above);
- cache warm-up: a source's snapshot, environment and baseline in an empty cache (the driver
  prepares snapshot and environment; the baseline is a job), and the cache entries a node
  without the driver's cache gets: their size, the driver's packing, a node's unpacking.

    python bench/executor_scale.py [--tasks 3] [--cores-per-node 8]
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import tarfile
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import ray
from ray import cloudpickle

from taskforge.cache import cache_root
from taskforge.executors.ray import pack_entry
from taskforge.generate import generate
from taskforge.ingest import ingest
from taskforge.recipe import load_recipe
from taskforge.sandbox import get_sandbox
from taskforge.store.shards import Journal, write_shard

REPO_ROOT = Path(__file__).resolve().parents[1]
INPUTS = ("textkit", "spans", "exprcalc")
WORKERS = (1, 2)
ASSUMED_LINK_MB_S = 1000  # the driver's network link, for the projection only
EXECUTORS = ("local", "ray")


def recipe_for(name: str, tasks: int, root: Path) -> Path:
    path = root / f"{name}.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: scale-{name}
        seed: 1
        sources: [{{path: {REPO_ROOT / "sample_repos" / name}}}]
        strategies: [stub-function]
        select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: {tasks}}}
        verify: {{repeats: 2, timeout_s: 300}}
        sandbox: none
        """))
    return path


def timed_run(recipe: Path, out: Path, executor: str, workers: int) -> tuple[float, int, Path]:
    started = time.perf_counter()
    summary = generate(recipe, out=out, executor=executor, workers=workers, resume=False)
    return time.perf_counter() - started, summary.funnel["tried"], out / summary.shard_file


def ray_stage_costs() -> dict[str, float]:
    """Start/stop of a Ray instance for the run, and a no-op task's round trip."""
    from taskforge.executors.ray import RayExecutor

    started = time.perf_counter()
    pool = RayExecutor(2, cache=cache_root())
    start = time.perf_counter() - started
    rounds = []
    for _ in range(50):
        t = time.perf_counter()
        list(pool.map_unordered(lambda x: x, [0]))
        rounds.append(time.perf_counter() - t)
    t = time.perf_counter()
    pool.close()
    return {"start_s": start, "stop_s": time.perf_counter() - t,
            "noop_round_trip_ms": 1000 * statistics.median(rounds)}


def driver_costs(shards: list[Path], scratch: Path) -> dict[str, float]:
    """Per finished candidate: a journal append (fsync); per task: the shard writer."""
    journal = Journal(scratch / "journal.jsonl", resume=False)
    entry = {"key": "x", "status": "rejected", "reason": "no-change", "detail": "d" * 200}
    t = time.perf_counter()
    for i in range(200):
        journal.add({**entry, "key": str(i)})
    append_ms = 1000 * (time.perf_counter() - t) / 200
    records = [json.loads(line) for s in shards if s.is_file() for line in s.read_text().splitlines()]
    records = [{**r, "instance_id": f"{r['instance_id']}-{i}"} for i in range(50) for r in records]
    t = time.perf_counter()
    write_shard(scratch, 0, 1, records)
    return {"journal_append_ms": append_ms, "records": len(records),
            "shard_write_ms_per_task": 1000 * (time.perf_counter() - t) / max(1, len(records)),
            "record_kb": statistics.mean(len(json.dumps(r)) for r in records) / 1024}


def warmup_and_shipping(name: str, root: Path) -> dict[str, float]:
    """A source ingested into an empty cache (the driver's share: snapshot and environment; the
    baseline, a job), the pickled job payload, and what a node without the driver's cache pays
    on first use: the entries packed once by the driver, unpacked once per node."""
    cache = root / f"cold-{name}"
    cache.mkdir()
    recipe = load_recipe(recipe_for(name, 1, root))
    t = time.perf_counter()
    source = ingest(recipe.sources[0], cache=cache,
                    base_dir=REPO_ROOT, sandbox=get_sandbox("none"), repeats=recipe.verify.repeats,
                    timeout=recipe.verify.timeout_s)
    warmup = time.perf_counter() - t
    t = time.perf_counter()
    packed = [pack_entry(entry) for entry in source.cache_entries()]
    pack_s = time.perf_counter() - t
    t = time.perf_counter()
    for i, data in enumerate(packed):
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(root / f"unpacked-{name}-{i}", filter="tar")
    return {"warmup_s": warmup, "baseline_s": sum(source.baseline.run_seconds),
            "payload_kb": len(cloudpickle.dumps(source)) / 1024,
            "ship_mb": sum(map(len, packed)) / 2**20, "pack_s": pack_s,
            "unpack_s": time.perf_counter() - t}


def projection(t_task: float, costs: dict[str, Any], cores: int) -> list[str]:
    """Where 10 and 100 nodes stop scaling, from the measured per-stage costs (on paper: the
    costs scale with the counts; only the driver's link speed is assumed)."""
    driver_s = costs["journal_append_ms"] / 1000 + costs["noop_round_trip_ms"] / 1000
    prepare_s = costs["warmup_s"] - costs["baseline_s"]  # the driver's share of a cold source
    lines = [f"per candidate on one core: {t_task:.2f} s; driver per finished candidate "
             f"(journal fsync + a task's round trip, an upper bound): {1000 * driver_s:.1f} ms; "
             f"driver per new source (snapshot + environment, one after another): "
             f"{prepare_s:.1f} s; a cache entry set: {costs['ship_mb']:.0f} MB, packed once in "
             f"{costs['pack_s']:.1f} s, unpacked per node in {costs['unpack_s']:.1f} s"]
    for nodes in (10, 100):
        workers = nodes * cores
        demand = workers / t_task  # finished candidates per second the cluster could deliver
        driver_load = demand * driver_s
        shard_s = 1_000_000 * costs["shard_write_ms_per_task"] / 1000
        # Every node fetches each source's entries from the driver's object store: at an
        # assumed 1 GB/s on the driver's link (not measured here), nodes x size per source.
        fanout_s = nodes * costs["ship_mb"] / ASSUMED_LINK_MB_S
        lines.append(
            f"{nodes:>3} nodes x {cores} cores = {workers} workers: {demand:.0f} candidates/s "
            f"offered; the driver is busy {100 * min(driver_load, 9.99):.0f}% of the time"
            + (" (the bottleneck)" if driver_load >= 1 else "")
            + f"; the shard writer needs {shard_s:.0f} s at the end for 1M tasks, held in "
            f"the driver's memory until then ({costs['record_kb'] * 1_000_000 / 2**20:.0f} GB)"
            + f"; a new source costs each node {costs['unpack_s']:.1f} s unpacking and the "
            f"driver's link {fanout_s:.1f} s sending ({(costs['unpack_s'] + fanout_s) / t_task:.0f}"
            " candidates' worth), after the driver's "
            f"{prepare_s:.1f} s preparing it, during which {prepare_s * demand:.0f} candidates' "
            "worth of work waits unless other sources are queued")
    lines.append(
        "Before any of these: generate() verifies one source at a time in waves of "
        "max(2 x workers, 2 x tasks still wanted) and confirms in chunks of `workers` that it "
        "waits for, so one source keeps at most its selected candidates busy: at "
        "max_tasks_per_source 20, ~40 workers. Past that, a cluster needs several sources in "
        "flight at once (or `--shard` jobs, one per source group) before the driver or the "
        "shard writer matters.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="max_tasks_per_source per input")
    parser.add_argument("--cores-per-node", type=int, default=8)
    args = parser.parse_args()
    print(f"ray {ray.__version__}; inputs {', '.join(INPUTS)}; {args.tasks} tasks per source")
    with tempfile.TemporaryDirectory(prefix="executor-scale-") as tmp:
        root = Path(tmp)
        costs = ray_stage_costs()  # first: every Ray run below pays the start and stop once
        ray_fixed_s = costs["start_s"] + costs["stop_s"]
        results: dict[tuple[str, str, int], tuple[float, int]] = {}
        shards = []
        for name in INPUTS:
            recipe = recipe_for(name, args.tasks, root)
            generate(recipe, out=root / f"warm-{name}")  # untimed: caches warm
            for workers in WORKERS:
                for executor in EXECUTORS:
                    seconds, tried, shard = timed_run(recipe, root / f"{name}-{executor}-{workers}",
                                                      executor, workers)
                    results[name, executor, workers] = (seconds, tried)
                    shards.append(shard)
        print(f"{'input':<10} {'workers':>7} {'executor':<8} {'tried':>5} {'seconds':>8} "
              f"{'tried/min':>9} {'ray/local':>9} {'overhead/cand':>13} {'w/o start':>9}")
        for (name, executor, workers), (seconds, tried) in results.items():
            local_s = results[name, "local", workers][0]
            ratio = overhead = net = ""
            if executor == "ray" and tried:
                ratio = f"{seconds / local_s:.2f}"
                overhead = f"{(seconds - local_s) / tried:.2f} s"
                net = f"{(seconds - local_s - ray_fixed_s) / tried:.2f} s"
            print(f"{name:<10} {workers:>7} {executor:<8} {tried:>5} {seconds:>8.1f} "
                  f"{60 * tried / seconds:>9.1f} {ratio:>9} {overhead:>13} {net:>9}")
        for workers in WORKERS:
            ratios = [results[n, "ray", workers][0] / results[n, "local", workers][0] for n in INPUTS]
            print(f"ray/local at {workers} worker(s): median {statistics.median(ratios):.2f} "
                  f"(min {min(ratios):.2f}, max {max(ratios):.2f})")
        costs |= driver_costs(shards, root)
        costs |= warmup_and_shipping(INPUTS[0], root)
        print("per-stage: " + ", ".join(f"{k} {v:.2f}" for k, v in costs.items()))
        t_task = statistics.median(results[n, "local", 1][0] / results[n, "local", 1][1]
                                   for n in INPUTS if results[n, "local", 1][1])
        for line in projection(t_task, costs, args.cores_per_node):
            print(line)


if __name__ == "__main__":
    main()
