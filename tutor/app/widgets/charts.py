"""Pictures of what a check measured: profiler rankings as a table with bars, memory as a sparkline.

A verdict alone teaches little; seeing ``aten::mm`` dwarf everything, or the leak's memory
climb while the fix stays flat, is the lesson.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tutor.words.i18n import t

BAR_WIDTH = 24
MAX_ROWS = 8


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """A horizontal bar in eighths of a cell, so small differences still show."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return "█" * full + ("" if part == 0 else " ▏▎▍▌▋▊▉"[part])


def profile_table(rows: list[dict[str, Any]]) -> Table:
    """Operators by self time, largest first, each with a bar relative to the largest."""
    rows = sorted(rows, key=lambda r: float(r.get("self_us") or 0), reverse=True)[:MAX_ROWS]
    top = max((float(r.get("self_us") or 0) for r in rows), default=0.0) or 1.0
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    table.add_column(t("chart.col.op"), no_wrap=True, overflow="ellipsis", max_width=28)
    for header in (t("chart.col.self"), t("chart.col.share"), t("chart.col.calls")):  # never squeezed to "Cal…"
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("", overflow="crop")  # the bar gives way first: it is cut, never the numbers
    for row in rows:
        self_us = float(row.get("self_us") or 0)
        share = row.get("share")
        share_text = f"{float(share) * 100:.0f}%" if isinstance(share, (int, float)) else ""
        table.add_row(Text(str(row.get("op", "?"))), f"{self_us:,.0f}", share_text, str(row.get("calls", "")),
                      Text(bar(self_us / top), style="cyan"))
    return table


class ProfileChart(Vertical):
    DEFAULT_CSS = """
    ProfileChart { height: auto; margin: 0 0 0 2; }
    ProfileChart > .chart-title { color: $text-muted; }
    """

    def __init__(self, rows: list[dict[str, Any]]):
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        yield Static(t("chart.profile"), classes="chart-title")
        yield Static(profile_table(self.rows))


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


#: Eighths of a cell, bottom up: one column of a memory chart is three cells of these.
_LEVELS = " ▁▂▃▄▅▆▇█"
CHART_ROWS = 3


def columns(values: list[float], top: float, rows: int = CHART_ROWS, width: int = 3) -> list[str]:
    """``values`` as vertical bars, ``rows`` cells tall, scaled from 0 to ``top`` (not from the
    smallest value to the largest: 256 B rising to 2 KiB must not fill the chart the way a leak
    of megabytes does); the lines of the chart, top first."""
    top = top or 1.0
    lines = []
    for row in reversed(range(rows)):
        cells = []
        for value in values:
            eighths = round(max(0.0, min(1.0, value / top)) * rows * 8) - row * 8
            cells.append(_LEVELS[max(0, min(8, eighths))] * width)
        lines.append(" ".join(cells))
    return lines


def flat_limit(curve: list[tuple[float, float]], tolerance: float, slack_per_step: float) -> float:
    """What a `memory` check that expects flat allows at the last step (as tutor.child.checks.kinds.memory
    judges it): the first step's bytes plus ``tolerance`` of them, plus ``slack_per_step`` a step."""
    (first_n, first), (last_n, _last) = curve[0], curve[-1]
    return first * (1 + tolerance) + slack_per_step * (last_n - first_n)


class MemoryChart(Vertical):
    """Bytes kept alive against the number of steps: bars from zero, the numbers in words, and,
    for a check that expects flat, how much it allows (the chart's top when the memory stays
    under it), so "passed" and the picture say the same thing."""

    DEFAULT_CSS = """
    MemoryChart { height: auto; margin: 0 0 0 2; }
    MemoryChart > .chart-title { color: $text-muted; }
    MemoryChart > .bars { color: $accent; }
    """

    def __init__(self, curve: list[list[float]], limit: float | None = None):
        super().__init__()
        self.curve = [(float(n), float(b)) for n, b in curve]
        self.limit = limit

    def compose(self) -> ComposeResult:
        yield Static(t("chart.memory"), classes="chart-title")
        if not self.curve:
            return
        values = [b for _, b in self.curve]
        top = max(max(values), self.limit or 0.0)
        yield Static("\n".join(columns(values, top)), classes="bars")
        points = "  ".join(f"{n:g}: {_size(b)}" for n, b in self.curve)
        yield Static(Text(points, style="dim"))
        if self.limit is not None:
            yield Static(Text(t("chart.memory.limit", limit=_size(self.limit), n=f"{self.curve[-1][0]:g}"),
                              style="dim"))
