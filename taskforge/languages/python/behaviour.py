"""What a set of Python files does when run, as a key: two trees whose changed files compile
to the same code behave alike, so one test run scores both.

The trivial solutions `pass` and `return None` in place of a stub that is a function's whole
body compile to the same instructions (the function returns None either way), and a run of
one is a run of the other; in place of a deleted branch they do not (`return None` leaves the
function, `pass` goes on), and their keys differ. Compared: every code object's instructions,
constants, names, flags and line numbers, nested functions and classes included; not the
column positions, which only a traceback's carets show. Compiled by this interpreter, which
runs none of the code; a file it cannot compile (newer syntax, say) gives no key."""

from __future__ import annotations

import types
from collections.abc import Collection
from pathlib import Path
from typing import Any

from taskforge.languages.base import files_key


def code_key(workspace: Path, paths: Collection[str]) -> str | None:
    """A digest of what `paths` (relative POSIX paths in `workspace`) do: their compiled code
    for `.py` files, their bytes for any other; None when a `.py` file does not compile."""
    return files_key(workspace, paths, _compiled)


def _compiled(path: str, data: bytes) -> bytes | None:
    if not path.endswith(".py"):
        return data
    try:
        code = compile(data, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return repr(_shape(code)).encode()


def _shape(code: types.CodeType) -> tuple[Any, ...]:
    """Everything of `code` that decides what it does, positions' columns aside."""
    consts = tuple(_shape(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                   for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars,
            code.co_cellvars, code.co_argcount, code.co_posonlyargcount,
            code.co_kwonlyargcount, code.co_flags, code.co_stacksize, code.co_name,
            getattr(code, "co_qualname", code.co_name), code.co_firstlineno,
            getattr(code, "co_exceptiontable", b""), tuple(code.co_lines()))
