"""One widget per kind of step; :func:`make_step` picks it."""

from __future__ import annotations

import importlib

from tutor.app.place import Place, Texts
from tutor.app.widgets.steps.base import StepView, shown_step
from tutor.pack.models import QUIZ_TYPES, Example, Exercise, Prose


__all__ = ["STEP_VIEWS", "StepView", "make_step", "shown_step", "view_class"]

#: The widget of each kind of step, as "module.Class" under this package, imported when a step of
#: that kind is shown; a quiz type's comes from its declaration (tutor/pack/quizzes/).
STEP_VIEWS: dict[type, str] = {
    Prose: "prose.ProseStep", Example: "example.ExampleStep", Exercise: "exercise.ExerciseStep",
    **{record_class: quiz.view for record_class, quiz in QUIZ_TYPES.items()},
}


def view_class(step_type: type) -> type[StepView]:
    """The widget class for a step record class, imported now."""
    module, _, name = STEP_VIEWS[step_type].rpartition(".")
    view: type[StepView] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    return view


def make_step(place: Place, texts: Texts) -> StepView:
    return view_class(type(place.step))(place, texts)
