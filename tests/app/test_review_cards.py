"""Review cards on FSRS's schedule, with a controlled clock: first meetings, ratings, changed and
retired items, the new-card cap, the migration from schema 1, and reset."""

from __future__ import annotations

import dataclasses
import os
import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tutor.record import spaced_review as review
from tutor.words.i18n import t
from tutor.pack.loader import load_pack
from tutor.record.progress import FILE_NAME, SCHEMA_VERSION, ProgressStore

from app_support import MINI

FIXTURE = Path(__file__).parent / "fixtures" / "progress-v1.sqlite3"
DAY = 86400.0
#: Noon UTC, 1 March 2026: far from midnight in any time zone's local day for the day tests.
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc).timestamp()


class Clock:
    def __init__(self, now: float = T0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def pack():
    return load_pack(MINI)


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    import time

    time.tzset()
    s = ProgressStore.open(tmp_path)
    s.cards.clock = Clock()
    review.keep_first_meetings(s)  # as the app does (the store itself schedules nothing)
    yield s
    s.close()
    monkeypatch.delenv("TZ")
    time.tzset()


def _due_in(store, key) -> float:
    card = store.cards.get(*key)
    return (card["due"] - store.cards.clock.now) / DAY


WHICH = ("mini", "basics", "which-dim")
DOUBLE = ("mini", "exercises", "double")


def test_a_choice_answered_right_in_the_lesson_is_due_two_days_later(store, pack):
    store.answers.record_quiz(*WHICH, "0", True)
    card = store.cards.get(*WHICH)
    assert card["last_review"] == T0 and card["state"] == 2  # Review state: graduated at once
    assert _due_in(store, WHICH) == pytest.approx(2.0)  # FSRS-6 default: initial stability 2.3 days
    [log] = store.cards.reviews()
    assert (log["rating"], log["source"], log["first"]) == (review.GOOD, "lesson", 1)
    store.answers.record_quiz(*WHICH, "1", False)  # later tries in the lesson are not reviews
    assert len(store.cards.reviews()) == 1


def test_again_brings_a_card_back_the_same_day(store):
    store.answers.record_quiz(*WHICH, "1", False)
    assert (store.cards.get(*WHICH)["due"] - T0) == pytest.approx(600)  # the 10-minute learning step
    store.cards.clock.now += 600
    card = review.review(store, WHICH, review.AGAIN)
    assert card["due"] - store.cards.clock.now == pytest.approx(600)
    assert review.day_start(card["due"]) == review.day_start(T0)


def test_each_rating_schedules_as_fsrs_says(store):
    keys = {rating: ("p", "l", f"s{rating}") for rating in (1, 2, 3, 4)}
    for rating, key in keys.items():
        review.first_review(store, key, "choice", rating)
    minutes = {r: (store.cards.get(*k)["due"] - T0) / 60 for r, k in keys.items()}
    assert minutes[1] == pytest.approx(10) and minutes[2] == pytest.approx(15)
    assert minutes[3] / 1440 == pytest.approx(2) and minutes[4] / 1440 == pytest.approx(8)
    # a Good review on the day it is due takes it further out; Again brings it back in 10 minutes
    store.cards.clock.now = store.cards.get(*keys[3])["due"]
    good = review.review(store, keys[3], review.GOOD)
    assert (good["due"] - store.cards.clock.now) / DAY > 4
    again = review.review(store, keys[4], review.AGAIN)
    assert again["due"] - store.cards.clock.now == pytest.approx(600) and again["state"] == 3  # relearning


def test_exercises_rate_by_hints_and_solution(store):
    store.answers.record_attempt(*DOUBLE, "check", passed=False)
    store.steps.use_hint(*DOUBLE)
    store.answers.record_attempt(*DOUBLE, "check", passed=True, code="x")
    assert store.cards.reviews()[-1]["rating"] == review.HARD
    other = ("mini", "exercises", "other")
    store.steps.mark_solution_seen(*other)
    assert store.cards.reviews()[-1]["rating"] == review.AGAIN and store.cards.get(*other) is not None
    clean = ("mini", "exercises", "clean")
    store.answers.record_attempt(*clean, "check", passed=True)
    assert store.cards.reviews()[-1]["rating"] == review.GOOD


def test_quiz_ratings_and_what_quick_means():
    assert review.quiz_rating("choice", True, 1, 30.0) == review.GOOD
    assert review.quiz_rating("choice", True, 1, 10.0) == review.EASY
    assert review.quiz_rating("choice", True, 1, 10.5) == review.GOOD
    assert review.quiz_rating("predict", True, 1, 19.0) == review.EASY
    assert review.quiz_rating("choice", True, 2, 3.0) == review.HARD
    assert review.quiz_rating("choice", False, 1, 1.0) == review.AGAIN
    assert review.exercise_rating(0, False) == review.GOOD
    assert review.exercise_rating(2, False) == review.HARD
    assert review.exercise_rating(0, True) == review.AGAIN


def test_the_queue_holds_what_is_due_at_a_given_time(store, pack):
    store.answers.record_quiz(*WHICH, "0", True)
    store.answers.record_quiz("mini", "basics", "predict-sum", "4", False)
    review.sync(store, [pack])
    assert [d.item for d in review.queue(store, [pack], T0, 10)] == []
    soon = review.queue(store, [pack], T0 + 700, 10)
    assert [(d.item, d.kind, d.new) for d in soon] == [("basics/predict-sum", "predict", False)]
    later = review.queue(store, [pack], T0 + 30 * DAY, 10)
    assert [d.item for d in later] == ["basics/predict-sum", "basics/which-dim"]
    assert later[1].title == "Basics › Which numbers"


def test_a_changed_item_starts_again_as_new_with_a_notice(store, pack):
    store.answers.record_quiz(*WHICH, "0", True)
    assert review.sync(store, [pack]) == []
    quiz = pack.lessons[0].steps[2]
    changed_quiz = dataclasses.replace(quiz, question="In `(4x8 and 16x2)`, which numbers differ?")
    lesson = dataclasses.replace(pack.lessons[0], steps=[*pack.lessons[0].steps[:2], changed_quiz,
                                                         *pack.lessons[0].steps[3:]])
    changed = dataclasses.replace(pack, lessons=[lesson, *pack.lessons[1:]])
    store.cards.clock.now += DAY
    notices = review.sync(store, [changed])
    assert notices == ["mini: basics/which-dim changed since you learned it; it starts again as a new review card."]
    card = store.cards.get(*WHICH)
    assert card["last_review"] is None and card["generation"] == 1 and card["due"] == store.cards.clock.now
    assert [d.new for d in review.queue(store, [changed], store.cards.clock.now, 10)] == [True]
    assert len(store.cards.reviews()) == 1  # the old review is kept
    assert review.sync(store, [changed]) == []  # said once
    # a title or explanation change is not a change of the question
    retitled = dataclasses.replace(changed_quiz, title="Renamed")
    lesson = dataclasses.replace(lesson, steps=[*lesson.steps[:2], retitled, *lesson.steps[3:]])
    assert review.sync(store, [dataclasses.replace(changed, lessons=[lesson, *pack.lessons[1:]])]) == []


def test_an_item_gone_from_its_pack_is_retired_never_a_crash(store, pack):
    store.answers.record_quiz(*WHICH, "0", True)
    store.answers.record_quiz("mini", "basics", "predict-sum", "5", True)
    lesson = dataclasses.replace(pack.lessons[0], steps=[s for s in pack.lessons[0].steps if s.id != "which-dim"])
    smaller = dataclasses.replace(pack, lessons=[lesson, *pack.lessons[1:]])
    assert review.sync(store, [smaller]) == ["mini: basics/which-dim is no longer in its pack; its review card is retired."]
    assert [d.item for d in review.queue(store, [smaller], T0 + 30 * DAY, 10)] == ["basics/predict-sum"]
    assert store.cards.due_counts(["mini"], T0 + 30 * DAY, 10) == (1, 0)
    assert store.cards.get(*WHICH)["retired"] is not None
    assert review.sync(store, [pack]) == []  # it came back (a downgrade): live again, quietly
    assert store.cards.get(*WHICH)["retired"] is None


def test_new_cards_are_capped_per_day(store):
    for i in range(5):
        store.cards.put(review._new_card(("p", "l", f"s{i}"), "choice", T0))
    assert store.cards.due_counts(["p"], T0, 3) == (0, 3)
    for i in range(3):
        review.review(store, ("p", "l", f"s{i}"), review.GOOD)
    assert store.cards.due_counts(["p"], T0 + 60, 3) == (0, 0)  # three new ones today: that is the cap
    assert store.cards.due_counts(["p"], T0 + DAY, 3) == (0, 2)  # tomorrow the rest may come
    assert store.cards.new_allowance(T0, 0) == 0


def test_the_migration_from_the_current_release_keeps_every_row(tmp_path, pack):
    shutil.copy(FIXTURE, tmp_path / FILE_NAME)
    os.chmod(tmp_path / FILE_NAME, 0o644)  # as that release left it (issue 50)
    old = sqlite3.connect(tmp_path / FILE_NAME)
    tables = ("meta", "position", "steps", "drafts", "attempts", "solutions", "quiz")
    before = {t: sorted(old.execute(f"SELECT * FROM {t}").fetchall()) for t in tables}
    old.close()
    assert before["meta"] and before["quiz"] and before["solutions"]

    store = ProgressStore.open(tmp_path)
    try:
        # the one thing said: the file is made the learner's alone (tests/unit/test_private_data.py)
        assert store.storage.notice == t("progress.private", count=1, folder=tmp_path) and store.storage.persistent
        for table in tables:
            rows = sorted(store.storage._conn.execute(f"SELECT * FROM {table}").fetchall())
            if table == "meta":
                rows = [r for r in rows if r[0] != "schema_version"]
                expected = [r for r in before["meta"] if r[0] != "schema_version"]
            else:
                expected = before[table]
            assert rows == expected, table
        assert store.storage._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == (
            str(SCHEMA_VERSION),)
        assert store.drafts.get(*DOUBLE).endswith("# draft\n") and store.preferences.get("theme") == "light"
        # what was met before review existed becomes new cards, capped per day
        keys = sorted((c["pack"], c["lesson"], c["step"]) for c in store.cards.all())
        assert keys == [("gone-pack", "l1", "q1"), ("mini", "basics", "predict-sum"),
                        ("mini", "basics", "which-dim"), ("mini", "basics", "which-modes"),
                        ("mini", "basics", "why-shapes"), ("mini", "exercises", "double")]
        assert review.sync(store, [pack]) == []
        now = store.cards.clock()
        assert store.cards.due_counts(["mini"], now, 10) == (0, 5)
        assert store.cards.due_counts(["mini"], now, 2) == (0, 2)
        assert {d.kind for d in review.queue(store, [pack], now, 10)} == {"choice", "predict", "free", "exercise"}
    finally:
        store.close()
    again = ProgressStore.open(tmp_path)  # a second start migrates nothing again
    assert len(again.cards.all()) == 6 and again.storage.notice is None
    again.close()


def test_reset_of_a_pack_or_an_exercise_resets_its_cards(store):
    store.answers.record_quiz(*WHICH, "0", True)
    store.answers.record_attempt(*DOUBLE, "check", passed=True)
    store.answers.record_quiz("other", "l", "q", "0", True)
    store.reset("mini", step="double", lesson="exercises")
    assert store.cards.get(*DOUBLE) is None and store.cards.get(*WHICH) is not None
    store.reset("mini")
    assert store.cards.get(*WHICH) is None and store.cards.reviews(["mini"]) == []
    assert store.cards.get("other", "l", "q") is not None
    store.answers.record_attempt(*DOUBLE, "check", passed=True)  # met again after a reset: a first review again
    assert store.cards.reviews(["mini"])[0]["first"] == 1


def test_forecast_and_retention(store, pack):
    store.answers.record_quiz(*WHICH, "0", True)  # due in 2 days
    store.answers.record_quiz("mini", "basics", "predict-sum", "4", False)  # due today
    review.sync(store, [pack])
    counts = review.forecast(store, [pack], T0)
    assert len(counts) == 14 and counts[0] == 1 and counts[2] == 1 and sum(counts) == 2
    store.cards.clock.now = T0 + 2 * DAY
    review.review(store, WHICH, review.GOOD)
    review.review(store, ("mini", "basics", "predict-sum"), review.AGAIN)
    weeks = review.retention(store, [pack], store.cards.clock.now)
    assert weeks[-1] == (2, 1) and sum(n for n, _ in weeks) == 2  # first meetings do not count


def test_resetting_an_exercise_forgets_its_review_scratch_but_not_a_lookalike_lessons(store):
    store.answers.record_attempt(*DOUBLE, "check", passed=True)
    scratch = store.cards.scratch_key(*DOUBLE)
    assert scratch[1].startswith("review:") and scratch[1].endswith(":exercises")
    store.drafts.save(*scratch, "review code")
    other = ("mini", "review:1:exercises-two", "double")  # another lesson's scratch: kept
    store.drafts.save(*other, "other")
    store.reset("mini", step="double", lesson="exercises")
    assert store.drafts.get(*scratch) is None and store.drafts.get(*other) == "other"


def test_a_card_met_in_the_app_is_not_changed_for_the_shell(tmp_path):
    """The app reads packs from the cache, whose records are not yet full dataclasses; the shell
    reads the YAML. Both must see the same item, or every switch between them resets the card
    ("changed since you learned it") and throws its schedule away."""
    import subprocess
    import sys
    import textwrap

    from tutor.pack import packcache

    cache = packcache.cache_dir(tmp_path / "data")
    packcache.load(MINI, cache)  # warm, as after a first start
    code = textwrap.dedent(f"""
        from pathlib import Path
        from tutor.pack import packcache
        from tutor.record import spaced_review as review
        from tutor.record.progress import ProgressStore
        pack = packcache.load(Path({str(MINI)!r}), Path({str(cache)!r}))
        store = ProgressStore.open(Path({str(tmp_path / "data")!r}))
        review.keep_first_meetings(store)
        store.answers.record_attempt("mini", "exercises", "double", "check", passed=True)
        print(review.sync(store, [pack]))
        print(sorted((c["step"], c["content"]) for c in store.cards.all()))
        store.close()
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert len(eval(out.stdout.splitlines()[1])) == 1 and out.stdout.splitlines()[0] == "[]"
    store = ProgressStore.open(tmp_path / "data")
    try:
        assert review.sync(store, [load_pack(MINI)]) == []
        assert all(c["generation"] == 0 and c["last_review"] is not None for c in store.cards.all())
    finally:
        store.close()


def _with_double(pack, change):
    """``pack`` with its exercise 'double' passed through ``change``."""
    lesson = next(lesson for lesson in pack.lessons if lesson.id == "exercises")
    steps = [change(s) if s.id == "double" else s for s in lesson.steps]
    new = dataclasses.replace(lesson, steps=steps)
    return dataclasses.replace(pack, lessons=[new if ls.id == "exercises" else ls for ls in pack.lessons])


def test_rewording_a_checks_description_or_hint_keeps_the_card(store, pack):
    """What an exercise asks is its body, starter and what its checks assert; a check's description
    and hint are wording, like a quiz's explanations, and must not reset the learner's schedule."""
    store.answers.record_attempt(*DOUBLE, "check", passed=True)
    assert review.sync(store, [pack]) == []
    reworded = _with_double(pack, lambda s: dataclasses.replace(s, checks=[
        dataclasses.replace(c, description="doubles its input", hint="Two times x.") for c in s.checks]))
    assert review.sync(store, [reworded]) == []
    assert store.cards.get(*DOUBLE)["generation"] == 0 and store.cards.get(*DOUBLE)["last_review"] is not None
    # what a check asserts is the item: changing it still starts the card again
    stricter = _with_double(reworded, lambda s: dataclasses.replace(s, checks=[
        dataclasses.replace(c, rtol=0.0) for c in s.checks]))
    assert review.sync(store, [stricter]) == ["mini: exercises/double changed since you learned it; it starts "
                                              "again as a new review card."]


def test_a_card_hashed_by_an_earlier_release_is_kept_not_reset(store, pack):
    """Earlier releases hashed an exercise with its checks' wording, and the app (reading the pack
    cache) hashed a check by its repr: such a card is the same item, taken over silently."""
    import hashlib
    import json

    step = review.items(pack)[("exercises", "double")][2]
    plain = [review._plain(step.body), review._plain(step.starter)]
    old_ways = [
        [plain[0], plain[1], [review._plain(c) for c in step.checks]],
        [plain[0], plain[1], [repr(step.checks[0]), *[review._plain(c) for c in step.checks[1:]]]],
    ]
    for old in old_ways:
        store.reset("mini")
        store.answers.record_attempt(*DOUBLE, "check", passed=True)
        digest = hashlib.sha256(json.dumps(["exercise", old], sort_keys=True, ensure_ascii=False,
                                           default=str).encode()).hexdigest()[:16]
        card = store.cards.get(*DOUBLE)
        card["content"] = digest
        store.cards.put(card)
        assert review.sync(store, [pack]) == []
        card = store.cards.get(*DOUBLE)
        assert card["generation"] == 0 and card["content"] == review.content_hash(step)
