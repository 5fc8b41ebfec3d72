"""Run independent jobs on a local pool. Jobs spend their time in subprocesses (pytest), so
threads are enough; each job works in its own scratch copy, never in a shared tree."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
H = TypeVar("H", bound=Hashable)


def bounded_unordered(items: Iterable[T], width: int, submit: Callable[[T], H],
                      wait_done: Callable[[list[H]], Iterable[H]],
                      result: Callable[[H], R]) -> Iterator[tuple[T, R]]:
    """Yield (item, result) as submitted jobs finish, with at most `width` submitted at once.
    Submitting lazily keeps a long item list from queueing all at once (and a caller that stops
    early from paying for the rest)."""
    pending: dict[H, T] = {}
    iterator = iter(items)
    exhausted = False
    while pending or not exhausted:
        while not exhausted and len(pending) < width:
            try:
                item = next(iterator)
            except StopIteration:
                exhausted = True
                break
            pending[submit(item)] = item
        if not pending:
            break
        for handle in wait_done(list(pending)):
            yield pending.pop(handle), result(handle)


class LocalExecutor:
    name = "local"

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T],
                      needs: Sequence[Path] = ()) -> Iterator[tuple[T, R]]:
        """Yield (item, result) as jobs finish; at most `workers` run at once. `needs` (the
        cache entries the jobs read) are already here: the jobs share this machine's cache."""
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            yield from bounded_unordered(
                items, self.workers, lambda item: pool.submit(fn, item),
                lambda futures: wait(futures, return_when=FIRST_COMPLETED).done,
                lambda future: future.result())

    def close(self) -> None:
        """Nothing to release: the pool lives only inside `map_unordered`."""
