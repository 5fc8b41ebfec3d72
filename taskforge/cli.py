"""The command line: parses, calls the stage functions, renders. It decides nothing.

User mistakes (`UserError`) become one plain line on stderr and exit code 2, here and only here.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from rich.syntax import Syntax
from rich.table import Table

from taskforge.cache import cache_root
from taskforge.errors import UserError
from taskforge.generate import FUNNEL_STAGES
from taskforge.model import SourceSpec
from taskforge.sandbox import NAMES as SANDBOX_NAMES
from taskforge.sandbox import SandboxUnavailable, get_sandbox

HEARTBEAT_S = 30.0  # $TASKFORGE_HEARTBEAT_S overrides
stdout = Console()
stderr = Console(stderr=True)


class UserFacingError(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        # One line, whatever a library's message holds (tarfile's and yaml's span several).
        message = " ".join(part.strip() for part in self.message.splitlines() if part.strip())
        click.echo(f"taskforge: error: {message}", err=True)


def is_ctrl_c(error: BaseException) -> bool:
    """A KeyboardInterrupt, or an error Python raised because of one: a Ctrl-C that lands
    while a module imports can come out as "RuntimeError: Error calling __set_name__ ..."
    (CPython 3.11 wraps what a descriptor's __set_name__ raises, a dataclass field's
    included), the KeyboardInterrupt kept as its cause."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def exit_interrupted(message: str) -> NoReturn:
    """Exit 130 after a Ctrl-C. A second one while the interpreter shuts down (a user
    pressing it again) is ignored: it would end the process by the signal instead, with
    neither 130 nor a word.

    CPython 3.11 under `python -m` ends a process by SIGINT at exit, whatever its exit code,
    when a KeyboardInterrupt once left an `exec` of a string (a dataclass's generated
    methods, built while a module imports), even though the program caught it: evaluating
    another string clears that mark (CPython resets it at every such `exec`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exec("None")  # clears the mark (see above)
    click.echo(message, err=True)
    sys.exit(130)


class App(click.Group):
    """Turns a UserError (or a sandbox that went away) raised anywhere below into exit code
    2 with one line."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """click's own errors (a bad option, a missing argument) as one line with exit code
        2 like every other user error, and Ctrl-C as exit code 130, not 1 ("found a problem")."""
        try:
            code = super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.UsageError as e:
            where = e.ctx.command_path if e.ctx else "taskforge"
            message = " ".join(e.format_message().split())
            click.echo(f"taskforge: error: {where}: {message} (see {where} --help)", err=True)
            sys.exit(2)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        except click.Abort as e:
            if isinstance(e.__cause__, EOFError):
                raise e.__cause__ from None  # a bug, not a Ctrl-C: keep its traceback
            exit_interrupted("taskforge: interrupted")
        except Exception as e:
            if not is_ctrl_c(e):
                raise
            exit_interrupted("taskforge: interrupted")
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except UserError as e:
            raise UserFacingError(str(e)) from None
        except SandboxUnavailable as e:  # the backend went away mid-run (daemon, prune)
            raise UserFacingError(f"sandbox: {e}") from None


class CliProgress:
    """A rich progress bar on a terminal, plain log lines otherwise.

    Off a terminal the log lines go to stdout, so stderr carries only warnings and the one
    line of a user error; `quiet` (for --json output) drops them. Without a bar, a step that
    says nothing for HEARTBEAT_S seconds (a suite that hangs until its timeout) gets a
    "still ..." line, so a long silence never looks like a hang of taskforge itself.
    """

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty() and not quiet
        self.bar: RichProgress | None = None
        self.task_id: Any = None
        self.done = 0
        self.total = 0
        self.last = ("starting", time.monotonic())
        self.stopped = threading.Event()
        if not quiet:
            threading.Thread(target=self._heartbeat, daemon=True).start()

    def _heartbeat(self) -> None:
        interval = float(os.environ.get("TASKFORGE_HEARTBEAT_S", HEARTBEAT_S))
        said = time.monotonic()
        while not self.stopped.wait(min(interval / 4, 1.0)):
            what, since = self.last
            now = time.monotonic()
            if now - max(said, since) >= interval and not self.bar:
                click.echo(f"taskforge: still working: {what} ({now - since:.0f} s so far)")
                said = now

    def log(self, message: str) -> None:
        self.last = (message, time.monotonic())
        if self.bar:
            self.bar.console.log(message)
        elif not self.quiet:
            click.echo(f"taskforge: {message}")

    def start(self, total: int) -> None:
        self.done, self.total = 0, total
        if self.tty:
            if self.bar is None:
                self.bar = RichProgress(TextColumn("{task.description}"), BarColumn(),
                                        MofNCompleteColumn(), TimeElapsedColumn(),
                                        console=stderr, transient=True)
                self.bar.start()
            self.task_id = self.bar.add_task("verifying candidates", total=total)

    def advance(self, message: str) -> None:
        self.last = (message, time.monotonic())
        self.done += 1
        if self.bar:
            self.bar.update(self.task_id, advance=1, description=message[:60])
        elif not self.quiet:
            click.echo(f"taskforge: [{self.done}/{self.total}] {message}")

    def stop(self) -> None:
        self.stopped.set()
        if self.bar:
            self.bar.stop()


def source_from_argument(text: str, ref: str | None) -> SourceSpec:
    if text.startswith("pypi:"):
        return SourceSpec(kind="pypi", location=text[5:])
    if text.startswith("npm:"):
        return SourceSpec(kind="npm", location=text[4:])
    if text.startswith("debian:"):
        return SourceSpec(kind="debian", location=text[7:])
    path = Path(text)
    bare_repo = path.is_dir() and (path / "HEAD").is_file() and (path / "objects").is_dir()
    if "://" in text or text.startswith("git@") or text.endswith(".git") or bare_repo or ref:
        return SourceSpec(kind="git", location=text, ref=ref)
    return SourceSpec(kind="path", location=text)


cache_option = click.option("--cache", type=click.Path(file_okay=False), default=None,
                            help="Cache directory (default: $TASKFORGE_CACHE or ~/.cache/taskforge).")
sandbox_option = click.option("--sandbox", type=click.Choice(SANDBOX_NAMES), default="auto",
                              show_default=True, help="Where tests run.")


@click.group(cls=App, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="taskforge")
def cli() -> None:
    """Verified feature-deletion coding tasks from real, test-heavy repositories."""


@cli.command()
@click.argument("recipe", type=click.Path())
@click.option("--out", default="out", show_default=True, type=click.Path(file_okay=False))
@click.option("--shard", default="0/1", show_default=True, help="I/N: produce shard I of N (0-based).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 256))
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True)
@click.option("--ray-address", default=None)
@click.option("--sandbox", type=click.Choice(SANDBOX_NAMES), default=None,
              help="Overrides the recipe's sandbox.")
@click.option("--limit", type=click.IntRange(0), default=None, help="At most N tasks in all.")
@click.option("--seed", type=int, default=None, help="Overrides the recipe's seed.")
@click.option("--no-resume", is_flag=True, help="Start this shard over instead of resuming.")
@click.option("--force", is_flag=True, help="Write into --out although another run (another "
                                             "recipe, seed or shard count) or no taskforge run "
                                             "wrote it; that run's tasks are replaced.")
@click.option("--difficulty", default=None, metavar="harder-than=STATS.jsonl",
              help="Tasks harder than those a training run solved (STATS: one JSON object a "
                   "line with instance_id and solve_rate); see docs/curriculum.md.")
@cache_option
def generate(recipe: str, out: str, shard: str, workers: int, executor: str,
             ray_address: str | None, sandbox: str | None, limit: int | None, seed: int | None,
             no_resume: bool, force: bool, difficulty: str | None, cache: str | None) -> None:
    """Generate verified tasks from RECIPE into --out (resuming the same run found there)."""
    from taskforge.generate import generate as run_generate
    from taskforge.store.shards import parse_shard

    progress = CliProgress()
    try:
        summary = run_generate(recipe, out, shard=parse_shard(shard), workers=workers,
                               executor=executor, ray_address=ray_address, sandbox=sandbox,
                               limit=limit, seed=seed, resume=not no_resume, cache=cache,
                               progress=progress, difficulty=difficulty, force=force)
    except BaseException as e:  # a KeyboardInterrupt, or an error wrapping one
        if not is_ctrl_c(e):
            raise
        progress.stop()
        exit_interrupted(f"taskforge: interrupted; finished candidates are journaled in {out}: "
                         "the same command resumes there")
    finally:
        progress.stop()
    for warning in summary.warnings:
        click.echo(f"taskforge: warning: {warning}", err=True)
    render_summary(summary.to_dict())


def render_summary(summary: dict[str, Any]) -> None:
    funnel = Table(title=f"funnel: {summary['out']}")
    funnel.add_column("stage")
    funnel.add_column("count", justify="right")
    for stage in FUNNEL_STAGES:
        funnel.add_row(stage, str(summary["funnel"].get(stage, 0)))
    stdout.print(funnel)
    if summary["rejections"]:
        reasons = Table(title="rejection reasons")
        reasons.add_column("reason")
        reasons.add_column("count", justify="right")
        for reason, count in sorted(summary["rejections"].items(), key=lambda kv: -kv[1]):
            reasons.add_row(reason, str(count))
        stdout.print(reasons)
    per_source = Table(title="per source")
    for column in ("source", "language", "tests", "stable", "candidates", "tried", "emitted"):
        per_source.add_column(column, justify="left" if column in ("source", "language")
                              else "right")
    timed = any("seconds_per_task" in s for s in summary["sources"])
    if timed:
        per_source.add_column("s/task", justify="right")
    for s in summary["sources"]:
        cells = [str(s.get(k, "")) for k in ("tests", "stable", "candidates", "tried", "emitted")]
        if timed:
            cells.append(str(s.get("seconds_per_task") or "-"))
        per_source.add_row(s["name"], s.get("language") or "-", *cells)
    stdout.print(per_source)
    for s in summary["sources"]:
        if s.get("failed"):  # a source set aside: its row is blank, say why
            stdout.print(f"set aside: {escape(s.get('source') or s['name'])}: {escape(s['failed'])}",
                         soft_wrap=True)
    if summary.get("strategies"):
        render_strategies(summary["strategies"])


def render_strategies(strategies: dict[str, dict[str, Any]]) -> None:
    """Yield and difficulty per strategy: counts, then mean/median of the tasks' figures."""
    table = Table(title="per strategy (difficulty: mean/median of the tasks)")
    columns = ("strategy", "candidates", "tried", "emitted", "yield", "score", "lines deleted",
               "FAIL_TO_PASS", "call depth", "rejections")
    for column in columns:
        table.add_column(column, justify="left" if column in ("strategy", "rejections") else "right")

    def figure(row: dict[str, Any], name: str) -> str:
        found = row["difficulty"].get(name)
        return f"{found['mean']:g}/{found['median']:g}" if found else "-"

    for name, row in strategies.items():
        reasons = sorted(row["rejections"].items(), key=lambda kv: (-kv[1], kv[0]))
        table.add_row(name, str(row["candidates"]), str(row["tried"]), str(row["emitted"]),
                      "-" if row["yield"] is None else f"{100 * row['yield']:.0f}%",
                      *(figure(row, f) for f in ("score", "lines_deleted", "fail_to_pass",
                                                 "call_depth")),
                      escape(", ".join(f"{reason} {n}" for reason, n in reasons)) or "-")
    # One row per strategy, never squeezed to 80 columns when the output goes to a file.
    (stdout if stdout.is_terminal else Console(width=160)).print(table)


