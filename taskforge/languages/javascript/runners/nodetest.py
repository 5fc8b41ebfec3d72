"""Node's built-in test runner (`node --test`, Node 20).

Node 20's JUnit reporter names no file, so the report is our own reporter's
(support/taskforge-node-reporter.mjs): JSON lines with each test's file and suite path, from
the runner's own events. It runs in the runner's parent process; test code runs in one child
process per file. Ids: `test/x.test.js::suite > test`, ` [2]` for a repeated name.

Selection: the files holding the selected tests, and `--test-name-pattern` matching their
names exactly (the others are reported as skipped by pattern and ignored). Collection: a
pattern nothing matches: every test is listed as skipped and nothing runs, and a file that
fails to load is reported as the file's own failure (`<collect-error>::path`).
Reverse order (the baseline's second run): the files in reverse order, one at a time; node
has no option to reverse the tests inside a file.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from taskforge.languages.javascript.runners.base import (
    SUPPORT,
    JsTestRunner,
    Report,
    compared_sides,
    unique_id,
)
from taskforge.model import Outcome

REPORTER = SUPPORT / "taskforge-node-reporter.mjs"
COVERAGE = SUPPORT / "taskforge-node-coverage.mjs"
# What `node --test` runs when given no file, or a directory (Node 20's documented patterns).
PATTERNS = ("*.test.js", "*.test.cjs", "*.test.mjs", "*-test.js", "*-test.cjs", "*-test.mjs",
            "*_test.js", "*_test.cjs", "*_test.mjs", "test-*.js", "test-*.cjs", "test-*.mjs",
            "test.js", "test.cjs", "test.mjs")
SCRIPT = (".js", ".cjs", ".mjs")
NOTHING = "^taskforge: collect only, run nothing$"
NOT_MATCHED = "test name does not match pattern"  # node's reason for a test left out
NUMBERED = re.compile(r"(.*) \[(\d+)\]")  # a repeated name's id: `name [2]` (`unique_id`)


def _walk(root: Path, base: Path) -> list[str]:
    found = []
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(root)
        if "node_modules" in rel.parts or any(p.startswith(".") for p in rel.parts) \
                or not path.is_file():
            continue
        inside = path.relative_to(base).parts
        if any(fnmatch.fnmatchcase(path.name, p) for p in PATTERNS) or (
                path.suffix in SCRIPT and ("test" in inside[:-1] or base.name == "test")):
            found.append(rel.as_posix())
    return found


class NodeTestRunner(JsTestRunner):
    name = "node-test"

    def test_files(self, root: Path, args: Sequence[str]) -> list[str]:
        if not args:
            return _walk(root, root)
        found: set[str] = set()
        for arg in args:
            path = root / arg
            if path.is_dir():
                found |= set(_walk(root, path))
            elif path.is_file():
                found.add(path.relative_to(root).as_posix())
            else:  # a glob (Node 21+ expands them itself; a shell did it before)
                found |= {p.relative_to(root).as_posix() for p in root.glob(arg)
                          if p.is_file() and "node_modules" not in p.parts}
        return sorted(found)

    def argv(self, files: Sequence[str], *, workspace: Path, report: Path,
             select: Sequence[str] | None, coverage: bool, reverse: bool,
             test_timeout: float | None, collect_only: bool) -> list[str]:
        argv = ["node"]
        if coverage:
            argv += ["--import", COVERAGE.as_uri()]
        argv += ["--test", f"--test-reporter={REPORTER.as_uri()}",
                 f"--test-reporter-destination={report}"]
        if test_timeout is not None:
            argv.append(f"--test-timeout={int(test_timeout * 1000)}")
        if collect_only:
            argv.append(f"--test-name-pattern={NOTHING}")
        elif select is not None:
            names = sorted({_leaf(t) for t in select})
            argv.append(f"--test-name-pattern=^(?:{'|'.join(map(re.escape, names))})$")
        if reverse:
            argv.append("--test-concurrency=1")
        argv += list(reversed(files)) if reverse else list(files)
        return argv

    def read_report(self, report: Path, workspace: Path) -> Report:
        out = Report()
        if not report.is_file():
            return out
        seen: dict[str, int] = {}
        last: dict[str, str] = {}  # file -> the id of the last test reported there
        for line in report.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            file = str(entry.get("file", ""))
            rel = _relative(file, workspace)
            if "coverage" in entry:
                if rel in last:
                    out.coverage_keys[str(entry["coverage"])] = last[rel]
                continue
            path = [str(p) for p in entry.get("path", [])]
            if entry.get("nesting") == 0 and path == [file]:
                # The file's own result: it failed to load, or its process failed outside
                # any test.
                if entry.get("status") == "failed":
                    out.collection_errors[rel] = str(entry.get("error") or "failed to load")
                continue
            if entry.get("type") == "suite":
                continue
            test_id = unique_id(seen, f"{rel}::{' > '.join(path)}")
            last[rel] = test_id
            skip = entry.get("skip")
            if isinstance(skip, str) and NOT_MATCHED in skip:
                out.outcomes[test_id] = "skipped"
                out.durations[test_id] = 0.0
                continue
            if entry.get("status") == "failed":
                outcome = "failed"
            elif skip or entry.get("todo"):
                outcome = "skipped"
            else:
                outcome = "passed"
            out.outcomes[test_id] = outcome
            if (sides := compared_sides(entry.get("compared"))) is not None:
                out.compared[test_id] = sides
            seconds = float(entry.get("seconds") or 0.0)
            out.durations[test_id] = round(seconds, 6)
            out.seconds += seconds
        return out




def _relative(file: str, workspace: Path) -> str:
    """A test file's path as node names it (absolute), relative to the workspace."""
    prefix = str(workspace.resolve()) + "/"
    return file.removeprefix(prefix) if file.startswith(prefix) else \
        file.removeprefix(str(workspace) + "/")


