"""Nothing the user had is lost: the output directory through the real CLI.

A rerun with other work into an existing output directory is refused before anything is
touched; a user's own directory is never filled; the output directory never enters a snapshot;
two runs of one shard cannot write at once; a snapshot archive is checked against its id.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest
from conftest import make_project, run_cli, stderr_lines, write_recipe

from taskforge.cache import build_digest
from taskforge.errors import UserError
from taskforge.languages.strategy import TaskOptions
from taskforge.verify.confirm import Verifier

# Real generate runs into real output directories:
# not in the quick loop (`make test-quick`).
pytestmark = pytest.mark.slow

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": """\
        def clamp(value, low, high):
            if value < low:
                return low
            if value > high:
                return high
            return value


        def span(values):
            low = min(values)
            high = max(values)
            return high - low
    """,
    "tests/test_core.py": """\
        from pkg.core import clamp, span


        def test_clamp():
            assert clamp(5, 0, 10) == 5
            assert clamp(-1, 0, 10) == 0
            assert clamp(11, 0, 10) == 10


        def test_span():
            assert span([3, 1, 2]) == 2
    """,
}


def recipe_text(root: Path | str, *, docstrings: bool = True, cap: int = 5) -> str:
    return f"""\
        name: outdir
        seed: 1
        sources:
          - path: {root}
        select: {{min_covering_tests: 1, min_body_lines: 2, max_tasks_per_source: {cap}}}
        task: {{keep_docstrings: {str(docstrings).lower()}}}
        verify: {{repeats: 1, timeout_s: 120}}
        sandbox: none
    """


def one_error(proc: subprocess.CompletedProcess[str], *words: str) -> str:
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr
    lines = stderr_lines(proc)
    assert len(lines) == 1 and lines[0].startswith("taskforge: error: "), proc.stderr
    for word in words:
        assert word in lines[0], f"{word!r} not in {lines[0]!r}"
    return lines[0]


def contents(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` and its bytes: what must not change."""
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project and one finished run of its recipe into `out` (copied by each test)."""
    base = tmp_path_factory.mktemp("outdir")
    root = make_project(base, FILES, name="proj")
    write_recipe(base / "recipe.yaml", recipe_text(root))
    proc = run_cli("generate", "recipe.yaml", "--out", "out", cwd=base)
    assert proc.returncode == 0, proc.stderr
    assert list((base / "out").glob("tasks-*.jsonl")), proc.stdout
    return base


@pytest.fixture
def workdir(first_run: Path, tmp_path: Path) -> Path:
    shutil.copytree(first_run, tmp_path / "w")
    return tmp_path / "w"


@pytest.mark.parametrize("change", ["docstrings", "seed", "cap-0", "shards"])
def test_a_rerun_of_other_work_is_refused_and_changes_nothing(workdir: Path, change: str) -> None:
    root = workdir / "proj"
    before = contents(workdir / "out")
    args = ["generate", "recipe.yaml", "--out", "out"]
    if change == "docstrings":
        write_recipe(workdir / "recipe.yaml", recipe_text(root, docstrings=False))
    elif change == "cap-0":
        write_recipe(workdir / "recipe.yaml", recipe_text(root, cap=0))
    elif change == "seed":
        args += ["--seed", "7"]
    else:
        args += ["--shard", "0/2"]
    proc = run_cli(*args, cwd=workdir)
    one_error(proc, "out", "another run", "--no-resume", "--force")
    assert contents(workdir / "out") == before


def test_force_replaces_another_runs_tasks(workdir: Path) -> None:
    write_recipe(workdir / "recipe.yaml", recipe_text(workdir / "proj", cap=0))
    proc = run_cli("generate", "recipe.yaml", "--out", "out", "--force", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((workdir / "out" / "manifest.json").read_text())
    assert manifest["counts"]["tasks"] == 0
    assert not list((workdir / "out").glob("tasks-*.jsonl"))


def test_the_same_recipe_resumes(workdir: Path) -> None:
    shard = next((workdir / "out").glob("tasks-*.jsonl"))
    before = shard.read_bytes()
    proc = run_cli("generate", "recipe.yaml", "--out", "out", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert shard.read_bytes() == before


@pytest.mark.parametrize("where", ["manifest-00000-of-00001.json",
                                   ".journal/tasks-00000-of-00001.run.json"])
def test_a_resume_by_another_taskforge_version_is_refused(workdir: Path, where: str) -> None:
    """The directory was written by another taskforge version (as its shard manifest or its
    journal's run file says): resuming would mix two generators' records."""
    path = workdir / "out" / where
    data = json.loads(path.read_text())
    data["generator"] = {**data["generator"], "version": "0.0.1"} \
        if isinstance(data["generator"], dict) else "0.0.1"
    path.write_text(json.dumps(data))
    before = contents(workdir / "out")
    proc = run_cli("generate", "recipe.yaml", "--out", "out", cwd=workdir)
    one_error(proc, "another run", "taskforge version 0.0.1 there", "--no-resume")
    assert contents(workdir / "out") == before


@pytest.mark.parametrize("where", ["manifest-00000-of-00001.json",
                                   ".journal/tasks-00000-of-00001.run.json"])
def test_a_resume_by_another_taskforge_build_is_refused(workdir: Path, where: str) -> None:
    """Same version, other code (the version is not bumped per change): the journal's verdicts
    were decided by another verifier, so resuming is refused like another version's. Its
    positive control: the same directory with the build as written resumes (exit 0)."""
    path = workdir / "out" / where
    data = json.loads(path.read_text())
    written = data["generator"]["build"] if isinstance(data["generator"], dict) else data["build"]
    assert re.fullmatch(r"[0-9a-f]{16}", written)
    rerun = run_cli("generate", "recipe.yaml", "--out", "out", cwd=workdir)
    assert rerun.returncode == 0, rerun.stderr
    data = json.loads(path.read_text())
    if isinstance(data["generator"], dict):
        data["generator"]["build"] = "0123456789abcdef"
    else:
        data["build"] = "0123456789abcdef"
    path.write_text(json.dumps(data))
    before = contents(workdir / "out")
    proc = run_cli("generate", "recipe.yaml", "--out", "out", cwd=workdir)
    one_error(proc, "another run", "taskforge build 0123456789abcdef there", "--no-resume")
    assert contents(workdir / "out") == before


def test_a_directory_that_is_not_a_taskforge_output_is_refused(workdir: Path) -> None:
    thesis = workdir / "thesis"
    thesis.mkdir()
    (thesis / "manifest.json").write_text('{"chapter": 1}\n')
    (thesis / "tasks-00000-of-00001.jsonl").write_text("my notes\n")
    before = contents(thesis)
    one_error(run_cli("generate", "recipe.yaml", "--out", "thesis", cwd=workdir),
              "thesis", "not a taskforge output")
    assert contents(thesis) == before


def test_the_output_directory_never_enters_the_snapshot(tmp_path: Path) -> None:
    """`path: .` with the default `--out out`: the second run sees the same snapshot, and no
    task workspace holds the output directory (other tasks' reference patches)."""
    root = make_project(tmp_path, FILES, name="proj")
    write_recipe(root / "recipe.yaml", recipe_text("."))
    first = run_cli("generate", "recipe.yaml", cwd=root)
    assert first.returncode == 0, first.stderr
    shard = next((root / "out").glob("tasks-*.jsonl"))
    before = shard.read_bytes()
    second = run_cli("generate", "recipe.yaml", cwd=root)
    assert second.returncode == 0, second.stderr
    assert shard.read_bytes() == before
    warnings = [ln for ln in stderr_lines(second) if "output directory" in ln]
    assert len(warnings) == 1 and "left out of the snapshot" in warnings[0], second.stderr
    record = json.loads(before.splitlines()[0])
    ws = tmp_path / "ws"
    proc = run_cli("materialize", "out", record["instance_id"], str(ws), cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert not (ws / "out").exists() and (ws / "pkg").is_dir()


def snapshot_files(out: Path) -> set[str]:
    """Every file of every snapshot archive `out` holds: what a task's workspace starts from."""
    names = set()
    for archive in (out / "snapshots").glob("*.tar.gz"):
        with tarfile.open(archive) as tar:
            names |= {m.name for m in tar if not m.isdir()}
    return names


def test_the_cache_inside_the_source_never_enters_the_snapshot(tmp_path: Path) -> None:
    """`path: .` with the cache inside the source (`--cache`, then `$TASKFORGE_CACHE`): the
    cache never enters the snapshot, though it grows between the runs (environments,
    baselines), so the rerun resumes the same snapshot and no workspace holds the cache."""
    root = make_project(tmp_path, FILES, name="proj")
    write_recipe(root / "recipe.yaml", recipe_text("."))
    out = tmp_path / "out"
    first = run_cli("generate", "recipe.yaml", "--out", str(out), "--cache", "tf-cache", cwd=root)
    assert first.returncode == 0, first.stderr
    cache = root / "tf-cache"
    # The positive control: the cache is in the source tree, and full.
    assert (cache / "snapshots").is_dir() and list((cache / "envs").iterdir())
    warnings = [ln for ln in stderr_lines(first) if "cache" in ln]
    assert len(warnings) == 1 and "tf-cache/, left out of the snapshot" in warnings[0], first.stderr
    shard = next(out.glob("tasks-*.jsonl"))
    before = shard.read_bytes()
    assert before and "pkg/core.py" in snapshot_files(out)
    assert not [name for name in snapshot_files(out) if name.startswith("tf-cache")]
    record = json.loads(before.splitlines()[0])
    assert not (cache / "snapshots" / record["snapshot"] / "tree" / "tf-cache").exists()

    second = run_cli("generate", "recipe.yaml", "--out", str(out), cwd=root,
                     env={"TASKFORGE_CACHE": str(cache)})
    assert second.returncode == 0, second.stderr
    assert shard.read_bytes() == before
    assert [p.name for p in (out / "snapshots").iterdir()] == [f"{record['snapshot']}.tar.gz"]
    ws = tmp_path / "ws"
    proc = run_cli("materialize", str(out), record["instance_id"], str(ws), "--cache", "tf-cache",
                   cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert (ws / "pkg").is_dir() and not (ws / "tf-cache").exists()


def test_exports_inside_the_source_never_enter_the_snapshot(tmp_path: Path) -> None:
    """Exports and a report written inside a `path: .` source (they hold the reference
    patches): the rerun leaves them out of the snapshot, says so, and resumes the same
    snapshot; no task's workspace holds them."""
    root = make_project(tmp_path, FILES, name="proj")
    write_recipe(root / "recipe.yaml", recipe_text("."))
    out = tmp_path / "out"
    first = run_cli("generate", "recipe.yaml", "--out", str(out), cwd=root)
    assert first.returncode == 0, first.stderr
    shard = next(out.glob("tasks-*.jsonl"))
    before = shard.read_bytes()
    record = json.loads(before.splitlines()[0])
    for args in (("export", str(out), "--format", "swebench", "--out", "answers.jsonl"),
                 ("export", str(out), "--format", "harbor", "--no-images", "--out",
                  "exports/harbor"),
                 ("report", str(out), "--out", "run.html")):
        proc = run_cli(*args, cwd=root)
        assert proc.returncode == 0, proc.stderr
    # The positive control: they are in the source tree, and hold the answers.
    patch = json.dumps(record["patch"])[1:-1]
    assert patch in (root / "answers.jsonl").read_text()
    solution = root / "exports" / "harbor" / record["instance_id"] / "solution" / "reference.patch"
    assert solution.read_text() == record["patch"]
    assert (root / "run.html").stat().st_size > 100_000

    proc = run_cli("generate", "recipe.yaml", "--out", str(out), cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert shard.read_bytes() == before  # the same snapshot: resumed, nothing redone
    assert [p.name for p in (out / "snapshots").iterdir()] == [f"{record['snapshot']}.tar.gz"]
    notes = [ln for ln in proc.stdout.splitlines() if "left out of the snapshot" in ln]
    assert len(notes) == 1, proc.stdout
    for shown in ("answers.jsonl (swebench export)", "exports/harbor/ (harbor export)",
                  "run.html (report)"):
        assert shown in notes[0], notes[0]
    files = snapshot_files(out)
    assert "pkg/core.py" in files
    assert not files & {"answers.jsonl", "run.html"}
    assert not [name for name in files if name.startswith("exports")]
    for task in (json.loads(line) for line in before.splitlines()):
        ws = tmp_path / task["instance_id"]
        proc = run_cli("materialize", str(out), task["instance_id"], str(ws), cwd=root)
        assert proc.returncode == 0, proc.stderr
        assert (ws / "pkg").is_dir()
        assert not [p for p in ("answers.jsonl", "exports", "run.html") if (ws / p).exists()]


def test_only_what_taskforge_marked_is_left_out(tmp_path: Path) -> None:
    """The mark, not the name or the shape, tells an export: a user's copy of one with its
    fields rewritten (keys sorted) is the user's file and stays in the snapshot, as does a
    directory that merely looks like an export."""
    from taskforge.sources.store import snapshot_from_tree
    from taskforge.store.written import EXPORT_MARKER, SWEBENCH_KEY, swebench_line

    root = make_project(tmp_path, FILES, name="proj")
    instance = {"instance_id": "x", "patch": "--- a\n+++ b\n"}
    (root / "ours.jsonl").write_text(swebench_line(instance) * 2)
    mine = json.loads(swebench_line(instance))
    (root / "mine.jsonl").write_text(json.dumps(mine, sort_keys=True) + "\n")
    (root / "harbor" / "t1").mkdir(parents=True)
    (root / "harbor" / "t1" / "task.toml").write_text('version = "1.0"\n')
    (root / "marked").mkdir()
    (root / "marked" / EXPORT_MARKER).write_text('{"format": "harbor"}\n')
    (root / "marked" / "data.txt").write_text("answers\n")
    assert SWEBENCH_KEY in mine
    snapshot = snapshot_from_tree(root, name="proj", source=str(root), cache=tmp_path / "cache")
    files = {p.relative_to(snapshot.root).as_posix() for p in snapshot.root.rglob("*")
             if p.is_file()}
    assert {"mine.jsonl", "harbor/t1/task.toml", "pkg/core.py"} <= files
    assert not files & {"ours.jsonl", "marked/data.txt", f"marked/{EXPORT_MARKER}"}


def test_the_source_itself_as_output_directory_is_refused(tmp_path: Path) -> None:
    root = make_project(tmp_path, FILES, name="proj")
    write_recipe(tmp_path / "recipe.yaml", recipe_text(root))
    before = contents(root)
    proc = run_cli("generate", "recipe.yaml", "--out", str(root), cwd=tmp_path)
    one_error(proc, str(root))
    assert contents(root) == before


def test_swebench_export_does_not_overwrite_without_force(workdir: Path) -> None:
    target = workdir / "mine.jsonl"
    target.write_text("precious\n")
    one_error(run_cli("export", "out", "--format", "swebench", "--out", str(target),
                      cwd=workdir), "mine.jsonl", "--force")
    assert target.read_text() == "precious\n"
    proc = run_cli("export", "out", "--format", "swebench", "--out", str(target), "--force",
                   cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(target.read_text().splitlines()[0])["instance_id"]


SLOW_TESTS = """\
    import time

    from pkg.core import clamp, span


    def test_clamp():
        time.sleep(4)
        assert clamp(5, 0, 10) == 5
        assert clamp(-1, 0, 10) == 0


    def test_span():
        assert span([3, 1, 2]) == 2
"""


def slow_project(tmp_path: Path) -> Path:
    """A project whose suite takes seconds, unlike any other (its own snapshot, so its
    baseline is never cached by an earlier test)."""
    return make_project(tmp_path, {**FILES, "tests/test_core.py": SLOW_TESTS,
                                   "pkg/unique.py": f"# {tmp_path.name}\n"}, name="slow")


def test_a_second_run_of_one_shard_is_refused_naming_the_first(tmp_path: Path) -> None:
    """Run A holds the shard (its baseline is slow); run B is refused and names A, and so is
    other work, even with --force; once A was SIGKILLed, run C takes its lock over."""
    root = slow_project(tmp_path)
    write_recipe(tmp_path / "recipe.yaml", recipe_text(root))
    first = subprocess.Popen([sys.executable, "-m", "taskforge", "generate", "recipe.yaml",
                              "--out", "out"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        lock = tmp_path / "out" / ".journal" / "tasks-00000-of-00001.lock"
        deadline = time.monotonic() + 60
        while not (lock.is_file() and lock.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        second = run_cli("generate", "recipe.yaml", "--out", "out", cwd=tmp_path)
        one_error(second, "shard 0/1", "another run", f"pid {first.pid}")
        # Other work into the same directory meanwhile: refused, and --force cannot take it.
        other = run_cli("generate", "recipe.yaml", "--out", "out", "--seed", "9", "--shard",
                        "1/2", cwd=tmp_path)
        one_error(other, "another run", "--force")
        forced = run_cli("generate", "recipe.yaml", "--out", "out", "--seed", "9", "--shard",
                         "1/2", "--force", cwd=tmp_path)
        one_error(forced, "--force cannot replace", f"pid {first.pid}")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    assert json.loads(lock.read_text())["pid"] == first.pid  # the dead run's lock is left
    third = run_cli("generate", "recipe.yaml", "--out", "out", cwd=tmp_path)
    assert third.returncode == 0, third.stderr
    assert not lock.exists()


def rewrite_archive(archive: Path, edit: callable) -> None:  # type: ignore[valid-type]
    """Rewrite a snapshot archive as a valid tar.gz with `edit(name, data) -> data` applied."""
    with tarfile.open(archive) as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member, data in members:
            if data is not None:
                data = edit(member.name, data)
                member.size = len(data)
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    archive.write_bytes(buffer.getvalue())


@pytest.mark.parametrize("damage", ["none", "edited", "garbage", "truncated"])
def test_a_snapshot_archive_is_checked_before_use(workdir: Path, damage: str) -> None:
    archive = next((workdir / "out" / "snapshots").glob("*.tar.gz"))
    if damage == "edited":
        rewrite_archive(archive, lambda name, data: data.replace(b"return low", b"return 0")
                        if name == "pkg/core.py" else data)
    elif damage == "garbage":
        archive.write_bytes(b"not an archive at all\n" * 10)
    elif damage == "truncated":
        archive.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    record = json.loads(next((workdir / "out").glob("tasks-*.jsonl")).read_text().splitlines()[0])
    ws = workdir / "ws"
    # A fresh cache: the loader has only the output directory, as on another machine.
    proc = run_cli("materialize", "out", record["instance_id"], str(ws), "--cache",
                   str(workdir / "fresh-cache"), cwd=workdir)
    if damage == "none":  # the positive control: an intact archive materializes
        assert proc.returncode == 0, proc.stderr
        assert (ws / "pkg" / "core.py").is_file()
        return
    why = "does not match its snapshot id" if damage == "edited" else "damaged snapshot archive"
    one_error(proc, archive.name, why)
    assert not ws.exists()


def test_ctrl_c_exits_130_and_says_the_run_resumes(tmp_path: Path) -> None:
    root = slow_project(tmp_path)
    write_recipe(tmp_path / "recipe.yaml", recipe_text(root))
    run = subprocess.Popen([sys.executable, "-m", "taskforge", "generate", "recipe.yaml", "--out",
                            "out"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
    try:
        lock = tmp_path / "out" / ".journal" / "tasks-00000-of-00001.lock"
        deadline = time.monotonic() + 60
        while not (lock.is_file() and lock.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        os.kill(run.pid, signal.SIGINT)
        _stdout, stderr = run.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr and "Aborted" not in stderr
    assert "interrupted" in stderr and "resumes" in stderr, stderr
    assert not lock.exists()


# A Ctrl-C that lands while a module imports can reach taskforge wrapped: CPython 3.11 turns
# an exception raised in a descriptor's __set_name__ (a dataclass field of a library imported
# lazily, such as coverage's) into "RuntimeError: Error calling __set_name__ ...", the
# KeyboardInterrupt kept as its cause. Seen once in CI as exit 1 and a traceback.
INTERRUPTED_IN_SET_NAME = """
import importlib
import sys

from taskforge.cli import main


class Field:
    def __set_name__(self, owner, name):
        raise KeyboardInterrupt


def interrupted(*args, **kwargs):
    class FileInfo:  # what a lazily imported module defines when the Ctrl-C lands
        index = Field()


module, name = sys.argv[1].split(":")
setattr(importlib.import_module(module), name, interrupted)
sys.argv = ["taskforge", *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize(("where", "command"), [
    ("taskforge.generate:generate", ["generate", "recipe.yaml", "--out", "out"]),
    ("taskforge.tasks:load_tasks", ["verify", "out"]),  # App.main's own handling
])
def test_a_ctrl_c_wrapped_by_python_is_still_a_ctrl_c(tmp_path: Path, where: str,
                                                      command: list[str]) -> None:
    run = subprocess.run([sys.executable, "-c", INTERRUPTED_IN_SET_NAME, where, *command],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 130, run.stderr
    assert "Traceback" not in run.stderr and "interrupted" in run.stderr, run.stderr
    assert ("resumes" in run.stderr) == (command[0] == "generate"), run.stderr


def test_grade_exits_1_at_reward_0_and_0_once_solved(workdir: Path) -> None:
    import taskforge
    from taskforge.errors import UserError

    record = json.loads(next((workdir / "out").glob("tasks-*.jsonl")).read_text().splitlines()[0])
    ws = workdir / "ws"
    assert run_cli("materialize", "out", record["instance_id"], str(ws), cwd=workdir).returncode == 0
    args = ("grade", "out", record["instance_id"], str(ws), "--sandbox", "none")
    unsolved = run_cli(*args, cwd=workdir)
    assert unsolved.returncode == 1 and "reward 0.0" in unsolved.stdout, unsolved.stderr
    subprocess.run(["git", "apply", "-"], cwd=ws, input=record["patch"], text=True, check=True)
    solved = run_cli(*args, cwd=workdir)
    assert solved.returncode == 0 and "reward 1.0" in solved.stdout, solved.stderr
    missing = run_cli("grade", "out", record["instance_id"], str(workdir / "nowhere"), cwd=workdir)
    one_error(missing, "nowhere", "does not exist")
    task = taskforge.load_tasks(workdir / "out").by_id(record["instance_id"])
    with pytest.raises(UserError, match="does not exist"):
        task.grade(workdir / "nowhere", sandbox="none")


def test_what_a_killed_run_left_is_removed_never_a_live_runs(tmp_path: Path) -> None:
    """A SIGKILLed run leaves its test-run directory in /tmp; the next run removes it, and
    `sandbox prune` removes a dead run's scratch tree, but not a live process's, nor one whose
    pid now belongs to another process (another start time)."""
    from taskforge.leftovers import start_ticks

    root = slow_project(tmp_path)
    write_recipe(tmp_path / "recipe.yaml", recipe_text(root))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TASKFORGE_SCRATCH": str(scratch)}
    run = subprocess.Popen([sys.executable, "-m", "taskforge", "generate", "recipe.yaml", "--out",
                            "out"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    tmp = Path(tempfile.gettempdir())
    try:
        ticks = start_ticks(run.pid)
        deadline = time.monotonic() + 60
        while not list(tmp.glob(f"taskforge-run-{run.pid}.*")) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    left = list(tmp.glob(f"taskforge-run-{run.pid}.{ticks}-*"))
    assert left, "the killed run left no test-run directory to clean"
    mine = start_ticks(os.getpid())
    dead = scratch / f"verify-{run.pid}.{ticks}-x"
    live = scratch / f"verify-{os.getpid()}.{mine}-y"
    reused = scratch / f"verify-{os.getpid()}.{int(mine) + 1}-z"  # pid reused by another process
    for tree in (dead, live, reused):
        (tree / "workspace").mkdir(parents=True)
    again = subprocess.run([sys.executable, "-m", "taskforge", "generate", "recipe.yaml", "--out",
                            "out"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr
    assert not any(p.exists() for p in [*left, dead, reused]) and live.is_dir()
    (dead / "workspace").mkdir(parents=True)
    prune = subprocess.run([sys.executable, "-m", "taskforge", "sandbox", "prune"],
                           capture_output=True, text=True, env=env)
    assert prune.returncode == 0, prune.stderr
    assert "1 scratch directories of dead runs" in prune.stdout, prune.stdout
    assert not dead.exists() and live.is_dir()


def test_a_long_silent_step_prints_a_heartbeat(tmp_path: Path) -> None:
    """A suite that takes long (here 4 s a test, with a 1 s heartbeat for the test's sake;
    30 s by default) is reported while it runs, not after minutes of silence."""
    root = slow_project(tmp_path)
    write_recipe(tmp_path / "recipe.yaml", recipe_text(root, cap=0))
    proc = subprocess.run([sys.executable, "-m", "taskforge", "generate", "recipe.yaml", "--out",
                           "out"], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "TASKFORGE_HEARTBEAT_S": "1"})
    assert proc.returncode == 0, proc.stderr
    beats = [ln for ln in proc.stdout.splitlines() if ln.startswith("taskforge: still working:")]
    assert beats and any("baseline" in ln for ln in beats), proc.stdout


def test_a_failed_run_leaves_an_empty_directory_empty(tmp_path: Path) -> None:
    write_recipe(tmp_path / "recipe.yaml", recipe_text(tmp_path / "no-such-project"))
    (tmp_path / "out").mkdir()
    one_error(run_cli("generate", "recipe.yaml", "--out", "out", cwd=tmp_path), "does not exist")
    assert list((tmp_path / "out").iterdir()) == []


def test_harbor_export_replaces_only_an_earlier_export_with_force(workdir: Path) -> None:
    args = ("export", "out", "--format", "harbor", "--no-images", "--out", "harbor")
    assert run_cli(*args, cwd=workdir).returncode == 0
    one_error(run_cli(*args, cwd=workdir), "harbor", "--force")
    proc = run_cli(*args, "--force", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    (workdir / "harbor" / "my-notes.txt").write_text("mine\n")
    one_error(run_cli(*args, "--force", cwd=workdir), "more than a harbor export")
    assert (workdir / "harbor" / "my-notes.txt").read_text() == "mine\n"


def test_a_worker_of_another_build_refuses_to_verify() -> None:
    """On a cluster, `make_task` runs on the nodes: one whose taskforge is not the driver's
    build would stamp its records with another build than the run's identity, so it ends
    the run instead (one line, no record). Positive control: the driver's own build passes
    the check and goes on to the candidate (here a missing one)."""
    def verifier(build: str) -> Verifier:
        return Verifier(None, None, Path("."), 1.0, 2, TaskOptions(), build=build)  # type: ignore[arg-type]

    with pytest.raises(UserError, match="every node must run the same taskforge"):
        verifier("0123456789abcdef").make_task(None, None, None)  # type: ignore[arg-type]
    with pytest.raises(AttributeError):  # past the check: there is no candidate
        verifier(build_digest()).make_task(None, None, None)  # type: ignore[arg-type]
