"""Artifact rules: named patterns for files that can carry residue of deleted code.

These are the fast path of sanitizing; the leak scanner is the proof. A rule names
directories (every file under one is the artifact), files, or short path suffixes such as
`node_modules/.cache`, all by glob; some also check what a directory holds (a virtualenv is
any directory with a `pyvenv.cfg`; Sphinx's `_modules` only inside rendered HTML).

Files the repository tracks on purpose (pass them as `keep`) are spared by `remove_artifacts`;
the sanitizer removes one of those only when the leak scan finds residue in it.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import shutil
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# Version-control directories are never copied from a local source, and never kept.
VCS_DIRS = (".git", ".hg", ".svn")


def _is_virtualenv(path: Path) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))  # asked of every directory


def _holds_class_files(path: Path) -> bool:
    """Eclipse compiles into `bin/`: one with class files in it (a `bin/` of scripts stays)."""
    try:
        return any(p.suffix == ".class" for p in path.rglob("*.class"))
    except OSError:
        return False


def _in_rendered_html(path: Path) -> bool:
    """Sphinx puts highlighted copies of the sources under `_modules/` of its HTML output."""
    parent = path.parent
    if any((parent / marker).exists() for marker in ("_static", "objects.inv", "searchindex.js",
                                                      "genindex.html", "_sources")):
        return True
    try:
        return any(p.suffix == ".html" for p in path.rglob("*.html"))
    except OSError:
        return False


# Where a build's sources sit beside its output: `src/x.ts` -> `lib/x.js`, and a dual
# build's halves beside each other (`esm/x.js`, `cjs/x.js`, both from `src/` or `lib/`).
_BUILD_SOURCES = ("src", "source", "sources", "ts")
_DUAL_BUILDS = ("esm", "cjs", "umd", "es", "mjs")
_BUILD_SOURCE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_COMPILED_SUFFIXES = (".js", ".mjs", ".cjs")
_TYPESCRIPT_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")


def _source_map(path: str) -> bool:
    """A source map: JSON with `mappings` (not a data file that happens to end in `.map`)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"mappings"' in head


def _compiled_javascript(path: Path) -> bool:
    """Whether `lib/` (`esm/`, `cjs/`, ...) holds compiled JavaScript rather than a project's
    own sources: most of its JavaScript files (more than half) have a source map beside them
    or are named as a source of the build's source directory beside it (`src/`, for a dual
    build's half also the other halves and `lib/`), or as a TypeScript file of the directory
    holding it (`tsc` with the project's root as its root). Many JavaScript packages keep
    their sources in `lib/` (fastify-plugin, qs): such a `lib/` is the tree a task edits,
    never an artifact (taken for one, the leak scan removed the very file a task's stub is
    in, and every later check of the task failed). One shared name (`index`) or a vendored
    map is not most."""
    files: list[tuple[str, str]] = []  # (the file's path, its path in `path` without suffix)
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if d != "node_modules"]
        here = os.path.relpath(dirpath, path)
        for name in filenames:
            stem, suffix = os.path.splitext(name)
            if suffix in _COMPILED_SUFFIXES:
                files.append((os.path.join(dirpath, name), os.path.normpath(os.path.join(here, stem))))
    if not files:
        return False
    beside = _BUILD_SOURCES if path.name not in _DUAL_BUILDS \
        else (*_BUILD_SOURCES, "lib", *(d for d in _DUAL_BUILDS if d != path.name))
    siblings = [path.parent / d for d in beside if (path.parent / d).is_dir()]

    def compiled(file: str, stem: str) -> bool:
        return _source_map(file + ".map") \
            or any(os.path.isfile(f"{sibling / stem}{suffix}") for sibling in siblings
                   for suffix in _BUILD_SOURCE_SUFFIXES) \
            or any(os.path.isfile(f"{path.parent / stem}{suffix}") for suffix in _TYPESCRIPT_SUFFIXES)

    return 2 * sum(compiled(file, stem) for file, stem in files) > len(files)


