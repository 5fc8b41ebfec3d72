"""Plain git plumbing with a fixed identity and clock, so the same tree gives the same commit."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import threading
import zlib
from collections import OrderedDict
from pathlib import Path

FIXED_ENV = {
    "GIT_AUTHOR_NAME": "taskforge",
    "GIT_AUTHOR_EMAIL": "taskforge@localhost",
    "GIT_COMMITTER_NAME": "taskforge",
    "GIT_COMMITTER_EMAIL": "taskforge@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+00:00",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}


# Variables that would point git at another repository, object store or index.
_REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
              "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
              "GIT_TEMPLATE_DIR", "GIT_CEILING_DIRECTORIES")


class GitError(RuntimeError):
    pass


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _REDIRECTS}
    return {**env, **FIXED_ENV}


def git(*args: str, cwd: Path | None = None, git_dir: Path | None = None,
        work_tree: Path | None = None, input: bytes | None = None) -> str:
    cmd = ["git"]
    if git_dir is not None:
        cmd.append(f"--git-dir={git_dir}")
    if work_tree is not None:
        cmd.append(f"--work-tree={work_tree}")
    # Its own process group, killed and reaped before an interruption (Ctrl-C) goes on:
    # subprocess.run kills only git itself and does not wait on KeyboardInterrupt, so git
    # (or a process it started) could still be writing objects while the caller's cleanup
    # removes that repository ("Directory not empty").
    with subprocess.Popen([*cmd, *args], cwd=cwd, env=git_env(), start_new_session=True,
                          stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            stdout, stderr = proc.communicate(input)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    if proc.returncode != 0:
        message = stderr.decode(errors="replace").strip().splitlines()
        raise GitError(message[-1] if message else f"git {args[0]} failed")
    return stdout.decode(errors="replace").strip()


def commit_tree(work_tree: Path, git_dir: Path, message: str, exclude: list[str] | None = None) -> str:
    """Commit every file of `work_tree` into a new repository at `git_dir`; return the commit."""
    if git_dir == work_tree / ".git":
        git("init", "-q", "--template=", "-b", "main", cwd=work_tree)
    else:  # a repository kept apart from the tree it records
        git("init", "-q", "--bare", "--template=", "-b", "main", str(git_dir))
    # Appended, not set with `git config`: two processes fewer for every workspace, and the
    # last value of a key wins. No reflog to read; nothing repacks or prunes behind our back.
    with open(git_dir / "config", "a") as config:
        config.write(REPOSITORY_CONFIG)
    if exclude:
        info = git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "exclude").write_text("\n".join(exclude) + "\n")
    # With exclude rules, honour them and the tree's .gitignore; without, take every file.
    git("add", "-A", *([] if exclude else ["--force"]), git_dir=git_dir, work_tree=work_tree)
    git("commit", "-q", "--no-verify", "--allow-empty", "-m", message,
        git_dir=git_dir, work_tree=work_tree)
    head = git_dir / "refs" / "heads" / "main"  # a new repository's only ref is loose
    return head.read_text().strip() if head.is_file() else git("rev-parse", "HEAD", git_dir=git_dir)


REPOSITORY_CONFIG = "[core]\n\tautocrlf = false\n\tlogAllRefUpdates = false\n[gc]\n\tauto = 0\n"


# What a fresh repository may hold: nothing else (no logs, packed-refs, ORIG_HEAD, FETCH_HEAD,
# hooks, info, description, stash or notes refs).
FRESH_ENTRIES = {"HEAD", "config", "index", "objects", "refs"}


def fresh_repository(workspace: Path, message: str = "task workspace") -> str:
    """Give `workspace` a brand-new .git holding exactly one commit of its files and nothing
    else; raise GitError if the result holds anything more (see `fresh_repository_problems`)."""
    git_dir = workspace / ".git"
    if git_dir.is_symlink() or git_dir.is_file():
        git_dir.unlink()
    elif git_dir.exists():
        shutil.rmtree(git_dir)
    commit = _commit_in_process(workspace, git_dir, message) \
        or commit_tree(workspace, git_dir, message)
    for name in os.listdir(git_dir):
        if name not in FRESH_ENTRIES:  # COMMIT_EDITMSG and anything git adds on its own
            path = git_dir / name
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    # The file-level checks only: one `init`, `add` and `commit` cannot leave unreachable
    # objects, and the git-level ones cost five processes a workspace (the leak scan reads
    # the objects anyway). `fresh_repository_problems` runs them all.
    problems = _layout_problems(git_dir)
    if problems:
        raise GitError(f"{workspace}: fresh repository is not clean: {'; '.join(problems)}")
    return commit


# What `git init --template=` writes, and the object of `commit_tree`'s fixed identity.
INIT_CONFIG = ("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
               "\tlogallrefupdates = true\n")
IDENTITY = b"taskforge <taskforge@localhost> 946684800 +0000"  # FIXED_ENV's, as git writes it
BIG_FILE = 32 * 1024 * 1024  # past this, git's streaming beats holding the file in memory
# Past this many bytes of objects, a tree is left to git (its objects loose): a pack is one
# file, and the leak scan decodes at most 512 MiB of one file (`containers.FILE_BYTES`; past
# it the file is undecided), where each loose object counts alone. (Offsets past 2 GiB would
# also need a table `_write_pack` does not write.)
PACK_LIMIT = 256 * 1024 * 1024


# Names `git add` refuses (its core.protectNTFS checks, on by default): `.git` in any case,
# or its short name `git~1`, then only dots and spaces, to the end or a `:` or `\`.
_GIT_REFUSES = re.compile(rb"(?i)(?:\.git|git~1)[. ]*(?:[:\\].*)?\Z", re.DOTALL)


class _NotPlain(Exception):
    """A tree `_commit_in_process` leaves to git."""


# Attributes after which `git add` stores a file's bytes as they are, unless it converts
# the file's CRLF line ends to LF: line-end rules (text, eol, crlf, the `binary` macro), and
# what diff, merge, archive and hosting tools alone read. Any other (filter, ident,
# working-tree-encoding, a macro an `[attr]` line makes) may change what is stored: a tree
# with one is left to git.
_STORAGE_NEUTRAL = {b"text", b"eol", b"crlf", b"binary", b"diff", b"merge", b"whitespace",
                    b"delta", b"export-subst", b"export-ignore"}
_AUTO = {b"text=auto", b"crlf=auto"}


def _attributes_rule(data: bytes) -> str | None:
    """What a .gitattributes file (its bytes) lets `git add` do: None when it names an
    attribute not `_STORAGE_NEUTRAL` (or a quoted pattern or a macro, which are not read
    here); "text" when some path may be text whatever its bytes (`text`, `eol` without
    `text=auto` beside it, `crlf=input`, an attribute made unspecified again), so its CRLF
    become LF; "auto" when CRLF become LF only in files git finds to be text."""
    rule = "auto"
    for line in data.splitlines():
        line = line.strip()
        if not line or line.startswith(b"#"):
            continue
        if line.startswith((b'"', b"[attr]")):
            return None
        tokens = line.split()[1:]
        for token in tokens:
            name = token.lstrip(b"-!").split(b"=", 1)[0]
            if name not in _STORAGE_NEUTRAL and not name.startswith(b"linguist-"):
                return None
            if name in (b"text", b"crlf") and not token.startswith(b"-") \
                    and token not in _AUTO:
                rule = "text"
            if name == b"eol" and not token.startswith(b"!") \
                    and not _AUTO.intersection(tokens):
                rule = "text"
    return rule


class _Compressed:
    """Pack entries as written, by object id: every materialization of a snapshot writes the
    same blobs and trees but for the few files a task changed, and compressing them was most
    of writing a repository (10 of 14 ms on boltons). An id is the hash of the object's
    kind and bytes, so its entry is the same whoever asks; at most LIMIT bytes are kept, the
    least recently used going first."""

    LIMIT = 64 * 1024 * 1024

    def __init__(self) -> None:
        self._kept: OrderedDict[bytes, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, oid: bytes, kind: bytes, data: bytes) -> bytes:
        with self._lock:
            found = self._kept.get(oid)
            if found is not None:
                self._kept.move_to_end(oid)
                return found
        entry = _pack_entry(kind, data)
        if len(entry) <= self.LIMIT // 64:
            with self._lock:
                if oid not in self._kept:
                    self._kept[oid] = entry
                    self._size += len(entry)
                while self._size > self.LIMIT:
                    self._size -= len(self._kept.popitem(last=False)[1])
        return entry


_PACK_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3}


def _pack_entry(kind: bytes, data: bytes) -> bytes:
    """One undeltified object of a version 2 pack: its kind and size (7 bits a byte, the
    first byte's low 4 bits first), then its bytes compressed (as git's loose objects are,
    core.compression 1)."""
    size = len(data)
    head = [(_PACK_TYPES[kind] << 4) | (size & 0x0F)]
    size >>= 4
    while size:
        head[-1] |= 0x80
        head.append(size & 0x7F)
        size >>= 7
    return bytes(head) + zlib.compress(data, 1)


def _write_pack(pack_dir: Path, entries: list[tuple[bytes, bytes]]) -> None:
    """`entries` ((object id, pack entry), ids distinct) as one pack and its version 2
    index in `pack_dir`, named by the pack's checksum as git names them. Two files instead
    of a loose object (and most often a directory) for each object: writing and later
    removing those was most of a small workspace's repository (boltons: ~70 of each).
    Every offset must be under 2 GiB (`PACK_LIMIT` keeps them so): the index holds no table
    of larger ones."""
    pack_hash = hashlib.sha1()
    offsets: dict[bytes, int] = {}
    crcs: dict[bytes, int] = {}
    chunks = [b"PACK" + struct.pack(">II", 2, len(entries))]
    offset = len(chunks[0])
    for oid, entry in entries:
        offsets[oid], crcs[oid] = offset, zlib.crc32(entry)
        chunks.append(entry)
        offset += len(entry)
    for chunk in chunks:
        pack_hash.update(chunk)
    checksum = pack_hash.digest()
    names = sorted(offsets)
    fanout, count = [], 0
    for first in range(256):
        while count < len(names) and names[count][0] == first:
            count += 1
        fanout.append(count)
    index = b"".join([b"\377tOc", struct.pack(">I", 2), struct.pack(">256I", *fanout),
                      *names, struct.pack(f">{len(names)}I", *(crcs[oid] for oid in names)),
                      struct.pack(f">{len(names)}I", *(offsets[oid] for oid in names)),
                      checksum])
    name = f"pack-{checksum.hex()}"
    with open(pack_dir / f"{name}.pack", "wb") as pack:
        pack.writelines(chunks)
        pack.write(checksum)
    (pack_dir / f"{name}.idx").write_bytes(index + hashlib.sha1(index).digest())


_COMPRESSED = _Compressed()


def _commit_in_process(work_tree: Path, git_dir: Path, message: str) -> str | None:
    """What `commit_tree(work_tree, work_tree / ".git", message)` makes (the same objects,
    index, refs and commit id; the objects in one pack), written here: `git init`, `add` and
    `commit` are three processes, most of a small workspace's materialization. None, with
    nothing written, for a tree git may treat otherwise: one whose .gitattributes may change
    what is stored (an attribute other than `_STORAGE_NEUTRAL`'s, or a line-end rule and a
    file with CRLF line ends that git may take for text: any, under a rule that forces text,
    else one without a NUL byte, which git's own test of `text=auto` would find binary), a
    path git refuses (a `.git` of any case), a file that is neither regular nor a symlink,
    one past BIG_FILE, or objects past PACK_LIMIT in all."""
    objects: dict[bytes, tuple[bytes, bytes]] = {}  # id -> (kind, bytes)
    entries: list[tuple[bytes, int, bytes, os.stat_result]] = []
    rules: set[str] = set()  # of the .gitattributes files (`_attributes_rule`)
    crlf = crlf_text = False  # a file with CRLF line ends; one without a NUL byte too

    def store(kind: bytes, data: bytes) -> bytes:
        oid = hashlib.sha1(b"%s %d\0%s" % (kind, len(data), data)).digest()
        objects[oid] = (kind, data)
        return oid

    def tree_of(directory: str, prefix: bytes) -> bytes | None:
        nonlocal crlf, crlf_text
        items = []
        with os.scandir(directory) as listing:
            for entry in listing:
                name = os.fsencode(entry.name)
                if not prefix and name == b".git":
                    continue
                st = entry.stat(follow_symlinks=False)
                if _GIT_REFUSES.match(name) \
                        or (stat.S_ISLNK(st.st_mode) and name.lower().startswith(b".git")):
                    raise _NotPlain
                if stat.S_ISLNK(st.st_mode):
                    mode, oid = 0o120000, store(b"blob", os.fsencode(os.readlink(entry.path)))
                elif stat.S_ISDIR(st.st_mode):
                    sub = tree_of(entry.path, prefix + name + b"/")
                    if sub is not None:  # git records no empty directory
                        items.append((name + b"/", name, 0o40000, sub))
                    continue
                elif stat.S_ISREG(st.st_mode) and st.st_size <= BIG_FILE:
                    mode = 0o100755 if st.st_mode & stat.S_IXUSR else 0o100644
                    with open(entry.path, "rb") as f:
                        data = f.read()
                    if name == b".gitattributes":
                        rule = _attributes_rule(data)
                        if rule is None:
                            raise _NotPlain
                        rules.add(rule)
                    if b"\r\n" in data:
                        crlf = True
                        crlf_text = crlf_text or b"\0" not in data
                    oid = store(b"blob", data)
                else:
                    raise _NotPlain
                items.append((name, name, mode, oid))
                entries.append((prefix + name, mode, oid, st))
        if not items:
            return None
        items.sort()  # git orders a tree's entries by name, a directory's as "name/"
        return store(b"tree", b"".join(b"%o %s\0%s" % (mode, name, oid)
                                       for _key, name, mode, oid in items))

    try:
        root = tree_of(str(work_tree), b"") or store(b"tree", b"")
    except _NotPlain:
        return None
    if ("text" in rules and crlf) or (rules and crlf_text) \
            or sum(len(data) + 32 for _kind, data in objects.values()) > PACK_LIMIT:
        return None
    commit = store(b"commit", b"tree %s\nauthor %s\ncommitter %s\n\n%s\n" % (
        root.hex().encode(), IDENTITY, IDENTITY, message.strip().encode()))
    for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags"):
        (git_dir / sub).mkdir(parents=True, exist_ok=True)
    _write_pack(git_dir / "objects" / "pack",
                [(oid, _COMPRESSED.get(oid, kind, data)) for oid, (kind, data) in objects.items()])
    (git_dir / "config").write_text(INIT_CONFIG + REPOSITORY_CONFIG)
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
    (git_dir / "refs/heads/main").write_text(commit.hex() + "\n")
    (git_dir / "index").write_bytes(_index(entries))
    return commit.hex()


def _index(entries: list[tuple[bytes, int, bytes, os.stat_result]]) -> bytes:
    """A version 2 index of `entries` (path, mode, blob id, the file's stat), as `git add`
    writes it: stat data for git's "unchanged?" check, entries sorted by path."""
    out = [b"DIRC", struct.pack(">II", 2, len(entries))]
    for path, mode, oid, st in sorted(entries):
        fields = [int(st.st_ctime), st.st_ctime_ns % 10**9, int(st.st_mtime),
                  st.st_mtime_ns % 10**9, st.st_dev, st.st_ino, mode, st.st_uid, st.st_gid,
                  st.st_size]
        entry = struct.pack(">10I", *(f & 0xFFFFFFFF for f in fields)) + oid + \
            struct.pack(">H", min(len(path), 0xFFF)) + path
        out.append(entry + b"\0" * (8 - len(entry) % 8))  # NUL-ended, padded to 8 bytes
    data = b"".join(out)
    return data + hashlib.sha1(data).digest()


def _layout_problems(git_dir: Path) -> list[str]:
    """What the files of `git_dir` show: entries besides FRESH_ENTRIES, refs besides the
    one branch, a HEAD pointing elsewhere, alternates, or a pack beside the one pack (and
    its index) that `fresh_repository` writes. (Which objects a pack holds, only git tells:
    `fresh_repository_problems`.)"""
    problems = [f"unexpected .git/{name}" for name in sorted(os.listdir(git_dir))
                if name not in FRESH_ENTRIES]
    refs = sorted(path.relative_to(git_dir).as_posix()
                  for path in (git_dir / "refs").rglob("*") if not path.is_dir())
    if refs != ["refs/heads/main"]:
        problems.append(f"ref files: {refs}")
    head = git_dir / "HEAD"
    if head.is_symlink() or not head.is_file() or head.read_text() != "ref: refs/heads/main\n":
        problems.append("HEAD is not refs/heads/main")
    objects_dir = git_dir / "objects"
    for extra in ("info/alternates", "info/http-alternates", "info/packs"):
        if (objects_dir / extra).exists():
            problems.append(f"objects/{extra} exists")
    packs = sorted(os.listdir(objects_dir / "pack")) if (objects_dir / "pack").is_dir() else []
    if packs and not (len(packs) == 2 and packs[0].endswith(".idx")
                      and packs[1] == packs[0][:-len(".idx")] + ".pack"):
        problems.append(f"pack files present: {', '.join(packs)}")
    return problems


def fresh_repository_problems(git_dir: Path, full: bool = False) -> list[str]:
    """What keeps `git_dir` from being one commit and nothing else; empty when clean.
    `full` also runs `git fsck --unreachable --no-reflogs` (slower on big trees)."""
    problems = _layout_problems(git_dir)
    refs = git("for-each-ref", "--format=%(refname)", git_dir=git_dir).split()
    if refs != ["refs/heads/main"]:
        problems.append(f"refs: {refs}")
    if git("rev-list", "--count", "--all", git_dir=git_dir) != "1":
        problems.append("more than one commit")
    stored = set(git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)",
                     git_dir=git_dir).split())
    reachable = {line.split()[0] for line in
                 git("rev-list", "--objects", "--all", git_dir=git_dir).splitlines() if line}
    if stored != reachable:
        problems.append(f"{len(stored - reachable)} unreachable objects, "
                        f"{len(reachable - stored)} missing")
    if full:
        unreachable = git("fsck", "--unreachable", "--no-reflogs", "--no-progress",
                          git_dir=git_dir)
        if unreachable:
            problems.append(f"fsck: {unreachable.splitlines()[0]}")
    return problems
