"""Compile and run a Java project's tests in a workspace through a sandbox; the baseline with
per-test JaCoCo coverage.

Every run: `javac` compiles `src/main/java`, then `src/test/java`, into a scratch directory
outside the workspace (no `.class` file is ever written into it), resources copied beside the
classes; the JUnit Platform console launcher runs the tests from the workspace (tests read
`src/test/resources/...` by relative path) with everything on the JVM's class path (as
Surefire does: `ClassLoader.getSystemClassLoader()` sees the project), and writes its JUnit
XML outside the workspace. Results come only from that XML, keyed by the `unique-id` each
testcase's `<system-out>` carries. A selected id that did not report failed (a JVM that dies
writes no XML for its engine).

Test ids are `CLASS::METHOD(PARAMETER TYPES)`, the class by its binary name
(`javademo.money.MoneyTest$Formatting::groupsThousands()`), a parameterized invocation with
its index (`javademo.expr.ParserTest::renders(java.lang.String)[3]`). Class-based, not
file-based: a contract interface's `default` test methods run once per implementing class, and
nested classes share a file, so only the class names a test uniquely. The file is the
top-level class's (`files.test_source_of`).

Collection: javac of the whole tree is Java's load check. A test file that does not compile is
set aside (the others still run) and every test of it is gone, with a `<collect-error>::PATH`
marker; when `src/main/java` does not compile, every test file is.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from taskforge.cache import digest, read_json, write_json
from taskforge.errors import UserError
from taskforge.languages.base import Runner, import_errors_line
from taskforge.languages.java.env import (
    LAUNCHER,
    agent_jar,
    classpath,
    jdk_home,
    jdk_mounts,
    reader_classpath,
    release_of,
    support_jar,
)
from taskforge.languages.java.files import (
    MAIN_DIR,
    MAIN_RESOURCES,
    TEST_DIR,
    TEST_RESOURCES,
    java_files,
    test_source_of,
)
from taskforge.languages.java.surefire import jvm_flags, launcher_filters
from taskforge.leftovers import owned
from taskforge.model import Baseline, Environment, Outcome, Snapshot, TestRun
from taskforge.sandbox import ExecResult, Mounts, Sandbox
from taskforge.workspace import scratch_copy, scratch_dir

FORMAT = 2  # 2: the reader's output read from a file
# Surefire's default test class names (the console launcher's default lacks `*TestCase`).
CLASS_NAMES = r"^(Test.*|.+[.$]Test.*|.*Tests?|.*TestCase)$"
JVM_FLAGS = ("-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:off",
             "-Djava.awt.headless=true")
_ERROR = re.compile(r"^(/[^:\n]+\.java):(\d+): error: (.*)$", re.MULTILINE)
_UNINSTRUMENTED = re.compile(r"Error while instrumenting ([\w/$]+?)\.?\s")
_SEGMENT = re.compile(r"\[([\w-]+):((?:[^\]\\]|\\.)*)\]")
TestMap = dict[str, dict[int, set[int]]]


@dataclass
class Compiled:
    """What javac made of a workspace: class directories, and the test files set aside."""

    classes: Path
    test_classes: Path
    main_ok: bool
    broken: dict[str, str] = field(default_factory=dict)  # test file -> first error
    seconds: float = 0.0
    log: str = ""


@dataclass
class Report:
    outcomes: dict[str, str] = field(default_factory=dict)
    durations: dict[str, float] = field(default_factory=dict)
    unique_ids: dict[str, str] = field(default_factory=dict)  # JUnit unique id -> test id
    seconds: float = 0.0


def variables(home: Path) -> dict[str, str]:
    return {"PATH": f"{jdk_home() / 'bin'}:/usr/bin:/bin", "HOME": str(home),
            "TMPDIR": str(home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "JAVA_HOME": str(jdk_home()), "CI": "true"}


def _mounts(env: Environment, writable: tuple[Path, ...]) -> Mounts:
    return Mounts(readonly=(*jdk_mounts(), env.venv), writable=writable)


@dataclass(frozen=True)
class JdkRun:
    """Where the JDK's tools (javac, the console launcher, the coverage reader) run for one
    test run: the environment (class path, mounts), the workspace they start in, the sandbox,
    the scratch directory outside the workspace they write into, and each tool's time limit."""

    env: Environment
    workspace: Path
    sandbox: Sandbox
    scratch: Path
    timeout: float

    def exec(self, argv: list[str], writable: tuple[Path, ...] = ()) -> ExecResult:
        """`argv` in the sandbox from the workspace, with `scratch/home` for a home; it may
        write into the scratch directory and `writable` only."""
        home = self.scratch / "home"
        home.mkdir(exist_ok=True)
        return self.sandbox.exec(argv, workspace=self.workspace, env=variables(home),
                                 timeout=self.timeout,
                                 mounts=_mounts(self.env, (self.scratch, *writable)))


