"""Sources become content-addressed snapshots: local paths, real git repositories, PyPI pins.

Every test uses its own cache directory so "was it copied again?" has a clean answer.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import commit_all, git, init_repo, make_project

from taskforge.errors import UserError
from taskforge.model import SourceSpec
from taskforge.sources import ingest_source

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": """\
        def double(x):
            return x * 2
    """,
    "tests/test_core.py": """\
        from pkg.core import double


        def test_double():
            assert double(2) == 4
    """,
    "README.md": "a small project\n",
}


def snapshot_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def ingest_path(location: Path | str, cache: Path, base_dir: Path | None = None):
    return ingest_source(SourceSpec(kind="path", location=str(location)), cache,
                         base_dir or Path.cwd())


def ingest_git(url: str, ref: str | None, cache: Path):
    return ingest_source(SourceSpec(kind="git", location=url, ref=ref), cache, Path.cwd())


# ---------------------------------------------------------------- path sources


def test_path_snapshot_is_stable_and_not_copied_again(tmp_path: Path) -> None:
    root = make_project(tmp_path, FILES)
    cache = tmp_path / "cache"
    first = ingest_path(root, cache)
    assert first.root.is_dir()
    assert first.root.is_relative_to(cache)
    assert snapshot_files(first.root) == set(FILES)
    assert (first.root / "pkg/core.py").read_text() == (root / "pkg/core.py").read_text()
    snapshot_dir = first.root.parent
    before = {p: os.stat(p) for p in (snapshot_dir, first.root, first.root / "pkg/core.py")}

    second = ingest_path(root, cache)
    assert second.id == first.id
    assert second.root == first.root
    assert second.commit == first.commit
    for path, stat in before.items():
        now = os.stat(path)
        assert (now.st_ino, now.st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns), path


def test_path_snapshot_id_is_content_addressed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    a = ingest_path(make_project(tmp_path, FILES, name="a"), cache)
    b = ingest_path(make_project(tmp_path, FILES, name="b"), cache)
    assert a.id == b.id  # same files, different directories
    changed = make_project(tmp_path, {**FILES, "pkg/core.py": "def double(x):\n    return x + x\n"},
                           name="c")
    assert ingest_path(changed, cache).id != a.id


def test_relative_path_is_resolved_against_base_dir(tmp_path: Path) -> None:
    root = make_project(tmp_path, FILES)
    snapshot = ingest_path("proj", tmp_path / "cache", base_dir=tmp_path)
    assert snapshot.id == ingest_path(root, tmp_path / "cache").id
    assert snapshot.name == "proj"


def test_artifacts_and_vcs_dirs_are_left_out(tmp_path: Path) -> None:
    clean = make_project(tmp_path, FILES, name="clean")
    dirty = make_project(tmp_path, {
        **FILES,
        "pkg/__pycache__/core.cpython-311.pyc": "stale bytecode of the original",
        "pkg/core.pyc": "more bytecode",
        ".pytest_cache/v/cache/lastfailed": "{}",
        "build/lib/pkg/core.py": "def double(x):\n    return x * 2\n",
        "pkg.egg-info/PKG-INFO": "Name: pkg\n",
        ".coverage": "coverage data",
        ".mypy_cache/3.11/pkg/core.data.json": "{}",
        ".venv/bin/python": "not really",
    }, name="dirty")
    init_repo(dirty)  # a .git directory must not end up in the snapshot either
    cache = tmp_path / "cache"
    snapshot = ingest_path(dirty, cache)
    files = snapshot_files(snapshot.root)
    assert files == set(FILES)
    assert not any("__pycache__" in f or f.endswith(".pyc") or f.startswith(".git/") for f in files)
    assert snapshot.id == ingest_path(clean, cache).id


def test_symlink_out_of_the_tree_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host credentials\n")
    root = make_project(tmp_path, FILES)
    link = root / "pkg" / "data.txt"
    link.symlink_to(secret)
    with pytest.raises(UserError) as info:
        ingest_path(root, tmp_path / "cache")
    assert str(link) in str(info.value)
    assert "symlink" in str(info.value)
    assert not (tmp_path / "cache" / "snapshots").exists() or not any(
        (tmp_path / "cache" / "snapshots").glob("*/tree"))


def test_symlink_inside_the_tree_is_kept(tmp_path: Path) -> None:
    root = make_project(tmp_path, FILES)
    (root / "docs").mkdir()
    (root / "docs" / "README.md").symlink_to(Path("..") / "README.md")
    snapshot = ingest_path(root, tmp_path / "cache")
    copied = snapshot.root / "docs" / "README.md"
    assert copied.is_symlink()
    assert copied.read_text() == "a small project\n"


def test_missing_path_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"does-not-exist.*does not exist"):
        ingest_path(tmp_path / "does-not-exist", tmp_path / "cache")


def test_license_is_detected(tmp_path: Path) -> None:
    root = make_project(tmp_path, {
        **FILES,
        "LICENSE": "Permission is hereby granted, free of charge, to any person obtaining a copy\n",
    })
    assert ingest_path(root, tmp_path / "cache").license == "MIT"
    bare = make_project(tmp_path, FILES, name="unlicensed")
    assert ingest_path(bare, tmp_path / "cache").license is None



# The heads and tails of real GNU texts: the version line, and the sample notice of the
# appendix, whose "or (at your option) any later version" is not the project's choice.
GNU_APPENDIX = """
                     END OF TERMS AND CONDITIONS

            How to Apply These Terms to Your New Programs
    This program is free software; you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation; either version 2 of the License, or
    (at your option) any later version.
