"""A pinned Debian source package (`NAME=VERSION`): fetched with `apt-get source` through a
private APT configuration, unpacked with Debian's patches applied, and snapshotted like an
unpacked sdist.

Debian's binary packages ship only jars; its source packages ship the upstream tree with the
tests (docs/java-research.md, section 4). The machine's APT sources usually name only binary
indexes (`Types: deb`), and the machine's /etc/apt is not ours to change: a temporary
directory gets a copy of the configured sources as `deb-src` entries, its own index lists and
package cache, and `APT_CONFIG` points apt-get at it. The mirrors are the machine's, as
configured; `apt-get source` checks every file against the signed index and runs
`dpkg-source -x`, which applies `debian/patches` (quilt).

What is left out of the snapshot: `debian/` (the packaging: build rules, copyright, and the
patches, whose diff text holds lines of the very methods a task deletes) and `.pc/` (quilt's
copies of the files as they were before the patches, the same leak). The patched tree is
what the tests see, as in Debian's own build.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from taskforge.cache import digest
from taskforge.errors import UserError
from taskforge.model import Snapshot
from taskforge.sources.store import recall, remember, snapshot_from_tree, write_notes

# NAME=VERSION: a source package name (Debian policy 5.6.1) and an exact version (epoch,
# upstream version starting with a digit, revision).
_PINNED = re.compile(r"^([a-z0-9][a-z0-9+.-]+)=((?:\d+:)?\d[A-Za-z0-9.+~-]*)$")
EXAMPLE = "libcommons-codec-java=1.15-1"
# What `dpkg-source -x` leaves beside the upstream files; never part of a snapshot.
LEFT_OUT = ("debian", ".pc")
_URL = re.compile(r"\S+://\S*?/([^/\s]+)(?=\s|$)")


def pinned(spec: str) -> tuple[str, str] | None:
    """(name, version) of a well-formed `NAME=VERSION`, else None."""
    match = _PINNED.match(spec.strip())
    return (match.group(1), match.group(2)) if match else None


def ingest_debian(spec: str, cache: Path) -> Snapshot:
    parsed = pinned(spec)
    if parsed is None:
        raise UserError(f"debian:{spec}: pin an exact version, as NAME=VERSION "
                        f"(e.g. {EXAMPLE})")
    name, version = parsed
    source = f"debian:{name}={version}"
    key = digest("debian", f"{name}={version}")
    known = recall(cache, key)
    if known:
        return known
    missing = tools_missing()
    if missing:
        raise UserError(f"{source}: {missing}")
    tmp = cache / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tmp, prefix="debian-") as scratch:
        root = fetch_source(name, version, Path(scratch))
        notes = _leave_out_packaging(root)
        snapshot = snapshot_from_tree(root, name=name, source=source, cache=cache, archive=True)
    write_notes(cache, snapshot.source, notes)
    remember(cache, key, snapshot)
    return snapshot


def tools_missing() -> str | None:
    """Why `apt-get source` cannot run here, or None."""
    if shutil.which("apt-get") is None or shutil.which("apt-config") is None:
        return "apt-get is not installed (debian: sources need Debian's APT)"
    if shutil.which("dpkg-source") is None:
        return "dpkg-source is not installed (apt-get install dpkg-dev)"
    return None


def fetch_source(name: str, version: str, scratch: Path) -> Path:
    """`apt-get source NAME=VERSION` into `scratch/download`; the unpacked tree."""
    source = f"debian:{name}={version}"
    env = {**os.environ, "APT_CONFIG": str(private_apt(scratch, source)),
           "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    update = subprocess.run(["apt-get", "-q", "update"], env=env, capture_output=True,
                            text=True, timeout=600)
    download = scratch / "download"
    download.mkdir()
    proc = subprocess.run(["apt-get", "-q", "source", f"{name}={version}"], cwd=download,
                          env=env, capture_output=True, text=True, timeout=1800)
    unpacked = [p for p in download.iterdir() if p.is_dir()]
    if proc.returncode != 0 or len(unpacked) != 1:
        raise UserError(f"{source}: {_why(proc.stdout + proc.stderr, update, name, env)}")
    return unpacked[0]


def private_apt(scratch: Path, source: str) -> Path:
    """An APT configuration under `scratch`: the machine's configured sources as `deb-src`
    entries, index lists and caches of its own. Its path (for `APT_CONFIG`)."""
    proc = subprocess.run(["apt-config", "shell", "LIST", "Dir::Etc::sourcelist/f",
                           "PARTS", "Dir::Etc::sourceparts/d"], capture_output=True, text=True)
    found = dict(re.findall(r"^(LIST|PARTS)='(.*)'$", proc.stdout, re.MULTILINE))
    parts = scratch / "apt" / "sources.list.d"
    parts.mkdir(parents=True)
    files = [Path(found["LIST"])] if found.get("LIST") else []
    if found.get("PARTS") and Path(found["PARTS"]).is_dir():
        files += sorted(Path(found["PARTS"]).iterdir())
    written = 0
    for i, path in enumerate(files):
        if not path.is_file() or path.suffix not in (".list", ".sources"):
            continue  # apt itself reads only these (`.disabled` and backups are off)
        text = path.read_text(encoding="utf-8", errors="replace")
        converted = (as_source_stanzas(text) if path.suffix == ".sources"
                     else as_source_lines(text))
        if converted.strip():
            (parts / f"{i:02d}-{path.name}").write_text(converted, encoding="utf-8")
            written += 1
    if not written:
        raise UserError(f"{source}: APT has no configured sources to fetch source packages "
                        "from")
    lists = scratch / "apt" / "lists"
    (lists / "partial").mkdir(parents=True)
    (scratch / "apt" / "cache" / "archives" / "partial").mkdir(parents=True)
    conf = scratch / "apt" / "apt.conf"
    # The machine's apt.conf.d still applies (proxies, retries); only where the sources,
    # indexes and caches are changes.
    conf.write_text(f'Dir::Etc::sourcelist "/dev/null";\n'
                    f'Dir::Etc::sourceparts "{parts}";\n'
                    f'Dir::State::Lists "{lists}";\n'
                    f'Dir::Cache "{scratch / "apt" / "cache"}";\n'
                    # as root, apt hands downloads to its `_apt` user, who cannot enter a
                    # private temporary directory: it warns and downloads as root anyway
                    + ('APT::Sandbox::User "root";\n' if os.geteuid() == 0 else ""),
                    encoding="utf-8")
    return conf


def as_source_stanzas(text: str) -> str:
    """deb822 `.sources` stanzas with binary indexes, as `deb-src` stanzas."""
    out = []
    for stanza in re.split(r"\n\s*\n", text):
        types = re.search(r"^Types:[ \t]*(.*)$", stanza, re.MULTILINE | re.IGNORECASE)
        if types is None or not {"deb", "deb-src"} & set(types.group(1).split()):
            continue
        out.append(stanza[:types.start()] + "Types: deb-src" + stanza[types.end():])
    return "\n\n".join(s.strip("\n") for s in out) + "\n" if out else ""


def as_source_lines(text: str) -> str:
    """One-line `.list` entries (`deb [options] URI SUITE COMPONENTS`) as `deb-src` lines."""
    lines = []
    for line in text.splitlines():
        words = line.split(None, 1)
        if len(words) == 2 and words[0] in ("deb", "deb-src"):
            lines.append(f"deb-src {words[1]}")
    return "\n".join(dict.fromkeys(lines)) + "\n" if lines else ""


def _why(output: str, update: subprocess.CompletedProcess[str], name: str,
         env: dict[str, str]) -> str:
    """One line: why `apt-get source` gave no tree (URLs cut to their file names, so no
    mirror's host name ends up in a report)."""
    errors = [_URL.sub(r"\1", ln[3:]).strip() for ln in output.splitlines()
              if ln.startswith("E: ")]
    errors = [re.sub(r"\s*\[IP: [^\]]*\]", "", e) for e in errors]
    errors = [re.sub(r"\s{2,}", " ", e) for e in errors]
    if any(e.startswith(("Can not find version", "Unable to find a source package"))
           for e in errors):
        known = versions_in_index(name, env)
        have = f"it has {', '.join(known)}" if known else "no version of it at all"
        failed = [_URL.sub(r"\1", ln[3:]).strip() for ln in
                  (update.stdout + update.stderr).splitlines() if ln.startswith("E: ")]
        hint = f"; apt-get update: {failed[0][:160]}" if failed and not known else ""
        return f"not in the source index ({have}){hint}"
    return f"apt-get source failed: {'; '.join(errors[:2]) or output.strip()[-200:]}"[:400]


def versions_in_index(name: str, env: dict[str, str]) -> list[str]:
    proc = subprocess.run(["apt-cache", "showsrc", "--only-source", name], env=env,
                          capture_output=True, text=True)
    return list(dict.fromkeys(re.findall(r"^Version: (\S+)$", proc.stdout, re.MULTILINE)))


def _leave_out_packaging(root: Path) -> list[str]:
    """Remove `debian/` and `.pc/` from the unpacked tree; notes saying so."""
    series = root / "debian" / "patches" / "series"
    patches = [ln for ln in series.read_text(encoding="utf-8", errors="replace").splitlines()
               if ln.strip() and not ln.lstrip().startswith("#")] if series.is_file() else []
    for name in LEFT_OUT:
        path = root / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
    applied = f"{len(patches)} Debian patch(es) applied; " if patches else ""
    return [f"{applied}debian/ and .pc/ left out (packaging; the patches' text and quilt's "
            "copies would hold the original code of what a task deletes)"]
