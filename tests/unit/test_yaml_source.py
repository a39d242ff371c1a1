"""The one walk from a data path to its place in the YAML (``Source.walk``), and what it locates."""

from __future__ import annotations

import textwrap

import pytest

from tutor.pack.loader import PackError, load_pack
from tutor.pack.yaml_source import SourceError, read_source

DOC = textwrap.dedent("""\
    id: basics
    steps:
      - id: hello
        kind: prose
      - {id: two, kind: quiz}
    'yes': quoted
    yes: plain
    """)


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "lesson.yaml"
    path.write_text(DOC, encoding="utf-8")
    return read_source(path)


def test_a_path_leads_to_its_value_and_its_key(source):
    place = source.walk(("steps", 1, "kind"))
    assert place.found == ("steps", 1, "kind") and place.missed == () and place.value == "quiz"
    assert place.position() == (5, 21) and place.position(key=True) == (5, 15)
    assert source.walk(("steps", 0)).position(key=True) == (3, 5)  # a list item has no key: itself


def test_a_missing_element_stops_the_walk_at_the_deepest_place_found(source):
    place = source.walk(("steps", 0, "body", "en"))
    assert place.found == ("steps", 0) and place.missed == ("body", "en")
    assert source.locate(("steps", 7, "id")) == (3, 3)  # no step 7: the list
    assert source.locate(("nothing",)) == (1, 1)


def test_skip_passes_over_union_labels(source):
    place = source.walk(("steps", 1, "quiz", "choice", "kind"), skip=True)
    assert place.found == ("steps", 1, "kind") and place.missed == ("quiz", "choice")


def test_keys_are_matched_as_the_data_holds_them(source):
    """The quoted 'yes' is a string, the plain one a boolean: each path finds its own line."""
    assert source.locate(("yes",)) == (6, 8)
    assert source.locate((True,)) == (7, 6)


def test_a_key_yaml_reads_as_a_bool_or_number_is_located_on_its_own_line(make_pack):
    pack = make_pack(lessons=textwrap.dedent("""\
        lessons:
          - id: basics
            title: Basics
            steps:
              - id: hello
                kind: prose
                body: Hello.
                yes: 1
                2: two
        """))
    with pytest.raises(PackError) as caught:
        load_pack(pack)
    assert [(p.line, p.message) for p in caught.value.problems] == [
        (13, "lessons[0].steps[0][1]: Keys should be strings"),  # `yes`, read as true (== 1)
        (14, "lessons[0].steps[0][2]: Keys should be strings")]


