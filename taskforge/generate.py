"""`generate`: a recipe in, verified task shards out. The CLI and the library both call this."""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskforge.cache import build_digest, cache_root, sha256_file, taskforge_version
from taskforge.curriculum import Curriculum, harder_than, known_records, parse_difficulty
from taskforge.errors import Rejected, UserError
from taskforge.executors import get_executor
from taskforge.ingest import IngestedSource, SetAside, ingest_recipe_sources
from taskforge.model import Candidate
from taskforge.recipe import Recipe, load_recipe
from taskforge.report import report_after_run
from taskforge.sandbox import Sandbox, get_sandbox
from taskforge.store.manifest import FUNNEL_STAGES, TIMED_STAGES, write_manifests
from taskforge.store.outdir import claim_output, directory_lock
from taskforge.store.shards import Journal, remove_partial_writes, shard_name, write_shard
from taskforge.store.snapshots import export_snapshot
from taskforge.store.strategies import count_strategies, strategy_table
from taskforge.verify.confirm import Screened, Verifier, run_timeout
from taskforge.verify.self_grade import (
    GRADE_TIMEOUT,
    GradedSource,
    SelfGrade,
    cached_self_grade,
    keep_self_grade,
    self_grade,
    ungradable_line,
    without_ungradable,
)
from taskforge.workspace import prune_dead_scratch

# Rejections that happen before anything is deleted.
NOT_DELETED = ("not-found", "no-change", "unparsable")
# A source's flaky and failing tests are listed by name up to this many of each.
MAX_LISTED_TESTS = 200


@dataclass
class Summary:
    """What a run did: the funnel, the reasons for rejection, per-source figures."""

    out: Path
    shard: str
    funnel: dict[str, int] = field(default_factory=dict)
    rejections: dict[str, int] = field(default_factory=dict)
    sources: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    shard_file: str = ""
    # strategy -> candidates, tried, emitted, yield, rejections, difficulty (this shard's)
    strategies: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"out": str(self.out), "shard": self.shard, "funnel": self.funnel,
                "rejections": self.rejections, "sources": self.sources,
                "strategies": self.strategies, "warnings": self.warnings,
                "shard_file": self.shard_file}


class Progress:
    """What a long run reports: the CLI renders it as a bar, the library ignores it."""

    def log(self, message: str) -> None: ...
    def start(self, total: int) -> None: ...
    def advance(self, message: str) -> None: ...


@dataclass(frozen=True)
class _Run:
    """What every source of one run is ingested and verified with: the recipe, where the
    tests run (sandbox, cache), the pool of workers, the seed, and where progress goes."""

    recipe: Recipe
    cache: Path
    box: Sandbox
    pool: Any
    seed: int
    progress: Progress


def _unit(*parts: str) -> float:
    """A deterministic number in [0, 1) from the parts."""
    h = hashlib.sha256("\0".join(parts).encode()).digest()
    return (int.from_bytes(h[:8], "big") + 0.5) / 2**64


def order_candidates(candidates: list[Candidate], weights: dict[str, float], seed: int,
                     snapshot_id: str) -> list[Candidate]:
    """A seeded order stratified by strategy: every prefix holds each strategy (that still
    has candidates) in proportion to its weight, so a strategy with 23 of 1,795 candidates
    is tried as often as one with 1,000 at equal weight, and the first len(strategies)
    places hold one of each. Within a strategy the order is seeded by candidate."""
    by_strategy: dict[str, list[Candidate]] = {}
    for c in sorted(candidates, key=lambda c: (_unit(str(seed), snapshot_id, c.key), c.key)):
        by_strategy.setdefault(c.strategy, []).append(c)
    # Stride scheduling: the next place goes to the strategy whose next candidate is due
    # first ((taken + 1) / weight); ties by a seeded draw, so no name always leads.
    tie = {name: _unit(str(seed), snapshot_id, "strategy", name) for name in by_strategy}
    taken = dict.fromkeys(by_strategy, 0)
    ordered: list[Candidate] = []
    while len(ordered) < len(candidates):
        name = min((n for n in by_strategy if taken[n] < len(by_strategy[n])),
                   key=lambda n: ((taken[n] + 1) / weights[n], tie[n]))
        ordered.append(by_strategy[name][taken[name]])
        taken[name] += 1
    return ordered


