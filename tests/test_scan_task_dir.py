"""`scan_task_dir`, the core of `taskforge scan TASKS ID DIR`: fingerprints come from the
record's `deletion_patch` and its snapshot; any directory can be searched."""

from __future__ import annotations

import shutil
from pathlib import Path

from test_scan_adversarial import FILES, LITERAL, MODULE, ORIGINAL, TASK, zip_bytes

from taskforge.patches import apply_patch, diff_texts
from taskforge.sanitize import (
    ScanStats,
    fingerprint_record,
    sanitize_workspace,
    scan_removals,
    scan_task_dir,
    task_trees,
)


def snapshot(tmp_path: Path) -> Path:
    root = tmp_path / "snapshot"
    for rel, text in {**FILES, MODULE: ORIGINAL}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def record() -> dict:
    return {"deletion_patch": diff_texts({MODULE: (ORIGINAL, TASK)}),
            "patch": diff_texts({MODULE: (TASK, ORIGINAL)}), "snapshot": "abc"}


def materialized(tmp_path: Path, root: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(root, ws)
    apply_patch(ws, record()["deletion_patch"])
    sanitize_workspace(ws)
    return ws


def test_task_trees_rebuild_both_states(tmp_path: Path) -> None:
    originals, task = task_trees(record(), snapshot(tmp_path))
    assert originals == {MODULE: ORIGINAL.encode()}
    assert task[MODULE] == TASK.encode()
    assert set(task) == set(FILES)


def test_clean_workspace_has_no_hits(tmp_path: Path) -> None:
    root = snapshot(tmp_path)
    stats = ScanStats()
    assert scan_task_dir(record(), materialized(tmp_path, root), root, stats) == []
    assert stats.files >= len(FILES)
    assert stats.containers > 0  # the fresh commit's objects were inflated and searched


def test_leak_is_reported_with_its_container(tmp_path: Path) -> None:
    root = snapshot(tmp_path)
    ws = materialized(tmp_path, root)
    (ws / "old.zip").write_bytes(zip_bytes({"copy/scores.py": ORIGINAL}))
    hits = scan_task_dir(record(), ws, root)
    assert {h.path for h in hits} == {"old.zip"}
    assert any(h.container == "!copy/scores.py" and h.fingerprint == LITERAL for h in hits)
    assert str(hits[0]).startswith("old.zip!copy/scores.py: ")


def test_the_snapshot_itself_is_all_residue(tmp_path: Path) -> None:
    root = snapshot(tmp_path)
    hits = scan_task_dir(record(), root, root)
    assert {h.path for h in hits} == {MODULE}
    assert fingerprint_record(record(), root)


def test_scan_removals_are_read_from_a_record() -> None:
    rec = {"sanitizer": {"artifacts_removed": {"leak-scan": ["docs/_modules/x.html"]}}}
    assert scan_removals(rec) == ["docs/_modules/x.html"]
    assert scan_removals({}) == []
