"""Problem statements: what to build, from the signature, docstring and failing tests' names.

A statement never quotes the deleted body; `quotes_body` checks that for every task.
"""

from __future__ import annotations

import re
from typing import Any

_KIND_WORD = {"function": "function", "method": "method"}


def behaviour_of(test_id: str) -> str:
    """`tests/test_wrap.py::TestFill::test_fill_respects_width[3]` -> `fill respects width`."""
    name = test_id.split("::")[-1]
    name = re.sub(r"\[.*\]$", "", name).removeprefix("test_").removeprefix("test")
    return name.replace("_", " ").strip() or test_id


def problem_statement(facts: dict[str, Any], fail_to_pass: list[str]) -> str:
    kind = _KIND_WORD.get(facts["kind"], facts["kind"])
    lines = [
        f"Implement the {kind} `{facts['symbol']}` in `{facts['path']}`.",
        "",
        "Its body is missing (it raises `NotImplementedError`). Keep this signature:",
        "",
        "```python",
        facts["signature"],
        "```",
    ]
    if facts.get("docstring"):
        lines += ["", "Its documentation says:", "", *[f"> {ln}".rstrip()
                                                       for ln in facts["docstring"].splitlines()]]
    behaviours = sorted({behaviour_of(t) for t in fail_to_pass})
    files = sorted({t.split("::", 1)[0] for t in fail_to_pass})
    lines += ["", f"These behaviours are checked by tests in {', '.join(f'`{f}`' for f in files)}:",
              ""]
    lines += [f"- {b}" for b in behaviours[:25]]
    if len(behaviours) > 25:
        lines.append(f"- ... and {len(behaviours) - 25} more")
    lines += ["", "The rest of the repository must keep working."]
    return "\n".join(lines) + "\n"


def quotes_body(statement: str, deleted_lines: list[str], min_length: int = 20) -> str | None:
    """A line of the deleted body (of useful length) that the statement repeats, if any."""
    for line in deleted_lines:
        text = line.strip()
        if len(text) >= min_length and text in statement:
            return text
    return None