def select_candidates(candidates: list[Candidate], weights: dict[str, float], seed: int,
                      snapshot_id: str, cap: int) -> list[Candidate]:
    """The candidates a source may turn into tasks: the first `cap` of its seeded order.

    The cap is taken before sharding and does not depend on any candidate's outcome, so
    every candidate's fate is decided by itself alone: the N shards of a run together hold
    exactly the tasks of the unsharded run, and no shard needs to know what another found.
    """
    return order_candidates(candidates, weights, seed, snapshot_id)[:cap]


def in_shard(snapshot_id: str, candidate: Candidate, index: int, count: int) -> bool:
    """Stable by candidate, not by position: the N shards partition the unsharded work."""
    h = hashlib.sha256(f"{snapshot_id}\0{candidate.key}".encode()).digest()
    return int.from_bytes(h[:8], "big") % count == index


def generate(recipe_path: str | Path, out: str | Path = "out", *, shard: tuple[int, int] = (0, 1),
             workers: int = 1, executor: str = "local", ray_address: str | None = None,
             sandbox: str | None = None, limit: int | None = None, seed: int | None = None,
             resume: bool = True, cache: str | Path | None = None,
             progress: Progress | None = None, difficulty: str | None = None,
             force: bool = False) -> Summary:
    """Run `recipe_path` into `out` (shard `shard` = (I, N)), resuming the same work found
    there; `force` replaces what another run wrote in `out` (see store/outdir.py)."""
    recipe = load_recipe(recipe_path)
    progress = progress or Progress()
    # `difficulty="harder-than=STATS.jsonl"`: a curriculum past what a training run solved.
    curriculum = None
    if difficulty is not None:
        stats = parse_difficulty(difficulty)
        curriculum = harder_than(stats, known_records(Path(out), stats.parent), recipe.task)
        recipe = dataclasses.replace(recipe, task=curriculum.task,
                                     strategies=curriculum.weigh(recipe.strategies))
        progress.log(curriculum.describe())
    cache_dir = cache_root(cache)
    box = get_sandbox(sandbox or recipe.sandbox)
    seed = recipe.seed if seed is None else seed
    out_dir = Path(out)
    if limit is not None and shard[1] > 1:
        raise UserError(f"--limit {limit} with --shard {shard[0]}/{shard[1]}: a limit keeps the first "
                        "tasks found, which no single shard can know; bound a sharded run with "
                        "select.max_tasks_per_source instead")
    identity = {"recipe": recipe.name, "recipe_sha256": recipe.sha256, "seed": seed,
                "shard_count": shard[1], "generator": taskforge_version(), "build": build_digest(),
                "difficulty": sha256_file(parse_difficulty(difficulty)) if difficulty else None}
    warnings = _output_inside_sources(recipe, out_dir, cache_dir)
    if recipe.max_tasks_per_source == 0:
        warnings.append(f"{recipe.path}: select.max_tasks_per_source is 0: no source can give "
                        "a task, this run writes none")
    # Before the directory is claimed: a Ray address that answers nothing fails the run early.
    pool = get_executor(executor, workers, ray_address, sandbox=box.name, cache=cache_dir)
    # The directory is claimed (checked, locked) before the expensive work; a run that fails
    # before it journaled anything leaves the directory as it found it.
    try:
        with claim_output(out_dir, identity, shard, force=force):
            cleaned = prune_dead_scratch(cache_dir)
            if cleaned:
                progress.log(f"removed {cleaned} scratch directories that killed runs left")
            run = _Run(recipe, cache_dir, box, pool, seed, progress)
            return _generate_claimed(run, out_dir, shard, limit=limit, resume=resume,
                                     curriculum=curriculum, identity=identity,
                                     warnings=warnings)
    finally:
        pool.close()  # a Ray instance started for the run ends with it, failed or not