# -- ids ---------------------------------------------------------------------------------------


def test_id(unique_id: str) -> str | None:
    """`[engine:junit-jupiter]/[class:a.B]/[nested-class:C]/[method:m()]` -> `a.B$C::m()`;
    a test-template invocation gets `[N]`; JUnit 4 (vintage) `[test:m(a.B)]` -> `a.B::m()`."""
    segments = _SEGMENT.findall(unique_id)
    cls, method, index = "", "", ""
    for kind, value in segments:
        if kind == "class" or kind == "runner":
            cls = value
        elif kind == "nested-class":
            cls = f"{cls}${value}"
        elif kind in ("method", "test-template", "test-factory"):
            method = value
        elif kind in ("test-template-invocation", "dynamic-test"):
            index += f"[{value.removeprefix('#')}]"
        elif kind == "test":  # vintage: `name(fully.qualified.Class)`
            m = re.match(r"^(.*)\((.*)\)$", value)
            method, cls = (f"{m.group(1)}()", m.group(2) or cls) if m else (value, cls)
    if not cls or not method:
        return None
    return f"{cls}::{method}{index}"


def class_of(test: str) -> str:
    return test.split("::", 1)[0]


def file_of(test: str) -> str:
    return test_source_of(class_of(test))


def selector(test: str) -> str:
    """The `--select-method` argument that runs `test` (every invocation of a template)."""
    cls, method = test.split("::", 1)
    method = re.sub(r"(\[[^\]]*\])+$", "", method)
    return f"{cls}#{method}"


# -- compiling ---------------------------------------------------------------------------------


def _javac(jdk: JdkRun, files: list[str], dest: Path, cp: list[str]) -> tuple[int, str, float]:
    dest.mkdir(parents=True, exist_ok=True)
    argfile = jdk.scratch / f"{dest.name}.args"
    argfile.write_text("\n".join(f'"{jdk.workspace / f}"' for f in files), encoding="utf-8")
    argv = [str(jdk_home() / "bin" / "javac"), "--release", release_of(jdk.env), "-encoding",
            "UTF-8", "-nowarn", "-proc:none", "-implicit:none", "-Xmaxerrs", "100000",
            "-d", str(dest), "-cp", ":".join(cp) or ".", "-sourcepath", "", f"@{argfile}"]
    result = jdk.exec(argv)
    code = -1 if result.timed_out else result.exit_code
    return code, result.output, result.duration_s


def _copy_resources(workspace: Path, under: str, dest: Path) -> None:
    source = workspace / under
    if source.is_dir() and not source.is_symlink():
        shutil.copytree(source, dest, dirs_exist_ok=True, symlinks=True)


def compile_tree(jdk: JdkRun) -> Compiled:
    """javac of the whole workspace into the scratch directory: `src/main/java` first; then
    the tests, the files javac names in errors set aside one round at a time (a file that only
    failed because of another compiles in the next round)."""
    workspace, scratch = jdk.workspace, jdk.scratch
    classes, test_classes = scratch / "classes", scratch / "test-classes"
    compiled = Compiled(classes, test_classes, main_ok=True)
    main = java_files(workspace, MAIN_DIR)
    tests = java_files(workspace, TEST_DIR)
    cp = classpath(jdk.env)
    if main:
        code, output, seconds = _javac(jdk, main, classes, cp)
        compiled.seconds += seconds
        if code != 0:
            first = _ERROR.search(output)
            why = f"src/main/java does not compile: {first.group(3) if first else output[-300:]}"
            compiled.main_ok = False
            compiled.broken = {f: why for f in tests}
            compiled.log = output[-4000:]
            return compiled
    classes.mkdir(parents=True, exist_ok=True)
    _copy_resources(workspace, MAIN_RESOURCES, classes)
    remaining = list(tests)
    for _round in range(20):
        if not remaining:
            break
        shutil.rmtree(test_classes, ignore_errors=True)
        code, output, seconds = _javac(jdk, remaining, test_classes, [str(classes), *cp])
        compiled.seconds += seconds
        if code == 0:
            break
        bad: dict[str, str] = {}
        for m in _ERROR.finditer(output):
            try:
                rel = Path(m.group(1)).relative_to(workspace).as_posix()
            except ValueError:
                continue
            if rel in remaining:
                bad.setdefault(rel, m.group(3))
        if not bad:  # an error javac puts on no file of ours: nothing compiles
            compiled.broken.update({f: f"does not compile: {output[-300:]}" for f in remaining})
            compiled.log = output[-4000:]
            remaining = []
            break
        compiled.broken.update(bad)
        remaining = [f for f in remaining if f not in bad]
    test_classes.mkdir(parents=True, exist_ok=True)
    _copy_resources(workspace, TEST_RESOURCES, test_classes)
    return compiled