@cli.command()
@click.argument("source")
@click.option("--ref", default=None, help="Commit, branch or tag of a git source.")
@click.option("--repeats", default=2, show_default=True, type=click.IntRange(1))
@click.option("--timeout", default=300.0, show_default=True, type=float)
@click.option("--max-size-mb", type=click.FloatRange(0), default=None,
              help="Refuse a source whose files take more than this.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="With a recipe: the output directory of its generate run, for the tasks "
                   "and yield columns.")
@click.option("--json", "as_json", is_flag=True)
@sandbox_option
@cache_option
def ingest(source: str, ref: str | None, repeats: int, timeout: float, max_size_mb: float | None,
           out: str | None, as_json: bool, sandbox: str, cache: str | None) -> None:
    """Snapshot SOURCE, build its environment, run its baseline; print a summary with every
    detection decision. SOURCE may be a recipe (.yaml): then one row per source, failed ones
    with their reason (--repeats, --timeout and --max-size-mb come from the recipe)."""
    from taskforge.ingest import ingest as run_ingest

    progress = CliProgress(quiet=as_json)
    if source.endswith((".yaml", ".yml")):
        _ingest_report(source, out, as_json, sandbox, cache, progress)
        return
    if out is not None:
        raise UserError(f"--out {out}: only a recipe's report reads a generate output")
    src = run_ingest(source_from_argument(source, ref), cache=cache_root(cache),
                     base_dir=Path.cwd(), sandbox=get_sandbox(sandbox), repeats=repeats,
                     timeout=timeout, max_source_mb=max_size_mb, log=progress.log)
    info = {
        "name": src.snapshot.name, "source": src.snapshot.source, "snapshot": src.snapshot.id,
        "commit": src.snapshot.commit, "license": src.snapshot.license,
        "environment": {"key": src.env.key, "python": src.env.spec.python,
                        "pythonpath": list(src.env.pythonpath),
                        "build_seconds": src.env.build_seconds,
                        "test_command": list(src.env.spec.test_command),
                        "decisions": list(src.env.spec.decisions)},
        "notes": list(src.notes),
        "tests": len(src.baseline.tests), "stable": len(src.baseline.stable),
        "flaky": len(src.baseline.flaky), "failing": len(src.baseline.failing),
        "baseline_seconds": list(src.baseline.run_seconds),
        "alone_seconds": src.baseline.isolated_seconds,
        "alone_unmeasured": src.baseline.isolated_unmeasured,
        "hung": list(src.baseline.hung), "import_errors": src.baseline.collection_errors,
    }
    src.project.parsed_files()  # parse every source file now, so syntax errors are reported
    info["skipped_files"] = dict(sorted(src.project.skipped.items()))
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    table = Table(show_header=False, title=f"ingest: {src.snapshot.name}")
    for key in ("source", "snapshot", "commit", "license", "tests", "stable", "flaky", "failing",
                "baseline_seconds", "alone_seconds", "alone_unmeasured"):
        table.add_row(key, escape(str(info[key])))
    table.add_row("environment", f"{src.env.key} (python {src.env.spec.python}, "
                                 f"built in {src.env.build_seconds}s)")
    table.add_row("import roots", ", ".join(src.env.pythonpath))
    table.add_row("test command", escape(" ".join(src.env.spec.test_command)))
    for note in src.notes:
        table.add_row("source", escape(note))
    for test_id in src.baseline.hung:
        table.add_row("hung (left out)", escape(test_id))
    for module, error in src.baseline.collection_errors.items():
        table.add_row("import error", escape(f"{module}: {error}"))
    for decision in src.env.spec.decisions:
        table.add_row("decision", escape(decision))
    for path, why in info["skipped_files"].items():
        table.add_row("skipped", escape(f"{path}: {why}"))
    stdout.print(table)


