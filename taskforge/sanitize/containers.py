"""Look inside files: every readable byte string a file holds besides its own bytes.

Each decoder is chosen by magic bytes, never by file name, and yields `(where, bytes)` pairs;
what it yields is decoded again, so a wheel inside a tarball inside a git pack is read. Kinds:
zip (wheel, jar, egg), tar, gzip, bzip2, xz, zlib streams (loose git objects), git packs
and bundles (deltas resolved), Python bytecode (names and constants), SQLite (every text and
blob value), JSON with escapes (notebooks, source maps, mypy caches), HTML/XML (tags
stripped, entities decoded: Sphinx's highlighted sources) and UTF-16 text.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import html
import io
import json
import lzma
import re
import sqlite3
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from struct import error as struct_error
from types import CodeType

from taskforge.sanitize.bytecode import is_pyc, load_pyc

MAX_DEPTH = 6
MAX_DECODED = 512 * 1024 * 1024  # per file on disk, all its decoded members together

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"
PACK_MAGIC = b"PACK"
BUNDLE_MAGIC = (b"# v2 git bundle\n", b"# v3 git bundle\n")
SQLITE_MAGIC = b"SQLite format 3\x00"
_GIT_HEADER = re.compile(rb"^(blob|tree|commit|tag) \d+\x00")
_TAGS = re.compile(r"<[^>]{0,2000}>")


class Budget:
    """How many decoded bytes one file may still produce (a zip bomb stops here)."""

    def __init__(self, limit: int = MAX_DECODED) -> None:
        self.left = limit

    def take(self, n: int) -> bool:
        self.left -= n
        return self.left >= 0


@dataclass
class Context:
    """What decoders need besides bytes: a hook for code objects found in bytecode."""

    on_code: Callable[[str, CodeType], None] | None = None
    code_names: tuple[bytes, ...] = ()  # a .pyc is unmarshalled only if it holds one of these
    containers: int = 0
    notes: list[str] = field(default_factory=list)


def is_zlib(data: bytes) -> bool:
    return (len(data) > 2 and data[0] == 0x78 and not data[1] & 0x20
            and (data[0] * 256 + data[1]) % 31 == 0)


def _zip_like(data: bytes) -> bool:
    if data[:4] in ZIP_MAGIC:
        return True
    # an archive appended to something else (self-extracting, zipapp): end record near the end
    return data.rfind(b"PK\x05\x06", max(0, len(data) - 1024)) != -1


def _first_char(data: bytes) -> int:
    for i in range(min(len(data), 64)):
        if data[i] not in b" \t\r\n\xef\xbb\xbf":
            return data[i]
    return -1


def kind_of(data: bytes) -> str | None:
    """The decoder for `data`, from its first bytes (and a zip's end record)."""
    head = data[:16]
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    if head.startswith(PACK_MAGIC) and head[4:8] in (b"\0\0\0\x02", b"\0\0\0\x03"):
        return "pack"
    if head.startswith(BUNDLE_MAGIC):
        return "bundle"
    if head.startswith(XZ_MAGIC):
        return "xz"
    if head.startswith(BZ2_MAGIC) and data[4:10] == b"1AY&SY":
        return "bz2"
    if is_pyc(data):
        return "pyc"
    if is_zlib(data):
        return "zlib"
    if len(data) >= 512 and data[257:262] == b"ustar":
        return "tar"
    if len(data) > 22 and _zip_like(data):
        return "zip"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf16"
    first = _first_char(data)
    if first in (ord("{"), ord("[")) and b"\\" in data:
        return "json"
    if first == ord("<") and (b"</" in data or b"&" in data):
        return "markup"
    return None


def expand(data: bytes, ctx: Context, budget: Budget, depth: int = 0,
           where: str = "") -> Iterator[tuple[str, bytes]]:
    """Every decoded byte string inside `data` (not `data` itself), recursively, as
    (container path, bytes). Undecodable or truncated content yields what it could."""
    if depth >= MAX_DEPTH or len(data) < 4:
        return
    kind = kind_of(data)
    if kind is None:
        return
    decoder = DECODERS[kind]
    ctx.containers += 1
    try:
        for name, inner in decoder(data, ctx, where):
            if not budget.take(len(inner)):
                ctx.notes.append(f"{where or '.'}: decoded size limit reached")
                return
            path = f"{where}!{name}" if where else f"!{name}"
            yield path, inner
            yield from expand(inner, ctx, budget, depth + 1, path)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError, tarfile.TarError,
            zipfile.BadZipFile, sqlite3.Error, IndexError, KeyError, RuntimeError,
            NotImplementedError, struct_error) as e:
        ctx.notes.append(f"{where or '.'}: {kind}: {type(e).__name__}")


