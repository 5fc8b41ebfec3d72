"""bubblewrap: namespaces on the local host, no daemon, ~10 ms per command.

What the command gets:
- every namespace new (`--unshare-all`): no network but a private loopback, its own pid tree
  (when the command exits, everything it started dies with bwrap's pid 1), no host IPC;
- a fresh root: the host's /usr (with the /bin, /lib... links) read-only, a short list of
  harmless /etc files, a generated passwd/group, a minimal /dev, a new /proc, a private /tmp
  (tmpfs), the rest of the root read-only; then the workspace and writable mounts read-write
  and the read-only mounts (venv, plugin dir, the venv's base interpreter) read-only, each at
  its host path. Nothing else of the host exists inside: not /root or /home, not /var or /run
  (so no docker socket either);
- as root, bwrap keeps nearly every capability unless told otherwise, and a test could remount
  `/` read-write: so always a new user namespace, `--cap-drop ALL`, `--disable-userns` (no
  nested namespace to win capabilities back), and `--uid/--gid 1000` inside;
- limits: a cgroup per command when the machine allows one (memory and pids, and a kill of
  every member), RLIMIT_DATA per process always, RLIMIT_NPROC when not root, RLIMIT_CORE 0;
- the timeout kills bwrap's process group; `--die-with-parent` then takes down the sandbox's
  pid 1, and the kernel kills the whole pid namespace, daemons included.
"""

from __future__ import annotations

import collections
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from taskforge.sandbox import cgroups
from taskforge.sandbox.base import ExecResult, Limits, Mounts, Sandbox, SandboxUnavailable
from taskforge.sandbox.layout import binds_for

OUTPUT_TAIL = 20_000
SANDBOX_UID = 1000
SANDBOX_GID = 1000

