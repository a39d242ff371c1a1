"""`torch-tutor review --optimize`: fits FSRS's parameters to the learner's log in a subprocess
(the command's own process never imports torch), only once there are enough reviews."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from tutor.record import spaced_review as review
from tutor.record.progress import ProgressStore

DAY = 86400.0
T0 = 1_772_366_400.0  # 2026-03-01 12:00 UTC

CLI = ("import sys\nfrom tutor.cli.main import main\ncode = main(sys.argv[1:])\n"
       "assert 'torch' not in sys.modules, 'the command imported torch'\nsys.exit(code)\n")


def _log(store: ProgressStore, cards: int, reviews_each: int, seed: int = 7) -> None:
    """A learner who remembers a bit better than FSRS's defaults expect, over months."""
    rng = random.Random(seed)
    for c in range(cards):
        store.cards.put(review._new_card(("p", "l", f"s{c}"), "choice", T0))
        card = store.cards.get("p", "l", f"s{c}")
        at, interval = T0 + c * 3600, 1.0
        for _ in range(reviews_each):
            remembered = rng.random() < 0.95
            store.cards.log_review(card, review.GOOD if remembered else review.AGAIN, at, source="review", first=False)
            interval = interval * 2.5 if remembered else 1.0
            at += interval * DAY


def _run(data, *argv):
    return subprocess.run([sys.executable, "-c", CLI, "--data-dir", str(data), "review", "--optimize", *argv],
                          capture_output=True, text=True, timeout=1800)


def test_too_few_reviews_changes_nothing_and_says_how_many_are_needed(tmp_path):
    store = ProgressStore.open(tmp_path)
    _log(store, 10, 5)
    store.close()
    out = _run(tmp_path)
    assert out.returncode == 0, out.stderr
    assert "FSRS can learn from 40 of your reviews" in out.stdout and "needs 512" in out.stdout
    store = ProgressStore.open(tmp_path)
    assert store.preferences.get(review.PARAMETERS_KEY) is None
    store.close()


@pytest.mark.slow
def test_enough_reviews_fit_the_learners_parameters_in_a_subprocess(tmp_path):
    pytest.importorskip("pandas")
    pytest.importorskip("tqdm")
    store = ProgressStore.open(tmp_path)
    _log(store, 60, 10)
    store.close()
    out = _run(tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Fitting FSRS to 540 of your reviews" in out.stdout
    assert "Predicted recall at your reviews:" in out.stdout and "you actually recalled" in out.stdout
    store = ProgressStore.open(tmp_path)
    saved = store.preferences.get(review.PARAMETERS_KEY)
    assert "scheduled with your own parameters" in out.stdout  # this learner beats the defaults' guess
    fitted = json.loads(saved)
    assert len(fitted) == 21 and fitted != list(__import__("fsrs").scheduler.DEFAULT_PARAMETERS)
    assert review.scheduler(store).parameters == tuple(fitted)  # reviews now use them
    store.close()
