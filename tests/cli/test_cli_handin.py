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

from tutor.pack.scaffold import scaffold

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
    assert "wrote heidi-autograd-hooks.handin.zip: 1 of 1 exercises (1 solved)" in done.stdout
    manifest = _manifest(work / "heidi-autograd-hooks.handin.zip")
    assert manifest["learner"] == "heidi" and manifest["pack"] == "autograd-hooks"
    assert manifest["exercises"]["add-to-copy"]["solved"] is True


def test_a_passing_check_is_a_solve_that_handin_and_progress_see(course: dict[str, Path]) -> None:
    pack, work, data = course["pack"], course["work"], course["data"]
    base = ["--data-dir", str(data), "--pack", str(pack)]
    mine = work / "add-to-copy.py"
    mine.write_text(WRONG.replace("t += 1", "t.add_(1)"))  # not the starter: a try
    failed = tutor(*base, "check", "add-to-copy", str(mine), cwd=work)
    assert failed.returncode == 1
    progress = tutor(*base, "progress", "--json", cwd=work)
    assert progress.returncode == 0, progress.stderr
    unsolved = tutor(*base, "handin", "autograd-hooks", "--learner", "heidi", cwd=work)
    assert unsolved.returncode == 0, unsolved.stderr  # a failing check is no solve, but it is handed in
    assert "1 of 1 exercises (0 solved)" in unsolved.stdout
    assert "not solved, handed in as you last left them (1): add-to-copy" in unsolved.stdout
    assert _manifest(work / "heidi-autograd-hooks.handin.zip")["exercises"]["add-to-copy"]["solved"] is False

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
    from tutor.pack.loader import load_pack

    mine.write_text(load_pack(pack).exercises()[0][1].starter)
    tutor("--data-dir", str(data), "--pack", str(pack), "check", "add-to-copy", str(mine), cwd=work)
    from tutor.record.progress import ProgressStore

    store = ProgressStore.open(data)
    try:
        assert store.steps.of_pack("autograd-hooks") == {}
    finally:
        store.close()


SECOND = """
  - id: doubled
    kind: exercise
    body: Return `2 * t` without changing `t`.
    contract:
      - name: doubled
        signature: doubled(t)
        description: returns 2 * t
    starter: |
      def doubled(t):
          t *= 2
          return t
    solution: |
      def doubled(t):
          return 2 * t
    checks:
      - id: values
        kind: tensor
        description: returns 2 * t
        setup: x = torch.randn(3)
        value: doubled(x.clone())
        close_to: 2 * x
    hints:
      - "`t *= 2` writes into the caller's tensor."
      - The caller's tensor and `t` are the same object.
      - "`return 2 * t` builds a new tensor."
"""


@pytest.mark.parametrize("language", ["en", "zh"])
def test_handin_leaves_out_nothing_and_says_what_is_unsolved_or_untouched(tmp_path: Path, language: str) -> None:
    """Issue 51: an answer that failed `check` (one line over a rule, say) was never packed, and
    `handin` said "1 exercises (1 solved)" for a two-exercise pack. Now the latest version of
    every exercise worked on is handed in, solved or not, and the summary names the unsolved
    ones, the ones never worked on and the quizzes not answered, in lines of 80 cells."""
    pack = tmp_path / "autograd-hooks"
    scaffold(pack, title="Autograd hooks")
    lesson = pack / "01-first-lesson.yaml"
    lesson.write_text(lesson.read_text().rstrip("\n") + "\n" + SECOND)
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    base = ["--data-dir", str(data), "--pack", str(pack), "--language", language]
    from tutor.pack.loader import load_pack

    assert [e.id for _l, e in load_pack(pack).exercises()] == ["add-to-copy", "doubled"]
    mine = work / "add-to-copy.py"
    mine.write_text(WRONG + "# a first try\n")
    assert tutor(*base, "check", "add-to-copy", str(mine), cwd=work).returncode == 1
    mine.write_text(WRONG + "# my latest try\n")
    assert tutor(*base, "check", "add-to-copy", str(mine), cwd=work).returncode == 1
    done = tutor(*base, "handin", "autograd-hooks", "--learner", "heidi", cwd=work)
    assert done.returncode == 0, done.stderr
    archive = work / "heidi-autograd-hooks.handin.zip"
    manifest = _manifest(archive)
    assert manifest["exercises"] == {"add-to-copy": {"file": "exercises/add-to-copy.py", "solved": False}}
    with zipfile.ZipFile(archive) as zf:  # the latest version checked, not the first
        assert zf.read("exercises/add-to-copy.py").decode() == WRONG + "# my latest try\n"
    out = done.stdout
    from tutor.cli.common import cells

    assert all(cells(line) <= 80 for line in out.splitlines()), out
    if language == "en":
        assert "1 of 2 exercises (0 solved), 0 of 3 quiz answers" in " ".join(out.split())
        assert "not solved, handed in as you last left them (1): add-to-copy" in out
        assert "never worked on, not in the archive (1): doubled" in out
        assert "quizzes not answered (3): first-lesson/why-views," in out
        assert "`torch-tutor quiz autograd-hooks` asks them" in " ".join(out.split())
    else:
        assert "2 个练习中的 1 个（已解出 0 个）" in out
        assert "未解出，按你最后留下的样子提交（1 个）：add-to-copy" in out
        assert "从未做过，不在归档文件里（1 个）：doubled" in out
