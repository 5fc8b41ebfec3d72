"""Docker images without a registry: a Debian base built here, once per machine.

No image can be pulled on these machines, so taskforge makes its own: `debootstrap
--variant=minbase` of the host's Debian release (python3 and venv included, which also brings
every shared library a CPython build links against), the host's CA bundle copied in, then
`docker import`. The image carries the label `taskforge.base-key=<key>`, a hash of everything
it is built from, so it is built once per machine and found again by label; a changed recipe
gives a new key and a new image.

Users who have a registry set TASKFORGE_DOCKER_IMAGE (see docs/sandbox.md) and skip all this.

On that base, one environment image per snapshot: its virtual environment (the test
dependencies) copied in at its host path, built with the Docker SDK from a tar context (the
legacy builder; no buildx here). It is keyed by the base image and the environment's build
record, so a rebuilt environment gets a new image, and a container then needs no bind of the
host's venv: the image is the whole runtime, and a record's environment can name it.

`prune()` removes what a crashed run left: containers labelled `taskforge.sandbox`, and with
`images=True` the base, interpreter and environment images too. An image built on one of them
(an exported task's image, a Harbor task's environment built by the user) is never taken for
it, though it inherits its labels: it stays, and so does the image under it.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskforge.cache import cache_root, digest
from taskforge.relocate import rewrite_paths
from taskforge.sandbox.base import SandboxUnavailable
from taskforge.workspace import scratch_dir

FORMAT = 2  # bump when the recipe below changes in a way the key does not capture
# (2: the interpreter layer keeps test.support)
LABEL_KEY = "taskforge.base-key"
LABEL_CONTAINER = "taskforge.sandbox"
LABEL_ENV = "taskforge.env-key"
LABEL_PYTHON = "taskforge.python-key"
# An exported task's image (`export --format docker-image`): the user's, never pruned; it
# inherits the labels above from its environment image.
LABEL_TASK = "taskforge.task"
# Images inherit their parent's labels: this one, set by every layer built on the base,
# tells an image apart from its children.
LABEL_LAYER = "taskforge.layer"
ENV_REPOSITORY = "taskforge-env"
PYTHON_REPOSITORY = "taskforge-python"
REPOSITORY = "taskforge-base"
# git: a task's workspace is a git repository, and agents (and Harbor's oracle) work with it.
PACKAGES = ("python3", "python3-venv", "ca-certificates", "git")
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
MIRROR_ENV = "TASKFORGE_DEBIAN_MIRROR"
IMAGE_ENV = "TASKFORGE_DOCKER_IMAGE"

_lock = threading.Lock()


@dataclass(frozen=True)
class BaseSpec:
    suite: str
    arch: str
    packages: tuple[str, ...]
    ca_bundle_sha256: str | None
    mirror: str | None  # where packages come from (None: none known); not part of the key

    @property
    def key(self) -> str:
        return digest("docker-base", FORMAT, self.suite, self.arch, self.packages,
                      self.ca_bundle_sha256)[:16]

    @property
    def tag(self) -> str:
        return f"{REPOSITORY}:{self.suite}-{self.key[:12]}"


def _os_release() -> dict[str, str]:
    values: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/etc/os-release").read_text().splitlines():
            key, _, value = line.partition("=")
            values[key] = value.strip().strip('"')
    return values


def _host_mirror() -> str | None:
    """The Debian mirror apt uses here (deb822 or one-line sources), if any."""
    candidates = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in candidates:
        if path.suffix not in ("", ".list", ".sources") or not path.is_file():
            continue
        for line in path.read_text(errors="replace").splitlines():
            words = line.split()
            url = None
            if words[:1] == ["URIs:"] and len(words) > 1:
                url = words[1]
            elif words[:1] == ["deb"]:
                url = next((w for w in words[1:] if "://" in w), None)
            if url and url.rstrip("/").endswith("/debian"):
                return url.rstrip("/")
    return None


def base_spec() -> BaseSpec:
    release = _os_release()
    suite = os.environ.get("TASKFORGE_DOCKER_SUITE") or (
        release.get("VERSION_CODENAME") if release.get("ID") == "debian" else None) or "bookworm"
    arch = "amd64"
    if shutil.which("dpkg"):
        arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                              text=True).stdout.strip() or arch
    from taskforge.cache import sha256_file
    ca = sha256_file(HOST_CA_BUNDLE) if HOST_CA_BUNDLE.is_file() else None
    mirror = os.environ.get(MIRROR_ENV) or _host_mirror()
    return BaseSpec(suite=suite, arch=arch, packages=PACKAGES, ca_bundle_sha256=ca, mirror=mirror)


def find_base_image(client: Any, spec: BaseSpec | None = None) -> str | None:
    """The id of an image built from `spec`, if this machine has one."""
    spec = spec or base_spec()
    found = client.images.list(filters={"label": f"{LABEL_KEY}={spec.key}"})
    # environment images inherit the base's labels: skip them
    base = _original([image for image in found if LABEL_LAYER not in (image.labels or {})])
    return base.id if base else None


def _original(found: list[Any]) -> Any | None:
    """Of images carrying one taskforge label with one key, the one taskforge built. Images
    inherit their parent's labels, so every image built on it (an exported task's image, a
    Harbor task's environment, anyone's `FROM`) carries the same ones, and the daemon lists
    the newest first. Taskforge's has the fewest layers and, of those, is the oldest (a
    child that adds no layer is younger than its parent)."""
    def rank(image: Any) -> tuple[int, str, float]:
        created = str(image.attrs.get("Created", ""))
        whole, _, fraction = created.rstrip("Z").partition(".")
        return (len(image.attrs.get("RootFS", {}).get("Layers", [])), whole,
                float(f"0.{fraction}") if fraction.isdigit() else 0.0)

    return min(found, key=rank, default=None)


def can_build() -> str | None:
    """None when this machine can build the base image, else why not."""
    if os.getuid() != 0:
        return ("building the docker base image needs root (debootstrap); run taskforge once as "
                f"root, or set {IMAGE_ENV} to an image you have")
    if shutil.which("debootstrap") is None:
        return f"debootstrap is not installed (apt-get install debootstrap), or set {IMAGE_ENV}"
    if base_spec().mirror is None:
        return (f"no Debian mirror in /etc/apt/sources.list*: set {MIRROR_ENV} to one, or "
                f"{IMAGE_ENV} to an image you have")
    return None


def ensure_image(client: Any, image: str | None = None) -> str:
    """The image to run commands in: `image` or $TASKFORGE_DOCKER_IMAGE (pulled if absent),
    else the base image for this host, built first if this machine has none yet."""
    import docker.errors

    image = image or os.environ.get(IMAGE_ENV)
    if image:
        try:
            return client.images.get(image).id
        except docker.errors.ImageNotFound:
            try:
                return client.images.pull(image).id
            except docker.errors.APIError as e:
                raise SandboxUnavailable(f"docker image {image!r}: not here and cannot be "
                                         f"pulled: {e.explanation or e}") from None
    spec = base_spec()
    with _lock:
        found = find_base_image(client, spec)
        if found:
            return found
        problem = can_build()
        if problem:
            raise SandboxUnavailable(problem)
        with machine_lock(f"taskforge-docker-base-{spec.key}.lock"):
            found = find_base_image(client, spec)
            if found:
                return found
            return build_base_image(client, spec)


@contextlib.contextmanager
def machine_lock(name: str) -> Iterator[None]:
    """A lock every taskforge process of this machine shares, whatever its cache directory
    (the image it guards is machine-wide too). Opened read-only so any user can take it."""
    path = Path(tempfile.gettempdir()) / name
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def build_base_image(client: Any, spec: BaseSpec) -> str:
    print(f"taskforge: warning: sandbox 'docker': building its base image {spec.tag} once for "
          f"this machine (debootstrap {spec.suite}, about a minute)", file=sys.stderr)
    scratch_parent = cache_root() / "tmp"
    scratch_parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="docker-base-", dir=scratch_parent) as scratch:
        rootfs = Path(scratch) / "rootfs"
        log = Path(scratch) / "debootstrap.log"
        with log.open("w") as out:
            proc = subprocess.run(
                ["debootstrap", "--variant=minbase", f"--arch={spec.arch}",
                 f"--include={','.join(spec.packages)}", spec.suite, str(rootfs), spec.mirror],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        if proc.returncode != 0:
            tail = log.read_text(errors="replace").strip().splitlines()[-5:]
            raise SandboxUnavailable("docker base image: debootstrap failed: " + " | ".join(tail))
        _finish_rootfs(rootfs)
        archive = Path(scratch) / "rootfs.tar"
        subprocess.run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(archive), "."],
                       check=True, capture_output=True)
        changes = [f"LABEL {LABEL_KEY}={spec.key}", f"LABEL taskforge.suite={spec.suite}",
                   "ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1", "WORKDIR /tmp",
                   'CMD ["/bin/sh"]']
        repository, tag = spec.tag.split(":")
        client.api.import_image(src=str(archive), repository=repository, tag=tag, changes=changes)
    found = find_base_image(client, spec)
    if not found:
        raise SandboxUnavailable(f"docker base image: imported {spec.tag} but cannot find it")
    return found


# Where an environment image holds its venv: one path for every environment, so a venv under
# /tmp (hidden in a container by the private /tmp) works too; the sandbox rewrites the host
# path to this one in argv and environment.
CANONICAL_VENV = Path("/opt/taskforge/venv")
# Parts of an interpreter's installation a venv without system site-packages never loads.
INTERPRETER_SKIP = {"site-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip"}
# ... except what suites import from the standard library's own tests: `test.support`
# (zipp and other CPython backports, through jaraco.test), which imports libregrtest.
INTERPRETER_KEEP = {("test", "__init__.py"), ("test", "support"), ("test", "libregrtest")}


def _stamp(path: Path) -> str:
    """What identifies a build of `path`: an environment's build record (rewritten by every
    build) or, for an interpreter, its executable's size and mtime."""
    record = path.parent / "environment.json"
    if record.is_file() and (path / "pyvenv.cfg").is_file():
        return record.read_text()
    exe = next(iter(sorted((path / "bin").glob("python3*"))), path)
    st = exe.stat()
    return f"{exe.name}:{st.st_size}:{st.st_mtime_ns}"


