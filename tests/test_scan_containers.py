"""Container decoders checked against the tools that wrote the containers."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import sqlite3
import subprocess
import zipfile
from pathlib import Path

from taskforge.sanitize.bytecode import MAGIC, is_pyc, load_pyc
from taskforge.sanitize.containers import Budget, Context, expand, kind_of, pack_objects

ENV = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
       "GIT_COMMITTER_EMAIL": "a@b", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git(cwd: Path, *args: str) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", *args], cwd=cwd, env={**env, **ENV}, check=True,
                          capture_output=True).stdout


def test_pack_objects_match_git_including_deltas(tmp_path: Path) -> None:
    """Many similar versions of a file, packed aggressively so most are deltas: every object
    the parser yields is byte-identical to what `git cat-file` says, ids included."""
    git(tmp_path, "init", "-q", "-b", "main")
    lines = [f"line {i}: {'x' * (i % 7)}\n" for i in range(300)]
    for version in range(12):
        lines[version * 20] = f"changed in version {version}\n"
        (tmp_path / "big.txt").write_text("".join(lines))
        git(tmp_path, "add", "-A")
        git(tmp_path, "commit", "-q", "-m", f"v{version}")
    git(tmp_path, "repack", "-q", "-a", "-d", "--window=50", "--depth=50")
    pack = next((tmp_path / ".git/objects/pack").glob("*.pack")).read_bytes()
    ours = {oid: content for oid, _kind, content in pack_objects(pack)}
    listing = git(tmp_path, "cat-file", "--batch-all-objects", "--batch-check").decode().split()
    ids = listing[0::3]
    assert set(ours) == set(ids)
    for oid in ids:
        kind = git(tmp_path, "cat-file", "-t", oid).strip()
        assert ours[oid] == git(tmp_path, "cat-file", kind.decode(), oid)
        assert hashlib.sha1(kind + b" %d\0" % len(ours[oid]) + ours[oid]).hexdigest() == oid
    verify = git(tmp_path, "verify-pack", "-v",
                 str(next((tmp_path / ".git/objects/pack").glob("*.idx")))).decode()
    assert "chain length" in verify  # there were deltas to resolve


def test_zip_bomb_stops_at_the_budget() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(4):
            zf.writestr(f"zeros{i}", b"\0" * 1_000_000)
    ctx = Context()
    got = list(expand(buffer.getvalue(), ctx, Budget(2_500_000)))
    assert len(got) == 2
    assert ctx.undecided == [("!zeros2", "decoded size over the file's budget of 2.38419 MiB")]


def test_truncated_gzip_yields_what_it_could() -> None:
    data = gzip.compress(b"secret line of code\n" * 1000)
    got = list(expand(data[:len(data) // 2], Context(), Budget()))
    assert got and got[0][1].startswith(b"secret line of code\n")


def test_wal_sqlite_is_read(tmp_path: Path) -> None:
    path = tmp_path / "wal.db"
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE t (x TEXT)")
    con.execute("INSERT INTO t VALUES ('kept in a wal database')")
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = path.read_bytes()
    assert data[18:20] == b"\x02\x02"
    assert any(b"kept in a wal database" in inner for _w, inner in expand(data, Context(), Budget()))


def test_plain_text_is_not_mistaken_for_a_container() -> None:
    for text in (b"x = 1\nprint(x)\n", b"x^2 + y\n", b"PK is a column name\n", b"BZh91\n",
                 b"# v2 git bundle but not really\n", b"{not json at all \\ here"):
        assert list(expand(text, Context(), Budget())) == [] or kind_of(text) == "json"


def test_other_python_versions_bytecode_is_not_unmarshalled() -> None:
    other = (int.from_bytes(MAGIC[:2], "little") + 1).to_bytes(2, "little") + b"\r\n"
    data = other + b"\0" * 12 + b"\xe3garbage"
    assert is_pyc(data)
    assert load_pyc(data) is None
    assert list(expand(data, Context(), Budget())) == []
