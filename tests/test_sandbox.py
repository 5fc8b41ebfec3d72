"""The sandbox interface: one conformance suite that every backend passes, the registry,
and the layout rules the contained backends share.

A backend missing on this machine is skipped locally, and is a failure under CI (CI=true),
where .ci/run installs bubblewrap and docker and starts the daemon.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from taskforge.errors import UserError
from taskforge.sandbox import (
    BACKENDS,
    Limits,
    Mounts,
    Sandbox,
    SandboxUnavailable,
    get_sandbox,
    prune,
    why_unavailable,
)
from taskforge.sandbox.base import parse_size
from taskforge.sandbox.layout import binds_for, interpreter_prefixes

# The interpreter running these tests (a venv: the base interpreter is found from it).
PYTHON = sys.executable
PYTHON_MOUNTS = (Path(sys.prefix),)
SMALL = Limits(memory_bytes=1 << 30, pids=256, tmp_bytes=64 << 20)


def require(name: str, limits: Limits = SMALL) -> Sandbox:
    """The backend, or a skip here and a failure under CI."""
    why = why_unavailable(name)
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"sandbox {name!r} must run under CI: {why}")
        pytest.skip(f"sandbox {name!r} not available here: {why}")
    backend = BACKENDS[name]
    return backend(limits) if name != "none" else backend()  # type: ignore[call-arg]


@pytest.fixture(params=["none", "bwrap", "docker"])
def box(request: pytest.FixtureRequest) -> Sandbox:
    return require(request.param)


def run(box: Sandbox, code: str, workspace: Path, *, env: dict[str, str] | None = None,
        timeout: float = 60, writable: tuple[Path, ...] = (), readonly: tuple[Path, ...] = ()):
    return box.exec([PYTHON, "-c", code], workspace=workspace, env=env or {"LANG": "C.UTF-8"},
                    timeout=timeout, mounts=Mounts(readonly=PYTHON_MOUNTS + readonly,
                                                   writable=writable))


# ---- conformance: every backend ----------------------------------------------------------

def test_exit_code_and_interleaved_output_come_back(box: Sandbox, tmp_path: Path) -> None:
    result = run(box, "import sys; print('to stdout', flush=True); "
                      "print('to stderr', file=sys.stderr, flush=True); sys.exit(3)", tmp_path)
    assert result.exit_code == 3
    assert not result.timed_out
    assert result.output.splitlines() == ["to stdout", "to stderr"]
    assert result.duration_s > 0


def test_success_is_exit_code_zero(box: Sandbox, tmp_path: Path) -> None:
    result = run(box, "print('fine')", tmp_path)
    assert (result.exit_code, result.output, result.timed_out) == (0, "fine\n", False)


def test_runs_in_the_workspace_and_can_write_there(box: Sandbox, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "input.txt").write_text("from the host")
    result = run(box, "import os; print(os.getcwd()); "
                      "open('output.txt', 'w').write(open('input.txt').read().upper())", workspace)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(workspace)
    assert (workspace / "output.txt").read_text() == "FROM THE HOST"


def test_environment_is_exactly_what_was_passed(box: Sandbox, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKFORGE_HOST_ONLY", "must not leak")
    result = run(box, "import os, json; print(json.dumps(dict(os.environ)))", tmp_path,
                 env={"GREETING": "hello world", "PATH": "/usr/bin:/bin", "EMPTY": ""})
    assert result.exit_code == 0, result.output
    seen = __import__("json").loads(result.output)
    assert seen["GREETING"] == "hello world"
    assert seen["EMPTY"] == ""
    assert "TASKFORGE_HOST_ONLY" not in seen


def test_timeout_kills_and_keeps_partial_output(box: Sandbox, tmp_path: Path) -> None:
    token = f"taskforge-timeout-{os.getpid()}-{time.monotonic_ns()}"
    result = box.exec([PYTHON, "-c", "import time; print('before the hang', flush=True); "
                       "time.sleep(120)", token], workspace=tmp_path, env={"LANG": "C.UTF-8"},
                      timeout=3, mounts=Mounts(readonly=PYTHON_MOUNTS))
    assert result.timed_out
    assert result.exit_code != 0
    assert "before the hang" in result.output
    # killed, not waited for: nothing of the command is left running
    assert [p for p in Path("/proc").glob("[0-9]*") if _mentions(p, token)] == []


def test_writable_mounts_are_writable(box: Sandbox, tmp_path: Path) -> None:
    workspace, results = tmp_path / "ws", tmp_path / "results"
    workspace.mkdir()
    results.mkdir()
    result = run(box, f"open({str(results / 'junit.xml')!r}, 'w').write('<ok/>')", workspace,
                 writable=(results,))
    assert result.exit_code == 0, result.output
    assert (results / "junit.xml").read_text() == "<ok/>"


def test_large_output_is_cut_to_its_tail(box: Sandbox, tmp_path: Path) -> None:
    result = run(box, "for i in range(50000): print(f'line {i}')", tmp_path)
    assert result.exit_code == 0
    assert result.output.endswith("line 49999\n")
    assert len(result.output) <= 20_000


# ---- the contained backends only ---------------------------------------------------------

@pytest.fixture(params=["bwrap", "docker"])
def contained(request: pytest.FixtureRequest) -> Sandbox:
    return require(request.param)


def test_readonly_mounts_cannot_be_written(contained: Sandbox, tmp_path: Path) -> None:
    workspace, inputs = tmp_path / "ws", tmp_path / "inputs"
    workspace.mkdir()
    inputs.mkdir()
    (inputs / "data.txt").write_text("original")
    result = run(contained, f"""