# -- running -----------------------------------------------------------------------------------


def read_reports(directory: Path) -> Report:
    """Outcomes from the launcher's JUnit XML files (one per engine), keyed by unique id."""
    report = Report()
    for path in sorted(directory.glob("*.xml")):
        try:
            root = ET.parse(path).getroot()
        except (ET.ParseError, OSError):
            continue
        for suite in root.iter("testsuite"):
            with contextlib.suppress(ValueError, TypeError):
                report.seconds += float(suite.get("time") or 0)
        for case in root.iter("testcase"):
            out = case.findtext("system-out") or ""
            m = re.search(r"unique-id: (\S.*)", out)
            unique = m.group(1).strip() if m else ""
            test = test_id(unique) if unique else None
            if test is None:
                continue
            kinds = {c.tag for c in case}
            outcome = ("skipped" if "skipped" in kinds else "failed" if "failure" in kinds
                       else "error" if "error" in kinds else "passed")
            report.outcomes[test] = outcome
            report.unique_ids[unique] = test
            with contextlib.suppress(ValueError, TypeError):
                report.durations[test] = float(case.get("time") or 0)
    return report


def launcher_argv(env: Environment, compiled: Compiled, reports: Path, *,
                  select: list[str] | None, coverage_dir: Path | None = None,
                  includes: str = "", test_timeout: float | None = None,
                  channel: Path | None = None) -> list[str]:
    cp = [str(LAUNCHER), str(compiled.test_classes), str(compiled.classes), *classpath(env)]
    jvm = [str(jdk_home() / "bin" / "java"), *JVM_FLAGS, *jvm_flags(env.spec.test_command)]
    includes_re, excludes_re = launcher_filters(env.spec.test_command)
    if coverage_dir is not None or channel is not None:
        # first: a class of the same name among the solution's (taskforge.java.ResultChannel
        # in its sources) is then never the one loaded, and taskforge's listeners, listed
        # first, are created before any other a services file names
        cp.insert(0, str(support_jar(env)))
    if channel is not None:
        jvm.append(f"-Dtaskforge.channel={channel}")
    if coverage_dir is not None:
        jvm += [f"-javaagent:{agent_jar(env)}=output=none,jmx=false,dumponexit=false"
                + (f",includes={includes}" if includes else ""),
                f"-Dtaskforge.coverage.dir={coverage_dir}"]
    argv = [*jvm, "-cp", ":".join(cp), "org.junit.platform.console.ConsoleLauncher",
            "--disable-banner", "--details=none", "--reports-dir", str(reports),
            "--config", "junit.jupiter.execution.parallel.enabled=false"]
    if test_timeout is not None:
        argv += ["--config", f"junit.jupiter.execution.timeout.default={int(test_timeout)}s",
                 "--config", "junit.jupiter.execution.timeout.thread.mode.default=SEPARATE_THREAD"]
    # The pom's Surefire includes replace the default class names, its excludes leave out
    # (given with a selection too: the launcher filters the classes it selects)
    filters = [a for r in includes_re for a in ("--include-classname", r)]
    filters += [a for r in excludes_re for a in ("--exclude-classname", r)]
    if select is None:
        argv += ["--scan-classpath", str(compiled.test_classes),
                 *(filters if includes_re else ["--include-classname", CLASS_NAMES, *filters])]
    else:
        argv += [*filters, *selection(compiled.test_classes, select)]
    return argv


