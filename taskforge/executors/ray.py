"""Run jobs as Ray tasks: on a cluster (`--ray-address`), or on a Ray instance started for the run.

The interface is LocalExecutor's: `workers` and `map_unordered`. Only results travel back, and
the driver alone writes shards and the journal, so resume and byte-identical output hold as with
`local`. A task whose worker process or node dies is retried by Ray (`RETRIES`); its job works in
a scratch copy of its own and caches are built under locks with a final rename, so a retry finds
nothing half-done.

Nothing assumes a node sees the driver's filesystem: each call names the cache entries its jobs
read (snapshot, environment, bytecode: content-addressed directories), the driver puts each in
Ray's object store once, and a node that lacks one unpacks it at the same path on first use. A
node whose cache is shared with the driver's finds them there and fetches nothing.

Each task declares what it needs: a CPU, memory, and the run's sandbox as a
custom resource (`sandbox:<name>`) that only nodes offering that sandbox register.
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import sys
import tarfile
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from taskforge.cache import build_once
from taskforge.errors import UserError
from taskforge.executors.local import bounded_unordered
from taskforge.workspace import scratch_parent

T = TypeVar("T")
R = TypeVar("R")

# A job runs one pytest process tree at a time: one CPU. Memory is what the scheduler reserves
# per task (a test suite and its copy); TASKFORGE_RAY_TASK_MEMORY_MB raises it for big suites.
TASK_MEMORY_MB = int(os.environ.get("TASKFORGE_RAY_TASK_MEMORY_MB", "256"))
# How often Ray reruns a task whose worker process or node died (not a job's own exception).
RETRIES = int(os.environ.get("TASKFORGE_RAY_RETRIES", "3"))
# A node offers a sandbox with `--resources '{"sandbox:docker": 1}'`; a task asks for a sliver of
# it so the resource says where a task may run, not how many run at once.
SANDBOX_SHARE = 0.001
# The object store of a Ray instance started for the run: results are small JSON-like records.
LOCAL_OBJECT_STORE_MB = 100
CONNECT_TIMEOUT_S = 10


def sandbox_resource(sandbox: str) -> str:
    """The custom resource a node registers when it offers `sandbox`."""
    return f"sandbox:{sandbox}"


def _call(fn: Callable[[Any], Any], item: Any, needs: tuple[tuple[str, Any], ...]) -> Any:
    for path, archive in needs:
        _ensure_entry(Path(path), archive)
    return fn(item)


def pack_entry(entry: Path) -> bytes:
    """A cache entry as an uncompressed tar (modes and symlinks kept: a venv's `bin/python`)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(entry, arcname=".")
    return buffer.getvalue()


def _ensure_entry(final: Path, archive: Any) -> None:
    """Give this node a cache entry it lacks: unpacked from the driver's copy on first use, once
    per node (under `build_once`'s lock, visible only after its final rename). Entries are
    content-addressed, so one already there (a shared cache, or an earlier job) is the same."""
    if final.exists():
        return
    import ray

    def unpack(staging: Path) -> None:
        with tarfile.open(fileobj=io.BytesIO(ray.get(archive))) as tar:
            tar.extractall(staging, filter="tar")  # the run's own driver packed it

    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        build_once(final, unpack)
    except OSError as e:
        raise UserError(f"Ray node {socket.gethostname()}: cannot create the run's cache entry "
                        f"{final} ({e.strerror or e}); every node needs the driver's cache path, "
                        "writable (docs/cluster.md)") from None


def _check_reachable(address: str) -> None:
    """ray.init retries an address nobody answers for minutes; a plain connect answers in seconds."""
    if address == "auto" or "://" in address:
        return  # `auto` reads the local node's file; ray:// is Ray Client, checked by Ray itself
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"--ray-address {address}: expected HOST:PORT of the cluster's head node")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise UserError(f"--ray-address {address}: no Ray head node answers ({e.strerror or e})") from None


def _import_ray(local_instance: bool) -> Any:
    if local_instance and "ray" not in sys.modules:
        # Ray turns `127.0.0.1` into the host's address and listens on every interface, unless
        # multi-node support is off (read once, at import): a single node for the run needs none.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise UserError("executor 'ray' needs Ray: pip install 'taskforge[ray]'") from None
    return ray


def _shutdown(ray: Any, temp_dir: str | None) -> None:
    ray.shutdown()
    if temp_dir:
        shutil.rmtree(temp_dir, ignore_errors=True)


