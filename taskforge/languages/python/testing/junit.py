"""Read test outcomes from pytest's JUnit XML, keyed by node id."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from taskforge.model import Outcome

_RANK: dict[Outcome, int] = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def parse_junit(path: Path) -> tuple[dict[str, Outcome], float, dict[str, float]]:
    """Outcome per test id, the seconds pytest reports, and each test's seconds; a missing
    file means no results."""
    if not path.is_file() or path.stat().st_size == 0:
        return {}, 0.0, {}
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return {}, 0.0, {}
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    seconds = sum(float(s.get("time", 0) or 0) for s in suites)
    outcomes: dict[str, Outcome] = {}
    durations: dict[str, float] = {}
    for case in root.iter("testcase"):
        test_id = _node_id(case)
        outcome = _outcome(case)
        durations[test_id] = durations.get(test_id, 0.0) + float(case.get("time", 0) or 0)
        previous = outcomes.get(test_id)
        # A test reported twice (a teardown error after a pass) takes its worst outcome.
        if previous is None or _RANK[outcome] > _RANK[previous]:
            outcomes[test_id] = outcome
    return outcomes, seconds, durations


def collection_errors(path: Path) -> dict[str, str]:
    """Each test file that failed to collect (by the name pytest reports: `tests.test_io`),
    with the last error line it printed (`ModuleNotFoundError: No module named 'numpy'`)."""
    if not path.is_file() or path.stat().st_size == 0:
        return {}
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return {}
    found: dict[str, str] = {}
    for case in root.iter("testcase"):
        error = case.find("error")
        if error is None or any(p.get("name") == "taskforge_nodeid" for p in case.iter("property")):
            continue
        if case.get("classname") == "pytest" and case.get("name") == "internal":
            continue  # pytest's INTERNALERROR (a hook raised), not a file: the run broke
        lines = [ln.strip() for ln in (error.text or "").splitlines() if ln.strip()]
        reported = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
        found[_node_id(case).split("::", 1)[1]] = \
            (reported or lines or [error.get("message", "")])[-1][:200]
    return found


def _node_id(case: ET.Element) -> str:
    for prop in case.iter("property"):
        if prop.get("name") == "taskforge_nodeid":
            return prop.get("value", "")
    # No property: a collection error, which pytest reports against the module.
    return f"<collect>::{case.get('classname', '')}.{case.get('name', '')}".replace("::.", "::")


def _outcome(case: ET.Element) -> Outcome:
    tags = {child.tag for child in case}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "failed"
    if "skipped" in tags:
        return "skipped"
    return "passed"
