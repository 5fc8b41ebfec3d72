"""The report page: one HTML document with its styles, scripts and charts inline.

Nothing on the page reaches the network: the plotly library is inlined from its Python
package, the diffs are coloured by pygments at build time, and the small scripts that sort
tables and filter task cards come from this package (report.js, report.css).
"""

from __future__ import annotations

from html import escape
from importlib.resources import files
from typing import Any

import plotly.offline
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer

from taskforge.model import TaskRecord
from taskforge.report import figures
from taskforge.store.manifest import TIMED_STAGES
from taskforge.store.written import REPORT_HEAD

DIFF_FORMATTER = HtmlFormatter(cssclass="diff")


def render_page(stats: dict[str, Any], records: list[TaskRecord], title: str) -> str:
    """The whole page for `stats` (collect_stats of a directory) and its task records."""
    sources = [s for s in stats["sources"] if not s.get("failed")]
    aside = [s for s in stats["sources"] if s.get("failed")]
    languages = language_rows(sources)
    names = {s["snapshot"]: s["name"] for s in sources}
    reasons = sorted(stats["rejections"])
    by_source = {s["name"]: s for s in sources}
    sections = [
        section("Funnel", figures.chart_html(figures.funnel(stats), "chart-funnel")),
        section("Per strategy", figures.chart_html(
            figures.outcomes(stats["strategies"], "strategy", reasons), "chart-strategies"),
            yield_table(stats["strategies"], "strategy", "table-strategies")),
        section("Per source", figures.chart_html(
            figures.outcomes(by_source, "source", reasons), "chart-sources"),
            yield_table(by_source, "source", "table-sources")),
        section("Per language", figures.chart_html(
            figures.outcomes(languages, "language", reasons), "chart-languages"),
            yield_table(languages, "language", "table-languages")),
        section("Difficulty", difficulty_charts(records)),
        section("Time per stage", *time_section(stats.get("timing", {}), names)),
        section("Flaky and excluded tests", excluded_tests(sources)),
        section("Set-aside sources", set_aside_table(aside)),
        section("Tasks", task_cards(records)),
    ]
    head = run_header(stats, title)
    return "\n".join([
        REPORT_HEAD, '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title>",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<style>{_asset('report.css')}\n{DIFF_FORMATTER.get_style_defs('.diff')}</style>",
        # The plotly library, inlined once: the charts below draw with it and nothing else.
        f"<script>{plotly.offline.get_plotlyjs()}</script>",
        "</head><body>", head, *sections,
        f"<script>{_asset('report.js')}</script>", "</body></html>"])


def _asset(name: str) -> str:
    return files("taskforge.report").joinpath(name).read_text()


def section(title: str, *parts: str) -> str:
    anchor = title.lower().replace(" ", "-")
    return f'<section id="{anchor}"><h2>{escape(title)}</h2>{"".join(parts)}</section>'


def run_header(stats: dict[str, Any], title: str) -> str:
    missing = stats["missing_shards"]
    facts = [f"{stats['tasks']} tasks", f"shards: {', '.join(stats['shards']) or 'none'}"]
    warning = (f'<p class="warning">shards {escape(", ".join(missing))} are missing: the figures '
               "cover only the shards present</p>") if missing else ""
    items = "".join(f"<li>{escape(w)}</li>" for w in stats.get("warnings", []))
    warnings = f"<details><summary>{len(stats['warnings'])} warnings</summary><ul>{items}</ul>" \
               "</details>" if items else ""
    nav = " · ".join(f'<a href="#{a}">{escape(t)}</a>' for a, t in (
        ("funnel", "funnel"), ("per-strategy", "strategies"), ("per-source", "sources"),
        ("per-language", "languages"), ("difficulty", "difficulty"),
        ("time-per-stage", "time"), ("flaky-and-excluded-tests", "tests left out"),
        ("set-aside-sources", "set aside"), ("tasks", "tasks")))
    return (f"<header><h1>{escape(title)}</h1><p>{escape(' · '.join(facts))}</p>"
            f"<nav>{nav}</nav>{warning}{warnings}</header>")