def _ingest_report(recipe: str, out: str | None, as_json: bool, sandbox: str, cache: str | None,
                   progress: CliProgress) -> None:
    """The ingest report of a recipe: a row per source, totals, the reason of each failure."""
    from taskforge.ingest import ingest_recipe

    rows = ingest_recipe(recipe, cache=cache_root(cache), sandbox=get_sandbox(sandbox),
                         out=Path(out) if out else None, log=progress.log)
    ok = [r for r in rows if r.failed is None]
    tried = sum(r.tried or 0 for r in ok)
    tasks = sum(r.tasks or 0 for r in ok)
    totals = {"sources": len(rows), "ingested": len(ok),
              "ingested_90_stable": sum(r.stable_share >= 0.9 for r in ok),
              "tests": sum(r.tests for r in ok), "stable": sum(r.stable for r in ok),
              "candidates": sum(r.candidates for r in ok),
              "tried": tried if out else None, "tasks": tasks if out else None,
              "yield": round(tasks / tried, 4) if out and tried else None}
    if as_json:
        click.echo(json.dumps({"recipe": recipe, "sources": [r.to_dict() for r in rows],
                               "totals": totals}, indent=2))
        return
    table = Table(title=f"ingest report: {recipe}")
    columns = ("package", "license", "tests", "stable", "stable %", "baseline s", "env s",
               "candidates", "tried", "tasks", "yield")
    for column in columns:
        table.add_column(column, justify="left" if column in ("package", "license") else "right")

    def show(value: Any) -> str:
        return "-" if value is None else str(value)

    for r in ok:
        table.add_row(escape(r.name), show(r.license), str(r.tests), str(r.stable),
                      f"{100 * r.stable_share:.1f}",
                      f"{r.baseline_seconds[0]:.1f}" if r.baseline_seconds else "-",
                      f"{r.env_build_seconds:.1f}", str(r.candidates), show(r.tried),
                      show(r.tasks),
                      "-" if r.yield_share is None else f"{100 * r.yield_share:.0f}%")
    table.add_row("[bold]total[/]", "", str(totals["tests"]), str(totals["stable"]),
                  f"{100 * totals['stable'] / totals['tests']:.1f}" if totals["tests"] else "-",
                  "", "", str(totals["candidates"]), show(totals["tried"]), show(totals["tasks"]),
                  "-" if totals["yield"] is None else f"{100 * totals['yield']:.0f}%")
    # A row per package, never squeezed to 80 columns when the output goes to a file.
    console = stdout if stdout.is_terminal else Console(width=150)
    console.print(table)
    console.print(f"ingested {len(ok)} of {len(rows)} sources; "
                 f"{totals['ingested_90_stable']} with at least 90% of their tests stably passing")
    for r in rows:
        if r.failed is not None:
            console.print(f"failed: {escape(r.source)}: {escape(r.failed)}", soft_wrap=True)


