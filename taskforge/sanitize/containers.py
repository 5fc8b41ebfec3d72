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
import codecs
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
from typing import Any, BinaryIO

from taskforge.sanitize.bytecode import MAGIC, is_pyc, load_pyc
from taskforge.sanitize.classfile import ClassFormatError, ClassInfo, class_text, is_class, parse_class

MAX_DEPTH = 6
# Decoded bytes, each budget checked *while* decompressing (at most one byte past it is ever
# produced): a bomb costs its budget, never its expansion.
MEMBER_BYTES = 64 * 1024 * 1024  # one decoded member held in memory; halves at each nesting
# level, so a chain of nested members never holds more than twice this at once
FILE_BYTES = 512 * 1024 * 1024  # one file on disk, all its decoded members together
SCAN_BYTES = 4 * 1024 * 1024 * 1024  # a whole scan

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"
PACK_MAGIC = b"PACK"
BUNDLE_MAGIC = (b"# v2 git bundle\n", b"# v3 git bundle\n")
SQLITE_MAGIC = b"SQLite format 3\x00"
_GIT_HEADER = re.compile(rb"^(blob|tree|commit|tag) \d+\x00")
_TAGS = re.compile(r"<[^>]{0,2000}>")

# What "could not decode" means, per kind. An archive (its structure names members that a
# tool can still read after an error of ours) that fails is undecided: the file rejects the
# task. A compressed stream that is damaged or cut short is read up to the damage, where every
# decompressor stops too; what follows is searched as raw bytes, like any file. Bytecode of
# another Python version, JSON, markup and UTF-16 are views of bytes already searched raw:
# they never make a file undecided (a .so, a wheel's text, a big .pyc stay ordinary files).
ARCHIVES = frozenset({"zip", "tar", "pack", "bundle", "sqlite"})
STREAMS = frozenset({"gzip", "bz2", "xz", "zlib"})
CONTAINERS = ARCHIVES | STREAMS


class OverBudget(Exception):
    """A decoder was about to produce more decoded bytes than it may."""


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB"


class ScanBudget:
    """Decoded bytes the rest of a scan may produce, shared by every file."""

    def __init__(self, limit: int = SCAN_BYTES) -> None:
        self.limit = limit
        self.left = limit


class Budget:
    """How many decoded bytes one file may still produce (with the scan's share), and how big
    one member may be at depth 0 (a zip bomb stops here)."""

    def __init__(self, limit: int = FILE_BYTES, *, member: int = MEMBER_BYTES,
                 scan: ScanBudget | None = None) -> None:
        self.limit = limit
        self.left = limit
        self.member = member
        self.scan = scan or ScanBudget()

    def member_limit(self, depth: int) -> int:
        return max(self.member >> depth, 64 * 1024)

    def spent(self) -> bool:
        return self.left < 0 or self.scan.left < 0

    def take(self, n: int) -> str | None:
        """Spend `n` bytes; the reason when a budget is exceeded, else None."""
        self.left -= n
        self.scan.left -= n
        if self.scan.left < 0:
            return f"decoded size over the scan's budget of {_mib(self.scan.limit)}"
        if self.left < 0:
            return f"decoded size over the file's budget of {_mib(self.limit)}"
        return None


@dataclass
class Context:
    """What decoders need besides bytes: a hook for code objects found in bytecode; what
    they report: notes, and what they could not decide (container path, reason)."""

    on_code: Callable[[str, CodeType], None] | None = None
    on_class: Callable[[str, ClassInfo], None] | None = None  # every class file decoded
    code_names: tuple[bytes, ...] = ()  # a .pyc is unmarshalled only if it holds one of these
    containers: int = 0
    notes: list[str] = field(default_factory=list)
    undecided: list[tuple[str, str]] = field(default_factory=list)


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
    if is_class(data):
        return "class"
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


Source = bytes | BinaryIO  # bytes in memory, or a seekable file too big to read whole