"""
GPL2 = ("                    GNU GENERAL PUBLIC LICENSE\n                       Version 2, June 1991\n"
        "\n Copyright (C) 1989, 1991 Free Software Foundation, Inc.\n" + GNU_APPENDIX)
LGPL21 = ("                  GNU LESSER GENERAL PUBLIC LICENSE\n"
          "                       Version 2.1, February 1999\n" + GNU_APPENDIX)
BSD2 = ("Copyright (c) 2020, someone\nRedistribution and use in source and binary forms, with or "
        "without\nmodification, are permitted provided that the following conditions are met:\n"
        "1. Redistributions of source code must retain the above copyright notice.\n")
BSD3 = BSD2 + ("3. Neither the name of the copyright holder nor the names of its\n"
               "   contributors may be used to endorse or promote products\n")


def _license_of(tmp_path: Path, name: str, files: dict[str, str]) -> str | None:
    return ingest_path(make_project(tmp_path, {**FILES, **files}, name=name),
                       tmp_path / "cache").license


def test_license_texts_and_metadata_name_the_right_license(tmp_path: Path) -> None:
    """Each case was answered wrongly before: every GNU text was GPL-3.0-only, the "BSD
    License" classifier was BSD-3-Clause, any SPDX-shaped string was taken as it is."""
    assert _license_of(tmp_path, "gpl2", {"COPYING": GPL2}) == "GPL-2.0-only"
    assert _license_of(tmp_path, "lgpl", {"LICENSE": LGPL21}) == "LGPL-2.1-only"
    notice = "Foo is free software ... either version 2 of the License, or (at your option) " \
             "any later version.\n\n"
    assert _license_of(tmp_path, "gpl2plus", {"COPYING": notice + GPL2}) == "GPL-2.0-or-later"
    bsd_classifier = ('[project]\nname = "p"\nversion = "1"\n'
                      'classifiers = ["License :: OSI Approved :: BSD License"]\n')
    assert _license_of(tmp_path, "bsd2", {"pyproject.toml": bsd_classifier,
                                          "LICENSE": BSD2}) == "BSD-2-Clause"
    assert _license_of(tmp_path, "bsd3", {"pyproject.toml": bsd_classifier,
                                          "LICENSE": BSD3}) == "BSD-3-Clause"
    assert _license_of(tmp_path, "bsd", {"pyproject.toml": bsd_classifier}) is None
    # Not SPDX (an unknown id, a name): the LICENSE file decides, or it stays unknown.
    assert _license_of(tmp_path, "fake", {"pyproject.toml":
                                          '[project]\nname = "p"\nversion = "1"\n'
                                          'license = "Free-For-All"\n'}) is None
    assert _license_of(tmp_path, "expr", {"pyproject.toml":
                                          '[project]\nname = "p"\nversion = "1"\n'
                                          'license = "mit or apache-2.0"\n'}) == "MIT OR Apache-2.0"
    assert _license_of(tmp_path, "pkginfo", {"PKG-INFO": "Metadata-Version: 2.4\nName: p\n"
                                             "License-Expression: Nonsense-1.0\n"
                                             "License: GPL-3.0+\n"}) == "GPL-3.0-or-later"


