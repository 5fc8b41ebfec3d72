"""A hostile test suite, run for real through bwrap and docker.

A purpose-built project whose tests each try one escape, and pass only if the escape worked:
reach a loopback service this test process runs outside the sandbox (127.0.0.1 only, never
any other address), read a secret planted in the invoking user's (fake) home, write outside
the workspace (remounting read-only paths first), reach the docker daemon, fork until it
fails, allocate past the memory limit, sleep past the timeout, outlive the suite with a
daemon. It goes through taskforge's own runner and a real uv environment, exactly as a
baseline, verify or grade run does.

Every attack must come back as that test's failure (or the run's timeout), and the host side
is checked directly: the server saw no connection, no file appeared outside, no process of
the run is left.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import make_project
from test_sandbox import require

from taskforge.languages.python.env import build_environment, detect_spec
from taskforge.languages.python.testing.runner import PLUGIN_DIR, run_tests
from taskforge.model import Environment, SourceSpec
from taskforge.sandbox import Limits
from taskforge.sources import ingest_source

LIMITS = Limits(memory_bytes=512 << 20, pids=128, tmp_bytes=64 << 20)
ATTACKS = ("network", "home_secret", "write_outside", "docker_socket", "fork_bomb", "memory",
           "daemon")

HOSTILE_FILES = {
    "pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "hostile"
        version = "0.1.0"

        [project.optional-dependencies]
        test = ["pytest"]

        [tool.setuptools]
        packages = ["hostile"]
    """,
    "hostile/__init__.py": '"""Nothing to see here."""\n',
    "tests/test_attacks.py": '''\
        """Each test passes only if its attack on the host worked."""

        import ctypes
        import json
        import os
        import socket
        import subprocess
        import sys
        import time
        from pathlib import Path

        PARAMS = json.loads((Path(__file__).resolve().parents[1] / "attack.json").read_text())


        def test_network():
            with socket.create_connection(("127.0.0.1", PARAMS["port"]), timeout=5) as conn:
                conn.sendall(b"escaped\\n")


        def test_home_secret():
            assert open(PARAMS["secret"]).read()


        def test_write_outside():
            wrote = []

            def attempt():
                for directory in PARAMS["outside"]:
                    try:
                        Path(directory, PARAMS["token"]).write_text("pwned")
                        wrote.append(directory)
                    except OSError:
                        pass

            attempt()
            # Win write access back: remount the read-only binds (and /) read-write.
            libc = ctypes.CDLL(None, use_errno=True)
            ms_remount, ms_bind = 32, 4096
            for target in ["/", *PARAMS["outside"]]:
                libc.mount(None, target.encode(), None, ms_remount | ms_bind, None)
                libc.mount(None, target.encode(), None, ms_remount, None)
            attempt()
            assert wrote


        def test_docker_socket():
            for path in ("/var/run/docker.sock", "/run/docker.sock"):
                try:
                    with socket.socket(socket.AF_UNIX) as conn:
                        conn.connect(path)
                        return
                except OSError:
                    pass
            raise AssertionError("no docker socket")


        def test_fork_bomb():
            kids = []
            try:
                for _ in range(PARAMS["forks"]):
                    pid = os.fork()
                    if pid == 0:
                        time.sleep(30)
                        os._exit(0)
                    kids.append(pid)
            except OSError:
                pass
            finally:
                for pid in kids:
                    os.kill(pid, 9)
                for pid in kids:
                    os.waitpid(pid, 0)
            assert len(kids) == PARAMS["forks"]


        def test_memory():
            block = bytearray(PARAMS["memory"])
            for i in range(0, len(block), 4096):
                block[i] = 1


        def test_daemon():
            code = (f"import time; time.sleep({PARAMS['delay']}); "
                    f"open({PARAMS['marker'] + '.popen'!r}, 'w').write('alive')")
            subprocess.Popen([sys.executable, "-c", code, PARAMS["token"]], start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
            if os.fork() == 0:  # the classic double fork
                os.setsid()
                if os.fork() == 0:
                    time.sleep(PARAMS["delay"])
                    Path(PARAMS["marker"] + ".fork").write_text("alive")
                os._exit(0)


        def test_sleep_past_timeout():
            time.sleep(3600)
    ''',
}


