#!/usr/bin/env python3
"""Cost of per-test JaCoCo coverage: the plain console-launcher run of a compiled suite
against the same run with the agent and the per-test listener, N runs each (interleaved),
plus one run of the reader. Reports wall seconds and CPU seconds (user+sys of the child).

usage: bench_coverage.py CLASSES TEST_CLASSES INCLUDES COVERAGE_BUILD_DIR [--runs 3] [--cp EXTRA] [--cwd DIR]
"""
import argparse, json, os, resource, shutil, subprocess, time

J = "/usr/share/java"
LAUNCHER = f"{J}/junit-platform-console-standalone.jar"
TEST_JARS = [f"{J}/{n}.jar" for n in ("junit-jupiter-api", "junit-jupiter-params",
                                      "apiguardian-api", "opentest4j")]
READER_CP = [f"{J}/{n}.jar" for n in ("org.jacoco.core", "asm", "asm-commons", "asm-tree")]


def timed(cmd, cwd=None):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return p.returncode, wall, cpu, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("classes"); ap.add_argument("test_classes"); ap.add_argument("includes")
    ap.add_argument("build"); ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cp", default="")
    ap.add_argument("--cwd", default=None, help="run the tests here (the project root)")
    ap.add_argument("--work", default="/tmp/bench_coverage")
    a = ap.parse_args()
    cp = ":".join([a.test_classes, a.classes] + TEST_JARS + ([a.cp] if a.cp else []))
    agent = os.path.join(a.build, "jacocoagent.jar")
    listener = os.path.join(a.build, "taskforge-coverage.jar")
    out = {"plain": [], "per_test": [], "reader": None}
    for i in range(a.runs):
        for mode in ("plain", "per_test"):
            cov = f"{a.work}/cov{i}"
            shutil.rmtree(cov, ignore_errors=True)
            cmd = ["java"]
            ccp = cp
            if mode == "per_test":
                cmd += [f"-javaagent:{agent}=output=none,jmx=false,includes={a.includes}",
                        f"-Dtaskforge.coverage.dir={cov}"]
                ccp = cp + ":" + listener
            cmd += ["-jar", LAUNCHER, "--class-path", ccp, "--scan-classpath", a.test_classes,
                    "--reports-dir", f"{a.work}/xml-{mode}{i}", "--disable-banner", "--details=none"]
            rc, wall, cpu, err = timed(cmd, a.cwd)
            out[mode].append({"rc": rc, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)})
    rc, wall, cpu, err = timed(["java", "-cp", ":".join([listener] + READER_CP),
                                "taskforge.coverage.CoverageReader", f"{a.work}/cov0", a.classes,
                                "--with-ancestors"])
    out["reader"] = {"rc": rc, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
    for k in ("wall_s", "cpu_s"):
        p = sorted(r[k] for r in out["plain"])[len(out["plain"]) // 2]
        q = sorted(r[k] for r in out["per_test"])[len(out["per_test"]) // 2]
        out[f"median_ratio_{k}"] = round(q / p, 2)
    out["exec_files"] = len(os.listdir(f"{a.work}/cov0"))
    out["load_avg_at_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
