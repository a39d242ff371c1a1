"""An example step: editable code, Run shows output and whether it did what the lesson said."""

from __future__ import annotations

import re
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from tutor.app.widgets.keybutton import KeyButton
from tutor.app.widgets.markdown import Markdown
from tutor.app.widgets.editor import CodeEditor
from tutor.app.widgets.output import field, render_run
from tutor.app.widgets.running import RunningIndicator
from tutor.app.widgets.steps.base import StepView, reveal
from tutor.core.i18n import t


#: What torch says when a CUDA step runs on a machine without one: not the learner's doing.
_NO_CUDA = re.compile(r"CUDA|NVIDIA driver|no GPUs? (?:are |is )?available", re.IGNORECASE)


def example_headline(outcome: Any, needs_cuda: bool = False) -> tuple[str, str] | None:
    """The sentence above the output: "Raised as expected: ..." or what did not match."""
    run = field(outcome, "run")
    error = field(run, "error")
    if needs_cuda and not field(outcome, "matched") and error is not None \
            and _NO_CUDA.search(f"{field(error, 'type', '')}: {field(error, 'message', '')}"):
        return t("outcome.no_cuda"), "bold yellow"
    if field(outcome, "matched"):
        error = field(run, "error")
        if field(run, "status") == "error" and error:
            return t("outcome.raised_expected", type=field(error, "type", ""), message=field(error, "message", "")), \
                "bold green"
        return None
    summary = field(outcome, "summary") or ""
    return t("outcome.unmatched", summary=summary), "bold yellow"


class ExampleStep(StepView):
    ACTIONS = frozenset({"run", "reset"})

    def compose(self) -> ComposeResult:
        step = self.place.step
        if step.intro:
            yield Markdown(self.text(step.intro))
        draft = self.store.draft(*self.key)
        yield CodeEditor(draft if draft is not None else step.code, original=step.code, key=self.key,
                         id="editor", dark=self.app.current_theme.dark)
        with Horizontal(classes="buttons"):
            yield KeyButton(t("step.run") + " F5", id="run", variant="primary")
            yield KeyButton(t("step.reset") + " F9", id="reset")
        yield RunningIndicator()
        yield Static(id="output", classes="output")
        yield Markdown(id="explain")

    @on(KeyButton.Pressed, "#run")
    def do_run(self) -> None:
        code = self.query_one(CodeEditor).text
        self.start_job("run", lambda: self.engine.run_example(self.place.step, code))

    @on(KeyButton.Pressed, "#reset")
    def do_reset(self) -> None:
        self.query_one(CodeEditor).replace_all(self.place.step.code)
        self.query_one("#output", Static).update("")
        self.query_one("#output").remove_class("-shown")

    def job_finished(self, job: str, result: Any, error: str | None) -> None:
        output = self.shown_output(error)
        if output is None:
            reveal(self.query_one("#output"))
            return
        self.store.record_attempt(*self.key, "run", passed=bool(field(result, "matched")),
                                  wall_time=field(field(result, "run"), "wall_time"))
        requires = getattr(self.place.step, "requires", None) or getattr(self.place.pack, "requires", None)
        output.update(render_run(field(result, "run"),
                                 headline=example_headline(result, bool(getattr(requires, "cuda", False)))))
        if self.place.step.explain:
            self.query_one("#explain", Markdown).update(self.text(self.place.step.explain))
        reveal(output, self.query_one("#explain", Markdown))  # the output (and why), not left below the fold
