"""tape, from the project's own dependencies, run by our driver (support/taskforge-tape.cjs).

tape has no reporter interface, no hooks and names no file in its output: the driver loads
the project's tape, takes results from tape's object stream and writes JSON lines with each
test's file (the caller of `test()`) and name path (nested `t.test`s: `parent > child`).
Ids: `test/x.js::parent > child`, ` [2]` for a repeated name. The files are the test
script's arguments (globs, as tape expands them itself) or `test/**/*.js`.

The driver loads each file on its own, so a file that fails to load is that file's collection
error and the others run (tape itself would stop); a test body that throws is that test's
error. Selection: `--select` names the ids; a top-level test holding none of them is
registered skipped (its body does not run; a selected test's nested tests all run).
Collection runs everything: nested tests exist only once their parent's body ran. Per-test
coverage: the driver takes V8's coverage at each test's start and end.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from taskforge.languages.javascript.runners.base import (
    SUPPORT,
    JsTestRunner,
    Report,
    compared_sides,
    unique_id,
)

DRIVER = SUPPORT / "taskforge-tape.cjs"
EXTENSIONS = (".js", ".cjs", ".mjs")
DEFAULT = ("test/**/*.js",)


class TapeRunner(JsTestRunner):
    name = "tape"

    def test_files(self, root: Path, args: Sequence[str]) -> list[str]:
        found: set[str] = set()
        for arg in args or DEFAULT:
            path = root / arg
            if path.is_file():
                found.add(path.relative_to(root).as_posix())
            elif not path.is_dir():  # a glob: tape expands the ones the shell left
                found |= {p.relative_to(root).as_posix() for p in root.glob(arg.removeprefix("./"))
                          if p.is_file() and p.suffix in EXTENSIONS
                          and "node_modules" not in p.relative_to(root).parts}
        return sorted(found)

    def argv(self, files: Sequence[str], *, workspace: Path, report: Path,
             select: Sequence[str] | None, coverage: bool, reverse: bool,
             test_timeout: float | None, collect_only: bool) -> list[str]:
        argv = ["node", str(DRIVER)]
        if select is not None and not collect_only:
            chosen = report.parent / "tape-select.json"
            chosen.write_text(json.dumps(sorted(select)))
            argv += ["--select", str(chosen)]
        if test_timeout is not None:
            argv += ["--timeout", str(int(test_timeout * 1000))]
        return [*argv, "--", *(reversed(files) if reverse else files)]

    def report_variables(self, report: Path) -> dict[str, str]:
        return {"TASKFORGE_REPORT": str(report)}

    def read_report(self, report: Path, workspace: Path) -> Report:
        out = Report()
        if not report.is_file():
            return out
        seen: dict[str, int] = {}
        for line in report.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            if entry.get("end"):
                out.finished = True
            elif "load_error" in entry:
                out.collection_errors[str(entry.get("file", ""))] = str(entry["load_error"])
            elif "path" in entry:
                test_id = unique_id(seen, f"{entry.get('file', '')}::"
                                          f"{' > '.join(map(str, entry['path']))}")
                out.outcomes[test_id] = entry.get("status", "error")
                if (sides := compared_sides(entry.get("compared"))) is not None:
                    out.compared[test_id] = sides
                seconds = float(entry.get("seconds") or 0.0)
                out.durations[test_id] = round(seconds, 6)
                out.seconds += seconds
                if entry.get("key"):
                    out.coverage_keys[str(entry["key"])] = test_id
        return out
