"""The loader: every bad input gives located problems, never a crash, never code execution; and
what a port of a puzzle set needs from the format (issue 34): a prelude, more than one reference
solution, dtype aliases, form rules."""

from __future__ import annotations

import re
import textwrap
import time
from pathlib import Path

import pytest

from tutor.pack.loader import PackError, load_pack
from tutor.pack.models import ChoiceQuiz, Example, Exercise, FreeQuiz, PredictQuiz, Prose
from tutor.pack.text import resolve

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
    from tutor.pack.discovery import builtin_pack_dirs

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


# ------------------------------------------------------- what a port of a puzzle set needs (issue 34)
# A pack prelude, more than one reference solution, dtype aliases, and the mistakes a port makes
# first, each located as file:line:col with a hint.

PACK = """\
format_version: 1
id: demo
title: Demo
version: "0.1.0"
{header}lessons:
  - lesson.yaml
"""

LESSON = """\
id: lesson
title: Lesson
steps:
  - id: ex
    kind: exercise
    body: Do it.
    contract:
      - {{name: f, signature: "f(x)", description: d}}
    starter: "def f(x):\\n    return x\\n"
    solution: "def f(x):\\n    return x + 1\\n"
{extra}    checks:
{checks}    hints: [one, two, three]
"""

CHECK = """\
      - id: value
        kind: tensor
        description: d
        value: f(torch.ones(2))
        close_to: torch.ones(2) + 1
"""


def write(tmp_path: Path, *, header: str = "", checks: str = CHECK, extra: str = "", files=None) -> Path:
    (tmp_path / "pack.yaml").write_text(PACK.format(header=header))
    (tmp_path / "lesson.yaml").write_text(LESSON.format(checks=checks, extra=extra))
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    return tmp_path


def problems(folder: Path) -> list[str]:
    with pytest.raises(PackError) as caught:
        load_pack(folder)
    return [str(p) for p in caught.value.problems]


# --------------------------------------------------------------------------- the prelude


def test_the_prelude_reaches_every_exercise_from_pack_yaml_or_a_file(tmp_path):
    (tmp_path / "a").mkdir()
    inline = load_pack(write(tmp_path / "a", header='prelude: "arange = torch.arange\\n"\n'))
    assert inline.exercises()[0][1].prelude_code == "arange = torch.arange\n"
    (tmp_path / "b").mkdir()
    folder = write(tmp_path / "b", header="prelude_file: helpers.py\n",
                   files={"helpers.py": "import torch\nwhere = torch.where\n"})
    pack = load_pack(folder)
    assert pack.exercises()[0][1].prelude_code == "import torch\nwhere = torch.where\n"
    assert folder / "helpers.py" in pack.sources  # the pack cache sees an edit of the prelude


def test_an_exercise_can_run_without_the_prelude(tmp_path):
    pack = load_pack(write(tmp_path, header='prelude: "x = 1\\n"\n', extra="    prelude: false\n"))
    assert pack.exercises()[0][1].prelude_code == ""


@pytest.mark.parametrize("header, files, expected", [
    ("prelude_file: missing.py\n", {}, "pack.yaml:5:15: prelude file 'missing.py' not found"),
    ("prelude_file: ../outside.py\n", {}, "pack.yaml:5:15: prelude path '../outside.py' points outside the pack folder"),
    ("prelude_file: helpers.py\n", {"helpers.py": "def f(:\n    pass\n"}, "helpers.py:1:7: not valid Python"),
    ("prelude_file: helpers.txt\n", {}, "pack.yaml:5:15: prelude_file: String should match pattern"),
    ('prelude: "def (:"\nprelude_file: helpers.py\n', {"helpers.py": ""}, "not valid Python"),
    ('prelude: "x = 1"\nprelude_file: helpers.py\n', {"helpers.py": ""}, "not both"),
])
def test_prelude_mistakes_are_located(tmp_path, header, files, expected):
    (tmp_path.parent / "outside.py").write_text("x = 1\n")
    found = problems(write(tmp_path, header=header, files=files))
    assert any(expected in p for p in found), found


# --------------------------------------------------------------------------- solutions


def test_more_solutions_are_read_and_must_be_strings(tmp_path):
    pack = load_pack(write(tmp_path, extra='    solutions: ["def f(x):\\n    return 1 + x\\n"]\n'))
    assert pack.exercises()[0][1].solutions == ["def f(x):\n    return 1 + x\n"]
    found = problems(write(tmp_path, extra="    solutions: [3]\n"))
    assert any("lesson.yaml:11:17: steps[0].solutions[0]: Input should be a valid string" in p for p in found), found


