"""What a gradebook reads from `grade`, parsed as a gradebook parses it (csv, json), for a class
whose numbers need rounding (issue 27, items 2, 3, 5 and 6):

- points are rounded half up to POINT_PLACES (2) places once, after partial credit and the late
  penalty, and every output (CSV, JSON, totals, feedback, Gradescope) carries the same numbers;
  a learner's total is the sum of their rounded rows;
- a learner who handed in loose files has the quiz rows everyone has, 'missing' and 0 (only an
  archive carries quiz answers): every learner's maximum is the pack's, by every route (issue 51),
  and the summary says once why those rows are 0;
- hints follow failures only: never on a skipped, error or timeout check, unless the author wrote
  a hint for that status;
- an exercise whose every check raised is `error`, not `failed`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from tests.instructor.handins import handin_at
from tutor.pack.scaffold import scaffold

WRONG = "def bumped(t):\n    t += 1\n    return t\n"  # passes 1 check of 3
RIGHT = "def bumped(t):\n    return t + 1\n"
RAISES = "def bumped(t):\n    return t.no_such_method()\n"  # every check raises AttributeError
BROKEN = "def bumped(t)\n    return t + 1\n"  # a syntax error: it never runs, so every check is skipped
FAILED_HINT = "Compare with t + 1 on a fresh tensor."
ERROR_HINT = "Run your code first: does `bumped` exist and return a tensor?"  # the scaffold's status hint


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def make_pack(folder: Path) -> Path:
    """The scaffold's pack, 20% a day late; two exercises worth 1 point (3 checks each, so a third
    of a point per check); the choice quiz worth 1; `values` gets a hint for failures."""
    scaffold(folder, title="Numbers")
    header = folder / "pack.yaml"
    header.write_text(header.read_text().replace("languages: [en]\n",
                                                 "languages: [en]\nlate_penalty: {per_day: 20}\n"))
    lesson = folder / "01-first-lesson.yaml"
    text = lesson.read_text()
    text = text.replace("        close_to: x + 1\n", f"        close_to: x + 1\n        hint: \"{FAILED_HINT}\"\n")
    start = text.index("  - id: add-to-copy")
    exercise = text[start:]
    text = text[:start] + exercise + exercise.replace("id: add-to-copy", "id: add-two")
    text = text.replace("    style: choice\n", "    style: choice\n    points: 1\n")
    lesson.write_text(text)
    return folder


def tutor(*args: str, base: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TORCH_TUTOR_DATA_DIR": str(base / "data"), "TORCH_TUTOR_CONFIG_DIR": str(base / "c")}
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True, env=env,
                          timeout=600)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("numbers")
    pack = make_pack(base / "pack")
    subs = base / "subs"
    for name in ("bob", "eve", "sam"):
        (subs / name).mkdir(parents=True)
    # bob: loose files, one day late (20%): 1/3 x 0.8 = 0.2667 -> 0.27 on each exercise; total 0.54
    for eid in ("add-to-copy", "add-two"):
        (subs / "bob" / f"{eid}.py").write_text(WRONG)
        os.utime(subs / "bob" / f"{eid}.py", (_epoch("2026-06-01T12:00:00+00:00"),) * 2)
    # eve: an archive, on time: 1/3 = 0.33 and every check raising; the quiz right: 0.33 + 0 + 1 = 1.33
    handin_at(subs / "eve" / "eve.handin.zip", "eve", "2026-05-30T00:00:00+0000",
              {"add-to-copy": WRONG, "add-two": RAISES},
              {"first-lesson/which-is-a-view": {"answer": "0", "correct": True}})
    # sam: loose files, on time: code that never runs, and a right one
    (subs / "sam" / "add-to-copy.py").write_text(BROKEN)
    (subs / "sam" / "add-two.py").write_text(RIGHT)
    for name in ("add-to-copy", "add-two"):
        os.utime(subs / "sam" / f"{name}.py", (_epoch("2026-05-30T00:00:00+00:00"),) * 2)
    out = base / "out"
    out.mkdir()
    done = tutor("grade", str(pack), str(subs), "--deadline", "2026-06-01T00:00:00+00:00", "--csv",
                 str(out / "all.csv"), "--totals", str(out / "totals.csv"), "--feedback", str(out / "feedback"),
                 "--json", str(out / "all.json"), "--unisolated", "--no-cache", base=base)
    # the same learners one at a time, as Gradescope's run_autograder grades them
    gradescope = {}
    for name in ("bob", "eve"):
        results = out / f"{name}-results.json"
        ran = tutor("autograder", str(pack), "--run", str(subs / name), "--results", str(results), base=base)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        gradescope[name] = json.loads(results.read_text())
    return {"done": done, "out": out, "gradescope": gradescope}


def _csv_rows(graded) -> dict[tuple[str, str], dict[str, str]]:
    return {(r["learner"], r["exercise"]): r
            for r in csv.DictReader(io.StringIO((graded["out"] / "all.csv").read_text()))}


def test_every_output_carries_the_same_rounded_points(graded):
    assert graded["done"].returncode == 0, graded["done"].stderr
    rows = _csv_rows(graded)
    points = {key: float(r["points"]) for key, r in rows.items()}
    assert points == {("bob", "add-to-copy"): 0.27, ("bob", "add-two"): 0.27,
                      ("eve", "add-to-copy"): 0.33, ("eve", "add-two"): 0.0,
                      ("eve", "first-lesson/which-is-a-view"): 1.0, ("bob", "first-lesson/which-is-a-view"): 0.0,
                      ("sam", "add-to-copy"): 0.0, ("sam", "add-two"): 1.0, ("sam", "first-lesson/which-is-a-view"): 0.0}
    data = json.loads((graded["out"] / "all.json").read_text())
    assert {(r["learner"], r["exercise"]): r["points"] for r in data["rows"]} == points
    assert data["summary"]["point_places"] == 2
    totals = {r["Student"]: r for r in csv.DictReader(io.StringIO((graded["out"] / "totals.csv").read_text()))}
    # the total is the sum of the rounded rows: bob 0.27 + 0.27 = 0.54 (not 0.5333 rounded to 0.53)
    assert {name: float(r["pack (3 points)"]) for name, r in totals.items()} == {"bob": 0.54, "eve": 1.33, "sam": 1.0}
    for name, total in (("bob", "0.54"), ("eve", "1.33"), ("sam", "1")):
        feedback = (graded["out"] / "feedback" / f"{name}.md").read_text()
        assert re.search(rf"\*\*{re.escape(total)} of \d+ points\.\*\*", feedback), feedback[:300]
    bob = (graded["out"] / "feedback" / "bob.md").read_text()
    assert bob.count("0.27 of 1 points") == 2 and "0.2666" not in bob and "0.2667" not in bob
    # Gradescope applies no deadline (its own late policy does): bob's rows are 1/3 -> 0.33 each there
    expected = {"bob": {"add-to-copy": 0.33, "add-two": 0.33, "first-lesson/which-is-a-view": 0.0},
                "eve": {"add-to-copy": 0.33, "add-two": 0.0, "first-lesson/which-is-a-view": 1.0}}
    for name, tests in expected.items():
        results = graded["gradescope"][name]
        assert {t["name"]: t["score"] for t in results["tests"] if "score" in t} == tests
        assert results["score"] == round(sum(tests.values()), 2)
        assert f"{results['score']:g} of " in results["output"]


def test_a_learners_maximum_is_the_same_whatever_route_they_handed_in_by(graded):
    """Issue 51: under Gradescope loose files were scored out of 2 and an archive out of 3, and
    under `grade` a learner of loose files had no quiz rows. Every learner now has every graded
    quiz's row; one with no answer is 'missing', 0 of its points, and the row says why."""
    from tutor.grading.gradebook import NO_ARCHIVE

    rows = _csv_rows(graded)
    for name in ("bob", "sam"):  # loose files carry no quiz answer: 0 of the quiz's point, said so
        row = rows[(name, "first-lesson/which-is-a-view")]
        assert (row["status"], row["points"], row["max_points"]) == ("missing", "0", "1")
        assert row["message"] == NO_ARCHIVE and "torch-tutor handin" in row["message"]
    assert rows[("eve", "first-lesson/which-is-a-view")]["status"] == "passed"
    totals = {r["Student"]: r["Points Possible"]
              for r in csv.DictReader(io.StringIO((graded["out"] / "totals.csv").read_text()))}
    assert totals == {"bob": "3", "eve": "3", "sam": "3"}
    assert "**0.54 of 3 points.**" in (graded["out"] / "feedback" / "bob.md").read_text()
    stderr = graded["done"].stderr
    note = [line for line in stderr.splitlines() if "quiz" in line and "archive" in line]
    assert len(note) == 1, stderr  # said once, in the summary
    assert "2 learners" in note[0] and "0 of 1 point, out of the same maximum of 3" in note[0]
    summary = json.loads((graded["out"] / "all.json").read_text())["summary"]
    assert summary["without_quiz_answers"] == {"learners": 2, "quiz_points": 1.0,
                                               "note": summary["without_quiz_answers"]["note"]}
    bob = graded["gradescope"]["bob"]
    assert [t["name"] for t in bob["tests"]] == ["add-to-copy", "add-two", "first-lesson/which-is-a-view"]
    assert [t["max_score"] for t in bob["tests"]] == [1, 1, 1]
    assert "0.66 of 3 points" in bob["output"] and "No quiz answer" in bob["output"]
    assert "1.33 of 3 points" in graded["gradescope"]["eve"]["output"]
    assert "quiz" not in graded["gradescope"]["eve"]["output"].lower()


