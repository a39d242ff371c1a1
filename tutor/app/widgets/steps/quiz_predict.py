"""Predict the output: type what the code prints, then it runs in the sandbox and is compared.

The comparison is ``tutor.pack.predict_compare`` (shared with ``validate``): whitespace does not count by
default, the author may accept other answers or ask which exception the code raises. On a miss the
learner sees their answer and the real output side by side, the differences marked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import Static, TextArea

from tutor.app.widgets.editor import AnswerBox
from tutor.app.widgets.keybutton import KeyButton, with_key
from tutor.app.widgets.markdown import Markdown
from tutor.app.widgets.output import Hanging, render_run, tail
from tutor.app.widgets.running import RunningIndicator
from tutor.app.widgets.steps.base import StepView, reveal
from tutor.words.i18n import t
from tutor.pack.models import PredictQuiz
from tutor.pack.quizzes.predict import judge_run
import difflib
import re

from tutor.pack.predict_compare import side_by_side
from tutor.words.safe_text import neutralize

if TYPE_CHECKING:  # the sandbox loads with the first run, after start-up
    from tutor.sandbox.result import RunResult


#: The pieces two lines are compared by: a word or number (with its decimal point and sign), a
#: run of spaces, or one other character.
_TOKEN = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?|\w+|\s+|[^\w\s]")


def word_spans(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The character ranges of ``a`` and of ``b`` that differ, whole words and numbers at a
    time: comparing characters marked the letters two different words happen to share
    ("float32" against "bfloat16" marked "b", "3", "2" and "16" apart), not the words."""
    def tokens(text: str) -> tuple[list[str], list[int]]:
        found = [(m.group(), m.start()) for m in _TOKEN.finditer(text)]
        return [f[0] for f in found], [f[1] for f in found] + [len(text)]

    words_a, starts_a = tokens(a)
    words_b, starts_b = tokens(b)
    left: list[tuple[int, int]] = []
    right: list[tuple[int, int]] = []
    matcher = difflib.SequenceMatcher(a=words_a, b=words_b, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            continue
        if a1 > a0:
            left.append((starts_a[a0], starts_a[a1]))
        if b1 > b0:
            right.append((starts_b[b0], starts_b[b1]))
    return left, right


def difference(prediction: str, expected: str) -> Table:
    """Two columns, "your prediction" and "the output", lines aligned, differing characters marked.
    A line too long for its column wraps under its own text (``Hanging``): a tensor's indented rows
    stay indented."""
    table = Table(box=None, expand=True, show_edge=False, pad_edge=False, padding=(0, 1))
    table.add_column(t("quiz.predict.yours"), ratio=1, header_style="bold")
    table.add_column(t("quiz.predict.actual"), ratio=1, header_style="bold")
    for mine, theirs, differs in side_by_side(neutralize(prediction), neutralize(expected)):
        left, right = Text(mine or " "), Text(theirs or " ")
        if differs:
            left_spans, right_spans = word_spans(mine, theirs)
            for start, end in left_spans:
                left.stylize("bold reverse red", start, end)
            for start, end in right_spans:
                right.stylize("bold reverse green", start, end)
            left.stylize("red")
        else:
            left.stylize("dim")
            right.stylize("dim")
        table.add_row(Hanging.of(left), Hanging.of(right))
    return table


class PredictQuizStep(StepView):
    ACTIONS = frozenset({"run"})

    @property
    def step(self) -> PredictQuiz:
        return self.step_as(PredictQuiz)

    def compose(self) -> ComposeResult:
        quiz = self.step
        earlier = self.store.steps.get(*self.key)
        yield Markdown(self.text(quiz.question))
        yield Markdown(f"```python\n{self.text.code(quiz.code).rstrip()}\n```")
        if quiz.raises:
            yield Static(t("quiz.predict.raises_hint"), classes="muted")
        yield AnswerBox(earlier.quiz_answer or "", id="prediction", placeholder=t("quiz.predict.placeholder"))
        yield KeyButton(with_key(t("quiz.predict.run"), self, "step('run')"), id="run", variant="primary")
        yield RunningIndicator()
        yield Static(id="output", classes="output")
        yield Markdown(id="explain")

    @on(KeyButton.Pressed, "#run")
    def do_run(self) -> None:
        quiz = self.step
        self.start_run(lambda: self.engine.run_example(quiz).run)

    def run_finished(self, result: RunResult | None, error: str | None) -> None:
        output = self.shown_output(error)
        if output is None or result is None:
            reveal(self.query_one("#output", Static))
            return
        quiz = self.step
        prediction = self.query_one("#prediction", TextArea).text
        actual = result.stdout or ""
        verdict = judge_run(quiz, prediction, actual, result.error.type if result.error is not None else None)
        self.store.answers.record_quiz(*self.key, prediction, verdict.right)
        if verdict.right:
            said = t("quiz.predict.right_format" if verdict.number_format else "quiz.predict.right")
            output.update(Hanging.of(render_run(result, headline=(said, "bold green"))))
        else:
            output.update(Group(Text(t("quiz.predict.wrong"), style="bold red"), Text(""),
                                difference(tail(prediction)[0], tail(verdict.expected)[0]), Text(""),
                                Hanging.of(render_run(result, headline=(t("quiz.predict.ran"), "bold")))))
        if quiz.explain:
            self.query_one("#explain", Markdown).update(self.text(quiz.explain))
        # The verdict, the comparison and the explanation: bring them into view once laid out.
        reveal(output, self.query_one("#explain", Markdown))
