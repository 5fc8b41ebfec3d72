#!/usr/bin/env python3
"""Compile a Maven-layout project with javac and run its tests with the JUnit
Platform console launcher, using only Debian's jars in /usr/share/java.

usage: run_layout.py PROJECT_DIR OUT_DIR [--release N] [--extra-jar NAME ...]

Test files that do not compile are set aside (iteratively) and listed with the
first error each gave, so the report can say what was missing.  Results come
from the JUnit XML reports (--reports-dir), never from console text.
"""
import argparse, json, os, re, subprocess, sys, time, shutil
import xml.etree.ElementTree as ET

J = "/usr/share/java"
TEST_JARS = ["junit-jupiter-api", "junit-jupiter-params", "junit-jupiter-engine",
             "junit-platform-commons", "junit-platform-engine", "opentest4j",
             "apiguardian-api", "junit4", "hamcrest", "easymock", "objenesis",
             "mockito-core", "byte-buddy", "byte-buddy-agent", "assertj-core"]
LAUNCHER = f"{J}/junit-platform-console-standalone.jar"
ERR = re.compile(r"^(/[^:]+\.java):(\d+): error: (.*)$")


def sources(root):
    out = []
    for d, _, fs in os.walk(root):
        out += [os.path.join(d, f) for f in fs if f.endswith(".java")]
    return sorted(out)


def javac(files, dest, cp, release):
    os.makedirs(dest, exist_ok=True)
    argfile = dest + ".args"
    with open(argfile, "w") as f:
        f.write("\n".join(files))
    cmd = ["javac", "--release", str(release), "-encoding", "UTF-8", "-nowarn",
           "-proc:none", "-Xmaxerrs", "100000", "-d", dest, "-cp", cp, "@" + argfile]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stderr


def copy_resources(src, dest):
    if os.path.isdir(src):
        shutil.copytree(src, dest, dirs_exist_ok=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("project"); ap.add_argument("out")
    ap.add_argument("--release", default="11")
    ap.add_argument("--extra-jar", action="append", default=[])
    ap.add_argument("--timeout", type=int, default=1200)
    a = ap.parse_args()
    proj, out = os.path.abspath(a.project), os.path.abspath(a.out)
    shutil.rmtree(out, ignore_errors=True); os.makedirs(out)
    deps = ":".join(f"{J}/{n}.jar" for n in a.extra_jar)
    testcp = ":".join(f"{J}/{n}.jar" for n in TEST_JARS)
    res = {"project": proj, "release": a.release}
    t0 = time.time()
    rc, err = javac(sources(f"{proj}/src/main/java"), f"{out}/classes", deps or ".", a.release)
    res["main_compile_rc"] = rc
    if rc:
        res["main_errors"] = err[-3000:]
        print(json.dumps(res, indent=1)); return
    copy_resources(f"{proj}/src/main/resources", f"{out}/classes")
    files = sources(f"{proj}/src/test/java")
    res["test_files"] = len(files)
    dropped = {}
    cp = f"{out}/classes:{testcp}" + (":" + deps if deps else "")
    for _ in range(20):
        shutil.rmtree(f"{out}/test-classes", ignore_errors=True)
        rc, err = javac(files, f"{out}/test-classes", cp, a.release)
        if rc == 0:
            break
        bad = {}
        for line in err.splitlines():
            m = ERR.match(line)
            if m and m.group(1) in files and m.group(1) not in bad:
                bad[m.group(1)] = m.group(3)
        if not bad:
            res["test_errors"] = err[-3000:]; print(json.dumps(res, indent=1)); return
        for f, msg in bad.items():
            dropped[os.path.relpath(f, proj)] = msg
        files = [f for f in files if f not in bad]
    res["dropped_test_files"] = dropped
    res["compile_s"] = round(time.time() - t0, 1)
    copy_resources(f"{proj}/src/test/resources", f"{out}/test-classes")
    reports = f"{out}/junit"
    cmd = ["java", "-jar", LAUNCHER, "--class-path", f"{out}/test-classes:{cp}",
           "--scan-classpath", f"{out}/test-classes",
           "--include-classname", r"^(Test.*|.+[.$]Test.*|.*Tests?|.*TestCase)$",
           "--reports-dir", reports, "--disable-banner", "--details=none"]
    t1 = time.time()
    try:
        p = subprocess.run(cmd, cwd=proj, capture_output=True, text=True, timeout=a.timeout)
        res["launcher_rc"] = p.returncode
    except subprocess.TimeoutExpired:
        res["launcher_rc"] = "timeout"
    res["run_s"] = round(time.time() - t1, 1)
    tot = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    failed = []
    for fn in os.listdir(reports) if os.path.isdir(reports) else []:
        if not fn.endswith(".xml"):
            continue
        root = ET.parse(os.path.join(reports, fn)).getroot()
        for tc in root.iter("testcase"):
            tot["tests"] += 1
            kinds = [c.tag for c in tc if c.tag in ("failure", "error", "skipped")]
            if "skipped" in kinds: tot["skipped"] += 1
            elif "failure" in kinds: tot["failures"] += 1; failed.append(tc.get("classname") + "#" + tc.get("name"))
            elif "error" in kinds: tot["errors"] += 1; failed.append(tc.get("classname") + "#" + tc.get("name"))
    tot["passed"] = tot["tests"] - tot["failures"] - tot["errors"] - tot["skipped"]
    res["results"] = tot
    res["failed_sample"] = failed[:15]
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
