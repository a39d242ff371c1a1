"""Pack format, round 3 (issue 34): a pack prelude, more than one reference solution, dtype
aliases, and the mistakes a port makes first, each located as file:line:col with a hint."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tutor.core.loader import PackError, load_pack

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
    from tutor.core import packcache

    folder = tmp_path / "pack"
    folder.mkdir()
    write(folder, header="prelude_file: helpers.py\n", files={"helpers.py": "x = 1\n"})
    packcache.load(folder, tmp_path / "cache")
    cached = packcache.read(folder, tmp_path / "cache")
    assert cached is not None and cached.exercises()[0][1].prelude_code == "x = 1\n"
    (folder / "helpers.py").write_text("x = 22\n")  # another size: the entry is stale
    assert packcache.read(folder, tmp_path / "cache") is None
