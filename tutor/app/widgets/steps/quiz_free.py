"""A free-response quiz: write, reveal the model answer, grade yourself 1-4 (Again, Hard, Good,
Easy: the review scheduler's own ratings, as in the review queue)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Static, TextArea

from tutor.app.widgets.editor import AnswerBox
from tutor.app.widgets.keybutton import KeyButton, with_key
from tutor.app.widgets.markdown import Markdown
from tutor.app.widgets.steps.base import StepView
from tutor.words.i18n import t
from tutor.pack.models import FreeQuiz


#: A self-grade, 1-4, as FSRS (and the review queue) names them.
RATINGS = (1, 2, 3, 4)


def rating_words(rating: int) -> str:
    """"3 Good": the key and the rating's name."""
    return f"{rating} {t(f'review.rate.{rating}')}"


class RateButtons(Horizontal):
    """The four grades: Left/Right move between them (Right, Enter graded "I got it" when the
    learner meant the next button), Enter or a click grades."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("left", "move(-1)", show=False),
                                             Binding("right", "move(1)", show=False)]

    def action_move(self, step: int) -> None:
        buttons = list(self.query(KeyButton))
        focused = self.app.focused
        if focused in buttons:
            buttons[(buttons.index(focused) + step) % len(buttons)].focus()


class FreeQuizStep(StepView):
    """The model answer is this step's solution: the screen's solution key reveals it. Then the
    learner grades their answer 1-4 (keys 1-4, or the buttons), and can grade it again."""

    ACTIONS = frozenset({"solution"})
    BINDINGS: ClassVar[list[BindingType]] = [Binding(str(n), f"rate({n})", show=False) for n in RATINGS]

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
            with RateButtons(classes="buttons", id="grade-buttons"):
                for n in RATINGS:
                    yield KeyButton(rating_words(n), id=f"rate-{n}",
                                    variant="error" if n == 1 else "success" if n >= 3 else "warning")
            yield Static(self._verdict(self._earlier_rating(earlier.quiz_correct)), id="verdict")

    def _earlier_rating(self, correct: bool | None) -> int | None:
        """The grade given before: the 1-4 kept, else (an answer graded before there were four)
        Good for right, Again for wrong."""
        if correct is None:
            return None
        kept = self.store.answers.rating(*self.key)
        return kept if kept is not None else (3 if correct else 1)

    @staticmethod
    def _verdict(rating: int | None, just_now: bool = False) -> str:
        if rating is None:
            return ""
        said = t("quiz.graded" if just_now else "quiz.answered", verdict=rating_words(rating))
        return said + t("quiz.free.regrade")  # the words carry their spacing: none before "（"

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
            # the next thing to do is to grade yourself: 1-4, or Enter on "3 Good", Left/Right
            self.query_one("#rate-3", KeyButton).focus(scroll_visible=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """1-4 grade once the model answer shows (typed in the answer box they are text)."""
        if action == "rate":
            if self._progress_key is not None:  # in the review queue, whose own 1-4 grade the card
                return False
            models = self.query("#model")
            return bool(models) and not models.first().has_class("-hidden")
        return True

    @on(KeyButton.Pressed, "#grade-buttons KeyButton")
    def _pressed(self, event: KeyButton.Pressed) -> None:
        self.action_rate(int(str(event.button.id).rsplit("-", 1)[-1]))

    def action_rate(self, rating: int) -> None:
        """Grade the answer ``rating`` (1-4; Again is a miss) and say so where it is seen; a
        later grade replaces it."""
        if not self.check_action("rate", ()) or rating not in RATINGS:
            return
        self.store.answers.record_quiz(*self.key, self.query_one("#answer", TextArea).text, rating >= 2,
                                       rating=rating)
        verdict = self.query_one("#verdict", Static)
        verdict.update(self._verdict(rating, just_now=True))
        from tutor.app.widgets.steps.base import reveal

        reveal(self.query_one("#grade-label"), self.query_one("#grade-buttons"), verdict)  # never below the fold
