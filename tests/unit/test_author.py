"""Authoring aids: the scaffold validates clean; lint warns about what a valid pack gets wrong."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.unit.test_loader import EVERY_STEP
from tutor.pack.lint import lint
from tutor.pack.loader import load_pack
from tutor.pack.models import Example, Exercise, FreeQuiz, ChoiceQuiz, PredictQuiz, Prose
from tutor.pack.scaffold import pack_id_for, scaffold


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
    from tutor.pack.docgen import BEGIN, END, reference_markdown

    doc = (Path(__file__).resolve().parents[2] / "docs" / "authoring.md").read_text(encoding="utf-8")
    start, end = doc.index(BEGIN), doc.index(END) + len(END) + 1
    assert doc[start:end] == reference_markdown(), (
        "docs/authoring.md's reference is stale: replace it with `torch-tutor schema --markdown`")
    assert doc.count(BEGIN) == 1 and doc.count(END) == 1, "each marker once: a pasted reference left one behind"


def test_reference_names_every_field_of_every_check_kind():
    from tutor.pack.check_models import CHECK_KINDS
    from tutor.pack.docgen import reference_markdown

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


HALF_TRANSLATED = """\
id: half
title: {en: Half, zh: 一半}
summary: {en: Some texts lack Chinese}
steps:
  - id: read
    kind: prose
    title: Plain strings are every language's text
    body:
      en: |
        English only.
  - id: pick
    kind: quiz
    style: choice
    question: {en: Which?, zh: 哪个？}
    choices:
      - text: {en: "`x.T`", zh: "`x.T`"}
        correct: true
        explain: {en: Right., zh: 对。}
      - text: {en: "`x.reshape(2, 3)`", zh: "`x.reshape(2, 3)`"}
        explain: {en: Wrong order.}
  - id: fix-it
    kind: exercise
    body: {en: Make `double` double., zh: 让 `double` 翻倍。}
    contract:
      - {name: double, signature: "double(t)", description: {en: returns 2 * t}}
    starter: |
      def double(t):
          return t
    solution: |
      def double(t):
          return 2 * t
    hints:
      - {en: Multiply., zh: 乘一下。}
      - {en: By two., fr: Par deux.}
      - {en: "`return 2 * t`", zh: "`return 2 * t`"}
    checks:
      - id: values
        kind: expr
        description: {en: doubles, zh: 翻倍}
        predicate: torch.equal(double(torch.ones(2)), torch.full((2,), 2.0))
        message: {en: "double(ones) gave {{double(torch.ones(2))}}"}
        hints:
          - {text: {en: Times two.}}
"""


def test_validate_points_at_every_text_a_declared_language_lacks(make_pack):
    """Issue 29: a text written per language that lacks one the pack declares is reported at the
    text's own file:line:col (not the step's), for every kind of learner-facing text."""
    folder = make_pack(header=PACK_HEADER_HALF, files={"lesson.yaml": HALF_TRANSLATED})
    out = subprocess.run([sys.executable, "-m", "tutor", "validate", "--no-run", str(folder)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr  # warnings: the pack still works

    def at(fragment: str, file: str = "lesson.yaml") -> str:
        source = (folder / file).read_text().splitlines()
        number = next(i for i, line in enumerate(source, 1) if fragment in line)
        return f"{folder / file}:{number}:{source[number - 1].index(fragment) + 1}: warning: "

    expected = [
        at("{en: The pack}", "pack.yaml") + "pack title: no zh text (falls back to en)",
        at("{en: Some texts lack Chinese}") + "lesson 'half' summary: no zh text (falls back to en)",
        at("en: |") + "step 'read' body: no zh text (falls back to en)",
        at("{en: Wrong order.}") + "step 'pick' choice 2 explain: no zh text (falls back to en)",
        at("{en: returns 2 * t}") + "step 'fix-it' contract 'double': no zh text (falls back to en)",
        at("{en: By two., fr: Par deux.}") + "step 'fix-it' hint 2: no zh text (falls back to en)",
        at("{en: By two., fr: Par deux.}") + "step 'fix-it' hint 2: text in fr, which the pack's languages "
                                              "(en, zh) do not list",
        at('{en: "double(ones)') + "check 'values' message: no zh text (falls back to en)",
        at("{en: Times two.}") + "check 'values' hints[0]: no zh text (falls back to en)",
    ]
    reported = [line for line in out.stdout.splitlines() if "text" in line and ": warning: " in line]
    assert reported == expected, out.stdout
    # a plain string is every language's text; a code-only choice or hint reads the same in both
    assert "Plain strings" not in out.stdout and "twice" not in out.stdout and "repeats" not in out.stdout


PACK_HEADER_HALF = """\
format_version: 1
id: half
title: {en: The pack}
version: 1.0.0
languages: [en, zh]
"""
