"""The test runners taskforge runs for JavaScript, by the name `package.runner_setup` detects."""

from __future__ import annotations

from pathlib import Path

from taskforge.errors import UserError
from taskforge.languages.javascript.runners.base import JsTestRunner, Report
from taskforge.languages.javascript.runners.jest import JestRunner
from taskforge.languages.javascript.runners.mocha import MochaRunner
from taskforge.languages.javascript.runners.nodetest import NodeTestRunner
from taskforge.languages.javascript.runners.tape import TapeRunner
from taskforge.languages.javascript.runners.vitest import VitestRunner

RUNNERS: dict[str, type[JsTestRunner]] = {cls.name: cls for cls in (
    NodeTestRunner, MochaRunner, VitestRunner, JestRunner, TapeRunner)}


def runner_named(name: str, modules: Path | None = None) -> JsTestRunner:
    """The runner called `name`; `modules`: the environment's node_modules."""
    if name not in RUNNERS:
        raise UserError(f"test runner {name!r}: taskforge does not run it yet "
                        f"(it runs: {', '.join(RUNNERS)})")
    return RUNNERS[name](modules)


__all__ = ["RUNNERS", "JsTestRunner", "Report", "runner_named"]