def expand(data: Source, ctx: Context, budget: Budget, depth: int = 0,
           where: str = "", kind: str | None = None) -> Iterator[tuple[str, bytes]]:
    """Every decoded byte string inside `data` (not `data` itself), recursively, as
    (container path, bytes). Damaged streams yield what they could; whatever could not be
    decoded, or would exceed a budget, is added to `ctx.undecided` (see ARCHIVES)."""
    if isinstance(data, bytes):
        if len(data) < 4:
            return
        kind = kind_of(data)
    if kind is None:
        return
    if depth >= MAX_DEPTH:
        if kind in CONTAINERS:
            ctx.undecided.append((where, f"{kind} nested deeper than {MAX_DEPTH} containers"))
        return
    decoder = DECODERS[kind]
    ctx.containers += 1
    try:
        for name, inner in decoder(data, ctx, where, budget.member_limit(depth)):
            path = f"{where}!{name}" if where else f"!{name}"
            reason = budget.take(len(inner))
            if reason:
                ctx.undecided.append((path, reason))
                return
            yield path, inner
            yield from expand(inner, ctx, budget, depth + 1, path)
            if budget.spent():  # a member's own members spent the rest: stop every level
                return
    except OverBudget as e:
        ctx.undecided.append((where, f"{kind}: {e}"))
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError, tarfile.TarError,
            zipfile.BadZipFile, sqlite3.Error, IndexError, KeyError, RuntimeError,
            NotImplementedError, struct_error, MemoryError) as e:
        if kind in ARCHIVES:
            ctx.undecided.append((where, f"{kind}: cannot decode: {type(e).__name__}: {e}"))
        else:
            ctx.notes.append(f"{where or '.'}: {kind}: {type(e).__name__}")


def _over(what: str, limit: int) -> OverBudget:
    return OverBudget(f"{what}: decoded size over the {_mib(limit)} member budget")


def _zip(data: Source, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data)
    except zipfile.BadZipFile:
        if _head(data, 4) not in ZIP_MAGIC:
            return  # four bytes near the end that only look like an end record (a .so)
        raise
    with zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            if info.file_size > limit:  # what the archive declares; checked again reading
                raise _over(info.filename, limit)
            try:
                with zf.open(info) as member:
                    content = member.read(limit + 1)
            except (zipfile.BadZipFile, NotImplementedError, RuntimeError, zlib.error,
                    EOFError, lzma.LZMAError, OSError) as e:
                # encrypted, an unsupported method, a corrupt member: a tool may read it
                raise zipfile.BadZipFile(f"{info.filename}: {e}") from e
            if len(content) > limit:
                raise _over(info.filename, limit)
            yield info.filename, content


def _head(data: Source, n: int) -> bytes:
    if isinstance(data, bytes):
        return data[:n]
    data.seek(0)
    return data.read(n)


def _tar(data: Source, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    fileobj = io.BytesIO(data) if isinstance(data, bytes) else data
    with tarfile.open(fileobj=fileobj, mode="r:") as tar:
        for member in tar:
            if member.isfile():
                if member.size > limit:  # a sparse member declares any size it likes
                    raise _over(member.name, limit)
                f = tar.extractfile(member)
                if f is not None:
                    yield member.name, f.read(limit + 1)


# Decoders produce (and text views decode) a piece at a time: memory stays near the input.
_PIECE = 1024 * 1024


def _decompress(new: Callable[[], Any], data: bytes, limit: int, what: str) -> bytes:
    """Decompress concatenated streams, never producing more than `limit` + 1 bytes (then
    OverBudget); a damaged or cut stream keeps what decoded before the damage."""
    out = bytearray()
    rest = data
    while rest:
        d = new()
        feed = rest
        try:
            while True:
                # A piece at a time: asked for the whole budget at once, a decompressor
                # returns it as one bytes object beside `out`, twice the budget at the peak.
                piece = d.decompress(feed, min(_PIECE, limit + 1 - len(out)))
                out += piece
                if len(out) > limit:
                    raise _over(what, limit)
                if d.eof:
                    break
                if hasattr(d, "unconsumed_tail"):
                    feed = d.unconsumed_tail  # zlib keeps the input it had no room for
                    if not feed and not piece:
                        return bytes(out)  # cut short: no input left and nothing came out
                else:
                    if d.needs_input:
                        return bytes(out)  # cut short
                    feed = b""
        except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError):
            break
        rest = d.unused_data
        if rest.strip(b"\0") == b"":
            break
    return bytes(out)


