"""The leak scan's fingerprints of deleted JavaScript/TypeScript come from tree-sitter's
tokens (`sanitize/jssource.py`): names and the text of string, template and regular
expression literals, never a comment's words. Each test sets the grammar's reading beside the
line-by-line regular expressions that read JavaScript before (still the reading of a file in
no language the scan knows, so the same text under a `.txt` name shows what they made of
it): the positive controls."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from conftest import make_project

from taskforge.sanitize.fingerprints import Fingerprints, fingerprint_deletion
from taskforge.sanitize.jssource import tokens
from taskforge.sanitize.scan import scan

# A deleted body with each thing a line-by-line reading gets wrong: a `//` inside a template
# string, a `#private` member, a block comment, quotes inside a regular expression.
ORIGINAL = textwrap.dedent("""\
    export class WidgetClient {
      #pendingRequests = new Map();

      constructor(base) {
        this.base = base;
      }

      fetchPage(page, requestKey) {
        const controllerHandle = this.#pendingRequests.get(requestKey) ?? new AbortController();
        /* backoffSchedule: retries wait 100 ms, then twice as long each time */
        const url = `${this.base}//api.example.test/v2/widgets?page=${page}&sort=newest-first`;
        const quotedName = /["'](?<quoted>[^"']+)["']/u.exec(requestKey);
        return fetch(url, controllerHandle).then((response) => response.json() ?? quotedName);
      }
    }
    """)


def _stubbed(original: str) -> str:
    return re.sub(r"(fetchPage\(page, requestKey\) \{\n).*?(\n  \}\n\})",
                  r'\1    throw new Error("not implemented");\2', original, flags=re.S)


def _words(fingerprints: Fingerprints, kind: str) -> set[str]:
    return {f.text for f in fingerprints.texts if f.kind == kind}


def _fingerprints(path: str, original: str = ORIGINAL, task: str | None = None) -> Fingerprints:
    return fingerprint_deletion({path: original},
                                {path: _stubbed(original) if task is None else task})


def test_names_and_literals_come_from_the_grammar() -> None:
    grammar = _fingerprints("src/client.js")
    assert _words(grammar, "ident") == {"controllerHandle", "AbortController", "quotedName",
                                        "response"}
    assert _words(grammar, "literal") == {
        "//api.example.test/v2/widgets?page=", "&sort=newest-first",
        "[\"'](?<quoted>[^\"']+)[\"']"}
    # The line-by-line reading of the same text: the comment's words and the regular
    # expression's group are names, `#` ends the line (nothing after
    # `this.#pendingRequests` is read), so does the `//` in the template string, and the
    # quotes pair across the regular expression.
    lines = _fingerprints("src/client.txt")
    assert {"backoffSchedule", "retries", "quoted"} <= _words(lines, "ident")
    assert "AbortController" not in _words(lines, "ident")
    assert _words(lines, "literal") == {"'](?<quoted>[^"}  # between two unrelated quotes
    # what both read alike: the lines themselves
    assert _words(grammar, "line") == _words(lines, "line")


MINIFIABLE = textwrap.dedent("""\
    export class WidgetClient {
      #pending = new Map();

      fetchPage(page, requestKey) {
        const controllerHandle = this.#pending.get(requestKey) ?? new AbortController();
        const url = `${this.base}//api.example.test/v2/widgets?page=${page}&sort=newest-first`;
        return fetch(url, controllerHandle).then((response) => response.json());
      }
    }
    """)
# what terser makes of it: locals renamed, `#pending` too, one line
MINIFIED = ("class WidgetClient{#p=new Map;fetchPage(e,t){const n=this.#p.get(t)??new "
            "AbortController;const r=`${this.base}//api.example.test/v2/widgets?page=${e}"
            "&sort=newest-first`;return fetch(r,n).then(e=>e.json())}}\n")


def test_a_minified_copy_is_found_by_its_literals(tmp_path: Path) -> None:
    """No line or block of the deleted code is left in a minifier's output, only its
    literals and the globals it calls. The grammar's fingerprints find it; the line-by-line
    ones did not (the same tree: clean)."""
    workspace = make_project(tmp_path, {"src/client.js": _stubbed(MINIFIABLE)})
    grammar = _fingerprints("src/client.js", MINIFIABLE)
    assert scan(grammar, [workspace]) == []  # the control: nothing planted yet
    (workspace / "public").mkdir()
    (workspace / "public" / "client.min.js").write_text(MINIFIED)
    hits = scan(grammar, [workspace])
    assert {(h.path, h.kind, h.fingerprint) for h in hits} == {
        ("public/client.min.js", "literal", "//api.example.test/v2/widgets?page="),
        ("public/client.min.js", "literal", "&sort=newest-first"),
        ("public/client.min.js", "ident", "AbortController")}
    lines = _fingerprints("src/client.txt", MINIFIABLE)
    assert _words(lines, "ident") == {"controllerHandle", "response"}  # both renamed
    assert scan(lines, [workspace]) == []


def test_typescript_and_tsx_have_their_grammars() -> None:
    """Types are names too, and TypeScript and JSX parse with their grammars (a file its
    grammar cannot parse falls back to reading lines)."""
    original = textwrap.dedent("""\
        export function retryDelay<T extends RetryPolicy>(policy: T, attempt: number): number {
          const jitterWindow = policy.base * 2 ** attempt;
          return Math.min(jitterWindow, policy.ceiling) satisfies number;
        }
        """)
    stubbed = original.split("{\n", 1)[0] + '{\n  throw new Error("not implemented");\n}\n'
    assert _words(_fingerprints("src/retry.ts", original, stubbed), "ident") == {
        "jitterWindow", "ceiling"}
    assert tokens("src/retry.ts", original) is not None
    assert tokens("src/retry.js", original) is None  # types are no JavaScript
    view = 'export const Badge = ({ label }) => <span className="badge-label">{label}</span>;\n'
    assert tokens("src/badge.tsx", view) is not None
    assert "badge-label" in _words(_fingerprints("src/badge.jsx", view, ""), "literal")