@cli.command()
@click.argument("source")
@click.option("--ref", default=None)
@click.option("--strategy", "strategies", multiple=True, default=("stub-function",),
              show_default=True)
@click.option("--min-body-lines", default=3, show_default=True, type=click.IntRange(0))
@click.option("--min-covering-tests", default=1, show_default=True, type=click.IntRange(0))
@click.option("--json", "as_json", is_flag=True)
@sandbox_option
@cache_option
def candidates(source: str, ref: str | None, strategies: tuple[str, ...], min_body_lines: int,
               min_covering_tests: int, as_json: bool, sandbox: str, cache: str | None) -> None:
    """List SOURCE's deletable features with their covering tests."""
    from taskforge.ingest import ingest as run_ingest
    from taskforge.languages import strategy_names
    from taskforge.languages.strategy import SelectOptions

    progress = CliProgress(quiet=as_json)
    src = run_ingest(source_from_argument(source, ref), cache=cache_root(cache),
                     base_dir=Path.cwd(), sandbox=get_sandbox(sandbox), repeats=2, timeout=300,
                     log=progress.log)
    select = SelectOptions(min_covering_tests=min_covering_tests, min_body_lines=min_body_lines)
    for name in strategies:
        if name not in strategy_names():
            raise UserError(f"unknown strategy {name!r}; known: {', '.join(strategy_names())}")
    found = [c for name in strategies if (strategy := src.language.strategy(name))
             for c in strategy.candidates(src.project, src.baseline, select)]
    for path, why in sorted(src.project.skipped.items()):
        click.echo(f"taskforge: warning: {path}: {why}", err=True)
    if as_json:
        click.echo(json.dumps([{"strategy": c.strategy, "path": c.path, "symbol": c.symbol,
                                "kind": c.kind, "start_line": c.start_line,
                                "end_line": c.end_line, "body_lines": c.body_lines,
                                "import_time": c.import_time, "subprocess": c.subprocess,
                                "covering_tests": list(c.covering_tests)} for c in found],
                              indent=2))
        return
    table = Table(title=f"{len(found)} candidates in {src.snapshot.name}")
    for column in ("symbol", "where", "body lines", "covering tests"):
        table.add_column(column)
    for c in found:
        table.add_row(c.symbol, f"{c.path}:{c.start_line}-{c.end_line}", str(c.body_lines),
                      str(len(c.covering_tests)))
    stdout.print(table)


