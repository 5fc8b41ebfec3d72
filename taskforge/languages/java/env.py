"""One Java environment per snapshot and resolved class path, content-addressed in the cache
like the Python ones (`cache/envs/<key>/`).

The machine's JDK (Debian's `default-jdk-headless`, found from `javac` on PATH) compiles and
runs everything. There is no build tool in the loop: Maven Central is not reachable here, and
`mvn -o` against Debian's repository works only for poms that pin exactly Debian's plugin
and library versions (docs/java-research.md). So the way taken is always **javac + the JUnit
Platform console launcher**, and every environment records it and why (`WAY`, `decisions`).

The class path: the dependencies the build file declares (pom.xml, or `build.gradle*`'s
`group:artifact:version` strings), every scope, resolved in Debian's Maven repository
(`/usr/share/maven-repo/GROUP/ARTIFACT/VERSION/ARTIFACT-VERSION.jar`: the declared version
when Debian has it, else Debian's `debian` alias, else another version of the same major
line), with the compile and runtime dependencies of Debian's poms followed transitively. A
declared dependency that does not resolve sets the source aside, named (`UserError`), unless
its scope is `test`: then only the test files that import it are (they do not compile).
JUnit Jupiter is always there (the console launcher runs it). The pom's Surefire includes,
excludes and `--add-opens` flags are recorded in the test command (`surefire.py`). Jars
are recorded by real path, with `group:artifact:version` names.

The environment directory (`Environment.venv`, a name from Python) holds `classpath.json`,
`taskforge-java.jar` (the per-test coverage listener and reader, compiled here with javac from
the package's `support/` sources; never committed as bytecode) and `jacocoagent.jar` (taken
out of Debian's `org.jacoco.agent.jar`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

from taskforge.cache import build_once, digest, read_json, write_json
from taskforge.errors import UserError
from taskforge.languages.java.surefire import surefire_tokens
from taskforge.model import Environment, EnvSpec, Snapshot

FORMAT = 3  # bump when the layout of a built environment changes (3: the result channel)
JAVA_SHARE = Path("/usr/share/java")
MAVEN_REPO = Path("/usr/share/maven-repo")
LAUNCHER = JAVA_SHARE / "junit-platform-console-standalone.jar"
JACOCO_AGENT = JAVA_SHARE / "org.jacoco.agent.jar"
SUPPORT = Path(__file__).parent / "support"
WAY = "javac+console-launcher"
WAY_WHY = ("no build tool: Maven Central is not reachable, and `mvn -o` against Debian's "
           "repository needs exactly Debian's plugin and library versions; javac compiles "
           "src/main/java and src/test/java and the JUnit Platform console launcher runs the "
           "tests, with the build file's dependencies resolved in Debian's Maven repository")
# What every Java test run needs, besides what the project declares.
BASE = ("org.junit.jupiter:junit-jupiter-api", "org.junit.jupiter:junit-jupiter-params",
        "org.junit.jupiter:junit-jupiter-engine", "org.junit.platform:junit-platform-commons",
        "org.junit.platform:junit-platform-engine", "org.opentest4j:opentest4j",
        "org.apiguardian:apiguardian-api")
# Compiling the support jar (listener and reader) needs these; running it needs the agent.
SUPPORT_CP = ("junit-platform-launcher.jar", "junit-platform-engine.jar",
              "junit-platform-commons.jar", "org.jacoco.agent.rt.jar", "org.jacoco.core.jar",
              "apiguardian-api.jar")
READER_CP = ("org.jacoco.core.jar", "asm.jar", "asm-commons.jar", "asm-tree.jar")
DEFAULT_RELEASE = "11"
POM_NS = "{http://maven.apache.org/POM/4.0.0}"
_GRADLE_DEP = re.compile(
    r"""\b(\w+)\s*\(?\s*['"]([\w.\-]+):([\w.\-]+):([\w.\-${}]+)(?::[\w.\-]+)?['"]""")


@functools.cache
def jdk_home() -> Path:
    """The JDK that `javac` on PATH belongs to (symlinks resolved: what a sandbox mounts)."""
    found = shutil.which("javac")
    if found is None:
        raise UserError("javac: not found on PATH (Java projects need a JDK: Debian's "
                        "default-jdk-headless)")
    return Path(found).resolve().parent.parent


@functools.cache
def java_version() -> str:
    proc = subprocess.run([str(jdk_home() / "bin" / "java"), "-version"], capture_output=True,
                          text=True)
    m = re.search(r'version "([^"]+)"', proc.stderr)
    return m.group(1) if m else "unknown"


@functools.cache
def jdk_mounts() -> tuple[Path, ...]:
    """What a sandbox must see for the JDK and Debian's jars: the JDK's home, the
    directories outside /usr its links point into (Debian keeps the JDK's configuration in
    /etc/java-17-openjdk and its CA store in /etc/ssl/certs/java), and /usr/share/java
    (every recorded jar is there)."""
    found = [jdk_home(), JAVA_SHARE]
    for dirpath, dirnames, filenames in os.walk(jdk_home()):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if not path.is_symlink():
                continue
            target = path.resolve()
            if target.exists() and target.parts[1:2] == ("etc",) and len(target.parts) > 2:
                found.append(Path(*target.parts[:3]))  # /etc/java-17-openjdk
    return tuple(dict.fromkeys(found))


def toolchain_missing() -> str | None:
    """Why Java projects cannot run here, or None."""
    if shutil.which("javac") is None:
        return "javac not found (apt-get install default-jdk-headless)"
    for path in (LAUNCHER, JACOCO_AGENT, JAVA_SHARE / "junit-jupiter-api.jar"):
        if not path.exists():
            return f"{path} missing (apt-get install junit5 libjacoco-java)"
    return None


# -- build files -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    group: str
    artifact: str
    version: str
    scope: str

    @property
    def name(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"


def _pom_root(path: Path) -> tuple[ET.Element | None, str]:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return None, ""
    return root, POM_NS if root.tag.startswith(POM_NS) else ""


def _pom_properties(root: ET.Element, ns: str) -> dict[str, str]:
    props = {}
    found = root.find(f"{ns}properties")
    for child in found if found is not None else ():
        props[child.tag.replace(ns, "")] = (child.text or "").strip()
    for key in ("version", "groupId"):
        value = root.findtext(f"{ns}{key}") or root.findtext(f"{ns}parent/{ns}{key}")
        if value:
            props[f"project.{key}"] = value.strip()
    return props


def pom_dependencies(path: Path, scopes: tuple[str, ...] | None = None) -> list[Declared]:
    """The dependencies a pom declares (`${...}` filled from its properties), optional ones
    of a library's pom left out when `scopes` is given."""
    root, ns = _pom_root(path)
    if root is None:
        return []
    props = _pom_properties(root, ns)
    found = []
    deps = root.find(f"{ns}dependencies")
    for dep in deps if deps is not None else ():
        def get(tag: str, dep: ET.Element = dep) -> str:
            text = (dep.findtext(f"{ns}{tag}") or "").strip()
            return re.sub(r"\$\{([^}]+)\}", lambda m: props.get(m.group(1), m.group(0)), text)
        scope = get("scope") or "compile"
        if scopes is not None and (scope not in scopes or get("optional") == "true"):
            continue
        found.append(Declared(get("groupId"), get("artifactId"), get("version"), scope))
    return found


def gradle_dependencies(root: Path) -> list[Declared]:
    found = []
    for name in ("build.gradle", "build.gradle.kts"):
        path = root / name
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [Declared(g, a, v, conf) for conf, g, a, v in _GRADLE_DEP.findall(text)
                      if "platform" not in conf.lower()]
    return found


def compiler_release(root: Path) -> str:
    """The Java level the project compiles at (`maven.compiler.release`, `source`, `target`
    in the pom; `sourceCompatibility`/`languageVersion` in Gradle), at least 8."""
    value = None
    root_el, ns = _pom_root(root / "pom.xml")
    if root_el is not None:
        props = _pom_properties(root_el, ns)
        value = next((props[k] for k in ("maven.compiler.release", "maven.compiler.source",
                                         "maven.compiler.target", "java.version")
                      if props.get(k)), None)
    for name in ("build.gradle", "build.gradle.kts"):
        if value is None and (root / name).is_file():
            m = re.search(r"(?:sourceCompatibility\s*=\s*['\"]?(?:JavaVersion\.VERSION_)?|"
                          r"languageVersion\.set\(JavaLanguageVersion\.of\()\s*([\d._]+)",
                          (root / name).read_text(encoding="utf-8", errors="replace"))
            value = m.group(1) if m else None
    level = (value or DEFAULT_RELEASE).removeprefix("1.").replace("_", ".").split(".")[0]
    if not level.isdigit():
        return DEFAULT_RELEASE
    return str(min(max(int(level), 8), 17))


def declared_dependencies(root: Path) -> list[Declared]:
    if (root / "pom.xml").is_file():
        return pom_dependencies(root / "pom.xml")
    return gradle_dependencies(root)


@dataclass(frozen=True)
class Resolved:
    jars: tuple[str, ...]  # real paths
    names: tuple[str, ...]  # group:artifact:version, in the same order
    unresolved: tuple[str, ...]


def _find(group: str, artifact: str, version: str) -> tuple[str, Path] | None:
    base = MAVEN_REPO / group.replace(".", "/") / artifact
    for candidate in ([version] if version and "$" not in version else []) + ["debian"]:
        jar = base / candidate / f"{artifact}-{candidate}.jar"
        if jar.exists():
            return candidate, jar
    # Some packages alias no `debian` version but a major one (junit4: `4.x`, beside
    # `4.13.2`): another version of the same major line keeps the declared API.
    major = version.split(".", 1)[0] if version and version[0].isdigit() else ""
    others = sorted(p.name for p in base.iterdir()) if major and base.is_dir() else []
    for candidate in others:
        jar = base / candidate / f"{artifact}-{candidate}.jar"
        if candidate.split(".", 1)[0] == major and jar.exists():
            return candidate, jar
    return None


def _real_version(jar: Path, fallback: str) -> str:
    """Debian's `debian` alias names no version: the jar it links to usually does."""
    m = re.search(r"-(\d[\w.\-]*)\.jar$", jar.resolve().name)
    return m.group(1) if m else fallback


def resolve(declared: list[Declared]) -> Resolved:
    """Declared dependencies and their compile/runtime dependencies (Debian's poms), plus
    the JUnit Jupiter base, in Debian's Maven repository. Provided and system scopes are
    resolved too (the tests compile against them). BOMs (`pom` imports) are skipped."""
    jars: dict[str, str] = {}
    unresolved: list[str] = []
    seen: set[tuple[str, str]] = set()
    todo = [(d, 0, True) for d in declared]
    todo += [(Declared(*name.split(":"), "", "test"), 0, False) for name in BASE]
    while todo:
        dep, depth, own = todo.pop(0)
        if not dep.group or not dep.artifact or (dep.group, dep.artifact) in seen:
            continue
        seen.add((dep.group, dep.artifact))
        found = _find(dep.group, dep.artifact, dep.version)
        if found is None:
            if own or depth == 0:
                unresolved.append(f"{dep.name} ({dep.scope})")
            continue
        version, jar = found
        real = os.path.realpath(jar)
        jars.setdefault(real, f"{dep.group}:{dep.artifact}:{_real_version(jar, version)}")
        if depth < 8:
            todo += [(d, depth + 1, False) for d in
                     pom_dependencies(jar.with_suffix(".pom"), ("compile", "runtime"))]
    return Resolved(tuple(jars), tuple(jars.values()), tuple(unresolved))


# -- the environment ---------------------------------------------------------------------------


def environment_key(snapshot_id: str, spec: EnvSpec) -> str:
    fields = {k: v for k, v in asdict(spec).items() if k != "decisions"}
    return digest("java-env", FORMAT, snapshot_id, fields, _support_sources())[:32]


@functools.lru_cache(maxsize=1)
def _support_sources() -> str:
    """The support jar's sources, hashed: an environment holds the jar built from them, so a
    change to them is a new environment, not a stale jar."""
    files = sorted(p for p in SUPPORT.rglob("*") if p.is_file())
    return digest(*[(p.relative_to(SUPPORT).as_posix(), hashlib.sha256(p.read_bytes()).hexdigest())
                    for p in files])


def spec_for(root: Path, source: str) -> EnvSpec:
    """The environment a snapshot needs: the resolved class path (a UserError names what
    does not resolve) and the compiler level, with the way taken and why."""
    missing = toolchain_missing()
    if missing:
        raise UserError(f"{source}: Java toolchain: {missing}")
    declared = declared_dependencies(root)
    resolved = resolve(declared)
    # A test-scope dependency Debian lacks (junit-pioneer, JMH in commons-lang3 and
    # commons-io) costs only the test files that import it: they do not compile and are set
    # aside by name, the others run. Anything else would leave the main code uncompilable.
    tests_only = tuple(u for u in resolved.unresolved if u.endswith(" (test)"))
    needed = [u for u in resolved.unresolved if u not in tests_only]
    if needed:
        raise UserError(f"{source}: dependencies not in Debian's Maven repository "
                        f"({MAVEN_REPO}): {', '.join(needed)}; they need the "
                        "network (Maven Central)")
    release = compiler_release(root)
    build = "pom.xml" if (root / "pom.xml").is_file() else "build.gradle"
    # The pom's Surefire includes, excludes and module flags (recorded, so a grader's run
    # is the baseline's)
    surefire = surefire_tokens(root / "pom.xml") if build == "pom.xml" else ()
    return EnvSpec(python=java_version(), project_install=None,
                   requirements=resolved.names, install=resolved.jars,
                   test_command=(WAY, "--release", release, *surefire),
                   decisions=(f"tests: {WAY} ({WAY_WHY})",
                              f"class path: {len(declared)} dependencies declared in {build}, "
                              f"{len(resolved.jars)} jars with Debian's: "
                              + ", ".join(resolved.names[:8])
                              + (" ..." if len(resolved.names) > 8 else ""),
                              f"javac --release {release}",
                              *([f"test dependencies not in Debian's Maven repository: "
                                 f"{', '.join(tests_only)} (the test files that import them "
                                 "do not compile and are set aside)"] if tests_only else []),
                              *([f"from the pom's Surefire configuration: {' '.join(surefire)}"]
                                if surefire else [])))


def release_of(env: Environment) -> str:
    args = env.spec.test_command
    return args[args.index("--release") + 1] if "--release" in args else DEFAULT_RELEASE


def classpath(env: Environment) -> list[str]:
    return list(env.spec.install)


def support_jar(env: Environment) -> Path:
    return env.venv / "taskforge-java.jar"


def agent_jar(env: Environment) -> Path:
    return env.venv / "jacocoagent.jar"


def reader_classpath(env: Environment) -> str:
    return ":".join([str(support_jar(env)), *(str(JAVA_SHARE / n) for n in READER_CP)])


def build_environment(snapshot: Snapshot, spec: EnvSpec, cache: Path) -> Environment:
    key = environment_key(snapshot.id, spec)
    final = cache / "envs" / key
    final.parent.mkdir(parents=True, exist_ok=True)
    build_once(final, lambda staging: _build(spec, staging))
    meta = read_json(final / "environment.json")
    return Environment(key=key, spec=spec, venv=final / "env", pythonpath=(),
                       frozen=tuple(meta["frozen"]), build_seconds=meta["build_seconds"],
                       build_notes=tuple(meta["build_notes"]))


def _build(spec: EnvSpec, staging: Path) -> None:
    start = time.monotonic()
    env_dir = staging / "env"
    env_dir.mkdir()
    for jar in spec.install:
        if not Path(jar).is_file():
            raise UserError(f"{jar}: recorded in the environment but not on this machine "
                            "(install the Debian package that ships it)")
    build_support(env_dir)
    write_json(env_dir / "classpath.json", {"jars": list(spec.install),
                                            "names": list(spec.requirements),
                                            "way": WAY, "why": WAY_WHY})
    write_json(staging / "environment.json", {
        "frozen": list(spec.requirements), "build_seconds": round(time.monotonic() - start, 3),
        "build_notes": [], "java": java_version(), "way": WAY})


def build_support(dest: Path) -> None:
    """`taskforge-java.jar` (listener and reader, Java 8 bytecode so it never constrains the
    project's level) and `jacocoagent.jar`, into `dest`."""
    classes = dest / "support-classes"
    (classes / "META-INF" / "services").mkdir(parents=True)
    sources = sorted(str(p) for p in (SUPPORT / "taskforge").rglob("*.java"))
    javac = jdk_home() / "bin" / "javac"
    proc = subprocess.run([str(javac), "--release", "8", "-nowarn", "-encoding", "UTF-8",
                           "-d", str(classes), "-cp",
                           ":".join(str(JAVA_SHARE / n) for n in SUPPORT_CP), *sources],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise UserError(f"taskforge's Java support does not compile: {proc.stderr[-800:]}")
    for service in (SUPPORT / "META-INF" / "services").iterdir():
        shutil.copy2(service, classes / "META-INF" / "services" / service.name)
    with zipfile.ZipFile(dest / "taskforge-java.jar", "w", zipfile.ZIP_DEFLATED) as jar:
        for path in sorted(classes.rglob("*")):
            if path.is_file():
                jar.write(path, path.relative_to(classes).as_posix())
    shutil.rmtree(classes)
    with zipfile.ZipFile(JACOCO_AGENT) as outer:
        (dest / "jacocoagent.jar").write_bytes(outer.read("jacocoagent.jar"))
