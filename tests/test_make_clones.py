"""bench/make_clones.py makes a clone from an unpacked sdist as upstream's clone looks: what
the sdist build wrote removed, the release tagged as the project's scm configuration reads
tags, and the readme files the build reads written back when the sdist left them out
(platformdirs ships no README.md, and hatch-fancy-pypi-readme fails without it). Real trees
and the real git CLI."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from conftest import git, make_project

from taskforge.languages.python.env.scm import version_from_describe

PKG_INFO = """\
Metadata-Version: 2.4
Name: pkg
Version: 4.14.5
Summary: a package
Description-Content-Type: text/markdown

# pkg

What it does.
"""


def make_clones() -> ModuleType:
    path = Path(__file__).parents[1] / "bench" / "make_clones.py"
    spec = importlib.util.spec_from_file_location("make_clones", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sdist(tmp_path: Path, tool: str) -> Path:
    return make_project(tmp_path, {
        "PKG-INFO": PKG_INFO,
        "pyproject.toml": '[build-system]\nrequires = ["hatchling", "hatch-vcs", '
                          '"hatch-fancy-pypi-readme"]\nbuild-backend = "hatchling.build"\n\n'
                          '[project]\nname = "pkg"\ndynamic = ["version", "readme"]\n\n'
                          '[tool.hatch.version]\nsource = "vcs"\n\n'
                          '[tool.hatch.build.hooks.vcs]\nversion-file = "src/pkg/_version.py"\n'
                          + tool,
        "src/pkg/__init__.py": "",
        "src/pkg/_version.py": "__version__ = '4.14.5'\n",
        "CHANGELOG.md": "# changes\n",
    }, name="pkg-4.14.5")


FANCY = ('\n[tool.hatch.metadata.hooks.fancy-pypi-readme]\ncontent-type = "text/markdown"\n'
         '[[tool.hatch.metadata.hooks.fancy-pypi-readme.fragments]]\npath = "README.md"\n'
         'start-after = "<!-- begin -->"\n'
         '[[tool.hatch.metadata.hooks.fancy-pypi-readme.fragments]]\npath = "CHANGELOG.md"\n')


def test_the_clone_has_its_release_tag_and_the_readme_the_build_reads(tmp_path: Path) -> None:
    root = sdist(tmp_path, FANCY)
    tag, removed, written = make_clones().make_clone(root, "pkg")
    assert tag == "v4.14.5"
    assert git("tag", "--points-at", "HEAD", cwd=root) == "v4.14.5"
    assert git("cat-file", "-t", "v4.14.5", cwd=root) == "tag"  # annotated, as releases are
    describe = git("describe", "--tags", "--long", cwd=root)
    assert version_from_describe(root, describe) == "4.14.5"
    assert set(removed) == {"PKG-INFO", "src/pkg/_version.py"}
    # README.md from PKG-INFO's description, after the fragment's marker; CHANGELOG.md shipped.
    assert written == ["README.md"]
    assert (root / "README.md").read_text() == "<!-- begin -->\n# pkg\n\nWhat it does.\n"
    assert (root / "CHANGELOG.md").read_text() == "# changes\n"
    tracked = git("ls-files", cwd=root).split()
    assert "README.md" in tracked and "PKG-INFO" not in tracked
    assert git("status", "--porcelain", cwd=root) == ""


@pytest.mark.parametrize(("tool", "tag"), [
    ('[tool.hatch.version.raw-options]\ntag_regex = "^(?P<version>[0-9.]+)$"\n', "4.14.5"),
    ('\n[tool.setuptools_scm]\ntag_regex = "^pkg-v(?P<version>.+)$"\n', "pkg-v4.14.5"),
])
def test_the_tag_takes_the_form_the_projects_tag_pattern_reads(tmp_path: Path, tool: str,
                                                                 tag: str) -> None:
    root = sdist(tmp_path, tool)
    assert make_clones().make_clone(root, "pkg")[0] == tag
    assert version_from_describe(root, git("describe", "--tags", "--long", cwd=root)) == "4.14.5"