@cli.command()
@click.argument("tasks", type=click.Path())
@click.argument("instance_id")
@cache_option
def show(tasks: str, instance_id: str, cache: str | None) -> None:
    """Show a task: statement, deleted symbols, diffs."""
    from taskforge.tasks import load_tasks

    record = load_tasks(tasks, cache).by_id(instance_id).record
    stdout.rule(record["instance_id"])
    stdout.print(f"[bold]repo[/] {record['repo']} @ {record['base_commit'][:12]}   "
                 f"[bold]strategy[/] {record['strategy']}   [bold]license[/] {record['license']}")
    for d in record["deleted"]:
        stdout.print(f"[bold]deleted[/] {d['kind']} {d['symbol']} "
                     f"({d['path']}:{d['start_line']}-{d['end_line']})")
    stdout.print(f"[bold]FAIL_TO_PASS[/] {len(record['FAIL_TO_PASS'])}   "
                 f"[bold]PASS_TO_PASS[/] {len(record['PASS_TO_PASS'])}")
    stdout.rule("problem statement")
    stdout.print(record["problem_statement"], markup=False)
    stdout.rule("deletion_patch")
    stdout.print(Syntax(record["deletion_patch"], "diff", theme="ansi_dark"))
    stdout.rule("patch (reference solution)")
    stdout.print(Syntax(record["patch"], "diff", theme="ansi_dark"))
    if record.get("test_patch"):
        stdout.rule("test_patch (restores the hidden tests)")
        stdout.print(Syntax(record["test_patch"], "diff", theme="ansi_dark"))


