"""An exercise built on the learner's own earlier answer (issue 34, item 4): `uses: [checkerboard]`
runs the learner's `checkerboard` before their `inverted`, in the runner only, wherever the code is
checked: the app's editor drafts, `torch-tutor check` (the file beside), `grade` (the same
learner's hand-in), `validate` (the reference solutions). A missing or broken earlier answer is
the one thing the report asks for, and an earlier answer can never change what a check computes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tutor.pack.loader import load_pack
from tutor.pack.problems import PackError
from tutor.grading.exercise import check_exercise

PACK = Path(__file__).resolve().parents[2] / "examples" / "tensor-puzzles"
RIGHT = "def checkerboard(n):\n    return (arange(n)[:, None] + arange(n)[None, :]) % 2\n"
WRONG = "def checkerboard(n):\n    return (arange(n)[:, None] * 0 + arange(n)[None, :] * 0)\n"
INVERTED = "def inverted(n):\n    return where(checkerboard(n) == 0, 1, 0)\n"


@pytest.fixture(scope="module")
def pack():
    return load_pack(PACK)


@pytest.fixture(scope="module")
def inverted(pack):
    return pack.find_exercise("inverted")[1]


def statuses(report) -> dict[str, str]:
    return {c.id: c.status for c in report.checks}


def test_the_pack_says_what_runs_first(pack, inverted):
    assert [ex.id for _lesson, ex in pack.used_by(inverted)] == ["checkerboard"]
    assert pack.used_by(pack.find_exercise("checkerboard")[1]) == []


def test_the_learners_own_earlier_answer_runs_first(sandbox, inverted):
    right = check_exercise(sandbox, inverted, INVERTED, uses=[("checkerboard", RIGHT)])
    assert right.passed, [(c.id, c.status, c.message) for c in right.checks]
    # the same `inverted` on a wrong checkerboard of theirs is wrong too: it is their answer that ran
    wrong = check_exercise(sandbox, inverted, INVERTED, uses=[("checkerboard", WRONG)])
    assert statuses(wrong) == {"rules": "passed", "values": "failed"} and wrong.cause is None


def test_a_missing_or_broken_earlier_answer_is_the_one_thing_asked_for(sandbox, inverted):
    missing = check_exercise(sandbox, inverted, INVERTED, uses=[("checkerboard", None)])
    assert not missing.passed
    assert missing.cause == ("this exercise builds on your answers to earlier exercises, and these are not there "
                             "yet: checkerboard; write them first (or define what they define here)")
    assert statuses(missing)["values"] == "skipped"
    # defined here instead: the missing answer is not needed
    inline = check_exercise(sandbox, inverted, RIGHT + INVERTED, uses=[("checkerboard", None)])
    assert statuses(inline)["values"] == "passed" and inline.cause is None

    broken = check_exercise(sandbox, inverted, INVERTED, uses=[("checkerboard", "def checkerboard(n):\n    return (\n")])
    assert broken.cause is not None and broken.cause.startswith(
        "your answer to 'checkerboard', which this exercise builds on, does not run: SyntaxError in checkerboard.py")
    raising = check_exercise(sandbox, inverted, INVERTED, uses=[("checkerboard", "x = 1\nundefined_name\n")])
    assert raising.cause == ("your answer to 'checkerboard', which this exercise builds on, does not run: "
                             "NameError in checkerboard.py at line 2: name 'undefined_name' is not defined")


@pytest.mark.both_modes  # an attack on what the checks compute: the trust boundary
def test_an_earlier_answer_cannot_change_what_the_checks_compute(sandbox, inverted):
    """The checks run the pack's prelude by themselves (its names win) and never run an earlier
    answer: one that redefines the pack's `spec_checkerboard` so that the starter's `inverted`
    (returns checkerboard(n) unchanged) would match `1 - spec_checkerboard(n)` fails all the same."""
    forged = RIGHT + "def spec_checkerboard(n):\n    return 1 - checkerboard(n)\n"
    starter = "def inverted(n):\n    return checkerboard(n)\n"
    report = check_exercise(sandbox, inverted, starter, uses=[("checkerboard", forged)])
    assert statuses(report)["values"] == "failed"


def test_uses_names_an_exercise_before_this_one(tmp_path):
    folder = tmp_path / "pack"
    folder.mkdir()
    (folder / "pack.yaml").write_text((PACK / "pack.yaml").read_text())
    (folder / "prelude.py").write_text((PACK / "prelude.py").read_text())
    text = (PACK / "puzzles.yaml").read_text()
    cases = {
        "uses: [checkerbord]": "'uses' names 'checkerbord', which is not an exercise before this one in the pack "
                               "(did you mean 'checkerboard'?)",
        "uses: [inverted]": "an exercise cannot use its own answer",
    }
    for wrong, message in cases.items():
        (folder / "puzzles.yaml").write_text(text.replace("uses: [checkerboard]", wrong))
        with pytest.raises(PackError) as caught:
            load_pack(folder)
        found = [str(p) for p in caught.value.problems]
        assert any(p.endswith(message) and "puzzles.yaml:" in p for p in found), found
    # a later exercise is not "before": checkerboard using inverted
    later = text.replace("uses: [checkerboard]", "uses: []").replace(
        "  - id: checkerboard\n    kind: exercise\n", "  - id: checkerboard\n    kind: exercise\n    uses: [inverted]\n")
    (folder / "puzzles.yaml").write_text(later)
    with pytest.raises(PackError) as caught:
        load_pack(folder)
    assert any("'uses' names 'inverted', which is not an exercise before this one in the pack; "
               "no exercise comes before it" in str(p) for p in caught.value.problems)


def test_check_takes_the_answer_beside_the_file(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "inverted.py").write_text(INVERTED)
    (work / "checkerboard.py").write_text(RIGHT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    beside = subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(tmp_path / "data"), "--pack", str(PACK),
                             "check", "inverted", "inverted.py"],
                            capture_output=True, text=True, timeout=300, env=env, cwd=work)
    assert beside.returncode == 0, beside.stdout + beside.stderr


def test_grade_builds_on_the_same_learners_hand_in(tmp_path, pack, fork_sandbox):
    from tutor.grading.gradebook import collect, grade_all

    for learner, files in {"ann": {"checkerboard": RIGHT, "inverted": INVERTED},
                           "bo": {"checkerboard": WRONG, "inverted": INVERTED},
                           "cy": {"inverted": INVERTED}}.items():
        (tmp_path / learner).mkdir()
        for name, code in files.items():
            (tmp_path / learner / f"{name}.py").write_text(code)
    rows = {row.learner: row for row in grade_all(pack, collect(pack, tmp_path).submissions, fork_sandbox)
            if row.exercise == "inverted"}
    assert rows["ann"].passed
    assert not rows["bo"].passed and "not there yet" not in rows["bo"].message  # bo's own wrong checkerboard
    assert not rows["cy"].passed and "not there yet: checkerboard" in rows["cy"].message
