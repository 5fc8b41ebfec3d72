"""Make git repositories shaped like upstream clones from a recipe's pinned sdists.

An sdist holds files a clone lacks: PKG-INFO and *.egg-info (written by the sdist build) and
the version module setuptools-scm/hatch-vcs write (upstream's .gitignore names it; many sdists
do not ship the .gitignore). Each sdist is downloaded with pip, those files are removed, and
the rest is committed with `git add -A` (which honours a shipped .gitignore), so generated
files are missing exactly as in a clone. Then a recipe of the same packages as git sources.

A clone also has what an sdist may lack:
- **its release tag** on the commit (`v1.2.3`, or the form the project's scm `tag_regex` /
  hatch `tag-pattern` asks for), as upstream tags its releases: setuptools-scm and hatch-vcs
  read the version from `git describe`, and CI checks out with tags.
- **the readme files the build reads** (`project.readme`, setuptools' dynamic readme,
  hatch-fancy-pypi-readme's fragment paths) when the sdist left them out (platformdirs ships
  no README.md, and its build fails without it): written from PKG-INFO's description, which
  is what the build made of them (with a fragment's start-after/end-before markers around it;
  a fragment `pattern` is not reproduced).

    python bench/make_clones.py recipes/pypi-corpus.yaml corpus-clones \\
        recipes/pypi-corpus-clones.yaml
"""

from __future__ import annotations

import argparse
import email.message
import email.parser
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

import yaml

from taskforge.errors import UserError
from taskforge.sources.generated import version_files
from taskforge.sources.pypi import download_sdist

GIT = ["git", "-c", "user.name=clone", "-c", "user.email=clone@localhost",
       "-c", "commit.gpgsign=false"]


def unpack(archive: Path, dest: Path) -> Path:
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(dest)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
    [root] = [p for p in dest.iterdir() if p.is_dir()]
    return root