def _gzip(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    yield "gunzip", _decompress(lambda: zlib.decompressobj(16 + zlib.MAX_WBITS), data, limit,
                                "gunzip")


def _bz2(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    yield "bunzip2", _decompress(bz2.BZ2Decompressor, data, limit, "bunzip2")


def _xz(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    yield "unxz", _decompress(lzma.LZMADecompressor, data, limit, "unxz")


def _zlib(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    out = _decompress(zlib.decompressobj, data, limit, "inflate")
    if not out:
        return  # two bytes that only look like a zlib header ("x^2 ...")
    header = _GIT_HEADER.match(out[:32])
    if header:  # a loose git object: its content, after "blob 123\0"
        yield f"git-object:{header.group(1).decode()}", out[header.end():]
    else:
        yield "inflate", out


def _pyc(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    """This interpreter's bytecode is unmarshalled for the structural check (`on_code`: is a
    code object the original body of a deleted function?). Its names and string constants
    need no decoding for the text search: marshal stores every str as its UTF-8 bytes, so
    the raw .pyc already holds each one verbatim (`bytecode.code_strings` lists them)."""
    if ctx.on_code is None or not any(name in data for name in ctx.code_names):
        return
    code = load_pyc(data)
    if code is not None:  # another Python version's bytecode: its raw bytes were searched
        ctx.on_code(where, code)
    elif data[:4] == MAGIC:  # this version's, and holds a deleted name: the check must run
        ctx.undecided.append((where, "pyc: this Python's bytecode does not unmarshal"))
    yield from ()


def _class(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    """A Java class file: its constant pool, methods, line and local variable tables as text
    (modified UTF-8 decoded; `classfile.class_text`) for the text search, and the parsed
    class for the structural check (`on_class`: is a method the deleted one, compiled?)."""
    try:
        info = parse_class(data)
    except ClassFormatError as e:
        ctx.notes.append(f"{where or '.'}: class: {e}")
        return
    if ctx.on_class is not None:
        ctx.on_class(where, info)
    yield "decoded", class_text(info)


def _sqlite(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    image = bytearray(data)
    if image[18:20] == b"\x02\x02":  # WAL mode: read the main file as a legacy one
        image[18:20] = b"\x01\x01"
    con = sqlite3.connect(":memory:")
    try:
        con.deserialize(image)
        del image
        tables = con.execute("SELECT name, sql FROM sqlite_master").fetchall()
        yield "schema", "\n".join(f"{n}\n{s or ''}" for n, s in tables).encode()
        for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            quoted = '"' + name.replace('"', '""') + '"'
            values = bytearray()
            for row in con.execute(f"SELECT * FROM {quoted}"):
                for value in row:
                    if isinstance(value, str):
                        values += value.encode("utf-8", "surrogatepass") + b"\n"
                    elif isinstance(value, bytes):
                        values += value + b"\n"
                if len(values) > limit:
                    raise _over(f"table:{name}", limit)
            yield f"table:{name}", bytes(values)
    finally:
        con.close()


def _apply_delta(base: bytes, delta: bytes, limit: int) -> bytes:
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
    if size > limit:  # a few bytes of delta can copy the same base range over and over
        raise _over("delta", limit)
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
        if len(out) > size:
            raise ValueError("delta size mismatch")
    if len(out) != size:
        raise ValueError("delta size mismatch")
    return bytes(out)


_TYPES = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}


def _inflate_at(view: memoryview, pos: int, limit: int) -> tuple[bytes, int]:
    """Decompress the zlib stream starting at `pos` (at most `limit` bytes of it); return it
    and where it ended."""
    d = zlib.decompressobj()
    out = bytearray()
    chunk = 4096
    start = pos
    while not d.eof:
        if pos >= len(view):
            raise ValueError("truncated pack")
        piece = d.unconsumed_tail or view[pos:pos + chunk]
        fresh = not d.unconsumed_tail
        out += d.decompress(piece, min(_PIECE, limit + 1 - len(out)))
        if len(out) > limit:
            raise _over("pack object", limit)
        if fresh:
            pos += len(piece)
            chunk = min(chunk * 2, 1 << 20)
        if d.eof:
            pos -= len(d.unused_data)
    if pos == start:
        raise ValueError("empty zlib stream")
    return bytes(out), pos


def pack_objects(data: bytes, limit: int = MEMBER_BYTES) -> Iterator[tuple[str, bytes, bytes]]:
    """(object id, type, content) of every object in a git pack, deltas applied. Every object
    is kept as a possible delta base: together they may hold at most `limit` bytes."""
    view = memoryview(data)
    count = int.from_bytes(data[8:12], "big")
    pos = 12
    by_offset: dict[int, tuple[bytes, bytes]] = {}
    by_id: dict[bytes, tuple[bytes, bytes]] = {}
    waiting: list[tuple[bytes, bytes]] = []  # REF_DELTAs whose base comes later
    held = 0

    def finish(kind: bytes, content: bytes, offset: int | None) -> tuple[str, bytes, bytes]:
        nonlocal held
        held += len(content)
        if held > limit:
            raise OverBudget(f"pack objects held as delta bases: over {_mib(limit)}")
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
            delta, pos = _inflate_at(view, pos, limit)
            base_kind, base = by_offset[start - back]
            yield finish(base_kind, _apply_delta(base, delta, limit), start)
        elif kind_code == 7:  # REF_DELTA: base by object id
            base_id = bytes(data[pos:pos + 20])
            pos += 20
            delta, pos = _inflate_at(view, pos, limit)
            if base_id in by_id:
                base_kind, base = by_id[base_id]
                yield finish(base_kind, _apply_delta(base, delta, limit), start)
            else:
                waiting.append((base_id, delta))
                yield base_id.hex() + "-delta", b"delta", delta
        elif kind_code in _TYPES:
            content, pos = _inflate_at(view, pos, limit)
            yield finish(_TYPES[kind_code], content, start)
        else:
            raise ValueError(f"bad pack object type {kind_code}")
    for base_id, delta in waiting:
        if base_id in by_id:
            base_kind, base = by_id[base_id]
            yield finish(base_kind, _apply_delta(base, delta, limit), None)


def _pack(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    for oid, kind, content in pack_objects(data, limit):
        yield f"pack-object:{kind.decode()}:{oid[:12]}", content


def _bundle(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    end = data.find(b"\n\n")
    if end != -1 and data[end + 2:end + 6] == PACK_MAGIC:
        yield "header", data[:end]
        yield from _pack(data[end + 2:], ctx, where, limit)




def _utf16(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    decoder = codecs.getincrementaldecoder("utf-16")("replace")
    out = bytearray()
    for i in range(0, len(data), _PIECE):
        out += decoder.decode(data[i:i + _PIECE], i + _PIECE >= len(data)).encode(
            "utf-8", "replace")
    yield "utf-16", bytes(out)


# A JSON string literal; each is decoded on its own, so no document is ever held as objects
# (a few MB of `[1,[1,[1,...` parse into hundreds of MB).
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _json(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    out = bytearray()
    for match in _JSON_STRING.finditer(data):
        literal = match.group()
        if b"\\" not in literal:
            out += literal[1:-1] + b"\n"
            continue
        try:
            text = json.loads(literal.decode("utf-8", "surrogateescape"), strict=False)
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        out += text.encode("utf-8", "surrogateescape") + b"\n"
    if out:
        yield "json-strings", bytes(out)


def _markup(data: bytes, ctx: Context, where: str, limit: int) -> Iterator[tuple[str, bytes]]:
    out = bytearray()
    changed = False
    start = 0
    while start < len(data):
        end = data.find(b">", start + _PIECE)  # pieces end after a tag: none is cut
        end = len(data) if end == -1 else end + 1
        text = data[start:end].decode("utf-8", "replace")
        plain = html.unescape(_TAGS.sub("", text))
        changed |= plain != text
        out += plain.encode("utf-8", "surrogatepass")
        start = end
    if changed:
        yield "text", bytes(out)


DECODERS: dict[str, Callable[[Any, Context, str, int], Iterator[tuple[str, bytes]]]] = {
    "zip": _zip, "tar": _tar, "gzip": _gzip, "bz2": _bz2, "xz": _xz, "zlib": _zlib,
    "pyc": _pyc, "class": _class, "sqlite": _sqlite, "pack": _pack, "bundle": _bundle, "utf16": _utf16,
    "json": _json, "markup": _markup,
}
