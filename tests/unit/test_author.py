"""Authoring aids: the scaffold validates clean; lint warns about what a valid pack gets wrong."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.unit.test_loader import EVERY_STEP
from tutor.core.lint import lint
from tutor.core.loader import load_pack
from tutor.core.models import Example, Exercise, FreeQuiz, ChoiceQuiz, PredictQuiz, Prose
from tutor.core.scaffold import pack_id_for, scaffold


def test_scaffold_holds_every_step_kind_and_loads_clean(tmp_path):
    folder = tmp_path / "My Course_2"
    written = scaffold(folder, title="yes", author='A "quoted": name')
    assert {p.name for p in written} == {"pack.yaml", "01-first-lesson.yaml"}
    pack = load_pack(folder)
    assert pack.id == "my-course_2" and pack.title == "yes" and pack.authors == ['A "quoted": name']
    kinds = {type(step) for step in pack.lessons[0].steps}
    assert kinds == {Prose, Example, FreeQuiz, ChoiceQuiz, PredictQuiz, Exercise}
    assert lint(pack) == []
    text = (folder / "pack.yaml").read_text()
    assert text.count("#") > 10, "every field explains itself in a comment"


def test_scaffold_refuses_a_folder_with_files(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    out = subprocess.run([sys.executable, "-m", "tutor", "new", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 2 and "not an empty folder" in out.stderr
    assert (tmp_path / "keep.txt").read_text() == "mine" and len(list(tmp_path.iterdir())) == 1


def test_new_command_then_validate(tmp_path):
    folder = tmp_path / "course"
    out = subprocess.run([sys.executable, "-m", "tutor", "new", str(folder)], capture_output=True, text=True)
    assert out.returncode == 0 and "created" in out.stdout
    assert load_pack(folder).id == "course"


def test_pack_id_for_odd_names():
    assert pack_id_for(Path("Deep Learning!!")) == "deep-learning"
    assert pack_id_for(Path("___")) == "my-pack"


def test_lint_warnings(make_pack):
    lesson = (EVERY_STEP
              .replace("question: Pick two.", "question: Why?")            # duplicate question
              .replace("{text: c, explain: wrong}", "{text: a, explain: wrong}")  # duplicate choice
              .replace("    expect: {output: \"^2$\"}\n", "")             # example without expect
              .replace("description: a new tensor", "description: fresh")  # description repeats id
              .replace('hints: [Multiply., "return 2 * t"]', "hints: [Multiply., Multiply.]")
              .replace("title: {en: A tour, zh: 导览}", "title: {en: A tour, fr: Un tour}"))
    pack = load_pack(make_pack(files={"lesson.yaml": lesson}))
    warnings = [str(w) for w in lint(pack)]
    joined = "\n".join(warnings)
    assert "quiz 'pick' asks the same question as tour/why" in joined
    assert "offers the choice 'a' twice" in joined
    assert "example 'prints' has no expect" in joined
    assert "check 'fresh' has no description" in joined
    assert "repeats a hint" in joined and "has 2 hints" in joined
    assert all(w.split(":")[0].endswith("lesson.yaml") and ": warning: " in w for w in warnings), warnings
    assert any(":22:5:" in w for w in warnings if "asks the same question" in w)  # the step, one line up
