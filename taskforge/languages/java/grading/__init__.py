"""What a Java grading run does to a solution's copy (the run itself: `run.py`; the
expectation copies: `expectations.py`): a clean copy, the record's tests compiled and run by
the record's environment in the sandbox, and what the solution tried.

- The copy: the solution's files without version control, build outputs and compiled code
  (`target/`, `build/`, `out/`, `bin/`, `.gradle/`, `*.class`, `*.jar`: the run compiles the
  sources itself); test sources and resources and build files put back as the snapshot has
  them, added ones removed (`files.is_protected`).
- Tampering that acts inside the test JVM disqualifies: a JUnit Platform service
  registration (`META-INF/services/org.junit...`: listeners, extensions, engines,
  post-discovery filters) outside the tests, `@ExtendWith`/`@RegisterExtension` or any
  `org.junit` import in main code, the extension auto-detection switch anywhere outside the
  tests. They are removed as well, so the tests run without them.
- Outcomes come from the tests as they ran, signed (support/taskforge/java/ResultChannel.java),
  not from the launcher's XML, which the JVM writes after the tests, where a solution's
  shutdown hook could rewrite it; an XML that says more passed than the tests did is
  reported.
- Canaries (`checks`): in every test class holding the record's tests, planted afresh per
  grading with names made of random words: one test that must pass, one that must fail (an
  assertion) and one that must error (an exception). Any canary reported otherwise than
  planted means the report cannot be trusted.
"""

from __future__ import annotations

import fnmatch
import os
import random
import re
import secrets
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from taskforge.languages.java.files import MAIN_DIR, is_protected, is_test_file
from taskforge.languages.java.testing import class_of, file_of
from taskforge.model import Finding

# Left out of the grading copy: version control; build outputs and tool state outside the
# source directories (a package may be called `build` or `out`); compiled code anywhere unless
# the snapshot has the file (the grader compiles the sources itself, and a class among the
# resources would be copied over the one javac made).
VCS = (".git", ".hg", ".svn")
BUILD_DIRS = ("target", "build", "out", "bin", ".gradle", ".m2", ".idea", ".settings")
COMPILED = ("*.class", "*.jar", "*.jsa")
_JUNIT_IN_MAIN = re.compile(
    r"@\s*(?:org\.junit\.jupiter\.api\.extension\.)?(?:ExtendWith|RegisterExtension)\b"
    r"|\bimport\s+(?:static\s+)?org\.junit\b|\borg\.junit\.(?:platform|jupiter)\.")
AUTODETECT = "junit.jupiter.extensions.autodetection"


@dataclass(frozen=True)
class Canary:
    test_id: str
    expected: str  # passed | failed | error


def tree_files(root: Path) -> set[str]:
    found = set()
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", ".hg", ".svn"):
            continue
        if path.is_file() or path.is_symlink():
            found.add(rel.as_posix())
    return found


def copy_solution(solution: Path, dest: Path, snapshot_files: set[str]) -> list[str]:
    """A real copy without build outputs and compiled code; returns what was left out."""
    dropped: list[str] = []

    def ignore(directory: str, names: list[str]) -> set[str]:
        rel = Path(directory).relative_to(solution)
        in_sources = "src" in rel.parts
        skipped = {n for n in names if n in VCS}
        for name in names:
            path = (rel / name).as_posix()
            if (name in BUILD_DIRS and not in_sources and (Path(directory) / name).is_dir()
                    and not any(f.startswith(path + "/") for f in snapshot_files)) or \
                    (any(fnmatch.fnmatchcase(name, p) for p in COMPILED)
                     and path not in snapshot_files):
                skipped.add(name)
                dropped.append(path)
        return skipped

    shutil.copytree(solution, dest, symlinks=True, ignore=ignore)
    return [f"added {rel} (not used: the grader compiles the sources)" for rel in dropped]