Signed = dict[tuple[str, str, int], bool]  # (file, test path, nth) -> its body passed


def read_signed(channel: Path, key: bytes, workspace: Path) -> Signed:
    """What support/taskforge-channel.cjs signed under `channel`: for each test body that ran,
    its file (relative to `workspace`), its path as the report names it, which of that path's
    tests it is in the order its file's process registered them (`nth`), and whether it
    passed. A line holds when its MAC is right under the key the runner's parent derived for
    its file from `key` and the line's nonce, so a line can only speak for the file whose
    process wrote it. A test with two lines (it cannot, honestly) keeps the worse."""
    path = channel / "results"
    lines = path.read_bytes().splitlines() if path.is_file() else []
    bodies: Signed = {}
    for line in lines:
        parts = line.split(b"\t", 2)
        if len(parts) != 3:
            continue
        nonce, sign, payload = parts
        try:
            entry = json.loads(payload)
            file, test, nth = str(entry["file"]), str(entry["test"]), int(entry["nth"])
            passed = entry["passed"] is True
        except (ValueError, KeyError, TypeError):
            continue
        file_key = hmac.new(key, nonce + b"\n" + file.encode("utf-8", "surrogatepass"),
                            hashlib.sha256).digest()
        if not hmac.compare_digest(sign, hmac.new(file_key, payload, hashlib.sha256)
                                   .hexdigest().encode("ascii")):
            continue
        where = (_relative(file, workspace), test, nth)
        bodies[where] = bodies.get(where, True) and passed
    return bodies


def signed_outcomes(bodies: Signed, tests: Iterable[str]) -> dict[str, Outcome]:
    """The outcomes of `tests` (ids) the signed `bodies` give: "passed" or "failed", nothing
    where no line holds. Two tests of one name in a file (`name`, `name [2]`, as the report
    numbers them) are told apart by the line's `nth`, their order of registration."""
    outcomes: dict[str, Outcome] = {}
    for test_id in tests:
        rel, _, name = test_id.partition("::")
        found = bodies.get((rel, name, 1))
        numbered = NUMBERED.fullmatch(name)
        if found is None and numbered:
            found = bodies.get((rel, numbered.group(1), int(numbered.group(2))))
        if found is not None:
            outcomes[test_id] = "passed" if found else "failed"
    return outcomes


def read_channel(channel: Path, key: bytes, workspace: Path,
                 tests: Iterable[str]) -> dict[str, Outcome]:
    """The outcomes support/taskforge-channel.cjs signed under `channel` for `tests` (ids):
    what each test's body did (`read_signed`, `signed_outcomes`)."""
    return signed_outcomes(read_signed(channel, key, workspace), tests)


def _leaf(test_id: str) -> str:
    """The test's own name: what `--test-name-pattern` matches in Node 20."""
    name = test_id.split("::", 1)[1].rsplit(" > ", 1)[-1]
    return re.sub(r" \[\d+\]$", "", name)
