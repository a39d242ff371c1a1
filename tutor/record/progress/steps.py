"""What the learner did on each step: visits and time, hints, solutions shown (:class:`Steps`);
and what each step holds for a pack's contents (:meth:`Steps.of_pack`, :meth:`Steps.summarize`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tutor.record.progress.drafts import Drafts
from tutor.record.progress.events import Events, HintShown, SolutionShown
from tutor.record.progress.storage import Storage, read_float, read_int

if TYPE_CHECKING:
    from tutor.pack.models import Pack

#: An idle learner should not look like one who studied for hours: one visit counts at most this.
MAX_SECONDS_PER_VISIT = 15 * 60


@dataclass
class StepProgress:
    """Everything recorded about one step."""

    seen: bool = False
    seconds: float = 0.0
    solved: bool = False
    hints_used: int = 0
    solution_seen: bool = False
    checks: int = 0
    failed_checks: int = 0
    runs: int = 0
    quiz_answer: str | None = None
    quiz_correct: bool | None = None
    draft: bool = False


@dataclass
class LessonSummary:
    lesson: str
    state: str  # "done", "progress" or "new"
    steps_seen: int
    steps: int
    exercises_solved: int
    exercises: int
    quiz_correct: int
    quiz_answered: int
    quizzes: int
    seconds: float


@dataclass
class PackSummary:
    pack: str
    lessons: list[LessonSummary] = field(default_factory=list)
    position: tuple[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"pack": self.pack, "position": list(self.position) if self.position else None,
                "lessons": [vars(lesson) for lesson in self.lessons]}


class Steps:
    def __init__(self, storage: Storage, drafts: Drafts, events: Events):
        self._storage = storage
        self._drafts = drafts
        self._events = events

    def visit(self, pack: str, lesson: str, step: str, seconds: float = 0.0) -> None:
        """Mark a step seen; ``seconds`` (capped) is the time just spent on it."""
        now = time.time()
        seconds = max(0.0, min(seconds, MAX_SECONDS_PER_VISIT))
        self._storage.write("INSERT INTO steps (pack, lesson, step, first_seen, last_seen, seconds) "
                            "VALUES (?,?,?,?,?,?) ON CONFLICT DO UPDATE SET last_seen=excluded.last_seen, "
                            "seconds=seconds+excluded.seconds", (pack, lesson, step, now, now, seconds))

    def mark_solved(self, pack: str, lesson: str, step: str) -> None:
        self.visit(pack, lesson, step)
        self._storage.write("UPDATE steps SET solved_at=COALESCE(solved_at, ?) WHERE pack=? AND lesson=? AND step=?",
                            (time.time(), pack, lesson, step))

    def use_hint(self, pack: str, lesson: str, step: str) -> int:
        """Count one more hint shown; returns how many this step has used."""
        self.visit(pack, lesson, step)
        self._storage.write("UPDATE steps SET hints_used=hints_used+1 WHERE pack=? AND lesson=? AND step=?",
                            (pack, lesson, step))
        used = self.get(pack, lesson, step).hints_used
        self._events.publish(HintShown((pack, lesson, step), used))
        return used

    def mark_solution_seen(self, pack: str, lesson: str, step: str) -> None:
        solved = self.get(pack, lesson, step).solved
        self.visit(pack, lesson, step)
        self._storage.write("UPDATE steps SET solution_seen=1 WHERE pack=? AND lesson=? AND step=?",
                            (pack, lesson, step))
        self._events.publish(SolutionShown((pack, lesson, step), solved))

    # ------------------------------------------------------------------ reading

    def get(self, pack: str, lesson: str, step: str) -> StepProgress:
        return self.of_pack(pack).get((lesson, step), StepProgress())

    def of_pack(self, pack: str) -> dict[tuple[str, str], StepProgress]:
        """Every recorded step of a pack, keyed by (lesson, step).

        Values of the wrong type (a hand-edited or damaged file) read as nothing recorded,
        never as a crash.
        """
        out: dict[tuple[str, str], StepProgress] = {}
        rows = self._storage.rows

        def get(lesson: str, step: str) -> StepProgress:
            return out.setdefault((str(lesson), str(step)), StepProgress())

        for lesson, step, seconds, solved_at, hints, solution in rows(
                "SELECT lesson, step, seconds, solved_at, hints_used, solution_seen FROM steps WHERE pack=?", (pack,)):
            entry = get(lesson, step)
            entry.seen, entry.seconds, entry.solved = True, read_float(seconds), solved_at is not None
            entry.hints_used, entry.solution_seen = read_int(hints), bool(read_int(solution))
        for lesson, step, kind, count, failed in rows(
                "SELECT lesson, step, kind, COUNT(*), SUM(passed=0) FROM attempts WHERE pack=? "
                "GROUP BY lesson, step, kind", (pack,)):
            entry = get(lesson, step)
            if kind == "check":
                entry.checks, entry.failed_checks = read_int(count), read_int(failed)
            else:
                entry.runs += read_int(count)
        for lesson, step, answer, correct in rows(
                "SELECT lesson, step, answer, correct FROM quiz WHERE pack=?", (pack,)):
            entry = get(lesson, step)
            entry.quiz_answer = None if answer is None else str(answer)
            entry.quiz_correct = None if correct is None or read_int(correct, -1) not in (0, 1) else bool(correct)
        for lesson, step in rows("SELECT lesson, step FROM drafts WHERE pack=?", (pack,)):
            get(lesson, step).draft = True
        for (p, lesson, step), code in self._drafts.unsaved.items():
            if p == pack and code is not None:
                get(lesson, step).draft = True
        return out

    def summarize(self, pack: "Pack", position: tuple[str, str] | None = None) -> PackSummary:
        """Each lesson of ``pack``: done, in progress or new, and its counts."""
        from tutor.pack.models import Exercise, QuizBase

        recorded = self.of_pack(pack.id)
        summary = PackSummary(pack.id, position=position)
        for lesson in pack.lessons:
            entries = [(s, recorded.get((lesson.id, s.id), StepProgress())) for s in lesson.steps]
            exercises = [e for s, e in entries if isinstance(s, Exercise)]
            quizzes = [e for s, e in entries if isinstance(s, QuizBase)]
            seen = sum(e.seen for _, e in entries)
            solved = sum(e.solved for e in exercises)
            answered = [e for e in quizzes if e.quiz_answer is not None]
            # Done means done: every step seen, every exercise solved, every question answered
            # (paging past the questions showed "done … quiz 0/2"); else the counts say what is left.
            if seen == len(entries) and solved == len(exercises) and len(answered) == len(quizzes):
                state = "done"
            elif seen or any(e.draft for _, e in entries):
                state = "progress"
            else:
                state = "new"
            summary.lessons.append(LessonSummary(
                lesson=lesson.id, state=state, steps_seen=seen, steps=len(entries),
                exercises_solved=solved, exercises=len(exercises),
                quiz_correct=sum(bool(e.quiz_correct) for e in answered), quiz_answered=len(answered),
                quizzes=len(quizzes), seconds=round(sum(e.seconds for _, e in entries), 1)))
        return summary
