"""`taskforge report`: the HTML page of a real run, looked at in a real browser.

The page is the one `generate` wrote at the end of the sample run of test_shards. Debian's
chromium, driven by playwright, loads it from disk: every chart must have drawn its marks,
the task-card filter and the table sort must work, and the page must request nothing but
itself. A screenshot is saved with each run among the test artifacts (conftest.artifact;
the run's last lines name it). Without chromium the browser tests skip here and fail under
CI (CI=true), where .ci/run installs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, stderr_lines
from test_shards import sample_output, sample_recipe

import taskforge
from taskforge.report import REPORT, write_report
from taskforge.store.manifest import TIMED_STAGES
from taskforge.store.shards import read_records

# Two generate runs of the sample (real suites), then a browser.
pytestmark = pytest.mark.slow

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
# Every chart the page draws for a run with tasks and timing.
CHARTS = {"chart-funnel", "chart-strategies", "chart-sources", "chart-languages", "chart-score",
          "chart-lines_deleted", "chart-fail_to_pass", "chart-covering_tests", "chart-scatter",
          "chart-time"}
# A chart's drawn marks: the non-empty shapes of its traces (bars, funnel steps, points).
MARKS = """() => Object.fromEntries(Array.from(document.querySelectorAll('.chart')).map(c =>
  [c.dataset.chart, Array.from(c.querySelectorAll('g.trace path'))
                         .filter(p => (p.getAttribute('d') || '').length > 2).length]))"""
VISIBLE_CARDS = "() => Array.from(document.querySelectorAll('article.card')).filter(c => !c.hidden)" \
                ".map(c => c.id)"


@pytest.fixture(scope="module")
def out(tf_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample run in a directory of its own: a run that resumes finished work (the
    shared sample directory) spends no time screening, and this one's timing is checked."""
    out = tmp_path_factory.mktemp("report") / "out"
    taskforge.generate(sample_recipe(tf_cache), out=out, cache=tf_cache)
    return out


