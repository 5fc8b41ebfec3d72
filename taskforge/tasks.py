"""Tasks as a loader sees them: a record plus the directory that holds its snapshot."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from taskforge.cache import cache_root
from taskforge.env import build_environment
from taskforge.errors import Rejected, UserError
from taskforge.grade import Mode, grade_workspace
from taskforge.materialize import materialize_record
from taskforge.model import Environment, EnvSpec, GradeResult, Snapshot
from taskforge.patches import apply_patch
from taskforge.sandbox import Sandbox, get_sandbox
from taskforge.sanitize import fingerprint_record
from taskforge.store.shards import read_records, task_dir
from taskforge.store.snapshots import snapshot_root
from taskforge.testing.runner import split_command
from taskforge.verify import collection_breaks, label_tests
from taskforge.verify.gates import (
    NULL_BODIES,
    collection_gate,
    leak_scan_gate,
    null_rejection,
    score_null_solution,
    with_null_body,
)
from taskforge.workspace import scratch_dir


@dataclass
class Task:
    record: dict[str, Any]
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
        e = self.record["environment"]
        spec = EnvSpec(python=e["python"], project_install=e["project_install"],
                       requirements=tuple(e["requirements"]), install=tuple(e["install"]),
                       test_command=split_command(e["test_command"]),
                       scm_version=e.get("scm_version"))
        root = self.snapshot_root()
        snapshot = Snapshot(id=self.record["snapshot"], name=self.record["repo"],
                            source=self.record["source"], commit=self.record["base_commit"],
                            root=root, license=self.record["license"])
        return build_environment(snapshot, spec, self._cache())

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
        return grade_workspace(self.record, solution, self.snapshot_root(), self.environment(),
                               box, self._cache(), timeout, mode)

    def reverify(self, *, sandbox: Sandbox, full_suite: bool = False,
                 timeout: float = 300.0) -> list[str]:
        """Re-run, from scratch, every gate `generate` ran: the labels, the trivial solutions,
        the collection check and the leak scan of a fresh materialization. Returns the
        problems found, each `gate: what` (empty: verified)."""
        env = self.environment()
        problems: list[str] = []
        for gate, check in (("labels", lambda: self._labels(env, sandbox, full_suite, timeout)),
                            ("trivial-solution", lambda: self._trivial(env, sandbox, timeout)),
                            ("collection-breaks", lambda: self._collection(env, sandbox, timeout)),
                            ("leak-scan", lambda: self._leak_scan(env))):
            try:
                problems += [f"{gate}: {p}" for p in check()]
            except Rejected as why:
                problems.append(f"{gate}: {why}")
        return problems

    def _workspace(self, dest: Path, record: dict[str, Any] | None = None) -> Path:
        """A fresh materialization with its hidden tests back: where the gates' tests run."""
        record = record or self.record
        workspace, _removed = materialize_record(record, self.snapshot_root(), dest)
        apply_patch(workspace, record.get("test_patch") or "")
        return workspace

    def _labels(self, env: Environment, sandbox: Sandbox, full_suite: bool,
                timeout: float) -> list[str]:
        record = self.record
        f2p = set(record["FAIL_TO_PASS"])
        tests = sorted(f2p | set(record["PASS_TO_PASS"])) if full_suite \
            else list(record["verification"]["tests_run"])
        with scratch_dir(self._cache(), prefix="reverify-") as scratch:
            labels = label_tests(self._workspace(scratch / "workspace"), record["patch"], tests,
                                 env, sandbox, repeats=record["verification"]["repeats"],
                                 timeout=timeout)
        problems = []
        if set(labels.fail_to_pass) != f2p:
            extra = sorted(set(labels.fail_to_pass) - f2p)
            missing = sorted(f2p - set(labels.fail_to_pass))
            problems.append(f"FAIL_TO_PASS differs: now failing but not listed {extra[:5]}, "
                            f"listed but not failing {missing[:5]}")
        if labels.unstable:
            problems.append(f"unstable in the task state: {labels.unstable[:5]}")
        if labels.reference_failures:
            problems.append(f"fail with the reference: {labels.reference_failures[:5]}")
        return problems

    def _trivial(self, env: Environment, sandbox: Sandbox, timeout: float) -> list[str]:
        """Each trivial body where the deletion put its stubs, on FAIL_TO_PASS."""
        f2p = list(self.record["FAIL_TO_PASS"])
        nulls = {}
        for body in NULL_BODIES:
            null = {**self.record,
                    "deletion_patch": with_null_body(self.record["deletion_patch"], body)}
            with scratch_dir(self._cache(), prefix="reverify-null-") as scratch:
                nulls[body] = score_null_solution(self._workspace(scratch / "workspace", null),
                                                  f2p, env, sandbox, timeout)
        rejection = null_rejection(nulls)
        return [str(rejection)] if rejection else []

    def _collection(self, env: Environment, sandbox: Sandbox, timeout: float) -> list[str]:
        """Collection in the task state against the stable tests (FAIL_TO_PASS and
        PASS_TO_PASS); breaks must be allowed and be the ones recorded."""
        stable = sorted(set(self.record["FAIL_TO_PASS"]) | set(self.record["PASS_TO_PASS"]))
        recorded = self.record["verification"].get("collateral") or {}
        with scratch_dir(self._cache(), prefix="reverify-collect-") as scratch:
            errors, missing = collection_breaks(self._workspace(scratch / "workspace"),
                                                tuple(stable), env, sandbox, timeout=timeout)
        collateral = collection_gate(errors, missing, stable,
                                     allowed=bool(recorded.get("allowed")))
        found = (sorted(collateral["collection_errors"]), sorted(collateral["uncollected"]))
        listed = (sorted(recorded.get("collection_errors", [])),  # generate also listed
                  sorted(set(recorded.get("uncollected", [])) & set(stable)))  # unstable ones
        if found != listed:
            return [f"collateral differs: now {found}, recorded {listed}"]
        return []

    def _leak_scan(self, env: Environment) -> list[str]:
        root = self.snapshot_root()
        fingerprints = fingerprint_record(self.record, root)  # of the code, not hidden tests
        leak_scan_gate(self.record, root, env.venv, fingerprints, self._cache())
        return []


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
