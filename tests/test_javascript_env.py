"""npm environments for real, from the npm registry: a project without a lockfile gets one
resolved and recorded, another machine (another cache) installs the same tree from the
record with `npm ci`, tests run offline in the sandbox, and a release of the package itself
that a dependency pulls in is removed from node_modules (it holds the code tasks delete; the
dependency that wanted it then fails to load, which the baseline shows)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import make_project
from test_sandbox import require

from taskforge.languages import language_named
from taskforge.model import Snapshot, SourceSpec

pytestmark = pytest.mark.slow
JS = language_named("javascript")



def package(name: str) -> str:
    return json.dumps({"name": name, "version": "9.0.0", "type": "module",
                       "scripts": {"test": "node --test"}, "devDependencies": {"is-odd": "3.0.1"}})


# is-odd 3.0.1 depends on is-number ^6: a project named is-number gets an older release of
# itself in node_modules, as a package whose dev tool depends on it does.
FILES = {
    "package.json": package("calc"),
    "index.js": "export function isNumber(x) {\n  return typeof x === 'number';\n}\n",
    "test/odd.test.js": '''\
        import { test } from 'node:test';
        import assert from 'node:assert/strict';
        import { createRequire } from 'node:module';
        import { isNumber } from '../index.js';
        const isOdd = createRequire(import.meta.url)('is-odd');
        test('odd', () => { assert.equal(isOdd(3), true); assert.equal(isNumber(3), true); });
        ''',
}


def test_resolved_lockfile_is_recorded_and_rebuilds_the_same_tree(tmp_path: Path) -> None:
    root = make_project(tmp_path, FILES, name="calc")
    snapshot = Snapshot(id="e" * 40, name="calc", source=str(root), commit="0" * 40,
                        root=root, license=None)
    env = JS.prepare(SourceSpec(kind="path", location=str(root)), snapshot,
                     tmp_path / "cache-a", lambda _m: None).env
    assert "is-odd@3.0.1" in env.frozen
    assert any(f.startswith("is-number@6.") for f in env.frozen)
    record = JS.environment_record(env)
    assert record["node"] == record["python"] and record["test_command"] == "node-test"
    assert '"is-odd"' in record["lockfile"]
    # another machine: a fresh cache, the record's lockfile, `npm ci`
    again = JS.environment_from_record(json.loads(json.dumps(record)), snapshot,
                                       tmp_path / "cache-b")
    assert again.venv != env.venv and again.frozen == env.frozen
    # this machine: the environment it resolved is the record's
    assert JS.environment_from_record(record, snapshot, tmp_path / "cache-a").venv == env.venv
    workspace = tmp_path / "ws"
    shutil.copytree(root, workspace)
    run = JS.run_tests(again, workspace, require("bwrap"), timeout=120)  # no network there
    assert run.outcomes == {"test/odd.test.js::odd": "passed"}, run.log_tail


def test_a_release_of_the_package_itself_is_removed(tmp_path: Path) -> None:
    root = make_project(tmp_path, {**FILES, "package.json": package("is-number")},
                        name="is-number")
    snapshot = Snapshot(id="3" * 40, name="is-number", source=str(root), commit="0" * 40,
                        root=root, license=None)
    prepared = JS.prepare(SourceSpec(kind="path", location=str(root)), snapshot,
                          tmp_path / "cache", lambda _m: None)
    assert not (prepared.env.venv / "node_modules" / "is-number").exists()
    assert (prepared.env.venv / "node_modules" / "is-odd").is_dir()
    assert any("node_modules/is-number" in note for note in prepared.notes)


def test_the_projects_lockfile_is_installed_with_npm_ci(tmp_path: Path) -> None:
    root = make_project(tmp_path, FILES, name="calc")
    first = JS.prepare(SourceSpec(kind="path", location=str(root)),
                       Snapshot(id="f" * 40, name="x", source=str(root), commit="0" * 40,
                                root=root, license=None), tmp_path / "cache-a", lambda _m: None)
    lock = json.loads(JS.environment_record(first.env)["lockfile"])
    (root / "package-lock.json").write_text(json.dumps(lock))
    snapshot = Snapshot(id="1" * 40, name="x", source=str(root), commit="0" * 40, root=root,
                        license=None)
    env = JS.prepare(SourceSpec(kind="path", location=str(root)), snapshot,
                     tmp_path / "cache-c", lambda _m: None).env
    assert env.frozen == first.env.frozen
    assert json.loads((env.venv.parent / "environment.json").read_text())["lockfile_from"] \
        == "project"
    record = JS.environment_record(env)
    assert record["lockfile"] is None  # the snapshot holds it
    assert JS.environment_from_record(record, snapshot, tmp_path / "cache-c").venv == env.venv


def test_a_dependency_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    from taskforge.errors import UserError

    root = make_project(tmp_path, {**FILES, "package.json": json.dumps(
        {"name": "x", "devDependencies": {"taskforge-no-such-package-xyz": "1.0.0"}})})
    snapshot = Snapshot(id="2" * 40, name="x", source=str(root), commit="0" * 40, root=root,
                        license=None)
    with pytest.raises(UserError, match="cannot build the environment") as info:
        JS.prepare(SourceSpec(kind="path", location=str(root)), snapshot, tmp_path / "c",
                   lambda _m: None)
    assert "\n" not in str(info.value)


def test_an_npm_source_is_the_registry_tarball(tmp_path: Path) -> None:
    from conftest import run_cli

    from taskforge.sources.npm import ingest_npm

    snapshot = ingest_npm("qs@6.13.0", tmp_path / "cache")
    assert snapshot.source == "npm:qs@6.13.0" and snapshot.name == "qs"
    assert json.loads((snapshot.root / "package.json").read_text())["version"] == "6.13.0"
    assert (snapshot.root / "test").is_dir()  # qs ships its tests
    assert ingest_npm("qs@6.13.0", tmp_path / "cache") == snapshot  # cached
    # qs runs them with tape; its devDependency `evalmd` pulls a git repository from a code
    # host, which a machine that reaches only the registry cannot install: a one-line reason,
    # exit 2 (elsewhere it ingests, tape its runner)
    proc = run_cli("ingest", "npm:qs@6.13.0", "--cache", str(tmp_path / "cache"),
                   cwd=tmp_path)
    if proc.returncode == 2:
        assert "cannot build the environment" in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr
    else:
        assert proc.returncode == 0 and "tests: tape" in proc.stderr, proc.stderr
