"""`taskforge report`: the HTML page of a run (every shard in its directory, merged).

`generate` writes `OUT/report.html` at the end of every run; `taskforge report OUT --out FILE`
writes it anywhere. The page is one self-contained file: see `page.py`.
"""

from __future__ import annotations

from pathlib import Path

from taskforge.cache import write_atomic
from taskforge.errors import UserError
from taskforge.stats import collect_stats
from taskforge.store.shards import read_records

REPORT = "report.html"


def write_report(directory: str | Path, dest: str | Path | None = None) -> Path:
    """Write the report of the task directory `directory` to `dest` (default
    `directory/report.html`); return its path."""
    from taskforge.report.page import render_page  # plotly and pygments: only when reporting

    directory = Path(directory)
    if not directory.is_dir():
        raise UserError(f"{directory}: no such task directory")
    path = directory / REPORT if dest is None else Path(dest)
    if path.is_dir():
        raise UserError(f"--out {path}: is a directory; name the HTML file to write")
    records = read_records(directory)
    stats = collect_stats(directory, records)
    title = f"taskforge report: {stats['recipe'] or directory.name}"
    write_atomic(path, render_page(stats, records, title))
    return path


def report_after_run(out: Path) -> list[str]:
    """The report at the end of `generate`; a directory that cannot be reported (a shard
    copied in without its manifest) costs the run a warning, never its tasks."""
    try:
        write_report(out)
    except UserError as e:
        return [f"report.html not written: {e}"]
    return []
