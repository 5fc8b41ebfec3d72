"""The naive grader: the positive control of every attack in the tamper suite.

Plain pytest in (a copy of) the solution's workspace, results read from its JUnit XML, reward
1.0 when every FAIL_TO_PASS and PASS_TO_PASS id is there and passed: what a grader that
believes the test process does. An attack that does not win against it proves nothing.
"""

from __future__ import annotations

import html
import re
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


def naive_js_reward(task: taskforge.Task, workspace: Path, scratch: Path) -> float:
    """The naive grader for a JavaScript task: the project's own test script (`npm test`,
    which reads the workspace's package.json and .npmrc) with node's JUnit reporter added,
    the environment's node_modules linked in, every id's `suite > test` present and passed
    (Node 20's JUnit XML names no file)."""
    copy = scratch / "naive-js-workspace"
    shutil.copytree(workspace, copy, symlinks=True)
    env = task.environment()
    (copy / "node_modules").symlink_to(env.venv / "node_modules")
    junit = scratch / "naive-junit.xml"
    home = scratch / "naive-js-home"
    home.mkdir()
    subprocess.run(["npm", "test", "--", "--test-reporter=junit",
                    f"--test-reporter-destination={junit}"], cwd=copy, capture_output=True,
                   timeout=300, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home),
                                     "npm_config_update_notifier": "false"})
    if not junit.is_file():
        return 0.0
    passed: set[str] = set()

    def walk(node: ET.Element, suites: list[str]) -> None:
        for child in node:
            if child.tag == "testsuite":
                walk(child, [*suites, html.unescape(child.get("name", ""))])
            elif child.tag == "testcase" and not {c.tag for c in child} & {
                    "failure", "error", "skipped"}:
                # Node 20's JUnit reporter escapes names twice (`&amp;quot;`)
                passed.add(html.unescape(" > ".join([*suites, child.get("name", "")])))

    walk(ET.parse(junit).getroot(), [])
    ids = sorted(set(task.record["FAIL_TO_PASS"]) | set(task.record["PASS_TO_PASS"]))
    return 1.0 if all(re.sub(r" \[\d+\]$", "", t.split("::", 1)[1]) in passed
                      for t in ids) else 0.0


def _naive_exit_code_reward(task: taskforge.Task, workspace: Path, scratch: Path, runner: str,
                            command: list[str]) -> float:
    """A naive grader that believes the runner's exit code: `command` (the runner's, from the
    workspace) in a copy of it, the environment's node_modules linked in, reward 1.0 when it
    exits 0."""
    copy = scratch / f"naive-{runner}-workspace"
    shutil.copytree(workspace, copy, symlinks=True)
    (copy / "node_modules").symlink_to(task.environment().venv / "node_modules")
    home = scratch / f"naive-{runner}-home"
    home.mkdir()
    proc = subprocess.run(command, cwd=copy, capture_output=True, timeout=300,
                          env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home)})
    return 1.0 if proc.returncode == 0 else 0.0


def _record_files(task: taskforge.Task) -> list[str]:
    return sorted({t.split("::", 1)[0] for t in
                   set(task.record["FAIL_TO_PASS"]) | set(task.record["PASS_TO_PASS"])})


def naive_tape_reward(task: taskforge.Task, workspace: Path, scratch: Path) -> float:
    """The naive grader for a tape task: the project's tape on the record's test files (as its
    test script runs it), reward 1.0 when tape exits 0 (tape's exit code says whether every
    assertion passed)."""
    args = list(task.environment().spec.test_command[1:]) or ["test/**/*.js"]
    return _naive_exit_code_reward(task, workspace, scratch, "tape",
                                   ["node", "node_modules/.bin/tape", *args])


def naive_mocha_reward(task: taskforge.Task, workspace: Path, scratch: Path) -> float:
    """The naive grader for a mocha task: the project's mocha (its own configuration) on the
    record's test files, reward 1.0 when mocha exits 0 (its exit code counts the failed
    tests)."""
    return _naive_exit_code_reward(task, workspace, scratch, "mocha",
                                   ["node", "node_modules/.bin/mocha", *_record_files(task)])


