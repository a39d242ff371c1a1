"""Spaced review: every quiz item and exercise the learner has met comes back on FSRS's schedule.

A *card* is one item (pack, lesson, step) of one of the reviewable kinds (choice, predict and
free quizzes, exercises). The learner's first graded answer in the lesson is its first review
(:func:`first_meeting`: the app hears what the progress store recorded, ``store.events``, and
calls it; the store itself schedules nothing); after that the review queue brings it back when
FSRS predicts it is about to be forgotten. Cards and the review log live in the progress
database (``cards``, ``reviews``); this module holds the rules and the scheduler:

- The scheduler is py-fsrs's (pure Python). Its optimizer needs torch, so it runs only in a
  subprocess (:mod:`tutor.record.fsrs_fit`, `torch-tutor review --optimize`). One learning step and one relearning step
  of 10 minutes: Again brings a card back the same day, Good on a first meeting schedules it by
  FSRS's initial stability (2 days with the default parameters), Easy further (8 days). No
  fuzz: a learner (and a test) can be told the day a card comes back, and a deck of tens of
  cards does not clump the way an Anki deck of thousands does.
- Ratings (:func:`quiz_rating`): right at the first try is Good, right after a wrong try Hard,
  wrong (gave up or moved on after a wrong try) Again; right at the first try within
  :data:`QUICK_SECONDS` of the item appearing is Easy. A prediction right only after a wrong
  one is Again, not Hard: the wrong try showed the real output side by side, so retyping it
  proves nothing (a wrong choice explains only the choice picked, so finding the right one
  after it still counts as Hard). Free answers are rated by the learner (1-4, the one way to
  grade them in review). Exercises: passed without hints Good, with hints Hard, solution seen
  or gave up after a failed check Again. Moving on (F4) from an item not tried at all grades
  nothing: it stays due.
- An item whose question or answer changed (:func:`content_hash`) starts again as a new card
  with a notice; an item gone from its pack is retired (kept, never shown); both happen in
  :func:`sync`, which every review entry point calls with the installed packs.
- New cards (met before review existed, or reset by a change) enter the queue at most
  ``new_cards_per_day`` a day (a setting, default 10), so an upgrade never floods the queue.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Iterable

from tutor.pack.comments import code_for
from tutor.record.progress import REVIEW_SCRATCH, CheckRecorded, ProgressStore, QuizAnswered, Recorded, SolutionShown, day_start, read_float
from tutor.pack.spec import is_record, materialize
from tutor.pack.titles import step_title

if TYPE_CHECKING:
    from fsrs import Card, Scheduler

    from tutor.pack.models import Pack, Step

AGAIN, HARD, GOOD, EASY = 1, 2, 3, 4
RATING_NAMES = {AGAIN: "again", HARD: "hard", GOOD: "good", EASY: "easy"}
LEARNING_STEPS = (timedelta(minutes=10),)
RELEARNING_STEPS = (timedelta(minutes=10),)
DESIRED_RETENTION = 0.9
#: A right first answer given within this many seconds of the item appearing is Easy: enough
#: to read a short question and pick a choice (or type a one-line output, and run it) when the
#: answer is simply known; a learner who has to work it out takes longer.
QUICK_SECONDS = {"choice": 10.0, "predict": 20.0}
KINDS = ("choice", "predict", "free", "exercise")


# ---------------------------------------------------------------------------- items

def item_kind(step: "Step") -> str | None:
    """The card kind of a step, None when the step is not reviewed (prose, examples)."""
    kind = getattr(step, "kind", None)
    if kind == "exercise":
        return "exercise"
    if kind == "quiz":
        return getattr(step, "style", None)
    return None


def _plain(value: Any) -> Any:
    """Pack text (a string or a language map) and records as plain JSON-able data."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if is_record(type(value)):
        # A record read from the pack cache is not a dataclass until first needed (see
        # tutor.pack.spec.record); without this its repr would be hashed instead of its fields,
        # and the app (cache) and the shell (YAML) would disagree about every card's content.
        materialize()
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return {name: _plain(getattr(value, name)) for name in fields if not name.startswith("_")}
    return str(value)


#: A check's wording: what the learner reads beside its verdict, not what it asserts.
_CHECK_WORDING = frozenset({"description", "hint", "hints", "message"})