def _generate_claimed(run: _Run, out_dir: Path, shard: tuple[int, int], *, limit: int | None,
                      resume: bool, curriculum: Curriculum | None, identity: dict[str, Any],
                      warnings: list[str]) -> Summary:
    """The run proper, once `out_dir` is claimed for it."""
    recipe, seed, progress = run.recipe, run.seed, run.progress
    # Everything that can fail on bad input happens before any result is written to `out`.
    # A source that cannot be ingested is set aside with its reason; the others go on.
    sources, set_aside = ingest_recipe_sources(recipe, cache=run.cache, sandbox=run.box,
                                               log=progress.log, pool=run.pool)
    sources = _self_graded(run, sources, set_aside, warnings)
    summary = Summary(out=out_dir, shard=f"{shard[0]}/{shard[1]}", warnings=warnings)
    plan: list[tuple[IngestedSource, int, list[Candidate]]] = []
    funnel: Counter[str] = Counter()
    shard_candidates: list[str] = []  # the strategy of each candidate counted in this shard
    for index, source in enumerate(sources):
        if index == 0 and run.pool.name == "local":
            # The first source's screen starts with its servers' warm processes: started
            # now, that overlaps finding its candidates. (Sources verified later start theirs
            # when they come, and a remote pool's workers their own.)
            source.language.warm_up(source.env, run.box, run.cache, run.pool.workers)
        # The recipe's strategies this source's language has (a strategy another language
        # alone registers finds nothing here).
        found = [c for name in recipe.strategies if (s := source.language.strategy(name))
                 for c in s.candidates(source.project, source.baseline, recipe.select)]
        if curriculum is not None:
            found = curriculum.select(source.snapshot.name, found)
        summary.warnings += [f"{source.snapshot.name}: {p}: {why}"
                             for p, why in sorted(source.project.skipped.items())]
        cap = recipe.max_tasks_per_source if source.spec.max_tasks is None \
            else source.spec.max_tasks
        selected = select_candidates(found, recipe.strategies, seed, source.snapshot.id, cap)
        # Candidates are counted in the shard they hash to, so shards' funnels add up.
        share_strategies = [c.strategy for c in found if in_shard(source.snapshot.id, c, *shard)]
        share = len(share_strategies)
        shard_candidates += share_strategies
        funnel["candidates"] += share
        mine = [c for c in selected if in_shard(source.snapshot.id, c, *shard)]
        plan.append((source, share, mine))

    remove_partial_writes(out_dir, *shard)
    journal = Journal(out_dir / ".journal" / shard_name(*shard), resume=resume)
    records: list[dict[str, Any]] = []
    rejections: Counter[str] = Counter()
    all_tried: list[dict[str, Any]] = []
    timing: dict[str, dict[str, float]] = {}  # snapshot -> stage -> seconds (TIMED_STAGES)
    budget = limit
    for source, share, ordered in plan:
        # Without --limit every selected candidate is tried; with it (unsharded runs only) the
        # run stops at the first `limit` tasks of the seeded order.
        cap = len(ordered) if budget is None else budget
        started = time.monotonic()
        spent: Counter[str] = Counter()
        emitted, tried = _run_source(run, source, ordered, cap=cap, journal=journal, spent=spent)
        verify_seconds = round(time.monotonic() - started, 1)
        timing[source.snapshot.id] = {stage: round({**source.seconds, **spent}.get(stage, 0.0), 3)
                                      for stage in TIMED_STAGES}
        all_tried += tried
        for entry in tried:
            funnel["tried"] += 1
            if entry["status"] == "rejected":
                rejections[entry["reason"]] += 1
                if entry["reason"] not in NOT_DELETED:
                    funnel["deleted"] += 1
            else:
                funnel["deleted"] += 1
                funnel["verified"] += 1
        records += emitted
        funnel["emitted"] += len(emitted)
        if budget is not None:
            budget -= len(emitted)
        summary.sources.append({
            "name": source.snapshot.name, "source": source.snapshot.source,
            "language": source.language.name,
            "snapshot": source.snapshot.id, "commit": source.snapshot.commit,
            "license": source.snapshot.license, "tests": len(source.baseline.tests),
            "stable": len(source.baseline.stable), "flaky": len(source.baseline.flaky),
            "failing": len(source.baseline.failing),
            # Names of the tests the baseline left out of PASS_TO_PASS (a long list is cut).
            "flaky_tests": list(source.baseline.flaky[:MAX_LISTED_TESTS]),
            # Stable in the baseline, but not passed when the grader graded the unchanged code.
            "ungradable": len(source.baseline.ungradable),
            "ungradable_tests": list(source.baseline.ungradable[:MAX_LISTED_TESTS]),
            "failing_tests": list(source.baseline.failing[:MAX_LISTED_TESTS]),
            "baseline_seconds": list(source.baseline.run_seconds),
            "env_build_seconds": source.env.build_seconds,
            "candidates": share, "selected": len(ordered), "tried": len(tried),
            "emitted": len(emitted),
            "rejections": dict(sorted(Counter(e["reason"] for e in tried
                                              if e["status"] == "rejected").items())),
            "verify_seconds": verify_seconds,
            "seconds_per_task": round(verify_seconds / len(emitted), 2) if emitted else None})
        if emitted:
            export_snapshot(source.snapshot.root, source.snapshot.id, out_dir)

    summary.sources += [entry.to_dict() for entry in set_aside]
    summary.warnings += [f"{entry.spec.describe()}: set aside: {entry.reason}" for entry in set_aside]
    shard_path = write_shard(out_dir, shard[0], shard[1], records)
    summary.funnel = {k: funnel[k] for k in FUNNEL_STAGES}
    summary.rejections = dict(sorted(rejections.items()))
    summary.shard_file = shard_path.name if shard_path else ""
    counts = count_strategies(recipe.strategies, shard_candidates, all_tried, records)
    summary.strategies = strategy_table(counts, records)
    # Shards of one run may finish side by side: one merge of the manifests at a time.
    with directory_lock(out_dir):
        write_manifests(out_dir, shard[0], shard[1], {
            "recipe": recipe.name, "recipe_sha256": recipe.sha256, "seed": seed,
            "generator": {"version": taskforge_version(), "build": identity["build"]},
            "difficulty": identity["difficulty"],
            "counts": {"tasks": len(records)}, "funnel": summary.funnel,
            "rejections": summary.rejections, "strategies": counts,
            "sources": [{k: v for k, v in s.items() if "seconds" not in k} for s in summary.sources],
            "warnings": summary.warnings,
            # The manifest's only timing field: what must not be compared across reruns.
            "timing": timing,
        })
        summary.warnings += report_after_run(out_dir)
    return summary


