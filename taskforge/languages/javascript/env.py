"""One npm environment per snapshot and lockfile, content-addressed in the cache like the
Python ones (`cache/envs/<key>/`).

The machine's Node.js runs everything (`/usr/bin/node`, found on PATH); dependencies come from
the npm registry npm is configured with (never named here). With the project's lockfile the
install is `npm ci` (exactly the locked tree); without one, `npm install` resolves a tree and
the lockfile it writes is kept in the environment and in the task record, so another machine
installs the same tree with `npm ci`. Only package.json and the lockfile are copied into the
build directory: the project's own `.npmrc` (registries, tokens) is not used.

`--ignore-scripts`: install scripts are untrusted code that would run outside the sandbox
with the network; test dependencies rarely need them (native add-ons and binary downloads are
what they do). A recipe's `install` commands run after the install, in the build directory,
for a project that needs one.

The environment directory (`Environment.venv`, a name from Python: here it is not a virtual
environment) holds `node_modules`, `package.json` and the lockfile. Test runs see it through a
`node_modules` directory of links in the workspace, one per package (ES modules resolve
packages from the importing file's directory upward, so NODE_PATH would not do; a directory
and not one link, because tools write under node_modules: testing.linked_modules), and run
offline.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import time
from dataclasses import asdict
from pathlib import Path

from taskforge.cache import build_once, digest, read_json, write_json
from taskforge.errors import UserError
from taskforge.languages.javascript.package import LOCKFILES, read_package
from taskforge.model import Environment, EnvSpec, Snapshot

FORMAT = 2  # bump when the layout of a built environment changes (2: nested self-copies gone)
LOCKFILE = "package-lock.json"


@functools.cache
def node_binary() -> Path:
    """The machine's node, symlinks resolved (what a sandbox mounts)."""
    found = shutil.which("node")
    if found is None:
        raise UserError("node: not found on PATH (JavaScript projects need Node.js 20 or newer)")
    return Path(found).resolve()


@functools.cache
def node_version() -> str:
    proc = subprocess.run([str(node_binary()), "--version"], capture_output=True, text=True)
    return proc.stdout.strip().removeprefix("v") or "unknown"


def npm_binary() -> str:
    found = shutil.which("npm")
    if found is None:
        raise UserError("npm: not found on PATH (JavaScript projects need npm)")
    return found


def project_lockfile(root: Path) -> str | None:
    """The text of the project's own lockfile, when it has one."""
    for name in LOCKFILES:
        if (root / name).is_file():
            return (root / name).read_text(encoding="utf-8")
    return None


def environment_key(snapshot_id: str, spec: EnvSpec, lockfile: str | None) -> str:
    spec_fields = {k: v for k, v in asdict(spec).items() if k != "decisions"}
    return digest("js-env", FORMAT, snapshot_id, spec_fields,
                  digest(lockfile) if lockfile else None)[:32]


def build_environment(snapshot: Snapshot, spec: EnvSpec, cache: Path,
                      lockfile: str | None = None) -> Environment:
    """The environment for `snapshot` (built once). `lockfile`: the resolved tree to install
    exactly (a record's, on another machine); else the project's own, else resolved here."""
    own = project_lockfile(snapshot.root)
    if lockfile is not None and own is None:
        # A record's lockfile that this machine resolved itself: the environment it was
        # resolved in is the same tree.
        resolved_here = _existing(cache, environment_key(snapshot.id, spec, None), spec)
        if resolved_here is not None and resolved_lockfile(resolved_here) == lockfile:
            return resolved_here
    lockfile = lockfile if lockfile is not None else own
    key = environment_key(snapshot.id, spec, lockfile)
    final = cache / "envs" / key
    final.parent.mkdir(parents=True, exist_ok=True)
    build_once(final, lambda staging: _build(snapshot, spec, cache, staging, lockfile))
    found = _existing(cache, key, spec)
    assert found is not None
    return found


def _existing(cache: Path, key: str, spec: EnvSpec) -> Environment | None:
    final = cache / "envs" / key
    if not (final / "environment.json").is_file():
        return None
    meta = read_json(final / "environment.json")
    return Environment(key=key, spec=spec, venv=final / "env", pythonpath=(),
                       frozen=tuple(meta["frozen"]), build_seconds=meta["build_seconds"],
                       build_notes=tuple(meta["build_notes"]))