def _digest(kind: str | None, parts: Any) -> str:
    data = json.dumps([kind, parts], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def content_hash(step: "Step") -> str:
    """A hash of what the item asks and what counts as its answer: changing either makes the
    learner's memory of it stale. Titles, explanations and hints (a check's description and
    hints too) may change freely, and so may the code's Chinese comments (``#zh:`` lines)."""
    from tutor.pack.models import QUIZ_TYPES, Exercise

    kind = item_kind(step)
    quiz = QUIZ_TYPES.get(type(step))
    if quiz is not None:
        parts = quiz.review(step)
    elif isinstance(step, Exercise):
        checks = [{k: v for k, v in _plain(check).items() if k not in _CHECK_WORDING} for check in step.checks]
        return _digest(kind, [_plain(step.body), _plain(code_for(step.starter, "en")), checks])
    else:
        raise ValueError(f"step {step.id!r} is not reviewed")
    return _digest(kind, _plain(parts))


def earlier_hashes(step: "Step") -> set[str]:
    """What earlier releases stored for the same exercise: its checks hashed with their wording,
    and, in the app (which reads the pack cache), the first check hashed by its repr."""
    from tutor.pack.models import Exercise

    if not isinstance(step, Exercise) or not step.checks:
        return set()
    head = [_plain(step.body), _plain(code_for(step.starter, "en"))]
    checks = [_plain(check) for check in step.checks]
    return {_digest("exercise", [*head, checks]), _digest("exercise", [*head, [repr(step.checks[0]), *checks[1:]]])}


def items(pack: "Pack") -> dict[tuple[str, str], tuple[str, Any, Any]]:
    """Every reviewable item of a pack: (lesson id, step id) -> (kind, lesson, step)."""
    out = {}
    for lesson in pack.lessons:
        for step in lesson.steps:
            kind = item_kind(step)
            if kind is not None:
                out[(lesson.id, step.id)] = (kind, lesson, step)
    return out


# ---------------------------------------------------------------------------- scheduling

def _utc(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(float(seconds), timezone.utc)


#: The learner's own FSRS parameters, once `torch-tutor review --optimize` has fitted them.
PARAMETERS_KEY = "fsrs.parameters"
#: Reviews FSRS can learn from (a day or more after the card's previous review) needed before
#: fitting: fsrs's optimizer takes gradient steps on mini-batches of 512 such reviews and returns
#: the default parameters unchanged below one batch, so fitting earlier cannot help.
MIN_REVIEWS_TO_FIT = 512


def scheduler(store: ProgressStore) -> "Scheduler":
    """FSRS with this tutor's steps (see the module docstring), and the learner's own parameters
    when they have fitted some (else, or if those are unusable, FSRS's defaults)."""
    saved = store.preferences.get(PARAMETERS_KEY)
    if saved:
        try:
            return scheduler_with([float(x) for x in json.loads(saved)])
        except (ValueError, TypeError):
            pass
    return scheduler_with(None)


def scheduler_with(parameters: list[float] | None) -> "Scheduler":
    """A scheduler with ``parameters`` (None: FSRS's defaults); ValueError when FSRS rejects them
    (count, bounds)."""
    from fsrs import Scheduler

    options: dict[str, Any] = {} if parameters is None else {"parameters": parameters}
    return Scheduler(**options, desired_retention=DESIRED_RETENTION, learning_steps=LEARNING_STEPS,
                     relearning_steps=RELEARNING_STEPS, enable_fuzzing=False)


def fit_reviews(store: ProgressStore) -> tuple[list[list[Any]], int]:
    """The review log as the fitting subprocess reads it (one card id per card and generation),
    and how many of those reviews FSRS can learn from."""
    out: list[list[Any]] = []
    counted = 0
    last: dict[int, float] = {}
    for entry in store.cards.reviews():
        at, rating = read_float(entry["at"], -1.0), int(read_float(entry["rating"]))
        if at < 0 or rating not in RATING_NAMES:
            continue
        card = int(read_float(entry["card"])) * 1000 + int(read_float(entry["generation"])) % 1000
        if card in last and at - last[card] >= 86400:
            counted += 1
        last[card] = at
        duration = entry["duration_ms"]
        out.append([card, rating, at, int(read_float(duration)) if duration is not None else None])
    return out, counted


def _to_fsrs(card: dict[str, Any]) -> "Card":
    from fsrs import Card, State

    try:
        state = State(int(card["state"]))
    except (TypeError, ValueError):
        state = State.Learning
    step = card.get("fsrs_step")
    if state == State.Review:
        step = None
    elif not isinstance(step, int) or step < 0:
        step = 0
    stability = card.get("stability")
    difficulty = card.get("difficulty")
    if not isinstance(stability, (int, float)) or not isinstance(difficulty, (int, float)) or stability <= 0:
        stability = difficulty = None
        if state != State.Learning:
            state, step = State.Learning, 0
    return Card(card_id=int(card.get("id") or 1), state=state, step=step, stability=stability,
                difficulty=difficulty, due=_utc(card["due"]) or datetime.now(timezone.utc),
                last_review=_utc(card.get("last_review")) if stability is not None else None)


def _new_card(key: tuple[str, str, str], kind: str | None, now: float) -> dict[str, Any]:
    pack, lesson, step = key
    return {"pack": pack, "lesson": lesson, "step": step, "kind": kind, "content": None, "generation": 0,
            "state": 1, "fsrs_step": 0, "stability": None, "difficulty": None, "due": now,
            "last_review": None, "retired": None, "created": now, "notice": None}


def first_review(store: ProgressStore, key: tuple[str, str, str], kind: str, rating: int) -> dict[str, Any] | None:
    """Make the card of an item met in its lesson; that graded meeting is its first review."""
    now = store.cards.clock()
    if not store.cards.put(_new_card(key, kind, now)):
        return None
    return review(store, key, rating, source="lesson")


def first_meeting(store: ProgressStore, message: Recorded) -> dict[str, Any] | None:
    """The first graded meeting of an item in its lesson is its card's first review: a quiz
    answer graded right (Good) or wrong (Again), a passing Check (Good; Hard with hints; Again
    after the solution), a solution shown before the item was solved (Again). Anything else,
    an item that already has a card, or a review's own scratch answers: nothing. The app calls
    this for every message the store publishes (``store.events``); so does `torch-tutor check`."""
    key = message.key
    if key[1].startswith(REVIEW_SCRATCH):
        return None
    if isinstance(message, QuizAnswered) and message.correct is not None:
        kind, rating = "quiz", message.rating or (GOOD if message.correct else AGAIN)
    elif isinstance(message, CheckRecorded) and message.passed:
        kind, rating = "exercise", exercise_rating(message.hints_used, message.solution_seen)
    elif isinstance(message, SolutionShown) and not message.solved:
        kind, rating = "exercise", AGAIN
    else:
        return None
    if store.cards.get(*key) is not None:
        return None
    return first_review(store, key, kind, rating)


def keep_first_meetings(store: ProgressStore) -> None:
    """Subscribe :func:`first_meeting` to what ``store`` records from now on."""
    def heard(message: Recorded) -> None:
        first_meeting(store, message)

    store.events.subscribe(heard)


def review(store: ProgressStore, key: tuple[str, str, str], rating: int, *, source: str = "review",
           duration_ms: int | None = None) -> dict[str, Any] | None:
    """Rate the card of ``key`` now; returns the updated card (None when it has none)."""
    from fsrs import Rating

    card = store.cards.get(*key)
    if card is None:
        return None
    now = store.cards.clock()
    fsrs = scheduler(store)
    before = _to_fsrs(card)
    retrievability = fsrs.get_card_retrievability(before, _utc(now)) if before.last_review else None
    after, _log = fsrs.review_card(before, Rating(int(rating)), _utc(now), duration_ms)
    first = card["last_review"] is None
    card.update(state=int(after.state), fsrs_step=after.step, stability=after.stability,
                difficulty=after.difficulty, due=after.due.timestamp(), last_review=now, notice=None)
    store.cards.put(card)
    store.cards.log_review(card, int(rating), now, source=source, first=first, duration_ms=duration_ms,
                           retrievability=retrievability)
    return store.cards.get(*key)


def quiz_rating(kind: str, correct: bool, tries: int, seconds: float | None) -> int:
    """The rating a choice or predict answer earns (see the module docstring)."""
    if not correct:
        return AGAIN
    if tries > 1:
        return AGAIN if kind == "predict" else HARD  # a missed prediction showed the answer
    quick = QUICK_SECONDS.get(kind)
    if quick is not None and seconds is not None and seconds <= quick:
        return EASY
    return GOOD


def exercise_rating(hints_used: int, solution_seen: bool) -> int:
    if solution_seen:
        return AGAIN
    return HARD if hints_used else GOOD


# ---------------------------------------------------------------------------- keeping cards true to packs

def sync(store: ProgressStore, packs: Iterable["Pack"]) -> list[str]:
    """Match the cards of installed ``packs`` to their items; returns notices for the learner.

    A card whose item changed starts again as new (its reviews are kept, under the old
    generation); a card whose item left the pack is retired; a retired card whose item came
    back is live again. Cards of packs that are not installed are left as they are.
    """
    from tutor.words.i18n import t

    notices = []
    now = store.cards.clock()
    for pack in packs:
        present = items(pack)
        for card in store.cards.all([pack.id], retired=True):
            found = present.get((card["lesson"], card["step"]))
            name = f"{pack.id}: {card['lesson']}/{card['step']}"
            if found is None:
                if card["retired"] is None:
                    card["retired"] = now
                    store.cards.put(card)
                    notices.append(t("review.notice.retired", name=name))
                continue
            kind, _lesson, step = found
            changed = False
            if card["retired"] is not None:
                card["retired"] = None
                changed = True
            digest = content_hash(step)
            if card["content"] is None:  # met before its pack was read with it: as it is now
                card["content"], card["kind"], changed = digest, kind, True
            elif card["content"] in earlier_hashes(step):  # the same item, hashed the old way
                card["content"], changed = digest, True
            elif card["content"] != digest:
                card.update(_new_card((card["pack"], card["lesson"], card["step"]), kind, now),
                            created=card["created"], generation=int(card["generation"] or 0) + 1, content=digest,
                            notice="changed")
                changed = True
                notices.append(t("review.notice.changed", name=name))
            elif card["kind"] != kind:
                card["kind"], changed = kind, True
            if changed:
                store.cards.put(card)
    return notices


# ---------------------------------------------------------------------------- what is due

@dataclass
class Due:
    pack: str
    lesson: str
    step: str
    kind: str
    title: str
    due: float
    new: bool

    @property
    def item(self) -> str:
        return f"{self.lesson}/{self.step}"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["id"] = self.item
        data["due"] = datetime.fromtimestamp(self.due, timezone.utc).isoformat(timespec="seconds")
        return data


def queue(store: ProgressStore, packs: Iterable["Pack"], now: float, new_per_day: int,
          language: str | None = None) -> list[Due]:
    """The cards to review at ``now``: those due (oldest due first), then new ones up to the
    day's allowance. Only live cards of installed packs whose item is still there."""
    from tutor.pack.text import resolve

    by_id = {pack.id: pack for pack in packs}
    due, new = [], []
    for card in store.cards.all(list(by_id)):
        pack = by_id[card["pack"]]
        found = items(pack).get((card["lesson"], card["step"]))
        if found is None:
            continue
        kind, lesson, step = found
        fallback = pack.languages[0]
        title = f"{resolve(lesson.title, language, fallback)} › {step_title(step, language, fallback)}"
        entry = Due(pack.id, lesson.id, step.id, kind, title, read_float(card["due"], now), card["last_review"] is None)
        if entry.new:
            new.append(entry)
        elif entry.due <= now:
            due.append(entry)
    due.sort(key=lambda d: d.due)
    return due + new[:store.cards.new_allowance(now, new_per_day)]


def forecast(store: ProgressStore, packs: Iterable["Pack"], now: float, days: int = 14) -> list[int]:
    """Cards due on each of the next ``days`` local days; today's count includes overdue ones."""
    ids = [pack.id for pack in packs]
    today = day_start(now)
    counts = [0] * days
    for card in store.cards.all(ids):
        if card["last_review"] is None:
            continue
        due = read_float(card["due"], now)
        index = 0 if due < today else int((due - today) // 86400)
        if index < days:
            counts[index] += 1
    return counts


def retention(store: ProgressStore, packs: Iterable["Pack"], now: float, weeks: int = 8) -> list[tuple[int, int]]:
    """(reviews, remembered) for each of the last ``weeks`` weeks, oldest first: reviews in the
    review queue (not first meetings), remembered = rated Hard or better."""
    start = day_start(now) - (weeks - 1) * 7 * 86400
    out = [[0, 0] for _ in range(weeks)]
    for entry in store.cards.reviews([pack.id for pack in packs], since=start):
        if entry["source"] != "review" or entry["first"]:
            continue
        index = min(weeks - 1, max(0, int((read_float(entry["at"], start) - start) // (7 * 86400))))
        out[index][0] += 1
        out[index][1] += read_float(entry["rating"]) > AGAIN
    return [(a, b) for a, b in out]


def next_due(store: ProgressStore, packs: Iterable["Pack"], after: float) -> float | None:
    """When the next learned card comes due after ``after`` (None when none is scheduled)."""
    dues = [read_float(c["due"], after) for c in store.cards.all([p.id for p in packs]) if c["last_review"] is not None]
    dues = [due for due in dues if due > after]
    return min(dues) if dues else None


def when(seconds: float, now: float) -> str:
    """'in 10 min', 'in 3 h', 'in 2 days', 'in less than a minute', 'now': how far ``seconds``
    is from ``now`` ("now" only once it has come: a card due in 30 s is not due now)."""
    from tutor.words.i18n import t

    delta = seconds - now
    if delta <= 0:
        return t("when.now")
    if delta < 60:
        return t("when.under_a_minute")
    if delta < 3600:
        return t("when.minutes", n=round(delta / 60))
    if delta < 86400:
        return t("when.hours", n=round(delta / 3600))
    return t("when.days", n=round(delta / 86400))