def as_clone(root: Path) -> list[str]:
    """Remove what the sdist build wrote; return the removed paths."""
    removed = []
    for path in [root / "PKG-INFO", *root.rglob("*.egg-info")]:
        if path.exists():
            removed.append(path.relative_to(root).as_posix())
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    try:
        config = tomllib.loads((root / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        config = {}
    for rel, _template in version_files(config):
        if (root / rel).is_file():
            (root / rel).unlink()
            removed.append(rel)
    return removed


def _pkg_info(root: Path) -> email.message.Message:
    return email.parser.Parser().parsestr((root / "PKG-INFO").read_text(errors="replace"))


def _tag_regex(config: dict) -> str | None:
    """The tag pattern the project's scm configuration declares, if any."""
    tool = config.get("tool", {})
    hatch = tool.get("hatch", {}).get("version", {})
    hatch = hatch if isinstance(hatch, dict) else {}
    raw = hatch.get("raw-options", {}) if isinstance(hatch.get("raw-options"), dict) else {}
    pdm = tool.get("pdm", {}).get("version", {})
    for table, key in ((tool.get("setuptools_scm", {}), "tag_regex"), (raw, "tag_regex"),
                       (hatch, "tag-pattern"), (pdm if isinstance(pdm, dict) else {},
                                                "tag_regex")):
        if isinstance(table, dict) and isinstance(table.get(key), str):
            return table[key]
    return None


def release_tag(name: str, version: str, config: dict) -> str:
    """The tag upstream would have put on this release: `v<version>` unless the project's
    tag pattern wants another form."""
    pattern = _tag_regex(config)
    candidates = [f"v{version}", version, f"{name}-{version}", f"{name}-v{version}"]
    if pattern is None:
        return candidates[0]
    for tag in candidates:
        try:
            if re.search(pattern, tag):
                return tag
        except re.error:
            break
    return candidates[0]


def _readme_files(config: dict) -> list[tuple[str, str, str]]:
    """(path, text before, text after) of every readme file the build configuration reads."""
    found: list[tuple[str, str, str]] = []
    project = config.get("project", {})
    readme = project.get("readme")
    if isinstance(readme, dict):
        readme = readme.get("file")
    if isinstance(readme, str):
        found.append((readme, "", ""))
    dynamic = config.get("tool", {}).get("setuptools", {}).get("dynamic", {}).get("readme", {})
    files = dynamic.get("file", []) if isinstance(dynamic, dict) else []
    found += [(f, "", "") for f in ([files] if isinstance(files, str) else files)
              if isinstance(f, str)]
    fancy = config.get("tool", {}).get("hatch", {}).get("metadata", {}).get("hooks", {}) \
        .get("fancy-pypi-readme", {})
    for fragment in fancy.get("fragments", []) if isinstance(fancy, dict) else []:
        if isinstance(fragment, dict) and isinstance(fragment.get("path"), str):
            found.append((fragment["path"], fragment.get("start-after", "") and
                          fragment["start-after"] + "\n",
                          fragment.get("end-before", "") and "\n" + fragment["end-before"]))
    return found


def restore_readmes(root: Path, config: dict) -> list[str]:
    """Write the readme files the build reads and the sdist lacks, from PKG-INFO's
    description; return their paths."""
    if not (root / "PKG-INFO").is_file():
        return []
    info = _pkg_info(root)
    description = info.get_payload() or info.get("Description", "") or ""
    written = []
    for rel, before, after in _readme_files(config):
        target = root / rel
        if target.exists() or ".." in Path(rel).parts or Path(rel).is_absolute():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(before + str(description) + after)
        written.append(rel)
    return written


def _config(root: Path) -> dict:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def make_clone(root: Path, name: str) -> tuple[str | None, list[str], list[str]]:
    """Turn the unpacked sdist at `root` into a clone-like repository in place: what the sdist
    build wrote removed, missing readmes restored, committed and tagged. Returns the tag,
    the removed and the written paths."""
    config = _config(root)
    version = _pkg_info(root).get("Version") if (root / "PKG-INFO").is_file() else None
    written = restore_readmes(root, config)
    removed = as_clone(root)
    subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", f"{name} {version} as a clone"], cwd=root,
                   check=True)
    tag = release_tag(name, version, config) if version else None
    if tag:  # annotated, as a release tag usually is (`git describe --tags` reads both kinds)
        subprocess.run([*GIT, "tag", "-a", "-m", f"release {version}", tag], cwd=root,
                       check=True)
    return tag, removed, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe")
    parser.add_argument("dest")
    parser.add_argument("clone_recipe")
    args = parser.parse_args()
    recipe = yaml.safe_load(Path(args.recipe).read_text())
    dest = Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    sources = []
    for source in recipe["sources"]:
        pin = source["pypi"]
        name = pin.split("==")[0]
        repo = dest / name
        if not (repo / ".git").is_dir():
            with tempfile.TemporaryDirectory() as scratch:
                try:
                    archive = download_sdist(pin, name, Path(scratch) / "download")
                except UserError as exc:  # the run goes on; the clone recipe lacks it
                    print(f"{pin}: {exc}", file=sys.stderr)
                    continue
                root = unpack(archive, Path(scratch) / "unpacked")
                tag, removed, written = make_clone(root, name)
                shutil.rmtree(repo, ignore_errors=True)
                shutil.move(root, repo)
            print(f"{pin}: {repo} (tag {tag}; removed: {', '.join(removed) or 'nothing'}; "
                  f"written: {', '.join(written) or 'nothing'})")
        sources.append({"git": str(repo)})
    clone_recipe = {**recipe, "name": f"{recipe['name']}-clones", "sources": sources}
    Path(args.clone_recipe).write_text(
        f"# {recipe['name']} as clone-like git repositories: made by bench/make_clones.py "
        f"from {args.recipe}\n" + yaml.safe_dump(clone_recipe, sort_keys=False))


if __name__ == "__main__":
    main()
