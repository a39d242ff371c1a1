"""What the learner just did, as typed messages: published by the progress parts after the
write, heard by whoever subscribed (the app turns a first graded meeting into a review card;
the review screen rates what happened under its scratch key).

A subscriber's bug never undoes or hides what was recorded: it is reported on stderr and the
other subscribers still hear the message.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable, Union

#: (pack, lesson, step): where something was recorded.
Key = tuple[str, str, str]


@dataclass(frozen=True)
class HintShown:
    """One more hint of a step was shown; ``hints``: how many it has used now."""

    key: Key
    hints: int


@dataclass(frozen=True)
class SolutionShown:
    """A step's solution was shown; ``solved``: whether the step was solved before that."""

    key: Key
    solved: bool


@dataclass(frozen=True)
class CheckRecorded:
    """A Check of a step's code ran; for one that passed, the hints used and whether the
    solution had been seen (the step's state after the check was recorded)."""

    key: Key
    passed: bool
    hints_used: int = 0
    solution_seen: bool = False


@dataclass(frozen=True)
class QuizAnswered:
    """A quiz answer was recorded: ``correct`` None for an answer not graded (yet); ``tries``
    counts the answers to this step so far; ``rating`` the learner's own 1-4 (Again, Hard,
    Good, Easy) for a free answer they graded themselves, else None."""

    key: Key
    correct: bool | None
    tries: int
    rating: int | None = None


Recorded = Union[HintShown, SolutionShown, CheckRecorded, QuizAnswered]
Subscriber = Callable[[Recorded], None]


class Events:
    """The progress parts publish here; the app and its screens subscribe."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)

    def __contains__(self, subscriber: object) -> bool:
        return subscriber in self._subscribers

    def publish(self, message: Recorded) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber(message)
            except Exception as exc:  # what was recorded stays recorded; the subscriber's bug is shown
                print(f"torch-tutor: a progress listener failed: {type(exc).__name__}: {exc}", file=sys.stderr)
