"""One widget per kind of step; :func:`make_step` picks it."""

from __future__ import annotations

from tutor.app.place import Place, Texts
from tutor.app.widgets.steps.base import StepView
from tutor.core.models import ChoiceQuiz, Example, Exercise, FreeQuiz, PredictQuiz, Prose


def make_step(place: Place, texts: Texts) -> StepView:
    from tutor.app.widgets.steps.example import ExampleStep
    from tutor.app.widgets.steps.exercise import ExerciseStep
    from tutor.app.widgets.steps.prose import ProseStep
    from tutor.app.widgets.steps.quiz_choice import ChoiceQuizStep
    from tutor.app.widgets.steps.quiz_free import FreeQuizStep
    from tutor.app.widgets.steps.quiz_predict import PredictQuizStep

    kinds: dict[type, type[StepView]] = {
        Prose: ProseStep, Example: ExampleStep, Exercise: ExerciseStep,
        FreeQuiz: FreeQuizStep, ChoiceQuiz: ChoiceQuizStep, PredictQuiz: PredictQuizStep,
    }
    return kinds[type(place.step)](place, texts)
