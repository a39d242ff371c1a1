"""Issue 31.1: a check kind is one module plus its registration line, and every table is built from
its declarations; a kind that misses a table fails here (or at import), not in a learner's run."""

from __future__ import annotations

import ast
import pathlib

import pytest

from tutor.checks import canary, kinds, probe
from tutor.checks.kinds.kind import Kind
from tutor.core import check_models, docgen

KINDS_DIR = pathlib.Path(kinds.__file__).parent


def test_a_kind_without_a_canary_fails_where_it_is_declared():
    with pytest.raises(TypeError):
        Kind("new", lambda check, case: None)  # type: ignore[call-arg]


@pytest.mark.parametrize("name", sorted(kinds.REGISTRY))
def test_every_kind_names_a_canary_that_exists(name):
    assert kinds.REGISTRY[name].canary in canary.CANARIES


def test_every_module_that_declares_kinds_is_registered():
    declaring = set()
    for path in KINDS_DIR.glob("*.py"):
        tree = ast.parse(path.read_text())
        if any(isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "KINDS" for t in node.targets)
               for node in tree.body):
            declaring.add(path.stem)
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
    from tutor.sandbox.worker.judging import _profiles

    for name, kind in kinds.REGISTRY.items():
        assert _profiles({"payload": {"checks": [{"kind": name}]}}) is kind.profiles, name
    assert {name for name, kind in kinds.REGISTRY.items() if kind.profiles} == {"profile"}


@pytest.mark.parametrize("kind", check_models.CHECK_KINDS)
def test_every_check_kind_has_its_section_in_the_reference(kind):
    assert f"(`kind: {kind}`)" in docgen.reference_markdown()


def test_every_record_a_check_uses_is_documented():
    documented = {record for _, section in docgen.sections() for record in section}
    assert set(check_models.CHECK_RECORDS) <= documented
