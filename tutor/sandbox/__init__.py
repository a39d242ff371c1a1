"""Running learner code fast, isolated and within limits (the parent side; never imports torch).

Names load lazily: the worker imports ``tutor.sandbox.wire`` under interpreters that lack the
tutor's dependencies, and must not pay for (or break on) the pool machinery.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Limits": "tutor.sandbox.limits",
    "RunResult": "tutor.sandbox.result",
    "LearnerError": "tutor.sandbox.result",
    "STATUSES": "tutor.sandbox.result",
    "Sandbox": "tutor.sandbox.pool",
    "SandboxUnavailable": "tutor.sandbox.pool",
    "SandboxState": "tutor.sandbox.pool",
    "default_sandbox": "tutor.sandbox.pool",
    "run": "tutor.sandbox.pool",
    "ProbeSpec": "tutor.sandbox.process",
    "IsolationInfo": "tutor.sandbox.isolation",
    "IsolationError": "tutor.sandbox.isolation",
    "clean_output": "tutor.sandbox.textclean",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tutor.sandbox' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
