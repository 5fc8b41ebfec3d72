"""Tasks generated once per test session from sample_repos/jsdemo (node's runner) and
sample_repos/tsdemo (vitest), shared by the JavaScript end-to-end and tamper tests (each
module's fixtures call `generated` or `generated_tsdemo`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO_ROOT, write_recipe

import taskforge

STRATEGIES = ("stub-function", "remove-function", "remove-method", "stub-class", "feature-cluster")
_MADE: dict[str, Path] = {}


def generated(factory: pytest.TempPathFactory) -> Path:
    """The output directory of one generate run on jsdemo (made on first use)."""
    if "out" not in _MADE:
        base = factory.mktemp("jsdemo-tasks")
        recipe = write_recipe(base / "recipe.yaml", f"""\
            name: jsdemo
            seed: 0
            sources:
              - path: {REPO_ROOT / "sample_repos" / "jsdemo"}
            strategies: [{", ".join(STRATEGIES)}]
            select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: 8}}
            task: {{tests_visible: true, keep_docstrings: true}}
            verify: {{repeats: 2, timeout_s: 300, full_suite: false}}
            sandbox: bwrap
            """)
        taskforge.generate(str(recipe), out=str(base / "out"), workers=2)
        _MADE["out"] = base / "out"
    return _MADE["out"]


def generated_tsdemo(factory: pytest.TempPathFactory) -> Path:
    """The output directory of one generate run on tsdemo's stub-function tasks (made on
    first use)."""
    if "tsdemo" not in _MADE:
        base = factory.mktemp("tsdemo-tasks")
        recipe = write_recipe(base / "recipe.yaml", f"""\
            name: tsdemo
            seed: 0
            sources:
              - path: {REPO_ROOT / "sample_repos" / "tsdemo"}
            strategies: [stub-function]
            select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: 12}}
            verify: {{repeats: 2, timeout_s: 300}}
            sandbox: bwrap
            """)
        taskforge.generate(str(recipe), out=str(base / "out"), workers=2)
        _MADE["tsdemo"] = base / "out"
    return _MADE["tsdemo"]