@cli.command()
@click.argument("tasks", type=click.Path())
@click.argument("instance_id")
@click.argument("dest", type=click.Path(file_okay=False))
@cache_option
def materialize(tasks: str, instance_id: str, dest: str, cache: str | None) -> None:
    """Create the agent's starting workspace for a task at DEST."""
    from taskforge.tasks import load_tasks

    path = load_tasks(tasks, cache).by_id(instance_id).materialize(dest)
    click.echo(str(path))


@cli.command()
@click.argument("tasks", type=click.Path())
@click.argument("instance_id")
@click.argument("workspace", type=click.Path())
@click.option("--json", "as_json", is_flag=True)
@click.option("--mode", type=click.Choice(["binary", "fraction"]), default="binary",
              show_default=True, help="binary: 1.0 when every expected test passes; fraction: "
                                      "the share of FAIL_TO_PASS passed when all PASS_TO_PASS pass.")
@click.option("--timeout", default=300.0, show_default=True, type=float)
@sandbox_option
@cache_option
def grade(tasks: str, instance_id: str, workspace: str, as_json: bool, mode: str, timeout: float,
          sandbox: str, cache: str | None) -> None:
    """Grade the solution in WORKSPACE (left untouched) on a clean copy: reward 0..1, and
    what the solution tampered with; exit 1 at reward 0 (like verify and scan on a problem)."""
    from taskforge.tasks import load_tasks

    result = load_tasks(tasks, cache).by_id(instance_id).grade(
        workspace, mode=mode, sandbox=sandbox, timeout=timeout)  # type: ignore[arg-type]
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    else:
        stdout.print(f"reward {result.reward}  resolved {result.resolved}  "
                     f"passed {len(result.passed)}  failed {len(result.failed)}  "
                     f"errors {len(result.errors)}  tampered {list(result.tampered)}")
    if result.reward == 0:
        sys.exit(1)


@cli.command()
@click.argument("tasks", type=click.Path())
@click.option("--id", "instance_id", default=None, help="Only this task.")
@click.option("--full-suite", is_flag=True, help="Run F2P and every P2P test, not only the "
                                                  "targeted set.")
@click.option("--grade", "grade_reference", is_flag=True,
              help="Also grade each task as an RL loop would: the reference solution must "
                   "score 1.0 with nothing reported, the start state 0 (two whole-suite "
                   "runs a task).")
@click.option("--timeout", default=300.0, show_default=True, type=float)
@sandbox_option
@cache_option
def verify(tasks: str, instance_id: str | None, full_suite: bool, grade_reference: bool,
           timeout: float, sandbox: str, cache: str | None) -> None:
    """Re-verify tasks from scratch: every gate `generate` ran (labels, trivial-solution,
    collection-breaks, leak-scan), and with --grade the grader's; exit 1 if any task fails
    one."""
    from taskforge.tasks import load_tasks

    taskset = load_tasks(tasks, cache)
    chosen = [taskset.by_id(instance_id)] if instance_id else list(taskset)
    box = get_sandbox(sandbox)
    failures = 0
    for n, task in enumerate(chosen, 1):
        problems = task.reverify(sandbox=box, full_suite=full_suite, grade=grade_reference,
                                 timeout=timeout)
        gates = sorted({p.split(":", 1)[0] for p in problems})
        status = "ok" if not problems else f"FAILED {', '.join(gates)}: " + "; ".join(problems)
        failures += bool(problems)
        click.echo(f"[{n}/{len(chosen)}] {task.instance_id}: {status}")
    click.echo(f"{len(chosen) - failures} verified, {failures} failed")
    if failures:
        sys.exit(1)


