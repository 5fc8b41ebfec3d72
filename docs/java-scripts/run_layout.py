#!/usr/bin/env python3
"""Compile a Maven-layout project with javac and run its tests with the JUnit
Platform console launcher, using only Debian's jars in /usr/share/java.

usage: run_layout.py PROJECT_DIR OUT_DIR [--release N] [--extra-jar NAME ...] [--from-pom]
                     [--jvm-arg ARG ...]

With --from-pom, the dependencies pom.xml declares (all scopes but provided/system's
absence, and the compile/runtime dependencies of those, transitively, from Debian's poms)
are resolved in Debian's Maven repository (/usr/share/maven-repo/GROUP/ARTIFACT/VERSION):
the declared version when Debian has it, else Debian's "debian" alias. What cannot be
resolved is listed under "unresolved".

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
REPO = "/usr/share/maven-repo"
NS = "{http://maven.apache.org/POM/4.0.0}"


def _deps(pom_path, scopes):
    """(group, artifact, version, scope) declared in a pom, ${...} left as is."""
    try:
        root = ET.parse(pom_path).getroot()
    except (ET.ParseError, OSError):
        return []
    ns = NS if root.tag.startswith(NS) else ""
    props = {}
    pe = root.find(f"{ns}properties")
    if pe is not None:
        for c in pe:
            props[c.tag.replace(ns, "")] = (c.text or "").strip()
    out = []
    deps = root.find(f"{ns}dependencies")
    for d in (deps if deps is not None else []):
        get = lambda t: ((d.findtext(f"{ns}{t}") or "").strip())
        scope = get("scope") or "compile"
        if scope not in scopes or get("optional") == "true" and scopes != ALL_SCOPES:
            continue
        ver = get("version")
        ver = re.sub(r"\$\{([^}]+)\}", lambda m: props.get(m.group(1), m.group(0)), ver)
        out.append((get("groupId"), get("artifactId"), ver, scope))
    return out


ALL_SCOPES = ("compile", "runtime", "test", "provided")


def resolve_pom(pom_path):
    """Jars for the declared dependencies and their transitive compile/runtime ones."""
    jars, unresolved, seen = [], [], set()
    todo = [(g, a, v, s, 0) for g, a, v, s in _deps(pom_path, ALL_SCOPES)]
    while todo:
        g, a, v, scope, depth = todo.pop(0)
        if (g, a) in seen or not g or not a:
            continue
        seen.add((g, a))
        base = os.path.join(REPO, g.replace(".", "/"), a)
        chosen = None
        for cand in ([v] if v and "$" not in v else []) + ["debian"] + (sorted(os.listdir(base)) if os.path.isdir(base) else []):
            jar = os.path.join(base, cand, f"{a}-{cand}.jar")
            if os.path.exists(jar):
                chosen = (cand, jar)
                break
        if chosen is None:
            unresolved.append(f"{g}:{a}:{v or '?'} ({scope})")
            continue
        jars.append(os.path.realpath(chosen[1]))
        pom = chosen[1][:-4] + ".pom"
        if depth < 6:
            todo += [(g2, a2, v2, scope, depth + 1) for g2, a2, v2, _ in _deps(pom, ("compile", "runtime"))]
    return jars, unresolved


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
    ap.add_argument("--from-pom", action="store_true")
    ap.add_argument("--jvm-arg", action="append", default=[])
    ap.add_argument("--system-classpath", action="store_true",
                    help="put classes and jars on the JVM class path (as Surefire does) instead of "
                         "the console launcher's --class-path loader; tests that use "
                         "ClassLoader.getSystemClassLoader() need it")
    a = ap.parse_args()
    proj, out = os.path.abspath(a.project), os.path.abspath(a.out)
    shutil.rmtree(out, ignore_errors=True); os.makedirs(out)
    extra = [f"{J}/{n}.jar" for n in a.extra_jar]
    res = {"project": proj, "release": a.release}
    if a.from_pom:
        pom_jars, unresolved = resolve_pom(os.path.join(proj, "pom.xml"))
        extra += pom_jars
        res["resolved_from_pom"] = [os.path.basename(j) for j in pom_jars]
        res["unresolved"] = unresolved
    deps = ":".join(dict.fromkeys(extra))
    testcp = ":".join(f"{J}/{n}.jar" for n in TEST_JARS)
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
    if a.system_classpath:
        cmd = ["java"] + a.jvm_arg + ["-cp", f"{LAUNCHER}:{out}/test-classes:{cp}",
                                      "org.junit.platform.console.ConsoleLauncher"]
    else:
        cmd = ["java"] + a.jvm_arg + ["-jar", LAUNCHER, "--class-path", f"{out}/test-classes:{cp}"]
    cmd += ["--scan-classpath", f"{out}/test-classes",
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
