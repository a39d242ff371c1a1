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
