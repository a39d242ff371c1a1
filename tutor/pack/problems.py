"""What is wrong with a pack: located problems, and the error that carries them.

Kept apart from the loader so that code which only reports problems (discovery, the app)
does not import YAML.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tutor.errors import TutorError


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a pack, located as precisely as the source allows."""

    file: Path
    line: int | None
    col: int | None
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        where = str(self.file)
        if self.line is not None:
            where += f":{self.line}:{self.col or 1}"
        prefix = "" if self.severity == "error" else f"{self.severity}: "
        return f"{where}: {prefix}{self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"file": str(self.file), "line": self.line, "col": self.col,
                "message": self.message, "severity": self.severity}


class PackError(TutorError):
    """A pack that could not be loaded; ``problems`` lists every reason found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
