"""vitest, from the project's own dependencies (`node_modules/vitest/vitest.mjs run`).

Results come from vitest's JSON reporter (`--reporter=json --outputFile=...`): every test's
file, ancestor titles and title. Ids: `test/x.test.ts::suite > test`, ` [2]` for a repeated
name. vitest finds the test files itself (its configuration's `include`); a selection passes
the files holding the selected tests and `--testNamePattern` matching their full names
exactly. Collection: a name pattern nothing matches (every test reported skipped, none run);
a file that fails to load is a failed file without tests (`<collect-error>::path`).

No per-test coverage: vitest runs the code vite transformed (TypeScript stripped, modules
rewritten), so V8's byte offsets are offsets into code that is not the file, and mapping them
back needs each module's source map. The whole-suite protocol stands in: every stable test
covers every line of every source file, so a candidate's covering tests are the whole stable
suite. Reverse order: vitest has no option for it; the baseline's second run is in the same
order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from taskforge.languages.javascript.runners.base import JsTestRunner, Report, unique_id

NOTHING = "^taskforge: collect only, run nothing$"
STATUS = {"passed": "passed", "failed": "failed", "pending": "skipped", "skipped": "skipped",
          "todo": "skipped", "disabled": "skipped"}


class VitestRunner(JsTestRunner):
    name = "vitest"
    per_test_coverage = False

    def test_files(self, root: Path, args: Sequence[str]) -> list[str] | None:
        return None  # vitest's configuration decides

    def argv(self, files: Sequence[str], *, workspace: Path, report: Path,
             select: Sequence[str] | None, coverage: bool, reverse: bool,
             test_timeout: float | None, collect_only: bool) -> list[str]:
        argv = ["node", "node_modules/vitest/vitest.mjs", "run", "--reporter=json",
                f"--outputFile={report}", "--no-color", "--passWithNoTests"]
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
        out = Report()
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return out
        out.finished = True
        seen: dict[str, int] = {}
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
                out.outcomes[test_id] = STATUS.get(str(test.get("status")), "error")
                seconds = float(test.get("duration") or 0.0) / 1000
                out.durations[test_id] = round(seconds, 6)
                out.seconds += seconds
        return out
