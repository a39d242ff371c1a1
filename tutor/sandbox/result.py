"""What a run produced, in the terms the learner and the check engine need."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Optional, get_args

#: How a run ended; the app and the grader branch on it.
RunStatus = Literal["ok", "error", "timeout", "memory", "output-limit", "killed", "sandbox-failure"]
STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)


@dataclass
class LearnerError:
    """An exception the learner's code raised, with a traceback of the learner's own lines.

    ``lineno`` is the learner's line (as numbered in their editor) where it surfaced; None when
    no line of theirs is involved. For a sandbox failure this holds the tutor's own traceback.
    """

    type: str
    message: str
    traceback: str
    lineno: Optional[int] = None


@dataclass
class RunResult:
    status: RunStatus
    exit_code: Optional[int] = None
    signal: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_time: float = 0.0
    cpu_time: float = 0.0
    peak_memory_mb: float = 0.0
    error: Optional[LearnerError] = None
    report: Optional[dict[str, Any]] = None
    message: Optional[str] = None
    #: Memory the child did not share with its worker, measured when the run asked for stats.
    private_memory_mb: Optional[float] = None
    #: The isolation the run had ("bwrap" or "none"), so a result never overstates it.
    isolation: str = "none"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, **kwargs: Any) -> str:
        kwargs.setdefault("ensure_ascii", False)
        return json.dumps(self.to_dict(), **kwargs)
