"""One widget per kind of step; :func:`make_step` picks it."""

from __future__ import annotations

import importlib

from tutor.app.place import Place, Texts
from tutor.app.widgets.steps.base import StepView
from tutor.core.models import ChoiceQuiz, Example, Exercise, FreeQuiz, PredictQuiz, Prose


__all__ = ["STEP_VIEWS", "StepView", "make_step"]

#: The widget module and class for each kind of step, imported when a step of that kind is shown.
STEP_VIEWS: dict[type, tuple[str, str]] = {
    Prose: ("prose", "ProseStep"), Example: ("example", "ExampleStep"), Exercise: ("exercise", "ExerciseStep"),
    FreeQuiz: ("quiz_free", "FreeQuizStep"), ChoiceQuiz: ("quiz_choice", "ChoiceQuizStep"),
    PredictQuiz: ("quiz_predict", "PredictQuizStep"),
}


def make_step(place: Place, texts: Texts) -> StepView:
    module, name = STEP_VIEWS[type(place.step)]
    view: type[StepView] = getattr(importlib.import_module(f"tutor.app.widgets.steps.{module}"), name)
    return view(place, texts)