def _self_graded(run: _Run, sources: list[IngestedSource], set_aside: list[SetAside],
                 warnings: list[str]) -> list[IngestedSource]:
    """Each source's original code graded with the checks (verify/self_grade.py), the ones
    not cached yet as jobs of the run's pool: a source the grader cannot pass, or left with
    fewer stable tests than `select.min_stable_tests`, is set aside (added to `set_aside`);
    tests it does not pass are left out of the stable set. Returns the sources that go on;
    when every source was set aside, the first reason is the run's error, as at ingest."""
    if not sources:
        return []
    box, cache = run.box, run.cache  # what a job needs, not the run (which holds the pool)

    def job(source: GradedSource) -> SelfGrade:
        return self_grade(source, box, cache)

    graded = [GradedSource.of(source) for source in sources]
    grades = {(item.snapshot.id, item.env.key): kept for item in graded
              if (kept := cached_self_grade(item, box, cache)) is not None}
    todo = [item for item in graded if (item.snapshot.id, item.env.key) not in grades]
    needs = [entry for source in sources for entry in source.cache_entries()]
    for done, grade in run.pool.map_unordered(job, todo, needs=needs):
        grades[done.snapshot.id, done.env.key] = grade
    kept, dropped = [], []
    for source, item in zip(sources, graded, strict=True):
        grade = grades[source.snapshot.id, source.env.key]
        keep_self_grade(item, box, cache, grade)
        name = source.snapshot.name
        left = len(source.baseline.stable) - len(grade.ungradable)
        reason = grade.unusable
        if reason is None and left < run.recipe.min_stable_tests:
            reason = (f"{left} stable tests the grader passes, fewer than "
                      f"select.min_stable_tests ({run.recipe.min_stable_tests})")
        if reason is not None:
            run.progress.log(f"{name}: set aside: {reason}")
            dropped.append(SetAside(source.spec, reason, source.snapshot))
            continue
        if grade.ungradable:
            run.progress.log(ungradable_line(name, grade))
        if grade.seconds > GRADE_TIMEOUT:
            warnings.append(f"{name}: the grader took {grade.seconds:.0f}s on the unchanged code, "
                            f"more than task.grade's default timeout ({GRADE_TIMEOUT:.0f}s): "
                            "grade its tasks with a longer one")
        kept.append(dataclasses.replace(without_ungradable(source, grade),
                                        seconds={**source.seconds, "self_grade": grade.seconds}))
    if not kept:
        raise dropped[0].error()
    set_aside += dropped
    return kept


def _output_inside_sources(recipe: Recipe, out: Path, cache: Path) -> list[str]:
    """Warnings for path sources that contain the output directory or the cache: neither ever
    enters a snapshot (sources/store.py leaves them out), which the user should know. A
    source that is the output directory itself is refused."""
    warnings = []
    for n, spec in enumerate(recipe.sources):
        if spec.kind != "path":
            continue
        root = (Path.cwd() / spec.location).expanduser().resolve()
        for what, path in (("output directory", out.resolve()), ("cache", cache)):
            if path == root:
                raise UserError(f"{recipe.path}: sources[{n}].path: {spec.location} is taskforge's "
                                f"{what}; give the {what} a place outside the source")
            if root in path.parents:
                warnings.append(f"{spec.location}: holds taskforge's {what} "
                                f"{path.relative_to(root)}/, left out of the snapshot")
    return warnings