def _find_labelled(client: Any, label: str, key: str) -> str | None:
    found = _original(client.images.list(filters={"label": [f"{label}={key}",
                                                            f"{LABEL_LAYER}={label}"]}))
    return found.id if found else None


def ensure_env_image(client: Any, base_id: str, venv: Path,
                     interpreter: Path | None = None) -> str:
    """The image with `venv` at CANONICAL_VENV on top of `base_id`, and with the venv's
    interpreter installation (`interpreter`, when the base lacks it) at its host path in a
    layer of its own, which every environment on that interpreter shares. Each image is
    built once per machine and found again by its label."""
    parent = base_id
    if interpreter is not None:
        key = digest("docker-python", FORMAT, base_id, str(interpreter), _stamp(interpreter))[:16]
        parent = _ensure_labelled(client, LABEL_PYTHON, key, lambda: _build_layer(
            client, base_id, LABEL_PYTHON, key, f"{PYTHON_REPOSITORY}:{key}",
            lambda tar: tar.add(interpreter, arcname="layer", filter=_skip_interpreter_parts),
            interpreter))
    venv = Path(os.path.abspath(venv))
    key = digest("docker-env", FORMAT, parent, str(venv), _stamp(venv))[:16]
    return _ensure_labelled(client, LABEL_ENV, key, lambda: _build_layer(
        client, parent, LABEL_ENV, key, f"{ENV_REPOSITORY}:{key}",
        lambda tar: _add_relocated_venv(tar, venv), CANONICAL_VENV))


