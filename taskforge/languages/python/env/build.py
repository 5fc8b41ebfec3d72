"""Build one virtual environment per snapshot with uv, and cache it by what it is built from.

The project is installed editable, from a throwaway copy, so its metadata and entry points
exist; then the path hooks that point at that copy are removed and the tests import the
project from whichever workspace they run in (PYTHONPATH = the import roots found here).
So one environment serves every task of a snapshot, and no copy of the original code lives
in the environment.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from uv import find_uv_bin

from taskforge.cache import build_once, digest, read_json, write_json
from taskforge.errors import UserError
from taskforge.languages.python.env.outputs import collect_outputs
from taskforge.languages.python.env.pythons import interpreter_for
from taskforge.languages.python.env.scm import UNKNOWN_VERSION, scm_version
from taskforge.languages.python.testing.bytecode import compile_tree
from taskforge.model import Environment, EnvSpec, Snapshot
from taskforge.relocate import rewrite_paths

# bump when the layout of a built environment changes (2: compiled bytecode, 3: build outputs)
FORMAT = 3


def environment_key(snapshot_id: str, spec: EnvSpec) -> str:
    # No scm version leaves the key as it was before the field existed.
    spec_fields = {k: v for k, v in asdict(spec).items() if k != "decisions"
                   and not (k == "scm_version" and v is None)}
    return digest("env", FORMAT, snapshot_id, spec_fields)[:32]


def _uv(*args: str, cwd: Path | None = None, cache: Path, extra_env: dict | None = None
        ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "UV_CACHE_DIR": str(cache / "uv"), "UV_PYTHON_DOWNLOADS": "never",
           "UV_NO_PROGRESS": "1", **(extra_env or {})}
    return subprocess.run([find_uv_bin(), *args], cwd=cwd, env=env, capture_output=True,
                          text=True)


# The exception a build backend died of, in the output uv relays ("LookupError: ...").
_EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception|Exit): \S")


# uv's error lines and the lines of its explanation ("cause: Because pytest==7.0.0 depends
# on attrs>=19.2.0 ... And because you require attrs==19.1.0, ...").
_ERROR_PREFIXES = ("error", "\u00d7", "\u2570", "caused by", "cause:", "because", "and because")


def _failure(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln.strip() for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.lower().startswith(_ERROR_PREFIXES)]
    # "No solution found" or "Failed to build `pkg`" alone does not say what conflicts or
    # what is missing: the explanation and the backend's exception do.
    raised = [ln for ln in lines if _EXCEPTION_LINE.match(ln)]
    return " ".join((errors or lines[-2:] or ["unknown error"])[:6] + raised[-1:])[:700]


ZIP_EARLIEST = 315_619_200  # 1980-01-02 UTC: a ZIP date holds no earlier (a day's margin for time zones)


def _dated_for_zip(root: Path) -> None:
    """Date files older than ZIP's earliest date at it. A snapshot unpacked from a task's
    archive (another machine's cache) has every file dated 1970, and a build backend that
    puts project files into the editable wheel as they are dated (flit_core's license
    files) failed there: "ZIP does not support timestamps before 1980" (boltons 26.2.0,
    marshmallow 4.4.0)."""
    for directory, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            if not os.path.islink(path) and os.stat(path).st_mtime < ZIP_EARLIEST:
                os.utime(path, (ZIP_EARLIEST, ZIP_EARLIEST))


def build_environment(snapshot: Snapshot, spec: EnvSpec, cache: Path) -> Environment:
    key = environment_key(snapshot.id, spec)
    final = cache / "envs" / key
    final.parent.mkdir(parents=True, exist_ok=True)
    build_once(final, lambda staging: _build(snapshot, spec, cache, staging, final))
    meta = read_json(final / "environment.json")
    return Environment(key=key, spec=spec, venv=final / "venv",
                       pythonpath=tuple(meta["pythonpath"]), frozen=tuple(meta["frozen"]),
                       build_seconds=meta["build_seconds"], outputs=tuple(meta["outputs"]),
                       outputs_dir=final / "outputs", build_notes=tuple(meta["build_notes"]))


def _build(snapshot: Snapshot, spec: EnvSpec, cache: Path, staging: Path, final: Path) -> None:
    start = time.monotonic()
    # Built in the staging dir, then its absolute paths are rewritten to the final one
    # (`build_once` renames staging to final only when everything succeeded).
    venv = final / "venv"
    staging_venv = staging / "venv"
    proc = _uv("venv", "--quiet", "--python", interpreter_for(spec.python), str(staging_venv),
               cache=cache)
    if proc.returncode != 0:
        raise UserError(f"{snapshot.source}: no Python {spec.python} for the environment: "
                        f"{_failure(proc)}")
    python = str(staging_venv / "bin" / "python")
    site = Path(subprocess.run([python, "-c", "import sysconfig;print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    before = set(os.listdir(site))
    (cache / "tmp").mkdir(parents=True, exist_ok=True)  # a cache that only held git sources has none yet
    with tempfile.TemporaryDirectory(dir=cache / "tmp", prefix="envbuild-") as scratch:
        build_copy = Path(scratch) / snapshot.name
        shutil.copytree(snapshot.root, build_copy, symlinks=True)
        _dated_for_zip(build_copy)
        args = ["pip", "install", "--quiet", "--python", python]
        if spec.project_install:
            args += ["-e", str(build_copy) + spec.project_install[1:]]
        args += list(spec.requirements)
        version_env, _why = scm_version(snapshot.root, spec.scm_version)
        proc = _uv(*args, cwd=build_copy, cache=cache, extra_env=version_env)
        if proc.returncode != 0:
            # A version made up for the build is often why (iniconfig built as 0.0.0, and
            # pytest needs iniconfig>=1.0.1): say so, and what would give it a real one.
            told = f" ({snapshot.name} was built as version {UNKNOWN_VERSION}: no git " \
                "metadata and no fallback version; a tag in the repository (reachable from " \
                "the commit) or a fallback_version would give it its own)" \
                if UNKNOWN_VERSION in version_env.values() else ""
            raise UserError(f"{snapshot.source}: cannot build the environment: "
                            f"{_failure(proc)}{told}")
        for command in spec.install:
            shell = subprocess.run(
                command, shell=True, cwd=build_copy, capture_output=True, text=True,
                env={**os.environ, **version_env, "VIRTUAL_ENV": str(staging_venv),
                     "UV_CACHE_DIR": str(cache / "uv"),
                     "PATH": f"{staging_venv / 'bin'}:{Path(find_uv_bin()).parent}:"
                             f"{os.environ.get('PATH', '')}"})
            if shell.returncode != 0:
                raise UserError(f"{snapshot.source}: install command failed: {command}: "
                                f"{_failure(shell)}")
        pythonpath = _remove_path_hooks(site, set(os.listdir(site)) - before, build_copy)
        # What the build wrote into the tree (a version module, extensions built in place)
        # leaves with the throwaway copy unless it is kept here.
        outputs, build_notes = collect_outputs(build_copy, snapshot.root, staging / "outputs")
    if not pythonpath:
        pythonpath = _guess_roots(snapshot.root)
    # uv installs no bytecode, and test runs cannot write any (the environment is mounted
    # read-only): without this, every test process compiled pytest and the dependencies
    # again, a quarter of a second each. Hash-checked, so it stays valid in an image.
    compile_tree(python, site)
    frozen = _uv("pip", "freeze", "--exclude-editable", "--python", python,
                 cache=cache).stdout.split()
    write_json(staging / "environment.json", {
        "spec": asdict(spec), "pythonpath": pythonpath, "frozen": frozen,
        "build_seconds": round(time.monotonic() - start, 3), "venv": str(venv),
        "outputs": outputs, "build_notes": build_notes,
    })
    rewrite_paths(staging_venv, staging_venv, venv)


def _remove_path_hooks(site: Path, added: set[str], build_copy: Path) -> list[str]:
    """Delete the editable install's path hooks; return the import roots they pointed to."""
    roots: set[str] = set()
    for name in sorted(added):
        path = site / name
        if name.endswith(".pth"):
            for line in path.read_text(errors="replace").splitlines():
                line = line.strip()
                if line and not line.startswith(("#", "import ")):
                    roots.add(_relative(Path(line), build_copy))
            path.unlink()
        elif name.startswith("__editable__") and name.endswith(".py"):
            roots |= {_relative(root, build_copy) for root in _finder_roots(path)}
            path.unlink()
    roots.discard("")
    return sorted(roots)


def _finder_roots(finder: Path) -> list[Path]:
    """The import roots behind a setuptools editable finder's MAPPING: the directory that holds
    `a` for a package `a`, and for `ns.a` (a namespace package) the one that holds `ns`."""
    try:
        tree = ast.parse(finder.read_text())
    except SyntaxError:
        return []
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "MAPPING" and node.value is not None:
            try:
                mapping = ast.literal_eval(node.value)
            except ValueError:
                return []
            return [Path(str(path)).parents[len(str(name).split(".")) - 1]
                    for name, path in mapping.items()]
    return []


def _relative(path: Path, base: Path) -> str:
    try:
        rel = path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return ""
    return rel or "."


def _guess_roots(root: Path) -> list[str]:
    src = root / "src"
    if src.is_dir() and any(p.is_dir() and (p / "__init__.py").exists() for p in src.iterdir()):
        return ["src"]
    return ["."]
