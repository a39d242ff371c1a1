"""A step's limits are computed in one place: the app's Run, its Check and `grade` agree."""

from __future__ import annotations

import os

import pytest

from tutor.sandbox.limits import Limits, step_limits, usable_cpus


class _Box:
    limits = Limits(wall_time=10.0, cpu_time=30.0)


@pytest.fixture
def two_of_eight_cpus(monkeypatch):
    """A machine with 8 CPUs of which this process may use 2 (a container, taskset)."""
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)


def test_usable_cpus_follows_the_affinity_mask(two_of_eight_cpus):
    assert usable_cpus() == 2


def test_usable_cpus_without_affinity(monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert usable_cpus() == 1


def test_step_limits(two_of_eight_cpus):
    assert step_limits(_Box.limits, None) == _Box.limits
    limited = step_limits(_Box.limits, 20.0)
    assert limited.wall_time == 20.0 and limited.cpu_time == 40.0  # 20 s on each of 2 CPUs
    assert step_limits(_Box.limits, 5.0).cpu_time == 30.0  # never below the setting


def test_run_check_and_grade_get_the_same_limits(two_of_eight_cpus):
    from tutor.app.engine import Engine
    from tutor.grading.exercise import _limits_for

    for timeout in (None, 3.0, 25.0):
        assert Engine._limits(_Box(), timeout) == _limits_for(_Box(), timeout) == step_limits(_Box.limits, timeout)


def test_limits_cross_to_the_worker_as_one_typed_record():
    """The parent writes a run's limits with ``to_wire`` and the worker reads them back with
    ``from_wire``: the same record on both sides, ints staying ints and a whole wall time a float."""
    sent = Limits(wall_time=3, cpu_time=2.5, memory_mb=512, output_kb=1)
    wire = sent.to_wire()
    assert set(wire) == {"wall_time", "cpu_time", "memory_mb", "output_kb", "processes", "file_size_mb",
                         "open_files"}
    got = Limits.from_wire(wire)
    assert got == sent and type(got.wall_time) is float and type(got.memory_mb) is int


@pytest.mark.parametrize(("change", "said"), [
    ({"wall_time": None}, "wall_time must be a number"),
    ({"wall_time": "10"}, "wall_time must be a number"),
    ({"cpu_time": True}, "cpu_time must be a number"),
    ({"memory_mb": 2048.5}, "memory_mb must be a whole number"),
    ({"output_kb": float("nan")}, "output_kb must be a number"),
    ({"stack_mb": 8}, "unknown key(s) stack_mb"),
])
def test_a_malformed_limits_record_names_its_key(change, said):
    wire = {**Limits().to_wire(), **change}
    with pytest.raises(ValueError, match=said.replace("(", r"\(").replace(")", r"\)")):
        Limits.from_wire(wire)


def test_a_limits_record_missing_a_key_or_not_a_mapping():
    wire = Limits().to_wire()
    del wire["open_files"]
    with pytest.raises(ValueError, match="missing open_files"):
        Limits.from_wire(wire)
    with pytest.raises(ValueError, match="expected a mapping, got list"):
        Limits.from_wire([10.0])