def _ensure_labelled(client: Any, label: str, key: str, build: Any) -> str:
    found = _find_labelled(client, label, key)
    if found:
        return found
    with machine_lock(f"taskforge-docker-{key}.lock"):
        return _find_labelled(client, label, key) or build()


def _skip_interpreter_parts(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    parts = Path(info.name).parts
    if len(parts) >= 4 and parts[1] == "lib" and parts[3] in INTERPRETER_SKIP:
        kept = tuple(parts[3:5]) in INTERPRETER_KEEP if len(parts) > 4 else \
            any(keep[0] == parts[3] for keep in INTERPRETER_KEEP)  # the directory holding them
        if not kept:
            return None  # layer/lib/pythonX.Y/<skipped>
    if info.name.endswith(".a"):
        return None  # static libraries: only for building extensions
    return info


def _add_relocated_venv(tar: tarfile.TarFile, venv: Path) -> None:
    with scratch_dir(cache_root(), prefix="venv-") as scratch:
        copy = scratch / "venv"
        shutil.copytree(venv, copy, symlinks=True)
        rewrite_paths(copy, venv, CANONICAL_VENV)
        tar.add(copy, arcname="layer")


def _build_layer(client: Any, parent: str, label: str, key: str, tag: str,
                 fill: Any, target: Path) -> str:
    """`FROM parent` plus one directory (written by `fill` under `layer/` of the context) at
    `target`, built with the Docker SDK from a tar context (the legacy builder)."""
    import docker.errors

    with scratch_dir(cache_root(), prefix="docker-layer-") as scratch:
        context = scratch / "context.tar"
        with tarfile.open(context, "w") as tar:
            fill(tar)
            dockerfile = f"FROM {parent}\nCOPY layer {target}\n".encode()
            info = tarfile.TarInfo("Dockerfile")
            info.size = len(dockerfile)
            tar.addfile(info, io.BytesIO(dockerfile))
        with context.open("rb") as fileobj:
            try:
                image, _log = client.images.build(
                    fileobj=fileobj, custom_context=True, tag=tag, rm=True, forcerm=True,
                    labels={label: key, LABEL_LAYER: label})
            except (docker.errors.BuildError, docker.errors.APIError) as e:
                raise SandboxUnavailable(f"docker image {tag} for {target}: {e}") from None
    return image.id


def _finish_rootfs(rootfs: Path) -> None:
    """Drop what only the build needed; put the host's CA bundle in (registries behind a
    proxy that re-signs TLS need it); add the sandbox's user."""
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc",
                 "usr/share/man", "usr/share/info"):
        path = rootfs / junk
        if path.is_dir():
            for child in path.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
    if HOST_CA_BUNDLE.is_file():
        target = rootfs / "etc/ssl/certs/ca-certificates.crt"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HOST_CA_BUNDLE, target)
    with (rootfs / "etc/passwd").open("a") as f:
        f.write("sandbox:x:1000:1000:taskforge sandbox:/tmp:/bin/sh\n")
    with (rootfs / "etc/group").open("a") as f:
        f.write("sandbox:x:1000:\n")