def _zip(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            try:
                yield info.filename, zf.read(info)
            except (zipfile.BadZipFile, NotImplementedError, RuntimeError, zlib.error,
                    EOFError) as e:  # encrypted, unsupported method, corrupt member
                ctx.notes.append(f"{where}!{info.filename}: {type(e).__name__}")


def _tar(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar:
            if member.isfile():
                f = tar.extractfile(member)
                if f is not None:
                    yield member.name, f.read()


def _stream(decompressor: Callable[[], object], data: bytes) -> bytes:
    """Decompress concatenated streams, keeping what decoded before any damage."""
    out: list[bytes] = []
    rest = data
    while rest:
        d = decompressor()
        try:
            out.append(d.decompress(rest))  # type: ignore[attr-defined]
        except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError):
            break
        if not getattr(d, "eof", True):
            break
        rest = d.unused_data  # type: ignore[attr-defined]
        if rest.strip(b"\0") == b"":
            break
    return b"".join(out)


def _gzip(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    try:
        yield "gunzip", gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        yield "gunzip", _stream(lambda: zlib.decompressobj(16 + zlib.MAX_WBITS), data)


def _bz2(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    yield "bunzip2", _stream(bz2.BZ2Decompressor, data)


def _xz(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    yield "unxz", _stream(lzma.LZMADecompressor, data)


def _zlib(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    d = zlib.decompressobj()
    try:
        out = d.decompress(data)
    except zlib.error:
        return
    header = _GIT_HEADER.match(out[:32])
    if header:  # a loose git object: its content, after "blob 123\0"
        yield f"git-object:{header.group(1).decode()}", out[header.end():]
    else:
        yield "inflate", out


def _pyc(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    """This interpreter's bytecode is unmarshalled for the structural check (`on_code`: is a
    code object the original body of a deleted function?). Its names and string constants
    need no decoding for the text search: marshal stores every str as its UTF-8 bytes, so
    the raw .pyc already holds each one verbatim (`bytecode.code_strings` lists them)."""
    if ctx.on_code is None or not any(name in data for name in ctx.code_names):
        return
    code = load_pyc(data)
    if code is not None:  # another Python version's bytecode: its raw bytes were searched
        ctx.on_code(where, code)
    yield from ()


def _sqlite(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    image = bytearray(data)
    if image[18:20] == b"\x02\x02":  # WAL mode: read the main file as a legacy one
        image[18:20] = b"\x01\x01"
    con = sqlite3.connect(":memory:")
    try:
        con.deserialize(bytes(image))
        tables = con.execute("SELECT name, sql FROM sqlite_master").fetchall()
        yield "schema", "\n".join(f"{n}\n{s or ''}" for n, s in tables).encode()
        for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            quoted = '"' + name.replace('"', '""') + '"'
            values: list[bytes] = []
            for row in con.execute(f"SELECT * FROM {quoted}"):
                for value in row:
                    if isinstance(value, str):
                        values.append(value.encode("utf-8", "surrogatepass"))
                    elif isinstance(value, bytes):
                        values.append(value)
            yield f"table:{name}", b"\n".join(values)
    finally:
        con.close()


def _apply_delta(base: bytes, delta: bytes) -> bytes:
    pos = 0

    def varint() -> int:
        nonlocal pos
        result = shift = 0
        while True:
            c = delta[pos]
            pos += 1
            result |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                return result

    varint()  # base size
    size = varint()
    out = bytearray()
    while pos < len(delta):
        op = delta[pos]
        pos += 1
        if op & 0x80:
            offset = length = 0
            for i in range(4):
                if op & (1 << i):
                    offset |= delta[pos] << (8 * i)
                    pos += 1
            for i in range(3):
                if op & (1 << (4 + i)):
                    length |= delta[pos] << (8 * i)
                    pos += 1
            out += base[offset:offset + (length or 0x10000)]
        elif op:
            out += delta[pos:pos + op]
            pos += op
        else:
            raise ValueError("bad delta opcode")
    if len(out) != size:
        raise ValueError("delta size mismatch")
    return bytes(out)


_TYPES = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}


def _inflate_at(view: memoryview, pos: int) -> tuple[bytes, int]:
    """Decompress the zlib stream starting at `pos`; return it and where it ended."""
    d = zlib.decompressobj()
    out: list[bytes] = []
    chunk = 4096
    start = pos
    while not d.eof:
        if pos >= len(view):
            raise ValueError("truncated pack")
        piece = view[pos:pos + chunk]
        out.append(d.decompress(piece))
        pos += len(piece) - len(d.unused_data)
        chunk *= 2
    if pos == start:
        raise ValueError("empty zlib stream")
    return b"".join(out), pos


def pack_objects(data: bytes) -> Iterator[tuple[str, bytes, bytes]]:
    """(object id, type, content) of every object in a git pack, deltas applied."""
    view = memoryview(data)
    count = int.from_bytes(data[8:12], "big")
    pos = 12
    by_offset: dict[int, tuple[bytes, bytes]] = {}
    by_id: dict[bytes, tuple[bytes, bytes]] = {}
    waiting: list[tuple[bytes, bytes]] = []  # REF_DELTAs whose base comes later

    def finish(kind: bytes, content: bytes, offset: int | None) -> tuple[str, bytes, bytes]:
        oid = hashlib.sha1(kind + b" %d\0" % len(content) + content).digest()
        by_id[oid] = (kind, content)
        if offset is not None:
            by_offset[offset] = (kind, content)
        return oid.hex(), kind, content

    for _ in range(count):
        start = pos
        c = data[pos]
        pos += 1
        kind_code = (c >> 4) & 7
        while c & 0x80:
            c = data[pos]
            pos += 1
        if kind_code == 6:  # OFS_DELTA: base at a negative offset
            c = data[pos]
            pos += 1
            back = c & 0x7F
            while c & 0x80:
                c = data[pos]
                pos += 1
                back = ((back + 1) << 7) | (c & 0x7F)
            delta, pos = _inflate_at(view, pos)
            base_kind, base = by_offset[start - back]
            yield finish(base_kind, _apply_delta(base, delta), start)
        elif kind_code == 7:  # REF_DELTA: base by object id
            base_id = bytes(data[pos:pos + 20])
            pos += 20
            delta, pos = _inflate_at(view, pos)
            if base_id in by_id:
                base_kind, base = by_id[base_id]
                yield finish(base_kind, _apply_delta(base, delta), start)
            else:
                waiting.append((base_id, delta))
                yield base_id.hex() + "-delta", b"delta", delta
        elif kind_code in _TYPES:
            content, pos = _inflate_at(view, pos)
            yield finish(_TYPES[kind_code], content, start)
        else:
            raise ValueError(f"bad pack object type {kind_code}")
    for base_id, delta in waiting:
        if base_id in by_id:
            base_kind, base = by_id[base_id]
            yield finish(base_kind, _apply_delta(base, delta), None)


def _pack(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    for oid, kind, content in pack_objects(data):
        yield f"pack-object:{kind.decode()}:{oid[:12]}", content


def _bundle(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    end = data.find(b"\n\n")
    if end != -1 and data[end + 2:end + 6] == PACK_MAGIC:
        yield "header", data[:end]
        yield from _pack(data[end + 2:], ctx, where)


def _utf16(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    yield "utf-16", data.decode("utf-16", "replace").encode("utf-8", "replace")


def _json_strings(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(k)
            _json_strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _json_strings(v, out)


def _json(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    try:
        value = json.loads(data.decode("utf-8-sig"), strict=False)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return
    out: list[str] = []
    _json_strings(value, out)
    yield "json-strings", "\n".join(out).encode("utf-8", "surrogatepass")


def _markup(data: bytes, ctx: Context, where: str) -> Iterator[tuple[str, bytes]]:
    text = data.decode("utf-8", "replace")
    plain = html.unescape(_TAGS.sub("", text))
    if plain != text:
        yield "text", plain.encode("utf-8", "surrogatepass")


DECODERS: dict[str, Callable[[bytes, Context, str], Iterator[tuple[str, bytes]]]] = {
    "zip": _zip, "tar": _tar, "gzip": _gzip, "bz2": _bz2, "xz": _xz, "zlib": _zlib,
    "pyc": _pyc, "sqlite": _sqlite, "pack": _pack, "bundle": _bundle, "utf16": _utf16,
    "json": _json, "markup": _markup,
}
