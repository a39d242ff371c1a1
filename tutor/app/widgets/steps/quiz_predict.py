"""Predict the output: type what the code prints, then it runs in the sandbox and is compared."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.widgets import Static, TextArea

from tutor.app.widgets.editor import TextBox
from tutor.app.widgets.keybutton import KeyButton
from tutor.app.widgets.markdown import Markdown
from tutor.app.widgets.output import field, render_run
from tutor.app.widgets.running import RunningIndicator
from tutor.app.widgets.steps.base import StepView
from tutor.core.i18n import t


def normalize(text: str) -> str:
    """Compare what matters: trailing spaces and blank lines at either end are not the point."""
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip()


class PredictQuizStep(StepView):
    ACTIONS = frozenset({"run"})

    def compose(self) -> ComposeResult:
        quiz = self.place.step
        earlier = self.store.step(*self.key)
        yield Markdown(self.text(quiz.question))
        yield Markdown(f"```python\n{quiz.code.rstrip()}\n```")
        yield TextBox(earlier.quiz_answer or "", id="prediction", placeholder=t("quiz.predict.placeholder"))
        yield KeyButton(t("quiz.predict.run") + " F5", id="run", variant="primary")
        yield RunningIndicator()
        yield Static(id="output", classes="output")
        yield Markdown(id="explain")

    @on(KeyButton.Pressed, "#run")
    def do_run(self) -> None:
        quiz = self.place.step
        self.start_job("run", lambda: field(self.engine.run_example(quiz), "run"))

    def job_finished(self, job: str, result: Any, error: str | None) -> None:
        output = self.shown_output(error)
        if output is None:
            return
        prediction = self.query_one("#prediction", TextArea).text
        actual = field(result, "stdout", "") or ""
        right = normalize(prediction) == normalize(actual)
        self.store.record_quiz(*self.key, prediction, right)
        headline = (t("quiz.predict.right"), "bold green") if right else (t("quiz.predict.wrong"), "bold red")
        output.update(render_run(result, headline=headline))
        if self.place.step.explain:
            self.query_one("#explain", Markdown).update(self.text(self.place.step.explain))
