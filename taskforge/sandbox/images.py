"""Docker images without a registry: a Debian base built here, once per machine.

No image can be pulled on these machines, so taskforge makes its own: `debootstrap
--variant=minbase` of the host's Debian release (python3 and venv included, which also brings
every shared library a CPython build links against), the host's CA bundle copied in, then
`docker import`. The image carries the label `taskforge.base-key=<key>`, a hash of everything
it is built from, so it is built once per machine and found again by label; a changed recipe
gives a new key and a new image.

Users who have a registry set TASKFORGE_DOCKER_IMAGE (see docs/sandbox.md) and skip all this.

`prune()` removes what a crashed run left: containers labelled `taskforge.sandbox`, and with
`images=True` the base images too.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskforge.cache import cache_root, digest
from taskforge.sandbox.base import SandboxUnavailable

FORMAT = 1  # bump when the recipe below changes in a way the key does not capture
LABEL_KEY = "taskforge.base-key"
LABEL_CONTAINER = "taskforge.sandbox"
REPOSITORY = "taskforge-base"
PACKAGES = ("python3", "python3-venv", "ca-certificates")
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
DEFAULT_MIRROR = "http://deb.debian.org/debian"
IMAGE_ENV = "TASKFORGE_DOCKER_IMAGE"

_lock = threading.Lock()


@dataclass(frozen=True)
class BaseSpec:
    suite: str
    arch: str
    packages: tuple[str, ...]
    ca_bundle_sha256: str | None
    mirror: str  # where packages come from; not part of the key

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


def _host_mirror() -> str:
    """The Debian mirror apt uses here (deb822 or one-line sources), else the default."""
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
    return DEFAULT_MIRROR


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
    mirror = os.environ.get("TASKFORGE_DEBIAN_MIRROR") or _host_mirror()
    return BaseSpec(suite=suite, arch=arch, packages=PACKAGES, ca_bundle_sha256=ca, mirror=mirror)


def find_base_image(client: Any, spec: BaseSpec | None = None) -> str | None:
    """The id of an image built from `spec`, if this machine has one."""
    spec = spec or base_spec()
    found = client.images.list(filters={"label": f"{LABEL_KEY}={spec.key}"})
    return found[0].id if found else None


def can_build() -> str | None:
    """None when this machine can build the base image, else why not."""
    if os.getuid() != 0:
        return ("building the docker base image needs root (debootstrap); run taskforge once as "
                f"root, or set {IMAGE_ENV} to an image you have")
    if shutil.which("debootstrap") is None:
        return f"debootstrap is not installed (apt-get install debootstrap), or set {IMAGE_ENV}"
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


def prune(client: Any = None, *, images: bool = False) -> dict[str, int]:
    """Remove every container a taskforge run left (running or not), and with `images` the
    base images too. Returns how many of each were removed."""
    import docker
    import docker.errors

    client = client or docker.from_env()
    removed = {"containers": 0, "images": 0}
    for container in client.containers.list(all=True, filters={"label": LABEL_CONTAINER}):
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)
            removed["containers"] += 1
    if images:
        for image in client.images.list(filters={"label": LABEL_KEY}):
            with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                client.images.remove(image.id, force=True)
                removed["images"] += 1
    return removed
