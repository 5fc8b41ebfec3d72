#!/usr/bin/env python3
"""The same brute-force check as mutants.py, in one warm JVM (mutant-runner/MutantRunner.java):
every method with a 3+ line body, stubbed with a throw and (non-void) with a default return,
must make a test fail. Mutants run the covering test classes first (--coverage, from the
CoverageReader) and, when none fails, the whole suite. A mutant that hangs past the timeout
or kills the JVM (OutOfMemoryError under -Xmx512m) counts as detected, noted as such.

usage: mutants_fast.py PROJECT_DIR WORK_DIR [--coverage PER_TEST.jsonl] [--release 11]
"""
import argparse, json, os, re, shutil, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutants import methods, default_return, javac, run_tests, THROW, TEST_CP, J

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER_CP = [f"{J}/{n}.jar" for n in ("junit-platform-launcher", "junit-platform-engine",
             "junit-platform-commons", "junit-jupiter-engine", "junit-jupiter-api",
             "junit-jupiter-params", "opentest4j", "apiguardian-api")]


def run_manifest(rows, work, classes, test_classes, release, timeout):
    """rows: list of (id, dir, file, classes-or-*). Returns {id: (status, failures)}."""
    man = f"{work}/manifest-{time.time_ns()}.tsv"
    with open(man, "w") as f:
        f.write("".join("\t".join(r) + "\n" for r in rows))
    runner = f"{work}/runner"
    if not os.path.exists(f"{runner}/MutantRunner.class"):
        assert javac([f"{HERE}/mutant-runner/MutantRunner.java"], runner, ":".join(RUNNER_CP), "11")[0] == 0
    done, first = {}, 0
    while first < len(rows):
        p = subprocess.run(["java", "-Xmx512m", "-XX:+UseSerialGC", "-cp", ":".join([runner] + RUNNER_CP),
                            "MutantRunner", man, classes, test_classes, release, str(first), str(timeout)],
                           capture_output=True, text=True)
        for line in p.stdout.splitlines():
            parts = line.split()
            if parts and parts[0] == "RESULT":
                done[parts[1]] = (parts[2], int(parts[3]))
            elif parts and parts[0] == "TIMEOUT":
                done[parts[1]] = ("killed-by-timeout", 0)
        ids = [r[0] for r in rows]
        nxt = next((i for i, r in enumerate(rows) if r[0] not in done), len(rows))
        if nxt < len(rows) and p.returncode != 0 and nxt == first and rows[nxt][0] not in done:
            done[rows[nxt][0]] = ("killed-jvm-died", 0)   # e.g. OutOfMemoryError ended the launcher
            nxt += 1
        first = nxt
    return done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("project"); ap.add_argument("work")
    ap.add_argument("--release", default="11")
    ap.add_argument("--coverage")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--min-body-lines", type=int, default=3)
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
    total, failed = run_tests(":".join([test_classes, classes] + TEST_CP), test_classes, f"{work}/reports")
    assert total and not failed, (total, failed)
    cov = []
    if a.coverage:
        for line in open(a.coverage):
            t = json.loads(line)
            cov.append((re.search(r"\[class:([^\]]+)\]", t["id"]).group(1),
                        {f: set(ls) for f, ls in t["lines"].items()}))
    meta, rows = {}, []
    for path in mains:
        src = open(path, "rb").read()
        for name, line, body, rtype in methods(src):
            if body.end_point[0] - body.start_point[0] - 1 < a.min_body_lines:
                continue
            body_lines = set(range(body.start_point[0] + 1, body.end_point[0] + 2))
            key = os.path.relpath(path, main_src)
            chosen = sorted({c for c, files in cov if files.get(key, set()) & body_lines})
            for kind, repl in (("throw", THROW), ("default-return", default_return(rtype))):
                if repl is None:
                    continue
                mid = str(len(meta))
                mdir = f"{work}/m{mid}"
                msrc = f"{mdir}/src/{key}"
                os.makedirs(os.path.dirname(msrc))
                with open(msrc, "wb") as f:
                    f.write(src[:body.start_byte] + repl.encode() + src[body.end_byte:])
                meta[mid] = {"file": os.path.relpath(path, proj), "method": name, "line": line,
                             "kind": kind, "covering_test_classes": len(chosen)}
                rows.append((mid, mdir, msrc, ",".join(chosen) if chosen else "*"))
    t0 = time.time()
    first = run_manifest(rows, work, classes, test_classes, a.release, a.timeout)
    again = [r[:3] + ("*",) for r in rows if first.get(r[0], ("?",))[0] == "survived" and r[3] != "*"]
    second = run_manifest(again, work, classes, test_classes, a.release, a.timeout) if again else {}
    results = []
    for mid, m in meta.items():
        st, nf = second.get(mid, first.get(mid, ("missing", 0)))
        m.update(result=st, failing_tests=nf, ran="full suite" if mid in second or rows[int(mid)][3] == "*"
                 else "covering classes")
        results.append(m)
        print(json.dumps(m), flush=True)
    ok = {"killed", "killed-by-timeout", "killed-jvm-died"}
    print(json.dumps({"baseline_tests": total, "methods": len({(m["file"], m["line"]) for m in results}),
                      "mutants": len(results), "killed": sum(m["result"] in ok for m in results),
                      "not_killed": [m for m in results if m["result"] not in ok],
                      "seconds": round(time.time() - t0)}))


if __name__ == "__main__":
    main()
