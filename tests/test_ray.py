"""`--executor ray` on real Ray: an instance started for the run, and a two-node cluster on this
machine (a head and a worker node, each a `ray start --block` process tree of its own) whose
worker node is killed mid-run. The worker node runs in a mount namespace of its own where the
run's cache is an empty directory, as on another machine: it gets what its jobs read on first
use. Every run must write the shard of `--executor local`, byte for byte once the timing fields
are taken out.

The nodes listen on 127.0.0.1 only, without a dashboard, and are stopped by killing the process
groups this module started: never `ray stop`, which ends every Ray process on the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import free_port, run_cli
from test_shards import (
    UNSHARDED,
    canonical_lines,
    differences,
    journal_lines,
    kill_when,
    sample_output,
    sample_recipe,
    without_sha,
)

# A real Ray instance and a two-node cluster:
# not in the quick loop (`make test-quick`).
pytestmark = pytest.mark.slow

RAY = Path(sys.executable).with_name("ray")
# Ray 2.60 advertises the host's address for `--node-ip-address 127.0.0.1` and listens on every
# interface, so the test cluster keeps token authentication on, with a token made for it alone.
CLUSTER_AUTH = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
NODE_START_TIMEOUT_S = 120
RUN_TIMEOUT_S = 900


def cluster_env() -> dict[str, str]:
    """The environment as it is now (the session's TASKFORGE_CACHE included), with the token."""
    return {**os.environ, **CLUSTER_AUTH}


@dataclass
class Node:
    proc: subprocess.Popen[bytes]
    log: Path

    def started(self) -> bool:
        return "Ray runtime started" in self.log.read_text(errors="replace")

    def processes(self) -> list[int]:
        """The node's processes: its session (`ray start`, raylet, workers, each Ray worker in a
        process group of its own) and whatever they started in sessions of their own."""
        stats = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # exited meanwhile
            stats[int(stat.parent.name)] = (int(fields[1]), int(fields[3]))  # ppid, session
        mine = {pid for pid, (_ppid, sid) in stats.items() if sid == self.proc.pid}
        while grown := {pid for pid, (ppid, _sid) in stats.items() if ppid in mine} - mine:
            mine |= grown
        return sorted(mine)

    def kill(self) -> None:
        for pid in self.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait()

    def job_processes(self) -> list[int]:
        """This node's Ray workers inside a job right now (a worker's title is the task's
        function while it runs one)."""
        running = []
        for pid in self.processes():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::_call"):
                    running.append(pid)
        return running

    def running_a_job(self) -> bool:
        return bool(self.job_processes())


def start_node(temp: Path, *args: str, hide: Path | None = None, read_only: bool = False) -> Node:
    """A node of its own; with `hide`, in a mount namespace where that directory is empty (and
    `read_only`): a machine that does not share the driver's filesystem there."""
    temp.mkdir()
    log = temp / "ray-start.log"
    options = "-o ro " if read_only else ""
    prefix = [] if hide is None else [
        "unshare", "--map-root-user", "--mount", "--propagation", "private",
        "sh", "-c", f"mount -t tmpfs {options}none {hide} && exec \"$@\"", "sh"]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*prefix, str(RAY), "start", "--node-ip-address", "127.0.0.1", "--temp-dir", str(temp),
             "--object-store-memory", str(100 << 20),
             "--resources", json.dumps({"sandbox:none": 1}), "--block", *args],
            stdout=out, stderr=subprocess.STDOUT, env=cluster_env(), start_new_session=True)
    node = Node(proc, log)
    deadline = time.monotonic() + NODE_START_TIMEOUT_S
    while not node.started():
        assert proc.poll() is None, f"ray start exited: {log.read_text()}"
        assert time.monotonic() < deadline, f"ray start did not finish: {log.read_text()}"
        time.sleep(0.5)
    return node


@dataclass
class Cluster:
    address: str
    head: Node
    worker: Node


