"""Shards and resume, with real `taskforge generate` processes on the bundled sample repositories.

A run killed with SIGKILL at several points resumes to the same tasks, byte for byte once the
timing fields are taken out; three `--shard i/3` jobs in separate directories, copied into one
as a CI merge job does, read as the unsharded run (stats, load_tasks). `sample_output` is the
one small generated directory the library and export tests share (resumed, not regenerated).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT, run_cli, stderr_lines, write_recipe

import taskforge
from taskforge.store import manifest as manifest_module
from taskforge.store.manifest import merge_manifests
from taskforge.store.shards import strip_timing

# Real sharded and killed generate runs:
# not in the quick loop (`make test-quick`).
pytestmark = pytest.mark.slow

UNSHARDED = "tasks-00000-of-00001.jsonl"
# Two sources, two tasks each: small enough for CI, enough to merge per-source figures.
RECIPE = f"""\
    name: shards-sample
    seed: 5
    sources:
      - path: {REPO_ROOT / "sample_repos" / "textkit"}
      - path: {REPO_ROOT / "sample_repos" / "spans"}
    strategies: [stub-function]
    select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: 2}}
    verify: {{repeats: 2, timeout_s: 300}}
    sandbox: none
"""


def sample_recipe(cache: Path) -> Path:
    return write_recipe(cache / "shards-sample" / "recipe.yaml", RECIPE)


def sample_output(cache: Path, shard: tuple[int, int] = (0, 1)) -> Path:
    """The shared sample directory (shards of one count go to one directory). Generated once
    per session: later calls resume from the journal and rewrite the same bytes."""
    out = cache / "shards-sample" / f"out-of-{shard[1]}"
    taskforge.generate(sample_recipe(cache), out=out, shard=shard, cache=cache)
    return out


def canonical_lines(shard: Path) -> list[str]:
    """A shard's lines with the timing fields taken out: what must be byte-identical."""
    return [json.dumps(strip_timing(json.loads(line)), sort_keys=True)
            for line in shard.read_text().splitlines()]


def differences(shard: Path, expected: Path) -> list[str]:
    """Where two shards differ, by task and field: the message of a failed comparison."""
    def by_id(path: Path) -> dict[str, dict]:
        return {r["instance_id"]: strip_timing(r) for r in map(json.loads, path.open())}
    got, want = by_id(shard), by_id(expected)
    found = [f"only in {shard.parent.name}: {i}" for i in sorted(set(got) - set(want))]
    found += [f"missing: {i}" for i in sorted(set(want) - set(got))]
    for i in sorted(set(got) & set(want)):
        found += [f"{i}: {key}: {got[i].get(key)!r} != {want[i].get(key)!r}"
                  for key in sorted(set(got[i]) | set(want[i])) if got[i].get(key) != want[i].get(key)]
    return found


def without_sha(manifest: dict) -> dict:
    """A manifest without its shards' hashes and its timing (seconds per source and stage)."""
    return {k: v for k, v in manifest.items() if k not in ("sha256", "shards", "timing")}


@pytest.fixture(scope="module")
def reference(tf_cache: Path) -> Path:
    """The uninterrupted, unsharded run."""
    return sample_output(tf_cache)