import os
print(open({str(inputs / 'data.txt')!r}).read())
for target in ({str(inputs / 'data.txt')!r}, {str(inputs / 'new.txt')!r}):
    try:
        open(target, 'w').write('changed')
        print('WROTE', target)
    except OSError as e:
        print('refused', e.errno)
""", workspace, readonly=(inputs,))
    assert result.exit_code == 0, result.output
    assert "original" in result.output and "WROTE" not in result.output
    assert (inputs / "data.txt").read_text() == "original"
    assert not (inputs / "new.txt").exists()


def test_a_read_only_file_inside_the_workspace_cannot_be_written(contained: Sandbox,
                                                                 tmp_path: Path) -> None:
    """The grader binds the restored test files read-only inside the writable workspace, and
    their directories writable onto themselves: the file cannot be written, replaced or
    removed there, nor its directory moved aside for another; its neighbours can change."""
    workspace = tmp_path / "ws"
    (workspace / "tests").mkdir(parents=True)
    (workspace / "tests" / "test_a.py").write_text("original")
    result = run(contained, """
import os
for action in ("write", "rename", "remove", "move the directory"):
    try:
        if action == "write":
            open("tests/test_a.py", "w").write("changed")
        elif action == "rename":
            open("tests/other.py", "w").write("changed")
            os.replace("tests/other.py", "tests/test_a.py")
        elif action == "remove":
            os.remove("tests/test_a.py")
        else:
            os.rename("tests", "tests.aside")
        print("DID", action)
    except OSError as e:
        print("refused", action, e.errno)
""", workspace, readonly=(workspace / "tests" / "test_a.py",),
                 writable=(workspace / "tests",))
    assert result.exit_code == 0, result.output
    assert "DID" not in result.output, result.output
    assert (workspace / "tests" / "test_a.py").read_text() == "original"
    assert (workspace / "tests" / "other.py").read_text() == "changed"
    assert not (workspace / "tests.aside").exists()


def test_nothing_of_the_host_but_the_mounts_is_visible(contained: Sandbox, tmp_path: Path) -> None:
    workspace, sibling = tmp_path / "ws", tmp_path / "sibling"
    workspace.mkdir()
    sibling.mkdir()
    (sibling / "note.txt").write_text("host file beside the workspace")
    # What the invoking user's home holds (bar the parents of mounts, and the two files
    # every Debian image has in /root): none of it may be visible.
    mounted = [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
    home = [str(p) for p in Path.home().iterdir()
            if p.name not in (".bashrc", ".profile") and not any(m.is_relative_to(p) for m in mounted)]
    result = run(contained, f"""