# --------------------------------------------------------------------------- item 6 of the issue


@pytest.mark.parametrize("alias, name", [("long", "int64"), ("torch.long", "int64"), ("int", "int32"),
                                         ("float", "float32"), ("double", "float64"), ("half", "float16"),
                                         ("bfloat16", "bfloat16")])
def test_torch_dtype_aliases_are_read_as_the_name_torch_prints(tmp_path, alias, name):
    pack = load_pack(write(tmp_path, checks=CHECK + f"        dtype: {alias}\n"))
    assert pack.exercises()[0][1].checks[0].dtype == name


def test_an_unquoted_comma_inside_braces_gets_a_hint_to_quote(tmp_path):
    folder = write(tmp_path)
    lesson = folder / "lesson.yaml"
    lesson.write_text(lesson.read_text().replace('signature: "f(x)"', "signature: where(q, a, b)"))
    found = problems(folder)
    assert any("unknown key 'a'" in p and 'put a value that holds a comma in quotes, e.g. signature: '
               '"where(q, a, b)"' in p for p in found), found


def test_after_naming_an_unknown_check_suggests_the_near_one(tmp_path):
    found = problems(write(tmp_path, checks=CHECK + CHECK.replace("id: value", "id: other") + "        after: [valeu]\n"))
    assert any("'after' names unknown check 'valeu' (did you mean 'value'?)" in p for p in found), found
    found = problems(write(tmp_path, checks=CHECK + "        after: [zzz]\n"))
    assert any("'after' names unknown check 'zzz'; this exercise has no other check" in p for p in found), found


def test_form_and_only_fields_are_in_the_schema_with_located_errors(tmp_path):
    checks = CHECK + textwrap.indent(textwrap.dedent("""\
        - id: rules
          kind: form
          description: d
          max_lines: one
          attributes_denied: [view]
        - id: ops
          kind: profile
          description: d
          workload: "lambda: f(torch.ones(2))"
          only: aten::add
        """), "      ")
    found = problems(write(tmp_path, checks=checks))
    joined = "\n".join(found)
    assert "lesson.yaml:20:20: steps[0].checks[1].max_lines" in joined  # the value's own place
    assert "unknown key 'attributes_denied' (did you mean 'attributes_deny'?)" in joined
    assert "lesson.yaml:26:15: steps[0].checks[2].only: Input should be a valid list" in joined


# --------------------------------------------------------------------------- rules defined once

FORM = """\
      - id: rules
        kind: form
        description: d
        function: f
"""


def test_form_rules_in_pack_yaml_reach_every_form_check_and_a_checks_own_keys_win(tmp_path):
    header = "form_rules: {max_lines: 1, loops: false, names_deny: [torch]}\n"
    pack = load_pack(write(tmp_path, header=header, checks=CHECK + FORM + "        max_lines: 3\n"))
    rules = pack.exercises()[0][1].checks[1]
    assert (rules.max_lines, rules.loops, rules.names_deny) == (3, False, ["torch"])
    assert pack.exercises()[0][1].checks[0].kind == "tensor"  # other kinds are left alone


def test_form_rules_mistakes_are_located_in_pack_yaml(tmp_path):
    found = problems(write(tmp_path, header="form_rules: {max_lines: 0, loop: false}\n"))
    assert any("pack.yaml:5:25: form_rules.max_lines" in p for p in found), found
    assert any("unknown key 'loop' (did you mean 'loops'?)" in p and "pack.yaml:5:" in p for p in found), found


def test_a_form_check_with_no_rule_anywhere_is_refused_at_its_place(tmp_path):
    found = problems(write(tmp_path, checks=CHECK + FORM))
    assert any("lesson.yaml:17:9" in p and "a form check needs a rule" in p for p in found), found


def test_a_cached_pack_keeps_its_prelude_and_an_edit_of_the_file_is_seen(tmp_path):
    from tutor.pack import packcache

    folder = tmp_path / "pack"
    folder.mkdir()
    write(folder, header="prelude_file: helpers.py\n", files={"helpers.py": "x = 1\n"})
    packcache.load(folder, tmp_path / "cache")
    cached = packcache.read(folder, tmp_path / "cache")
    assert cached is not None and cached.exercises()[0][1].prelude_code == "x = 1\n"
    (folder / "helpers.py").write_text("x = 22\n")  # another size: the entry is stale
    assert packcache.read(folder, tmp_path / "cache") is None
