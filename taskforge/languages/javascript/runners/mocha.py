"""mocha, from the project's own dependencies (`node_modules/.bin/_mocha`).

The report is our reporter's (support/taskforge-mocha-reporter.cjs): JSON lines with each
test's file and title path, from mocha's own runner events, all in the one process mocha
runs every file in. Ids: `test/x.js::suite > test`, ` [2]` for a repeated title. Per-test
coverage: a root-hook plugin (`mochaHooks`) takes V8's coverage before and after each test.

The project's configuration (.mocharc or package.json's `mocha`: `require`, `ui`, `timeout`,
...) applies, passed on without `spec` (mocha would add those files to the ones it is given);
the files are the test script's arguments, or the configuration's `spec`, or mocha's default
(`./test`, not recursive unless `--recursive`). Selection: those files and `--grep` matching the full
titles exactly. Collection: `--dry-run` (mocha 9 on; before, a real run of everything). A
file that fails to load stops mocha's whole run; collection then tries each file alone to name
the ones that fail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import yaml

from taskforge.errors import UserError
from taskforge.languages.javascript.runners.base import (
    SUPPORT,
    JsTestRunner,
    Report,
    compared_sides,
    unique_id,
)

REPORTER = SUPPORT / "taskforge-mocha-reporter.cjs"
HOOKS = SUPPORT / "taskforge-mocha-hooks.cjs"
EXTENSIONS = (".js", ".cjs", ".mjs")
# The first mocha taskforge runs: root-hook plugins (`mochaHooks`, per-test coverage) came in
# 8, `--config` and `--no-package` in 6.
OLDEST = 8
CONFIGS = (".mocharc.yml", ".mocharc.yaml", ".mocharc.json", ".mocharc.jsonc", ".mocharc")


def _config(root: Path) -> dict:
    """The project's .mocharc (YAML or JSON; a JavaScript one is not read here) or its
    package.json's `mocha` key."""
    for name in CONFIGS:
        path = root / name
        if path.is_file():
            try:
                data = yaml.safe_load(re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.M))
            except (yaml.YAMLError, UnicodeDecodeError):
                return {}
            return data if isinstance(data, dict) else {}
    try:
        package = json.loads((root / "package.json").read_text())
    except (OSError, ValueError):
        return {}
    config = package.get("mocha") if isinstance(package, dict) else None
    return config if isinstance(config, dict) else {}


def _config_without_spec(root: Path) -> str:
    """A CommonJS configuration: the project's own (any format mocha reads: a JavaScript
    one is required from the workspace) without `spec`."""
    script = next((root / n for n in (".mocharc.js", ".mocharc.cjs") if (root / n).is_file()),
                  None)
    if script is not None:
        return (f"const config = {{ ...require({json.dumps(str(script))}) }};\n"
                "delete config.spec;\nmodule.exports = config;\n")
    config = {k: v for k, v in _config(root).items() if k != "spec"}
    return f"module.exports = {json.dumps(config, default=str)};\n"


class MochaRunner(JsTestRunner):
    name = "mocha"
    loads_all_or_nothing = True

    def test_files(self, root: Path, args: Sequence[str]) -> list[str]:
        config = _config(root)
        specs = list(args)
        if not specs:
            spec = config.get("spec")
            specs = [spec] if isinstance(spec, str) else [str(s) for s in spec or ["./test"]]
        recursive = bool(config.get("recursive")) or "--recursive" in args
        found: set[str] = set()
        for spec in specs:
            path = root / spec
            if path.is_dir():
                pattern = "**/*" if recursive else "*"
                found |= {p.relative_to(root).as_posix() for p in path.glob(pattern)
                          if p.is_file() and p.suffix in EXTENSIONS}
            elif path.is_file():
                found.add(path.relative_to(root).as_posix())
            else:
                found |= {p.relative_to(root).as_posix() for p in root.glob(spec.removeprefix("./"))
                          if p.is_file() and "node_modules" not in p.parts}
        return sorted(found)

    def argv(self, files: Sequence[str], *, workspace: Path, report: Path,
             select: Sequence[str] | None, coverage: bool, reverse: bool,
             test_timeout: float | None, collect_only: bool) -> list[str]:
        major = self._major()
        if 0 < major < OLDEST:  # its options would be refused, and no test would be found
            raise UserError(f"mocha {self._version()}: taskforge runs mocha {OLDEST} and "
                            f"later (root-hook plugins, --config)")
        # mocha adds a configuration's `spec` to the files it is given: the configuration is
        # passed on without it (the rest of it, `require`, `ui`, `timeout`..., applies).
        config = report.parent / "mocharc.cjs"
        config.write_text(_config_without_spec(workspace))
        # `_mocha` runs the tests in its own process (every release has it; `mocha` is
        # bin/mocha in 8 and bin/mocha.js from 9 on, and may start a child for node flags)
        argv = ["node", "node_modules/.bin/_mocha", "--config", str(config),
                "--no-package", "--reporter", str(REPORTER), "--no-color", "--exit"]
        if coverage:
            argv += ["--require", str(HOOKS)]
        if test_timeout is not None:
            argv += ["--timeout", str(int(test_timeout * 1000))]
        if collect_only and major >= 9:
            argv.append("--dry-run")
        # before 9 there is no --dry-run (and an unknown option takes the next word as its
        # value): collection is a real run of everything
        elif select is not None:
            titles = sorted({re.sub(r" \[\d+\]$", "", t.split("::", 1)[1]).replace(" > ", " ")
                             for t in select})
            argv += ["--grep", f"^(?:{'|'.join(map(re.escape, titles))})$"]
        argv += list(reversed(files)) if reverse else list(files)
        return argv

    def _version(self) -> str:
        """The installed mocha's version ('' when unknown)."""
        try:
            return str(json.loads((self.modules / "mocha" / "package.json").read_text())
                       ["version"])
        except (TypeError, OSError, ValueError, KeyError):
            return ""

    def _major(self) -> int:
        """The installed mocha's major version (0 when unknown)."""
        try:
            return int(self._version().split(".")[0])
        except ValueError:
            return 0

    def report_variables(self, report: Path) -> dict[str, str]:
        return {"TASKFORGE_REPORT": str(report)}

    def read_report(self, report: Path, workspace: Path) -> Report:
        out = Report()
        if not report.is_file():
            return out
        seen: dict[str, int] = {}
        prefixes = (str(workspace.resolve()) + "/", str(workspace) + "/")
        for line in report.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("end"):
                out.finished = True
                continue
            if "hook" in entry:
                continue
            file = str(entry.get("file", ""))
            rel = next((file.removeprefix(p) for p in prefixes if file.startswith(p)), file)
            test_id = unique_id(seen, f"{rel}::{' > '.join(map(str, entry.get('path', [])))}")
            out.outcomes[test_id] = entry.get("status", "error")
            if (sides := compared_sides(entry.get("compared"))) is not None:
                out.compared[test_id] = sides
            seconds = float(entry.get("seconds") or 0.0)
            out.durations[test_id] = round(seconds, 6)
            out.seconds += seconds
            if entry.get("key"):
                out.coverage_keys[str(entry["key"])] = test_id
        return out
