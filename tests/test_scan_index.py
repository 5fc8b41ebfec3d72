"""The environment index (`sanitize/envindex.py`): a tree decoded once and searched for each
task's fingerprints finds exactly what walking the tree finds, and is never used once the
tree has changed."""

from __future__ import annotations

import os
import py_compile
from pathlib import Path

import pytest
from test_scan_adversarial import (
    ORIGINAL,
    PLANTS,
    Task,
    make_env,
    make_task,
    original_pyc,
    zip_bytes,
)

from taskforge.sanitize import ScanStats, scan
from taskforge.sanitize.envindex import prepare_index, tree_index
from taskforge.sanitize.walk import BIG_FILE


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return make_task(tmp_path)


def both_ways(task: Task, roots: list[Path], indexed: list[Path]
              ) -> tuple[tuple[list, list], tuple[list, list]]:
    """(hits with their roots, undecided) of a walk, and of the same scan through the index."""
    results = []
    for given in ((), indexed):
        stats = ScanStats()
        hits = scan(task.fingerprints, roots, stats, indexed=given)
        results.append(([(h, h.root) for h in hits],
                        sorted((u, u.root) for u in stats.undecided)))
    return results[0], results[1]


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_the_index_finds_what_a_walk_finds(task: Task, tmp_path: Path, kind: str) -> None:
    PLANTS[kind](task, tmp_path)
    walked, from_index = both_ways(task, [task.ws], [task.ws])
    assert walked[0], f"{kind}: the walk finds the plant (the positive control)"
    assert from_index == walked


def test_an_environment_beside_a_workspace(task: Task, tmp_path: Path) -> None:
    env = make_env(tmp_path)
    site = env / "lib/python3.11/site-packages"
    (site / "pkg-0.1.dist-info").mkdir()
    (site / "cache.whl").write_bytes(zip_bytes({"pkg/scores.py": ORIGINAL}))
    pyc = site / "__pycache__/scores.cpython-311.pyc"
    pyc.parent.mkdir()
    pyc.write_bytes(original_pyc(tmp_path))  # found by its code object, not only its text
    (site / "broken.zip").write_bytes(b"PK\x03\x04" + b"\0" * 40)  # undecided
    walked, from_index = both_ways(task, [task.ws, env], [env])
    assert {h.kind for h, _root in walked[0]} >= {"code", "literal", "line"}
    assert walked[1], "the broken zip is undecided"
    assert from_index == walked


def test_a_file_too_big_to_hold_is_searched_whole(task: Task, tmp_path: Path) -> None:
    env = make_env(tmp_path)
    blob = bytearray(os.urandom(BIG_FILE + 4096))
    literal = b"cannot normalise an empty scoreboard"
    at = 16 * 1024 * 1024 - 10  # across the walk's first chunk boundary
    blob[at:at + len(literal)] = literal
    (env / "lib/big.bin").write_bytes(bytes(blob))
    walked, from_index = both_ways(task, [task.ws, env], [env])
    assert ("lib/big.bin", "literal") in {(h.path, h.kind) for h, _root in walked[0]}
    assert from_index == walked


def test_a_changed_tree_is_indexed_again(task: Task, tmp_path: Path) -> None:
    env = make_env(tmp_path)  # its otherlib shares a few names with the deleted code
    copy = env / "lib/python3.11/site-packages/pkg/scores.py"
    literal = "cannot normalise an empty scoreboard"

    def found() -> set[tuple[str, str]]:
        return {(h.path, h.fingerprint) for h in scan(task.fingerprints, [env], indexed=[env])}

    first = tree_index(env)
    assert tree_index(env) is first, "an unchanged tree keeps its index"
    assert not {path for path, _fp in found()} & {"lib/python3.11/site-packages/pkg/scores.py"}
    copy.parent.mkdir()
    copy.write_text(ORIGINAL)
    # The positive control: the index built before the copy does not hold it.
    assert not list(first.occurrences(literal.encode()))
    assert ("lib/python3.11/site-packages/pkg/scores.py", literal) in found()
    assert tree_index(env) is not first
    # An edit is seen (its size and modification time), and so is a removal.
    copy.write_text(ORIGINAL.replace(literal, "gone"))
    assert ("lib/python3.11/site-packages/pkg/scores.py", literal) not in found()
    copy.unlink()
    assert "lib/python3.11/site-packages/pkg/scores.py" not in {path for path, _fp in found()}


