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


def _generated(factory: pytest.TempPathFactory, name: str, strategies: tuple[str, ...],
               max_tasks: int) -> Path:
    """The output directory of one generate run on sample_repos/`name` (made on first use)."""
    if name not in _MADE:
        base = factory.mktemp(f"{name}-tasks")
        recipe = write_recipe(base / "recipe.yaml", f"""\
            name: {name}
            seed: 0
            sources:
              - path: {REPO_ROOT / "sample_repos" / name}
            strategies: [{", ".join(strategies)}]
            select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: {max_tasks}}}
            task: {{tests_visible: true, keep_docstrings: true}}
            verify: {{repeats: 2, timeout_s: 300, full_suite: false}}
            sandbox: bwrap
            """)
        taskforge.generate(str(recipe), out=str(base / "out"), workers=2)
        _MADE[name] = base / "out"
    return _MADE[name]


def generated(factory: pytest.TempPathFactory) -> Path:
    """The output directory of one generate run on jsdemo (made on first use)."""
    return _generated(factory, "jsdemo", STRATEGIES, 8)


def generated_tsdemo(factory: pytest.TempPathFactory) -> Path:
    """The output directory of one generate run on tsdemo's stub-function tasks (made on
    first use)."""
    return _generated(factory, "tsdemo", ("stub-function",), 12)


def stub_function_recipe(directory: Path, root: Path, max_tasks: int = 3) -> Path:
    """A recipe of stub-function tasks (bodies of two lines and more, `max_tasks` at most)
    from the project at `root`, verified under bwrap: the small projects the grading tests
    make."""
    return write_recipe(directory / "recipe.yaml", f"""\
        name: {root.name}
        seed: 0
        sources:
          - path: {root}
        strategies: [stub-function]
        select: {{min_covering_tests: 1, min_body_lines: 2, max_tasks_per_source: {max_tasks}}}
        task: {{tests_visible: true}}
        verify: {{repeats: 2, timeout_s: 300}}
        sandbox: bwrap
        """)
