"""A prose step: Markdown, with code fences highlighted (pygments)."""

from __future__ import annotations

from textual.app import ComposeResult

from tutor.app.widgets.markdown import Markdown
from tutor.app.widgets.steps.base import StepView
from tutor.pack.models import Prose


class ProseStep(StepView):
    @property
    def step(self) -> Prose:
        return self.step_as(Prose)

    def compose(self) -> ComposeResult:
        yield Markdown(self.text(self.step.body))
