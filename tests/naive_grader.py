"""The naive grader: the positive control of every attack in the tamper suite.

Plain pytest in (a copy of) the solution's workspace, results read from its JUnit XML, reward
1.0 when every FAIL_TO_PASS and PASS_TO_PASS id is there and passed: what a grader that
believes the test process does. An attack that does not win against it proves nothing.
"""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import taskforge
from taskforge.languages.python.testing.runner import environment_variables, files_of, test_argv


def junit_key(test_id: str) -> tuple[str, str]:
    """(classname, name) pytest's JUnit XML gives a node id: `tests/test_a.py::C::t[x]` ->
    (`tests.test_a.C`, `t[x]`); a parameter may hold `::` itself."""
    head, bracket, params = test_id.partition("[")
    path, *rest = head.split("::")
    return (".".join([path.removesuffix(".py").replace("/", "."), *rest[:-1]]),
            rest[-1] + bracket + params)


def naive_reward(task: taskforge.Task, workspace: Path, scratch: Path) -> float:
    copy = scratch / "naive-workspace"
    shutil.copytree(workspace, copy, symlinks=True)
    home = scratch / "naive-home"
    home.mkdir()
    junit = scratch / "naive-junit.xml"
    env = task.environment()
    ids = sorted(set(task.record["FAIL_TO_PASS"]) | set(task.record["PASS_TO_PASS"]))
    subprocess.run([*test_argv(env), "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
                    *files_of(ids)], cwd=copy, env=environment_variables(env, copy, home),
                   capture_output=True, timeout=300)
    if not junit.is_file():
        return 0.0
    passed = set()
    for case in ET.parse(junit).getroot().iter("testcase"):
        if not {child.tag for child in case} & {"failure", "error", "skipped"}:
            passed.add((case.get("classname"), case.get("name")))
    return 1.0 if all(junit_key(t) in passed for t in ids) else 0.0