def table(table_id: str, columns: list[str], rows: list[list[Any]]) -> str:
    """A sortable table (report.js sorts on a header click; numbers sort as numbers)."""
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return (f'<table class="sortable" id="{table_id}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return escape(str(value))


def yield_table(rows: dict[str, dict[str, Any]], what: str, table_id: str) -> str:
    lines = []
    for name, row in rows.items():
        tried, emitted = row.get("tried", 0), row.get("emitted", 0)
        reasons = sorted(row.get("rejections", {}).items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append([name, row.get("candidates", 0), tried, emitted,
                      f"{100 * emitted / tried:.0f}%" if tried else None,
                      ", ".join(f"{r} {n}" for r, n in reasons) or None])
    return table(table_id, [what, "candidates", "tried", "tasks", "yield", "rejections"], lines)


def language_rows(sources: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The sources' counts summed by their language."""
    rows: dict[str, dict[str, Any]] = {}
    for source in sources:
        found = rows.setdefault(source.get("language") or "unknown",
                                {"candidates": 0, "tried": 0, "emitted": 0, "members": []})
        for key in ("candidates", "tried", "emitted"):
            found[key] += source.get(key, 0)
        found["members"].append(source)
    return {lang: {**{k: v for k, v in row.items() if k != "members"},
                   "rejections": figures.rejections_of(row["members"])}
            for lang, row in sorted(rows.items())}


def difficulty_charts(records: list[TaskRecord]) -> str:
    if not records:
        return '<p class="empty">no tasks: nothing to measure</p>'
    charts = [figures.chart_html(figures.histogram(records, field), f"chart-{field}")
              for field in figures.HISTOGRAMS]
    scatter = figures.chart_html(figures.lines_against_fail_to_pass(records), "chart-scatter")
    return f'<div class="grid">{"".join(charts)}</div>{scatter}'


def time_section(timing: dict[str, dict[str, float]], names: dict[str, str]) -> list[str]:
    if not any(s in timing for s in names):
        return ['<p class="empty">this run recorded no timing</p>']
    note = ("<p>Wall-clock seconds, summed over the shard jobs (each job ingests every source). "
            "The environment and baseline take next to nothing when the cache holds them. "
            "The leak scan runs inside confirmation: its bar is the scans' share of it, summed "
            "over the workers of the emitted tasks.</p>")
    rows = [[names[s], *(timing[s].get(stage, 0.0) for stage in TIMED_STAGES),
             round(sum(timing[s].get(stage, 0.0) for stage in TIMED_STAGES if stage != "scan"), 3)]
            for s in names if s in timing]
    return [note, figures.chart_html(figures.stage_seconds(timing, names), "chart-time"),
            table("table-time", ["source", *TIMED_STAGES, "total"], rows)]


def excluded_tests(sources: list[dict[str, Any]]) -> str:
    """Per source, the tests the baseline left out of PASS_TO_PASS, with their names."""
    rows = [[s["name"], s.get("tests"), s.get("stable"), s.get("flaky"), s.get("failing"),
             s.get("ungradable", 0)] for s in sources]
    lists = []
    for s in sources:
        for kind, why in (("flaky", "outcome changed between baseline runs"),
                          ("failing", "failed in every baseline run"),
                          ("ungradable", "not passed when the grader graded the unchanged code")):
            names = s.get(f"{kind}_tests", [])
            if names:
                shown = "".join(f"<li><code>{escape(n)}</code></li>" for n in names)
                cut = s.get(kind, 0) - len(names)
                more = f"<li>and {cut} more</li>" if cut > 0 else ""
                lists.append(f"<details><summary>{escape(s['name'])}: {s.get(kind, 0)} {kind} "
                             f"({why})</summary><ul>{shown}{more}</ul></details>")
    return table("table-tests", ["source", "tests", "stable", "flaky", "failing", "ungradable"],
                 rows) + \
        "".join(lists)


def set_aside_table(aside: list[dict[str, Any]]) -> str:
    if not aside:
        return '<p class="empty">every source was ingested</p>'
    return table("table-set-aside", ["source", "license", "reason"],
                 [[s.get("source") or s["name"], s.get("license"), s["failed"]] for s in aside])


def task_cards(records: list[TaskRecord]) -> str:
    if not records:
        return '<p class="empty">no tasks</p>'

    def options(field: str) -> str:
        return "".join(f'<option value="{escape(v)}">{escape(v)}</option>'
                       for v in sorted({r[field] for r in records}))

    controls = (
        '<div class="filters"><input id="task-filter" type="search" '
        'placeholder="filter: id, symbol, path or statement words">'
        f'<select id="strategy-filter"><option value="">every strategy</option>{options("strategy")}'
        f'</select><select id="repo-filter"><option value="">every source</option>{options("repo")}'
        f'</select><span id="task-count">{len(records)} of {len(records)} tasks</span></div>')
    return controls + '<div id="cards">' + "".join(map(card, records)) + "</div>"


def card(record: TaskRecord) -> str:
    """One task: what was deleted, the statement, the verification figures, the diff."""
    difficulty = record.get("difficulty", {})
    verification = record.get("verification", {})
    deleted = "".join(f"<li><code>{escape(d['symbol'])}</code> ({escape(d['kind'])}, "
                      f"{escape(d['path'])}:{d['start_line']}-{d['end_line']})</li>"
                      for d in record["deleted"])
    nulls = ", ".join(f"<code>{escape(body)}</code> passes {n['passed']}/{n['of']}"
                      for body, n in verification.get("null_solutions", {}).items())
    leak = record.get("sanitizer", {}).get("leak_scan", {})
    facts = [("FAIL_TO_PASS", len(record["FAIL_TO_PASS"])),
             ("PASS_TO_PASS", len(record["PASS_TO_PASS"])),
             ("covering tests", difficulty.get("covering_tests")),
             ("lines deleted", difficulty.get("lines_deleted")),
             ("score", difficulty.get("score")),
             ("repeats", verification.get("repeats")),
             ("screened", verification.get("screen", {}).get("screened")),
             ("leak scan", "clean" if leak.get("clean") else "not clean")]
    figures_html = "".join(f"<div><dt>{escape(k)}</dt><dd>{cell(v)}</dd></div>" for k, v in facts)
    runs = "; ".join(f"{run['state']}: {run['passed']} passed, {run['not_passed']} not"
                     for run in verification.get("runs", []))
    searchable = " ".join([record["instance_id"], record["repo"], record["strategy"],
                           *(d["symbol"] for d in record["deleted"]),
                           *(d["path"] for d in record["deleted"]),
                           record.get("problem_statement", "")]).lower()
    diff = highlight(record["patch"], DiffLexer(), DIFF_FORMATTER)
    return (
        f'<article class="card" id="{escape(record["instance_id"])}" '
        f'data-strategy="{escape(record["strategy"])}" data-repo="{escape(record["repo"])}" '
        f'data-search="{escape(searchable)}">'
        f'<h3>{escape(record["instance_id"])}</h3>'
        f'<p class="meta">{escape(record["repo"])} @ {escape(record["base_commit"][:12])} · '
        f'{escape(record["strategy"])} · {escape(record.get("language", ""))} · '
        f'{escape(str(record.get("license")))}</p>'
        f"<ul class=\"deleted\">{deleted}</ul><dl>{figures_html}</dl>"
        f'<p class="runs">verification runs: {escape(runs) or "-"}'
        f'{"; null solutions: " + nulls if nulls else ""}</p>'
        f"<details open><summary>problem statement</summary>"
        f'<pre class="statement">{escape(record.get("problem_statement", ""))}</pre></details>'
        f"<details open><summary>reference solution (patch)</summary>{diff}</details>"
        "</article>")
