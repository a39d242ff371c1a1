"""One check vocabulary (issue 12.3): the child side's TypedDicts name exactly the fields of the
parent's records, so a renamed, added or removed check field fails here, not silently in a run."""

from __future__ import annotations

import typing

import pytest

from tutor.checks import vocab
from tutor.core import check_models
from tutor.core.spec import format_fields


def _record_of_kind(kind: str) -> type:
    for record in typing.get_args(typing.get_args(check_models.Check)[0]):
        if typing.get_args(format_fields(record)["kind"].annotation) == (kind,):
            return record
    raise AssertionError(f"no record for kind {kind!r}")


def _keys(typed: type) -> set[str]:
    return set(typed.__required_keys__) | set(typed.__optional_keys__)  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", check_models.CHECK_KINDS)
def test_every_kind_has_a_typeddict_with_the_same_fields(kind):
    record = _record_of_kind(kind)
    assert _keys(vocab.KINDS[kind]) == set(format_fields(record)), (
        f"tutor/checks/vocab.py's {vocab.KINDS[kind].__name__} and {record.__name__} disagree")


@pytest.mark.parametrize("name", sorted(vocab.NESTED))
def test_nested_records_match(name):
    record = getattr(check_models, name)
    assert _keys(vocab.NESTED[name]) == set(format_fields(record))


def test_the_kinds_are_the_same_on_both_sides():
    from tutor.checks.probe import KINDS

    # a kind judged by the parent from the code's text (form) never reaches the probe
    assert set(vocab.KINDS) == set(check_models.CHECK_KINDS)
    assert set(KINDS) == set(check_models.CHECK_KINDS) - set(check_models.PARENT_KINDS)
    assert check_models.PARENT_KINDS == ("form",)


def test_every_nested_record_of_the_vocabulary_has_a_typeddict():
    seen: set[str] = set()

    def walk(annotation) -> None:
        for arg in typing.get_args(annotation):
            walk(arg)
        if isinstance(annotation, type) and hasattr(annotation, "__record_doc__") \
                and not issubclass(annotation, check_models.CheckBase) and annotation.__name__ not in seen:
            seen.add(annotation.__name__)
            for info in format_fields(annotation).values():
                walk(info.annotation)

    for record in typing.get_args(typing.get_args(check_models.Check)[0]):
        for info in format_fields(record).values():
            walk(info.annotation)
    assert seen == set(vocab.NESTED)
