"""Clones of projects whose version module the build writes (hatch-vcs, setuptools-scm).

As upstream has them: `_version.py` is in .gitignore, so a clone lacks it, and the version
comes from git metadata with no fallback. Before, the throwaway build copy had no .git
("cannot build the environment"), and once built, the version module it wrote never reached
the workspace (every test module failed to import: "no test passes in the baseline").
The backends come from the package index through uv, as in any environment build.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import apply_patch, commit_all, git, init_repo, make_project, write_recipe

import taskforge
from taskforge.errors import UserError
from taskforge.ingest import IngestedSource, ingest
from taskforge.languages.python.env.scm import version_from_describe
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox

CODE = {
    "src/vcspkg/__init__.py": "from vcspkg._version import __version__\n",
    "src/vcspkg/core.py": """\
        def double(x):
            result = x
            result += x
            return result
    """,
    "tests/test_core.py": """\
        import importlib.metadata

        import vcspkg
        from vcspkg.core import double


        def test_double():
            assert double(4) == 8


        def test_version_is_the_installed_one():
            assert vcspkg.__version__ == importlib.metadata.version("vcspkg")
    """,
    ".gitignore": "src/vcspkg/_version.py\n__pycache__/\n",
}


def scm_pyproject(requires: str, backend: str, tool: str) -> str:
    """A project whose version comes from git, written into src/vcspkg/_version.py."""
    return (f'[build-system]\nrequires = [{requires}]\nbuild-backend = "{backend}"\n\n'
            '[project]\nname = "vcspkg"\ndynamic = ["version"]\n\n' + tool)


HATCH_VCS = scm_pyproject('"hatchling", "hatch-vcs"', "hatchling.build",
                          '[tool.hatch.version]\nsource = "vcs"\n\n'
                          '[tool.hatch.build.hooks.vcs]\nversion-file = "src/vcspkg/_version.py"\n')
SETUPTOOLS_SCM = scm_pyproject('"setuptools>=64", "setuptools-scm>=8"', "setuptools.build_meta",
                               '[tool.setuptools_scm]\nversion_file = "src/vcspkg/_version.py"\n')
PDM_SCM = scm_pyproject('"pdm-backend"', "pdm.backend",
                        '[tool.pdm.version]\nsource = "scm"\nwrite_to = "vcspkg/_version.py"\n'
                        'write_template = "__version__ = \'{}\'"\n')
# With a fallback the build works without git; the version module still stayed behind.
BACKENDS = {"hatch-vcs": HATCH_VCS, "setuptools-scm": SETUPTOOLS_SCM, "pdm-backend": PDM_SCM,
            "setuptools-scm-with-fallback": SETUPTOOLS_SCM + 'fallback_version = "1.2.3"\n'}


def ingest_clone(repo: Path, cache: Path) -> tuple[IngestedSource, list[str]]:
    """Commit `repo` as a clone looks (`git add -A` honours .gitignore), ingest it as a git
    source; return it with the log lines."""
    init_repo(repo)
    commit_all(repo, "initial")
    lines: list[str] = []
    src = ingest(SourceSpec(kind="git", location=str(repo)), cache=cache, base_dir=repo.parent,
                 sandbox=get_sandbox("none"), repeats=2, timeout=120, log=lines.append)
    return src, lines


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_a_clone_of_an_scm_versioned_project_is_ingested(backend: str, tmp_path: Path,
                                                         tf_cache: Path) -> None:
    pyproject = BACKENDS[backend]
    version = "1.2.3" if backend.endswith("fallback") else "0.0.0"
    repo = make_project(tmp_path, {**CODE, "pyproject.toml": pyproject}, name="vcspkg")
    src, lines = ingest_clone(repo, tf_cache)
    assert set(src.baseline.stable) == {"tests/test_core.py::test_double",
                                        "tests/test_core.py::test_version_is_the_installed_one"}
    told = [d for d in src.env.spec.decisions if "version from git metadata" in d]
    if backend.endswith("fallback"):
        assert told == []  # the project's own fallback: nothing to tell the build
    else:
        assert len(told) == 1 and "the build gets 0.0.0" in told[0]
    # The build output is part of the snapshot every workspace copies, and of its git tree.
    assert "src/vcspkg/_version.py" in src.env.outputs
    assert version in (src.snapshot.root / "src/vcspkg/_version.py").read_text()
    assert any("build outputs added to the snapshot" in line for line in lines)
    assert not (repo / "src/vcspkg/_version.py").exists()  # the user's clone is left alone


@pytest.mark.slow
def test_tasks_from_a_hatch_vcs_clone_materialize_and_grade_elsewhere(tmp_path: Path,
                                                                      tf_cache: Path) -> None:
    """The task's snapshot holds the version module; a loader with an empty cache rebuilds
    the environment from it (no git there either) and grades the reference solution 1.0."""
    repo = make_project(tmp_path, {**CODE, "pyproject.toml": HATCH_VCS}, name="vcspkg")
    init_repo(repo)
    commit_all(repo, "initial")
    task, workspace = materialized_elsewhere(tmp_path, tf_cache, f"git: {repo}")
    assert (workspace / "src/vcspkg/_version.py").is_file()
    assert "NotImplementedError" in (workspace / "src/vcspkg/core.py").read_text()
    apply_patch(workspace, task.record["patch"])
    assert task.grade(workspace, sandbox="none").reward == 1.0


def materialized_elsewhere(tmp_path: Path, cache: Path, source: str) -> tuple[taskforge.Task, Path]:
    """The one stub-function task of `source` (a recipe's source line), generated with
    `cache`, loaded with an empty cache as on another machine, and its workspace."""
    recipe = write_recipe(tmp_path / "elsewhere.yaml", f"""\
        name: elsewhere
        sources:
          - {source}
        strategies: [stub-function]
        select: {{min_body_lines: 2}}
        sandbox: none
    """)
    out = tmp_path / "out"
    taskforge.generate(recipe, out=out, cache=cache)
    (task,) = taskforge.load_tasks(out, cache=tmp_path / "elsewhere")
    return task, task.materialize(tmp_path / "ws")


FLIT = """\
    [build-system]
    requires = ["flit_core>=3.4"]
    build-backend = "flit_core.buildapi"

    [project]
    name = "flitpkg"
    version = "1.0"
    description = "A project flit builds, its license file in the wheel."
    license = {file = "LICENSE"}
"""


@pytest.mark.slow
def test_a_flit_project_s_environment_builds_from_a_task_s_archive(tmp_path: Path,
                                                                   tf_cache: Path) -> None:
    """A snapshot unpacked from a task's archive has its files dated 1970: flit_core put
    the license file into the editable wheel as dated, and the environment on another
    machine failed to build ("ZIP does not support timestamps before 1980", boltons and
    marshmallow): no task of theirs could be graded or verified there."""
    repo = make_project(tmp_path, {
        "pyproject.toml": FLIT, "LICENSE": "MIT\n",
        "flitpkg/__init__.py": '"""Doubling."""\n',
        "flitpkg/core.py": CODE["src/vcspkg/core.py"],
        "tests/test_core.py": "from flitpkg.core import double\n\n\ndef test_double():\n"
                              "    assert double(4) == 8\n\n\ndef test_zero():\n"
                              "    assert double(0) == 0\n"}, name="flitpkg")
    task, workspace = materialized_elsewhere(tmp_path, tf_cache, f"path: {repo}")
    apply_patch(workspace, task.record["patch"])
    assert task.grade(workspace, sandbox="none").reward == 1.0


SPEEDUPS_C = """\
    #include <Python.h>

    static PyObject *triple(PyObject *self, PyObject *arg) {
        long x = PyLong_AsLong(arg);
        return PyLong_FromLong(3 * x);
    }
    static PyMethodDef methods[] = {{"triple", triple, METH_O, NULL}, {NULL, NULL, 0, NULL}};
    static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "%s", NULL, -1, methods};
    PyMODINIT_FUNC PyInit_%s(void) { return PyModule_Create(&module); }
