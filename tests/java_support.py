"""What the Java tests share: the JDK check (a skip here, a failure under CI), the sample,
and tasks generated once per session from sample_repos/javademo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import REPO_ROOT, write_recipe

import taskforge

JAVADEMO = REPO_ROOT / "sample_repos" / "javademo"
_MADE: dict[str, Path] = {}


def require_jdk() -> None:
    from taskforge.languages.java.env import toolchain_missing

    why = toolchain_missing()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"Java must run under CI: {why}")
        pytest.skip(f"no Java toolchain here: {why}")


def generated(factory: pytest.TempPathFactory) -> Path:
    """The output directory of one generate run on javademo (made on first use)."""
    if "out" not in _MADE:
        require_jdk()
        base = factory.mktemp("javademo-tasks")
        recipe = write_recipe(base / "recipe.yaml", f"""\
            name: javademo
            seed: 0
            sources:
              - path: {JAVADEMO}
            strategies: [stub-method, remove-method, stub-class]
            select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: 4}}
            task: {{tests_visible: true, keep_docstrings: true}}
            verify: {{repeats: 2, timeout_s: 300, full_suite: false}}
            sandbox: bwrap
            """)
        taskforge.generate(str(recipe), out=str(base / "out"), workers=1)
        _MADE["out"] = base / "out"
    return _MADE["out"]
