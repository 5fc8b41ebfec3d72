"""The report's charts: plotly figures built from a run's figures and task records.

Each chart is a plotly figure rendered to a `<div>` without the plotly library; the page
inlines that library once (see `page.py`), so the report draws with no network at all.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

from taskforge.model import TaskRecord
from taskforge.store.manifest import FUNNEL_STAGES, TIMED_STAGES

# Every chart's look: a plain template (plotly's default one adds kilobytes to each chart).
LAYOUT = {"template": "simple_white", "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
          "font": {"family": "system-ui, sans-serif", "size": 12}, "height": 340}
CONFIG = {"displaylogo": False, "responsive": True,
          "modeBarButtonsToRemove": ["sendDataToCloud", "select2d", "lasso2d"]}
# The difficulty figures shown as histograms: record field -> axis title.
HISTOGRAMS = {"score": "difficulty score", "lines_deleted": "lines deleted",
              "fail_to_pass": "FAIL_TO_PASS tests", "covering_tests": "covering tests"}
EMITTED_COLOUR = "#2ca02c"
# Rejection reasons take these in turn (no green: green is a task).
REJECTION_COLOURS = ("#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                     "#bcbd22", "#17becf", "#1f77b4", "#aec7e8", "#ffbb78", "#c5b0d5")


def chart_html(figure: go.Figure, div_id: str) -> str:
    """The chart as a `<div class="chart">` whose script draws it with the inlined library."""
    figure.update_layout(**LAYOUT)
    html = pio.to_html(figure, full_html=False, include_plotlyjs=False, div_id=div_id,
                       config=CONFIG, default_height=LAYOUT["height"])
    return f'<div class="chart" data-chart="{div_id}">{html}</div>'


def funnel(stats: dict[str, Any]) -> go.Figure:
    counts = [stats["funnel"].get(stage, 0) for stage in FUNNEL_STAGES]
    figure = go.Figure(go.Funnel(y=list(FUNNEL_STAGES), x=counts, textinfo="value+percent initial",
                                 marker={"color": "#4c78a8"}))
    figure.update_layout(title="funnel: candidates to tasks")
    return figure


def outcomes(rows: dict[str, dict[str, Any]], what: str, reasons: list[str]) -> go.Figure:
    """Per row (a strategy, source or language): its tasks and its rejections by reason,
    stacked, so a bar's length is the candidates tried. `reasons` are every rejection reason
    of the run, in the order that gives each its colour in every chart."""
    names = list(rows)
    figure = go.Figure()
    figure.add_bar(y=names, x=[rows[n].get("emitted", 0) for n in names], name="task",
                   orientation="h", marker={"color": EMITTED_COLOUR})
    for n, reason in enumerate(reasons):
        counts = [rows[name].get("rejections", {}).get(reason, 0) for name in names]
        if any(counts):
            figure.add_bar(y=names, x=counts, name=reason, orientation="h",
                           marker={"color": REJECTION_COLOURS[n % len(REJECTION_COLOURS)]})
    figure.update_layout(title=f"candidates tried per {what}: tasks and rejections",
                         barmode="stack", xaxis_title="candidates tried",
                         yaxis={"autorange": "reversed"}, legend={"traceorder": "normal"},
                         height=max(LAYOUT["height"], 90 + 28 * len(names)))
    return figure


def histogram(records: list[TaskRecord], field: str) -> go.Figure:
    values = [r["difficulty"].get(field, 0) for r in records]
    figure = go.Figure(go.Histogram(x=values, marker={"color": "#4c78a8"}, nbinsx=30))
    figure.update_layout(title=HISTOGRAMS[field], xaxis_title=HISTOGRAMS[field],
                         yaxis_title="tasks", bargap=0.05)
    return figure


def lines_against_fail_to_pass(records: list[TaskRecord]) -> go.Figure:
    """Lines deleted against FAIL_TO_PASS, a colour per strategy, the task's id on hover."""
    figure = go.Figure()
    for strategy in sorted({r["strategy"] for r in records}):
        mine = [r for r in records if r["strategy"] == strategy]
        figure.add_scatter(x=[r["difficulty"].get("lines_deleted", 0) for r in mine],
                           y=[r["difficulty"].get("fail_to_pass", 0) for r in mine],
                           text=[r["instance_id"] for r in mine], mode="markers", name=strategy,
                           hovertemplate="%{text}<br>%{x} lines, %{y} FAIL_TO_PASS<extra></extra>")
    figure.update_layout(title="lines deleted against FAIL_TO_PASS", xaxis_title="lines deleted",
                         yaxis_title="FAIL_TO_PASS tests", height=420)
    return figure


def stage_seconds(timing: dict[str, dict[str, float]], names: dict[str, str]) -> go.Figure:
    """Seconds per stage, a group of bars per source (`names`: snapshot -> source name)."""
    snapshots = [s for s in names if s in timing]
    figure = go.Figure()
    for stage in TIMED_STAGES:
        figure.add_bar(x=[names[s] for s in snapshots],
                       y=[timing[s].get(stage, 0.0) for s in snapshots], name=stage)
    figure.update_layout(title="seconds per stage and source", barmode="group",
                         yaxis_title="seconds")
    return figure


def rejections_of(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The rejection counts of several rows summed (a language's strategies)."""
    total: Counter[str] = Counter()
    for row in rows:
        total.update(row.get("rejections", {}))
    return dict(sorted(total.items()))
