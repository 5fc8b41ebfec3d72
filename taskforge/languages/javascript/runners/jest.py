"""jest, from the project's own dependencies (`node_modules/.bin/jest`).

Results come from jest's JSON report (`--json --outputFile=...`), the format vitest's JSON
reporter copies (`vitest.read_json_report`). Selection: `--runTestsByPath` with the files
holding the selected tests and `--testNamePattern` matching their full names exactly;
collection: a name pattern nothing matches (every test reported pending). Per-test coverage:
a configuration written around the project's own (its jest.config.js/.cjs/.mjs/.json, or
package.json's `jest`) adds a `setupFilesAfterEnv` module whose hooks keep V8's ranges of the
code babel-jest produced and that code, whose inline source map gives the lines. A
jest.config.ts cannot be wrapped from here (it needs the project's TypeScript loader).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from taskforge.errors import UserError
from taskforge.languages.javascript.runners.base import SUPPORT, JsTestRunner, Report
from taskforge.languages.javascript.runners.vitest import read_json_report

SETUP = SUPPORT / "taskforge-jest-setup.cjs"
NOTHING = "^taskforge: collect only, run nothing$"
CONFIGS = ("jest.config.js", "jest.config.cjs", "jest.config.mjs", "jest.config.json")


def _wrapper_config(workspace: Path) -> str:
    """A CommonJS configuration: the project's own (loaded by path), rooted in the workspace,
    with the coverage setup module added."""
    if (workspace / "jest.config.ts").is_file() or (workspace / "jest.config.mts").is_file():
        raise UserError(f"{workspace / 'jest.config.ts'}: a TypeScript jest configuration "
                        "cannot be wrapped for per-test coverage")
    own = next((workspace / n for n in CONFIGS if (workspace / n).is_file()), None)
    if own is not None and own.suffix == ".mjs":
        load = f"(await import({json.dumps(own.as_uri())})).default"
    elif own is not None:
        load = f"require({json.dumps(str(own))})"
    else:
        load = f"(require({json.dumps(str(workspace / 'package.json'))}).jest || {{}})"
    return f"""\
const path = require('node:path');
module.exports = async () => {{
  let base = {load};
  if (typeof base === 'function') base = await base();
  const root = {json.dumps(str(workspace))};
  return {{
    ...base,
    rootDir: base.rootDir ? path.resolve(root, base.rootDir) : root,
    setupFilesAfterEnv: [...(base.setupFilesAfterEnv || []), {json.dumps(str(SETUP))}],
  }};
}};
"""


class JestRunner(JsTestRunner):
    name = "jest"

    def test_files(self, root: Path, args: Sequence[str]) -> list[str] | None:
        return None  # jest's configuration decides

    def argv(self, files: Sequence[str], *, workspace: Path, report: Path,
             select: Sequence[str] | None, coverage: bool, reverse: bool,
             test_timeout: float | None, collect_only: bool) -> list[str]:
        argv = ["node", "node_modules/.bin/jest", "--json", f"--outputFile={report}", "--ci",
                "--watchman=false", "--passWithNoTests", "--colors=false"]
        if coverage:
            config = report.parent / "jest.taskforge.config.cjs"
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
        if files:
            argv += ["--runTestsByPath", *files]
        return argv

    def read_report(self, report: Path, workspace: Path) -> Report:
        # jest's setup module keys a test by its full name, the titles joined by spaces
        return read_json_report(report, workspace, key_separator=" ")
