"""Make git repositories shaped like upstream clones from a recipe's pinned sdists.

An sdist holds files a clone lacks: PKG-INFO and *.egg-info (written by the sdist build) and
the version module setuptools-scm/hatch-vcs write (upstream's .gitignore names it; many sdists
do not ship the .gitignore). Each sdist is downloaded with pip, those files are removed, and
the rest is committed with `git add -A` (which honours a shipped .gitignore), so generated
files are missing exactly as in a clone. Then a recipe of the same packages as git sources.

    python bench/make_clones.py recipes/pypi-corpus.yaml corpus-clones \\
        recipes/pypi-corpus-clones.yaml
"""

from __future__ import annotations

import argparse
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
                removed = as_clone(root)
                shutil.rmtree(repo, ignore_errors=True)
                shutil.move(root, repo)
            subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=repo, check=True)
            subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
            subprocess.run([*GIT, "commit", "-q", "-m", f"{pin} as a clone"], cwd=repo,
                           check=True)
            print(f"{pin}: {repo} (removed: {', '.join(removed) or 'nothing'})")
        sources.append({"git": str(repo)})
    clone_recipe = {**recipe, "name": f"{recipe['name']}-clones", "sources": sources}
    Path(args.clone_recipe).write_text(
        f"# {recipe['name']} as clone-like git repositories: made by bench/make_clones.py "
        f"from {args.recipe}\n" + yaml.safe_dump(clone_recipe, sort_keys=False))


if __name__ == "__main__":
    main()
