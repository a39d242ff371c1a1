"""What the learner handed in on each step: Runs and Checks (``attempts``), the code of the last
Check that passed (``solutions``: what `torch-tutor handin` hands in), and quiz answers."""

from __future__ import annotations

import time

from tutor.record.progress.events import CheckRecorded, Events, QuizAnswered
from tutor.record.progress.steps import Steps
from tutor.record.progress.storage import Storage, read_int


class Answers:
    def __init__(self, storage: Storage, steps: Steps, events: Events):
        self._storage = storage
        self._steps = steps
        self._events = events

    def record_attempt(self, pack: str, lesson: str, step: str, kind: str, *, passed: bool | None = None,
                       checks_passed: int | None = None, checks_total: int | None = None,
                       wall_time: float | None = None, code: str | None = None) -> None:
        """One Run or Check; a passing Check also marks the step solved and keeps its ``code``
        (what `torch-tutor handin` hands in, whatever the learner typed afterwards)."""
        write = self._storage.write
        write("INSERT INTO attempts (pack, lesson, step, kind, passed, checks_passed, checks_total, "
              "wall_time, at) VALUES (?,?,?,?,?,?,?,?,?)",
              (pack, lesson, step, kind, None if passed is None else int(passed), checks_passed,
               checks_total, wall_time, time.time()))
        if kind != "check":
            return
        if not passed:
            self._events.publish(CheckRecorded((pack, lesson, step), False))
            return
        self._steps.mark_solved(pack, lesson, step)
        if code is not None:
            write("INSERT INTO solutions VALUES (?,?,?,?,?) ON CONFLICT DO UPDATE SET "
                  "code=excluded.code, at=excluded.at", (pack, lesson, step, code, time.time()))
        progress = self._steps.get(pack, lesson, step)
        self._events.publish(CheckRecorded((pack, lesson, step), True, progress.hints_used, progress.solution_seen))

    def solved_code(self, pack: str, lesson: str, step: str) -> str | None:
        """The code of the last Check that passed, if any."""
        row = self._storage.one("SELECT code FROM solutions WHERE pack=? AND lesson=? AND step=?",
                                (pack, lesson, step))
        return row[0] if row else None

    def record_quiz(self, pack: str, lesson: str, step: str, answer: str, correct: bool | None,
                    rating: int | None = None) -> None:
        """Keep an answer and whether it was right (None: not graded yet); ``rating``: a free
        answer's own 1-4, kept beside it (shown again, and its review card's first rating)."""
        self._steps.visit(pack, lesson, step)
        if rating is not None:
            self._storage.write("INSERT INTO meta VALUES (?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                                (f"rating:{pack}/{lesson}/{step}", str(int(rating))))
        self._storage.write("INSERT INTO quiz VALUES (?,?,?,?,?,1,?) ON CONFLICT DO UPDATE SET "
                            "answer=excluded.answer, correct=excluded.correct, tries=tries+1, at=excluded.at",
                            (pack, lesson, step, answer, None if correct is None else int(correct), time.time()))
        row = self._storage.one("SELECT tries FROM quiz WHERE pack=? AND lesson=? AND step=?", (pack, lesson, step))
        self._events.publish(QuizAnswered((pack, lesson, step), correct, read_int(row[0], 1) if row else 1, rating))

    def rating(self, pack: str, lesson: str, step: str) -> int | None:
        """The 1-4 a free answer was last graded with (None: none kept)."""
        row = self._storage.one("SELECT value FROM meta WHERE key=?", (f"rating:{pack}/{lesson}/{step}",))
        value = read_int(row[0], 0) if row else 0
        return value if 1 <= value <= 4 else None
