"""Late penalties (only when the pack declares one) and predict quizzes worth points, graded from
hand-ins with a real sandbox, against expectations computed by hand."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from tests.instructor.handins import handin_at
from tutor.pack.models import LatePenalty
from tutor.pack.scaffold import scaffold
from tutor.grading.gradebook import late_penalty_percent

RIGHT = "def bumped(t):\n    return t + 1\n"
WRONG = "def bumped(t):\n    t += 1\n    return t\n"
DAY = 86400


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def make_pack(folder: Path) -> Path:
    """The scaffold's pack: 10% a day late (at most 25%) for the pack; add-to-copy worth 4 with its
    own deadline; a second exercise add-two worth 2 that costs 25% a day; the choice quiz worth 1
    and the predict quiz (it prints [0, 10, 2]) worth 2."""
    scaffold(folder, title="Late test")
    header = folder / "pack.yaml"
    header.write_text(header.read_text().replace("languages: [en]\n",
                                                 "languages: [en]\nlate_penalty: {per_day: 10, max: 25}\n"))
    lesson = folder / "01-first-lesson.yaml"
    text = lesson.read_text()
    start = text.index("  - id: add-to-copy")
    exercise = text[start:]
    first = exercise.replace("    kind: exercise\n", "    kind: exercise\n    points: 4\n"
                             "    deadline: '2026-04-01T00:00:00+00:00'\n")
    second = exercise.replace("id: add-to-copy", "id: add-two").replace(
        "    kind: exercise\n", "    kind: exercise\n    points: 2\n    late_penalty: {per_day: 25}\n")
    text = text[:start] + first + second
    text = text.replace("    style: choice\n", "    style: choice\n    points: 1\n")
    text = text.replace("    style: predict\n", "    style: predict\n    points: 2\n")
    lesson.write_text(text)
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("late")
    pack = make_pack(base / "pack")
    subs = base / "subs"
    (subs / "ann").mkdir(parents=True)
    (subs / "ann" / "add-to-copy.py").write_text(RIGHT)  # 1.5 days after its own deadline: 2 days
    os.utime(subs / "ann" / "add-to-copy.py", (_epoch("2026-04-02T12:00:00+00:00"),) * 2)
    (subs / "ann" / "add-two.py").write_text(WRONG)  # one second late: a whole day
    os.utime(subs / "ann" / "add-two.py", (_epoch("2026-06-01T00:00:01+00:00"),) * 2)
    handin_at(subs / "ben.handin.zip", "ben", "2026-06-03T00:00:00+0000",  # exactly two days late
           {"add-to-copy": RIGHT, "add-two": RIGHT},
           {"first-lesson/predict-view": {"answer": "[0, 10, 2]\n", "correct": True},
            "first-lesson/which-is-a-view": {"answer": "0", "correct": True}})
    # cat's archive claims her wrong answers were right: the verdicts come from the pack, not the archive
    handin_at(subs / "cat.handin.zip", "cat", "2026-03-01T00:00:00+0000", {"add-to-copy": WRONG},
           {"first-lesson/predict-view": {"answer": "[0, 1, 2]", "correct": True},
            "first-lesson/which-is-a-view": {"answer": "1", "correct": True}})
    out = base / "out"
    out.mkdir()
    env = {**os.environ, "TORCH_TUTOR_DATA_DIR": str(base / "data"), "TORCH_TUTOR_CONFIG_DIR": str(base / "c")}
    done = subprocess.run([sys.executable, "-m", "tutor", "grade", str(pack), str(subs), "--deadline",
                           "2026-06-01T00:00:00+00:00", "--csv", str(out / "all.csv"), "--totals",
                           str(out / "totals.csv"), "--feedback", str(out / "feedback"), "--json",
                           str(out / "all.json")], capture_output=True, text=True, env=env, timeout=600)
    return {"done": done, "out": out}


def test_late_penalty_percent_by_started_day():
    ten = LatePenalty(per_day=10, max=25)
    assert late_penalty_percent(0, ten) == 0 and late_penalty_percent(-5, ten) == 0
    assert late_penalty_percent(1, ten) == 10 and late_penalty_percent(DAY, ten) == 10
    assert late_penalty_percent(DAY + 1, ten) == 20
    assert late_penalty_percent(30 * DAY, ten) == 25  # capped
    assert late_penalty_percent(5 * DAY, LatePenalty(per_day=30)) == 100


def test_points_after_penalties_and_quizzes(graded):
    assert graded["done"].returncode == 0, graded["done"].stderr
    got = {(r["learner"], r["exercise"]): (r["status"], r["points"], r["max_points"], r["late"], r["late_penalty"])
           for r in csv.DictReader(io.StringIO((graded["out"] / "all.csv").read_text()))}
    assert got == {
        # 2 started days x 10% of 4 points: 3.2
        ("ann", "add-to-copy"): ("passed", "3.2", "4", "true", "20"),
        # 1 of 3 checks of 2 points is 0.6667; add-two's own 25% a day for 1 day: 0.5
        ("ann", "add-two"): ("failed", "0.5", "2", "true", "25"),
        # ann handed in loose files, which carry no quiz answers: 0 of each quiz's points, out of the same 9
        ("ann", "first-lesson/which-is-a-view"): ("missing", "0", "1", "", "0"),
        ("ann", "first-lesson/predict-view"): ("missing", "0", "2", "", "0"),
        # 63 days late, capped at the pack's 25%: 3
        ("ben", "add-to-copy"): ("passed", "3", "4", "true", "25"),
        # 2 days x 25% (add-two's own penalty, no cap given): 1
        ("ben", "add-two"): ("passed", "1", "2", "true", "50"),
        # quizzes take the pack's penalty: 2 days x 10%
        ("ben", "first-lesson/which-is-a-view"): ("passed", "0.8", "1", "true", "20"),
        ("ben", "first-lesson/predict-view"): ("passed", "1.6", "2", "true", "20"),
        # on time: 1 of 3 checks of 4 points; wrong answers earn nothing whatever the archive says
        ("cat", "add-to-copy"): ("failed", "1.33", "4", "false", "0"),
        ("cat", "add-two"): ("missing", "0", "2", "", "0"),
        ("cat", "first-lesson/which-is-a-view"): ("failed", "0", "1", "false", "0"),
        ("cat", "first-lesson/predict-view"): ("failed", "0", "2", "false", "0"),
    }


def test_the_summary_line_counts_quiz_answers_apart_from_file_problems(graded):
    # 5 exercise runs; ben's and cat's 2 quiz answers each; cat's add-two and ann's 2 quizzes missing
    assert "4 quiz answers marked, 3 not run (file problems)" in graded["done"].stderr


def test_totals_and_feedback_after_penalties(graded):
    data = list(csv.reader(io.StringIO((graded["out"] / "totals.csv").read_text())))
    assert data[0][3] == "pack (9 points)"
    # ann 3.2 + 0.5 of 9 (no quiz answered); ben 3 + 1 + 0.8 + 1.6; cat 4/3, rounded
    assert [(r[0], r[3], r[4]) for r in data[1:]] == [("ann", "3.7", "9"), ("ben", "6.4", "9"),
                                                      ("cat", "1.33", "9")]
    ben = (graded["out"] / "feedback" / "ben.md").read_text()
    assert "(late: 50% of the points taken)" in ben and "**6.4 of 9 points.**" in ben
    summary = json.loads((graded["out"] / "all.json").read_text())["summary"]
    assert summary["max_points"] == 9 and summary["late_penalty"] == {"per_day": 10.0, "max": 25.0}


def test_a_hostile_prediction_in_a_handin_is_judged_at_once():
    """A prediction is text from a learner's archive, judged in the grader's own process: an answer
    built to make the exception-name pattern backtrack (it took minutes at 2,000 spaces) is judged
    like any other wrong answer, in well under a second."""
    import signal
    import time

    from tutor.pack.models import PredictQuiz
    from tutor.grading.gradebook import PredictTruth, Submission, _quiz_row

    quiz = PredictQuiz(id="p", kind="quiz", question="q", style="predict", code="raise RuntimeError", points=1,
                       raises="RuntimeError")
    truth = PredictTruth(raised="RuntimeError")

    def too_slow(_signum, _frame):
        raise TimeoutError("judging one prediction took more than 20 s")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(20)
    try:
        started = time.perf_counter()
        for answer in ("it" + " " * 200_000 + ":", "it" + " \t" * 100_000 + "raises" + " " * 100_000 + "!"):
            row = _quiz_row(Submission("eve", "l/p", "eve.handin.zip", answer=answer), quiz, truth)
            assert (row.status, row.points) == ("failed", 0.0)
        right = _quiz_row(Submission("eve", "l/p", "x", answer="it  raises   a RuntimeError: boom"), quiz, truth)
        assert (right.status, right.points) == ("passed", 1.0)
        assert time.perf_counter() - started < 5
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