@contextlib.contextmanager
def two_nodes(head_cpus: int, hide: Path, read_only: bool = False) -> Iterator[Cluster]:
    """A head taking `head_cpus` jobs at once and a worker node taking one, which sees an empty
    directory at `hide` (the run's cache), as another machine would."""
    # Under /tmp, short: Ray's socket paths inside the temp dir must stay below 108 bytes.
    root = Path(tempfile.mkdtemp(prefix="tf-ray-"))
    nodes: list[Node] = []
    try:
        port = free_port()
        nodes.append(start_node(root / "head", "--head", "--port", str(port),
                                "--include-dashboard=false", "--num-cpus", str(head_cpus)))
        nodes.append(start_node(root / "worker", "--address", f"127.0.0.1:{port}",
                                "--num-cpus", "1", hide=hide, read_only=read_only))
        yield Cluster(f"127.0.0.1:{port}", *nodes)
    finally:
        for node in reversed(nodes):
            node.kill()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(tf_cache: Path) -> Iterator[Cluster]:
    """Both cache set-ups at once: the head shares the driver's cache, the worker node has its
    own, filled on first use."""
    with two_nodes(1, hide=tf_cache) as nodes:
        yield nodes


@pytest.fixture(scope="module")
def reference(tf_cache: Path) -> Path:
    """`--executor local`, uninterrupted (the sample directory test_shards shares)."""
    return sample_output(tf_cache)


def start_generate(recipe: Path, out: Path, address: str,
                   **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "taskforge", "generate", str(recipe),
                             "--out", str(out), "--executor", "ray", "--ray-address", address,
                             "--workers", "2"],
                            cwd=out.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**cluster_env(), **env}, start_new_session=True)


def assert_same_run(out: Path, reference: Path) -> None:
    assert canonical_lines(out / UNSHARDED) == canonical_lines(reference / UNSHARDED), \
        differences(out / UNSHARDED, reference / UNSHARDED)
    name = "manifest-00000-of-00001.json"
    assert without_sha(json.loads((out / name).read_text())) == \
        without_sha(json.loads((reference / name).read_text()))
    journal = [json.loads(line) for line in (out / ".journal" / UNSHARDED).read_text().splitlines()]
    assert len(journal) == len({e["key"] for e in journal}), "a candidate journalled twice"


def progress_lines(stdout: str) -> list[str]:
    """The per-candidate progress lines, without their position (jobs finish in any order)."""
    return sorted(re.sub(r"^taskforge: \[\d+/", "taskforge: [", line)
                  for line in stdout.splitlines() if re.match(r"taskforge: \[\d+/\d+\]", line))


def summary_tables(stdout: str) -> str:
    """The summary's funnel and per-strategy tables: the funnel's title (the output directory,
    wrapped by width) and the per-source table (timings) left out."""
    funnel = stdout[stdout.index("funnel:"):stdout.index("per source")]
    return funnel[funnel.index("\u250f"):] + stdout[stdout.index("per strategy"):]


@pytest.mark.slow
def test_ray_instance_for_the_run_writes_the_local_shard(reference: Path, tf_cache: Path,
                                                         tmp_path: Path) -> None:
    recipe = sample_recipe(tf_cache)
    local = run_cli("generate", str(recipe), "--out", str(tmp_path / "local"), "--workers", "2",
                    cwd=tmp_path, timeout=RUN_TIMEOUT_S)
    assert local.returncode == 0, local.stderr
    ray_run = run_cli("generate", str(recipe), "--out", str(tmp_path / "ray"), "--workers", "2",
                      "--executor", "ray", cwd=tmp_path, timeout=RUN_TIMEOUT_S)
    assert ray_run.returncode == 0, ray_run.stderr
    assert_same_run(tmp_path / "ray", reference)
    # The same progress reaches the display, and the same summary follows it.
    assert progress_lines(ray_run.stdout) == progress_lines(local.stdout) != []
    assert summary_tables(ray_run.stdout) == summary_tables(local.stdout)
    # The instance is gone with the run: its temporary directory was removed.
    assert not [p for p in Path("/dev/shm").glob(f"taskforge-{os.getuid()}/ray-*")]


