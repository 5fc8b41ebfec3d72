#!/usr/bin/env python3
"""Brute-force check of a Maven-layout sample: every method whose body has 3+ lines
(lines strictly between its braces) must make at least one test fail when its body is
replaced by `throw new UnsupportedOperationException("not implemented");`, and, for a
method returning a value, by `return null;` / `return 0;` / `return false;`.

usage: mutants.py PROJECT_DIR WORK_DIR [--release 11] [--coverage PER_TEST.jsonl]
needs: tree-sitter and tree-sitter-java (PyPI), javac and Debian's junit5 jars.

Each mutant: only the mutated file is recompiled (against the original classes) into an
overlay directory put first on the class path; the precompiled tests then run in a fresh
JVM; a mutant is killed when the JUnit XML report has a failure or error.

With --coverage (the CoverageReader's output for the original code, taken with
--with-ancestors), a mutant runs only the test classes one of whose tests covered a line of
the method's body; a mutant none of them kills (or that no test covers) is run again against
the whole suite before it is reported as surviving.
"""
import re
import argparse, json, os, shutil, subprocess, sys, time
import xml.etree.ElementTree as ET
import tree_sitter_java
from tree_sitter import Language, Parser

J = "/usr/share/java"
TEST_CP = [f"{J}/{n}.jar" for n in ("junit-jupiter-api", "junit-jupiter-params",
                                     "apiguardian-api", "opentest4j")]
LAUNCHER = f"{J}/junit-platform-console-standalone.jar"
PARSER = Parser(Language(tree_sitter_java.language()))
THROW = '{ throw new UnsupportedOperationException("not implemented"); }'


def methods(src: bytes):
    """Yield (name, start_row, body_node, return_type_text) for each method with a block body."""
    stack = [PARSER.parse(src).root_node]
    while stack:
        n = stack.pop()
        stack.extend(n.children)
        if n.type != "method_declaration":
            continue
        body = n.child_by_field_name("body")
        if body is None:
            continue
        rtype = n.child_by_field_name("type")
        yield (n.child_by_field_name("name").text.decode(), n.start_point[0] + 1, body,
               rtype.text.decode() if rtype is not None else "void")


def default_return(rtype):
    if rtype == "void":
        return None
    if rtype == "boolean":
        return "{ return false; }"
    if rtype in ("int", "long", "short", "byte", "char", "float", "double"):
        return "{ return 0; }"
    return "{ return null; }"


def javac(files, dest, cp, release):
    os.makedirs(dest, exist_ok=True)
    p = subprocess.run(["javac", "--release", release, "-nowarn", "-d", dest, "-cp", cp] + files,
                       capture_output=True, text=True)
    return p.returncode, p.stderr


JVM_FLAGS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def run_tests(cp, test_classes, reports, classes=None):
    shutil.rmtree(reports, ignore_errors=True)
    select = (["--select-class=" + c for c in sorted(classes)] if classes
              else ["--scan-classpath", test_classes])
    subprocess.run(["java"] + JVM_FLAGS + ["-jar", LAUNCHER, "--class-path", cp] + select +
                   ["--reports-dir", reports, "--disable-banner", "--details=none"],
                   capture_output=True, text=True, timeout=300)
    failed, total = [], 0
    for fn in os.listdir(reports):
        if fn.endswith(".xml"):
            for tc in ET.parse(os.path.join(reports, fn)).getroot().iter("testcase"):
                total += 1
                if any(c.tag in ("failure", "error") for c in tc):
                    failed.append(f"{tc.get('classname')}#{tc.get('name')}")
    return total, failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("project"); ap.add_argument("work")
    ap.add_argument("--release", default="11")
    ap.add_argument("--min-body-lines", type=int, default=3)
    ap.add_argument("--coverage")
    a = ap.parse_args()
    proj, work = os.path.abspath(a.project), os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    main_src = os.path.join(proj, "src/main/java")
    mains = sorted(os.path.join(d, f) for d, _, fs in os.walk(main_src) for f in fs if f.endswith(".java"))
    tests = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(proj, "src/test/java"))
                   for f in fs if f.endswith(".java"))
    classes, test_classes = f"{work}/classes", f"{work}/test-classes"
    assert javac(mains, classes, ".", a.release)[0] == 0
    assert javac(tests, test_classes, ":".join([classes] + TEST_CP), a.release)[0] == 0
    base_cp = ":".join([test_classes, classes] + TEST_CP)
    total, failed = run_tests(base_cp, test_classes, f"{work}/reports")
    assert total and not failed, (total, failed)
    print(f"baseline: {total} tests pass", flush=True)
    cov = []
    if a.coverage:
        for line in open(a.coverage):
            t = json.loads(line)
            m = re.search(r"\[class:([^\]]+)\]", t["id"])
            cov.append((m.group(1), {f: set(ls) for f, ls in t["lines"].items()}))
    results, t0 = [], time.time()
    for path in mains:
        src = open(path, "rb").read()
        for name, line, body, rtype in methods(src):
            lines = body.end_point[0] - body.start_point[0] - 1
            if lines < a.min_body_lines:
                continue
            for kind, repl in (("throw", THROW), ("default-return", default_return(rtype))):
                if repl is None:
                    continue
                mutated = src[:body.start_byte] + repl.encode() + src[body.end_byte:]
                mdir = f"{work}/mutant"
                shutil.rmtree(mdir, ignore_errors=True)
                msrc = f"{mdir}/src/" + os.path.relpath(path, main_src)
                os.makedirs(os.path.dirname(msrc))
                open(msrc, "wb").write(mutated)
                rc, err = javac([msrc], f"{mdir}/classes", classes, a.release)
                rel = os.path.relpath(path, proj)
                if rc:
                    r = {"file": rel, "method": name, "line": line, "kind": kind, "result": "compile-error",
                         "error": err.splitlines()[0]}
                else:
                    mcp = f"{test_classes}:{mdir}/classes:{classes}:" + ":".join(TEST_CP)
                    src_key = os.path.relpath(path, main_src)
                    body_lines = set(range(body.start_point[0] + 1, body.end_point[0] + 2))
                    chosen = {c for c, files in cov if files.get(src_key, set()) & body_lines}
                    failed, how = [], "full-suite"
                    if chosen:
                        _, failed = run_tests(mcp, test_classes, f"{mdir}/reports", chosen)
                        how = f"{len(chosen)} covering test classes"
                    if not failed:
                        _, failed = run_tests(mcp, test_classes, f"{mdir}/reports")
                        how = "full-suite"
                    r = {"file": rel, "method": name, "line": line, "kind": kind, "ran": how,
                         "result": "killed" if failed else "SURVIVED", "failing_tests": len(failed)}
                results.append(r)
                print(json.dumps(r), flush=True)
    killed = sum(r["result"] == "killed" for r in results)
    print(json.dumps({"mutants": len(results), "killed": killed,
                      "survived": [r for r in results if r["result"] != "killed"],
                      "methods": len({(r["file"], r["method"], r["line"]) for r in results}),
                      "seconds": round(time.time() - t0)}))


if __name__ == "__main__":
    main()