def test_license_expressions_against_select_licenses() -> None:
    from taskforge.sources.license import license_allowed
    assert license_allowed("MIT OR Apache-2.0", ("Apache-2.0",))
    assert not license_allowed("MIT AND Apache-2.0", ("Apache-2.0",))
    assert license_allowed("MIT AND Apache-2.0", ("Apache-2.0", "MIT"))
    assert not license_allowed("(MIT OR GPL-3.0-only) AND BSD-2-Clause", ("MIT",))
    assert not license_allowed(None, ("MIT",))


# ----------------------------------------------------------------- git sources


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, str | Path]:
    """A real repository: two commits on main and one on a `feature` branch, plus a bare clone."""
    root = make_project(tmp_path, FILES, name="origin")
    init_repo(root)
    first = commit_all(root, "first")
    (root / "pkg" / "core.py").write_text("def double(x):\n    return x + x\n")
    second = commit_all(root, "second")
    git("checkout", "-q", "-b", "feature", cwd=root)
    (root / "pkg" / "extra.py").write_text("def triple(x):\n    return 3 * x\n")
    feature = commit_all(root, "feature")
    git("checkout", "-q", "main", cwd=root)
    git("tag", "v1", first, cwd=root)
    bare = tmp_path / "bare.git"
    git("clone", "-q", "--bare", str(root), str(bare), cwd=tmp_path)
    return {"root": root, "bare": bare, "first": first, "second": second, "feature": feature}


def tree_of(repo_root: Path, commit: str) -> str:
    return git("rev-parse", f"{commit}^{{tree}}", cwd=repo_root)


def test_git_file_url_pinned_to_a_commit(tmp_path: Path, repo: dict) -> None:
    url = f"file://{repo['root']}"
    snapshot = ingest_git(url, repo["first"], tmp_path / "cache")
    assert snapshot.commit == repo["first"]
    assert snapshot.id == tree_of(repo["root"], repo["first"])
    assert (snapshot.root / "pkg/core.py").read_text() == "def double(x):\n    return x * 2\n"
    assert snapshot_files(snapshot.root) == set(FILES)
    assert snapshot.name == "origin"
    assert repo["first"] in snapshot.source or url in snapshot.source


def test_git_without_ref_takes_head(tmp_path: Path, repo: dict) -> None:
    snapshot = ingest_git(f"file://{repo['root']}", None, tmp_path / "cache")
    assert snapshot.commit == repo["second"]
    assert (snapshot.root / "pkg/core.py").read_text() == "def double(x):\n    return x + x\n"


def test_git_bare_repo_path_pinned_to_a_branch(tmp_path: Path, repo: dict) -> None:
    snapshot = ingest_git(str(repo["bare"]), "feature", tmp_path / "cache")
    assert snapshot.commit == repo["feature"]
    assert snapshot.id == tree_of(repo["root"], repo["feature"])
    assert (snapshot.root / "pkg/extra.py").is_file()
    assert snapshot.name == "bare"


