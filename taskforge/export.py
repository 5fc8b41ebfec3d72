"""`taskforge export`: a task directory in the formats other harnesses read.

- `swebench`: one JSONL file of SWE-bench instances. FAIL_TO_PASS and PASS_TO_PASS are JSON
  strings, as the SWE-bench datasets store them. SWE-bench starts from `base_commit`; a
  taskforge task starts from `base_commit` with `deletion_patch` applied, so that field is
  exported too and a harness must apply it before the agent runs; with hidden tests it
  deletes their files, and `test_patch` (SWE-bench's own field) recreates them for grading.
- `harbor`: a directory per task in Harbor's task format: `instruction.md`, `task.toml`,
  `environment/Dockerfile` (the sanitized task workspace on the task's environment image),
  `tests/test.sh` (restores the original tests, runs FAIL_TO_PASS and PASS_TO_PASS, writes
  `/logs/verifier/reward.txt`), `solution/solve.sh` (applies the reference patch). The
  environment images the Dockerfiles start `FROM` are saved, once each, in
  `images/environments.tar` (`docker load -i` on a machine that lacks them); with
  `images=False` they are not (the target machine must have them).
- `docker-image`: one image per task (the Harbor environment built: workspace at /app, its
  environment on PATH), all saved in `images.tar`, listed in `images.jsonl`; for labs that
  ship images to their cluster. The tests and the solution are not in the image.

Every export holds reference patches: each is marked as taskforge's (store/written.py), so
one written inside a source tree never enters that source's snapshot.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from taskforge.cache import write_atomic
from taskforge.errors import UserError
from taskforge.languages import language_of
from taskforge.model import TaskRecord
from taskforge.store.manifest import merge_manifests
from taskforge.store.written import EXPORT_MARKER, mark_export_dir, swebench_line
from taskforge.tasks import Task, TaskSet, load_tasks

FORMATS = ("swebench", "harbor", "docker-image")
# What a harbor export holds besides task directories; what a docker-image export holds.
HARBOR_IMAGES = "images"
ENVIRONMENTS_ARCHIVE = "environments.tar"
DOCKER_IMAGE_FILES = {"images.tar", "images.jsonl"}
# Where Harbor puts things in the task's container.
APP_DIR = "/app"


def export_tasks(tasks_path: str | Path, fmt: str, dest: str | Path, *,
                 cache: str | Path | None = None, force: bool = False,
                 images: bool = True) -> int:
    """Write every task of `tasks_path` (a directory of shards, possibly from many jobs, or one
    shard file) to `dest` in `fmt`; return how many were written. An existing `dest` is
    refused unless `force` (swebench: the file is replaced; harbor and docker-image: an
    earlier export of theirs emptied). `images=False`: a harbor export without its images."""
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt}: unknown; choose one of {', '.join(FORMATS)}")
    source = Path(tasks_path)
    if source.is_dir():
        merge_manifests(source)  # every shard whole, as its manifest recorded it
    tasks = load_tasks(source, cache)
    target = Path(dest)
    if fmt == "swebench" and target.is_dir():
        raise UserError(f"--out {dest}: a directory; swebench export writes one .jsonl file")
    if target.exists() and not (target.is_dir() and not any(target.iterdir())):
        if not force:
            raise UserError(f"--out {dest}: exists and is not an empty directory; pass --force "
                            "to replace it" if target.is_dir() else
                            f"--out {dest}: exists; pass --force to replace it")
        if target.is_dir():
            # Only an earlier export of the same format is ours to empty.
            if not _is_export(target, fmt):
                raise UserError(f"--out {dest}: holds more than a {fmt} export; not replaced "
                                "even with --force")
            shutil.rmtree(target)
        elif fmt != "swebench":
            target.unlink()
    if fmt == "swebench":
        write_swebench(tasks, target)
        return len(tasks)
    # Written beside and renamed at the end: a failed export (a docker build, Ctrl-C) leaves
    # nothing half-written under the name asked for.
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    partial.chmod(0o755)  # mkdtemp makes it private
    try:
        mark_export_dir(partial, fmt)  # first: never taken into a snapshot, even half-written
        if fmt == "harbor":
            write_harbor(tasks, partial, images=images)
        else:
            write_docker_images(tasks, partial)
        if target.is_dir():
            target.rmdir()  # empty (checked above)
        partial.rename(target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return len(tasks)


def _is_export(target: Path, fmt: str) -> bool:
    if fmt == "docker-image":
        return {entry.name for entry in target.iterdir()} <= DOCKER_IMAGE_FILES | {EXPORT_MARKER}
    return fmt == "harbor" and all((entry / "task.toml").is_file()
                                   or entry.name in (HARBOR_IMAGES, EXPORT_MARKER)
                                   for entry in target.iterdir())


def swebench_instance(record: TaskRecord) -> dict[str, Any]:
    return {
        "instance_id": record["instance_id"], "repo": record["repo"],
        "base_commit": record["base_commit"], "patch": record["patch"],
        "test_patch": record["test_patch"], "problem_statement": record["problem_statement"],
        "hints_text": "", "created_at": record["created_at"],
        # SWE-bench's version picks the environment; the environment key names it exactly.
        "version": record["environment"]["key"],
        "FAIL_TO_PASS": json.dumps(record["FAIL_TO_PASS"]),
        "PASS_TO_PASS": json.dumps(record["PASS_TO_PASS"]),
        "environment_setup_commit": record["base_commit"],
        "deletion_patch": record["deletion_patch"],
    }


def write_swebench(tasks: TaskSet, dest: Path) -> None:
    write_atomic(dest, "".join(swebench_line(swebench_instance(t.record)) for t in tasks))


def write_harbor(tasks: TaskSet, dest: Path, *, images: bool = True) -> None:
    from taskforge import task_images

    client = task_images.docker_client() if images else None
    dest.mkdir(parents=True, exist_ok=True)
    tags: dict[str, None] = {}  # the environment images, in task order, once each
    for task in tasks:
        write_harbor_task(task, dest / task.instance_id)
        if client is not None and task_images.env_tag(task) not in tags:
            tags[task_images.ensure_env_image(client, task)] = None
    if tags:
        (dest / HARBOR_IMAGES).mkdir()
        task_images.save_images(list(tags), dest / HARBOR_IMAGES / ENVIRONMENTS_ARCHIVE)


def write_docker_images(tasks: TaskSet, dest: Path) -> None:
    """Each task's Harbor environment built as an image; all saved in one archive."""
    from taskforge import task_images

    client = task_images.docker_client()
    dest.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="docker-image-export-") as scratch:
        for task in tasks:
            task_images.ensure_env_image(client, task)
            root = Path(scratch) / task.instance_id
            write_harbor_task(task, root)
            rows.append({"instance_id": task.instance_id,
                         "image": task_images.build_task_image(client, task, root / "environment"),
                         "environment_image": task_images.env_tag(task), "workdir": APP_DIR})
            shutil.rmtree(root)
    task_images.save_images([row["image"] for row in rows], dest / "images.tar")
    write_atomic(dest / "images.jsonl", "".join(json.dumps(row, sort_keys=True) + "\n"
                                                for row in rows))


