"""The library as an RL data loader uses it: TaskSet indexing and ranks, the PyTorch-style
iterable split across DataLoader workers (torch simulated: it is not a dependency), and
materializing on a machine whose cache has never seen the snapshot."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from test_shards import sample_output

import taskforge
from taskforge.tasks import TaskIterable

# A real generate run, materialized and graded:
# not in the quick loop (`make test-quick`).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def out(tf_cache: Path) -> Path:
    return sample_output(tf_cache)


@pytest.fixture(scope="module")
def tasks(out: Path) -> taskforge.TaskSet:
    return taskforge.load_tasks(out)


def test_len_index_slice_and_iteration(tasks: taskforge.TaskSet) -> None:
    ids = [t.instance_id for t in tasks]
    assert len(tasks) == len(ids) == 4
    assert ids == sorted(ids)
    assert tasks[0].instance_id == ids[0] and tasks[-1].instance_id == ids[-1]
    assert isinstance(tasks[1:3], taskforge.TaskSet)
    assert [t.instance_id for t in tasks[1:3]] == ids[1:3]


def test_rank_shards_are_disjoint_and_cover_the_set(tasks: taskforge.TaskSet) -> None:
    ids = [t.instance_id for t in tasks]
    parts = [[t.instance_id for t in tasks.shard(rank, 3)] for rank in range(3)]
    assert sorted(i for part in parts for i in part) == ids
    assert [len(p) for p in parts] == [2, 1, 1]
    with pytest.raises(ValueError):
        tasks.shard(3, 3)


def test_iterable_without_torch_yields_every_task(tasks: taskforge.TaskSet) -> None:
    iterable = tasks.as_iterable()
    assert isinstance(iterable, TaskIterable)
    assert [t.instance_id for t in iterable] == [t.instance_id for t in tasks]
    # Picklable, as a DataLoader started with spawn needs.
    again = pickle.loads(pickle.dumps(iterable))
    assert [t.instance_id for t in again] == [t.instance_id for t in tasks]


# torch.utils.data's two names taskforge uses, as torch defines them for a worker.
FAKE_TORCH = {
    "torch/__init__.py": "",
    "torch/utils/__init__.py": "",
    "torch/utils/data.py": '''\
        class IterableDataset:
            pass

        worker = None  # what DataLoader sets inside each worker process

        def get_worker_info():
            return worker
    ''',
}
WORKERS_SCRIPT = '''\
    import json, pickle, sys, types
    import torch.utils.data as data
    import taskforge

    tasks = taskforge.load_tasks(sys.argv[1]).shard(int(sys.argv[2]), int(sys.argv[3]))
    iterable = tasks.as_iterable()
    assert isinstance(iterable, data.IterableDataset)
    seen = {"all": [t.instance_id for t in iterable]}
    for n in range(2):
        data.worker = types.SimpleNamespace(id=n, num_workers=2)
        # Each worker gets the dataset pickled, as with the spawn start method.
        seen[n] = [t.instance_id for t in pickle.loads(pickle.dumps(iterable))]
    print(json.dumps(seen))
'''


def test_iterable_splits_across_dataloader_workers(out: Path, tasks: taskforge.TaskSet,
                                                   tmp_path: Path) -> None:
    for rel, text in FAKE_TORCH.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    ids = [t.instance_id for t in tasks]
    covered = []
    for rank in range(2):  # two data-parallel ranks, two DataLoader workers each
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(WORKERS_SCRIPT), str(out),
                               str(rank), "2"], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(tmp_path)})
        assert proc.returncode == 0, proc.stderr
        seen = json.loads(proc.stdout)
        assert seen["all"] == ids[rank::2]
        assert seen["0"] == ids[rank::2][0::2] and seen["1"] == ids[rank::2][1::2]
        covered += seen["0"] + seen["1"]
    assert sorted(covered) == ids


def test_materialize_on_a_fresh_machine_unpacks_the_snapshot_once(out: Path,
                                                                 tmp_path: Path) -> None:
    fresh = tmp_path / "fresh-cache"
    tasks = taskforge.load_tasks(out, cache=fresh)
    first = tasks[0].materialize(tmp_path / "ws0")
    [tree] = (fresh / "snapshots").glob("*/tree")
    inode = tree.stat().st_ino
    second = tasks[1].materialize(tmp_path / "ws1")
    assert tree.stat().st_ino == inode, "the snapshot was unpacked again"
    assert tasks[0].record["snapshot"] == tasks[1].record["snapshot"]
    assert len(list((fresh / "snapshots").glob("*/tree"))) == 1
    for workspace, task in ((first, tasks[0]), (second, tasks[1])):
        assert not list(workspace.rglob("*.tar.gz")), "a snapshot archive reached the workspace"
        symbol = task.record["deleted"][0]["path"]
        assert "NotImplementedError" in (workspace / symbol).read_text()


def test_a_data_loader_does_not_load_the_generator() -> None:
    """`from taskforge import load_tasks` (a data loader's import) leaves the generator, its
    strategies' driver and ingestion unloaded; `taskforge.generate` still works when asked."""
    code = textwrap.dedent("""
        import sys
        from taskforge import load_tasks, Task
        heavy = [m for m in ("taskforge.generate", "taskforge.ingest", "taskforge.verify.confirm", "libcst",
                             "rich", "click") if m in sys.modules]
        print(heavy)
        import taskforge
        print(callable(taskforge.generate), "taskforge.generate" in sys.modules)
        # Asked again, and after the CLI imported the submodule of the same name.
        import taskforge.cli
        print(callable(taskforge.generate), callable(taskforge.generate))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines() == ["[]", "True True", "True True"]


def test_a_record_from_before_the_state_watch_loads(out: Path, tmp_path: Path) -> None:
    """Records written before `generate` watched what failing tests leave lack
    `verification.leaves_state` and `state_usual`: they load (and `taskforge verify` counts
    every leftover against them, tests/test_leftover_state.py)."""
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    shard = next(copy.glob("tasks-*.jsonl"))
    records = [json.loads(line) for line in shard.read_text().splitlines()]
    assert all("state_usual" in r["verification"] for r in records)
    for record in records:
        del record["verification"]["leaves_state"], record["verification"]["state_usual"]
    shard.write_text("".join(json.dumps(r) + "\n" for r in records))
    loaded = taskforge.load_tasks(shard)
    assert [t.instance_id for t in loaded] == [r["instance_id"] for r in records]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: r.pop("FAIL_TO_PASS"), "task record without `FAIL_TO_PASS`"),
    (lambda r: r.update(PASS_TO_PASS="tests/t.py::test_a"),
     "task record field `PASS_TO_PASS` is str, expected list"),
    (lambda r: r["verification"].pop("repeats"), "task record without `verification.repeats`"),
    (lambda r: r["verification"].update(state_usual="x:y"),
     "task record field `verification.state_usual` is str, expected list"),
])
def test_a_record_of_the_wrong_shape_is_one_line_naming_the_field(
        out: Path, tmp_path: Path, edit: Any, message: str) -> None:
    """Every reader gets records of one type (model.TaskRecord): a shard line that lacks a
    field, or holds one of another type, is refused where it is read, naming the line and the
    field (exit 2 from the CLI, UserError from load_tasks), not a KeyError three stages later."""
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    shard = next(copy.glob("tasks-*.jsonl"))
    lines = shard.read_text().splitlines()
    record = json.loads(lines[1])
    edit(record)
    lines[1] = json.dumps(record)
    shard.write_text("\n".join(lines) + "\n")
    # The shard file itself (a directory's manifest would refuse the edited shard first).
    with pytest.raises(taskforge.UserError, match=f"{shard.name}:2: {message}"):
        taskforge.load_tasks(shard)
    proc = subprocess.run([sys.executable, "-m", "taskforge", "show", str(shard),
                           record["instance_id"]], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert [ln for ln in proc.stderr.splitlines() if ln.strip()] == \
        [f"taskforge: error: {shard}:2: {message}"]
