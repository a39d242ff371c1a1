"""Issue 31.1: a check kind is one module plus its registration line, and every table is built from
its declarations; a kind that misses a table fails here (or at import), not in a learner's run."""

from __future__ import annotations

import ast
import pathlib
import sys

import pytest

from tutor.child.checks import canary, kinds, probe
from tutor.child.checks.kinds.kind import Kind
from tutor.pack import check_models, docgen

KINDS_DIR = pathlib.Path(kinds.__file__).parent


def test_a_kind_without_a_canary_fails_where_it_is_declared():
    with pytest.raises(TypeError):
        Kind("new", lambda check, case: None)  # type: ignore[call-arg]


def _declaring(folder: pathlib.Path, name: str) -> set[str]:
    """The modules of ``folder`` that assign ``name`` at their top level (a declaration)."""
    declaring = set()
    for path in folder.glob("*.py"):
        tree = ast.parse(path.read_text())
        if any(isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets)
               for node in tree.body):
            declaring.add(path.stem)
    return declaring

@pytest.mark.parametrize("name", sorted(kinds.REGISTRY))
def test_every_kind_names_a_canary_that_exists(name):
    assert kinds.REGISTRY[name].canary in canary.CANARIES


def test_every_module_that_declares_kinds_is_registered():
    declaring = _declaring(KINDS_DIR, "KINDS")
    assert declaring == set(kinds.MODULES) - {"__init__"}


def test_the_probe_tables_come_from_the_declarations():
    assert probe.KINDS == {name: kind.run for name, kind in kinds.REGISTRY.items()}
    assert probe._WEIGHT == {"profile": 4.0, "timing": 4.0, "memory": 3.0}
    assert probe._THREADS == {"profile": 1, "timing": 1}


def test_the_two_sides_agree_on_what_measures():
    """The child's weighty kinds (they repeat a workload) are the records whose margins validate
    --repeat collects."""
    measuring = {kind for kind, record in check_models.RECORDS.items() if record.MEASURES}
    assert measuring == {name for name, kind in kinds.REGISTRY.items() if kind.weight > 1}


def test_the_judge_starts_the_profiler_ahead_only_for_kinds_that_profile():
    from tutor.child.worker.judging import _profiles

    for name, kind in kinds.REGISTRY.items():
        assert _profiles({"payload": {"checks": [{"kind": name}]}}) is kind.profiles, name
    assert {name for name, kind in kinds.REGISTRY.items() if kind.profiles} == {"profile"}


@pytest.mark.parametrize("kind", check_models.CHECK_KINDS)
def test_every_check_kind_has_its_section_in_the_reference(kind):
    assert f"(`kind: {kind}`)" in docgen.reference_markdown()


def test_every_record_a_check_uses_is_documented():
    documented = {record for _, section in docgen.sections() for record in section}
    assert set(check_models.CHECK_RECORDS) <= documented


# --------------------------------------------------------------------------- quiz types


def test_every_step_and_quiz_type_has_a_view():
    """The app picks a step's widget from STEP_VIEWS (a quiz type's from its declaration): a step
    record without one was a KeyError when a learner reached the step."""
    from tutor.app.widgets.steps import STEP_VIEWS, StepView, view_class
    from tutor.pack import models

    assert set(STEP_VIEWS) == set(models.STEP_RECORDS)
    for record_class in STEP_VIEWS:
        assert issubclass(view_class(record_class), StepView), record_class.__name__


QUIZZES_DIR = pathlib.Path(__file__).parents[2] / "tutor" / "pack" / "quizzes"


def _fake_quiz_record(graded: bool):
    from typing import Literal

    from tutor.pack.quizzes import QuizBase
    from tutor.pack.spec import record

    if graded:
        @record
        class FakeGradedQuiz(QuizBase):
            style: Literal["fake-graded"]
            points: float = 0.0
        return FakeGradedQuiz

    @record
    class FakeQuiz(QuizBase):
        style: Literal["fake"]
    return FakeQuiz


def test_a_quiz_type_without_a_view_fails_where_it_is_declared():
    from tutor.pack.quizzes import QuizType

    with pytest.raises(TypeError):
        QuizType(record=_fake_quiz_record(False), review=lambda step: [], mark=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="view"):
        QuizType(record=_fake_quiz_record(False), view="", review=lambda step: [], mark=None)


def test_a_quiz_worth_points_without_a_grader_fails_where_it_is_declared():
    from tutor.pack.quizzes import QuizType

    with pytest.raises(TypeError, match="mark"):
        QuizType(record=_fake_quiz_record(True), view="quiz_fake.FakeStep", review=lambda step: [], mark=None)
    with pytest.raises(TypeError, match="mark"):  # a grader for a quiz that has no points to give
        QuizType(record=_fake_quiz_record(False), view="quiz_fake.FakeStep", review=lambda step: [],
                 mark=lambda quiz, answer, ran: (True, "correct"))
    with pytest.raises(TypeError):  # the grader is not optional: None says "not graded"
        QuizType(record=_fake_quiz_record(False), view="quiz_fake.FakeStep", review=lambda step: [])  # type: ignore[call-arg]


def test_a_quiz_record_registered_without_its_declaration_fails():
    from tutor.pack.quizzes import declared

    with pytest.raises(TypeError, match="QUIZ = QuizType"):
        declared((_fake_quiz_record(False),))


