"""Git sources for real: shallow where the ref allows, submodules reported, LFS pointers
rejected, a size limit. Every repository here is a real one made with the git CLI."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import GIT_ENV, commit_all, git, init_repo, make_project

from taskforge.cache import digest
from taskforge.errors import UserError
from taskforge.ingest import versioned_by_git
from taskforge.model import SourceSpec
from taskforge.sources import ingest_source, source_notes

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def double(x):\n    return x * 2\n",
    "tests/test_core.py": "from pkg.core import double\n\ndef test_double():\n"
                          "    assert double(2) == 4\n",
}
LFS_POINTER = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
               "size 12345\n")


@pytest.fixture
def history(tmp_path: Path) -> dict[str, str | Path]:
    """Three commits on main, a tag on the first."""
    root = make_project(tmp_path, FILES, name="origin")
    init_repo(root)
    first = commit_all(root, "first")
    (root / "pkg" / "core.py").write_text("def double(x):\n    return x + x\n")
    second = commit_all(root, "second")
    (root / "README.md").write_text("readme\n")
    third = commit_all(root, "third")
    git("tag", "-a", "v1", "-m", "release 1", first, cwd=root)
    return {"root": root, "first": first, "second": second, "third": third}


def fetch(url: str, ref: str | None, cache: Path, max_mb: float | None = None):
    return ingest_source(SourceSpec(kind="git", location=url, ref=ref), cache, Path.cwd(), max_mb,
                         versioned_by_git)


def clone_of(cache: Path, url: str) -> Path:
    return cache / "git" / digest("clone", url)[:24]


def commits_in(git_dir: Path) -> int:
    """Commit objects in the repository, reachable from a ref or not (FETCH_HEAD is none)."""
    listing = git("cat-file", "--batch-all-objects", "--batch-check=%(objecttype)", cwd=git_dir)
    return listing.split().count("commit")


@pytest.mark.parametrize("ref_key", ["second", "v1", "main", None])
def test_full_sha_tag_branch_and_head_are_fetched_shallow(tmp_path: Path, history: dict,
                                                          ref_key: str | None) -> None:
    cache = tmp_path / "cache"
    url = f"file://{history['root']}"
    ref = {"second": history["second"], "v1": "v1", "main": "main", None: None}[ref_key]
    expected = {"second": history["second"], "v1": history["first"], "main": history["third"],
                None: history["third"]}[ref_key]
    snapshot = fetch(url, ref, cache)
    assert snapshot.commit == expected
    clone = clone_of(cache, url)
    assert (clone / "shallow").is_file()
    assert commits_in(clone) == 1  # no history came along
    assert source_notes(snapshot, cache)[0].startswith("shallow fetch (depth 1)")


def test_short_sha_needs_the_full_history(tmp_path: Path, history: dict) -> None:
    cache = tmp_path / "cache"
    url = f"file://{history['root']}"
    snapshot = fetch(url, history["first"][:9], cache)
    assert snapshot.commit == history["first"]
    assert (snapshot.root / "pkg/core.py").read_text() == FILES["pkg/core.py"]
    assert not (clone_of(cache, url) / "shallow").exists()
    assert commits_in(clone_of(cache, url)) == 3
    assert source_notes(snapshot, cache)[0].startswith("full fetch")


def test_local_bare_repository_path_is_fetched_shallow_too(tmp_path: Path, history: dict) -> None:
    bare = tmp_path / "mirror.git"
    git("clone", "-q", "--bare", str(history["root"]), str(bare), cwd=tmp_path)
    cache = tmp_path / "cache"
    snapshot = fetch(str(bare), "main", cache)  # a plain path: git ignores --depth for those
    assert snapshot.commit == history["third"]
    assert commits_in(clone_of(cache, str(bare))) == 1


def test_submodules_are_reported_and_left_out(tmp_path: Path, history: dict) -> None:
    lib = make_project(tmp_path, {"lib.py": "VALUE = 1\n"}, name="lib")
    init_repo(lib)
    commit_all(lib, "lib")
    root = history["root"]
    subprocess.run(["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib),
                    "vendor/lib"], cwd=root, env={**GIT_ENV, "PATH": "/usr/bin:/bin"},
                   check=True, capture_output=True)
    with_submodule = commit_all(root, "vendor lib")
    cache = tmp_path / "cache"
    snapshot = fetch(f"file://{root}", with_submodule, cache)
    notes = source_notes(snapshot, cache)
    assert any("submodules not fetched" in n and "vendor/lib" in n and str(lib) in n
               for n in notes), notes
    assert not (snapshot.root / "vendor/lib/lib.py").exists()
    assert (snapshot.root / ".gitmodules").is_file()


def test_lfs_pointer_files_are_rejected_with_a_reason(tmp_path: Path, history: dict) -> None:
    root = history["root"]
    (root / "data").mkdir()
    (root / "data" / "weights.bin").write_text(LFS_POINTER)
    (root / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs -text\n")
    commit = commit_all(root, "lfs data")
    url = f"file://{root}"
    with pytest.raises(UserError) as info:
        fetch(url, commit, tmp_path / "cache")
    message = str(info.value)
    assert url in message and "LFS" in message and "data/weights.bin" in message
    assert "\n" not in message


def test_size_limit(tmp_path: Path, history: dict) -> None:
    root = history["root"]
    (root / "big.txt").write_text("x" * 50_000)
    commit = commit_all(root, "big file")
    url = f"file://{root}"
    with pytest.raises(UserError) as info:
        fetch(url, commit, tmp_path / "cache", max_mb=0.01)
    assert "over the size limit of 0.01 MB" in str(info.value) and url in str(info.value)
    assert fetch(url, commit, tmp_path / "cache", max_mb=1).commit == commit


@pytest.mark.parametrize("kind", ["git", "path"])
def test_export_attributes_do_not_change_the_snapshot(tmp_path: Path, kind: str) -> None:
    """`git archive` obeyed the project's .gitattributes: `tests/ export-ignore` left the
    tests out of the snapshot, and `export-subst` filled pluggy's .git_archival.txt in with
    the snapshot's commit and no tag, from which setuptools-scm read version 0.0 (pluggy
    0.0, and pytest could not be installed with it). The snapshot is the files as committed."""
    archival = "node: $Format:%H$\ndescribe-name: $Format:%(describe:tags=true)$\n"
    root = make_project(tmp_path, {**FILES, ".git_archival.txt": archival,
                                   ".gitattributes": ".git_archival.txt export-subst\n"
                                                     "tests/ export-ignore\n"}, name="origin")
    if kind == "git":
        init_repo(root)
        commit_all(root, "first")
    snapshot = ingest_source(SourceSpec(kind=kind, location=str(root)), tmp_path / "cache",
                             tmp_path)
    assert (snapshot.root / "tests/test_core.py").is_file()
    assert (snapshot.root / ".git_archival.txt").read_text() == archival


# A project that reads its version from git with no fallback (hatch-vcs): only tags give it.
SCM_FILES = {
    **FILES,
    "pyproject.toml": '[build-system]\nrequires = ["hatchling", "hatch-vcs"]\n'
                      'build-backend = "hatchling.build"\n\n'
                      '[project]\nname = "pkg"\ndynamic = ["version"]\n\n'
                      '[tool.hatch.version]\nsource = "vcs"\n',
}


def scm_history(tmp_path: Path, files: dict[str, str],
                annotated: bool = True) -> dict[str, str | Path]:
    """Release 1.2.3 tagged `v1.2.3` (annotated or light), then two commits."""
    root = make_project(tmp_path, files, name="scm-origin")
    init_repo(root)
    released = commit_all(root, "release")
    git("tag", *(["-a", "-m", "release 1.2.3"] if annotated else []), "v1.2.3", cwd=root)
    (root / "pkg" / "core.py").write_text("def double(x):\n    return x + x\n")
    commit_all(root, "after the release")
    (root / "README.md").write_text("readme\n")
    head = commit_all(root, "two after")
    return {"root": root, "released": released, "head": head}


@pytest.mark.parametrize("annotated", [True, False], ids=["annotated", "light"])
def test_the_tag_on_the_commit_gives_the_version(tmp_path: Path, annotated: bool) -> None:
    """A shallow fetch has no tags: the remote's listing names the tag on the commit, and only
    that ref is fetched (the commit is here already)."""
    history = scm_history(tmp_path, SCM_FILES, annotated)
    cache = tmp_path / "cache"
    url = f"file://{history['root']}"
    snapshot = fetch(url, history["released"], cache)
    assert snapshot.describe == f"v1.2.3-0-g{history['released'][:7]}"
    assert source_notes(snapshot, cache)[-1] == f"version tag: {snapshot.describe} (git describe)"
    clone = clone_of(cache, url)
    assert (clone / "shallow").is_file() and commits_in(clone) == 1  # still one commit
    # Remembered with the snapshot: a pinned commit is not fetched again.
    assert fetch(url, history["released"], cache).describe == snapshot.describe


def test_commits_after_the_tag_are_counted_from_the_history(tmp_path: Path) -> None:
    """The head is two commits past v1.2.3: the history and tags come into a scratch
    repository, so the cached mirror stays a shallow, complete clone."""
    history = scm_history(tmp_path, SCM_FILES)
    cache = tmp_path / "cache"
    url = f"file://{history['root']}"
    snapshot = fetch(url, "main", cache)
    assert snapshot.commit == history["head"]
    assert snapshot.describe == f"v1.2.3-2-g{history['head'][:7]}"
    clone = clone_of(cache, url)
    assert commits_in(clone) == 1 and git("config", "--get-regexp", "remote", cwd=clone) \
        .count("promisor") == 0
    assert not list((cache / "tmp").iterdir())  # the scratch repository is gone


def test_no_tag_no_version_and_the_note_says_why(tmp_path: Path) -> None:
    root = make_project(tmp_path, SCM_FILES, name="untagged")
    init_repo(root)
    commit_all(root, "no release yet")
    cache = tmp_path / "cache"
    snapshot = fetch(f"file://{root}", None, cache)
    assert snapshot.describe is None
    assert source_notes(snapshot, cache)[-1] == "version tag: none (the repository has no tags)"


def test_a_project_that_does_not_read_git_is_not_described(tmp_path: Path) -> None:
    """No tags asked for (no listing, no history) when the build does not need a version."""
    history = scm_history(tmp_path, FILES)
    cache = tmp_path / "cache"
    snapshot = fetch(f"file://{history['root']}", history["released"], cache)
    assert snapshot.describe is None
    assert not any(n.startswith("version tag") for n in source_notes(snapshot, cache))
