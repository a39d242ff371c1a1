"""Handing in from the command line, as a learner who works in their own editor does it (issue 27,
item 1): the pack named the way `list` finds it, the global options on either side of the command,
and a passing `torch-tutor check` recorded as a solve that `handin` and `progress` see."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tutor.core.scaffold import scaffold

RIGHT = "def bumped(t):\n    return t + 1\n"
WRONG = "def bumped(t):\n    t += 1\n    return t\n"


def tutor(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=cwd)


@pytest.fixture
def course(tmp_path: Path) -> dict[str, Path]:
    pack = tmp_path / "autograd-hooks"
    scaffold(pack, title="Autograd hooks")
    work = tmp_path / "work"
    work.mkdir()
    return {"pack": pack, "work": work, "data": tmp_path / "data"}


def _manifest(archive: Path) -> dict:
    with zipfile.ZipFile(archive) as zf:
        return json.loads(zf.read("manifest.json"))


@pytest.mark.parametrize("order", ["pack-before-command", "pack-after-command"])
def test_handin_finds_a_pack_given_with_pack_like_list_does(course: dict[str, Path], order: str) -> None:
    pack, work, data = course["pack"], course["work"], course["data"]
    listed = tutor("--data-dir", str(data), "--pack", str(pack), "list", cwd=work)
    assert "autograd-hooks" in listed.stdout
    (work / "add-to-copy.py").write_text(RIGHT)
    checked = tutor("--data-dir", str(data), "--pack", str(pack), "check", "add-to-copy", "add-to-copy.py",
                    cwd=work)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    if order == "pack-before-command":
        args = ["--data-dir", str(data), "--pack", str(pack), "handin", "autograd-hooks", "--learner", "heidi"]
    else:
        args = ["handin", "--pack", str(pack), "autograd-hooks", "--learner", "heidi", "--data-dir", str(data)]
    done = tutor(*args, cwd=work)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert "wrote heidi-autograd-hooks.handin.zip: 1 exercises (1 solved)" in done.stdout
    manifest = _manifest(work / "heidi-autograd-hooks.handin.zip")
    assert manifest["learner"] == "heidi" and manifest["pack"] == "autograd-hooks"
    assert manifest["exercises"]["add-to-copy"]["solved"] is True


def test_a_passing_check_is_a_solve_that_handin_and_progress_see(course: dict[str, Path]) -> None:
    pack, work, data = course["pack"], course["work"], course["data"]
    base = ["--data-dir", str(data), "--pack", str(pack)]
    mine = work / "add-to-copy.py"
    mine.write_text(WRONG)
    failed = tutor(*base, "check", "add-to-copy", str(mine), cwd=work)
    assert failed.returncode == 1
    progress = tutor(*base, "progress", "--json", cwd=work)
    assert progress.returncode == 0, progress.stderr
    nothing = tutor(*base, "handin", "autograd-hooks", "--learner", "heidi", cwd=work)
    assert nothing.returncode == 2 and "nothing to hand in" in nothing.stderr  # a failing check is no solve

    mine.write_text(RIGHT)
    passed = tutor(*base, "check", "add-to-copy", str(mine), cwd=work)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "recorded as solved" in passed.stderr and "handin" in passed.stderr
    mine.write_text("# my later experiment, broken\n")  # what is handed in is the code that passed

    progress = tutor(*base, "progress", "--json", cwd=work)
    entry = next(p for p in json.loads(progress.stdout)["packs"] if p["pack"] == "autograd-hooks")
    assert sum(lesson["exercises_solved"] for lesson in entry["lessons"]) == 1
    assert entry["review"]["cards"] == 1  # the first pass is the exercise's first review, as in the app
    text = tutor(*base, "progress", cwd=work)
    assert "No progress yet" not in text.stdout and "1/1 exercises" in text.stdout

    done = tutor(*base, "handin", "autograd-hooks", "--learner", "heidi", cwd=work)
    assert done.returncode == 0, done.stderr
    archive = work / "heidi-autograd-hooks.handin.zip"
    assert _manifest(archive)["exercises"]["add-to-copy"]["solved"] is True
    with zipfile.ZipFile(archive) as zf:
        assert zf.read("exercises/add-to-copy.py").decode() == RIGHT

    # and `grade` gives it the points, as it does for an archive written from the app
    subs = work / "class"
    (subs / "heidi").mkdir(parents=True)
    archive.rename(subs / "heidi" / archive.name)
    graded = tutor(*base, "grade", str(pack), str(subs), "--csv", str(work / "g.csv"), "--unisolated",
                   "--no-cache", cwd=work)
    assert graded.returncode == 0, graded.stderr
    import csv

    rows = {r["exercise"]: r for r in csv.DictReader((work / "g.csv").open())}
    assert rows["add-to-copy"]["status"] == "passed"


def test_check_of_the_unchanged_starter_is_not_an_attempt(course: dict[str, Path]) -> None:
    """As in the app: checking the starter as given is a look at the task, not a try."""
    pack, work, data = course["pack"], course["work"], course["data"]
    mine = work / "add-to-copy.py"
    from tutor.core.loader import load_pack

    mine.write_text(load_pack(pack).exercises()[0][1].starter)
    tutor("--data-dir", str(data), "--pack", str(pack), "check", "add-to-copy", str(mine), cwd=work)
    from tutor.core.progress import ProgressStore

    store = ProgressStore.open(data)
    try:
        assert store.steps.of_pack("autograd-hooks") == {}
    finally:
        store.close()