"""


@pytest.mark.slow
def test_extensions_built_in_place_are_carried_unless_they_shadow_python_code(
        tmp_path: Path, tf_cache: Path) -> None:
    """`_speedups` (from C, tests import it) is a build output the tests need; `core`, built
    under the name of core.py, would be imported instead of the .py and keep the original
    code of any deletion from it: left out, so the tests run core.py."""
    repo = make_project(tmp_path, {
        "setup.py": """\
            from setuptools import Extension, setup

            setup(name="fastpkg", version="1.0", packages=["fastpkg"],
                  ext_modules=[Extension("fastpkg._speedups", ["src_c/speedups.c"]),
                               Extension("fastpkg.core", ["src_c/core.c"])])
        """,
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=64"]\n'
                          'build-backend = "setuptools.build_meta"\n',
        "src_c/speedups.c": SPEEDUPS_C % ("_speedups", "_speedups"),
        "src_c/core.c": SPEEDUPS_C % ("core", "core"),
        "fastpkg/__init__.py": "",
        "fastpkg/core.py": "def triple(x):\n    out = x\n    out += 2 * x\n    return out\n",
        "tests/test_fast.py": """\
            from fastpkg import _speedups, core


            def test_speedups_agree_with_python():
                assert _speedups.triple(5) == core.triple(5) == 15


            def test_core_is_the_python_module():
                assert core.__file__.endswith("core.py")
        """,
        ".gitignore": "*.so\nbuild/\n*.egg-info/\n",
    }, name="fastpkg")
    src, lines = ingest_clone(repo, tf_cache)
    assert len(src.baseline.stable) == 2
    [carried] = src.env.outputs
    assert carried.startswith("fastpkg/_speedups.") and carried.endswith(".so")
    [left_out] = src.env.build_notes
    assert left_out.startswith("fastpkg/core.") and "a compiled copy of fastpkg/core.py" in left_out
    assert any("build output left out: fastpkg/core." in line for line in lines)


@pytest.mark.slow
def test_a_made_up_version_that_breaks_resolution_is_named_in_the_reason(
        tmp_path: Path, tf_cache: Path) -> None:
    """iniconfig's clone: built as 0.0.0 (no git metadata, no fallback), while pytest needs
    iniconfig>=1.0.1; uv's 'No solution found' did not say the version was made up."""
    pyproject = HATCH_VCS + '\n[dependency-groups]\ntests = ["pytest", "vcspkg>=1"]\n'
    repo = make_project(tmp_path, {**CODE, "pyproject.toml": pyproject}, name="vcspkg")
    with pytest.raises(UserError) as failed:
        ingest_clone(repo, tf_cache)
    reason = str(failed.value)
    assert "cannot build the environment" in reason and "vcspkg" in reason
    assert reason.endswith("(vcspkg was built as version 0.0.0: no git metadata and no fallback "
                           "version; a tag in the repository (reachable from the commit) or a "
                           "fallback_version would give it its own)")


