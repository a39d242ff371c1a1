"""One check vocabulary (issues 12.3, 53): the child side's TypedDicts and defaults are generated
from the parent's records, so a renamed, added or removed check field, or a changed default, fails
here until the mirror is generated again, not silently in a run."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from tutor.child.checks import vocab
from tutor.pack import check_models
from tutor.pack.spec import as_data, format_fields


def _record_of_kind(kind: str) -> type:
    for record in typing.get_args(typing.get_args(check_models.Check)[0]):
        if typing.get_args(format_fields(record)["kind"].annotation) == (kind,):
            return record
    raise AssertionError(f"no record for kind {kind!r}")


def _committed() -> str:
    return Path(vocab.__file__).read_text(encoding="utf-8")


def _keys(typed: type) -> set[str]:
    return set(typed.__required_keys__) | set(typed.__optional_keys__)  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", check_models.CHECK_KINDS)
def test_every_kind_has_a_typeddict_with_the_same_fields(kind):
    record = _record_of_kind(kind)
    assert _keys(vocab.KINDS[kind]) == set(format_fields(record)), (
        f"tutor/child/checks/vocab.py's {vocab.KINDS[kind].__name__} and {record.__name__} disagree")


@pytest.mark.parametrize("name", sorted(vocab.NESTED))
def test_nested_records_match(name):
    record = getattr(check_models, name)
    assert _keys(vocab.NESTED[name]) == set(format_fields(record))


def test_committed_mirror_is_generated_from_the_records():
    from tutor.pack.docgen import vocab_source

    assert _committed() == vocab_source(), (
        "tutor/child/checks/vocab.py is stale: run `python -m tutor.pack.docgen > tutor/child/checks/vocab.py`")


def test_a_changed_default_makes_the_mirror_stale(monkeypatch):
    """The sync test can fail: a record's new default is a different generated file."""
    from tutor.pack.docgen import vocab_source
    from tutor.pack.spec import FieldDoc, _FIELDS

    fields = dict(format_fields(check_models.TensorCheck))
    fields["rtol"] = FieldDoc("rtol", fields["rtol"].annotation, False, 1e-3, None)
    monkeypatch.setitem(_FIELDS, check_models.TensorCheck, fields)
    assert '"rtol": 0.001,' in vocab_source() and '"rtol": 0.001,' not in _committed()


@pytest.mark.parametrize("kind", check_models.CHECK_KINDS)
def test_the_child_reads_every_default_the_record_has(kind):
    """What the judge reads for a field the check left out is the record's default, for every kind."""
    record = check_models.RECORDS[kind]
    filled = vocab.with_defaults({"kind": kind, "id": "c"})
    for name, info in format_fields(record).items():
        if not info.required and info.default is not None:
            assert filled[name] == as_data(info.default), (kind, name)


def test_a_nested_records_defaults_are_filled_in_too():
    """A profile check's `compare` block gets CompareRanking's `k` and `near_tie` (the kind read
    them with defaults of its own before), its own values kept."""
    compare = {"call": "rank(workload, k)", "workloads": ["w"]}
    filled = vocab.with_defaults({"kind": "profile", "id": "p", "compare": compare})
    fields = format_fields(check_models.CompareRanking)
    assert filled["compare"] == dict(compare, k=fields["k"].default, near_tie=fields["near_tie"].default)
    assert vocab.with_defaults({"kind": "profile", "id": "p", "compare": dict(compare, k=5)})["compare"]["k"] == 5
    assert "k" not in compare  # the check's own mapping is left as it was


def test_defaults_fill_in_but_never_override_and_are_fresh_copies():
    first = vocab.with_defaults({"kind": "memory", "id": "a", "tolerance": 0.5})
    assert first["tolerance"] == 0.5 and first["steps"] == [4, 8, 16, 32]
    first["steps"].append(64)
    first["cases"][0]["n"] = 1
    second = vocab.with_defaults({"kind": "memory", "id": "b"})
    assert second["steps"] == [4, 8, 16, 32] and second["cases"] == [{}]
    assert vocab.with_defaults({"kind": "nonesuch", "id": "c"}) == {"kind": "nonesuch", "id": "c"}


def test_the_kinds_are_the_same_on_both_sides():
    from tutor.child.checks.probe import KINDS

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
