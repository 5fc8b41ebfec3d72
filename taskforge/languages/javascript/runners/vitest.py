"""vitest, from the project's own dependencies (`node_modules/vitest/vitest.mjs run`).

Results come from vitest's JSON reporter (`--reporter=json --outputFile=...`): every test's
file, ancestor titles and title. Ids: `test/x.test.ts::suite > test`, ` [2]` for a repeated
name. vitest finds the test files itself (its configuration's `include`); a selection passes
the files holding the selected tests and `--testNamePattern` matching their full names
exactly. Collection: a name pattern nothing matches (every test reported skipped, none run);
a file that fails to load is a failed file without tests (`<collect-error>::path`).

Every run goes through a configuration written around the project's own, which adds a setup
file (support/taskforge-vitest-setup.mjs): it keeps what a failed test's assertion compared
in the test's `meta`, which the JSON report carries (the grader's expectation copies read
it). Per-test coverage: the same setup file's hooks take V8's coverage before and after each
test. vitest runs the code vite transformed (TypeScript stripped, modules rewritten), so the
byte ranges are offsets into that code: the setup file also writes the code, and its inline
source map maps the ranges back to the file's lines (`sourcemap.py`). Reverse order: vitest
has no option for it; the baseline's second run is in the same order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from taskforge.languages.javascript.runners.base import (
    SUPPORT,
    JsTestRunner,
    Report,
    compared_sides,
    json_side,
    unique_id,
)

SETUP = SUPPORT / "taskforge-vitest-setup.mjs"
CONFIGS = ("vitest.config.ts", "vitest.config.mts", "vitest.config.js", "vitest.config.mjs",
           "vitest.config.cjs", "vite.config.ts", "vite.config.mts", "vite.config.js",
           "vite.config.mjs", "vite.config.cjs")

NOTHING = "^taskforge: collect only, run nothing$"
STATUS = {"passed": "passed", "failed": "failed", "pending": "skipped", "skipped": "skipped",
          "todo": "skipped", "disabled": "skipped"}


def _wrapper_config(workspace: Path) -> str:
    """A configuration around the project's own (imported by its path: vite bundles the
    configuration and follows a literal import) that adds taskforge's setup file. No bare
    import here: this file is outside the project, where `vitest` does not resolve."""
    own = next((workspace / n for n in CONFIGS if (workspace / n).is_file()), None)
    head = f"import project from {json.dumps(str(own))};\n" if own else "const project = {};\n"
    return head + f"""\
const base = typeof project === 'function'
  ? await project({{ command: 'serve', mode: 'test' }}) : project;
export default {{
  ...base,
  root: {json.dumps(str(workspace))},
  test: {{
    ...base.test,
    setupFiles: [...[base.test?.setupFiles ?? []].flat(), {json.dumps(str(SETUP))}],
  }},
}};
"""


class VitestRunner(JsTestRunner):
    name = "vitest"

    def test_files(self, root: Path, args: Sequence[str]) -> list[str] | None:
        return None  # vitest's configuration decides

    def argv(self, files: Sequence[str], *, workspace: Path, report: Path,
             select: Sequence[str] | None, coverage: bool, reverse: bool,
             test_timeout: float | None, collect_only: bool) -> list[str]:
        argv = ["node", "node_modules/vitest/vitest.mjs", "run", "--reporter=json",
                f"--outputFile={report}", "--no-color", "--passWithNoTests"]
        config = report.parent / "vitest.taskforge.config.mjs"
        config.write_text(_wrapper_config(workspace))
        argv.append(f"--config={config}")
        if test_timeout is not None:
            argv.append(f"--testTimeout={int(test_timeout * 1000)}")
        if collect_only:
            argv.append(f"--testNamePattern={NOTHING}")
        elif select is not None:
            names = sorted({re.sub(r" \[\d+\]$", "", t.split("::", 1)[1]).replace(" > ", " ")
                            for t in select})
            argv.append(f"--testNamePattern=^(?:{'|'.join(map(re.escape, names))})$")
        return argv + list(files)

    def read_report(self, report: Path, workspace: Path) -> Report:
        return read_json_report(report, workspace, key_separator=" > ")


def read_json_report(report: Path, workspace: Path, *, key_separator: str) -> Report:
    """jest's JSON report, which vitest's JSON reporter copies: every test's file, ancestor
    titles and title; a file that failed without tests failed to load. `key_separator`: how
    the coverage setup module joined the titles in its keys."""
    out = Report()
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return out
    out.finished = True
    seen: dict[str, int] = {}
    raw_seen: dict[str, int] = {}
    prefixes = (str(workspace.resolve()) + "/", str(workspace) + "/")
    for result in data.get("testResults") or []:
        file = str(result.get("name", ""))
        rel = next((file.removeprefix(p) for p in prefixes if file.startswith(p)), file)
        tests = result.get("assertionResults") or []
        if result.get("status") == "failed" and not tests:
            out.collection_errors[rel] = str(result.get("message") or "failed")[:500]
            continue
        for test in tests:
            path = [*map(str, test.get("ancestorTitles") or []), str(test.get("title"))]
            test_id = unique_id(seen, f"{rel}::{' > '.join(path)}")
            # the key the coverage setup file gave this test (its file's absolute path)
            raw = f"{file}::{key_separator.join(path)}"
            out.coverage_keys[f"{raw}#{raw_seen.get(raw, 0)}"] = test_id
            raw_seen[raw] = raw_seen.get(raw, 0) + 1
            out.outcomes[test_id] = STATUS.get(str(test.get("status")), "error")
            meta = test.get("meta")
            sides = compared_sides(meta.get("taskforgeCompared")) if isinstance(meta, dict) \
                else None  # (vitest's, from its setup file)
            if sides is None:
                sides = _failure_sides(test.get("failureDetails"))  # (jest's)
            if sides is not None:
                out.compared[test_id] = sides
            seconds = float(test.get("duration") or 0.0) / 1000
            out.durations[test_id] = round(seconds, 6)
            out.seconds += seconds
    return out


def _failure_sides(details: object) -> list[list] | None:
    """What the assertion that failed a test compared, from jest's `failureDetails` (its
    `matcherResult`, or node's assert error as it is)."""
    if not isinstance(details, list) or not details or not isinstance(details[0], dict):
        return None
    error = details[0].get("matcherResult") or details[0]
    if not isinstance(error, dict) or "actual" not in error or "expected" not in error:
        return None
    return [json_side(error["actual"]), json_side(error["expected"])]
