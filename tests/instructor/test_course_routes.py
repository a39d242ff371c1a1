"""Every route of grading gives the mark the author meant (issue 51): the docs' own worked example
(a `prelude_file`, `uses`, form rules, seeds drawn per run) with one exercise scored all or nothing,
three learners graded through `grade`, shards and `grade-merge`, the Gradescope bundle's pack and
the GitHub Classroom setup, which must all agree row for row."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from tutor.pack.loader import load_pack
from tests.instructor.test_autograder import _run_like_classroom

PUZZLES = Path(__file__).resolve().parents[2] / "examples" / "tensor-puzzles"

CHECKERBOARD = "def checkerboard(n):\n    return (arange(n)[:, None] + arange(n)[None, :]) % 2\n"
INTERLEAVE = ("def interleave(a, b):\n"
              "    return where(arange(2 * len(a)) % 2 == 0, a[arange(2 * len(a)) // 2], b[arange(2 * len(a)) // 2])\n")
INVERTED = "def inverted(n):\n    return where(checkerboard(n) == 0, 1, 0)\n"
LEARNERS = {
    "ann": {"checkerboard.py": CHECKERBOARD, "interleave.py": INTERLEAVE, "inverted.py": INVERTED},
    # interleave keeps every rule and calls only the allowed operators, but its values are wrong:
    # 2 of 3 checks, which all-or-nothing scores 0 (partial credit would give 0.67)
    "bob": {"checkerboard.py": CHECKERBOARD, "interleave.py": "def interleave(a, b):\n    return a + b\n",
            "inverted.py": INVERTED, "__pycache__/inverted.cpython-311.pyc": "\x00", "inverted.py~": "x"},
    # a wrong checkerboard, an interleave that crashes, and a right inverted built on the wrong
    # checkerboard (uses): wrong as well
    "cat": {"checkerboard.py": "def checkerboard(n):\n    return arange(n) % 2\n",
            "interleave.py": "raise RuntimeError('not done')\n", "inverted.py": INVERTED},
}
#: What the author means each learner to get: the interleave exercise is all or nothing.
EXPECTED = {
    ("ann", "checkerboard"): 1.0, ("ann", "interleave"): 1.0, ("ann", "inverted"): 1.0,
    ("bob", "checkerboard"): 1.0, ("bob", "interleave"): 0.0, ("bob", "inverted"): 1.0,
    ("cat", "checkerboard"): 0.67, ("cat", "interleave"): 0.0, ("cat", "inverted"): 0.5,
}


def tutor(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=900, cwd=cwd)


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("routes")
    pack = base / "pack"
    shutil.copytree(PUZZLES, pack)
    lesson = pack / "puzzles.yaml"
    text = lesson.read_text()
    marker = "  - id: interleave\n    kind: exercise\n"
    assert marker in text
    text = text.replace(marker, marker + "    scoring: all-or-nothing\n")
    pinned = "        description: a and b, alternating\n"  # a check whose inputs the pack pins
    assert pinned in text
    lesson.write_text(text.replace(pinned, pinned + "        seed: 7\n"))
    subs = base / "subs"
    for learner, files in LEARNERS.items():
        write(subs / learner, files)
    wheel = base / "torch_tutor-0-py3-none-any.whl"  # the setups only copy it; nothing installs it here
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("x", "")
    env = {"TORCH_TUTOR_DATA_DIR": str(base / "data"), "TORCH_TUTOR_CONFIG_DIR": str(base / "config")}
    out = base / "out"
    out.mkdir()
    runs = {"grade": tutor("grade", str(pack), str(subs), "--json", str(out / "all.json"), "--totals",
                           str(out / "totals.csv"), "--feedback", str(out / "feedback"), "--junit",
                           str(out / "all.xml"), "--unisolated", "--no-cache", env=env)}
    for k in (1, 2):
        runs[f"shard{k}"] = tutor("grade", str(pack), str(subs), "--shard", f"{k}/2", "--json",
                                  str(out / f"shard{k}.json"), "--unisolated", "--no-cache", env=env)
    runs["merge"] = tutor("grade-merge", str(out / "shard1.json"), str(out / "shard2.json"), "--json",
                          str(out / "merged.json"), "--totals", str(out / "merged-totals.csv"), env=env)
    return {"base": base, "pack": pack, "subs": subs, "env": env, "out": out, "runs": runs, "wheel": wheel}


def same_pack(copy: Path, original: Path, *, published: bool) -> None:
    """Every feature of the pack survives the copy: the header (prelude, form rules, scoring...),
    each exercise's checks, seeds, uses, points and scoring, the prelude each runs; a published
    copy (Classroom) has no solutions, and nothing else differs."""
    from tutor.pack.spec import as_data

    theirs, ours = load_pack(copy), load_pack(original)
    assert any(check.seed == 7 for _l, exercise in theirs.exercises() for check in exercise.checks)
    assert as_data(theirs) != {} and len(theirs.exercises()) == len(ours.exercises())
    for (_l, mine), (_m, given) in zip(theirs.exercises(), ours.exercises()):
        left, right = as_data(mine), as_data(given)
        if published:
            assert "not published" in left.pop("solution") and left.pop("solutions") == []
            right.pop("solution"), right.pop("solutions")
        assert left == right
        assert mine.prelude_code == given.prelude_code and mine.all_or_nothing == given.all_or_nothing
        assert mine._used_names == given._used_names
    header = {k: v for k, v in as_data(theirs).items() if k != "lessons"}
    assert header == {k: v for k, v in as_data(ours).items() if k != "lessons"}


def points(path: Path) -> dict[tuple[str, str], float]:
    return {(r["learner"], r["exercise"]): r["points"] for r in json.loads(path.read_text())["rows"]}


def test_grade_and_its_shards_give_the_authors_marks(course):
    for name, run in course["runs"].items():
        assert run.returncode == 0, (name, run.stdout[-2000:], run.stderr[-2000:])
    out = course["out"]
    assert points(out / "all.json") == EXPECTED
    assert points(out / "merged.json") == EXPECTED
    summary = json.loads((out / "merged.json").read_text())["summary"]
    assert summary["all_or_nothing"] == ["interleave"] and summary["statuses"].get("unrecognised") is None
    assert (out / "totals.csv").read_text() == (out / "merged-totals.csv").read_text()
    totals = {row["Student"]: row for row in csv.DictReader(io.StringIO((out / "totals.csv").read_text()))}
    assert {name: float(row["tensor-puzzles-demo (3 points)"]) for name, row in totals.items()} == {
        "ann": 3.0, "bob": 2.0, "cat": 1.17}
    feedback = (out / "feedback" / "bob.md").read_text()
    assert "## interleave: failed, 0 of 1 points\n\nScored all or nothing: the points only when every check " \
           "passes." in feedback
    assert "Scored all or nothing" not in feedback.split("## interleave")[0]  # only where it applies
    junit = (out / "all.xml").read_text()
    assert "2/3 checks (all or nothing: the points only when every check passes: 0 points)" in junit


def test_the_gradescope_bundle_carries_the_whole_pack_and_grades_alike(course):
    base, env = course["base"], course["env"]
    bundle = base / "autograder.zip"
    built = tutor("autograder", str(course["pack"]), "--gradescope", str(bundle), "--tutor-wheel",
                  str(course["wheel"]), "--no-dependency-wheels", env=env)
    assert built.returncode == 0, built.stderr
    assert sorted(p.name for p in base.iterdir() if "autograder.zip" in p.name) == ["autograder.zip"]
    with zipfile.ZipFile(bundle) as archive:
        (name,) = [n for n in archive.namelist() if n.startswith("wheels/torch_tutor_pack_")]
        with zipfile.ZipFile(io.BytesIO(archive.read(name))) as wheel:
            wheel.extractall(base / "installed")
    (module,) = [p for p in (base / "installed").iterdir() if p.name.startswith("torch_tutor_pack_")
                 and p.is_dir() and not p.name.endswith(".dist-info")]
    assert (module / "prelude.py").read_text() == (course["pack"] / "prelude.py").read_text()
    same_pack(module, course["pack"], published=False)
    for learner, files in LEARNERS.items():
        submission = base / "gradescope" / learner
        write(submission, files)
        results = base / "gradescope" / f"{learner}.json"
        done = tutor("autograder", str(module), "--run", str(submission), "--results", str(results), env=env)
        assert done.returncode == 0, done.stderr
        data = json.loads(results.read_text())
        tests = {t["name"]: t for t in data["tests"]}
        assert {(learner, name): t["score"] for name, t in tests.items()} == {
            key: value for key, value in EXPECTED.items() if key[0] == learner}, data
        assert tests["interleave"]["output"].startswith("Scored all or nothing")
        assert not tests["checkerboard"]["output"].startswith("Scored all or nothing")


def test_the_github_classroom_setup_publishes_the_prelude_and_grades_alike(course):
    base, env = course["base"], course["env"]
    repo = base / "starter"
    done = tutor("autograder", str(course["pack"]), "--github-classroom", str(repo), "--tutor-wheel",
                 str(course["wheel"]), env=env)
    assert done.returncode == 0, done.stderr
    published = repo / ".torch-tutor" / "pack"
    assert (published / "prelude.py").read_text() == (course["pack"] / "prelude.py").read_text()
    same_pack(published, course["pack"], published=True)
    assert sorted(p.name for p in repo.iterdir()) == [".github", ".torch-tutor", "checkerboard.py",
                                                       "interleave.py", "inverted.py"]
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    names = [s["with"]["test-name"] for s in steps if "test-name" in s.get("with", {})]
    assert [n for n in names if n.startswith("interleave")] == ["interleave: every check (all or nothing)"]
    assert len(names) == 3 + 1 + 2
    for learner in ("bob", "cat"):
        clone = base / f"clone-{learner}"
        shutil.copytree(repo, clone)
        write(clone, LEARNERS[learner])
        earned, possible, outputs = _run_like_classroom(clone, steps, {**env, "TORCH_TUTOR_DATA_DIR":
                                                                       str(base / f"data-{learner}")})
        assert possible == 300
        expected = sum(value for key, value in EXPECTED.items() if key[0] == learner)
        # Classroom's whole points: 1/3 of a point is 33 or 34 of 100, so a sum can differ by 0.01
        assert abs(earned / 100 - expected) <= 0.011, (earned, expected, outputs)


def test_the_docs_worked_example_gets_its_classroom_setup(course, tmp_path):
    """The command the issue quotes: `prelude.py` was read as YAML ("mapping values are not allowed")."""
    repo = tmp_path / "out"
    done = tutor("autograder", str(PUZZLES), "--github-classroom", str(repo), "--tutor-wheel", str(course["wheel"]),
                 env=course["env"])
    assert done.returncode == 0, done.stderr
    assert (repo / ".torch-tutor" / "pack" / "prelude.py").read_text() == (PUZZLES / "prelude.py").read_text()
    assert "not published" in load_pack(repo / ".torch-tutor" / "pack").exercises()[0][1].solution


def test_a_failed_classroom_setup_leaves_the_repository_as_it_was(course, tmp_path):
    from tutor.pack.scaffold import scaffold

    env = course["env"]
    pack = tmp_path / "pack"
    scaffold(pack, title="Half-done test")
    repo = tmp_path / "starter"
    first = tutor("autograder", str(pack), "--github-classroom", str(repo), "--tutor-wheel", str(course["wheel"]),
                  env=env)
    assert first.returncode == 0, first.stderr
    before = {p.relative_to(repo): p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    lesson = pack / "01-first-lesson.yaml"
    lesson.write_text(lesson.read_text().replace("kind: exercise\n", "kind: exercise\n    points: 7\n", 1))
    (repo / "add-to-copy.py").unlink()
    failed = tutor("autograder", str(pack), "--github-classroom", str(repo), "--tutor-wheel",
                   str(tmp_path / "missing.whl"), env=env)
    assert failed.returncode != 0 and "is not a wheel file" in failed.stderr
    after = {p.relative_to(repo): p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    assert after == {k: v for k, v in before.items() if k != Path("add-to-copy.py")}
    nowhere = tmp_path / "new-repo"
    failed = tutor("autograder", str(pack), "--github-classroom", str(nowhere), "--tutor-wheel",
                   str(tmp_path / "missing.whl"), env=env)
    assert failed.returncode != 0 and not nowhere.exists()
