"""The review charts, drawn as text: cards due per day for the next 14 days (a column chart in
eighths of a cell) and the share remembered per week. Plain Rich text, no plotting library:
they show on the review screen only, and must fit 80 columns."""

from __future__ import annotations

from datetime import datetime, timedelta

from rich.text import Text

from tutor.words.i18n import t

_EIGHTHS = " ▁▂▃▄▅▆▇█"
HEIGHT = 4  # rows of the column chart
CELL = 4  # columns per day


def _column(value: int, top: int, row: int) -> str:
    """The part of a column of ``value`` (of ``top``) drawn in ``row`` (0 = the bottom row)."""
    eighths = round(value / top * HEIGHT * 8) if top else 0
    if value and not eighths:
        eighths = 1  # one card still shows
    filled = max(0, min(8, eighths - row * 8))
    return _EIGHTHS[filled] * (CELL - 1) + " "


def forecast_chart(counts: list[int], now: float) -> Text:
    """Cards due on each of the next days (today's includes overdue), with the counts above."""
    top = max(counts, default=0)
    out = Text(t("review.chart.forecast", days=len(counts)) + "\n", style="bold")
    out.append("".join(f"{n:^{CELL - 1}} " if n else " " * CELL for n in counts).rstrip() + "\n", style="dim")
    for row in reversed(range(HEIGHT)):
        out.append("".join(_column(n, top, row) for n in counts).rstrip() + "\n", style="cyan")
    # Every column is labelled with its day of the month, today's too, and "today" goes on a
    # line of its own under it: in a 4-cell column it covered tomorrow's label.
    start = datetime.fromtimestamp(now)
    for index in range(len(counts)):
        label = f"{(start + timedelta(days=index)).strftime('%d'):<{CELL}}"
        out.append(label, style="bold" if index == 0 else "dim")
    out.rstrip()
    if counts:
        out.append("\n↑ " + t("review.chart.today"), style="dim")
    return out


def retention_chart(weeks: list[tuple[int, int]]) -> Text:
    """Per week, oldest first: the share of reviews remembered (Hard or better), as a percentage."""
    out = Text(t("review.chart.retention", weeks=len(weeks)) + "\n", style="bold")
    cells = []
    for reviewed, right in weeks:
        cells.append(f"{round(100 * right / reviewed):>3}%" if reviewed else "  – ")
    out.append(" ".join(cells))
    total = sum(n for n, _ in weeks)
    if total:
        out.append("   " + t("review.chart.retention.total", right=sum(r for _, r in weeks), reviewed=total),
                   style="dim")
    return out
