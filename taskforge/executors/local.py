"""Run independent jobs on a local pool. Jobs spend their time in subprocesses (pytest), so
threads are enough; each job works in its own scratch copy, never in a shared tree."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class LocalExecutor:
    name = "local"

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[tuple[T, R]]:
        """Yield (item, result) as jobs finish; at most `workers` run at once."""
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            pending: dict[Future[R], T] = {}
            iterator = iter(items)
            exhausted = False
            while pending or not exhausted:
                while not exhausted and len(pending) < self.workers:
                    try:
                        item = next(iterator)
                    except StopIteration:
                        exhausted = True
                        break
                    pending[pool.submit(fn, item)] = item
                if not pending:
                    break
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield pending.pop(future), future.result()