@pytest.mark.slow
def test_cluster_run_killed_driver_resumes(cluster: Cluster, reference: Path, tf_cache: Path,
                                           tmp_path: Path) -> None:
    recipe = sample_recipe(tf_cache)
    out = tmp_path / "out"
    out.mkdir()
    kill_when(start_generate(recipe, out, cluster.address), lambda: journal_lines(out) >= 1,
              timeout=RUN_TIMEOUT_S)
    resumed = start_generate(recipe, out, cluster.address)
    _, err = resumed.communicate(timeout=RUN_TIMEOUT_S)
    assert resumed.returncode == 0, err
    assert_same_run(out, reference)


def kill_a_job_on_the_head(cluster: Cluster, recipe: Path, out: Path,
                           **env: str) -> tuple[subprocess.Popen[str], str, str]:
    """Run generate and kill one Ray worker process of the head mid-job (its node lives on)."""
    run = start_generate(recipe, out, cluster.address, **env)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while not (jobs := cluster.head.job_processes()):
            assert run.poll() is None, f"the run ended before the head ran a job: {run.stderr}"
            assert time.monotonic() < deadline, "the head never ran a job"
            time.sleep(0.05)
        os.kill(jobs[0], signal.SIGKILL)
        stdout, err = run.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    return run, stdout, err


@pytest.mark.slow
def test_cluster_run_survives_a_worker_process_killed(cluster: Cluster, reference: Path,
                                                      tf_cache: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    run, stdout, err = kill_a_job_on_the_head(cluster, sample_recipe(tf_cache), out)
    assert run.returncode == 0, err
    assert_same_run(out, reference)
    assert len(progress_lines(stdout)) == len(set(progress_lines(stdout)))


@pytest.mark.slow
def test_a_job_past_its_retries_is_one_line_and_the_rerun_resumes(
        cluster: Cluster, reference: Path, tf_cache: Path, tmp_path: Path) -> None:
    recipe = sample_recipe(tf_cache)
    out = tmp_path / "out"
    out.mkdir()
    run, _stdout, err = kill_a_job_on_the_head(cluster, recipe, out, TASKFORGE_RAY_RETRIES="0")
    assert run.returncode == 2, err
    assert re.fullmatch(r"taskforge: error: Ray: WorkerCrashedError after 0 retries: .+; the same "
                        r"command resumes the run", err.splitlines()[-1]), err
    assert "Traceback" not in err
    resumed = start_generate(recipe, out, cluster.address)
    _, err = resumed.communicate(timeout=RUN_TIMEOUT_S)
    assert resumed.returncode == 0, err
    assert_same_run(out, reference)


@pytest.mark.slow
def test_cluster_run_survives_its_worker_node_killed(cluster: Cluster, reference: Path,
                                                     tf_cache: Path, tmp_path: Path) -> None:
    recipe = sample_recipe(tf_cache)
    out = tmp_path / "out"
    out.mkdir()
    run = start_generate(recipe, out, cluster.address)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        # Mid-run, and mid-job on the worker node: one of its jobs is running a test suite.
        while not cluster.worker.running_a_job():
            assert run.poll() is None, f"the run ended before the worker node ran a job: {run.stderr}"
            assert time.monotonic() < deadline, "the worker node never ran a job"
            time.sleep(0.05)
        cluster.worker.kill()
        assert run.poll() is None, "the run ended before the kill"
        stdout, err = run.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 0, err
    # The lost jobs ran again on the head node; nothing lost, nothing twice.
    assert_same_run(out, reference)
    assert len(progress_lines(stdout)) == len(set(progress_lines(stdout)))


@pytest.mark.slow
def test_a_sandbox_no_node_offers_stops_the_run_before_it_starts(cluster: Cluster, tf_cache: Path,
                                                                  tmp_path: Path) -> None:
    # The cluster's nodes offer `sandbox:none` only: a bwrap task could never be placed.
    proc = run_cli("generate", str(sample_recipe(tf_cache)), "--out", str(tmp_path / "out"),
                   "--executor", "ray", "--ray-address", cluster.address, "--sandbox", "bwrap",
                   cwd=tmp_path, env=CLUSTER_AUTH)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        f"taskforge: error: --ray-address {cluster.address}: no node offers sandbox 'bwrap'; "
        "start nodes that have it with --resources '{\"sandbox:bwrap\": 1}'")
    assert not (tmp_path / "out").exists()