@dataclass(frozen=True)
class ArtifactRule:
    """A named kind of artifact.

    `dirs` and `files` are globs on one path component; `paths` are globs on the last
    components of a directory's path (`node_modules/.cache`); `check`, when set, must also
    hold for a matching directory. `snapshot` rules are also left out when a source tree is
    snapshotted (they name nothing a project keeps in its sources on purpose); the others
    (a `.jar`, an `out/` directory) may be real fixtures and are left to the leak scan.
    """

    name: str
    dirs: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    check: Callable[[Path], bool] | None = None
    snapshot: bool = True
    description: str = ""

    def names_dir(self, parts: tuple[str, ...]) -> bool:
        """Whether the globs match a directory at `parts`, `check` aside."""
        return any(fnmatch.fnmatchcase(parts[-1], p) for p in self.dirs) or any(
            _suffix_matches(parts, p) for p in self.paths)

    def matches_dir(self, parts: tuple[str, ...], path: Path | None) -> bool:
        hit = self.names_dir(parts)
        if hit and self.check is not None:
            return path is not None and self.check(path)
        return hit

    def matches_file(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in self.files)


def _suffix_matches(parts: tuple[str, ...], pattern: str) -> bool:
    want = pattern.split("/")
    return len(parts) >= len(want) and all(
        fnmatch.fnmatchcase(part, glob) for part, glob in zip(parts[-len(want):], want, strict=True))