@cli.command()
@click.argument("tasks", type=click.Path())
@click.argument("instance_id")
@click.argument("directory", type=click.Path())
@click.option("--json", "as_json", is_flag=True)
@cache_option
def scan(tasks: str, instance_id: str, directory: str, as_json: bool, cache: str | None) -> None:
    """Leak-scan DIRECTORY for residue of a task's deleted code; exit 1 on a hit, or on a
    file the scan could not decide (unreadable, undecodable, or over a decoding budget)."""
    from taskforge.patches import source_deletion
    from taskforge.sanitize import ScanStats, scan_task_dir
    from taskforge.tasks import load_tasks

    if not Path(directory).exists():
        raise UserError(f"{directory}: directory to scan does not exist")
    task = load_tasks(tasks, cache).by_id(instance_id)
    # Hidden tests leave the workspace but are no deleted code: only the code's deletion counts.
    record = {**task.record, "deletion_patch": source_deletion(task.record)}
    stats = ScanStats()
    hits = scan_task_dir(record, Path(directory), task.snapshot_root(), stats)
    for found in [*hits, *stats.undecided]:
        click.echo(json.dumps(found.to_json()) if as_json else str(found))
    failed = bool(hits or stats.undecided)
    if not as_json:
        click.echo(f"{len(hits)} hits, {len(stats.undecided)} undecided" if failed
                   else "clean", err=failed)
    if failed:
        sys.exit(1)


@cli.command()
@click.argument("directory", type=click.Path())
@click.option("--json", "as_json", is_flag=True)
def stats(directory: str, as_json: bool) -> None:
    """Yield funnel, rejection reasons and difficulty of a task directory (the shards of one
    run or of many jobs copied into it)."""
    from taskforge.stats import collect_stats

    data = collect_stats(Path(directory))
    if as_json:
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    if data["missing_shards"]:
        click.echo(f"taskforge: warning: {directory}: shards {', '.join(data['missing_shards'])} "
                   "are missing", err=True)
    render_summary({"out": directory, "shard": ",".join(data["shards"]) or "-",
                    "funnel": data["funnel"], "rejections": data["rejections"],
                    "sources": data["sources"], "strategies": data["strategies"]})


@cli.command()
@click.argument("directory", type=click.Path())
@click.option("--out", "dest", type=click.Path(), default=None,
              help="The HTML file to write (default: DIRECTORY/report.html).")
def report(directory: str, dest: str | None) -> None:
    """Write one self-contained HTML page of DIRECTORY (the shards of one run or of many
    jobs): funnel, yield, difficulty, time per stage, task cards. It needs no network."""
    from taskforge.report import write_report

    click.echo(str(write_report(directory, dest)))


@cli.command()
@click.argument("directory", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["swebench", "harbor", "docker-image"]),
              required=True)
@click.option("--out", "dest", type=click.Path(), required=True,
              help="swebench: a .jsonl file; harbor: a new directory, one task directory each "
                   "and images/; docker-image: a new directory (images.tar, images.jsonl).")
@click.option("--no-images", is_flag=True,
              help="harbor: do not build and save the environment images (needs no docker; "
                   "the machine that builds the tasks must have them).")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@cache_option
def export(directory: str, fmt: str, dest: str, no_images: bool, force: bool,
           cache: str | None) -> None:
    """Export the tasks of DIRECTORY (shards of one run or of many jobs) for other harnesses."""
    from taskforge.export import export_tasks

    if no_images and fmt != "harbor":
        raise UserError(f"--no-images: only for --format harbor, not {fmt}")
    count = export_tasks(directory, fmt, dest, cache=cache, force=force, images=not no_images)
    click.echo(f"{count} tasks exported to {dest} ({fmt})")


@cli.command(name="sandbox")
@click.argument("action", type=click.Choice(["check", "prepare", "prune"]))
@click.option("--images", is_flag=True, help="prune: remove the images taskforge built too.")
def sandbox_command(action: str, images: bool) -> None:
    """The sandboxes of this machine: check which work, prepare docker's image, prune leftovers."""
    from taskforge.sandbox.__main__ import main as sandbox_main

    sys.exit(sandbox_main([action, *(["--images"] if images else [])]))


def main() -> None:
    cli(prog_name="taskforge")
