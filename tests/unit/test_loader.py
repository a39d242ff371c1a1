"""The loader: every bad input gives located problems, never a crash, never code execution."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tutor.core.loader import PackError, load_pack
from tutor.core.models import ChoiceQuiz, Example, Exercise, FreeQuiz, PredictQuiz, Prose
from tutor.core.text import resolve

EVERY_STEP = """\
id: tour
title: {en: A tour, zh: 导览}
steps:
  - id: read
    kind: prose
    body: "**Markdown** here."
  - id: boom
    kind: example
    code: |
      import torch
      torch.randn(4, 8) @ torch.randn(16, 2)
    expect:
      raises: {type: RuntimeError, match: "cannot be multiplied"}
  - id: prints
    kind: example
    code: print(1 + 1)
    expect: {output: "^2$"}
  - id: why
    kind: quiz
    style: free
    question: Why?
    answer: Because.
  - id: pick
    kind: quiz
    style: choice
    question: Pick two.
    choices:
      - {text: a, correct: true, explain: right}
      - {text: b, correct: true, explain: right}
      - {text: c, explain: wrong}
  - id: guess
    kind: quiz
    style: predict
    question: What does it print?
    code: print(3 * 3)
  - id: fix-it
    kind: exercise
    body: Make `double` double.
    contract:
      - {name: double, signature: "double(t)", description: "returns 2 * t"}
    starter: |
      def double(t):
          return t
    solution: |
      def double(t):
          return 2 * t
    checks:
      - id: values
        kind: tensor
        description: doubles
        cases: [{n: 3}, {n: 5}]
        setup: x = torch.randn(n)
        value: double(x)
        shape: [n]
        close_to: 2 * x
      - id: fresh
        kind: tensor
        description: a new tensor
        after: [values]
        setup: x = torch.randn(4)
        value: double(x)
        independent_of: x
    hints: [Multiply., "return 2 * t"]
