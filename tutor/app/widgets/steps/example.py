"""An example step: editable code, Run shows output and whether it did what the lesson said."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from tutor.app.widgets.keybutton import KeyButton, with_key
from tutor.app.widgets.markdown import Markdown
from tutor.app.widgets.editor import CodeEditor
from tutor.app.widgets.output import Hanging, render_run
from tutor.app.widgets.running import RunningIndicator
from tutor.app.widgets.steps.base import StepView, reveal
from tutor.core.i18n import shown, t
from tutor.core.models import Example

if TYPE_CHECKING:  # grading loads with the first run, after start-up
    from tutor.grading.exercise import ExampleOutcome


#: What torch says when a CUDA step runs on a machine without one: not the learner's doing.
_NO_CUDA = re.compile(r"CUDA|NVIDIA driver|no GPUs? (?:are |is )?available", re.IGNORECASE)


def example_headline(outcome: ExampleOutcome, needs_cuda: bool = False) -> tuple[str, str] | None:
    """The sentence above the output: "Raised as expected: ..." or what did not match."""
    run = outcome.run
    error = run.error
    if needs_cuda and not outcome.matched and error is not None \
            and _NO_CUDA.search(f"{error.type}: {error.message}"):
        return t("outcome.no_cuda"), "bold yellow"
    if outcome.matched:
        if run.status == "error" and error:
            return t("outcome.raised_expected", type=error.type, message=error.message), "bold green"
        return None
    summary = shown(outcome.summary, outcome.said) or ""
    return t("outcome.unmatched", summary=summary), "bold yellow"


class ExampleStep(StepView):
    ACTIONS = frozenset({"run", "reset"})

    @property
    def step(self) -> Example:
        return self.step_as(Example)

    def compose(self) -> ComposeResult:
        step = self.step
        if step.intro:
            yield Markdown(self.text(step.intro))
        draft = self.store.draft(*self.key)
        yield CodeEditor(draft if draft is not None else step.code, original=step.code, key=self.key,
                         id="editor", dark=self.app.current_theme.dark)
        with Horizontal(classes="buttons"):
            yield KeyButton(with_key(t("step.run"), self, "step('run')"), id="run", variant="primary")
            yield KeyButton(with_key(t("step.reset"), self, "step('reset')"), id="reset")
        yield RunningIndicator()
        yield Static(id="output", classes="output")
        yield Markdown(id="explain")

    @on(KeyButton.Pressed, "#run")
    def do_run(self) -> None:
        code = self.query_one(CodeEditor).text
        step = self.step
        self.start_example(lambda: self.engine.run_example(step, code))

    @on(KeyButton.Pressed, "#reset")
    def do_reset(self) -> None:
        self.query_one(CodeEditor).replace_all(self.step.code)
        self.query_one("#output", Static).update("")
        self.query_one("#output").remove_class("-shown")

    def example_finished(self, outcome: ExampleOutcome | None, error: str | None) -> None:
        output = self.shown_output(error)
        if output is None or outcome is None:
            reveal(self.query_one("#output"))
            return
        self.store.record_attempt(*self.key, "run", passed=outcome.matched, wall_time=outcome.run.wall_time)
        requires = self.step.requires or self.place.pack.requires
        output.update(Hanging.of(render_run(outcome.run, headline=example_headline(outcome, requires.cuda))))
        if self.step.explain:
            self.query_one("#explain", Markdown).update(self.text(self.step.explain))
        reveal(output, self.query_one("#explain", Markdown))  # the output (and why), not left below the fold
