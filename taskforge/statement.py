"""Problem statements: what to build, from signatures, docstrings and the failing tests' names.

A strategy's `statement_facts` say what was deleted and how (`kind`, `state`, `items`: the
definitions to write, each with its signature and, when the recipe keeps docstrings, its
documentation). The statement never quotes the deleted body; `quotes_body` checks that for
every task. `detail` makes it vaguer as tasks get harder:

- "full": signatures, documentation and the behaviours the failing tests check;
- "brief": signatures and the test files, no documentation and no list of behaviours;
- "minimal": only the names and the test files: the agent reads the callers and tests.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MAX_BEHAVIOURS = 25


def behaviour_of(test_id: str) -> str:
    """`tests/test_wrap.py::TestFill::test_fill_respects_width[3]` -> `fill respects width`."""
    name = test_id.split("::")[-1]
    name = re.sub(r"\[.*\]$", "", name).removeprefix("test_").removeprefix("test")
    return name.replace("_", " ").strip() or test_id


def _items(facts: dict[str, Any]) -> list[dict[str, Any]]:
    # `stub-function` gives one definition's facts at the top level.
    return facts.get("items") or [{k: facts.get(k) for k in
                                   ("symbol", "path", "kind", "signature", "docstring",
                                    "fence")}]


def _raises(facts: dict[str, Any], plural: bool = False) -> str:
    """What the stub does, in the language's words (`raises NotImplementedError` for Python;
    a language's facts may say otherwise, under `raises`: `throws ...`)."""
    said = facts.get("raises") or "raises `NotImplementedError`"
    return said.replace("raises", "raise").replace("throws", "throw") if plural else said


def _intro(facts: dict[str, Any], items: list[dict[str, Any]]) -> list[str]:
    kind, symbol, path = facts["kind"], facts["symbol"], facts["path"]
    first = items[0]
    if kind == "class":
        return [f"Implement the methods of the class `{symbol}` in `{path}`.", "",
                f"Their bodies are missing (they {_raises(facts, True)}); the class "
                "statement, its attributes and every signature stay as they are."]
    if kind in ("method", "methods") and facts.get("state") == "removed":
        names = ", ".join(f"`{i['symbol'].rsplit('.', 1)[1]}`" for i in items)
        return [f"The class `{facts['class']}` in `{path}` has lost "
                f"{'its method' if len(items) == 1 else 'these methods'}: {names}.", "",
                "Add them back so that the class behaves as documented and tested."]
    if kind == "function" and facts.get("state") in ("removed", "stub"):
        where = "has been removed from" if facts["state"] == "removed" else \
            f"is only a placeholder (it accepts anything and {_raises(facts)}) in"
        return [f"The function `{symbol}` {where} `{path}`; the code that uses it still "
                "expects it.", "", "Write it again."]
    if kind == "cluster":
        helpers = facts.get("helpers", 0)
        return [f"Implement the {first['kind']} `{symbol}` in `{path}`.", "",
                f"Its body is missing (it {_raises(facts)}), and the "
                f"{helpers} private helper{'s' if helpers != 1 else ''} it relied on "
                f"{'were' if helpers != 1 else 'was'} removed too: write whatever helpers "
                "you need."]
    if kind == "branch":
        return [f"In the {first['kind']} `{symbol}` in `{path}`, the case "
                f"`{facts['condition']}` is not handled any more: that branch "
                f"{_raises(facts)}.", "",
                "Implement what it must do; the other cases already work."]
    if kind == "module":
        return [f"The module `{symbol}` (`{path}`) has lost its implementation: its public "
                f"names are placeholders that {_raises(facts, True)}, and its private "
                "helpers are gone.", "", "Implement the module."]
    return [f"Implement the {kind} `{symbol}` in `{path}`.", "",
            f"Its body is missing (it {_raises(facts)})."]


def _api(facts: dict[str, Any], items: list[dict[str, Any]], detail: str) -> list[str]:
    """The signatures (and, in full detail, documentation) of what to write."""
    if detail == "minimal":
        if len(items) == 1 and facts["kind"] != "module":
            return []
        return ["", "To write:", "", *[f"- `{i['symbol']}`" for i in items]]
    lines: list[str] = []
    if facts.get("docstring") and detail == "full" and facts["kind"] == "module":
        lines += ["", "The module's documentation says:", "",
                  *[f"> {ln}".rstrip() for ln in facts["docstring"].splitlines()]]
    single = len(items) == 1
    lines += ["", "Keep this signature:" if single else "With these signatures:"]
    for item in items:
        lines += ["", f"```{item.get('fence') or 'python'}", item["signature"], "```"]
        if item.get("docstring") and detail == "full":
            lead = "Its documentation says:" if single else f"`{item['symbol']}` is documented as:"
            lines += ["", lead, "", *[f"> {ln}".rstrip() for ln in item["docstring"].splitlines()]]
    return lines


def problem_statement(facts: dict[str, Any], fail_to_pass: list[str],
                      detail: str = "full") -> str:
    items = _items(facts)
    if facts["kind"] in ("function", "method") and not facts.get("state"):
        # `stub-function`: the body is missing, the signature is in the code.
        lines = [f"Implement the {facts['kind']} `{facts['symbol']}` in `{facts['path']}`.", "",
                 f"Its body is missing (it {_raises(facts)})."
                 + (" Keep this signature:" if detail != "minimal" else "")]
        api = _api(facts, items, detail)
        lines += api[2:] if api else []
    else:
        lines = _intro(facts, items) + _api(facts, items, detail)
    files = sorted({t.split("::", 1)[0] for t in fail_to_pass})
    where = ", ".join(f"`{f}`" for f in files)
    if detail == "full":
        behaviours = sorted({behaviour_of(t) for t in fail_to_pass})
        lines += ["", f"These behaviours are checked by tests in {where}:", ""]
        lines += [f"- {b}" for b in behaviours[:MAX_BEHAVIOURS]]
        if len(behaviours) > MAX_BEHAVIOURS:
            lines.append(f"- ... and {len(behaviours) - MAX_BEHAVIOURS} more")
    else:
        lines += ["", f"Tests in {where} check it."]
    lines += ["", "The rest of the repository must keep working."]
    return "\n".join(lines) + "\n"


def quotes_body(statement: str, deleted_lines: list[str], min_length: int = 20,
                allowed: Iterable[str] = ()) -> str | None:
    """A line of the deleted code (of useful length) that the statement repeats, if any.
    `allowed` lines (signatures, documentation the recipe shows) may be repeated."""
    shown = {line.strip() for line in allowed}
    for line in deleted_lines:
        text = line.strip()
        if len(text) >= min_length and text not in shown and text in statement:
            return text
    return None
