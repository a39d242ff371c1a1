"""A free-response quiz: write, reveal the model answer, grade yourself."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Markdown, Static, TextArea

from tutor.app.widgets.steps.base import StepView
from tutor.core.i18n import t


class FreeQuizStep(StepView):
    def compose(self) -> ComposeResult:
        quiz = self.place.step
        earlier = self.store.step(*self.key)
        yield Markdown(self.text(quiz.question))
        yield TextArea(earlier.quiz_answer or "", soft_wrap=True, id="answer",
                       placeholder=t("quiz.free.placeholder"))
        yield Button(t("quiz.free.reveal"), id="reveal", variant="primary", compact=True)
        with Vertical(id="model", classes="-hidden" if earlier.quiz_answer is None else ""):
            yield Static(t("quiz.free.model"), classes="label")
            yield Markdown(self.text(quiz.answer))
            yield Static(t("quiz.free.grade"), classes="label")
            with Horizontal(classes="buttons"):
                yield Button(t("quiz.free.right"), id="right", variant="success", compact=True)
                yield Button(t("quiz.free.wrong"), id="wrong", variant="error", compact=True)
            yield Static(self._verdict(earlier.quiz_correct), id="verdict")

    @staticmethod
    def _verdict(correct: bool | None) -> str:
        if correct is None:
            return ""
        return t("quiz.answered", verdict=t("quiz.free.right" if correct else "quiz.free.wrong"))

    @on(Button.Pressed, "#reveal")
    def _reveal(self) -> None:
        self.query_one("#model").remove_class("-hidden")
        self.store.record_quiz(*self.key, self.query_one("#answer", TextArea).text, None)
        self.query_one("#model").scroll_visible()

    @on(Button.Pressed, "#right, #wrong")
    def _grade(self, event: Button.Pressed) -> None:
        correct = event.button.id == "right"
        self.store.record_quiz(*self.key, self.query_one("#answer", TextArea).text, correct)
        self.query_one("#verdict", Static).update(self._verdict(correct))
