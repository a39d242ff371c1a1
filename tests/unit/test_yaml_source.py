"""The one walk from a data path to its place in the YAML (``Source.walk``), and what it locates."""

from __future__ import annotations

import textwrap

import pytest

from tutor.core.loader import PackError, load_pack
from tutor.core.yaml_source import SourceError, read_source

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