def test_git_tag_and_short_sha(tmp_path: Path, repo: dict) -> None:
    cache = tmp_path / "cache"
    assert ingest_git(str(repo["bare"]), "v1", cache).commit == repo["first"]
    assert ingest_git(str(repo["bare"]), repo["second"][:10], cache).commit == repo["second"]


def test_git_branch_is_fetched_again_when_it_moves(tmp_path: Path, repo: dict) -> None:
    cache = tmp_path / "cache"
    url = f"file://{repo['root']}"
    assert ingest_git(url, "main", cache).commit == repo["second"]
    (repo["root"] / "pkg" / "core.py").write_text("def double(x):\n    return 2 * x\n")
    third = commit_all(repo["root"], "third")
    moved = ingest_git(url, "main", cache)
    assert moved.commit == third
    assert (moved.root / "pkg/core.py").read_text() == "def double(x):\n    return 2 * x\n"


def test_git_and_path_sources_of_the_same_files_share_the_snapshot(tmp_path: Path,
                                                                   repo: dict) -> None:
    cache = tmp_path / "cache"
    from_git = ingest_git(f"file://{repo['root']}", repo["second"], cache)
    from_path = ingest_path(repo["root"], cache)  # the working copy of main (its .git left out)
    assert from_path.id == from_git.id


def test_uncloneable_url(tmp_path: Path) -> None:
    url = f"file://{tmp_path}/no-such-repository"
    with pytest.raises(UserError) as info:
        ingest_git(url, None, tmp_path / "cache")
    message = str(info.value)
    assert "cannot clone" in message
    assert url in message
    assert "\n" not in message


def test_ref_that_does_not_exist(tmp_path: Path, repo: dict) -> None:
    for ref in ("no-such-branch", "0" * 40):
        with pytest.raises(UserError) as info:
            ingest_git(f"file://{repo['root']}", ref, tmp_path / "cache")
        assert ref in str(info.value)
        assert "does not exist" in str(info.value)


