"""How one run reads to the learner: a one-line outcome, then stdout, stderr and the traceback.

Built as Rich ``Text`` (never markup): whatever the learner's code printed is shown as is, so
square brackets in a tensor repr cannot turn into styles. The sandbox has already neutralised
terminal control sequences
of the output; exception text and sandbox messages are neutralised here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from tutor.core.i18n import t
from tutor.core.textclean import neutralize

if TYPE_CHECKING:  # the sandbox loads with the first run, after start-up
    from tutor.sandbox.result import RunResult


def outcome_line(result: RunResult) -> tuple[str, str]:
    """(sentence, style) summing up a RunResult."""
    status = result.status
    error = result.error
    if status == "ok":
        return t("outcome.ok", time=result.wall_time or 0.0), "bold green"
    if status == "error" and error:
        return neutralize(t("outcome.raised", type=error.type, message=error.message)), "bold red"
    if status == "sandbox-failure":
        return neutralize(t("outcome.failure", message=result.message or status)), "bold red"
    return neutralize(t("outcome.limit", message=result.message or status)), "bold yellow"


def render_run(result: RunResult, *, headline: tuple[str, str] | None = None) -> Text:
    """The whole run as Text; ``headline`` replaces the default outcome sentence."""
    sentence, style = headline or outcome_line(result)
    out = Text(neutralize(sentence), style=style)
    stdout = neutralize(result.stdout or "")
    stderr = neutralize(result.stderr or "")
    error = result.error
    if stdout:
        out.append("\n\n")
        out.append(stdout.rstrip("\n"))
    if stderr:
        out.append("\n\n")
        out.append(stderr.rstrip("\n"), style="yellow")
    traceback = error.traceback if error else None
    traceback = neutralize(traceback) if traceback else traceback
    if traceback and traceback.strip() not in stderr:
        out.append("\n\n")
        out.append(traceback.rstrip("\n"), style="red")
    if not stdout and not stderr and not traceback:
        out.append("\n")
        out.append(t("step.nothing"), style="dim")
    return out