def _owner_alive(pid: str | None) -> bool:
    """Whether the taskforge process that started a container still runs (same host)."""
    if not pid or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def prune(client: Any = None, *, images: bool = False) -> dict[str, int]:
    """Remove every container a taskforge run left (running or not) whose taskforge process
    is gone, and with `images` the images taskforge built: base, interpreter and environment
    images, never one built on them (they carry the same labels: see `_original`). An image
    with children stays, as docker keeps it. Returns how many of each were removed."""
    import docker
    import docker.errors

    client = client or docker.from_env()
    removed = {"containers": 0, "images": 0}
    for container in client.containers.list(all=True, filters={"label": LABEL_CONTAINER}):
        if _owner_alive(container.labels.get("taskforge.pid")):
            continue  # a running taskforge's container, not a leftover
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)
            removed["containers"] += 1
    if images:
        groups: dict[tuple[str, str], dict[str, Any]] = {}
        for label in (LABEL_ENV, LABEL_PYTHON, LABEL_KEY):
            for image in client.images.list(filters={"label": label}):
                labels = image.labels or {}
                own = labels.get(LABEL_LAYER, LABEL_KEY)
                groups.setdefault((own, labels.get(own, "")), {})[image.id] = image
        # children first: environment, then interpreter, then base images
        order = {LABEL_ENV: 0, LABEL_PYTHON: 1, LABEL_KEY: 2}
        for _group, found in sorted(groups.items(), key=lambda g: order.get(g[0][0], 3)):
            image = _original(list(found.values()))
            if image is None or LABEL_TASK in (image.labels or {}):
                continue
            with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                client.images.remove(image.id, force=True)
                removed["images"] += 1
    return removed
