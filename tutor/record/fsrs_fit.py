"""Fit the learner's own FSRS parameters: run as ``python -m tutor.record.fsrs_fit`` in a
subprocess, never imported by the app or the command line (fsrs's optimizer imports torch,
pandas and tqdm; the UI process must never import torch).

Reads JSON from stdin: ``{"reviews": [[card_id, rating, at_seconds, duration_ms], ...]}``.
Writes JSON to stdout: ``{"parameters": [...21 floats], "counted": n, "before": {...},
"after": {...}}`` where before/after hold, for the default and the fitted parameters, the mean
recall FSRS predicted at the learner's own reviews (``predicted``), the share they actually
recalled (``actual``), and the log loss (``loss``; lower fits better).
"""

from __future__ import annotations

import json
import math
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fsrs import ReviewLog


def _logs(raw: list[list[Any]]) -> list[ReviewLog]:
    from fsrs import Rating, ReviewLog

    return [ReviewLog(card_id=int(card), rating=Rating(int(rating)),
                      review_datetime=datetime.fromtimestamp(float(at), timezone.utc),
                      review_duration=None if duration is None else int(duration))
            for card, rating, at, duration in raw]


def calibration(logs: list[ReviewLog], parameters: list[float]) -> dict[str, float]:
    """Replay every card's history under ``parameters``: at each review a day or more after the
    last one, what recall FSRS predicted and what happened."""
    from fsrs import Card, Rating, Scheduler

    scheduler = Scheduler(parameters=parameters, enable_fuzzing=False)
    by_card: dict[int, list[ReviewLog]] = {}
    for log in logs:
        by_card.setdefault(log.card_id, []).append(log)
    predicted, actual, loss, n = 0.0, 0.0, 0.0, 0
    for history in by_card.values():
        history.sort(key=lambda log: log.review_datetime)
        card = Card(card_id=history[0].card_id, due=history[0].review_datetime)
        for log in history:
            if card.last_review is not None and (log.review_datetime - card.last_review).days > 0:
                p = min(max(float(scheduler.get_card_retrievability(card, log.review_datetime)), 1e-6), 1 - 1e-6)
                y = 0.0 if log.rating == Rating.Again else 1.0
                predicted += p
                actual += y
                loss -= y * math.log(p) + (1 - y) * math.log(1 - p)
                n += 1
            card, _ = scheduler.review_card(card, log.rating, log.review_datetime)
    if not n:
        return {"predicted": 0.0, "actual": 0.0, "loss": 0.0, "n": 0}
    return {"predicted": predicted / n, "actual": actual / n, "loss": loss / n, "n": n}


def main() -> int:
    from fsrs import Optimizer
    from fsrs.scheduler import DEFAULT_PARAMETERS

    data = json.load(sys.stdin)
    logs = _logs(data["reviews"])
    fitted = [float(x) for x in Optimizer(logs).compute_optimal_parameters()]
    json.dump({"parameters": fitted, "before": calibration(logs, list(DEFAULT_PARAMETERS)),
               "after": calibration(logs, fitted)}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
