"""What the two screens that show a step (the lesson, the review queue) share: where a question
is answered, and a step key pressed while the step's code runs."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.screen import Screen

from tutor.app.widgets.keybutton import key_label
from tutor.app.widgets.steps import StepView
from tutor.words.i18n import t

#: Where a question is answered: focused there, the question above stays in view.
QUESTION_FOCUS = ("prediction", "answer", "choices")


def busy_key(screen: Screen[None], view: StepView | None, event: events.Key) -> None:
    """Say "a run is in progress" for a key of ``screen``'s step actions pressed while ``view``
    runs code (Textual skips a binding its screen disables: the key did nothing, silently)."""
    if view is None or not view.running:
        return
    for binding in screen.BINDINGS:
        if isinstance(binding, Binding) and binding.action.startswith("step(") \
                and event.key in binding.key.split(","):
            event.stop()
            event.prevent_default()
            screen.notify(t("step.busy", shortcut=key_label(screen, "stop")), timeout=4)
            return