import os
print('sibling', os.path.exists({str(sibling / 'note.txt')!r}))
print('home', [p for p in {home!r} if os.path.lexists(p)] == [])
print('sock', any(os.path.exists(p) for p in ('/var/run/docker.sock', '/run/docker.sock')))
print('uid', os.getuid())
print('caps', [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')][0])
""", workspace)
    assert result.exit_code == 0, result.output
    lines = dict(line.split(" ", 1) for line in result.output.splitlines())
    assert lines["sibling"] == "False"
    assert lines["home"] == "True"
    assert lines["sock"] == "False"
    assert lines["caps"] == "0000000000000000"
    if os.getuid() != 0:
        assert lines["uid"] != "0"


def test_the_private_tmp_is_not_the_hosts(contained: Sandbox, tmp_path: Path) -> None:
    name = f"taskforge-private-tmp-{os.getpid()}"
    result = run(contained, f"open('/tmp/{name}', 'w').write('x'); print('ok')", tmp_path)
    assert result.exit_code == 0, result.output
    assert not Path("/tmp", name).exists()


# ---- registry, limits, layout ------------------------------------------------------------

def test_unknown_backend_is_a_user_error() -> None:
    with pytest.raises(UserError, match="chroot"):
        get_sandbox("chroot")


def test_auto_prefers_docker_then_bwrap_then_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TASKFORGE_SANDBOX", raising=False)
    assert list(BACKENDS) == ["docker", "bwrap", "none"]
    expected = next(name for name, b in BACKENDS.items() if b.available())
    assert get_sandbox("auto").name == expected
    for name in ("docker", "bwrap"):
        monkeypatch.setattr(BACKENDS[name], "available", classmethod(lambda cls: False))
    assert get_sandbox("auto").name == "none"


def test_taskforge_sandbox_variable_overrides_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKFORGE_SANDBOX", "none")
    assert get_sandbox("auto").name == "none"


def test_an_unavailable_backend_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(BACKENDS["bwrap"], "available", classmethod(lambda cls: False))
    monkeypatch.setattr(BACKENDS["bwrap"], "why_unavailable", staticmethod(lambda: "no bwrap"))
    with pytest.raises(UserError, match=r"not available on this machine.*no bwrap"):
        get_sandbox("bwrap")


def test_sizes_and_limits_from_the_environment() -> None:
    assert parse_size("512m") == 512 << 20
    assert parse_size("4G") == 4 << 30
    assert parse_size("1.5k") == 1536
    assert parse_size("1048576") == 1 << 20
    with pytest.raises(ValueError):
        parse_size("lots")
    limits = Limits.from_env({"TASKFORGE_SANDBOX_MEMORY": "2g", "TASKFORGE_SANDBOX_PIDS": "99"})
    assert (limits.memory_bytes, limits.pids, limits.tmp_bytes) == (2 << 30, 99, Limits().tmp_bytes)


def test_a_venv_brings_its_base_interpreter(tmp_path: Path) -> None:
    prefixes = interpreter_prefixes(Path(sys.prefix))
    assert Path(sys.base_prefix).resolve() in prefixes
    workspace = tmp_path / "ws"
    workspace.mkdir()
    binds = binds_for(workspace, Mounts(readonly=(Path(sys.prefix),)), skip_system=True)
    targets = {b.target: b.writable for b in binds}
    assert targets[workspace] is True
    assert targets[Path(sys.prefix)] is False
    if Path(sys.base_prefix).resolve() not in (Path("/usr"), Path("/")):
        assert targets[Path(sys.base_prefix).resolve()] is False


def test_binds_are_ordered_parents_first_and_refuse_the_home(tmp_path: Path) -> None:
    inner = tmp_path / "ws" / "sub"
    inner.mkdir(parents=True)
    binds = binds_for(tmp_path / "ws", Mounts(readonly=(inner,)), skip_system=True)
    assert [b.target for b in binds] == [tmp_path / "ws", inner]
    assert [b.writable for b in binds] == [True, False]
    for bad in (Path("/"), Path.home(), Path.home().parent):
        with pytest.raises(ValueError, match="refusing"):
            binds_for(tmp_path, Mounts(readonly=(bad,)), skip_system=True)


def test_prune_removes_leftover_containers() -> None:
    require("docker")
    import docker

    from taskforge.sandbox.images import LABEL_CONTAINER, ensure_image

    client = docker.from_env()
    image = ensure_image(client)
    leftover = client.containers.create(image, ["sleep", "60"], labels={LABEL_CONTAINER: "1"},
                                        network_mode="none")
    # a container of a taskforge process that still runs (this test's parent) is not a leftover
    owned = client.containers.create(image, ["sleep", "60"], network_mode="none",
                                     labels={LABEL_CONTAINER: "1", "taskforge.pid": str(os.getppid())})
    try:
        removed = prune()
        assert removed["containers"] >= 1
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(leftover.id)
        assert client.containers.get(owned.id).id == owned.id
    finally:
        owned.remove(force=True)


def test_docker_setup_failure_is_sandbox_unavailable(tmp_path: Path) -> None:
    box = require("docker")
    with pytest.raises(SandboxUnavailable):
        box.exec(["true"], workspace=tmp_path / "missing", env={}, timeout=10)


def test_ctrl_c_leaves_nothing_behind(contained: Sandbox, tmp_path: Path) -> None:
    """KeyboardInterrupt mid-run: the exception propagates, and no container or sandboxed
    process survives it."""
    token = f"taskforge-ctrl-c-{os.getpid()}-{time.monotonic_ns()}"
    timer = threading.Timer(3, lambda: signal.pthread_kill(threading.main_thread().ident,
                                                           signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            contained.exec([PYTHON, "-c", "import time; time.sleep(120)", token],
                           workspace=tmp_path, env={}, timeout=60,
                           mounts=Mounts(readonly=PYTHON_MOUNTS))
    finally:
        timer.cancel()
    time.sleep(0.5)
    assert [p for p in Path("/proc").glob("[0-9]*") if _mentions(p, token)] == []
    if contained.name == "docker":
        import docker

        left = docker.from_env().containers.list(
            all=True, filters={"label": f"taskforge.pid={os.getpid()}"})
        assert left == []


def _mentions(proc: Path, token: str) -> bool:
    try:
        return token.encode() in (proc / "cmdline").read_bytes()
    except OSError:
        return False


def test_a_registry_image_is_used_as_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    require("docker")
    import docker

    from taskforge.sandbox.docker import DockerSandbox
    from taskforge.sandbox.images import IMAGE_ENV, base_spec, ensure_image

    client = docker.from_env()
    base = ensure_image(client)
    tag = "taskforge-test/registry-copy:latest"
    client.images.get(base).tag(tag)
    try:
        monkeypatch.setenv(IMAGE_ENV, tag)
        box = DockerSandbox(SMALL)
        assert box.image() == base
        assert run(box, "print('from the named image')", tmp_path).output == "from the named image\n"
        # An image that is not here and cannot be pulled (a registry on a closed loopback port).
        monkeypatch.setenv(IMAGE_ENV, "127.0.0.1:9/taskforge/absent:1")
        with pytest.raises(SandboxUnavailable, match="cannot be pulled"):
            DockerSandbox(SMALL).exec(["true"], workspace=tmp_path, env={}, timeout=10)
    finally:
        client.images.remove(tag)
    assert base_spec().tag.startswith("taskforge-base:")


def test_what_runs_leave_is_kept_per_image(tmp_path: Path) -> None:
    """A baseline run in one image is not served for another (TASKFORGE_DOCKER_IMAGE naming
    another, a base image built from other packages): the keys of what runs leave hold the
    sandbox's identity, with docker a named image's id or the base image's spec. Positive
    control: keyed by the backend's name, as before, image B found image A's baseline."""
    require("docker")
    import io
    from dataclasses import replace
    from types import SimpleNamespace

    import docker

    from taskforge.languages.python.testing.baseline import (
        baseline_key,
        cached_baseline,
        keep_baseline,
    )
    from taskforge.model import Baseline
    from taskforge.sandbox.docker import DockerSandbox
    from taskforge.sandbox.images import IMAGE_ENV, base_spec, ensure_image

    client = docker.from_env()
    base = ensure_image(client)
    other, _log = client.images.build(
        fileobj=io.BytesIO(f"FROM {base}\nLABEL taskforge-test=identity\n".encode()), rm=True)
    try:
        a, b = DockerSandbox(SMALL, image=base), DockerSandbox(SMALL, image=other.id)
        assert (a.identity(), b.identity()) == (f"docker:{base}", f"docker:{other.id}")
        # taskforge's own base image: what it is built from, the same on every node
        with pytest.MonkeyPatch.context() as patched:
            patched.delenv(IMAGE_ENV, raising=False)
            own = DockerSandbox(SMALL)
            first = own.identity()
            assert first == f"docker:base-{base_spec().key}"
            # worked out once a sandbox (the spec runs dpkg; each task's bytecode asks)
            patched.setattr("taskforge.sandbox.images.base_spec", lambda: pytest.fail("again"))
            assert own.identity() == first
        snapshot, env = SimpleNamespace(id="snap"), SimpleNamespace(key="env")
        kept = Baseline(key=baseline_key(snapshot, env, 2, a.identity()),  # type: ignore[arg-type]
                        tests=("t",), stable=("t",), flaky=(), failing=(), run_seconds=(1.0,))
        keep_baseline(tmp_path, kept)

        def found(box: Sandbox) -> Baseline | None:
            runner = SimpleNamespace(cache=tmp_path, env=env, sandbox=box)
            return cached_baseline(snapshot, runner, repeats=2)  # type: ignore[arg-type]

        assert found(a) is not None and found(a).stable == ("t",)  # type: ignore[union-attr]
        assert found(b) is None
        # keyed by the backend's name (as before), image B is served image A's baseline
        with pytest.MonkeyPatch.context() as patched:
            patched.setattr(DockerSandbox, "identity", lambda self: self.name)
            kept_by_name = replace(kept, key=baseline_key(snapshot, env, 2, "docker"))  # type: ignore[arg-type]
            keep_baseline(tmp_path, kept_by_name)
            assert found(b) == kept_by_name
    finally:
        client.images.remove(other.id, force=True)


def test_the_base_image_key_follows_what_it_is_built_from() -> None:
    from dataclasses import replace

    from taskforge.sandbox.images import base_spec

    spec = base_spec()
    assert spec.key == base_spec().key
    assert replace(spec, mirror="http://mirror.invalid/debian").key == spec.key
    assert replace(spec, packages=(*spec.packages, "git")).key != spec.key
    assert replace(spec, suite="trixie").key != spec.key


def test_docker_runs_an_environment_from_its_own_image(tmp_path: Path) -> None:
    """A taskforge environment is baked into an image once (venv at a canonical path, the
    interpreter in a shared layer): the container sees no bind of the host's venv, tests run,
    and the next run reuses the image."""
    box = require("docker")
    import docker

    from taskforge.languages.python.env import build_environment, detect_spec
    from taskforge.languages.python.testing.runner import run_tests
    from taskforge.model import SourceSpec
    from taskforge.sandbox.images import CANONICAL_VENV, LABEL_ENV
    from taskforge.sources import ingest_source

    cache = Path(os.environ["TASKFORGE_CACHE"])
    spec = SourceSpec(kind="path", location=str(REPO_ROOT / "sample_repos" / "textkit"))
    snapshot = ingest_source(spec, cache, REPO_ROOT)
    env = build_environment(snapshot, detect_spec(snapshot.root, spec), cache)
    workspace = tmp_path / "ws"
    shutil.copytree(snapshot.root, workspace)
    first = run_tests(env, workspace, box, timeout=300)
    assert first.exit_code == 0 and len(first.passed()) > 100, first.log_tail

    # the host path goes in reversed: argv naming the venv is rewritten to the canonical path
    code = ("import os, sys; print(sys.prefix); print(os.path.exists(sys.argv[1][::-1]));"
            "import pytest; print(pytest.__file__.startswith(sys.prefix))")
    result = box.exec([str(env.venv / "bin" / "python"), "-c", code, str(env.venv)[::-1]],
                      workspace=workspace, env={"LANG": "C.UTF-8"}, timeout=60,
                      mounts=Mounts(readonly=(env.venv,)))
    assert result.output.split() == [str(CANONICAL_VENV), "False", "True"], result.output
    image, rest, moved = box.image_for(Mounts(readonly=(env.venv,)))  # type: ignore[attr-defined]
    assert image == box.image_for(Mounts(readonly=(env.venv,)))[0]  # type: ignore[attr-defined]
    assert rest is not None and env.venv not in rest.readonly
    assert moved == {str(env.venv): str(CANONICAL_VENV)}
    labels = docker.from_env().images.get(image).labels
    assert LABEL_ENV in labels and labels["taskforge.layer"] == LABEL_ENV


def test_the_interpreter_layer_keeps_the_standard_library_s_test_support() -> None:
    """zipp's suite imports `test.support.os_helper` (through jaraco.test); the docker layer of
    the interpreter left out all of `test/` (123 MB), so in docker two of its three test
    modules failed to import ("No module named 'test'"). The rest of `test/` stays out."""
    import io
    import tarfile

    from taskforge.sandbox.images import _skip_interpreter_parts

    stdlib = Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in ("test", "idlelib"):
            tar.add(stdlib / name, arcname=f"layer/lib/{stdlib.name}/{name}",
                    filter=_skip_interpreter_parts)
    with tarfile.open(fileobj=io.BytesIO(buf.getvalue())) as tar:
        names = tar.getnames()
    tops = {"/".join(n.split("/")[3:5]) for n in names}
    assert tops == {"test", "test/__init__.py", "test/support", "test/libregrtest"}
    assert f"layer/lib/{stdlib.name}/test/support/os_helper.py" in names