RULES: tuple[ArtifactRule, ...] = (
    ArtifactRule("python-bytecode", dirs=("__pycache__",), files=("*.pyc", "*.pyo"),
                 description="compiled modules hold the names and constants of the code"),
    ArtifactRule(
        "python-tool-caches",
        dirs=(".mypy_cache", ".pytype", ".pyre", ".ruff_cache", ".pytest_cache", ".hypothesis",
              ".tox", ".nox", ".eggs"),
        files=(".dmypy.json", "dmypy.json"),
        description="type checkers, linters and test runners cache what they saw"),
    ArtifactRule("virtualenvs", dirs=(".venv", "venv"),
                 description="an environment inside the tree may hold an installed copy"),
    ArtifactRule("virtualenv-any-name", dirs=("*",), check=_is_virtualenv, snapshot=False,
                 description="any directory with a pyvenv.cfg"),
    ArtifactRule("build-outputs", dirs=("build", "dist", "*.egg-info"),
                 files=("*.whl", "*.egg"),
                 description="copies of the package made by building it"),
    ArtifactRule("sdists", files=("*-[0-9]*.tar.gz", "*-[0-9]*.tar.bz2", "*-[0-9]*.tgz"),
                 snapshot=False, description="source distributions (name-version.tar.gz)"),
    ArtifactRule("coverage-outputs", dirs=("htmlcov", ".nyc_output"),
                 files=(".coverage", ".coverage.*", "coverage.xml", "coverage.json", "lcov.info",
                        "*.lcov"),
                 description="coverage data and reports quote or locate the code"),
    ArtifactRule("rendered-docs", dirs=("_build", ".doctrees"), files=("*.doctree",),
                 description="Sphinx output: highlighted sources, pickled doctrees"),
    ArtifactRule("sphinx-module-pages", dirs=("_modules",), check=_in_rendered_html,
                 snapshot=False, description="Sphinx `[source]` pages of every module"),
    ArtifactRule("editor-leftovers", dirs=(".idea",),
                 files=("*~", ".*.swp", ".*.swo", ".*.swn", "*.bak", "#*#", ".#*"),
                 description="backups, swap files and IDE state"),
    ArtifactRule("merge-leftovers",
                 files=("*.orig", "*.rej", "*_BACKUP_*", "*_BASE_*", "*_LOCAL_*", "*_REMOTE_*"),
                 description="patch and merge tools keep the old text beside the new"),
    ArtifactRule("tag-files", files=("tags", "TAGS", ".tags", "GTAGS", "GRTAGS", "GPATH",
                                     "cscope.out"),
                 description="ctags/etags/global index every definition"),
    ArtifactRule("notebook-checkpoints", dirs=(".ipynb_checkpoints",),
                 description="Jupyter keeps the last saved copy of each notebook"),
    ArtifactRule("jvm-bytecode", files=("*.class",), snapshot=False,
                 description="compiled classes keep names and string constants"),
    ArtifactRule("jvm-archives", files=("*.jar", "*.war", "*.ear"), snapshot=False,
                 description="archives of compiled classes"),
    ArtifactRule("build-directories", dirs=("target", "out", ".gradle"), snapshot=False,
                 description="Maven/Cargo `target/`, IntelliJ `out/`, Gradle caches"),
    ArtifactRule("eclipse-output", dirs=("bin",), check=_holds_class_files, snapshot=False,
                 description="Eclipse's `bin/` of compiled classes"),
    ArtifactRule("maven-local-repository", dirs=(".m2",), snapshot=False,
                 description="a local Maven repository may hold the project's own jar"),
    ArtifactRule("java-ide-metadata",
                 dirs=(".settings", ".metadata", ".apt_generated", ".apt_generated_tests"),
                 files=(".classpath", ".project", ".factorypath", "*.iml", "*.ipr", "*.iws"),
                 snapshot=False,
                 description="Eclipse and IntelliJ project state (indexes, output paths)"),
    ArtifactRule("jdk-cds-archives", files=("*.jsa",), snapshot=False,
                 description="class-data-sharing archives hold loaded classes"),
    ArtifactRule("js-caches", paths=("node_modules/.cache",), dirs=(".parcel-cache",),
                 snapshot=False, description="bundler and transpiler caches"),
    ArtifactRule("source-maps", files=("*.map",), snapshot=False,
                 description="source maps embed the original sources (sourcesContent)"),
    # A tree's own node_modules holds installed packages, often a release of the package
    # itself (a dev tool depending on it); tests get the environment's, linked in per run.
    ArtifactRule("node-modules", dirs=("node_modules",),
                 description="installed packages, a copy of the package itself among them"),
    ArtifactRule("js-tool-caches",
                 dirs=(".jest-cache", ".vite", ".vitest", ".turbo", ".swc"),
                 files=(".eslintcache", ".stylelintcache", ".prettiercache", "*.tsbuildinfo"),
                 description="jest, vite/vitest, turbo, swc and eslint caches; TypeScript's "
                 "incremental build info lists the sources and their signatures"),
    # Often the compiled package (`tsc --outDir lib`, babel's `lib/`, dual esm/cjs builds);
    # in many JavaScript projects `lib/` is the source itself: only where it looks compiled.
    ArtifactRule("js-compiled-outputs", dirs=("lib", "esm", "cjs", "umd", "out-tsc"),
                 check=_compiled_javascript, snapshot=False,
                 description="compiled JavaScript (a source map, or sources of the same names)"),
    ArtifactRule("js-coverage-outputs", dirs=("coverage",), snapshot=False,
                 description="istanbul/c8 reports quote every source line"),
)


def rule_for(name: str, is_dir: bool) -> ArtifactRule | None:
    """The snapshot rule a single path component falls under, if any (name-only rules: the
    ones a tree is snapshotted without, see `git_exclude_lines`)."""
    for rule in RULES:
        if not rule.snapshot or rule.check is not None:
            continue
        if is_dir and rule.matches_dir((name,), None):
            return rule
        if not is_dir and rule.matches_file(name):
            return rule
    return None


def git_exclude_lines() -> list[str]:
    """VCS dirs and the snapshot rules as gitignore lines, for hashing a tree without copying it."""
    lines = [f"{d}/" for d in VCS_DIRS]
    for rule in RULES:
        if not rule.snapshot or rule.check is not None:
            continue
        lines += [f"{p}/" for p in rule.dirs]
        lines += [f"**/{p}/" for p in rule.paths]
        lines += list(rule.files)
    return lines


# The most components a rule's `paths` glob spans: what of a directory's path its name-only
# match depends on.
_TAIL = max((len(p.split("/")) for rule in RULES for p in rule.paths), default=1)


@functools.lru_cache(maxsize=8192)  # a name's rules never change; every walk asks per directory
def _named_dir_rules(tail: tuple[str, ...]) -> tuple[ArtifactRule, ...]:
    """The rules whose globs name a directory whose path ends in `tail`, checks aside, in
    RULES order."""
    return tuple(rule for rule in RULES if rule.names_dir(tail))