def test_every_quiz_module_is_registered_in_the_union():
    from tutor.pack import models

    declaring = _declaring(QUIZZES_DIR, "QUIZ")
    assert declaring == {record.__module__.rsplit(".", 1)[-1] for record in models.QUIZ_RECORDS}
    assert set(models.QUIZ_TYPES) == set(models.QUIZ_RECORDS)


def test_the_graded_quiz_types_are_the_ones_gradebook_marks():
    """A quiz type with points is marked again from a hand-in by its declaration's ``mark``; the
    gradebook lists exactly those types' quizzes."""
    from tutor.pack import models
    from tutor.pack.loader import load_pack
    from tutor.grading.gradebook import graded_quizzes

    pack = load_pack(pathlib.Path(__file__).parents[2] / "lessons" / "debugging-and-speed")
    listed = {type(quiz) for _ref, quiz in graded_quizzes(pack)}
    graded = {record for record, quiz in models.QUIZ_TYPES.items() if quiz.mark is not None}
    assert listed <= graded
    assert graded == {models.ChoiceQuiz, models.PredictQuiz}


def test_every_quiz_type_is_in_the_built_in_pack_and_reviewable():
    """A review card's hash is taken per quiz type (tutor/record/spaced_review.py's content_hash raises
    for a step it does not know); the built-in pack shows every type."""
    from tutor.pack import models
    from tutor.record import spaced_review as review
    from tutor.pack.loader import load_pack

    pack = load_pack(pathlib.Path(__file__).parents[2] / "lessons" / "debugging-and-speed")
    steps = [step for lesson in pack.lessons for step in lesson.steps]
    for record_class in models.QUIZ_RECORDS:
        found = [step for step in steps if type(step) is record_class]
        assert found, f"no {record_class.__name__} in the built-in pack"
        assert review.content_hash(found[0])


def test_every_quiz_type_has_its_section_in_the_reference():
    from tutor.pack import models

    reference = docgen.reference_markdown()
    for record_class in models.QUIZ_RECORDS:
        assert f"#### {record_class.__name__} (`style: " in reference


# --------------------------------------------------------------------------- isolation backends

BACKENDS_DIR = pathlib.Path(__file__).parents[2] / "tutor" / "sandbox" / "backends"


def test_the_isolation_levels_are_the_same_everywhere():
    from tutor.cli.main import build_parser
    from tutor.settings.config import ISOLATION_CHOICES
    from tutor.sandbox import backends

    assert ISOLATION_CHOICES == ("auto", *backends.LEVELS)
    parser = build_parser()
    commands = next(action for action in parser._actions if action.dest == "command").choices
    for command in ("run", "doctor"):
        option = next(a for a in commands[command]._actions if a.dest == "isolation")
        assert tuple(option.choices) == ISOLATION_CHOICES


def test_every_module_that_declares_a_backend_is_registered():
    from tutor.sandbox import backends

    declaring = _declaring(BACKENDS_DIR, "BACKEND")
    assert declaring == set(backends.MODULES)
    assert [backends.REGISTRY[name].name for name in backends.LEVELS] == list(backends.LEVELS)


def test_a_backend_missing_part_of_its_declaration_fails_where_it_is_declared():
    from tutor.sandbox.backends import Backend

    with pytest.raises(TypeError):  # no wrap, no doctor, no word on grading
        Backend(name="new", probe=lambda probe: None, containment=lambda info: {},  # type: ignore[call-arg]
                in_container=lambda info: "")


def test_a_registered_module_without_its_declaration_fails_at_import(monkeypatch):
    import sys
    import types

    from tutor.sandbox import backends

    monkeypatch.setitem(sys.modules, "tutor.sandbox.backends.fake", types.ModuleType("tutor.sandbox.backends.fake"))
    monkeypatch.setattr(backends, "MODULES", (*backends.MODULES, "fake"))
    with pytest.raises(TypeError, match="BACKEND = Backend"):
        backends._registry()


@pytest.mark.parametrize("name", ["bwrap", "none"])
def test_every_backend_answers_every_table(name):
    """What process.py, the worker, doctor, grade and the autograder ask of the backend in force."""
    import sys

    from tutor.words.i18n import FALLBACK, TABLE
    from tutor.sandbox import backends
    from tutor.sandbox.isolation import IsolationInfo, inspect_interpreter

    assert name in backends.LEVELS
    backend = backends.of(name)
    info = IsolationInfo(name, "a reason", bwrap="/usr/bin/bwrap" if name == "bwrap" else None,
                         bwrap_source="system" if name == "bwrap" else None)
    wrapped = backend.wrap(info, inspect_interpreter(sys.executable), "/tmp/scratch", ())
    assert all(isinstance(part, str) for part in wrapped)
    assert isinstance(backend.containment(info)["namespaces"], bool)
    for key, fields in backend.doctor(info):
        TABLE[FALLBACK][key].format(**fields)
    assert f"isolation.{name}" in TABLE[FALLBACK]  # the level's word in the status bar, doctor and run
    assert backend.in_container(info)


def test_the_weakest_backend_is_always_available():
    from tutor.sandbox import backends

    weakest = backends.of(backends.LEVELS[-1])
    info = weakest.probe(backends.Probe(backends.LEVELS[-1], sys.executable, "none"))
    assert info is not None and info.level == backends.LEVELS[-1]
    assert not weakest.isolates and backends.of(backends.LEVELS[0]).isolates
