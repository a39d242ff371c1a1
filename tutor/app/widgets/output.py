"""How one run reads to the learner: a one-line outcome, then stdout, stderr and the traceback.

Built as Rich ``Text`` (never markup): whatever the learner's code printed is shown as is, so
square brackets in a tensor repr cannot turn into styles. The sandbox has already neutralised
terminal control sequences
of the output; exception text and sandbox messages are neutralised here.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from tutor.core.i18n import t
from tutor.core.textclean import neutralize


def field(obj: Any, name: str, default: Any = None) -> Any:
    """Read ``name`` from a dataclass-like object or a dict (the sandbox may hand either)."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def outcome_line(result: Any) -> tuple[str, str]:
    """(sentence, style) summing up a RunResult."""
    status = field(result, "status", "ok")
    error = field(result, "error")
    if status == "ok":
        return t("outcome.ok", time=field(result, "wall_time", 0.0) or 0.0), "bold green"
    if status == "error" and error:
        return neutralize(t("outcome.raised", type=field(error, "type", "Error"),
                            message=field(error, "message", ""))), "bold red"
    if status == "sandbox-failure":
        return neutralize(t("outcome.failure", message=field(result, "message") or status)), "bold red"
    return neutralize(t("outcome.limit", message=field(result, "message") or status)), "bold yellow"


def render_run(result: Any, *, headline: tuple[str, str] | None = None) -> Text:
    """The whole run as Text; ``headline`` replaces the default outcome sentence."""
    sentence, style = headline or outcome_line(result)
    out = Text(neutralize(sentence), style=style)
    stdout = neutralize(field(result, "stdout", "") or "")
    stderr = neutralize(field(result, "stderr", "") or "")
    error = field(result, "error")
    if stdout:
        out.append("\n\n")
        out.append(stdout.rstrip("\n"))
    if stderr:
        out.append("\n\n")
        out.append(stderr.rstrip("\n"), style="yellow")
    traceback = field(error, "traceback") if error else None
    traceback = neutralize(traceback) if traceback else traceback
    if traceback and traceback.strip() not in stderr:
        out.append("\n\n")
        out.append(traceback.rstrip("\n"), style="red")
    if not stdout and not stderr and not traceback:
        out.append("\n")
        out.append(t("step.nothing"), style="dim")
    return out