def match_dir(parts: tuple[str, ...], path: Path | None = None) -> ArtifactRule | None:
    """The rule a directory (its path components, relative to the tree) falls under: the
    first whose globs match and whose check, if it has one, holds for `path`."""
    for rule in _named_dir_rules(parts[-_TAIL:]):
        if rule.check is None or (path is not None and rule.check(path)):
            return rule
    return None


@functools.lru_cache(maxsize=8192)  # a name's rule never changes; every walk asks per file
def match_file(name: str) -> ArtifactRule | None:
    for rule in RULES:
        if rule.matches_file(name):
            return rule
    return None


def rules_for_path(root: Path, rel: str) -> list[ArtifactRule]:
    """Every rule that names `rel` (a file under `root`) or one of its directories, outermost
    first: a tree's `lib/` (compiled JavaScript) can hold a `__pycache__` (Python bytecode)."""
    parts = PurePosixPath(rel).parts
    found = [rule for depth in range(1, len(parts))
             if (rule := match_dir(parts[:depth], root.joinpath(*parts[:depth])))]
    file_rule = match_file(parts[-1]) if parts else None
    return found + ([file_rule] if file_rule else [])


def rule_for_path(root: Path, rel: str) -> ArtifactRule | None:
    """The outermost rule that names `rel` (a file under `root`) or one of its directories."""
    rules = rules_for_path(root, rel)
    return rules[0] if rules else None


def tracked_paths(root: Path) -> frozenset[str]:
    """Every file (and symlink) under `root` as a relative POSIX path, VCS dirs aside: what a
    snapshot holds, which is what its repository tracks on purpose."""
    found: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in VCS_DIRS]
        here = Path(dirpath)
        for name in filenames + [d for d in dirnames if (here / d).is_symlink()]:
            found.add((here / name).relative_to(root).as_posix())
    return frozenset(found)


def _ancestors(paths: Collection[str]) -> frozenset[str]:
    dirs: set[str] = set()
    for rel in paths:
        parent, _sep, _name = rel.rpartition("/")
        while parent and parent not in dirs:
            dirs.add(parent)
            parent = parent.rpartition("/")[0]
    return frozenset(dirs)


@functools.lru_cache(maxsize=8)  # a snapshot's tracked paths: the same set for every task
def _kept_dirs(keep: frozenset[str]) -> frozenset[str]:
    return _ancestors(keep)


def remove_artifacts(root: Path, keep: Collection[str] = ()) -> dict[str, list[str]]:
    """Delete everything under `root` that a rule names, except the files in `keep` (relative
    POSIX paths); return rule -> removed relative paths. VCS directories are left to the
    fresh-git step. Inside an artifact directory that holds kept files, the rest is removed.
    (Paths as strings and one `scandir` a directory: every task's materialization walks its
    whole tree here.)"""
    keep = frozenset(keep)
    kept_dirs = _kept_dirs(keep)
    removed: dict[str, list[str]] = {}

    def walk(here: str, prefix: str, parts: tuple[str, ...],
             inside: ArtifactRule | None) -> None:
        try:
            with os.scandir(here) as listing:
                entries = list(listing)
        except OSError:
            return
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name in VCS_DIRS:
                    continue
                where = (*parts, entry.name)
                rule = inside or match_dir(where, Path(entry.path))
                if rule and rel not in kept_dirs:
                    shutil.rmtree(entry.path)
                    removed.setdefault(rule.name, []).append(rel)
                else:
                    walk(entry.path, rel + "/", where, rule)
            else:
                rule = inside or match_file(entry.name)
                if rule is None and entry.is_symlink():  # a link named like an artifact dir
                    rule = match_dir((*parts, entry.name), None)
                if rule and rel not in keep:
                    os.unlink(entry.path)
                    removed.setdefault(rule.name, []).append(rel)

    walk(os.fspath(root), "", (), None)
    return {k: sorted(v) for k, v in sorted(removed.items())}
