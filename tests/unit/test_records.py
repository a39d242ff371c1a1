"""The format's records: plain frozen dataclasses whose rules pydantic applies when validating."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys

import pytest

from tutor.pack import models
from tutor.pack.spec import as_data, format_fields
from tutor.pack.validation import ValidationError, validate


def test_records_behave_like_frozen_dataclasses():
    a = models.Requires(torch=">=2.2")
    assert a == models.Requires(torch=">=2.2") and a != models.Requires()
    assert repr(a) == "Requires(torch='>=2.2', cuda=False)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.cuda = True  # type: ignore[misc]
    assert hash(a) == hash(models.Requires(torch=">=2.2"))
    assert pickle.loads(pickle.dumps(a)) == a


def test_a_check_across_fields_runs_on_direct_construction_too():
    with pytest.raises(ValueError, match="not a version range"):
        models.Requires(torch="at least two")
    with pytest.raises(ValueError, match="at least one choice must have correct: true"):
        models.ChoiceQuiz(id="q", kind="quiz", style="choice", question="?",
                          choices=[models.Choice(text="a", explain="no"), models.Choice(text="b", explain="no")])


def test_validation_refuses_unknown_keys_and_applies_constraints():
    with pytest.raises(ValidationError) as caught:
        validate(models.Lesson, {"id": "Bad Id", "title": "T", "steps": [{"id": "s", "kind": "prose", "bdy": "x"}]})
    kinds = {(e["type"], e["loc"][-1]) for e in caught.value.errors()}
    assert ("string_pattern_mismatch", "id") in kinds
    assert ("unexpected_keyword_argument", "bdy") in kinds
    assert ("missing", "body") in kinds


def test_validated_records_are_the_declared_classes():
    lesson = validate(models.Lesson, {"id": "l", "title": {"en": "T", "zh": "题"},
                                      "steps": [{"id": "s", "kind": "example", "code": "print(1)"}]})
    step = lesson.steps[0]
    assert type(step) is models.Example and step.expect == models.Expect()
    assert as_data(lesson)["steps"][0]["expect"] == {"output": None, "raises": None}


def test_format_fields_document_every_key():
    fields = format_fields(models.Exercise)
    assert fields["hints"].description == "progressive: the last nearly gives it away"
    assert fields["starter"].required and not fields["timeout"].required
    assert "_locations" not in format_fields(models.Pack), "loader-only fields are not format keys"


def test_importing_the_format_needs_no_validation_library():
    code = ("import sys\nimport tutor.pack.models, tutor.pack.packcache, tutor.pack.discovery\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core', 'yaml')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
