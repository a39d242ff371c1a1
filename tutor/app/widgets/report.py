"""The check report: each check passed or failed, expected against got, its hint, its charts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tutor.app.markdown_render import inline
from tutor.app.widgets.charts import MemoryChart, ProfileChart
from tutor.app.widgets.output import Hanging, render_run
from tutor.words.i18n import shown, t
from tutor.words.safe_text import neutralize

if TYPE_CHECKING:  # grading loads with the first Check, after start-up
    from tutor.pack.models import Exercise
    from tutor.grading.exercise import CheckResult, ExerciseReport

#: Pack text (a string or one per language) to the learner's language: ``Texts.__call__``.
Resolve = Callable[["str | dict[str, str] | None"], str]

_MARKS = {"passed": ("✓", "green"), "failed": ("✗", "red"), "error": ("!", "red"), "skipped": ("–", "dim"),
          "timeout": ("!", "red"), "tampered": ("!", "red")}


def check_text(check: CheckResult, resolve: Resolve) -> Text:
    """One check as a few lines of Text (descriptions come from the pack: resolve their language)."""
    status = check.status
    mark, style = _MARKS.get(status, ("?", "yellow"))
    out = Text()
    out.append(f"{mark} ", style=f"bold {style}")
    out.append_text(inline(resolve(check.description) or check.id))
    out.append(f"  {t('check.' + status) if status in _MARKS else status}", style=style)
    message = shown(check.message, check.said)  # grading's or the check's sentence, in the language in use
    if status == "passed":  # a measurement check says what it measured
        if message:
            out.append("\n    " + neutralize(str(message)), style="dim")
        return out
    if message:
        out.append("\n    " + neutralize(str(message)))
    for key, value in (("expected", shown(check.expected, check.expected_said)), ("got", shown(check.got, check.got_said))):
        if value not in (None, ""):
            out.append("\n    " + neutralize(t(f"check.{key}", value=value)), style="dim" if key == "expected" else "")
    hint = check.hint
    if hint:  # (not passed, here) grading chose it for this status and case
        out.append("\n    ")
        out.append_text(inline(t("check.hint", value=resolve(hint)), "italic cyan"))
    return out


def summary_line(solved: bool, passed: int, total: int) -> str:
    """The report's first line: "The check passed", "Both checks passed", "All 5 checks passed",
    or how many of how many passed."""
    if not solved:
        return t("exercise.failed", passed=passed, total=total)
    if total == 1:
        return t("exercise.passed.one")
    if total == 2:
        return t("exercise.passed.two")
    return t("exercise.passed", total=total)


def _line(text: Text, classes: str = "", *, marked: bool = False) -> Static:
    """A part of the report whose wrapped lines hang under their own text (see Hanging)."""
    return Static(Hanging.of(text, marked=marked), classes=classes)


class CheckReport(Vertical):
    """Built once per Check from grading's ExerciseReport; replaced by the next one."""

    DEFAULT_CSS = """
    CheckReport { height: auto; padding: 0 1; border: round $primary; }
    CheckReport.-passed { border: round $success; }
    CheckReport.-failed { border: round $error; }
    CheckReport > .summary { text-style: bold; }
    CheckReport > .check { margin: 1 0 0 0; }
    CheckReport > .run { margin: 1 0 0 0; }
    """

    def __init__(self, report: ExerciseReport, resolve: Resolve, stamp: str | None = None,
                 exercise: Exercise | None = None):
        """``exercise``: the step checked, whose checks say what a memory chart's "flat" allows."""
        super().__init__()
        self.exercise = exercise
        self.report = report
        self.resolve = resolve
        self.stamp = stamp  # "check 3 at 10:04:12": a new result shows as new even when its text is not
        self.add_class("-passed" if report.passed else "-failed")

    def _flat_limit(self, check_id: str, curve: list[list[float]]) -> float | None:
        """The bytes a `memory` check expecting flat allows at its last step; None otherwise."""
        from tutor.app.widgets.charts import flat_limit

        spec = next((c for c in (self.exercise.checks if self.exercise is not None else ())
                     if c.id == check_id), None)
        if getattr(spec, "kind", None) != "memory" or getattr(spec, "expect", None) != "flat" or len(curve) < 2:
            return None
        points = [(float(n), float(b)) for n, b in curve]
        return flat_limit(points, float(getattr(spec, "tolerance", 0.25)), float(getattr(spec, "slack_per_step", 64)))

    def on_mount(self) -> None:
        # Once laid out (its height known), bring the whole report into view, not just its top.
        from tutor.app.widgets.steps.base import reveal

        reveal(self)

    def compose(self) -> ComposeResult:
        checks = list(self.report.checks)
        cause = self.report.cause
        run = self.report.run
        if self.stamp:
            yield Static(Text(self.stamp, style="dim"), classes="stamp")
        if cause:  # the code does not run: say that and where, and nothing the checks could not see
            yield _line(Text(t("exercise.does_not_run"), style="bold red"), "summary")
            cause = str(shown(cause, self.report.cause_said) or cause)
            yield _line(Text(neutralize(t("exercise.cause", cause=cause[0].upper() + cause[1:])), style="red"))
            error = run.error
            traceback = error.traceback if error is not None else None
            if traceback:  # where: the line, with Python's own pointer
                yield _line(Text(neutralize(str(traceback).rstrip("\n")), style="red"), "run")
            yield _line(Text(t("exercise.checks_waiting", total=len(checks)), style="dim"), "run")
            return
        passed = sum(c.status == "passed" for c in checks)
        summary = summary_line(self.report.passed, passed, len(checks))
        yield _line(Text(summary, style="green" if self.report.passed else "red"), "summary")
        message = shown(self.report.message, self.report.said)
        # The engine's own summary repeats the count unless the run itself went wrong.
        if message and (run.error is not None or run.status != "ok"):
            yield _line(Text(neutralize(str(message))))
        for check in checks:
            yield _line(check_text(check, self.resolve), "check", marked=True)
            data = check.data or {}
            if isinstance(data, dict) and data.get("rows"):
                yield ProfileChart(list(data["rows"]))
            if isinstance(data, dict) and data.get("curve"):
                curve = list(data["curve"])
                yield MemoryChart(curve, self._flat_limit(check.id, curve))
        if run.stdout or run.stderr or run.status != "ok":
            yield _line(render_run(run), "run")