def _npm(args: list[str], cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "npm_config_cache": str(cache / "npm"), "npm_config_audit": "false",
           "npm_config_fund": "false", "npm_config_update_notifier": "false",
           "npm_config_progress": "false", "npm_config_loglevel": "error"}
    return subprocess.run([npm_binary(), *args], cwd=cwd, env=env, capture_output=True,
                          text=True)


def _failure(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("npm error") and "A complete log" not in ln]
    return " ".join((errors or lines[-3:] or ["unknown error"])[:6])[:700]


def _build(snapshot: Snapshot, spec: EnvSpec, cache: Path, staging: Path,
           lockfile: str | None) -> None:
    start = time.monotonic()
    env_dir = staging / "env"
    env_dir.mkdir()
    shutil.copy2(snapshot.root / "package.json", env_dir / "package.json")
    package = read_package(snapshot.root)
    notes: list[str] = []
    if lockfile is not None:
        (env_dir / LOCKFILE).write_text(lockfile, encoding="utf-8")
        proc = _npm(["ci", "--ignore-scripts", "--no-audit", "--no-fund"], env_dir, cache)
    else:
        proc = _npm(["install", "--ignore-scripts", "--no-audit", "--no-fund"], env_dir, cache)
    if proc.returncode != 0:
        raise UserError(f"{snapshot.source}: cannot build the environment: {_failure(proc)}")
    for command in spec.install:
        shell = subprocess.run(command, shell=True, cwd=env_dir, capture_output=True, text=True,
                               env={**os.environ, "npm_config_cache": str(cache / "npm")})
        if shell.returncode != 0:
            raise UserError(f"{snapshot.source}: install command failed: {command}: "
                            f"{_failure(shell)}")
    (env_dir / "node_modules").mkdir(exist_ok=True)  # a project without dependencies
    # A dev tool may depend on an older release of the package itself: that copy holds the
    # deleted code. The tests import the workspace's code by its name through `exports`
    # (a package's self-reference), never this copy.
    name = package.get("name")
    if isinstance(name, str) and name:
        # at the top, or nested under the dependency that wanted another release
        copies = [env_dir / "node_modules" / name,
                  *(env_dir / "node_modules").glob(f"**/node_modules/{name}")]
        for copy in sorted({c for c in copies if c.is_dir() and not c.is_symlink()}):
            shutil.rmtree(copy, ignore_errors=True)
            notes.append(f"{copy.relative_to(env_dir).as_posix()} (a release of the package "
                         "itself, which a dependency pulled in) removed: it would hold the "
                         "deleted code")
    resolved = (env_dir / LOCKFILE).read_text(encoding="utf-8") \
        if (env_dir / LOCKFILE).is_file() else "{}"
    write_json(staging / "environment.json", {
        "spec": asdict(spec), "frozen": _frozen(resolved), "node": node_version(),
        "build_seconds": round(time.monotonic() - start, 3), "build_notes": notes,
        "lockfile_from": "project" if project_lockfile(snapshot.root) is not None
        else ("record" if lockfile is not None else "resolved here")})


def _frozen(lockfile: str) -> list[str]:
    """`name@version` of every package the lockfile installs."""
    try:
        packages = json.loads(lockfile).get("packages", {})
    except ValueError:
        return []
    found = set()
    for where, info in packages.items():
        if where.startswith("node_modules/") and isinstance(info, dict) and info.get("version"):
            found.add(f"{where.rsplit('node_modules/', 1)[1]}@{info['version']}")
    return sorted(found)


def resolved_lockfile(env: Environment) -> str | None:
    """The lockfile the environment was installed from (None: none was written)."""
    path = env.venv / LOCKFILE
    return path.read_text(encoding="utf-8") if path.is_file() else None


def recorded_lockfile(env: Environment) -> str | None:
    """What a task record keeps to rebuild the same tree: the lockfile npm resolved, unless it
    is the project's own (the snapshot has that one)."""
    meta = read_json(env.venv.parent / "environment.json")
    return None if meta.get("lockfile_from") == "project" else resolved_lockfile(env)