def _run_source(run: _Run, source: IngestedSource, ordered: list[Candidate], *, cap: int,
                journal: Journal, spent: Counter[str]) -> tuple[list[dict], list[dict]]:
    """Verify candidates in their seeded order until `cap` tasks are emitted.

    Work goes in waves: the wave is screened by the forking fast path, then what survives
    is confirmed on real workspaces. The emitted tasks are the first `cap` successes in the
    seeded order, so the result depends neither on timing nor on the number of workers.
    `spent` gathers this run's seconds: the screen's and the confirmation's wall clock, and
    the leak scans' share of the confirmation (summed over the tasks' workers).
    """
    recipe, pool, progress = run.recipe, run.pool, run.progress
    results: dict[str, dict[str, Any]] = {}
    position = 0
    progress.start(len(ordered))
    verifier = Verifier(source, run.box, run.cache, run_timeout(source, recipe.verify.timeout_s),
                        recipe.verify.repeats, recipe.task,
                        full_suite=recipe.verify.full_suite,
                        allow_collection_breaks=recipe.verify.allow_collection_breaks,
                        recipe_sha256=recipe.sha256, seed=run.seed, build=build_digest())

    def journal_key(candidate: Candidate) -> str:
        return f"{source.snapshot.id}:{candidate.key}"

    def finish(candidate: Candidate, entry: dict[str, Any]) -> None:
        if journal_key(candidate) not in journal.done:
            journal.add(entry)
        results[candidate.key] = entry
        outcome = "task" if entry["status"] == "emitted" else f"rejected: {entry['reason']}"
        progress.advance(f"{source.snapshot.name} {candidate.symbol}: {outcome}")

    def rejected(candidate: Candidate, why: Rejected) -> dict[str, Any]:
        return {"key": journal_key(candidate), "status": "rejected", "reason": why.reason,
                "detail": why.detail, **why.facts}

    def emitted_so_far() -> int:
        return sum(e["status"] == "emitted" for e in results.values())

    while position < len(ordered) and emitted_so_far() < cap:
        # Expect about half to survive; never fewer than the pool can keep busy.
        size = max(2 * pool.workers, 2 * (cap - emitted_so_far()))
        wave = ordered[position:position + size]
        position += len(wave)
        todo = []
        for candidate in wave:
            if journal_key(candidate) in journal.done:
                finish(candidate, journal.done[journal_key(candidate)])
            else:
                todo.append(candidate)
        if todo:
            progress.log(f"{source.snapshot.name}: screening {len(todo)} candidates")
        screen_started = time.monotonic()
        verdicts = verifier.screen(todo, pool)
        spent["screen"] += time.monotonic() - screen_started
        confirm = []
        for candidate in todo:
            verdict = verdicts[candidate.key]
            if verdict.rejection:
                finish(candidate, rejected(candidate, verdict.rejection))
            else:
                confirm.append((candidate, verdict))

        def job(item: tuple[Candidate, Screened]) -> dict[str, Any]:
            candidate, screened = item
            try:
                strategy = source.language.strategy(candidate.strategy)
                assert strategy is not None  # its candidates came from this language
                record = verifier.make_task(strategy, candidate, screened)
                return {"key": journal_key(candidate), "status": "emitted", "record": record}
            except Rejected as why:
                return rejected(candidate, why)

        # Confirm in seeded order, a pool's width at a time, and stop once the cap is
        # reached: confirmation is the expensive step, never spend it on surplus tasks.
        for start in range(0, len(confirm), pool.workers):
            if emitted_so_far() >= cap:
                break
            confirm_started = time.monotonic()
            for (candidate, _screened), entry in pool.map_unordered(
                    job, confirm[start:start + pool.workers], needs=source.cache_entries()):
                finish(candidate, entry)
                if entry["status"] == "emitted":
                    spent["scan"] += entry["record"]["verification"]["scan_seconds"]
            spent["confirmation"] += time.monotonic() - confirm_started
    tried = [results[c.key] for c in ordered[:position] if c.key in results]
    emitted = [e["record"] for e in tried if e["status"] == "emitted"][:cap]
    return emitted, tried
