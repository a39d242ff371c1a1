"""A multiple-choice quiz: instant feedback for one answer, Submit for several; every choice explained."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Checkbox, RadioButton, RadioSet, Static

from tutor.app.widgets.keybutton import KeyButton
from tutor.app.widgets.markdown import Markdown
from tutor.app.widgets.steps.base import StepView
from tutor.core.i18n import t


def _indices(answer: str | None) -> set[int]:
    if not answer:
        return set()
    return {int(part) for part in answer.split(",") if part.strip().isdigit()}


class ChoiceQuizStep(StepView):
    def compose(self) -> ComposeResult:
        quiz = self.place.step
        earlier = _indices(self.store.step(*self.key).quiz_answer)
        yield Markdown(self.text(quiz.question))
        yield Static(t("quiz.choice.pick_many" if quiz.multiple else "quiz.choice.pick"), classes="muted")
        if quiz.multiple:
            with Vertical(id="choices"):
                for i, choice in enumerate(quiz.choices):
                    yield Checkbox(self.text(choice.text), value=i in earlier, id=f"choice-{i}")
            yield KeyButton(t("quiz.choice.submit"), id="submit", variant="primary")
        else:
            with RadioSet(id="choices"):
                for i, choice in enumerate(quiz.choices):
                    yield RadioButton(self.text(choice.text), value=i in earlier, id=f"choice-{i}")
        yield Static(id="feedback")

    def on_mount(self) -> None:
        earlier = self.store.step(*self.key).quiz_answer
        if earlier is not None:
            self._show(_indices(earlier))

    @on(RadioSet.Changed)
    def _picked(self, event: RadioSet.Changed) -> None:
        self._answer({event.radio_set.pressed_index})

    @on(KeyButton.Pressed, "#submit")
    def _submit(self) -> None:
        self._answer({i for i, box in enumerate(self.query(Checkbox)) if box.value})

    def _answer(self, picked: set[int]) -> None:
        correct = {i for i, c in enumerate(self.place.step.choices) if c.correct}
        self.store.record_quiz(*self.key, ",".join(map(str, sorted(picked))), picked == correct)
        self._show(picked)

    def _show(self, picked: set[int]) -> None:
        choices = self.place.step.choices
        right = picked == {i for i, c in enumerate(choices) if c.correct}
        out = Text(t("quiz.choice.right") if right else t("quiz.choice.wrong"),
                   style="bold green" if right else "bold red")
        for i, choice in enumerate(choices):
            mark, style = ("✓", "green") if choice.correct else ("✗", "red")
            out.append(f"\n{mark} ", style=style)
            out.append(self.text(choice.text), style="bold" if i in picked else "")
            out.append(" — " + self.text(choice.explain), style="" if i in picked or choice.correct else "dim")
        feedback = self.query_one("#feedback", Static)
        feedback.update(out)
        feedback.add_class("-shown")