def restore_protected(copy: Path, snapshot: Path, hidden: set[str]) -> list[str]:
    """Put every protected file back as in the snapshot, remove added ones."""
    tampered = []
    original = {f for f in tree_files(snapshot) if is_protected(f)}
    for rel in sorted(f for f in tree_files(copy) if is_protected(f) and f not in original):
        _remove(copy / rel)
        tampered.append(f"added {rel}")
    for rel in sorted(original):
        target = copy / rel
        parts = Path(rel).parts
        for i in range(1, len(parts)):  # a link or file where the snapshot has a directory
            sub = copy.joinpath(*parts[:i])
            if sub.is_symlink() or (sub.exists() and not sub.is_dir()):
                _remove(sub)
        if target.is_symlink() or target.exists():
            if not target.is_symlink() and target.is_file() and \
                    target.read_bytes() == (snapshot / rel).read_bytes():
                continue
            tampered.append(f"edited {rel}")
            _remove(target)
        elif rel not in hidden:
            tampered.append(f"deleted {rel}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(snapshot / rel, target, follow_symlinks=False)
    return tampered


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def runner_tampering(copy: Path) -> list[Finding]:
    """What acts inside the test JVM from outside the tests (removed, and disqualifying)."""
    findings = []
    for rel in sorted(tree_files(copy)):
        if is_test_file(rel):
            continue
        path = copy / rel
        if "META-INF/services/" in rel and Path(rel).name.startswith("org.junit"):
            findings.append(Finding(f"{rel}: registers a JUnit Platform service "
                                    "(listener, extension or engine) outside the tests", True))
            _remove(path)
            continue
        if path.is_symlink() and path.is_dir():
            # what a linked directory holds is not listed here (a services file among it)
            findings.append(Finding(f"{rel}: links a directory into the project "
                                    f"({os.readlink(path)})", True))
            _remove(path)
            continue
        if _TASKFORGE_PACKAGE.match(rel):
            # taskforge's own listener by its name: the grader's record of the outcomes
            findings.append(Finding(f"{rel}: adds to taskforge's own package", True))
            _remove(path)
            continue
        if path.is_symlink() or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if AUTODETECT in text:
            findings.append(Finding(f"{rel}: switches on JUnit extension auto-detection", True))
        if rel.startswith(MAIN_DIR + "/") and rel.endswith(".java") and \
                _JUNIT_IN_MAIN.search(_unicode_unescaped(text)):
            findings.append(Finding(f"{rel}: main code uses JUnit (an extension or the "
                                    "platform's API)", True))
    return findings


_TASKFORGE_PACKAGE = re.compile(r"^src/main/(?:java|resources)/taskforge(?:/|$)")
_UNICODE_ESCAPE = re.compile(r"\\u+([0-9a-fA-F]{4})")


def _unicode_unescaped(source: str) -> str:
    """Java source as javac reads it: `\\u006f` is `o` before anything else
    (`import \\u006frg.junit...` compiles)."""
    return _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), source)


# -- canaries ----------------------------------------------------------------------------------

WORDS = ("amber", "birch", "cobalt", "dune", "ember", "fjord", "glade", "heron", "iris",
         "juniper", "kestrel", "lichen", "marsh", "nimbus", "opal", "pine", "quartz", "reed",
         "sorrel", "tundra", "umber", "vale", "willow", "yarrow", "zephyr")


def _name(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(2)]
    return words[0] + words[1].capitalize() + "".join(rng.choice("abcdefghjkmnpqrstuvwxyz")
                                                      for _ in range(5))


def _closing_brace(source: str, simple: str) -> int | None:
    """The offset of the `}` closing the top-level class `simple` (tree-sitter)."""
    from taskforge.languages.java.delete.syntax import parse, text_of

    tree = parse(source.encode("utf-8"))
    for node in tree.root_node.named_children:
        if node.type == "class_declaration" and text_of(node.child_by_field_name("name")) == simple:
            body = node.child_by_field_name("body")
            if body is not None:
                return len(source.encode("utf-8")[:body.end_byte - 1].decode("utf-8"))
    return None


def plant_canaries(copy: Path, expected: list[str]) -> list[Canary]:
    """Three canaries in each top-level JUnit 5 test class holding expected tests."""
    rng = random.Random(secrets.randbits(64))
    canaries: list[Canary] = []
    classes = sorted({class_of(t).split("$", 1)[0] for t in expected})
    for cls in classes:
        rel = file_of(cls + "::x")
        path = copy / rel
        if path.is_symlink() or not path.is_file():
            continue
        source = path.read_text(encoding="utf-8")
        if "org.junit.jupiter" not in source:
            continue  # JUnit 4 (vintage) classes get none
        at = _closing_brace(source, cls.rsplit(".", 1)[-1])
        if at is None:
            continue
        names = [_name(rng) for _ in range(3)]
        methods = (
            f"\n    @org.junit.jupiter.api.Test\n    void {names[0]}() {{\n"
            f"        org.junit.jupiter.api.Assertions.assertEquals({rng.randint(2, 99)}, "
            f"{rng.randint(2, 99)} * 0 + {{v}});\n    }}\n"
            f"\n    @org.junit.jupiter.api.Test\n    void {names[1]}() {{\n"
            f"        org.junit.jupiter.api.Assertions.assertEquals({rng.randint(2, 50)}, "
            f"{rng.randint(51, 99)});\n    }}\n"
            f"\n    @org.junit.jupiter.api.Test\n    void {names[2]}() {{\n"
            f"        throw new IllegalStateException(\"{names[2]}\");\n    }}\n")
        expected_value = re.search(r"assertEquals\((\d+),", methods)
        assert expected_value is not None
        methods = methods.replace("{v}", expected_value.group(1), 1)
        path.write_text(source[:at] + methods + source[at:], encoding="utf-8")
        canaries += [Canary(f"{cls}::{names[0]}()", "passed"),
                     Canary(f"{cls}::{names[1]}()", "failed"),
                     Canary(f"{cls}::{names[2]}()", "error")]
    return canaries


def canary_findings(canaries: list[Canary], outcomes: Mapping[str, str]) -> list[Finding]:
    findings = []
    for canary in canaries:
        got = outcomes.get(canary.test_id, "missing")
        if got != canary.expected:
            findings.append(Finding(f"canary {canary.test_id} expected {canary.expected}, "
                                    f"reported {got}", True))
    return findings
