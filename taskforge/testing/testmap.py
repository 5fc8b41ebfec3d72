"""Per-test line coverage: which tests executed which lines, read from a coverage data file."""

from __future__ import annotations

from pathlib import Path

import coverage


def read_test_map(data_file: Path, workspace: Path,
                  tests: tuple[str, ...]) -> dict[str, dict[int, tuple[int, ...]]]:
    """path (workspace-relative) -> line -> indexes into `tests`; -1 for the empty context."""
    if not data_file.exists():
        return {}
    data = coverage.CoverageData(basename=str(data_file))
    data.read()
    index = {test_id: i for i, test_id in enumerate(tests)}
    root = workspace.resolve()
    result: dict[str, dict[int, tuple[int, ...]]] = {}
    for filename in sorted(data.measured_files()):
        path = Path(filename).resolve()
        if root not in path.parents:
            continue
        by_line: dict[int, tuple[int, ...]] = {}
        for line, contexts in sorted(data.contexts_by_lineno(filename).items()):
            ids = sorted({index.get(c, -1) if c else -1 for c in contexts
                          if not c or c in index})
            if ids:
                by_line[line] = tuple(ids)
        if by_line:
            result[path.relative_to(root).as_posix()] = by_line
    return result
