"""`torch-tutor check` as a learner types it: names that match several exercises, typos, a file
that does not parse, and a failing random case's seed (found by a new-user review)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checks.conftest import FIXTURE_PACK

REPO = Path(__file__).resolve().parents[2]
BUILTIN = REPO / "lessons" / "debugging-and-speed"


def tutor(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    return subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(data), *args], capture_output=True,
                          text=True, timeout=300, env=env)


@pytest.fixture
def learner(tmp_path: Path) -> Path:
    path = tmp_path / "mine.py"
    path.write_text("x = 1\n")
    return path


def test_a_start_that_matches_several_exercises_lists_them(tmp_path: Path, learner: Path) -> None:
    """Every title of the built-in pack starts "Exercise:": the word alone names all of them."""
    done = tutor("check", "Exercise", str(learner), "--pack", str(BUILTIN), data=tmp_path)
    assert done.returncode == 2
    assert "no exercise" not in done.stderr
    assert "'Exercise' could be any of 10 exercises; give more of the id or title:" in done.stderr
    assert re.search(r"\n  reading-errors/shape-mismatch +Exercise: project with an \(out, in\) weight\n",
                     done.stderr)
    assert "three-traps/view-inplace" in done.stderr and "fair-measurement/fair-benchmark" in done.stderr
    done = tutor("check", "three-traps/", str(learner), "--pack", str(BUILTIN), data=tmp_path)
    assert done.returncode == 2 and "no exercise" in done.stderr  # not a start of an id or title


def test_a_typo_gets_a_did_you_mean(tmp_path: Path, learner: Path) -> None:
    done = tutor("check", "shap-mismatch", str(learner), "--pack", str(BUILTIN), data=tmp_path)
    assert done.returncode == 2
    assert ("no exercise 'shap-mismatch' in pack " in done.stderr
            and "did you mean `reading-errors/shape-mismatch` (Exercise: project with an (out, in) weight)?"
            in done.stderr)
    done = tutor("check", "shift a rwo", str(learner), "--pack", str(BUILTIN), data=tmp_path)  # a title
    assert "did you mean `three-traps/view-inplace`" in done.stderr
    done = tutor("check", "qqqqqqqq", str(learner), "--pack", str(BUILTIN), data=tmp_path)
    assert done.returncode == 2 and "did you mean" not in done.stderr and "see `torch-tutor list`" in done.stderr


def test_a_syntax_error_names_the_learners_own_file(tmp_path: Path) -> None:
    mine = tmp_path / "my attempt.py"
    mine.write_text("def f(:\n    pass\n")
    done = tutor("check", "shape-mismatch", str(mine), "--pack", str(BUILTIN), data=tmp_path)
    assert done.returncode == 1, done.stderr
    assert f'File "{mine}", line 1' in done.stdout
    assert "(my attempt.py, line 1)" in done.stdout  # Python names the file by its base name here
    assert "shape-mismatch.py" not in done.stdout


def test_a_file_named_like_the_checks_own_code_is_not_taken_for_it(tmp_path: Path) -> None:
    """Names starting with "<" are how the judge tells the checks' code from the learner's: a
    learner's file called "<check 1>" is shown by its path, never under such a name."""
    (tmp_path / "<check 1>").write_text("def f(:\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    done = subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(tmp_path), "check", "shape-mismatch",
                           "<check 1>", "--pack", str(BUILTIN)], capture_output=True, text=True, timeout=300,
                          env=env, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert 'File "./<check 1>", line 1' in done.stdout


