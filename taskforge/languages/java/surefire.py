"""What a pom's Surefire configuration asks of a test run, as console-launcher arguments: the
test classes it includes and excludes, and the JVM module flags its `argLine` passes.

Projects exclude slow or abstract classes on purpose (commons-codec's `*PerformanceTest`
runs for minutes; commons-collections4's abstract JUnit 3 bases fail when run alone), and
libraries that reflect into `java.base` open it (commons-lang3's Java 9+ profile passes
`--add-opens java.base/java.lang=ALL-UNNAMED`). Without them the baseline is slower, or
has failures Maven's build never sees.

Only these are read. Includes and excludes from the top-level build's Surefire plugin (its
configuration and its executions'; a profile's are for other JDKs or purposes); module
flags from every `argLine` in the pom (profiles too: the ones for Java 9+ are the ones that
carry them, and opening a module is harmless where it is not needed). A Surefire `%regex[`
pattern is not translated: the launcher's defaults stay.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

SUREFIRE = "maven-surefire-plugin"
# Tokens in the environment's recorded `test_command` (joined with spaces: none inside).
INCLUDE = "--include-classname="
EXCLUDE = "--exclude-classname="
JVM = "--jvm="
_MODULE_FLAG = re.compile(r"--add-(opens|exports|reads)[ =]([\w.$/-]+=[\w.,$-]+)")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(element: ET.Element, name: str) -> list[ET.Element]:
    return [c for c in element if _local(c.tag) == name]


def _path(element: ET.Element, *names: str) -> list[ET.Element]:
    found = [element]
    for name in names:
        found = [c for e in found for c in _children(e, name)]
    return found


def class_regex(pattern: str, *, nested: bool = False) -> str | None:
    """An Ant-style Surefire pattern (`**/*PerformanceTest.java`, `**/Abstract*`) as a regular
    expression over fully qualified class names; None for a `%regex[` pattern. `nested`: the
    classes nested in a match match too (an excluded class's `@Nested` ones go with it)."""
    text = pattern.strip().replace("\\", "/")
    if not text or text.startswith("%"):
        return None
    text = re.sub(r"\.(java|class)$", "", text)
    out = []
    for token in re.findall(r"\*\*/|\*\*|\*|\?|/|[^*?/]+", text):
        out.append({"**/": r"(?:.*\.)?", "**": ".*", "*": r"[^.]*", "?": r"[^.]",
                    "/": r"\."}.get(token) or re.escape(token))
    return "^" + "".join(out) + (r"(?:\$.*)?" if nested else "") + "$"


def _surefire_plugins(root: ET.Element) -> list[ET.Element]:
    plugins = _path(root, "build", "plugins", "plugin")
    plugins += _path(root, "build", "pluginManagement", "plugins", "plugin")
    return [p for p in plugins
            if any((a.text or "").strip() == SUREFIRE for a in _children(p, "artifactId"))]


def surefire_tokens(pom: Path) -> tuple[str, ...]:
    """The `test_command` tokens for `pom`'s Surefire configuration (none when it has none)."""
    try:
        root = ET.parse(pom).getroot()
    except (ET.ParseError, OSError):
        return ()
    includes: list[str] = []
    excludes: list[str] = []
    for plugin in _surefire_plugins(root):
        configs = _children(plugin, "configuration")
        configs += _path(plugin, "executions", "execution", "configuration")
        for config in configs:
            includes += [(e.text or "") for e in _path(config, "includes", "include")]
            excludes += [(e.text or "") for e in _path(config, "excludes", "exclude")]
    tokens: list[str] = []
    included = [class_regex(p) for p in includes]
    if included and None not in included:  # a `%regex[` include: keep the defaults
        tokens += [INCLUDE + r for r in dict.fromkeys(included) if r]
    tokens += [EXCLUDE + r for r in dict.fromkeys(class_regex(p, nested=True)
                                                   for p in excludes) if r]
    flags = []
    for element in root.iter():
        if _local(element.tag) == "argLine" and element.text:
            flags += [f"--add-{kind}={value}"
                      for kind, value in _MODULE_FLAG.findall(element.text)]
    tokens += [JVM + f for f in dict.fromkeys(flags)]
    return tuple(tokens)


def launcher_filters(test_command: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The include and exclude class-name patterns a recorded `test_command` carries."""
    return ([t.removeprefix(INCLUDE) for t in test_command if t.startswith(INCLUDE)],
            [t.removeprefix(EXCLUDE) for t in test_command if t.startswith(EXCLUDE)])


def jvm_flags(test_command: tuple[str, ...]) -> list[str]:
    return [t.removeprefix(JVM) for t in test_command if t.startswith(JVM)]