def test_an_index_prepared_ahead_is_the_one_scans_use_while_the_tree_is_unchanged(
        task: Task, tmp_path: Path) -> None:
    """`prepare_index` (run while the screen works) builds what the first scan would: the
    scan then uses it, words and all; a tree changed after it is indexed again."""
    env = make_env(tmp_path)
    prepare_index(env).join()
    prepared = tree_index(env)
    assert prepared._word_shards is not None, "its words are built too"
    walked, from_index = both_ways(task, [task.ws, env], [env])
    assert from_index == walked and tree_index(env) is prepared
    copy = env / "lib/python3.11/site-packages/pkg/scores.py"
    copy.parent.mkdir()
    copy.write_text(ORIGINAL)
    # Positive control: the prepared index does not hold the copy made after it.
    assert not prepared.occurrences(b"cannot normalise an empty scoreboard")
    assert "lib/python3.11/site-packages/pkg/scores.py" in {
        h.path for h in scan(task.fingerprints, [env], indexed=[env])}
    assert tree_index(env) is not prepared


def test_bytecode_in_a_wheel_is_checked_by_its_code(task: Task, tmp_path: Path) -> None:
    """A .pyc nested in an archive, renamed: only its code object says it is the original."""
    src = tmp_path / "renamed.py"
    src.write_text(ORIGINAL.replace("cannot normalise an empty scoreboard", "x"))
    py_compile.compile(str(src), cfile=str(tmp_path / "renamed.pyc"), doraise=True)
    env = make_env(tmp_path)
    (env / "lib/bundle.zip").write_bytes(
        zip_bytes({"a/b.pyc": (tmp_path / "renamed.pyc").read_bytes()}))
    walked, from_index = both_ways(task, [task.ws, env], [env])
    assert any(h.kind == "code" for h, _root in walked[0])
    assert from_index == walked


def test_a_fingerprint_no_word_of_the_tree_holds_is_never_searched(tmp_path: Path) -> None:
    """The distinct-words check only ever says "cannot be here" when that is true: a run of
    word characters of the needle must lie inside some word of the tree."""
    (tmp_path / "lib.py").write_text("value = self.foo_bar.baz(x)  # ok\n")
    index = tree_index(tmp_path)
    for present in (b"bar.baz(", b"self.foo", b"oo_ba", b"(x)  #", b"  "):
        assert index.might_hold(present) and index.occurrences(present) == (0,), present
    for absent in (b"qux.baz", b"foo_bar.bazz", b"x_y"):
        assert not index.might_hold(absent), absent


def test_a_needle_is_searched_only_where_its_words_are(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Shards narrow the search by the words a needle's runs must lie in; whatever the
    needle's runs (whole words inside it, the end of a word at its start, the start of one at
    its end, part of one word), the entries found are exactly those holding it."""
    import random

    from taskforge.sanitize import envindex

    monkeypatch.setattr(envindex, "SHARD_BYTES", 200)  # many shards of a few files each
    rng = random.Random(7)
    vocabulary = ["alpha", "beta_gamma", "delta9", "Epsilon", "zeta", "eta_theta_iota",
                  "kappa", "lambda_", "mu", "nu_xi"]
    texts = []
    for n in range(60):
        words = rng.choices(vocabulary[: 3 + n % 8], k=rng.randint(5, 40))
        text = "".join(w + rng.choice([" ", ".", "(", ") ", "\n", " = "]) for w in words)
        texts.append(text.encode())
        (tmp_path / f"f{n:02d}.py").write_bytes(texts[-1])
    index = tree_index(tmp_path)
    order = [index.labels[k][0] for k in range(len(index.starts))]
    data = dict(zip([f"f{n:02d}.py" for n in range(60)], texts, strict=True))
    needles = {b"nu_xi", b"theta_io", b"a(zeta", b"ta.kap", b"mu = ", b"9 delta", b"lambda_\n",
               b"absent_word", b"zeta.alpha.", b") ", b"xi = nu_"}
    for text in texts[:20]:
        for _ in range(10):
            i = rng.randrange(len(text) - 2)
            needles.add(text[i:i + rng.randint(2, 14)])
    for needle in sorted(needles):
        expected = tuple(k for k, rel in enumerate(order) if needle in data[rel])
        assert index.occurrences(needle) == expected, needle
        assert index.might_hold(needle) or not expected, needle
    assert len(index.spans) > 10
    assert not index.might_hold(b"absent_word") and not index.might_hold(b"ta_gamma_x")
    # The same with every edge run too common to narrow by (every shard searched).
    monkeypatch.setattr(envindex, "MATCHED_WORDS", 1)
    fresh = envindex.TreeIndex(tmp_path)
    for needle in sorted(needles):
        assert fresh.occurrences(needle) == index.occurrences(needle), needle
