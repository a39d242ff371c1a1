"""An example step: editable code, Run shows output and whether it did what the lesson said."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from tutor.app.widgets.keybutton import KeyButton, key_label, with_key
from tutor.app.widgets.markdown import Markdown
from tutor.app.widgets.editor import CodeEditor
from tutor.app.widgets.output import Hanging, OutputBox, render_run
from tutor.app.widgets.running import RunningIndicator
from tutor.app.widgets.steps.base import StepView, reveal
from tutor.pack.comments import same_code
from tutor.words.i18n import shown, t
from tutor.pack.models import Example

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


def changed(code: str, original: str) -> bool:
    """True when ``code`` is the learner's own version of an example's ``original`` (which, its
    comments in any language, is not theirs)."""
    return not same_code(code, original)


class ExampleStep(StepView):
    """An example the learner changed is an experiment: its run shows what it did, with one
    quiet line saying it is their version (F9 puts the lesson's back), never a verdict against
    what the lesson's own code does. Only the lesson's own code is compared with the step's
    ``expect`` (a mismatch there is the pack's problem, and says so)."""

    ACTIONS = frozenset({"run", "reset"})
    _ran: str | None = None  # the code of the run in flight
    _runs = 0

    @property
    def step(self) -> Example:
        return self.step_as(Example)

    def compose(self) -> ComposeResult:
        step = self.step
        if step.intro:
            yield Markdown(self.text(step.intro))
        draft, code = self.store.drafts.get(*self.key), self.text.code(step.code)
        yield CodeEditor(draft if draft is not None else code, original=code, key=self.key,
                         id="editor", dark=self.app.current_theme.dark)
        with Horizontal(classes="buttons"):
            yield KeyButton(with_key(t("step.run"), self, "step('run')"), id="run", variant="primary")
            yield KeyButton(with_key(t("step.reset"), self, "step('reset')"), id="reset")
        yield RunningIndicator()
        yield OutputBox(id="output", classes="output")
        yield Markdown(id="explain")

    @on(KeyButton.Pressed, "#run")
    def do_run(self) -> None:
        code = self.query_one(CodeEditor).text
        step = self.step
        self._ran = code
        self.start_example(lambda: self.engine.run_example(step, code))

    @on(KeyButton.Pressed, "#reset")
    def do_reset(self) -> None:
        self.query_one(CodeEditor).replace_all(self.text.code(self.step.code))
        self.query_one("#output", Static).update("")
        self.query_one("#output").remove_class("-shown")

    def example_finished(self, outcome: ExampleOutcome | None, error: str | None) -> None:
        output = self.shown_output(error)
        if output is None or outcome is None:
            reveal(self.query_one("#output"))
            return
        step = self.step
        mine = changed(self._ran if self._ran is not None else step.code, step.code)
        run = outcome.run
        self.store.answers.record_attempt(*self.key, "run", passed=run.status == "ok" if mine else outcome.matched,
                                          wall_time=run.wall_time)
        requires = step.requires or self.place.pack.requires
        if mine:
            text = render_run(run)
            text.append("\n\n")
            text.append(t("outcome.changed", shortcut=key_label(self, "step('reset')") or "Reset"), style="dim italic")
        else:
            text = render_run(run, headline=example_headline(outcome, requires.cuda))
        self._runs += 1  # numbered: a run that prints the same as the last still visibly happened
        text.append("\n")
        text.append(t("example.run_stamp", n=self._runs), style="dim")
        output.update(Hanging.of(text))
        if self.step.explain:
            self.query_one("#explain", Markdown).update(self.text(self.step.explain))
        reveal(output, self.query_one("#explain", Markdown))  # the output (and why), not left below the fold