# Read-only from the host's /etc: what programs need to run and nothing that holds a secret
# (no shadow, no ssh host keys, no ssl/private). Missing entries are skipped.
ETC_ALLOW = (
    "alternatives", "ca-certificates", "ca-certificates.conf", "debian_version", "fonts",
    "gai.conf", "host.conf", "issue", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
    "locale.alias", "locale.conf", "localtime", "lsb-release", "magic", "magic.mime",
    "mime.types", "nsswitch.conf", "os-release", "pki/ca-trust", "pki/tls/certs", "protocols",
    "rpc", "services", "ssl/certs", "ssl/openssl.cnf", "timezone", "xattr.conf",
)
ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
PASSWD = (f"root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
          f"sandbox:x:{SANDBOX_UID}:{SANDBOX_GID}:taskforge sandbox:/tmp:/bin/sh\n"
          "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
GROUP = f"root:x:0:\nsandbox:x:{SANDBOX_GID}:\nnogroup:x:65534:\n"
HOSTS = "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost ip6-loopback\n"

_warned_no_pids_limit = False
_warn_lock = threading.Lock()


class BwrapSandbox(Sandbox):
    name = "bwrap"
    _checked: bool | None = None

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits.from_env()
        self.bwrap = shutil.which("bwrap") or "bwrap"
        self.prlimit = shutil.which("prlimit") or "prlimit"

    @classmethod
    def available(cls) -> bool:
        """Installed, and able to make its namespaces here (a trial run, once per process)."""
        if cls._checked is None:
            cls._checked = _trial_run() is None
        return cls._checked

    @staticmethod
    def why_unavailable() -> str | None:
        return _trial_run()

    # ---- the command line -------------------------------------------------------------

    def command(self, argv: Sequence[str], *, workspace: Path, mounts: Mounts | None,
                data_fds: dict[str, int], status_fd: int | None = None) -> list[str]:
        """bwrap's full argv for `argv` (data_fds: in-sandbox file path -> readable fd)."""
        args = [self.bwrap, "--unshare-all", "--unshare-user", "--disable-userns",
                "--cap-drop", "ALL", "--die-with-parent", "--new-session",
                "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID), "--hostname", "sandbox"]
        if status_fd is not None:
            args += ["--json-status-fd", str(status_fd)]
        args += ["--ro-bind", "/usr", "/usr"]
        for name in ROOT_LINKS:
            path = Path("/") / name
            if path.is_symlink():
                args += ["--symlink", os.readlink(path), str(path)]
            elif path.is_dir():
                args += ["--ro-bind", str(path), str(path)]
        args += ["--dir", "/etc"]
        for name in ETC_ALLOW:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        for target, fd in sorted(data_fds.items()):
            args += ["--perms", "0644", "--ro-bind-data", str(fd), target]
        tmp_size = str(self.limits.tmp_bytes)
        args += ["--proc", "/proc", "--dev", "/dev", "--size", tmp_size, "--tmpfs", "/dev/shm",
                 "--size", tmp_size, "--perms", "1777", "--tmpfs", "/tmp",
                 "--dir", "/var", "--symlink", "../tmp", "/var/tmp"]
        for bind in binds_for(workspace, mounts, skip_system=True):
            args += ["--bind" if bind.writable else "--ro-bind", str(bind.source), str(bind.target)]
        # The root itself (a tmpfs holding the mount points) read-only, as in docker.
        args += ["--remount-ro", "/", "--chdir", str(Path(os.path.abspath(workspace))), "--", *argv]
        return args

    # ---- running ------------------------------------------------------------------------

    def exec(self, argv: Sequence[str], *, workspace: Path, env: Mapping[str, str],
             timeout: float, mounts: Mounts | None = None) -> ExecResult:
        start = time.monotonic()
        group = cgroups.create(self.limits.memory_bytes, self.limits.pids)
        if group is None and os.getuid() == 0:
            _warn_no_pids_limit()
        data = {"/etc/passwd": PASSWD, "/etc/group": GROUP, "/etc/hosts": HOSTS,
                "/etc/hostname": "sandbox\n"}
        fds: dict[str, int] = {}
        status_r, status_w = os.pipe()
        try:
            for target, text in data.items():
                r, w = os.pipe()
                os.write(w, text.encode())  # small: fits the pipe buffer
                os.close(w)
                fds[target] = r
            command = self.command(argv, workspace=workspace, mounts=mounts, data_fds=fds,
                                   status_fd=status_w)
            limits = [self.prlimit, f"--data={self.limits.memory_bytes}", "--core=0"]
            if os.getuid() != 0:  # RLIMIT_NPROC never applies to host root
                limits.append(f"--nproc={self.limits.pids}")
            full = [*limits, "--", *command]
            if group is not None:
                full = group.wrap(full)
            proc = subprocess.Popen(full, cwd="/", env=dict(env), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    start_new_session=True, pass_fds=(status_w, *fds.values()))
        except BaseException:
            if group is not None:
                group.remove()
            raise
        finally:
            for fd in (*fds.values(), status_w):
                os.close(fd)
        reader = TailReader(proc.stdout, OUTPUT_TAIL)  # type: ignore[arg-type]
        timed_out = False
        try:
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill(proc.pid, group)
                proc.wait()
        except BaseException:  # Ctrl-C, or anything else: never leave the sandbox running
            _kill(proc.pid, group)
            proc.wait()
            raise
        finally:
            if group is not None:
                group.remove()  # whatever is still in the cgroup dies here
            text = reader.finish()
            os.set_blocking(status_r, False)
            with os.fdopen(status_r, "rb") as status, contextlib.suppress(BlockingIOError):
                started = b"child-pid" in (status.read() or b"")
        if not started and not timed_out:
            raise SandboxUnavailable(f"bwrap could not set up the sandbox: {text.strip()[-500:]}")
        return ExecResult(exit_code=-signal.SIGKILL if timed_out else proc.returncode,
                          output=text, duration_s=time.monotonic() - start, timed_out=timed_out)


class TailReader:
    """Drains a pipe in a thread, keeping only its last `keep` characters: a suite that
    prints gigabytes costs taskforge no memory."""

    def __init__(self, pipe: IO[bytes], keep: int) -> None:
        self.pipe = pipe
        self.keep = keep * 4  # bytes; decoded and cut to `keep` characters at the end
        self.chunks: collections.deque[bytes] = collections.deque()
        self.size = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := self.pipe.read1(65536):  # type: ignore[attr-defined]
                with self.lock:
                    self.chunks.append(chunk)
                    self.size += len(chunk)
                    while self.size - len(self.chunks[0]) >= self.keep:
                        self.size -= len(self.chunks.popleft())
        with contextlib.suppress(OSError):
            self.pipe.close()

    def finish(self, grace: float = 5.0) -> str:
        """The tail, once the pipe closed (all writers gone: the pid namespace is gone by
        now) or, should a writer linger, what arrived within `grace` seconds."""
        self.thread.join(grace)
        with self.lock:
            data = b"".join(self.chunks)
        return data.decode(errors="replace")[-self.keep // 4:]


def _kill(pgid: int, group: cgroups.Cgroup | None) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    if group is not None:
        group.kill_all()


def _warn_no_pids_limit() -> None:
    global _warned_no_pids_limit
    with _warn_lock:
        if not _warned_no_pids_limit:
            print("taskforge: warning: sandbox 'bwrap': no usable cgroup here, so the process "
                  "count of a command run as root is not limited", file=sys.stderr)
            _warned_no_pids_limit = True


def _trial_run() -> str | None:
    """None when bwrap works here, else why not."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (apt-get install bubblewrap)"
    if shutil.which("prlimit") is None:
        return "prlimit is not installed (util-linux)"
    box = BwrapSandbox(Limits(memory_bytes=1 << 30, pids=64, tmp_bytes=16 << 20))
    try:
        with tempfile.TemporaryDirectory(prefix="taskforge-bwrap-check-") as scratch:
            result = box.exec(["/bin/sh", "-c", "echo ok"], workspace=Path(scratch), env={},
                              timeout=30, mounts=None)
    except (SandboxUnavailable, OSError, ValueError) as e:
        return str(e)
    if result.exit_code != 0 or result.output.strip() != "ok":
        return f"bwrap trial run failed: {result.output.strip()[-300:]}"
    return None

