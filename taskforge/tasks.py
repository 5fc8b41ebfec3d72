"""Tasks as a loader sees them: a record plus the directory that holds its snapshot."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from taskforge.cache import cache_root
from taskforge.errors import UserError
from taskforge.grade import Mode, grade_workspace
from taskforge.languages import language_of
from taskforge.languages.base import Runner
from taskforge.materialize import materialize_record
from taskforge.model import Environment, GradeResult, TaskRecord, record_snapshot
from taskforge.sandbox import Sandbox, get_sandbox
from taskforge.store.shards import read_records, task_dir
from taskforge.store.snapshots import snapshot_root


@dataclass
class Task:
    record: TaskRecord
    directory: Path
    cache: Path | None = None

    @property
    def instance_id(self) -> str:
        return self.record["instance_id"]

    def _cache(self) -> Path:
        return cache_root(self.cache)

    def snapshot_root(self) -> Path:
        return snapshot_root(self.directory, self.record["snapshot"], self._cache())

    def environment(self) -> Environment:
        """The task's environment, rebuilt from its recorded spec on first use."""
        return language_of(self.record).environment_from_record(
            self.record["environment"], record_snapshot(self.record, self.snapshot_root()),
            self._cache())

    def materialize(self, dest: str | Path) -> Path:
        """A fresh, sanitized workspace for the agent at `dest`."""
        workspace, _removed = materialize_record(self.record, self.snapshot_root(), Path(dest))
        return workspace

    def grade(self, workspace: str | Path, *, mode: Mode = "binary",
              sandbox: str | Sandbox = "auto", timeout: float = 300.0) -> GradeResult:
        """Reward the solution in `workspace` (which is left untouched). `mode="binary"`: 1.0
        when every FAIL_TO_PASS and PASS_TO_PASS test passes; `"fraction"`: the share of
        FAIL_TO_PASS passed when all PASS_TO_PASS pass, else 0."""
        box = get_sandbox(sandbox) if isinstance(sandbox, str) else sandbox
        solution = Path(workspace)
        if not solution.is_dir():
            raise UserError(f"{solution}: workspace does not exist")
        return grade_workspace(self.record, solution, self.snapshot_root(),
                               self.runner(box, timeout=timeout), mode=mode)

    def reverify(self, *, sandbox: Sandbox, full_suite: bool = False, grade: bool = False,
                 timeout: float = 300.0) -> list[str]:
        """Re-run, from scratch, every gate `generate` ran: the labels, the trivial solutions,
        the collection check and the leak scan of a fresh materialization; with `grade`, the
        grader too (the reference solution must score 1.0, the start state 0). Returns the
        problems found, each `gate: what` (empty: verified)."""
        from taskforge.verify.reverify import reverify

        return reverify(self.record, self.snapshot_root(), self.runner(sandbox, timeout=timeout),
                        full_suite=full_suite, grade=grade)

    def runner(self, sandbox: Sandbox, *, timeout: float = 300.0) -> Runner:
        """How this task's tests run: its language and environment (rebuilt on first use),
        `sandbox`, `timeout` for one run, and the task's cache."""
        return Runner(language_of(self.record), self.environment(), sandbox, timeout,
                      cache=self._cache())


class TaskSet:
    """The tasks of an output directory (or one shard file), in instance-id order."""

    def __init__(self, tasks: list[Task]) -> None:
        self._tasks = tasks

    def __len__(self) -> int:
        return len(self._tasks)

    @overload
    def __getitem__(self, index: int) -> Task: ...
    @overload
    def __getitem__(self, index: slice) -> TaskSet: ...
    def __getitem__(self, index: int | slice) -> Task | TaskSet:
        if isinstance(index, slice):
            return TaskSet(self._tasks[index])
        return self._tasks[index]

    def __iter__(self) -> Iterator[Task]:
        return iter(self._tasks)

    def by_id(self, instance_id: str) -> Task:
        for task in self._tasks:
            if task.instance_id == instance_id:
                return task
        raise UserError(f"no task with instance_id {instance_id!r}")

    def shard(self, rank: int, world_size: int) -> TaskSet:
        """Every `world_size`-th task starting at `rank`: disjoint across ranks."""
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError("need 0 <= rank < world_size")
        return TaskSet(self._tasks[rank::world_size])

    def as_iterable(self) -> TaskIterable:
        """The tasks as a PyTorch-style iterable dataset that splits across DataLoader workers.

        With torch installed the object is a `torch.utils.data.IterableDataset`, so a
        `DataLoader(tasks.as_iterable(), num_workers=k, collate_fn=...)` hands each worker its
        own tasks; torch is never required. Combine with `shard(rank, world_size)` for
        data-parallel ranks.
        """
        return make_iterable(self._tasks)


class TaskIterable:
    """Iterates the tasks of the current DataLoader worker: every `num_workers`-th task
    starting at the worker's id, so the workers together yield each task exactly once.
    Outside a worker (or without torch) it yields every task."""

    def __init__(self, tasks: list[Task]) -> None:
        self._tasks = tasks

    def __iter__(self) -> Iterator[Task]:
        worker, workers = current_worker()
        return iter(self._tasks[worker::workers])

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt by a function, so a worker started by spawn recreates the torch subclass.
        return make_iterable, (self._tasks,)


def current_worker() -> tuple[int, int]:
    """(worker id, number of workers) of the running DataLoader worker; (0, 1) elsewhere."""
    try:
        from torch.utils.data import get_worker_info
    except ImportError:
        return 0, 1
    info = get_worker_info()
    return (0, 1) if info is None else (info.id, info.num_workers)


def make_iterable(tasks: list[Task]) -> TaskIterable:
    return _iterable_class()(tasks)


@functools.cache
def _iterable_class() -> type[TaskIterable]:
    """TaskIterable, made a torch IterableDataset when torch is importable (DataLoader tells
    iterable datasets from map-style ones by that base class)."""
    try:
        from torch.utils.data import IterableDataset
    except ImportError:
        return TaskIterable
    return type("TorchTaskIterable", (TaskIterable, IterableDataset), {"__module__": __name__})


def load_tasks(path: str | Path, cache: str | Path | None = None) -> TaskSet:
    tasks_path = Path(path)
    records = read_records(tasks_path)
    directory = task_dir(tasks_path)
    cache_dir = Path(cache) if cache else None
    ordered = sorted(records, key=lambda r: r["instance_id"])
    return TaskSet([Task(r, directory, cache_dir) for r in ordered])