def start_generate(recipe: Path, out: Path) -> subprocess.Popen[str]:
    # A session of its own, so the kill takes the whole process tree as a CI runner would.
    return subprocess.Popen([sys.executable, "-m", "taskforge", "generate", str(recipe),
                             "--out", str(out)], cwd=out.parent, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def journal_lines(out: Path) -> int:
    journal = out / ".journal" / UNSHARDED
    return journal.read_bytes().count(b"\n") if journal.exists() else 0


def kill_when(proc: subprocess.Popen[str], ready: callable, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, f"generate finished before the kill point: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "kill point never reached"
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL


def assert_only_complete_lines(out: Path) -> None:
    for shard in out.glob("tasks-*.jsonl"):
        data = shard.read_text()
        assert data == "" or data.endswith("\n"), shard
        for line in data.splitlines():
            json.loads(line)
    for manifest in out.glob("manifest*.json"):
        json.loads(manifest.read_text())


def test_sigkill_twice_then_resume_is_byte_identical(reference: Path, tf_cache: Path,
                                                     tmp_path: Path) -> None:
    recipe = sample_recipe(tf_cache)
    tried = json.loads((reference / "manifest.json").read_text())["funnel"]["tried"]
    out = tmp_path / "out"
    out.mkdir()
    journal = out / ".journal" / UNSHARDED

    # First kill: one candidate finished and journalled, the next one in flight.
    kill_when(start_generate(recipe, out), lambda: journal_lines(out) >= 1)
    assert_only_complete_lines(out)
    first_kill = journal.read_text().splitlines()
    # What a kill in the middle of an append leaves: half a line at the end.
    with journal.open("a") as f:
        f.write(first_kill[0][: len(first_kill[0]) // 2])

    # Second kill, on the resumed run: every candidate journalled, the run is exporting the
    # snapshots and writing the shard and the manifests.
    kill_when(start_generate(recipe, out), lambda: journal_lines(out) >= tried)
    assert_only_complete_lines(out)

    proc = run_cli("generate", str(recipe), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert canonical_lines(out / UNSHARDED) == canonical_lines(reference / UNSHARDED), \
        differences(out / UNSHARDED, reference / UNSHARDED)
    manifest = json.loads((out / "manifest-00000-of-00001.json").read_text())
    assert without_sha(manifest) == without_sha(
        json.loads((reference / "manifest-00000-of-00001.json").read_text()))
    assert not list(out.glob("*.tmp")), "a killed write's temporary file was left behind"
    # Finished work was skipped: the journal holds each candidate once, and the task
    # journalled before the first kill keeps that run's creation time.
    resumed = [json.loads(line) for line in journal.read_text().splitlines()]
    assert len(resumed) == len({e["key"] for e in resumed}) == tried
    before = json.loads(first_kill[0])
    [after] = [e for e in resumed if e["key"] == before["key"]]
    assert after == before


@pytest.fixture(scope="module")
def ci_jobs(tf_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three `generate --shard i/3` jobs, each in a directory of its own, run at the same
    time as a CI matrix runs them."""
    root = tmp_path_factory.mktemp("ci")
    recipe = sample_recipe(tf_cache)
    jobs = [root / f"job-{i}" for i in range(3)]
    procs = [subprocess.Popen([sys.executable, "-m", "taskforge", "generate", str(recipe),
                               "--out", str(job), "--shard", f"{i}/3"], cwd=root,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for i, job in enumerate(jobs)]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    return jobs


def merge(jobs: list[Path], into: Path) -> Path:
    """The CI merge step: every job's directory copied into one (cp -r job-*/. merged/)."""
    for job in jobs:
        shutil.copytree(job, into, dirs_exist_ok=True)
    return into


def test_three_ci_shards_merge_to_the_unsharded_run(reference: Path, ci_jobs: list[Path],
                                                    tmp_path: Path) -> None:
    for i, job in enumerate(ci_jobs):
        tasks = json.loads((job / f"manifest-0000{i}-of-00003.json").read_text())["counts"]["tasks"]
        # A shard without tasks is no file (JSON loaders cannot read an empty one).
        assert sorted(p.name for p in job.glob("*.json*")) == [
            f"manifest-0000{i}-of-00003.json", "manifest.json",
            *([f"tasks-0000{i}-of-00003.jsonl"] if tasks else [])]
    merged = merge(ci_jobs, tmp_path / "merged")

    shards = sorted(merged.glob("tasks-*-of-00003.jsonl"))
    assert len(list(merged.glob("manifest-*-of-00003.json"))) == 3
    ids = [json.loads(line)["instance_id"] for s in shards for line in s.read_text().splitlines()]
    assert len(ids) == len(set(ids)), "a task is in two shards"
    assert sorted(line for s in shards for line in canonical_lines(s)) == \
        sorted(canonical_lines(reference / UNSHARDED))

    loaded = [strip_timing(t.record) for t in taskforge.load_tasks(merged)]
    assert loaded == [strip_timing(t.record) for t in taskforge.load_tasks(reference)]

    stats = run_cli("stats", str(merged), "--json", cwd=tmp_path)
    assert stats.returncode == 0, stats.stderr
    alone = run_cli("stats", str(reference), "--json", cwd=tmp_path)
    merged_stats, reference_stats = json.loads(stats.stdout), json.loads(alone.stdout)
    assert merged_stats["missing_shards"] == []
    assert merged_stats["shards"] == [s.name for s in shards]
    for key in ("funnel", "rejections", "sources", "strategies", "tasks"):
        assert merged_stats[key] == reference_stats[key], key
    assert len(merged_stats["sources"]) == 2
    assert merged_stats["funnel"]["candidates"] > merged_stats["funnel"]["tried"] == 4
    assert_strategy_figures(merged_stats, [json.loads(line) for s in shards
                                           for line in s.read_text().splitlines()])
    # manifest.json, rewritten by each job as it finished, holds the same per-strategy counts.
    for job in ci_jobs:
        counts = json.loads((job / "manifest.json").read_text())["strategies"]["stub-function"]
        assert counts["tried"] == sum(json.loads(p.read_text())["strategies"]["stub-function"]["tried"]
                                      for p in job.glob("manifest-*-of-00003.json"))
    whole = json.loads((reference / "manifest.json").read_text())["strategies"]
    assert whole == merged_stats["strategies"]


def assert_strategy_figures(stats: dict, records: list[dict]) -> None:
    """Per-strategy yield and difficulty agree with the funnel and with the records."""
    [(name, row)] = stats["strategies"].items()
    assert name == "stub-function"
    assert (row["candidates"], row["tried"], row["emitted"]) == \
        (stats["funnel"]["candidates"], stats["funnel"]["tried"], stats["funnel"]["emitted"])
    assert row["yield"] == round(row["emitted"] / row["tried"], 4)
    assert row["rejections"] == stats["rejections"]
    assert sum(row["rejections"].values()) == row["tried"] - row["emitted"]
    scores = sorted(r["difficulty"]["score"] for r in records)
    assert row["difficulty"]["score"]["median"] == round(statistics.median(scores), 2)
    assert row["difficulty"]["lines_deleted"]["mean"] == \
        round(sum(r["difficulty"]["lines_deleted"] for r in records) / len(records), 2)
    assert set(row["difficulty"]) == {"score", "lines_deleted", "fail_to_pass", "call_depth"}


def test_every_shard_loads_with_datasets_and_with_load_tasks(ci_jobs: list[Path], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Local files only: the loader must not look for a hub.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets

    merged = merge(ci_jobs, tmp_path / "merged")
    shards = sorted(merged.glob("tasks-*.jsonl"))
    for files, tasks_path in [([s], s) for s in shards] + [(shards, merged)]:
        rows = datasets.load_dataset("json", data_files=[str(f) for f in files], split="train",
                                     cache_dir=str(tmp_path / "hf"))
        records = {t.instance_id: t.record for t in taskforge.load_tasks(tasks_path)}
        assert sorted(rows["instance_id"]) == sorted(records)
        for row in rows:
            record = records[row["instance_id"]]
            for key in ("FAIL_TO_PASS", "PASS_TO_PASS", "patch", "deletion_patch", "test_patch",
                        "deleted", "difficulty", "environment", "generator", "license"):
                assert row[key] == record[key], (row["instance_id"], key)


def test_stats_names_a_missing_shard_and_refuses_a_changed_one(ci_jobs: list[Path],
                                                              tmp_path: Path) -> None:
    i = next(i for i, job in enumerate(ci_jobs) if list(job.glob("tasks-*.jsonl")))
    partial = merge([ci_jobs[i]], tmp_path / "partial")
    missing = [f"{n}/3" for n in range(3) if n != i]
    proc = run_cli("stats", str(partial), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["missing_shards"] == missing
    proc = run_cli("stats", str(partial), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert stderr_lines(proc) == [f"taskforge: warning: {partial}: shards {', '.join(missing)} "
                                  "are missing"]

    shard = partial / f"tasks-0000{i}-of-00003.jsonl"
    shard.write_text(shard.read_text()[: -len(shard.read_text()) // 3])
    proc = run_cli("stats", str(partial), cwd=tmp_path)
    assert proc.returncode == 2
    assert stderr_lines(proc) == [f"taskforge: error: {shard}: sha256 differs from the one in "
                                  f"manifest-0000{i}-of-00003.json (changed or truncated after "
                                  "it was written)"]


def test_shards_of_different_counts_cannot_share_a_directory(reference: Path,
                                                             ci_jobs: list[Path],
                                                             tmp_path: Path) -> None:
    mixed = merge([reference, ci_jobs[0]], tmp_path / "mixed")
    proc = run_cli("stats", str(mixed), cwd=tmp_path)
    assert proc.returncode == 2
    [line] = stderr_lines(proc)
    assert "shard_count 1 differs" in line or "shard_count 3 differs" in line
    assert "Traceback" not in proc.stderr


def test_shards_of_different_builds_cannot_share_a_directory(ci_jobs: list[Path],
                                                             tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI matrix whose jobs ran two builds of taskforge (a commit landed between them):
    one merged directory would hold tasks verified by different code. Each shard's manifest
    names its build (`generator`), and the merge refuses two."""
    mixed = merge(ci_jobs, tmp_path / "mixed")
    edited = mixed / "manifest-00001-of-00003.json"
    part = json.loads(edited.read_text())
    part["generator"] = {**part["generator"], "build": "0" * 16}
    edited.write_text(json.dumps(part))
    # Positive control: a merge that compares the recipe, seed and shard count takes them.
    with monkeypatch.context() as naive:
        naive.setattr(manifest_module, "RUN_FIELDS", ("recipe_sha256", "seed", "shard_count"))
        assert merge_manifests(mixed)["missing_shards"] == []
    proc = run_cli("stats", str(mixed), cwd=tmp_path)
    assert proc.returncode == 2
    [line] = stderr_lines(proc)
    assert line.startswith("taskforge: error: manifest-00001-of-00003.json: generator ")
    assert "'build': '0000000000000000'" in line and "shards of different runs" in line
    assert "Traceback" not in proc.stderr


def test_limit_with_several_shards_is_refused_before_anything_is_written(tf_cache: Path,
                                                                         tmp_path: Path) -> None:
    proc = run_cli("generate", str(sample_recipe(tf_cache)), "--out", str(tmp_path / "out"),
                   "--shard", "1/3", "--limit", "2", cwd=tmp_path)
    assert proc.returncode == 2
    [line] = stderr_lines(proc)
    assert line.startswith("taskforge: error: --limit 2 with --shard 1/3:")
    assert not (tmp_path / "out").exists()