def test_every_problem_of_a_file_comes_in_one_error(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text('a: !!python/object:os.system x\na: 2\nb: "\\e]52;c;x\\a"\n', encoding="utf-8")
    with pytest.raises(SourceError) as caught:
        read_source(path)
    assert [(p.line, p.message.split(":")[0]) for p in caught.value.problems] == [
        (1, "tag tag"), (2, "duplicate key 'a'"), (3, "control character U+001B (ESC) at character 1 of this text")]


def test_thousands_of_wrong_keys_in_one_mapping_are_reported_in_linear_time(make_pack):
    """Each problem is located by a walk; a walk that searched a mapping's keys one by one made
    30,000 unknown keys in one step take minutes (two minutes before this test existed)."""
    import time

    keys = "".join(f"        k{i}: v\n" for i in range(30_000))
    pack = make_pack(lessons="lessons:\n  - id: basics\n    title: Basics\n    steps:\n      - id: hello\n"
                             "        kind: prose\n        body: Hello.\n" + keys)
    started = time.perf_counter()
    with pytest.raises(PackError) as caught:
        load_pack(pack)
    assert time.perf_counter() - started < 45  # ~5 s on a loaded two-core machine
    problems = caught.value.problems
    assert len(problems) == 30_000
    assert str(problems[-1]).endswith(":30012:9: lessons[0].steps[0]: unknown key 'k29999'; "
                                      "allowed here: id, title, requires, body")


def test_a_scalar_where_a_record_belongs_names_the_mapping_it_takes(make_pack):
    """Pydantic would say 'Input should be a dictionary or an instance of Expect'."""
    pack = make_pack(lessons=textwrap.dedent("""\
        lessons:
          - id: basics
            title: Basics
            steps:
              - id: ex
                kind: example
                code: print(1)
                expect: 5
        """))
    with pytest.raises(PackError) as caught:
        load_pack(pack)
    assert [(p.line, p.message) for p in caught.value.problems] == [
        (13, "lessons[0].steps[0].expect: expected a mapping such as {output: ..., raises: ...}, got a number")]


# Issue 50: numbers YAML converts that Python cannot use. Each is one problem at file:line:col;
# none is a traceback, and none can take long to read (a sexagesimal integer of a million parts
# is a million bignum multiplications in PyYAML's constructor).
HUGE_NUMBERS = [
    ("1" * 5000, "an integer of more than 100 digits (5000 characters)"),
    ("-" + "9" * 101, "an integer of more than 100 digits: a pack's integers have at most 100"),
    ("0x" + "f" * 5000, "an integer of more than 100 digits (5002 characters)"),
    ("0x" + "f" * 84, "an integer of more than 100 digits"),  # 102 digits from 86 characters
    ("1" + ":00" * 400_000, "an integer of more than 100 digits (1200001 characters)"),
    ("1.0e+999", "'1.0e+999' is not a finite number"),  # YAML 1.1 reads 1e999 as a string
    (".inf", "'.inf' is not a finite number"),
    ("-.Inf", "'-.Inf' is not a finite number"),
    (".nan", "'.nan' is not a finite number"),
    ("1" * 5000 + ".5", "'11111111111111111111…' is not a finite number"),
]


@pytest.mark.parametrize("text, message", HUGE_NUMBERS, ids=[m.split(" (")[0][:30] + str(i)
                                                             for i, (_t, m) in enumerate(HUGE_NUMBERS)])
def test_a_number_python_cannot_use_is_one_problem_at_its_place(tmp_path, text, message):
    import time

    path = tmp_path / "numbers.yaml"
    path.write_text(f"ok: 12\nsizes:\n  - 1_000_000\n  - {text}\nrate: 1.5e-3\n", encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(SourceError) as caught:
        read_source(path)
    assert time.perf_counter() - started < 10
    [problem] = caught.value.problems
    assert (problem.line, problem.col) == (4, 5)
    assert problem.message.startswith(message), problem.message


def test_numbers_a_pack_uses_still_read_as_numbers(tmp_path):
    path = tmp_path / "numbers.yaml"
    path.write_text("a: 12\nb: -0x1F\nc: 1_000\nd: " + "9" * 100 + "\ne: 1.5e-3\nf: -2.0\ng: 017\nh: 1:30\n",
                    encoding="utf-8")
    assert read_source(path).data == {"a": 12, "b": -31, "c": 1000, "d": int("9" * 100), "e": 1.5e-3,
                                      "f": -2.0, "g": 15, "h": 90}


def test_an_exercise_worth_infinite_points_is_refused_where_it_is_written(make_pack):
    """`points: .inf` passed validation and reached `grade`'s arithmetic."""
    lesson = MINIMAL_EXERCISE_LESSON.replace("    kind: exercise\n", "    kind: exercise\n    points: .inf\n")
    pack = make_pack(files={"lesson.yaml": lesson}, lessons="lessons:\n  - lesson.yaml\n")
    with pytest.raises(PackError) as caught:
        load_pack(pack)
    assert [(p.file.name, p.line, p.message) for p in caught.value.problems] == [
        ("lesson.yaml", 6, "'.inf' is not a finite number: a pack's numbers are finite")]


MINIMAL_EXERCISE_LESSON = """\
id: basics
title: Basics
steps:
  - id: bump
    kind: exercise
    body: Bump it.
    contract:
      - {name: bumped, signature: bumped(t), description: t + 1}
    starter: |
      def bumped(t):
          return t
    solution: |
      def bumped(t):
          return t + 1
    checks:
      - id: values
        kind: tensor
        description: returns t + 1
        setup: x = torch.randn(3)
        value: bumped(x.clone())
        close_to: x + 1
"""
