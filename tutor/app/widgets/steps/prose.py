"""A prose step: Markdown, with code fences highlighted (pygments)."""

from __future__ import annotations

from textual.app import ComposeResult

from tutor.app.widgets.markdown import Markdown
from tutor.app.widgets.steps.base import StepView


class ProseStep(StepView):
    def compose(self) -> ComposeResult:
        yield Markdown(self.text(self.place.step.body))