@pytest.fixture(scope="module")
def hostile_env(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path) -> tuple[Path, Environment]:
    root = make_project(tmp_path_factory.mktemp("hostile-src"), HOSTILE_FILES, name="hostile")
    spec = SourceSpec(kind="path", location=str(root))
    snapshot = ingest_source(spec, tf_cache, root.parent)
    env = build_environment(snapshot, detect_spec(snapshot.root, spec), tf_cache)
    return snapshot.root, env


class LoopbackServer:
    """A TCP service on 127.0.0.1 that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    srv = LoopbackServer()
    yield srv
    srv.close()


def processes_mentioning(*needles: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(n in cmdline for n in needles):
            found.append(f"{entry.name}: {cmdline[:200]}")
    return found


@pytest.fixture
def stage(hostile_env: tuple[Path, Environment], server: LoopbackServer, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """A fresh workspace of the hostile project, its attack.json, and the host-side targets."""
    source, env = hostile_env
    workspace = tmp_path / "workspace"
    shutil.copytree(source, workspace)
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    secret = home / ".ssh" / "id_ed25519"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- (fake)\n")
    secret.chmod(0o600)
    monkeypatch.setenv("HOME", str(home))
    outside = tmp_path / "outside"
    outside.mkdir()
    token = f"taskforge-escape-{os.getpid()}-{time.monotonic_ns()}"
    site = next((env.venv / "lib").glob("python*/site-packages"))
    targets = [outside, home, site, env.venv / "bin", PLUGIN_DIR, Path("/usr/local"), Path("/etc")]
    params = {"port": server.port, "secret": str(secret), "token": token,
              "outside": [str(t) for t in targets], "forks": LIMITS.pids * 4,
              "memory": LIMITS.memory_bytes + (256 << 20),
              "marker": str(workspace / "daemon-was-here"), "delay": 2}
    (workspace / "attack.json").write_text(json.dumps(params))
    info = {"env": env, "workspace": workspace, "params": params, "targets": targets,
            "server": server}
    yield info
    for target in targets:  # only ever there if an attack worked: never leave it behind
        (target / token).unlink(missing_ok=True)


def run_attack(backend: str, stage: dict, name: str, timeout: float = 120):
    box = require(backend, LIMITS)
    test_id = f"tests/test_attacks.py::test_{name}"
    run = run_tests(stage["env"], stage["workspace"], box, timeout=timeout, select=[test_id])
    return run, run.outcomes.get(test_id)


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_attack_is_contained(backend: str, attack: str, stage: dict) -> None:
    run, outcome = run_attack(backend, stage, attack)
    params = stage["params"]
    log = run.log_tail
    if attack == "daemon":
        assert outcome == "passed", log  # starting a process is allowed; outliving the run is not
        time.sleep(params["delay"] + 1.5)
        assert not Path(params["marker"] + ".popen").exists()
        assert not Path(params["marker"] + ".fork").exists()
    else:
        assert outcome == "failed", f"{attack}: {outcome}\n{log}"
        assert not run.timed_out
    # Host side: nothing reached, nothing written, nothing left running.
    assert stage["server"].accepted == 0
    assert [str(t) for t in stage["targets"] if (t / params["token"]).exists()] == []
    assert processes_mentioning(params["token"], str(stage["workspace"])) == []


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_sleeping_past_the_timeout_is_killed(backend: str, stage: dict) -> None:
    run, outcome = run_attack(backend, stage, "sleep_past_timeout", timeout=8)
    assert run.timed_out
    assert outcome != "passed"
    assert processes_mentioning(stage["params"]["token"], str(stage["workspace"])) == []


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_a_normal_suite_still_passes(backend: str, hostile_env: tuple[Path, Environment],
                                     tmp_path: Path) -> None:
    """The limits leave room for an ordinary run: the same project, a harmless test."""
    source, env = hostile_env
    workspace = tmp_path / "ws"
    shutil.copytree(source, workspace)
    (workspace / "tests" / "test_fine.py").write_text(
        "import hostile, subprocess, sys, tempfile\n\n"
        "def test_ordinary(tmp_path):\n"
        "    (tmp_path / 'f').write_text('x')\n"
        "    assert subprocess.run([sys.executable, '-c', 'print(1)'], capture_output=True,"
        " text=True).stdout == '1\\n'\n"
        "    with tempfile.NamedTemporaryFile() as f:\n"
        "        f.write(b'ok')\n")
    box = require(backend, LIMITS)
    run = run_tests(env, workspace, box, timeout=120, select=["tests/test_fine.py::test_ordinary"])
    assert run.outcomes == {"tests/test_fine.py::test_ordinary": "passed"}, run.log_tail