def naive_jest_reward(task: taskforge.Task, workspace: Path, scratch: Path) -> float:
    """The naive grader for a jest task: the project's jest (its own configuration) on the
    record's test files, reward 1.0 when jest exits 0 (every test passed)."""
    return _naive_exit_code_reward(task, workspace, scratch, "jest",
                                   ["node", "node_modules/jest/bin/jest.js", "--ci",
                                    *_record_files(task)])


def naive_java_reward(task: taskforge.Task, workspace: Path, scratch: Path) -> float:
    """The naive grader for a Java task: javac of the workspace's sources with the
    environment's class path, resources copied beside the classes, the console launcher
    scanning every test class with everything on the class path, its XML read; every id's
    testcase present and passed."""
    import re

    from taskforge.languages.java.env import LAUNCHER, jdk_home
    from taskforge.languages.java.testing import test_id

    env = task.environment()
    cp = list(env.spec.install)
    classes, tests, reports = scratch / "naive-classes", scratch / "naive-tests", scratch / "naive-xml"
    javac = str(jdk_home() / "bin" / "javac")
    main = [str(p) for p in sorted((workspace / "src/main/java").rglob("*.java"))]
    subprocess.run([javac, "-d", str(classes), "-cp", ":".join(cp), *main], capture_output=True,
                   timeout=300)
    for src, dest in (("src/main/resources", classes), ("src/test/resources", tests)):
        if (workspace / src).is_dir():
            shutil.copytree(workspace / src, dest, dirs_exist_ok=True)
    test_sources = [str(p) for p in sorted((workspace / "src/test/java").rglob("*.java"))]
    subprocess.run([javac, "-d", str(tests), "-cp", ":".join([str(classes), *cp]), *test_sources],
                   capture_output=True, timeout=300)
    subprocess.run([str(jdk_home() / "bin" / "java"), "-cp",
                    ":".join([str(LAUNCHER), str(tests), str(classes), *cp]),
                    "org.junit.platform.console.ConsoleLauncher", "--scan-classpath", str(tests),
                    "--reports-dir", str(reports), "--disable-banner"], cwd=workspace,
                   capture_output=True, timeout=300)
    passed = set()
    for xml in sorted(reports.glob("*.xml")):
        for case in ET.parse(xml).getroot().iter("testcase"):
            found = re.search(r"unique-id: (\S.*)", case.findtext("system-out") or "")
            if found and not {c.tag for c in case} & {"failure", "error", "skipped"}:
                passed.add(test_id(found.group(1).strip()))
    ids = set(task.record["FAIL_TO_PASS"]) | set(task.record["PASS_TO_PASS"])
    return 1.0 if ids and ids <= passed else 0.0


def naive_vitest_reward(task: taskforge.Task, workspace: Path, scratch: Path) -> float:
    """The naive grader for a vitest task: the project's vitest (`vitest run`, its own
    configuration) with vitest's JUnit reporter, the environment's node_modules linked in,
    every id's `file` and `suite > test` present and passed."""
    copy = scratch / "naive-vitest-workspace"
    shutil.copytree(workspace, copy, symlinks=True)
    env = task.environment()
    # a directory of links, as any runner needs: vite writes its temporary files under
    # node_modules, and the environment's own must stay as it is
    (copy / "node_modules").mkdir()
    for entry in (env.venv / "node_modules").iterdir():
        (copy / "node_modules" / entry.name).symlink_to(entry)
    junit = scratch / "naive-vitest-junit.xml"
    home = scratch / "naive-vitest-home"
    home.mkdir()
    subprocess.run(["node", "node_modules/vitest/vitest.mjs", "run", "--reporter=junit",
                    f"--outputFile={junit}"], cwd=copy, capture_output=True, timeout=300,
                   env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "CI": "true"})
    if not junit.is_file():
        return 0.0
    passed = {(case.get("classname"), case.get("name"))
              for case in ET.parse(junit).getroot().iter("testcase")
              if not {child.tag for child in case} & {"failure", "error", "skipped"}}
    ids = sorted(set(task.record["FAIL_TO_PASS"]) | set(task.record["PASS_TO_PASS"]))
    return 1.0 if all(tuple(t.split("::", 1)) in passed for t in ids) else 0.0
