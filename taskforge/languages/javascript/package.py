"""What a project's package.json and configuration files say: its name, its test runner and
the runner's arguments. Detection only reads files; nothing here runs."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskforge.errors import UserError

# Other runners a project may use, recognised so that the error names the one it uses.
KNOWN = ("jest", "tape", "tap", "ava", "jasmine", "karma", "uvu", "lab", "qunit")
CONFIG_FILES = {"vitest": ("vitest.config.ts", "vitest.config.mts", "vitest.config.js",
                           "vitest.config.mjs", "vitest.config.cjs"),
                "jest": ("jest.config.js", "jest.config.ts", "jest.config.mjs", "jest.config.cjs",
                         "jest.config.json"),
                "mocha": (".mocharc", ".mocharc.js", ".mocharc.cjs", ".mocharc.json",
                          ".mocharc.jsonc", ".mocharc.yaml", ".mocharc.yml")}
LOCKFILES = ("package-lock.json", "npm-shrinkwrap.json")


def read_package(root: Path) -> dict[str, Any]:
    """package.json at `root` as a dict; a UserError names a file that is not JSON."""
    path = root / "package.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (ValueError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: not valid JSON ({e})") from None
    return data if isinstance(data, dict) else {}


def declared(package: dict[str, Any]) -> set[str]:
    """Every dependency name package.json declares (any kind)."""
    names: set[str] = set()
    for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        value = package.get(key)
        if isinstance(value, dict):
            names |= set(value)
    return names


@dataclass(frozen=True)
class RunnerSetup:
    """How a project's tests run: the runner, the positional arguments its `test` script
    gives it (files, directories, globs), and why taskforge chose it."""

    runner: str
    args: tuple[str, ...]
    decision: str


def _commands(package: dict[str, Any], name: str = "test", depth: int = 0) -> list[list[str]]:
    """The commands a script runs, as word lists: `&&`, `||` and `;` split it, and a command
    that runs another script (`npm run tests-only`, `npm test`) is that script's commands
    (test scripts often lint, or enforce a coverage gate, around the command that runs the
    tests)."""
    scripts = package.get("scripts")
    script = scripts.get(name) if isinstance(scripts, dict) else None
    if not isinstance(script, str) or depth > 3:
        return []
    commands: list[list[str]] = []
    for part in re.split(r"&&|\|\||;", script):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        # the package manager may come after a wrapper (`nyc npm run test-spec`)
        at = next((i for i, w in enumerate(words) if w in ("npm", "pnpm", "yarn")), None)
        tail = words[at:] if at is not None else []
        if len(tail) >= 3 and tail[1] in ("run", "run-script"):
            commands += _commands(package, tail[2], depth + 1)
        elif len(tail) >= 2 and tail[1] == "test":
            commands += _commands(package, "test", depth + 1) if name != "test" else []
        elif len(tail) == 2 and tail[0] in ("pnpm", "yarn") and tail[1] in scripts:
            commands += _commands(package, tail[1], depth + 1)
        elif words:
            commands.append(words)
    return commands


def _positional(words: list[str]) -> tuple[str, ...]:
    """The arguments after the runner that name tests (no options and their values)."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            # `--reporter spec`, `--require x`: the options mocha (and tape) take with a value
            skip = "=" not in word and word in ("--reporter", "-R", "--require", "-r",
                                                "--timeout", "-t", "--ui", "-u", "--config",
                                                "--grep", "-g", "--import", "--loader",
                                                "--ignore", "--ignore-pattern")
            continue
        out.append(word)
    return tuple(out)


def runner_setup(root: Path) -> RunnerSetup | None:
    """The runner of the project at `root` (None without a package.json): whether taskforge
    runs it is `runners.runner_named`'s answer.

    `scripts.test` decides when it names a runner (`node --test ...`, `mocha ...`,
    `vitest ...`, `jest ...`, `tape ...`); else a runner's configuration file, else a runner
    among the dependencies, else node's built-in runner."""
    package = read_package(root)
    for words in _commands(package):
        for i, word in enumerate(words):
            name = Path(word).name
            if name == "node" and "--test" in words[i + 1:]:
                return RunnerSetup("node-test", _positional(words[i + 1:]),
                                   "scripts.test runs node --test")
            if name in ("mocha", "_mocha", "vitest", *KNOWN):
                rest = [w for w in words[i + 1:] if w not in ("run", "--run")]
                return RunnerSetup("mocha" if "mocha" in name else name, _positional(rest),
                                   f"scripts.test runs {name}")
    for runner, files in CONFIG_FILES.items():
        if any((root / f).is_file() for f in files):
            return RunnerSetup(runner, (), f"{runner} configuration file")
    deps = declared(package)
    for runner in ("vitest", "mocha", *KNOWN):
        if runner in deps:
            return RunnerSetup(runner, (), f"{runner} among the dependencies")
    if (root / "package.json").is_file():
        return RunnerSetup("node-test", (), "no runner declared: node's built-in runner")
    return None
