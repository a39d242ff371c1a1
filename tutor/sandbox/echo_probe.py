"""A minimal probe: proves the report channel end to end (``doctor`` and the sandbox tests).

Runs in the run's judge (the keeper) once the learner's code has run in the runner: the names
it sees are the learner's, as the judge's proxies. Standard library only.
"""

from __future__ import annotations

from typing import Any


def run_checks(namespace: dict[str, Any], payload: object, learner_error: dict[str, Any] | None) -> dict[str, Any]:
    """Echo what a real probe sees: the learner's names, the payload, the learner's error."""
    if isinstance(payload, dict) and payload.get("raise"):
        raise RuntimeError("the probe failed on purpose")
    names = sorted(k for k in namespace if not k.startswith("__"))
    return {"verdict": "genuine", "names": names, "payload": payload,
            "learner_error": learner_error and learner_error.get("type")}
