"""The leak scan fails closed, in bounded memory: bombs of every container kind (small on
disk, expanding past 1 GB) make `taskforge scan` exit 1 naming each file, with the scan's
peak RSS under 256 MB; honest big files (a binary larger than a scan holds, a wheel-sized zip,
a big .pyc) stay clean. Positive control: decompressing the same bombs the naive way (as the
scan did before: the whole member at once) does not fit in 256 MB of address space."""

from __future__ import annotations

import bz2
import hashlib
import io
import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
import zlib
from pathlib import Path

import pytest
from test_scan_adversarial import FILES, LITERAL, MODULE, ORIGINAL, TASK
from test_scan_task_dir import materialized

from taskforge.errors import Rejected
from taskforge.patches import diff_texts
from taskforge.sanitize import UNDECIDED, Fingerprints, sanitize_and_scan
from taskforge.sanitize.bytecode import MAGIC
from taskforge.sanitize.containers import Budget, Context, ScanBudget, expand
from taskforge.sanitize.fingerprints import Fingerprint
from taskforge.store.snapshots import export_snapshot, tree_hash

MB = 1024 * 1024
GB_PLUS = 1100 * MB  # every bomb expands past 1 GB
RSS_LIMIT = 256 * MB


def zeros_deflated(size: int, wbits: int = zlib.MAX_WBITS, prefix: bytes = b"") -> bytes:
    """`prefix` then `size` zero bytes, compressed a MB at a time (never held expanded)."""
    c = zlib.compressobj(9, zlib.DEFLATED, wbits)
    out = [c.compress(prefix)]
    block = bytes(MB)
    for _ in range(size // MB):
        out.append(c.compress(block))
    out.append(c.flush())
    return b"".join(out)


def gzip_bomb(size: int = GB_PLUS) -> bytes:
    return zeros_deflated(size, 16 + zlib.MAX_WBITS)


def zip_bomb(size: int = GB_PLUS) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf, \
            zf.open("zeros.bin", "w", force_zip64=True) as member:
        block = bytes(MB)
        for _ in range(size // MB):
            member.write(block)
    return buffer.getvalue()


def nested_zip_bomb() -> bytes:
    """Ten zips of ten 12 MB members each, zipped: every member within the budget of one
    member, 1.2 GB in all (the per-file budget stops it)."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(10):
            zf.writestr(f"part{i}.bin", bytes(12 * MB))
    outer = io.BytesIO()
    with zipfile.ZipFile(outer, "w", zipfile.ZIP_STORED) as zf:
        for i in range(10):
            zf.writestr(f"inner{i}.zip", inner.getvalue())
    return outer.getvalue()


def stream_bomb(compressor: bz2.BZ2Compressor | lzma.LZMACompressor, size: int) -> bytes:
    out = []
    block = bytes(MB)
    for _ in range(size // MB):
        out.append(compressor.compress(block))
    out.append(compressor.flush())
    return b"".join(out)


def tar_with_huge_member() -> bytes:
    """A tar whose member declares 2 GB (a sparse or cut archive does): the header alone."""
    buffer = io.BytesIO()
    info = tarfile.TarInfo("huge.bin")
    info.size = 2 * 1024 * MB
    buffer.write(info.tobuf(format=tarfile.GNU_FORMAT))
    return buffer.getvalue() + bytes(1024)


def pack_bomb() -> bytes:
    """A git pack holding one blob that inflates past 1 GB."""
    size = GB_PLUS
    first = (3 << 4) | (size & 0x0F)  # type blob, the size's low 4 bits, then 7 at a time
    size >>= 4
    header = bytearray([first | (0x80 if size else 0)])
    while size:
        byte = size & 0x7F
        size >>= 7
        header.append(byte | (0x80 if size else 0))
    body = b"PACK" + (2).to_bytes(4, "big") + (1).to_bytes(4, "big") + bytes(header) \
        + zeros_deflated(GB_PLUS)
    return body + hashlib.sha1(body).digest()


def loose_object_bomb() -> bytes:
    return zeros_deflated(GB_PLUS, prefix=b"blob %d\0" % GB_PLUS)


BOMBS = {
    "gzip.bin": gzip_bomb,
    "wheel.whl": zip_bomb,
    "nested.zip": nested_zip_bomb,
    "data.bz2": lambda: stream_bomb(bz2.BZ2Compressor(9), 200 * MB),
    "data.xz": lambda: stream_bomb(lzma.LZMACompressor(preset=0), 200 * MB),
    "huge.tar": tar_with_huge_member,
    "objects/pack/pack-1.pack": pack_bomb,
    "objects/ab/cdef": loose_object_bomb,
}
# The naive way each bomb was decoded before: the whole member in one call.
NAIVE = {
    "gzip.bin": "import gzip; gzip.decompress(data)",
    "wheel.whl": "import io, zipfile; zipfile.ZipFile(io.BytesIO(data)).read('zeros.bin')",
    "objects/ab/cdef": "import zlib; zlib.decompress(data)",
}


def task_directory(tmp_path: Path) -> Path:
    """A task output directory by hand: one shard, one record, the snapshot's archive."""
    root = tmp_path / "snapshot"
    for rel, text in {**FILES, MODULE: ORIGINAL}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    out = tmp_path / "tasks"
    out.mkdir()
    snapshot_id = tree_hash(root, tmp_path / "hash.git")  # what the archive is checked against
    export_snapshot(root, snapshot_id, out)
    record = {"instance_id": "scores__stub__normalize", "repo": "scores", "source": str(root),
              "base_commit": "0" * 40, "snapshot": snapshot_id, "license": None,
              "language": "python", "strategy": "stub-function",
              "deleted": [{"path": MODULE, "symbol": "normalize", "kind": "function",
                           "start_line": 1, "end_line": 3}],
              "deletion_patch": diff_texts({MODULE: (ORIGINAL, TASK)}),
              "patch": diff_texts({MODULE: (TASK, ORIGINAL)}), "test_patch": "",
              "FAIL_TO_PASS": [], "PASS_TO_PASS": [], "problem_statement": "",
              "environment": {}, "difficulty": {}, "sanitizer": {}, "created_at": "",
              "verification": {"mode": "targeted", "repeats": 2, "tests_run": [],
                               "screen": {}, "collection_checked": False, "collateral": {},
                               "null_solutions": {}, "audit": {}, "runs": [],
                               "scan_seconds": 0.0},
              "generator": {"version": "0", "recipe_sha256": "", "seed": 0}}
    (out / "tasks-00000-of-00001.jsonl").write_text(json.dumps(record) + "\n")
    return out


# Runs the command and writes its peak RSS to a file. A child forked from this (large) pytest
# process would report this process's peak as its own: Linux carries the forking process's
# high-water mark through fork and exec into ru_maxrss. Forked from a small launcher, the
# command's figure is its own.
LAUNCHER = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_pid, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss * 1024))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(args: list[str], cwd: Path) -> tuple[int, str, str, int]:
    """Run `args`; (exit code, stdout, stderr, the command's own peak RSS in bytes)."""
    peak = cwd / "peak-rss"
    with (cwd / "stdout").open("w+") as out, (cwd / "stderr").open("w+") as err:
        proc = subprocess.run([sys.executable, "-c", LAUNCHER, str(peak), *args], cwd=cwd,
                              stdout=out, stderr=err,
                              env={**os.environ, "TASKFORGE_CACHE": str(cwd / "cache")})
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), int(peak.read_text())


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace (clean apart from the bombs) holding every bomb, and the task it is for."""
    tmp = tmp_path_factory.mktemp("bombs")
    out = task_directory(tmp)
    ws = materialized(tmp, tmp / "snapshot")
    for rel, make in BOMBS.items():
        (ws / "artifacts" / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / "artifacts" / rel).write_bytes(make())
    return out


@pytest.mark.slow
def test_scan_of_bombs_exits_1_naming_each_file_within_256_mb(bombs: Path) -> None:
    workdir = bombs.parent
    on_disk = sum(f.stat().st_size for f in (workdir / "ws/artifacts").rglob("*") if f.is_file())
    assert on_disk < 8 * MB  # small on disk ...
    code, stdout, stderr, rss = run_measured(
        [sys.executable, "-m", "taskforge", "scan", str(bombs), "scores__stub__normalize",
         str(workdir / "ws")], workdir)
    assert code == 1, stderr
    lines = stdout.splitlines()
    undecided = {line.split("!")[0].split(":")[0] for line in lines if ": undecided: " in line}
    assert undecided == {f"artifacts/{rel}" for rel in BOMBS}, stdout
    assert len(lines) == len(BOMBS)  # one line per file, nothing else was a hit
    assert "0 hits, 8 undecided" in stderr
    assert rss < RSS_LIMIT, f"peak RSS {rss / MB:.0f} MB"
    print(f"scan of {len(BOMBS)} bombs ({on_disk / MB:.1f} MB on disk): peak RSS {rss / MB:.0f} MB")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NAIVE))
def test_positive_control_naive_decompression_needs_more_than_256_mb(bombs: Path,
                                                                     name: str) -> None:
    """The same bomb, decoded whole as the scan did before, fails under a 256 MB address-space
    limit (MemoryError), where the scan above held all of them at once."""
    path = bombs.parent / "ws/artifacts" / name
    code = ("import resource, sys\n"
            f"resource.setrlimit(resource.RLIMIT_AS, ({RSS_LIMIT}, {RSS_LIMIT}))\n"
            f"data = open({str(path)!r}, 'rb').read()\n"
            "try:\n"
            f"    {NAIVE[name]}\n"
            "except MemoryError:\n"
            "    sys.exit(3)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr


def test_expansion_ratio_of_a_small_bomb_is_measured() -> None:
    """The cheap control: a 16 MB gzip bomb, decompressed whole, expands over 500x; the
    budgeted decoder stops at its budget and says so."""
    bomb = gzip_bomb(16 * MB)
    import gzip
    assert len(gzip.decompress(bomb)) / len(bomb) > 500
    ctx = Context()
    got = list(expand(bomb, ctx, Budget(member=4 * MB)))
    assert got == []
    assert ctx.undecided == [("", "gzip: gunzip: decoded size over the 4 MiB member budget")]


def fingerprints() -> Fingerprints:
    return Fingerprints(texts=(Fingerprint("literal", LITERAL),))


def test_a_bomb_rejects_the_task_and_is_recorded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pkg").mkdir()
    (ws / "pkg/data.gz").write_bytes(gzip_bomb(80 * MB))
    with pytest.raises(Rejected) as err:
        sanitize_and_scan(ws, None, fingerprints())
    assert err.value.reason == UNDECIDED
    assert err.value.detail == "pkg/data.gz: gzip: gunzip: decoded size over the 64 MiB " \
                               "member budget"
    assert err.value.facts["sanitizer"]["leak_scan"]["undecided"] == [
        {"path": "pkg/data.gz", "kind": "undecided",
         "reason": "gzip: gunzip: decoded size over the 64 MiB member budget"}]


def test_a_bomb_in_the_environment_rejects_too(tmp_path: Path) -> None:
    ws, env = tmp_path / "ws", tmp_path / "env"
    ws.mkdir()
    (env / "lib").mkdir(parents=True)
    (env / "lib/cache.xz").write_bytes(stream_bomb(lzma.LZMACompressor(preset=0), 80 * MB))
    with pytest.raises(Rejected) as err:
        sanitize_and_scan(ws, env, fingerprints())
    assert err.value.detail.startswith("env/lib/cache.xz: xz: unxz: decoded size over")


def test_undecidable_archives_reject(tmp_path: Path) -> None:
    """An encrypted or corrupt archive member, a zip nested too deep: undecided. A damaged
    compressed stream is read up to the damage (every decompressor stops there): a note."""
    def nested(depth: int) -> bytes:
        data = ORIGINAL.encode()
        for level in range(depth):
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as zf:
                zf.writestr(f"level{level}", data)
            data = buffer.getvalue()
        return data

    good = io.BytesIO()
    with zipfile.ZipFile(good, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.py", ORIGINAL * 20)
    corrupt = bytearray(good.getvalue())
    corrupt[40:60] = bytes(20)  # inside the member's deflate stream
    ctx = Context()
    list(expand(bytes(corrupt), ctx, Budget()))
    assert [w for w, _r in ctx.undecided] == [""] and "cannot decode" in ctx.undecided[0][1]
    ctx = Context()
    list(expand(nested(8), ctx, Budget()))
    assert ctx.undecided == [("!level7!level6!level5!level4!level3!level2",
                              "zip nested deeper than 6 containers")]
    import gzip
    cut = gzip.compress(ORIGINAL.encode() * 50)[:-100]
    ctx = Context()
    assert list(expand(cut, ctx, Budget())) and ctx.undecided == []


def test_honest_big_files_stay_clean(tmp_path: Path) -> None:
    """A binary bigger than the scan reads whole (a .so), a wheel-sized zip of it (read from
    disk member by member), a big .pyc and JSON: no hit, nothing undecided."""
    ws = tmp_path / "ws"
    (ws / "lib").mkdir(parents=True)
    blob = os.urandom(40 * MB)
    (ws / "lib/_native.so").write_bytes(blob)
    with zipfile.ZipFile(ws / "lib/big-1.0-py3-none-any.whl", "w", zipfile.ZIP_STORED) as zf:
        for i in range(3):
            zf.writestr(f"big/part{i}.so", blob[i * 12 * MB:(i + 1) * 12 * MB])
        zf.writestr("big/__init__.py", "VALUE = 1\n")
    # A jar with a 40 MB native library in it (ray's ray_dist.jar holds one of 39 MiB).
    with zipfile.ZipFile(ws / "lib/dist.jar", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("native/linux/libcore.so", blob)
    (ws / "lib/mod.cpython.pyc").write_bytes(MAGIC + bytes(12) + os.urandom(20 * MB))
    (ws / "lib/data.json").write_text(json.dumps({"k": ["line\\n" * 1000] * 2000}))
    record = sanitize_and_scan(ws, None, fingerprints())
    assert record["leak_scan"]["clean"] and record["leak_scan"]["undecided"] == []
    shutil.rmtree(ws)


def test_bytes_that_only_look_like_a_zip_end_record_are_no_container() -> None:
    """A binary with `PK\\5\\6` in its last KB by chance (no zip at its start) is an ordinary
    file; a file that starts as a zip and is not one is undecided."""
    binary = b"\x7fELF" + os.urandom(4096) + b"PK\x05\x06" + os.urandom(100)
    ctx = Context()
    assert list(expand(binary, ctx, Budget())) == [] and ctx.undecided == []
    ctx = Context()
    list(expand(b"PK\x03\x04" + os.urandom(4096), ctx, Budget()))
    assert ctx.undecided and "cannot decode" in ctx.undecided[0][1]


def test_the_scan_budget_is_shared_by_every_file() -> None:
    """Each file within its own budget, the scan's runs out: the file that spends it is
    undecided (many small bombs cost no more than one big one)."""
    bomb = gzip_bomb(2 * MB)
    scan_budget = ScanBudget(3 * MB)
    first, second = Context(), Context()
    assert len(list(expand(bomb, first, Budget(scan=scan_budget)))) == 1
    assert list(expand(bomb, second, Budget(scan=scan_budget))) == []
    assert first.undecided == []
    assert second.undecided == [("!gunzip", "decoded size over the scan's budget of 3 MiB")]