def write_harbor_task(task: Task, root: Path) -> None:
    record = task.record
    env = record["environment"]
    (root / "instruction.md").parent.mkdir(parents=True)
    (root / "instruction.md").write_text(record["problem_statement"].rstrip() + "\n\n"
                                         f"The repository is in `{APP_DIR}`.\n")
    (root / "task.toml").write_text(task_toml(record))

    environment = root / "environment"
    task.materialize(environment / "workspace")
    (environment / "Dockerfile").write_text(dockerfile(task))

    tests = root / "tests"
    original = tests / "original"
    snapshot = task.snapshot_root()
    for rel in files_to_restore(record, snapshot):
        (original / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(snapshot / rel, original / rel)
    (tests / "config.json").write_text(json.dumps({
        "FAIL_TO_PASS": record["FAIL_TO_PASS"], "PASS_TO_PASS": record["PASS_TO_PASS"],
        "pythonpath": env["pythonpath"],
        "restore": sorted(str(p.relative_to(original)) for p in original.rglob("*") if p.is_file()),
    }, indent=2, sort_keys=True) + "\n")
    _script(tests / "test.sh", TEST_SH)
    (tests / "taskforge_grade.py").write_text(GRADE_PY)
    (tests / "taskforge_outcomes.py").write_text(OUTCOMES_PY)

    solution = root / "solution"
    solution.mkdir()
    (solution / "reference.patch").write_text(record["patch"])
    _script(solution / "solve.sh", SOLVE_SH)


def files_to_restore(record: TaskRecord, snapshot: Path) -> list[str]:
    """The original test files, every conftest.py and the pytest configuration: what grading
    puts back before it runs, so edits to them cannot change the reward. Never a file the
    deletion touched (that would hand back the solution)."""
    deleted = {d["path"] for d in record["deleted"]}
    language = language_of(record)
    wanted = {test_id.split("::")[0] for test_id in record["FAIL_TO_PASS"] + record["PASS_TO_PASS"]}
    for path in snapshot.rglob("*"):
        rel = path.relative_to(snapshot).as_posix()
        if path.is_file() and ".git" not in rel.split("/") and language.is_protected(rel):
            wanted.add(rel)
    return sorted(p for p in wanted - deleted if (snapshot / p).is_file())


def task_toml(record: TaskRecord) -> str:
    def string(value: str) -> str:
        return json.dumps(value)  # a JSON string is a valid TOML basic string

    difficulty = record["difficulty"]
    tags = ["python", "feature-deletion", record["strategy"]]
    return "\n".join([
        'version = "1.0"', "",
        "[metadata]",
        'author_name = "taskforge"',
        'category = "programming"',
        f"tags = [{', '.join(string(t) for t in tags)}]",
        f"instance_id = {string(record['instance_id'])}",
        f"repo = {string(record['repo'])}",
        f"base_commit = {string(record['base_commit'])}",
        f"lines_deleted = {int(difficulty['lines_deleted'])}",
        f"fail_to_pass = {len(record['FAIL_TO_PASS'])}", "",
        "[verifier]", "timeout_sec = 900.0", "",
        "[agent]", "timeout_sec = 3600.0", "",
        "[environment]", "build_timeout_sec = 1200.0", "cpus = 1", "memory_mb = 4096",
        "storage_mb = 10240", "",
    ])


def dockerfile(task: Task) -> str:
    from taskforge.task_images import VENV_BIN, env_tag

    env = task.record["environment"]
    roots = ":".join(f"{APP_DIR}/{p}".rstrip("/.") if p != "." else APP_DIR
                     for p in env["pythonpath"])
    lines = [
        f"# The task's environment (Python {env['python']}, its test dependencies installed),",
        "# built by taskforge without a registry: on a machine that lacks it, first",
        f"# `docker load -i ../../{HARBOR_IMAGES}/{ENVIRONMENTS_ARCHIVE}` (saved by the export).",
        f"FROM {env_tag(task)}",
        f"WORKDIR {APP_DIR}",
        f"COPY workspace/ {APP_DIR}/",
        f"ENV PATH={VENV_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        # The project is imported from the workspace, as taskforge's own environments do.
        f"ENV PYTHONPATH={roots}",
    ]
    return "\n".join(lines) + "\n"


def _script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


SOLVE_SH = """\
#!/bin/bash
# The reference solution: the patch that restores the deleted code.
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
cd "${TASKFORGE_APP:-/app}"
git apply --whitespace=nowarn "$here/reference.patch"
"""

TEST_SH = """\
#!/bin/bash
# Harbor's verifier: restore the original tests, run FAIL_TO_PASS and PASS_TO_PASS, and write
# 1 to the reward file only if every one of them passed.
set -u
here="$(dirname "$(readlink -f "$0")")"
logs="${TASKFORGE_LOGS:-/logs/verifier}"
mkdir -p "$logs"
echo 0 > "$logs/reward.txt"
exec python "$here/taskforge_grade.py" "${TASKFORGE_APP:-/app}" "$here" "$logs"
"""

# Runs inside the task's container with only the standard library and the task's pytest.
GRADE_PY = '''\
"""Grade the workspace: originals back, added conftest.py files out, expected tests run."""
import json, os, shutil, subprocess, sys
from pathlib import Path

app, here, logs = (Path(a) for a in sys.argv[1:4])
config = json.loads((here / "config.json").read_text())
restore = set(config["restore"])
for conftest in app.rglob("conftest.py"):
    if conftest.relative_to(app).as_posix() not in restore and ".git" not in conftest.parts:
        conftest.unlink()
for rel in restore:
    (app / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(here / "original" / rel, app / rel)
expected = config["FAIL_TO_PASS"] + config["PASS_TO_PASS"]
outcomes = logs / "outcomes.json"
outcomes.unlink(missing_ok=True)
env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "TASKFORGE_OUTCOMES": str(outcomes),
       "PYTHONPATH": os.pathsep.join([str(here)] + [str(app / p) for p in config["pythonpath"]])}
with (logs / "pytest.log").open("w") as log:
    subprocess.run([sys.executable, "-m", "pytest", "-p", "taskforge_outcomes", "-p",
                    "no:cacheprovider", "-q", *expected], cwd=app, env=env, stdout=log,
                   stderr=subprocess.STDOUT)
seen = json.loads(outcomes.read_text()) if outcomes.exists() else {}
failed = [t for t in expected if seen.get(t) != "passed"]
(logs / "reward.txt").write_text("0\\n" if failed else "1\\n")
print(f"{len(expected) - len(failed)} of {len(expected)} expected tests passed")
'''

# A pytest plugin (loaded with -p): each test's outcome by node id. A failure or skip in any
# phase, or an expected failure, is not a pass; a run that never finishes writes nothing.
OUTCOMES_PY = '''\
import json, os

outcomes = {}


def pytest_runtest_logreport(report):
    if report.outcome != "passed" or hasattr(report, "wasxfail"):
        outcomes[report.nodeid] = "xfail" if hasattr(report, "wasxfail") else report.outcome
    elif report.when == "call":
        outcomes.setdefault(report.nodeid, "passed")


def pytest_sessionfinish(session):
    with open(os.environ["TASKFORGE_OUTCOMES"], "w") as f:
        json.dump(outcomes, f)
'''
