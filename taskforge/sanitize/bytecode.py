"""Python bytecode as the leak scanner reads it: the strings a code object holds, and a
signature of each code object that tells the original body of a function from its stub."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import marshal
from collections.abc import Iterator
from types import CodeType

MAGIC = importlib.util.MAGIC_NUMBER  # only this interpreter's bytecode can be unmarshalled
HEADER = 16  # magic, flags, then mtime+size or a source hash


def is_pyc(data: bytes) -> bool:
    """Any CPython version's .pyc: a 2-byte version number then b'\\r\\n'."""
    return len(data) >= HEADER and data[2:4] == b"\r\n" and 3000 <= int.from_bytes(
        data[:2], "little") < 4000


def load_pyc(data: bytes) -> CodeType | None:
    """The module code object of a .pyc written by this interpreter's version, else None."""
    if data[:4] != MAGIC:
        return None
    try:
        code = marshal.loads(memoryview(data)[HEADER:])
    except (ValueError, EOFError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def walk_code(code: CodeType) -> Iterator[CodeType]:
    """`code` and every code object nested in its constants."""
    stack = [code]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(k for k in current.co_consts if isinstance(k, CodeType))


def _const_strings(value: object, out: list[bytes]) -> None:
    if isinstance(value, str):
        out.append(value.encode("utf-8", "surrogatepass"))
    elif isinstance(value, bytes):
        out.append(value)
    elif isinstance(value, tuple | frozenset):
        for item in value:
            _const_strings(item, out)


def code_strings(code: CodeType) -> bytes:
    """Names, variable names and string constants of every code object, one per line: what
    a reader of the bytecode learns about the source without its line structure."""
    out: list[bytes] = []
    for co in walk_code(code):
        out += [n.encode("utf-8", "surrogatepass") for n in (
            co.co_name, co.co_qualname, *co.co_names, *co.co_varnames, *co.co_freevars,
            *co.co_cellvars)]
        for k in co.co_consts:
            if not isinstance(k, CodeType):
                _const_strings(k, out)
    return b"\n".join(out)


def _normal(value: object) -> object:
    """A deterministic stand-in for a constant (sets in sorted order, code by its name)."""
    if isinstance(value, CodeType):
        return ("code", value.co_qualname)
    if isinstance(value, tuple):
        return tuple(_normal(v) for v in value)
    if isinstance(value, frozenset):
        return ("frozenset", tuple(sorted(repr(_normal(v)) for v in value)))
    return (type(value).__name__, repr(value))


def code_signature(co: CodeType) -> str:
    """What one code object does, apart from line numbers and file name: its instructions,
    names and constants (nested code objects by qualified name only)."""
    payload = repr((co.co_qualname, co.co_argcount, co.co_posonlyargcount, co.co_kwonlyargcount,
                    co.co_flags, co.co_code, _normal(co.co_consts), co.co_names,
                    co.co_varnames, co.co_freevars, co.co_cellvars))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@functools.lru_cache(maxsize=16)  # the same original module serves many candidates
def signatures(source: str) -> frozenset[tuple[str, str]]:
    """(qualname, signature) of every code object compiled from `source`; empty if it does
    not compile."""
    try:
        module = compile(source, "<fingerprint>", "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset((co.co_qualname, code_signature(co)) for co in walk_code(module))