"""


def problems_of(path: Path) -> list[str]:
    with pytest.raises(PackError) as info:
        load_pack(path)
    assert info.value.problems, "a PackError always carries at least one problem"
    return [str(p) for p in info.value.problems]


def test_every_step_kind_loads(make_pack):
    pack = load_pack(make_pack(files={"lesson.yaml": EVERY_STEP}, lessons="lessons: [lesson.yaml]\n"))
    steps = pack.lessons[0].steps
    kinds = [type(s) for s in steps]
    assert kinds == [Prose, Example, Example, FreeQuiz, ChoiceQuiz, PredictQuiz, Exercise]
    assert steps[1].expect.raises.type == "RuntimeError"
    assert steps[4].multiple
    assert [c.id for c in steps[6].checks] == ["values", "fresh"]
    assert resolve(pack.lessons[0].title, "zh") == "导览"
    assert resolve(pack.lessons[0].title, "fr", fallback="en") == "A tour"
    assert pack.find_exercise("fix-it") == pack.find_exercise("tour/fix-it") != None  # noqa: E711
    assert pack.find_exercise("other/fix-it") is None


def test_inline_lessons_and_lesson_files_mix(make_pack):
    lessons = "lessons:\n  - lesson.yaml\n  - id: inline\n    title: Inline\n    steps:\n" \
              "      - {id: s, kind: prose, body: hi}\n"
    pack = load_pack(make_pack(lessons=lessons, files={"lesson.yaml": EVERY_STEP}))
    assert [lesson.id for lesson in pack.lessons] == ["tour", "inline"]


def test_builtin_pack_loads():
    from tutor.core.discovery import builtin_pack_dirs

    dirs = builtin_pack_dirs()
    assert any(d.name == "debugging-and-speed" for d in dirs)
    pack = load_pack(next(d for d in dirs if d.name == "debugging-and-speed"))
    assert pack.id == "debugging-and-speed" and pack.lessons


LOC = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")


def located(problem: str) -> tuple[str, int, int, str]:
    match = LOC.match(problem)
    assert match, f"not file:line:col: {problem}"
    return Path(match["file"]).name, int(match["line"]), int(match["col"]), match["msg"]


def test_malformed_yaml_points_at_the_spot(make_pack):
    root = make_pack(files={"lesson.yaml": "id: x\ntitle: [unclosed\nsteps: []\n"})
    (problem,) = problems_of(root)
    name, line, _col, msg = located(problem)
    assert name == "lesson.yaml" and line in (2, 3) and "YAML syntax" in msg


def test_tab_indentation_says_use_spaces(make_pack):
    root = make_pack(files={"lesson.yaml": "id: x\ntitle: T\nsteps:\n\t- id: a\n"})
    (problem,) = problems_of(root)
    name, line, col, msg = located(problem)
    assert (name, line) == ("lesson.yaml", 4) and "spaces" in msg and "tab" in msg


def test_wrong_type_names_the_field_and_the_type(make_pack):
    root = make_pack(files={"lesson.yaml": "id: x\ntitle: T\nsteps:\n  - id: a\n    kind: prose\n    body: [1, 2]\n"})
    (problem,) = problems_of(root)
    name, line, col, msg = located(problem)
    assert (name, line, col) == ("lesson.yaml", 6, 11)
    assert "steps[0].body" in msg and "expected text" in msg


def test_unknown_key_suggests_the_right_one(make_pack):
    root = make_pack(files={"lesson.yaml": "id: x\ntitel: T\nsteps:\n  - {id: a, kind: prose, body: b, bdy: c}\n"})
    found = problems_of(root)
    messages = [located(p) for p in found]
    assert any(line == 2 and "unknown key 'titel'" in msg and "did you mean 'title'" in msg
               for _, line, _, msg in messages)
    assert any(line == 4 and "unknown key 'bdy'" in msg and "did you mean 'body'" in msg
               for _, line, _, msg in messages)
    # the missing 'title' is reported too: all problems at once
    assert any("missing required key 'title'" in msg for *_, msg in messages)


def test_unknown_kind_suggests(make_pack):
    root = make_pack(files={"lesson.yaml": "id: x\ntitle: T\nsteps:\n  - id: a\n    kind: exmaple\n    code: x\n"})
    (problem,) = problems_of(root)
    _, line, _, msg = located(problem)
    assert line == 5 and "unknown kind 'exmaple'" in msg and "did you mean 'example'" in msg


def test_unknown_check_key_suggests(make_pack):
    lesson = EVERY_STEP.replace("        close_to: 2 * x\n", "        close_too: 2 * x\n")
    root = make_pack(files={"lesson.yaml": lesson})
    (problem,) = problems_of(root)
    _, _, _, msg = located(problem)
    assert "unknown key 'close_too'" in msg and "did you mean 'close_to'" in msg


def test_missing_required_field(make_pack):
    root = make_pack(files={"lesson.yaml": "id: x\ntitle: T\nsteps:\n  - id: a\n    kind: example\n"})
    (problem,) = problems_of(root)
    _, line, _, msg = located(problem)
    assert line == 4 and "missing required key 'code'" in msg


def test_duplicate_lesson_id_across_files(make_pack):
    lessons = "lessons:\n  - lesson.yaml\n  - again.yaml\n"
    from tests.unit.conftest import MINIMAL_LESSON

    root = make_pack(lessons=lessons, files={"lesson.yaml": MINIMAL_LESSON, "again.yaml": MINIMAL_LESSON})
    (problem,) = problems_of(root)
    name, line, _, msg = located(problem)
    assert name == "again.yaml" and line == 1 and "duplicate lesson id 'basics'" in msg and "lesson.yaml:1" in msg


def test_duplicate_step_and_check_ids(make_pack):
    lesson = EVERY_STEP.replace("id: prints", "id: boom").replace("id: fresh", "id: values")
    found = problems_of(make_pack(files={"lesson.yaml": lesson}))
    assert any("duplicate step id 'boom'" in p for p in found)
    assert any("duplicate check id 'values'" in p for p in found)


def test_after_names_unknown_check(make_pack):
    lesson = EVERY_STEP.replace("after: [values]", "after: [valuez]")
    (problem,) = problems_of(make_pack(files={"lesson.yaml": lesson}))
    assert "'after' names unknown check 'valuez'" in problem


def test_bad_python_in_a_check_is_located(make_pack):
    lesson = EVERY_STEP.replace("value: double(x)\n        shape", "value: double(x))\n        shape")
    (problem,) = problems_of(make_pack(files={"lesson.yaml": lesson}))
    assert "not valid Python" in problem and ".value" in problem


def test_bad_regex_is_reported(make_pack):
    lesson = EVERY_STEP.replace('match: "cannot be multiplied"', 'match: "cannot (be"')
    (problem,) = problems_of(make_pack(files={"lesson.yaml": lesson}))
    assert "not a valid regular expression" in problem


def test_choice_quiz_needs_a_correct_choice(make_pack):
    lesson = EVERY_STEP.replace("correct: true, ", "")
    (problem,) = problems_of(make_pack(files={"lesson.yaml": lesson}))
    assert "at least one choice must have correct: true" in problem


def test_exercise_needs_two_hints(make_pack):
    lesson = EVERY_STEP.replace('hints: [Multiply., "return 2 * t"]', "hints: [Multiply.]")
    (problem,) = problems_of(make_pack(files={"lesson.yaml": lesson}))
    assert "hints" in problem and "at least 2" in problem


def test_empty_pack(make_pack):
    (problem,) = problems_of(make_pack(lessons="lessons: []\n"))
    assert "no lessons" in problem


def test_empty_file(make_pack):
    (problem,) = problems_of(make_pack(files={"lesson.yaml": ""}))
    assert "lesson.yaml:1:1: the file is empty" in problem


def test_missing_lesson_file(make_pack):
    (problem,) = problems_of(make_pack(lessons="lessons:\n  - nowhere.yaml\n", files={}))
    name, line, col, msg = located(problem)
    assert (name, line, col) == ("pack.yaml", 7, 5) and "'nowhere.yaml' not found" in msg


def test_lesson_path_outside_the_pack_is_refused_unread(make_pack, tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text("id: stolen\ntitle: T\nsteps: [{id: a, kind: prose, body: b}]\n")
    for entry in ("../secret.yaml", "../../etc/passwd", "/etc/passwd", "sub/../../secret.yaml"):
        (problem,) = problems_of(make_pack(lessons=f"lessons:\n  - {entry!r}\n", files={}))
        assert "outside the pack" in problem or "relative" in problem or ".yaml" in problem, problem
        assert "stolen" not in problem


def test_symlink_escaping_the_pack_is_refused(make_pack, tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_text("id: stolen\ntitle: T\nsteps: [{id: a, kind: prose, body: b}]\n")
    root = make_pack(lessons="lessons: [link.yaml]\n", files={})
    (root / "link.yaml").symlink_to(outside)
    (problem,) = problems_of(root)
    assert "outside the pack" in problem


def test_huge_file_is_refused_without_reading(make_pack):
    root = make_pack(files={})
    big = root / "lesson.yaml"
    with big.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # 50 MB, sparse: the loader must refuse it by size
    started = time.monotonic()
    (problem,) = problems_of(root)
    assert "52.4 MB" in problem and "limited" in problem
    assert time.monotonic() - started < 5


def test_binary_file(make_pack):
    (problem,) = problems_of(make_pack(files={"lesson.yaml": b"id: x\n\x00\x01\x02\xff"}))
    assert "lesson.yaml:2:1: this is a binary file" in problem


def test_non_utf8_file(make_pack):
    (problem,) = problems_of(make_pack(files={"lesson.yaml": "id: x\ntitle: caf\xe9\n".encode("latin-1")}))
    assert "lesson.yaml:2:11: not UTF-8" in problem and "0xe9" in problem


def test_utf8_bom_is_accepted(make_pack):
    from tests.unit.conftest import MINIMAL_LESSON

    pack = load_pack(make_pack(files={"lesson.yaml": b"\xef\xbb\xbf" + MINIMAL_LESSON.encode()}))
    assert pack.lessons[0].id == "basics"


def test_billion_laughs_is_bounded(make_pack):
    bomb = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in "bcdefghi":
        prev = chr(ord(level) - 1)
        bomb.append(f"{level}: &{level} [" + ",".join([f"*{prev}"] * 9) + "]")
    bomb.append("id: x\ntitle: T\nsteps: *i")
    started = time.monotonic()
    (problem,) = problems_of(make_pack(files={"lesson.yaml": "\n".join(bomb) + "\n"}))
    assert "more than" in problem and "alias" in problem
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("tag", ["!!python/object:os.system", "!!python/object/apply:os.system",
                                 "!!python/name:os.system", "!custom"])
def test_code_tags_are_refused_not_executed(make_pack, tmp_path, tag):
    marker = tmp_path / "pwned"
    lesson = f"id: x\ntitle: {tag} ['touch {marker}']\nsteps: [{{id: a, kind: prose, body: b}}]\n"
    (problem,) = problems_of(make_pack(files={"lesson.yaml": lesson}))
    assert "is not allowed" in problem and "lesson.yaml:2:" in problem
    assert not marker.exists()


def test_duplicate_yaml_key(make_pack):
    (problem,) = problems_of(make_pack(files={"lesson.yaml": "id: x\ntitle: A\ntitle: B\nsteps: []\n"}))
    assert "lesson.yaml:3:1: duplicate key 'title'" in problem


def test_all_problems_of_all_files_at_once(make_pack):
    lessons = "lessons:\n  - one.yaml\n  - two.yaml\n  - three.yaml\n"
    files = {"one.yaml": "id: one\ntitle: [oops\n", "two.yaml": b"\xff\xfe",
             "three.yaml": "id: three\ntitle: T\nsteps: [{id: a, kind: prose}]\n"}
    header = "format_version: 2\nid: Bad Id\ntitle: T\nversion: 1.0\n"
    found = problems_of(make_pack(lessons=lessons, files=files, header=header))
    names = {located(p)[0] for p in found}
    assert names == {"pack.yaml", "one.yaml", "two.yaml", "three.yaml"}
    assert len(found) >= 5


def test_pack_yaml_missing(tmp_path):
    (problem,) = problems_of(tmp_path)
    assert "pack.yaml not found" in problem


def test_requires_torch_range_is_checked(make_pack):
    header = "format_version: 1\nid: demo\ntitle: T\nversion: 1.0.0\nrequires: {torch: 'two point two'}\n"
    (problem,) = problems_of(make_pack(header=header))
    assert "not a version range" in problem and "pack.yaml:5" in problem


def test_yaml_yes_no_trap_gets_a_hint(make_pack):
    lesson = EVERY_STEP.replace("explain: wrong}", "explain: no}")
    (problem,) = problems_of(make_pack(files={"lesson.yaml": lesson}))
    assert "steps[4].choices[2].explain" in problem and "quote" in problem


def test_a_list_too_short_says_how_many_it_needs_in_plain_words(make_pack):
    lesson = EVERY_STEP.replace('    hints: [Multiply., "return 2 * t"]\n', "    hints: [Multiply.]\n")
    assert lesson != EVERY_STEP
    (problem,) = problems_of(make_pack(files={"lesson.yaml": lesson}))
    _, _, _, msg = located(problem)
    assert "hints: needs at least 2 entries, this has 1" in msg
    assert "after validation" not in msg and "List should" not in msg