def selection(test_classes: Path, select: list[str]) -> list[str]:
    """Launcher selectors for `select`: `-m CLASS#METHOD(TYPES)` when the class file declares
    the method, else `-c CLASS` (a test inherited from an interface or superclass), nothing
    for a class that is not there (the launcher refuses an unknown class or method outright,
    and the test then did not report: it failed)."""
    args: set[tuple[str, str]] = set()
    for test in select:
        cls = class_of(test)
        path = test_classes / (cls.replace(".", "/") + ".class")
        if not path.is_file():
            continue
        method = selector(test).split("#", 1)[1].split("(", 1)[0]
        if method.encode() in path.read_bytes():
            args.add(("-m", selector(test)))
        else:
            args.add(("-c", cls))
    return [a for pair in sorted(args) for a in pair]


def main_packages(workspace: Path) -> str:
    """The agent's `includes`: the project's top-level packages (`javademo.*`)."""
    base = workspace / MAIN_DIR
    names = sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
    tops = [f"{n}.*" for n in names]
    if base.is_dir() and any(p.suffix == ".java" for p in base.iterdir()):
        tops = ["*"]  # classes in the default package
    return ":".join(tops)


def run_tests(env: Environment, workspace: Path, sandbox: Sandbox, *, timeout: float,
              select: Iterable[str] | None = None, test_timeout: float | None = None,
              channel: Path | None = None) -> TestRun:
    """Compile the workspace and run the suite (or only `select`) in it. `channel`: a
    directory holding a `key`, where the tests' signed outcomes are written as they happen
    (support/taskforge/java/ResultChannel.java; `read_channel`)."""
    return _run(env, workspace, sandbox, timeout=timeout, select=select,
                test_timeout=test_timeout, channel=channel)[0]


def _run(env: Environment, workspace: Path, sandbox: Sandbox, *, timeout: float,
         select: Iterable[str] | None = None, coverage_dir: Path | None = None,
         test_timeout: float | None = None,
         channel: Path | None = None) -> tuple[TestRun, list[dict]]:
    """`run_tests`, and with `coverage_dir` the per-test coverage read back (CoverageReader
    over the classes this run compiled, before they are removed)."""
    chosen = sorted(set(select)) if select is not None else None
    entries: list[dict] = []
    with tempfile.TemporaryDirectory(prefix=owned("taskforge-java-")) as scratch_name:
        scratch = Path(scratch_name)
        jdk = JdkRun(env, workspace, sandbox, scratch, timeout)
        compiled = compile_tree(jdk)
        report = Report()
        exit_code, seconds, timed_out, tail = 1, compiled.seconds, False, compiled.log
        runnable = None if chosen is None else [t for t in chosen
                                                if file_of(t) not in compiled.broken]
        if runnable is not None and not selection(compiled.test_classes, runnable):
            runnable = []
        if compiled.main_ok and (runnable is None or runnable):
            reports = scratch / "reports"
            argv = launcher_argv(env, compiled, reports, select=runnable,
                                 coverage_dir=coverage_dir,
                                 includes=main_packages(workspace), test_timeout=test_timeout,
                                 channel=channel)
            result = jdk.exec(argv, tuple(d for d in (coverage_dir, channel) if d is not None))
            report = read_reports(reports)
            exit_code, timed_out = result.exit_code, result.timed_out
            seconds += result.duration_s
            tail = (tail + result.output)[-4000:]
            if coverage_dir is not None and not timed_out:
                entries = read_coverage(jdk, coverage_dir, compiled)
                # JaCoCo 0.8.6 cannot instrument some Java 17 classes (sealed types): they
                # load uninstrumented, and their coverage is unknown, not empty
                entries += [{"uninstrumented": m} for m in sorted(set(
                    _UNINSTRUMENTED.findall(result.output)))]
    outcomes = dict(report.outcomes)
    unreported: tuple[str, ...] = ()
    if chosen is not None:
        unreported = tuple(t for t in chosen if t not in outcomes)
        outcomes = {t: outcomes.get(t, "error") for t in chosen}
    return TestRun(outcomes=outcomes, exit_code=exit_code, wall_seconds=round(seconds, 3),
                   pytest_seconds=round(report.seconds, 3), timed_out=timed_out,
                   log_tail=tail, durations=report.durations,
                   collection_errors=dict(compiled.broken), unreported=unreported), entries