@pytest.fixture(scope="module")
def records(out: Path) -> list[dict[str, Any]]:
    return read_records(out)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless chromium (Debian's, never a downloaded build), or a skip here and a failure
    under CI."""
    executable = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        executable, why = None, f"playwright is not installed ({e})"
    else:
        why = "no chromium on PATH (apt-get install chromium)"
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail(f"the report's browser tests must run under CI: {why}")
        pytest.skip(f"the report's browser tests need a browser: {why}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class Visit:
    """A page opened from disk, with every request it made."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.requests: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_load_state("load")

    def marks(self) -> dict[str, int]:
        return self.page.evaluate(MARKS)

    def off_disk(self) -> list[str]:
        """Requests for anything but the file itself and inline data."""
        return [url for url in self.requests if not url.startswith(("file://", "data:"))]


@pytest.fixture()
def visit(browser: Any, out: Path) -> Iterator[Visit]:
    opened = Visit(browser, out / REPORT)
    yield opened
    opened.page.close()


def test_generate_writes_the_report_and_every_chart_draws(
        visit: Visit, records: list[dict], artifact: Callable[[str], Path]) -> None:
    marks = visit.marks()
    assert set(marks) == CHARTS
    assert all(n > 0 for n in marks.values()), f"charts that drew nothing: {marks}"
    # One point per task in the scatter: the chart shows the run's tasks, not a placeholder.
    assert marks["chart-scatter"] == len(records) > 0
    assert visit.off_disk() == [], "the report reached for the network"
    # Kept with the run's artifacts (conftest.artifact: the run's last line names it).
    shot = artifact("report.png")
    visit.page.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk: the whole page
    assert width == 1280 and height > 900, (width, height)


def test_filtering_task_cards(visit: Visit, records: list[dict]) -> None:
    page = visit.page
    every = sorted(r["instance_id"] for r in records)
    assert sorted(page.evaluate(VISIBLE_CARDS)) == every
    # A word of one task's deleted symbol shows that task alone.
    target = records[0]
    symbol = target["deleted"][0]["symbol"]
    expected = sorted(r["instance_id"] for r in records
                      if any(d["symbol"] == symbol for d in r["deleted"]))
    page.fill("#task-filter", symbol)
    assert sorted(page.evaluate(VISIBLE_CARDS)) == expected
    assert page.inner_text("#task-count") == f"{len(expected)} of {len(records)} tasks"
    # A word no task holds hides them all; clearing the filter brings them back.
    page.fill("#task-filter", "no-task-mentions-this")
    assert page.evaluate(VISIBLE_CARDS) == []
    page.fill("#task-filter", "")
    page.select_option("#strategy-filter", target["strategy"])
    assert sorted(page.evaluate(VISIBLE_CARDS)) == sorted(
        r["instance_id"] for r in records if r["strategy"] == target["strategy"])
    page.select_option("#strategy-filter", "")
    # The source filter keeps that source's tasks.
    repo = target["repo"]
    page.select_option("#repo-filter", repo)
    assert sorted(page.evaluate(VISIBLE_CARDS)) == sorted(
        r["instance_id"] for r in records if r["repo"] == repo)
    page.select_option("#repo-filter", "")
    assert sorted(page.evaluate(VISIBLE_CARDS)) == every


def test_tables_sort_on_a_header_click(visit: Visit, out: Path) -> None:
    page = visit.page
    column = "tests"
    header = page.locator("#table-tests th", has_text=re.compile(f"^{column}$"))

    def column_values() -> list[int]:
        return [int(v) for v in page.eval_on_selector_all(
            "#table-tests tbody tr", "rows => rows.map(r => r.cells[1].textContent)")]

    header.click()
    assert column_values() == sorted(column_values())
    header.click()
    assert column_values() == sorted(column_values(), reverse=True)
    assert len(set(column_values())) > 1, "the sample's sources need different test counts"


def test_the_checks_see_a_chart_that_did_not_draw_and_a_request_off_disk(
        browser: Any, out: Path, tmp_path: Path) -> None:
    """Positive control: the same page without its plotly library draws no chart, and a page
    that loads anything from a server is caught by the request listener."""
    page = (out / REPORT).read_text()
    start = page.index("<script>", page.index("</style>"))
    broken = tmp_path / "no-plotly.html"
    broken.write_text(page[:start] + page[page.index("</script>", start) + len("</script>"):])
    visit = Visit(browser, broken)
    assert set(visit.marks()) == CHARTS and set(visit.marks().values()) == {0}
    visit.page.close()

    leaking = tmp_path / "leaking.html"
    leaking.write_text(page.replace("</body>", '<img src="http://127.0.0.1:9/pixel.png"></body>'))
    visit = Visit(browser, leaking)
    assert visit.off_disk() == ["http://127.0.0.1:9/pixel.png"]
    visit.page.close()


def test_manifest_records_the_time_of_every_stage(out: Path) -> None:
    manifest = json.loads((out / "manifest-00000-of-00001.json").read_text())
    assert set(manifest["timing"]) == {s["snapshot"] for s in manifest["sources"]}
    for stages in manifest["timing"].values():
        assert set(stages) == set(TIMED_STAGES)
        assert all(seconds >= 0 for seconds in stages.values())
        # Each sample source had candidates screened and confirmed in this run.
        assert stages["screen"] > 0 and stages["confirmation"] > stages["scan"] > 0


def test_a_report_of_shards_merges_them(tf_cache: Path, records: list[dict], tmp_path: Path) -> None:
    """The report of a directory holding the three shards of the sample run shows every
    task of the unsharded run, per-source rejections and timing summed across the jobs; with
    one shard alone it says which are missing."""
    merged = sample_output(tf_cache, (0, 3))
    only_first = tmp_path / "first"
    only_first.mkdir()
    for name in ("manifest-00000-of-00003.json", "tasks-00000-of-00003.jsonl"):
        if (merged / name).is_file():  # a shard without tasks has no file
            shutil.copy(merged / name, only_first)
    for shard in (1, 2):
        sample_output(tf_cache, (shard, 3))
    page = write_report(merged, tmp_path / "merged.html").read_text()
    cards = re.findall(r'<article class="card" id="([^"]+)"', page)
    assert sorted(cards) == sorted(r["instance_id"] for r in records)
    assert "are missing" not in page

    parts = [json.loads(p.read_text()) for p in sorted(merged.glob("manifest-*-of-00003.json"))]
    whole = json.loads((merged / "manifest.json").read_text())
    for source in whole["sources"]:
        summed: Counter[str] = Counter()
        for part in parts:
            summed.update(next(s for s in part["sources"] if s["snapshot"] == source["snapshot"])
                          ["rejections"])
        assert source["rejections"] == dict(summed)
        for stage in TIMED_STAGES:
            assert whole["timing"][source["snapshot"]][stage] == pytest.approx(
                sum(part["timing"][source["snapshot"]][stage] for part in parts), abs=0.01)
    assert sum(sum(s["rejections"].values()) for s in whole["sources"]) == \
        sum(whole["rejections"].values())

    alone = write_report(only_first, tmp_path / "first.html").read_text()
    assert "shards 1/3, 2/3 are missing" in alone


def test_report_command_writes_where_told_and_refuses_bad_paths(out: Path, tmp_path: Path) -> None:
    dest = tmp_path / "elsewhere" / "run.html"
    proc = run_cli("report", str(out), "--out", str(dest), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(dest)
    assert dest.read_text().startswith("<!DOCTYPE html>")

    for args, message in (([str(tmp_path / "nowhere")], "no such task directory"),
                          ([str(tmp_path)], "no task shards"),
                          ([str(out), "--out", str(tmp_path)], "is a directory")):
        proc = run_cli("report", *args, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        [line] = stderr_lines(proc)
        assert line.startswith("taskforge: error: ") and message in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere"]