def test_without_the_extra_one_line_names_it(tf_cache: Path, tmp_path: Path) -> None:
    # Ray made unimportable, as in an install without `taskforge[ray]`.
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['ray'] = None\n"
         "from taskforge.cli import main; main()", "generate", str(sample_recipe(tf_cache)),
         "--out", str(tmp_path / "out"), "--executor", "ray"],
        capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "taskforge: error: executor 'ray' needs Ray: pip install 'taskforge[ray]'"]
    assert not (tmp_path / "out").exists()


def test_unreachable_address_fails_before_writing(tf_cache: Path, tmp_path: Path) -> None:
    port = free_port()  # bound a moment ago, now closed: nothing answers there
    proc = run_cli("generate", str(sample_recipe(tf_cache)), "--out", str(tmp_path / "out"),
                   "--executor", "ray", "--ray-address", f"127.0.0.1:{port}", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"taskforge: error: --ray-address 127.0.0.1:{port}: no Ray head node answers "
        "(Connection refused)"]
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_node_without_the_drivers_cache_gets_its_entries_on_first_use(
        tf_cache: Path, tmp_path: Path) -> None:
    # The head takes no jobs; the only worker node sees an empty directory at the cache's path,
    # as another machine would: every job runs there, from entries it unpacked on first use.
    # The baselines are set aside for the run, so they are jobs too (put back afterwards: the
    # session's other tests keep the ones they saw).
    recipe = sample_recipe(tf_cache)
    out = tmp_path / "out"
    out.mkdir()
    baselines, kept = tf_cache / "baselines", tf_cache / "baselines.kept"
    baselines.mkdir(exist_ok=True)
    baselines.rename(kept)
    try:
        with two_nodes(0, hide=tf_cache) as nodes:
            run = start_generate(recipe, out, nodes.address)
            _, err = run.communicate(timeout=RUN_TIMEOUT_S)
            # What the worker node's cache holds, seen through its own mount namespace.
            seen = Path(f"/proc/{nodes.worker.proc.pid}/root") / tf_cache.relative_to("/")
            worker_entries = {p.parent.name for p in seen.glob("*/*") if p.parent.name != "tmp"}
        ran_there = sorted(p.name for p in baselines.glob("*.json"))
        # The reference: `local` with the baselines the node ran (a task's record depends on
        # its baseline's test durations: trivial solutions run fastest test first).
        local = run_cli("generate", str(recipe), "--out", str(tmp_path / "local"),
                        cwd=tmp_path, timeout=RUN_TIMEOUT_S)
        after_local = sorted(p.name for p in baselines.glob("*.json"))
    finally:
        shutil.rmtree(baselines, ignore_errors=True)
        kept.rename(baselines)
    assert run.returncode == 0, err
    assert local.returncode == 0, local.stderr
    assert_same_run(out, tmp_path / "local")
    # Only what the jobs read arrived there, and the baselines the node ran; no source, no
    # uv cache. The driver kept those baselines in its own cache: the local run found them.
    assert worker_entries == {"snapshots", "envs", "bytecode", "baselines"}, worker_entries
    assert ran_there == after_local != []


@pytest.mark.slow
def test_a_node_that_cannot_create_the_cache_path_stops_the_run(tf_cache: Path,
                                                                tmp_path: Path) -> None:
    # The only node taking jobs sees an empty, read-only directory at the cache's path.
    out = tmp_path / "out"
    out.mkdir()
    with two_nodes(0, hide=tf_cache, read_only=True) as nodes:
        run = start_generate(sample_recipe(tf_cache), out, nodes.address)
        _, err = run.communicate(timeout=RUN_TIMEOUT_S)
    assert run.returncode == 2, err
    assert re.fullmatch(rf"taskforge: error: Ray node \S+: cannot create the run's cache entry "
                        rf"{tf_cache}/\S+ \(Read-only file system\); every node needs the "
                        r"driver's cache path, writable \(docs/cluster.md\)",
                        err.splitlines()[-1]), err
    assert "Traceback" not in err
    assert not (out / UNSHARDED).exists()