def read_channel(channel: Path, key: bytes) -> tuple[dict[str, Outcome], dict[str, list]]:
    """The outcomes `ResultChannel` wrote under `channel` signed with `key`, by test id, and
    for tests failed by `assertEquals` what it compared (`[[type, text] expected, [type, text]
    actual]`); a line whose signature does not hold is no result. A test reported twice
    keeps its worst outcome, and its comparison only where that was its one failure."""
    outcomes: dict[str, Outcome] = {}
    compared: dict[str, list] = {}
    failures: dict[str, int] = {}
    path = channel / "results"
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    for line in text.splitlines():
        sign, _, signed = line.partition("\t")
        expected = hmac.new(key, signed.encode("utf-8"), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(sign, expected):
            continue
        _n, status, unique, sides = [*signed.split("\t", 3), "", "", ""][:4]
        test = test_id(unique)
        if test is None:
            continue
        outcome: Outcome = {"SUCCESSFUL": "passed", "FAILED": "failed", "ERRORED": "error",
                            "ABORTED": "skipped", "SKIPPED": "skipped"}.get(status, "error")
        previous = outcomes.get(test)
        if previous is None or _WORSE[outcome] > _WORSE[previous]:
            outcomes[test] = outcome
        if outcome != "passed":
            failures[test] = failures.get(test, 0) + 1
        if sides:
            with contextlib.suppress(ValueError):
                compared[test] = json.loads(sides)
    return outcomes, {t: c for t, c in compared.items()
                      if failures.get(t) == 1 and outcomes.get(t) == "failed"}


_WORSE = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def collected_ids(env: Environment, workspace: Path, sandbox: Sandbox, *,
                  timeout: float) -> set[str]:
    """The tests that load in `workspace`: javac of the whole tree, then the tests that
    report in a run of what compiled (failing or not: a test that reports was collected).
    Every file that does not compile is a `<collect-error>::PATH` marker."""
    run = run_tests(env, workspace, sandbox, timeout=timeout)
    if run.timed_out:
        return {"<no collection>"}
    return set(run.outcomes) | {f"<collect-error>::{f}" for f in run.collection_errors}


# -- the baseline ------------------------------------------------------------------------------


def baseline_key(snapshot: Snapshot, env: Environment, repeats: int, sandbox: str,
                 test_timeout: float) -> str:
    return digest("java-baseline", FORMAT, snapshot.id, env.key, repeats, sandbox,
                  test_timeout)[:32]


def _path(cache: Path, key: str) -> Path:
    return cache / "baselines" / f"{key}.json"


def keep_baseline(cache: Path, baseline: Baseline) -> None:
    if not _path(cache, baseline.key).is_file():
        write_json(_path(cache, baseline.key), _dump(baseline))


def cached_baseline(snapshot: Snapshot, runner: Runner, *, repeats: int,
                    test_timeout: float) -> Baseline | None:
    path = _path(runner.cache, baseline_key(snapshot, runner.env, repeats,
                                                runner.sandbox.identity(), test_timeout))
    return _load(path) if path.is_file() else None


def run_baseline(snapshot: Snapshot, runner: Runner, *, repeats: int,
                 test_timeout: float) -> Baseline:
    """The suite `max(2, repeats)` times, each within `runner.timeout`; the first two with
    per-test coverage (JaCoCo and the listener), merged."""
    cached = cached_baseline(snapshot, runner, repeats=repeats, test_timeout=test_timeout)
    if cached is not None:
        return cached
    env, sandbox, timeout, cache = runner.env, runner.sandbox, runner.timeout, runner.cache
    key = baseline_key(snapshot, env, repeats, sandbox.identity(), test_timeout)
    runs: list[TestRun] = []
    test_map: TestMap = {}
    per_run: list[list[dict]] = []
    with scratch_dir(cache, prefix="javacoverage-") as results:
        for i in range(max(2, repeats)):
            coverage = results / f"run{i}" if i < 2 else None
            if coverage is not None:
                coverage.mkdir()
            with scratch_copy(snapshot.root, cache, prefix="baseline-") as workspace:
                run, entries = _run(env, workspace, sandbox, timeout=timeout,
                                    coverage_dir=coverage,
                                    test_timeout=min(test_timeout, timeout))
            if coverage is not None:
                per_run.append(entries)
            if run.timed_out:
                raise UserError(f"{snapshot.source}: the test suite did not finish within "
                                f"{timeout:.0f}s")
            runs.append(run)
    tests = tuple(sorted({t for r in runs for t in r.outcomes}))
    index = {t: i for i, t in enumerate(tests)}
    everyone = set(range(len(tests)))
    for entries in per_run:
        for entry in entries:
            if "uninstrumented" in entry:  # every test may run it: the whole-suite fallback
                rel = f"{MAIN_DIR}/{entry['uninstrumented'].split('$', 1)[0]}.java"
                source = snapshot.root / rel
                if source.is_file():
                    lines = source.read_bytes().count(b"\n") + 1
                    by_line = test_map.setdefault(rel, {})
                    for line in range(1, lines + 1):
                        by_line.setdefault(line, set()).update(everyone)
                continue
            test = test_id(entry["id"]) if entry["id"] else None
            idx = index.get(test, -1) if test else -1
            for rel, lines in entry["lines"].items():
                path = f"{MAIN_DIR}/{rel}"
                by_line = test_map.setdefault(path, {})
                for line in lines:
                    by_line.setdefault(int(line), set()).add(idx)
    broken = {f: e for r in runs for f, e in r.collection_errors.items()}
    if not tests:
        raise UserError(f"{snapshot.source}: no tests found"
                        + (f"; {import_errors_line(broken)}" if broken else _hint(runs)))
    stable = tuple(t for t in tests if all(r.outcomes.get(t) == "passed" for r in runs))
    flaky = tuple(t for t in tests if len({r.outcomes.get(t) for r in runs}) > 1)
    failing = tuple(t for t in tests if t not in stable and t not in flaky)
    if not stable:
        raise UserError(f"{snapshot.source}: no test passes in the baseline ({len(tests)} "
                        f"found, {len(failing)} failing, {len(flaky)} flaky)" + _hint(runs))
    coverage_out = {p: {ln: tuple(sorted(ids)) for ln, ids in sorted(lines.items())}
                    for p, lines in sorted(test_map.items())}
    baseline = Baseline(key=key, tests=tests, stable=stable, flaky=flaky, failing=failing,
                        run_seconds=tuple(round(r.wall_seconds, 3) for r in runs),
                        durations={t: round(max(r.durations.get(t, 0.0) for r in runs), 4)
                                   for t in tests},
                        coverage=coverage_out, tracer="jacoco", collection_errors=broken)
    write_json(_path(cache, key), _dump(baseline))
    return baseline


def read_coverage(jdk: JdkRun, coverage: Path, compiled: Compiled) -> list[dict]:
    """The listener's exec files as covered lines per test (`CoverageReader`; each test gets
    its containers' data too: class-level setup runs for its tests), analysed against the
    classes the run used; what ran outside any test has the id ""."""
    out = jdk.scratch / "coverage.jsonl"
    argv = [str(jdk_home() / "bin" / "java"), "-Xmx512m", f"-Dtaskforge.coverage.out={out}",
            "-cp", reader_classpath(jdk.env), "taskforge.java.CoverageReader", str(coverage),
            str(compiled.classes), "--with-ancestors"]
    result = jdk.exec(argv, (coverage,))
    entries = []
    text = out.read_text(encoding="utf-8", errors="replace") if out.is_file() else ""
    for line in text.splitlines():
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                entries.append(json.loads(line))
    if result.exit_code != 0 and not entries:
        raise UserError(f"per-test coverage could not be read: {result.output[-400:]}")
    return entries


def _hint(runs: list[TestRun]) -> str:
    lines = [ln.strip() for r in runs for ln in r.log_tail.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower() or "exception" in ln.lower()]
    return f" ({(errors or lines)[-1][:200]})" if lines else ""


def _dump(baseline: Baseline) -> dict:
    data = asdict(baseline)
    data["coverage"] = {p: {str(ln): list(ids) for ln, ids in lines.items()}
                        for p, lines in baseline.coverage.items()}
    return data


def _load(path: Path) -> Baseline:
    data = read_json(path)
    coverage = {p: {int(ln): tuple(ids) for ln, ids in lines.items()}
                for p, lines in data.pop("coverage").items()}
    subprocess_lines = {p: tuple(lines) for p, lines in data.pop("subprocess_lines").items()}
    return Baseline(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()},
                    coverage=coverage, subprocess_lines=subprocess_lines)


__all__ = ["Compiled", "JdkRun", "Report", "collected_ids", "compile_tree", "run_baseline", "run_tests",
           "test_id"]