@pytest.mark.parametrize(("tool", "describe", "version"), [
    ("", "v1.2.3-0-gabc1234", "1.2.3"),
    ("", "1.2.3-0-gabc1234", "1.2.3"),
    ("", "vcspkg-1.2.3-0-gabc1234", "1.2.3"),
    ("", "v1.2.3-2-gabc1234", "1.2.4.dev2"),        # setuptools-scm's guess-next-dev
    ("", "v2.0-5-gabc1234", "2.1.dev5"),
    ("", "v2.0rc1-0-gabc1234", "2.0rc1"),
    ("", "v2.0rc1-3-gabc1234", "2.0rc2.dev3"),
    ("", "v2.0.dev0-3-gabc1234", "2.0.dev3"),
    ("", "release-x-0-gabc1234", None),              # no version in the tag
    ("", None, None),
    ('[tool.setuptools_scm]\ntag_regex = "^rel/(?P<version>[0-9.]+)$"\n',
     "rel/3.4-0-gabc1234", "3.4"),
    ('[tool.setuptools_scm]\ntag_regex = "^rel/(?P<version>[0-9.]+)$"\n',
     "v3.4-0-gabc1234", None),                       # not the project's form of tag
    ('[tool.hatch.version]\nsource = "vcs"\ntag-pattern = "^pkg@(?P<version>.+)$"\n',
     "pkg@0.7.1-1-gabc1234", "0.7.2.dev1"),
])
def test_the_version_a_tag_gives_is_read_with_the_projects_tag_pattern(
        tmp_path: Path, tool: str, describe: str | None, version: str | None) -> None:
    repo = make_project(tmp_path, {"pyproject.toml": scm_pyproject(
        '"setuptools-scm"', "setuptools.build_meta", tool)})
    assert version_from_describe(repo, describe) == version


