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
    assert {p.name for p in written} == {"pack.yaml", "01-first-lesson.yaml", "pack.schema.json"}
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


def test_authoring_reference_is_current():
    from tutor.core.docgen import BEGIN, END, reference_markdown

    doc = (Path(__file__).resolve().parents[2] / "docs" / "authoring.md").read_text(encoding="utf-8")
    start, end = doc.index(BEGIN), doc.index(END) + len(END) + 1
    assert doc[start:end] == reference_markdown(), (
        "docs/authoring.md's reference is stale: replace it with `torch-tutor schema --markdown`")
    assert doc.count(BEGIN) == 1 and doc.count(END) == 1, "each marker once: a pasted reference left one behind"


def test_reference_names_every_field_of_every_check_kind():
    from tutor.core.check_models import CHECK_KINDS
    from tutor.core.docgen import reference_markdown

    text = reference_markdown()
    for kind in CHECK_KINDS:
        assert f"(`kind: {kind}`)" in text
    assert "`close_to`" in text and "`top1_in`" in text and "`slack_per_step`" in text


def test_validate_watch_revalidates_on_save(tmp_path):
    import time

    folder = tmp_path / "course"
    scaffold(folder)
    proc = subprocess.Popen([sys.executable, "-m", "tutor", "validate", "--no-run", "--watch", str(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines: list[str] = []

        def wait_for(text: str, timeout: float = 30) -> None:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                lines.append(line)
                if text in line:
                    return
            raise AssertionError(f"{text!r} not seen in {lines}")

        wait_for("watching")
        lesson = folder / "01-first-lesson.yaml"
        lesson.write_text(lesson.read_text().replace("title: Views and copies", "titel: Views"))
        wait_for("changed: 01-first-lesson.yaml")
        wait_for("did you mean 'title'")
    finally:
        proc.terminate()
        proc.wait(10)
