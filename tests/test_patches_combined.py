"""`combined` joins diffs of disjoint paths as `diff_texts` gives them all at once: a task's
`deletion_patch` is its deletion's diff (made ahead, while the screen runs) with its hidden
test files' deletions, and must be byte for byte the diff of all those changes together."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from taskforge.patches import combined, diff_texts

SAMPLES = REPO_ROOT / "sample_repos"


def real_texts(count: int) -> dict[str, str]:
    files = sorted(SAMPLES.rglob("*.py"))[:count]
    return {f.relative_to(SAMPLES).as_posix(): f.read_text() for f in files}


def test_combined_is_the_diff_of_all_the_changes_together() -> None:
    texts = real_texts(24)
    paths = sorted(texts)
    # edits (leaving files without a final newline), deletions and creations, the paths
    # of the two diffs interleaved in sorted order
    edits = {p: (texts[p], texts[p].replace("return", "return  ", 1).rstrip("\n"))
             for p in paths[0::3]}
    deletions = {p: (texts[p], None) for p in paths[1::3]}
    creations = {f"{p}.new": (None, texts[p]) for p in paths[2::3]}
    modes = {p: "100755" for p in list(deletions)[:2]}
    first = diff_texts(edits)
    second = diff_texts({**deletions, **creations}, modes)
    whole = diff_texts({**edits, **deletions, **creations}, modes)
    assert combined(first, second) == whole == combined(second, first)
    assert combined(first, "") == first and combined("", "") == ""
    # Positive control: the two diffs one after the other are not that diff (the same
    # characters, in another order).
    assert first + second != whole and sorted(first + second) == sorted(whole)


def test_combined_applies_as_the_diff_of_all(tmp_path: Path) -> None:
    texts = real_texts(6)
    for path, text in texts.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    paths = sorted(texts)
    patch = combined(diff_texts({paths[0]: (texts[paths[0]], "x = 1\n")}),
                     diff_texts({paths[1]: (texts[paths[1]], None)}))
    subprocess.run(["git", "apply", "--check", "-"], input=patch.encode(), cwd=tmp_path,
                   check=True)


def test_a_path_in_both_diffs_is_an_error() -> None:
    texts = real_texts(2)
    path = sorted(texts)[0]
    one = diff_texts({path: (texts[path], "a = 1\n")})
    with pytest.raises(ValueError, match="not disjoint"):
        combined(one, diff_texts({path: (texts[path], "b = 2\n")}))