def test_hints_follow_failures_only(graded):
    data = json.loads((graded["out"] / "all.json").read_text())
    checks = {(r["learner"], r["exercise"]): {c["id"]: c for c in r["checks"]} for r in data["rows"]}
    # failed: the failure hint
    assert checks[("bob", "add-to-copy")]["caller-unchanged"]["status"] == "failed"
    assert checks[("bob", "add-to-copy")]["caller-unchanged"]["hint"].startswith("`t += 1` writes")
    # error: only the hint written for the error status
    eve = checks[("eve", "add-two")]
    assert {c["status"] for c in eve.values()} == {"error"}
    assert eve["values"]["hint"] is None and eve["new-memory"]["hint"] is None
    assert eve["caller-unchanged"]["hint"] == ERROR_HINT
    # skipped (the code never ran): no hint at all
    sam = checks[("sam", "add-to-copy")]
    assert {c["status"] for c in sam.values()} == {"skipped"} and all(c["hint"] is None for c in sam.values())
    feedback = (graded["out"] / "feedback" / "sam.md").read_text()
    assert "Hint" not in feedback
    eve_feedback = (graded["out"] / "feedback" / "eve.md").read_text()
    assert eve_feedback.count("Hint:") == 2  # add-to-copy's failed caller-unchanged, add-two's error hint
    assert FAILED_HINT not in eve_feedback.split("## add-two")[1]
    out = next(t["output"] for t in graded["gradescope"]["eve"]["tests"] if t["name"] == "add-two")
    assert FAILED_HINT not in out and out.count("hint:") == 1


def test_every_check_raising_is_an_error_row(graded):
    rows = _csv_rows(graded)
    assert rows[("eve", "add-two")]["status"] == "error"
    assert rows[("eve", "add-to-copy")]["status"] == "failed"
    out = next(t for t in graded["gradescope"]["eve"]["tests"] if t["name"] == "add-two")
    assert out["status"] == "failed" and out["output"].count("ERROR") == 3


def test_points_round_half_up_to_two_places_on_their_decimal_form():
    from tutor.grading.gradebook import POINT_PLACES, round_points

    assert POINT_PLACES == 2
    assert [round_points(v) for v in (0.8 / 3, 1 / 3, 0.125, 2.675, 1.005, 4.0, 0.0, -0.0)] == \
        [0.27, 0.33, 0.13, 2.68, 1.01, 4.0, 0.0, 0.0]
    assert str(round_points(-0.0)) == "0.0"
