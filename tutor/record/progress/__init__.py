"""The learner's progress and drafts, kept in one SQLite file under the data directory.

:class:`ProgressStore` opens the file (:mod:`.storage`: opening, crash recovery, migration) and
holds one part per kind of record, each its own class over that storage:

- ``positions`` (:mod:`.positions`): the step last open in each pack;
- ``drafts`` (:mod:`.drafts`): the code as typed, never lost when the disk refuses it;
- ``steps`` (:mod:`.steps`): visits and time, hints, solutions shown, and what a step holds;
- ``answers`` (:mod:`.answers`): Runs and Checks, passing code, quiz answers;
- ``preferences`` (:mod:`.preferences`): choices made in the app;
- ``cards`` (:mod:`.cards`): review cards and the review log as rows;
- ``events`` (:mod:`.events`): typed messages about what was just recorded, for subscribers.

The store itself does only what spans every part: open and close, the whole-store views
(:meth:`packs`, :meth:`summarize`) and forgetting (:meth:`reset`, :meth:`clear_scratch`). It
never schedules reviews: the app subscribes to ``events`` and records a first review
(:func:`tutor.record.spaced_review.first_meeting`). Nothing here knows about Textual or torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tutor.record.progress.answers import Answers
from tutor.record.progress.cards import CARD_COLUMNS, REVIEW_SCRATCH, Cards, day_start
from tutor.record.progress.drafts import Drafts
from tutor.record.progress.events import CheckRecorded, Events, HintShown, QuizAnswered, Recorded, SolutionShown
from tutor.record.progress.positions import Positions
from tutor.record.progress.preferences import Preferences
from tutor.record.progress.steps import MAX_SECONDS_PER_VISIT, LessonSummary, PackSummary, Steps, StepProgress
from tutor.record.progress.storage import BUSY_WAIT, FILE_NAME, LOCK_NAME, SCHEMA_VERSION, TABLES, Storage, read_float, read_int

if TYPE_CHECKING:
    from tutor.pack.models import Pack

__all__ = ["BUSY_WAIT", "CARD_COLUMNS", "FILE_NAME", "LOCK_NAME", "MAX_SECONDS_PER_VISIT", "REVIEW_SCRATCH",
           "SCHEMA_VERSION", "TABLES", "Answers", "Cards", "CheckRecorded", "Drafts", "Events", "HintShown",
           "LessonSummary", "PackSummary", "Positions", "Preferences", "ProgressStore", "QuizAnswered", "Recorded",
           "SolutionShown", "StepProgress", "Steps", "Storage", "day_start", "read_float", "read_int"]


class ProgressStore:
    """The progress file and its parts; build one with :meth:`open` (or :meth:`in_memory`).

    ``storage`` says how the file was opened (``notice``, ``persistent``, ``write_error``, ``path``).
    """

    def __init__(self, storage: Storage):
        self.storage = storage
        self.events = Events()
        self.positions = Positions(storage)
        self.preferences = Preferences(storage)
        self.drafts = Drafts(storage)
        self.steps = Steps(storage, self.drafts, self.events)
        self.answers = Answers(storage, self.steps, self.events)
        self.cards = Cards(storage)

    @classmethod
    def open(cls, data_dir: Path, *, wait: float = BUSY_WAIT, config_dir: Path | None = None) -> "ProgressStore":
        """Open (or create) the store in ``data_dir``; never raises for a bad file or folder
        (see :meth:`Storage.open`, which also makes ``config_dir`` private)."""
        return cls(Storage.open(data_dir, wait=wait, config_dir=config_dir))

    @classmethod
    def in_memory(cls) -> "ProgressStore":
        return cls(Storage.in_memory())

    def claim(self) -> str | None:
        """Mark the data folder as in use by this app (see :meth:`Storage.claim`)."""
        return self.storage.claim()

    def close(self) -> None:
        """Write what the disk refused before (drafts), then close the file."""
        self.storage.close()

    # ------------------------------------------------------------------ whole-store views

    def packs(self) -> list[str]:
        """Every pack with anything recorded."""
        rows = self.storage.rows(" UNION ".join(f"SELECT DISTINCT pack FROM {table}" for table in TABLES), ())
        return sorted(str(row[0]) for row in rows)

    def summarize(self, pack: "Pack") -> PackSummary:
        """Each lesson of ``pack``: done, in progress or new, and its counts; and the position."""
        return self.steps.summarize(pack, self.positions.get(pack.id))

    def reset(self, pack: str | None = None, step: str | None = None, lesson: str | None = None) -> int:
        """Forget progress: everything, one pack, or one step of a pack (its review card and the
        review's scratch answers too). Returns rows removed."""
        where, params = "", tuple[str | int, ...]()
        if pack is not None:
            where, params = " WHERE pack=?", (pack,)
            if step is not None:
                where += " AND step=?"
                params += (step,)
                if lesson is not None:  # the lesson's rows and its reviews' scratch rows
                    where += " AND (lesson=? OR (lesson LIKE 'review:%' AND substr(lesson, ?) = ?))"
                    params += (lesson, -len(lesson) - 1, ":" + lesson)
        removed = 0
        with self.storage.transaction() as conn:
            for table in TABLES:
                if table == "position" and step is not None:
                    continue
                removed += conn.execute(f"DELETE FROM {table}{where}", params).rowcount
            # What the app keeps per step beside them: the editor's cursor, a free answer's 1-4.
            for kind in ("pref.cursor:", "rating:"):  # (a preference's key is "pref." + its name)
                head = kind if pack is None else f"{kind}{pack}/" + (f"{lesson}/{step}" if lesson and step else "")
                tail = f"/{step}" if step is not None and not lesson else ""
                removed += conn.execute("DELETE FROM meta WHERE substr(key, 1, ?) = ? AND (? = '' OR "
                                        "substr(key, ?) = ?)",
                                        (len(head), head, tail, -len(tail) or 1, tail)).rowcount
        self.drafts.forget(lambda k: pack is None or (k[0] == pack and (step is None or k[2] == step)))
        return removed

    def clear_scratch(self, pack: str, lesson: str, step: str, *, keep: str | None = None) -> None:
        """Forget the answers, hints and drafts of an item's earlier, finished reviews (all but
        the scratch lesson ``keep``); the lesson's own rows are not touched."""
        suffix = ":" + lesson
        for table in ("steps", "drafts", "attempts", "solutions", "quiz"):
            self.storage.write(f"DELETE FROM {table} WHERE pack=? AND step=? AND lesson LIKE 'review:%' "
                               "AND substr(lesson, ?) = ? AND lesson != ?",
                               (pack, step, -len(suffix), suffix, keep or ""))
        self.drafts.forget(lambda k: k[0] == pack and k[2] == step and k[1] != keep
                           and k[1].startswith(REVIEW_SCRATCH) and k[1].endswith(suffix))
