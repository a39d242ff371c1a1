"""A multiple-choice quiz: instant feedback for one answer, Submit for several. A wrong answer
explains the choices picked; every choice is explained once the answer is right or the learner
asks for the solution (F8), so one wrong click does not give the answer away.

Choices appear in an order of the learner's own (seeded by the learner and the quiz, so a resumed
quiz keeps its order and the right answer is not always first), unless the author wrote
``shuffle: false``. Choice text and explanations are Markdown; long choices wrap.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.widgets import Checkbox, RadioButton, RadioSet, Static

from tutor.app import textual_compat
from tutor.app.markdown_render import inline
from tutor.app.widgets.keybutton import KeyButton, key_label
from tutor.app.widgets.markdown import Markdown
from tutor.app.widgets.steps.base import StepView
from tutor.words.i18n import t
from tutor.pack.models import ChoiceQuiz
from tutor.pack.quizzes.choice import SEED_PREFERENCE, answer_text, choice_order, learner_seed

__all__ = ["SEED_PREFERENCE", "ChoiceQuizStep", "choice_order", "learner_seed", "soft_join"]

if TYPE_CHECKING:  # what _Wrapping is mixed into (a private module; only its type is needed)
    from textual.widgets._toggle_button import ToggleButton as _Toggle
else:
    _Toggle = object

_SOFT_BREAK = re.compile(r"(?<![\n\\])(?<!  )\n(?!\n)")


def soft_join(text: str) -> str:
    """Markdown's soft line breaks (one newline inside a paragraph) joined with a space."""
    return _SOFT_BREAK.sub(" ", text.strip())


def _indices(answer: str | None) -> set[int]:
    if not answer:
        return set()
    return {int(part) for part in answer.split(",") if part.strip().isdigit()}


class _Wrapping(_Toggle):
    """Textual's toggle buttons draw one line and cut the label with "…": these wrap it, the
    continuation lines indented under the label's start."""

    def glyph(self) -> Content:
        """What marks the button and its state (Textual's ``▐●▌``)."""
        return textual_compat.toggle_glyph(self)

    def _lines(self, width: int) -> list[Content]:
        button = self.glyph()
        indent = button.cell_length + 1
        lines = self.label.wrap(max(width - indent - 1, 8)) or [Content("")]
        return lines

    def render(self) -> Content:
        width = self.content_region.width or self.size.width
        label_style = self.get_visual_style("toggle--label")
        button = self.glyph()
        pad = " " * (button.cell_length + 1)
        parts: list[Content | str] = []
        for index, line in enumerate(self._lines(width)):
            line = line.pad(1, 0).stylize_before(label_style)
            parts.append(button if index == 0 else Content(pad[:-1]))
            parts.append(line)
            parts.append("\n")
        return Content.assemble(*parts[:-1])

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(width))


class ChoiceRadio(_Wrapping, RadioButton):
    """One choice of a pick-one question: ``(•)`` picked, ``( )`` not (Textual draws both
    ``▐●▌``, only the colour differing)."""

    def glyph(self) -> Content:
        style = self.get_visual_style("toggle--button")
        return Content("(•)" if self.value else "( )").stylize_before(style)


class ChoiceBox(_Wrapping, Checkbox, can_focus=False):
    """One box of a pick-all-that-apply question: ``[x]`` ticked, ``[ ]`` not, so the two differ
    without colour (Textual draws both ``▐X▌``, only the colour differing). The list holds the
    focus (see ChoiceBoxes); a click still ticks it."""

    def glyph(self) -> Content:
        style = self.get_visual_style("toggle--button")
        return Content("[x]" if self.value else "[ ]").stylize_before(style)


class ChoiceBoxes(Vertical, can_focus=True, can_focus_children=False):
    """The boxes of a pick-all-that-apply question, one focus stop: Up/Down move between the
    boxes, Space ticks or clears the highlighted one, Enter submits (as the prompt says). Before,
    each box was its own focus stop that only Tab reached, and the question opened with the keys
    going nowhere."""

    DEFAULT_CSS = """
    ChoiceBoxes { height: auto; }
    ChoiceBoxes > ChoiceBox { border: none; padding: 0; background: transparent; }
    ChoiceBoxes > ChoiceBox > .toggle--button { background: transparent; }
    ChoiceBoxes:focus > ChoiceBox.-highlight > .toggle--label {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    ChoiceBoxes:blur > ChoiceBox.-highlight > .toggle--label { background: $block-cursor-blurred-background; }
    """
    BINDINGS = [
        Binding("down,right", "move(1)", show=False),
        Binding("up,left", "move(-1)", show=False),
        Binding("space", "tick", show=False),
        Binding("enter", "submit", show=False),
    ]

    class Submitted(Message):
        """Enter: the boxes ticked are the answer."""

    highlighted = 0

    @property
    def boxes(self) -> list[ChoiceBox]:
        return list(self.query(ChoiceBox))

    def on_mount(self) -> None:
        self._highlight(0)

    def _highlight(self, index: int) -> None:
        boxes = self.boxes
        if not boxes:
            return
        self.highlighted = max(0, min(index, len(boxes) - 1))
        for i, box in enumerate(boxes):
            box.set_class(i == self.highlighted, "-highlight")
        boxes[self.highlighted].scroll_visible(animate=False)

    def action_move(self, delta: int) -> None:
        self._highlight(self.highlighted + delta)

    def action_tick(self) -> None:
        boxes = self.boxes
        if boxes:
            boxes[self.highlighted].toggle()

    def action_submit(self) -> None:
        self.post_message(self.Submitted())

    @on(Checkbox.Changed)
    def _clicked(self, event: Checkbox.Changed) -> None:
        """A click ticks a box: the highlight follows it."""
        if event.checkbox in self.boxes:
            self._highlight(self.boxes.index(event.checkbox))


