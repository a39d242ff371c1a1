"""A prose step: Markdown, with code fences highlighted by Textual's Markdown (pygments)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Markdown

from tutor.app.widgets.steps.base import StepView


class ProseStep(StepView):
    def compose(self) -> ComposeResult:
        yield Markdown(self.text(self.place.step.body))