class RayExecutor:
    name = "ray"

    def __init__(self, workers: int, address: str | None = None, *, sandbox: str = "none",
                 cache: Path | None = None) -> None:
        self._ray = _import_ray(local_instance=not address)
        self.workers = max(1, workers)
        self.address = address
        self.sandbox = sandbox
        self._cache = cache
        self._remote: Any = None
        # Cache entries packed for other nodes, by path: each travels once per run at most.
        self._archives: dict[Path, Any] = {}
        self._one_machine = False  # a Ray instance of the run's own: every node sees the cache
        self._close: Callable[[], None] = lambda: None
        self._start()  # before anything is written to `out`: a wrong address fails the run early

    def _start(self) -> Any:
        """Connect (or start Ray for the run) on first use: bad input fails before Ray starts."""
        if self._remote is not None:
            return self._remote
        ray = self._ray
        resource = sandbox_resource(self.sandbox)
        if ray.is_initialized():
            pass  # the library's caller runs Ray already: use it, leave it running
        elif self.address:
            _check_reachable(self.address)
            try:
                ray.init(address=self.address, log_to_driver=False, configure_logging=False)
            except (ConnectionError, ValueError, RuntimeError) as e:
                raise UserError(f"--ray-address {self.address}: cannot connect: {e}") from None
            self._close = weakref.finalize(self, _shutdown, ray, None)
        else:
            # A temp dir of its own (socket paths must stay short: scratch, not the cache),
            # no dashboard; this node offers the sandbox the run already checked.
            temp_dir = tempfile.mkdtemp(prefix="ray-", dir=scratch_parent(self._cache or
                                                                          Path(tempfile.gettempdir())))
            self._close = weakref.finalize(self, _shutdown, ray, temp_dir)
            self._one_machine = True
            ray.init(num_cpus=self.workers, include_dashboard=False, _temp_dir=temp_dir,
                     _node_ip_address="127.0.0.1", resources={resource: 1},
                     object_store_memory=LOCAL_OBJECT_STORE_MB << 20, log_to_driver=False,
                     configure_logging=False)
        # Fail closed: a task no node can place would wait forever.
        if ray.cluster_resources().get(resource, 0) <= 0:
            where = self.address or "the local Ray instance"
            raise UserError(f"--ray-address {where}: no node offers sandbox {self.sandbox!r}; start "
                            f"nodes that have it with --resources '{{\"{resource}\": 1}}'")
        self._remote = ray.remote(_call).options(
            num_cpus=1, memory=TASK_MEMORY_MB << 20, resources={resource: SANDBOX_SHARE},
            max_retries=RETRIES, retry_exceptions=False)
        return self._remote

    def _shared(self, needs: Sequence[Path]) -> tuple[tuple[str, Any], ...]:
        """`needs` as (path, object ref of its archive): a node without an entry unpacks it there."""
        if self._one_machine:
            return ()
        for entry in needs:
            if entry not in self._archives:
                self._archives[entry] = self._ray.put(pack_entry(entry))
        return tuple((str(entry), self._archives[entry]) for entry in needs)

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T],
                      needs: Sequence[Path] = ()) -> Iterator[tuple[T, R]]:
        """Yield (item, result) as tasks finish; at most `workers` are submitted at once.
        `needs`: the cache entries the jobs read, which a node that lacks them gets from here."""
        ray = self._ray
        remote = self._start()
        fn_ref = ray.put(fn)  # the job and what it closes over travel once, not once per item

        def result(ref: Any) -> Any:
            try:
                return ray.get(ref)
            except ray.exceptions.RayTaskError as e:
                # The job's own exception: a UserError stays one line for the CLI.
                if isinstance(e.cause, UserError):
                    raise e.cause from None
                raise e.as_instanceof_cause() from None
            except ray.exceptions.RayError as e:
                # Not the job's failure: its worker or node died once more than RETRIES allow,
                # or the cluster went away. The journal keeps every finished candidate.
                lines = str(e).strip().splitlines()
                raise UserError(f"Ray: {type(e).__name__} after {RETRIES} retries"
                                f"{': ' + lines[0] if lines else ''}; the same command resumes "
                                "the run") from None

        shared = self._shared(needs)
        yield from bounded_unordered(items, self.workers, lambda item: remote.remote(fn_ref, item, shared),
                                     lambda refs: ray.wait(refs, num_returns=1)[0], result)

    def close(self) -> None:
        """Disconnect; a Ray instance started for the run is shut down and its files removed."""
        self._close()