class ChoiceQuizStep(StepView):
    """``solution`` (F8) explains every choice; offered after a wrong answer, until it shows."""

    ACTIONS = frozenset({"solution"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._last: set[int] | None = None  # the last answer, once there is one
        self._everything = False  # every choice's explanation shows

    @property
    def step(self) -> ChoiceQuiz:
        return self.step_as(ChoiceQuiz)
    def compose(self) -> ComposeResult:
        quiz = self.step
        earlier = _indices(self.store.steps.get(*self.key).quiz_answer)
        yield Markdown(self.text(quiz.question))
        yield Static(t("quiz.choice.pick_many" if quiz.multiple else "quiz.choice.pick"), classes="muted")
        order = self.order
        if quiz.multiple:
            with ChoiceBoxes(id="choices"):
                for i in order:
                    yield ChoiceBox(self._label(i), value=i in earlier, id=f"choice-{i}")
            yield KeyButton(t("quiz.choice.submit"), id="submit", variant="primary")
        else:
            with RadioSet(id="choices"):
                for i in order:
                    yield ChoiceRadio(self._label(i), value=i in earlier, id=f"choice-{i}")
        yield Static(id="feedback")

    @property
    def order(self) -> list[int]:
        quiz = self.step
        # Seeded by the item itself (never a review's scratch key): the same order in the lesson,
        # on resume and in every review.
        return choice_order(len(quiz.choices), learner_seed(self.store), self.place.key,
                            quiz.shuffle)

    def _label(self, index: int) -> Text:
        return inline(soft_join(self.text(self.step.choices[index].text)))

    def on_mount(self) -> None:
        progress = self.store.steps.get(*self.key)
        if progress.quiz_answer is not None:
            self._everything = bool(progress.quiz_correct) or progress.solution_seen
            self._show(_indices(progress.quiz_answer), scroll=False)

    def supports(self, action: str) -> bool:
        """The solution key once an answer was wrong, while not every choice is explained."""
        return super().supports(action) and self._last is not None and not self._everything

    def do_solution(self) -> None:
        if self._last is None or self._everything:
            return
        self.store.steps.mark_solution_seen(*self.key)  # a review rates it Again
        self._everything = True
        self._show(self._last)

    @on(RadioSet.Changed)
    def _picked(self, event: RadioSet.Changed) -> None:
        pressed = event.pressed
        if pressed is None or not (pressed.id or "").startswith("choice-"):
            return
        self._answer({int((pressed.id or "").removeprefix("choice-"))})

    @on(KeyButton.Pressed, "#submit")
    @on(ChoiceBoxes.Submitted)
    def _submit(self) -> None:
        self._answer({int((box.id or "-1").removeprefix("choice-")) for box in self.query(ChoiceBox) if box.value})

    def _answer(self, picked: set[int]) -> None:
        right = self.step.is_right(picked)
        self.store.answers.record_quiz(*self.key, answer_text(picked), right)
        self._everything = self._everything or right
        self._show(picked)

    def feedback(self, picked: set[int], everything: bool = True) -> Group:
        """The verdict, then each choice in the learner's order (only those picked unless
        ``everything``): its mark, its text and, under it (wrapped lines aligned), why. Green
        marks a right choice, red a wrong one; the text and the explanations are never drawn as
        errors. Not everything: a line says how to see the rest."""
        choices = self.step.choices
        right = self.step.is_right(picked)
        verdict = Text(t("quiz.choice.right") if right else t("quiz.choice.wrong"),
                       style="bold green" if right else "bold red")
        if not everything:
            key = key_label(self, "step('solution')")
            verdict.append("  " + (t("quiz.choice.more", shortcut=key) if key else t("quiz.choice.more.no_key")),
                           style="italic")
        table = Table.grid(padding=(0, 1))
        table.add_column(no_wrap=True)
        table.add_column(ratio=1)
        for i in self.order:
            if not everything and i not in picked:
                continue
            choice = choices[i]
            mark = Text("✓", style="bold green") if choice.correct else Text("✗", style="bold red")
            body = inline(soft_join(self.text(choice.text)), "bold" if i in picked else "")
            if i in picked:
                body.append("  " + t("quiz.choice.yours"), style="italic")
            body.append("\n")
            body.append_text(inline(soft_join(self.text(choice.explain)),
                                    "" if i in picked or choice.correct else "dim"))
            table.add_row(Text(""), Text(""))
            table.add_row(mark, body)
        return Group(verdict, table)

    def _show(self, picked: set[int], scroll: bool = True) -> None:
        """The verdict, then the choices picked (every choice, once right or asked for) with
        their explanations. Colour means: green for a right choice, red for a wrong one; the
        explanations are plain text."""
        self._last = picked
        feedback = self.query_one("#feedback", Static)
        feedback.update(self.feedback(picked, self._everything))
        feedback.add_class("-shown")
        if self.is_attached and self.screen is not None:
            self.screen.refresh_bindings()  # the solution key comes and goes with the answer
        if scroll:
            from tutor.app.widgets.steps.base import reveal

            reveal(feedback)
