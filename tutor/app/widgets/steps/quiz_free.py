"""A free-response quiz: write, reveal the model answer, grade yourself."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static, TextArea

from tutor.app.widgets.editor import AnswerBox
from tutor.app.widgets.keybutton import KeyButton, with_key
from tutor.app.widgets.markdown import Markdown
from tutor.app.widgets.steps.base import StepView
from tutor.core.i18n import t
from tutor.core.models import FreeQuiz


class FreeQuizStep(StepView):
    """The model answer is this step's solution: the screen's solution key reveals it."""

    ACTIONS = frozenset({"solution"})

    @property
    def step(self) -> FreeQuiz:
        return self.step_as(FreeQuiz)
    def compose(self) -> ComposeResult:
        quiz = self.step
        earlier = self.store.steps.get(*self.key)
        yield Markdown(self.text(quiz.question))
        yield AnswerBox(earlier.quiz_answer or "", soft_wrap=True, id="answer",
                        placeholder=t("quiz.free.placeholder"))
        yield KeyButton(with_key(t("quiz.free.reveal"), self, "step('solution')"), id="reveal", variant="primary")
        with Vertical(id="model", classes="-hidden" if earlier.quiz_answer is None else ""):
            yield Static(t("quiz.free.model"), classes="label")
            yield Markdown(self.text(quiz.answer))
            yield Static(t("quiz.free.grade"), classes="label", id="grade-label")
            with Horizontal(classes="buttons", id="grade-buttons"):
                yield KeyButton(t("quiz.free.right"), id="right", variant="success")
                yield KeyButton(t("quiz.free.wrong"), id="wrong", variant="error")
            yield Static(self._verdict(earlier.quiz_correct), id="verdict")

    @staticmethod
    def _verdict(correct: bool | None, just_now: bool = False) -> str:
        if correct is None:
            return ""
        return t("quiz.graded" if just_now else "quiz.answered",
                 verdict=t("quiz.free.right" if correct else "quiz.free.wrong"))

    def supports(self, action: str) -> bool:
        """The solution key while the model answer is hidden; gone once it shows."""
        models = self.query("#model")
        return super().supports(action) and bool(models) and models.first().has_class("-hidden")

    def do_solution(self) -> None:
        self._reveal()

    @on(KeyButton.Pressed, "#reveal")
    def _reveal(self) -> None:
        model = self.query_one("#model")
        if model.has_class("-hidden"):  # once: a second press must not undo the self-grade
            model.remove_class("-hidden")
            self.store.answers.record_quiz(*self.key, self.query_one("#answer", TextArea).text, None)
            self.screen.refresh_bindings()  # the solution key goes from the footer
        from tutor.app.widgets.steps.base import reveal

        reveal(model)
        buttons = self.query_one("#grade-buttons")
        if buttons.display and self.store.steps.get(*self.key).quiz_correct is None:
            # the next thing to do is to grade yourself: Enter on "I got it", Tab to "I missed it"
            self.query_one("#right", KeyButton).focus(scroll_visible=False)

    @on(KeyButton.Pressed, "#right, #wrong")
    def _grade(self, event: KeyButton.Pressed) -> None:
        correct = event.button.id == "right"
        self.store.answers.record_quiz(*self.key, self.query_one("#answer", TextArea).text, correct)
        self.query_one("#verdict", Static).update(self._verdict(correct, just_now=True))