def ingest_tagged(repo: Path, cache: Path, tag: str) -> IngestedSource:
    """`repo` committed as a clone with its release tag, ingested as a git source."""
    init_repo(repo)
    commit_all(repo, "release")
    git("tag", "-a", "-m", "release", tag, cwd=repo)
    return ingest(SourceSpec(kind="git", location=str(repo)), cache=cache, base_dir=repo.parent,
                  sandbox=get_sandbox("none"), repeats=2, timeout=120, log=lambda _line: None)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["hatch-vcs", "setuptools-scm"])
def test_a_tagged_clone_is_built_with_the_tags_version(backend: str, tmp_path: Path,
                                                       tf_cache: Path) -> None:
    """iniconfig's clone, tagged as upstream is: pytest needs iniconfig>=1.0.1, and the build
    now gets the tag's version (2.0.0 here) where it got 0.0.0 and failed to resolve."""
    pyproject = BACKENDS[backend] + '\n[dependency-groups]\ntests = ["pytest", "vcspkg>=1"]\n'
    repo = make_project(tmp_path, {**CODE, "pyproject.toml": pyproject}, name="vcspkg")
    src = ingest_tagged(repo, tf_cache, "v2.0.0")
    assert src.env.spec.scm_version == "2.0.0"
    [told] = [d for d in src.env.spec.decisions if "version from git metadata" in d]
    assert "the repository's tags give 2.0.0 (git describe: v2.0.0-0-g" in told
    assert "__version__ = version = '2.0.0'" in \
        (src.snapshot.root / "src/vcspkg/_version.py").read_text()
    assert set(src.baseline.stable) == {"tests/test_core.py::test_double",
                                        "tests/test_core.py::test_version_is_the_installed_one"}


@pytest.mark.slow
def test_a_tagged_clones_tasks_rebuild_elsewhere_with_the_tags_version(
        tmp_path: Path, tf_cache: Path) -> None:
    """The task record carries the version: a loader with an empty cache (no git, no tags)
    rebuilds the environment with it and grades the reference solution 1.0."""
    pyproject = HATCH_VCS + '\n[dependency-groups]\ntests = ["pytest", "vcspkg>=1"]\n'
    repo = make_project(tmp_path, {**CODE, "pyproject.toml": pyproject}, name="vcspkg")
    init_repo(repo)
    commit_all(repo, "release")
    git("tag", "1.5", cwd=repo)  # a light tag, without the `v`
    recipe = write_recipe(tmp_path / "vcs.yaml", f"""\
        name: vcs
        sources:
          - git: {repo}
        strategies: [stub-function]
        select: {{min_body_lines: 2}}
        sandbox: none
    """)
    out = tmp_path / "out"
    taskforge.generate(recipe, out=out, cache=tf_cache)
    (task,) = taskforge.load_tasks(out, cache=tmp_path / "elsewhere")
    assert task.record["environment"]["scm_version"] == "1.5"
    workspace = task.materialize(tmp_path / "ws")
    apply_patch(workspace, task.record["patch"])
    assert task.grade(workspace, sandbox="none").reward == 1.0
