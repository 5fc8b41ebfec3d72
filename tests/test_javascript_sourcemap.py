"""Source maps back to lines (vitest's per-test coverage): V8's ranges over the code vite
produced become the original file's lines. No node needed."""

from __future__ import annotations

import base64
import json

from taskforge.languages.javascript.sourcemap import LineMap


def inline(code: str, mappings: str) -> str:
    blob = base64.b64encode(json.dumps({"version": 3, "sources": ["a.ts"],
                                        "mappings": mappings}).encode()).decode()
    return f"{code}\n//# sourceMappingURL=data:application/json;base64,{blob}\n"


def test_ranges_map_back_through_the_inline_source_map() -> None:
    # generated line 0 <- source line 0; generated line 1 <- source line 3 (types dropped);
    # generated line 2 <- source line 4, its second segment (column 10) <- source line 6
    code = inline("function f() {\n  return g();\n  x(); /* */ y();\n}", "AAAA;AAGA;AACA,UAEA")
    lines = LineMap(code)
    assert lines.offsets == [0, 15, 29, 39]
    assert lines.lines == [1, 4, 5, 7]
    assert lines.executed([[0, 60, 1]]) == {1, 4, 5, 7}
    # an inner range that did not run hides what it holds
    assert lines.executed([[0, 60, 1], [29, 45, 0]]) == {1, 4}
    assert lines.executed([[0, 60, 0], [14, 29, 2]]) == {4}


def test_code_without_a_source_map_maps_nothing() -> None:
    assert LineMap("function f() {}\n").executed([[0, 15, 1]]) == set()
    assert LineMap("//# sourceMappingURL=data:application/json;base64,!!!").offsets == []


def test_a_file_run_as_it_is_maps_by_its_own_lines() -> None:
    """Node's `require` runs the file itself (jest's loader wraps it in a function): each
    line's first non-blank character, at the text's place in the code, in UTF-16 units."""
    text = "function f() {\n\n  return '\U0001f600';\n}\n  g();\n"
    lines = LineMap.plain(text, text)
    assert (lines.offsets, lines.lines) == ([0, 18, 31, 35], [1, 3, 4, 5])
    assert lines.executed([[0, 40, 1], [14, 33, 0]]) == {1, 5}
    wrapped = LineMap.plain("({'\U0001f600':function(module){" + text + "\n}});", text)
    assert wrapped.offsets == [o + 24 for o in [0, 18, 31, 35]]
    assert wrapped.lines == [1, 3, 4, 5]


def test_a_file_not_whole_or_not_once_in_the_code_maps_nothing() -> None:
    text = "function f() {\n  return 1;\n}\n"
    for code in ("function f() {\n  return 2;\n}\n", text + text, ""):
        assert LineMap.plain(code, text).offsets == [], code
    assert LineMap.plain("x();", "").offsets == []