def test_a_failing_random_case_prints_its_seed_and_both_replays_draw_its_inputs(tmp_path: Path) -> None:
    """The learner sees a failing case's seed and what it means to them; `--seed` draws the same
    inputs again (the learner's code prints what it was given), and so does an author's `seed:`
    in the pack, whose check then no longer claims its inputs were drawn at random."""
    mine = tmp_path / "mine.py"
    mine.write_text('def mse(pred, target):\n    print(f"given {pred.sum().item():.6f}")\n'
                    "    return ((pred - target) ** 2).mean()\n")
    done = tutor("check", "metric", str(mine), "--pack", str(FIXTURE_PACK), data=tmp_path)
    assert done.returncode == 1, done.stderr
    # How an author pins it is validate's advice (found by a new-user review: learners were told
    # to edit the pack).
    found = re.search(r"FAIL  number: .*\n.*\n        inputs drawn at random with seed (\d+) \(each check draws "
                      r"new ones; add --seed (\d+) to draw these again\)\n", done.stdout)
    assert found, done.stdout
    assert "give this check" not in done.stdout and "authoring" not in done.stdout
    seed = found.group(1)
    assert found.group(2) == seed
    assert "seed" not in done.stdout.split("PASS  inputs-unchanged")[1]  # a passing check has none to show
    given = re.findall(r"given [\d.-]+", done.stdout)  # the failing check ("number") runs first

    again = tutor("check", "metric", str(mine), "--pack", str(FIXTURE_PACK), "--seed", seed, data=tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr
    assert re.findall(r"given [\d.-]+", again.stdout)[0] == given[0]
    assert f"replaying seed {seed}: checks that draw their inputs at random drew them from it" in again.stdout
    assert "add --seed" not in again.stdout  # nothing new was drawn
    as_json = tutor("check", "metric", str(mine), "--pack", str(FIXTURE_PACK), "--seed", seed, "--json",
                    data=tmp_path)
    data = json.loads(as_json.stdout)
    assert data["replayed_seed"] == int(seed)
    assert {c["id"]: c["seed"] for c in data["checks"]}["number"] == int(seed)
    # Every replay draws the same inputs, for every check.
    assert re.findall(r"given [\d.-]+", data["run"]["stdout"]) == re.findall(r"given [\d.-]+", again.stdout)

    marker = "      - id: number\n        kind: tensor\n"
    pack = _edited_pack(tmp_path, marker, marker + f"        seed: {seed}\n")
    pinned = tutor("check", "metric", str(mine), "--pack", str(pack), data=tmp_path)
    assert "FAIL  number" in pinned.stdout, pinned.stdout + pinned.stderr
    assert re.findall(r"given [\d.-]+", pinned.stdout)[0] == given[0]
    assert "seed" not in pinned.stdout  # the pack's seed: nothing was drawn


def test_validate_tells_the_author_how_to_replay_a_failing_random_case(tmp_path: Path) -> None:
    pack = _edited_pack(tmp_path, "          return ((pred - target) ** 2).mean().item()\n    checks:",
                        "          return ((pred - target) ** 2).mean()\n    checks:")
    done = tutor("validate", str(pack), data=tmp_path)
    assert done.returncode != 0
    found = re.search(r"the solution fails check 'number': .* \(inputs drawn with seed (\d+): give this check "
                      r"`seed: (\d+)` to replay them\)", done.stdout + done.stderr)
    assert found and found.group(1) == found.group(2), done.stdout + done.stderr


def _edited_pack(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the fixture pack with ``old`` replaced by ``new`` in its lesson."""
    pack = tmp_path / "pack"
    shutil.copytree(FIXTURE_PACK, pack)
    lesson = pack / "engine.yaml"
    text = lesson.read_text()
    assert old in text
    lesson.write_text(text.replace(old, new))
    return pack


@pytest.mark.parametrize("bad", ["-1", "281474976710656", "twelve"])
def test_check_seed_out_of_range_is_refused_before_anything_runs(tmp_path: Path, learner: Path, bad: str) -> None:
    done = tutor("check", "metric", str(learner), "--pack", str(FIXTURE_PACK), "--seed", bad, data=tmp_path)
    assert done.returncode == 2
    assert ("--seed must be a seed a check printed" in done.stderr) or ("invalid int value" in done.stderr)
    assert done.stdout == ""


def test_check_reads_the_pack_from_the_cache_and_sees_an_edit_at_once(tmp_path: Path) -> None:
    """`check` keeps the packs it reads in the data folder's cache, as the app does (finding the
    exercise took 0.65 s of the command's CPU, 0.04 s from the cache); an entry is used only while
    every file it came from is unchanged, so the next check reads an edited lesson."""
    from tutor.settings.paths import user_packs_dir

    data = tmp_path / "data"
    pack = user_packs_dir(data) / "engine"  # found by discovery, as a learner's own pack is
    pack.parent.mkdir(parents=True)
    shutil.move(_edited_pack(tmp_path, "description: mse returns a Python number",
                             "description: mse returns a float"), pack)
    mine = tmp_path / "mine.py"
    mine.write_text("def mse(pred, target):\n    return ((pred - target) ** 2).mean().item()\n")
    first = tutor("check", "metric", str(mine), data=data)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "PASS  number: mse returns a float" in first.stdout
    assert list((data / "cache" / "packs").iterdir()), "the pack was not kept in the cache"
    lesson = pack / "engine.yaml"
    lesson.write_text(lesson.read_text().replace("mse returns a float", "mse gives back a plain number"))
    again = tutor("check", "metric", str(mine), data=data)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "PASS  number: mse gives back a plain number" in again.stdout, again.stdout