def test_git_commit_without_files_is_a_user_error(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    init_repo(root)
    git("commit", "-q", "--allow-empty", "-m", "nothing yet", cwd=root)
    with pytest.raises(UserError) as info:
        ingest_git(f"file://{root}", None, tmp_path / "cache")
    assert str(root) in str(info.value)


# ---------------------------------------------------------------- pypi sources


@pytest.mark.parametrize("spec", ["cachetools", "cachetools>=5", "cachetools==", "==5.3.3"])
def test_pypi_requires_a_pinned_version(tmp_path: Path, spec: str) -> None:
    with pytest.raises(UserError) as info:
        ingest_source(SourceSpec(kind="pypi", location=spec), tmp_path / "cache", tmp_path)
    assert f"pypi:{spec}" in str(info.value)
    assert "NAME==VERSION" in str(info.value)


# ---------------------------------------------------------------- sdists (unpacked archives)


def test_an_unpacked_sdist_is_snapshotted_whole_despite_its_gitignore(tmp_path: Path) -> None:
    from taskforge.sources.store import snapshot_from_tree

    root = make_project(tmp_path, {**FILES, ".gitignore": "pkg/_version.py\n*.egg-info/\n",
                                   "pkg/_version.py": "__version__ = '1.0'\n",
                                   "pkg.egg-info/PKG-INFO": "Name: pkg\n",
                                   "pkg/__pycache__/core.cpython-311.pyc": "bytes"}, name="sdist")
    as_checkout = snapshot_from_tree(root, name="pkg", source="checkout", cache=tmp_path / "c1")
    assert "pkg/_version.py" not in snapshot_files(as_checkout.root)
    as_archive = snapshot_from_tree(root, name="pkg", source="sdist", cache=tmp_path / "c2",
                                    archive=True)
    files = snapshot_files(as_archive.root)
    assert "pkg/_version.py" in files  # shipped on purpose
    assert not any("egg-info" in f or "__pycache__" in f for f in files)  # artifacts pruned


def test_a_build_written_version_module_is_restored_from_pkg_info(tmp_path: Path) -> None:
    from taskforge.sources.generated import restore_version_files

    root = make_project(tmp_path, {**FILES, "PKG-INFO": "Metadata-Version: 2.1\nName: pkg\n"
                                                        "Version: 4.17.0\n",
                                   "pyproject.toml": '[tool.hatch.build.hooks.vcs]\n'
                                                     'version-file = "pkg/_version.py"\n'})
    notes = restore_version_files(root)
    assert notes and "pkg/_version.py" in notes[0]
    namespace: dict = {}
    exec((root / "pkg/_version.py").read_text(), namespace)
    assert namespace["__version__"] == "4.17.0" and namespace["version_tuple"] == (4, 17, 0)
    assert restore_version_files(root) == []  # present now: left alone


# ---------------------------------------------------------------- several sources, licenses


def test_failing_and_unlicensed_sources_are_set_aside_and_the_rest_go_on(tmp_path: Path,
                                                                        tf_cache: Path) -> None:
    from taskforge.ingest import ingest_sources
    from taskforge.sandbox import get_sandbox

    mit = make_project(tmp_path, {**FILES, "LICENSE": "Permission is hereby granted, free of "
                                                      "charge, to any person\n"}, name="mit")
    apache = make_project(tmp_path, {**FILES, "LICENSE": "Apache License\nVersion 2.0\n"},
                          name="apache")
    no_tests = make_project(tmp_path, {"pkg/__init__.py": "", "LICENSE": "Permission is hereby "
                                       "granted, free of charge\n"}, name="notests")
    specs = tuple(SourceSpec(kind="path", location=str(p)) for p in (no_tests, apache, mit))
    done, aside = ingest_sources(specs, cache=tf_cache, base_dir=tmp_path,
                                 sandbox=get_sandbox("none"), repeats=2, timeout=120,
                                 licenses=("MIT",))
    assert [d.snapshot.name for d in done] == ["mit"]
    assert done[0].snapshot.license == "MIT"
    reasons = {a.spec.location: a.reason for a in aside}
    assert reasons[str(no_tests)].startswith("no tests found")
    assert reasons[str(apache)] == "license Apache-2.0 is not in select.licenses (MIT)"
    assert all(a.to_dict()["failed"] for a in aside)
    with pytest.raises(UserError, match="no tests found"):  # nothing left: the first reason
        ingest_sources(specs[:1], cache=tf_cache, base_dir=tmp_path, sandbox=get_sandbox("none"),
                       repeats=2, timeout=120)


def test_generate_goes_on_past_a_failing_source_and_the_report_says_why(tmp_path: Path) -> None:
    import html
    import json

    from conftest import run_cli, write_recipe

    good = make_project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/core.py": "def clamp(x, low, high):\n    if x < low:\n        return low\n"
                       "    if x > high:\n        return high\n    return x\n",
        "tests/test_core.py": "from pkg.core import clamp\n\ndef test_clamp():\n"
                              "    assert clamp(5, 0, 3) == 3\n    assert clamp(-1, 0, 3) == 0\n",
        "LICENSE": "Permission is hereby granted, free of charge, to any person\n"}, name="good")
    broken = make_project(tmp_path, {"pkg/__init__.py": "", "pyproject.toml": "[project\n"},
                          name="broken")
    recipe = write_recipe(tmp_path / "two.yaml", f"""\
        name: two
        sources:
          - path: {broken}
          - path: {good}
        sandbox: none
    """)
    out = tmp_path / "out"
    proc = run_cli("generate", str(recipe), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"{broken}: set aside:" in proc.stderr
    # the summary's source table says why the blank row is blank; so does `stats`
    assert f"set aside: {broken}: " in proc.stdout
    assert f"set aside: {broken}: " in run_cli("stats", str(out), cwd=tmp_path).stdout
    manifest = json.loads((out / "manifest.json").read_text())
    by_name = {s["name"]: s for s in manifest["sources"]}
    assert by_name["good"]["emitted"] == 1
    assert by_name["broken"]["failed"]
    # The run's report.html lists it with its reason among the set-aside sources.
    page = (out / "report.html").read_text()
    aside = page[page.index('<section id="set-aside-sources">'):]
    assert html.escape(by_name["broken"]["failed"]) in aside[:aside.index("</section>")]
    record = json.loads((out / "tasks-00000-of-00001.jsonl").read_text().splitlines()[0])
    assert record["license"] == "MIT"

    report = run_cli("ingest", str(recipe), "--out", str(out), "--json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    rows = {r["name"]: r for r in data["sources"]}
    assert rows["good"]["tasks"] == 1 and rows["good"]["tried"] == 1 and rows["good"]["yield"] == 1
    assert rows["good"]["candidates"] == 1 and rows["good"]["stable_share"] == 1
    assert rows["good"]["env_build_seconds"] > 0 and len(rows["good"]["baseline_seconds"]) == 2
    assert rows["good"]["alone_seconds"] > 0 and rows["good"]["alone_unmeasured"] == 0
    assert rows["good"]["decisions"]
    assert rows["broken"]["failed"] == by_name["broken"]["failed"]
    assert data["totals"]["ingested"] == 1 and data["totals"]["yield"] == 1
    text = run_cli("ingest", str(recipe), "--out", str(out), cwd=tmp_path).stdout
    assert f"failed: {broken}: " in text and "ingested 1 of 2 sources" in text


def test_a_git_failure_in_one_source_sets_it_aside_and_the_run_goes_on(tmp_path: Path,
                                                                       tf_cache: Path) -> None:
    """A cached clone left empty (an interrupted run, a full disk) made gitpython raise, and the
    exception ended the whole multi-source run instead of setting that one source aside."""
    from taskforge.cache import digest
    from taskforge.ingest import ingest_sources
    from taskforge.sandbox import get_sandbox

    repo = make_project(tmp_path, FILES, name="damaged")
    init_repo(repo)
    commit_all(repo, "initial")
    cache = tmp_path / "cache"
    (cache / "git" / digest("clone", str(repo))[:24]).mkdir(parents=True)
    good = make_project(tmp_path, FILES, name="good")
    specs = (SourceSpec(kind="git", location=str(repo)), SourceSpec(kind="path",
                                                                    location=str(good)))
    done, aside = ingest_sources(specs, cache=cache, base_dir=tmp_path,
                                 sandbox=get_sandbox("none"), repeats=2, timeout=120)
    assert [d.snapshot.name for d in done] == ["good"]
    assert len(aside) == 1 and aside[0].reason.startswith(
        "git operation failed (InvalidGitRepositoryError)")


def test_test_files_that_fail_to_import_are_reported_and_min_stable_tests_sets_aside(
        tmp_path: Path, tf_cache: Path) -> None:
    """Five of six test files failing to import was accepted without a word."""
    from taskforge.ingest import ingest_sources
    from taskforge.sandbox import get_sandbox

    broken = {f"tests/test_m{i}.py": f"import missing_helper_{i}\n\ndef test_x():\n    pass\n"
              for i in range(5)}
    root = make_project(tmp_path, {**FILES, **broken}, name="mostly-broken")
    spec = SourceSpec(kind="path", location=str(root))
    kwargs = {"cache": tf_cache, "base_dir": tmp_path, "sandbox": get_sandbox("none"),
              "repeats": 2, "timeout": 120}
    lines: list[str] = []
    done, aside = ingest_sources((spec,), log=lines.append, **kwargs)
    errors = done[0].baseline.collection_errors
    assert errors == {f"tests.test_m{i}": f"ModuleNotFoundError: No module named "
                                          f"'missing_helper_{i}'" for i in range(5)}
    assert any("5 test files fail to import: tests.test_m0 (ModuleNotFoundError" in line
               for line in lines)
    done, aside = ingest_sources((spec,), min_stable_tests=2, need_one=False, **kwargs)
    assert not done and aside[0].reason.startswith(
        "1 stable tests, fewer than select.min_stable_tests (2); 5 test files fail to import")
