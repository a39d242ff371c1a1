"""Who is a learner and which file counts: rosters, precedence, hostile names (no sandbox needed)."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tutor.grading.gradebook import (Row, RosterError, clean_name, collect, load_roster, parse_shard, shard_of)
from tutor.grading.output import csv_cell, to_csv, to_totals
from tutor.record.handin import write_handin
from tutor.pack.loader import load_pack
from tutor.pack.scaffold import scaffold

RIGHT = "def bumped(t):\n    return t + 1\n"
WRONG = "def bumped(t):\n    t += 1\n    return t\n"
ESC = "\x1b]52;c;aGVsbG8=\x07\x1b]0;pwned\x07"


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    folder = tmp_path_factory.mktemp("p") / "pack"
    scaffold(folder, title="Collect test")
    return load_pack(folder)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _handin(path: Path, learner: str, code: str, pack_id: str = "pack") -> Path:
    return write_handin(path, learner=learner, pack_id=pack_id, pack_version="0.1.0", tutor_version="t",
                        exercises={"add-to-copy": (code, True)}, quizzes={})


def by(collection) -> dict[tuple[str, str], object]:
    return {(s.learner, s.exercise): s for s in collection.submissions}


def test_a_top_level_archive_can_never_claim_a_learners_folder(pack, tmp_path):
    root = _write(tmp_path / "subs", {"learner00/add-to-copy.py": RIGHT})
    _handin(root / "zz-impostor.handin.zip", "learner00", WRONG)
    found = by(collect(pack, root))
    assert found[("learner00", "add-to-copy")].code == RIGHT
    refused = found[("zz-impostor.handin.zip", "-")]
    assert refused.status == "refused" and "who has a folder" in refused.message


def test_two_top_level_archives_for_one_learner_are_both_refused(pack, tmp_path):
    root = tmp_path / "subs"
    root.mkdir()
    _handin(root / "a.handin.zip", "sam", RIGHT)
    _handin(root / "b.handin.zip", "sam", WRONG)
    found = by(collect(pack, root))
    assert found[("a.handin.zip", "-")].status == found[("b.handin.zip", "-")].status == "refused"
    assert "2 archives at the top name learner 'sam'" in found[("a.handin.zip", "-")].message
    assert ("sam", "add-to-copy") not in found


def test_a_loose_file_beats_an_archive_in_the_same_folder_whatever_the_names(pack, tmp_path):
    root = _write(tmp_path / "subs", {"amy/add-to-copy.py": RIGHT})
    _handin(root / "amy" / "zzz-later.handin.zip", "amy", WRONG)  # sorts after the .py file
    _handin(root / "amy" / "aaa-earlier.handin.zip", "amy", WRONG)  # and before it
    sub = by(collect(pack, root))[("amy", "add-to-copy")]
    assert sub.code == RIGHT and sub.handed_in_from == "file mtime"


def test_an_archive_in_a_folder_belongs_to_the_folder_not_to_its_manifest(pack, tmp_path):
    root = tmp_path / "subs"
    (root / "amy").mkdir(parents=True)
    (root / "bob").mkdir()
    _handin(root / "amy" / "x.handin.zip", "bob", WRONG)
    found = by(collect(pack, root))
    assert found[("amy", "add-to-copy")].code == WRONG
    assert found[("bob", "add-to-copy")].status == "missing"


def test_hidden_names_get_a_notice(pack, tmp_path):
    root = _write(tmp_path / "subs", {".alice/add-to-copy.py": RIGHT, "bob/.draft.py": RIGHT,
                                      "bob/add-to-copy.py": RIGHT})
    collection = collect(pack, root)
    assert [s.learner for s in collection.submissions] == ["bob"]
    assert any(n.startswith(".alice: a hidden name") for n in collection.ignored)
    assert any(n.startswith("bob/.draft.py: a hidden name") for n in collection.ignored)


def test_names_from_folders_and_manifests_are_neutralised(pack, tmp_path):
    root = _write(tmp_path / "subs", {f"eve{ESC}/add-to-copy.py": RIGHT})
    _handin(root / "x.handin.zip", f"mal{ESC}lory", RIGHT)
    learners = {s.learner for s in collect(pack, root).submissions}
    assert len(learners) == 2
    assert not any("\x1b" in name or "\x07" in name for name in learners)
    assert "eve␛]52;c;aGVsbG8=␇␛]0;pwned␇" in learners


def test_the_command_prints_no_escape_from_a_name(pack, tmp_path):
    root = _write(tmp_path / "subs", {f"eve{ESC}/add-to-copy.py": "\x00"})  # binary: nothing runs
    out = subprocess.run([sys.executable, "-m", "tutor", "grade", str(pack.root), str(root), "--unisolated"],
                         capture_output=True, text=True, env={**os.environ, "TORCH_TUTOR_DATA_DIR": str(tmp_path / "d"),
                                                              "TORCH_TUTOR_ISOLATION": "none"}, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "eve␛]52" in out.stdout
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout
    assert "\x1b" not in out.stderr.replace("\x1b[K", "")


def test_roster_missing_learners_and_strays(pack, tmp_path):
    root = _write(tmp_path / "subs", {"ann/add-to-copy.py": RIGHT, "s1002/add-to-copy.py": WRONG,
                                      "dan/add-to-copy.py": RIGHT, "grades.csv": "a,b\n"})
    _handin(root / "zed.handin.zip", "zed", RIGHT)
    roster = tmp_path / "roster.csv"
    roster.write_text("\ufeffLearner,ID,Email\nann,s1001,ann@example.org\nben,s1002,ben@example.org\n"
                      "cat,s1003,cat@example.org\n")
    collection = collect(pack, root, load_roster(roster))
    found = by(collection)
    assert set(found) == {("ann", "add-to-copy"), ("ben", "add-to-copy"), ("cat", "add-to-copy")}
    assert found[("ben", "add-to-copy")].code == WRONG  # the folder named by the roster's id
    assert found[("cat", "add-to-copy")].status == "missing"
    assert found[("cat", "add-to-copy")].message == "nothing handed in"
    assert (found[("ben", "add-to-copy")].learner_id, found[("ben", "add-to-copy")].email) == \
        ("s1002", "ben@example.org")
    ignored = "\n".join(collection.ignored)
    assert "dan/: not on the roster" in ignored and "grades.csv: not a learner's folder" in ignored
    assert "zed.handin.zip: for 'zed', who is not on the roster" in ignored


@pytest.mark.parametrize("text, message", [
    ("name,email\nann,a@x\n", "no 'learner' column"),
    ("learner\nann\nann\n", "roster.csv:3: 'ann' is already on line 2"),
    ("learner,id\nann,1\n,2\n", "roster.csv:3: the learner cell is empty"),
    ("learner\n", "lists no learners"),
    ("", "is empty"),
])
def test_bad_rosters_say_why(tmp_path, text, message):
    path = tmp_path / "roster.csv"
    path.write_text(text)
    with pytest.raises(RosterError, match=message):
        load_roster(path)


def test_roster_not_utf8(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_bytes("learner\nZo\xeb\n".encode("latin-1"))
    with pytest.raises(RosterError, match="not UTF-8"):
        load_roster(path)


def test_a_bad_roster_is_a_usage_error_before_anything_runs(pack, tmp_path):
    (tmp_path / "subs" / "ann").mkdir(parents=True)
    (tmp_path / "roster.csv").write_text("name\nann\n")
    out = subprocess.run([sys.executable, "-m", "tutor", "grade", str(pack.root), str(tmp_path / "subs"),
                          "--roster", str(tmp_path / "roster.csv")], capture_output=True, text=True,
                         env={**os.environ, "TORCH_TUTOR_DATA_DIR": str(tmp_path / "d")}, timeout=120)
    assert out.returncode == 2 and "no 'learner' column" in out.stderr and "Traceback" not in out.stderr


def test_spreadsheet_formulas_are_defused(tmp_path):
    rows = [Row("=HYPERLINK(\"http://x\")", "add-to-copy", False, 0, 3, "failed", "+cmd|' /C calc'!A0"),
            Row("@SUM(A1)", "-", False, 0, 0, "bad-archive", "-2+3"),
            Row("plain", "-", False, 0, 0, "bad-archive", "fine")]
    rows[0].learner_id = "-1+1"
    data = list(csv.reader(io.StringIO(to_csv(rows))))
    assert data[1][0] == "'=HYPERLINK(\"http://x\")" and data[1][1] == "'-1+1"
    assert data[1][10] == "'+cmd|' /C calc'!A0"
    assert data[2][0] == "'@SUM(A1)" and data[2][3] == "-" and data[2][10] == "'-2+3"
    assert data[3][0] == "plain"
    assert csv_cell(-1.5) == "-1.5"  # numbers stay numbers
    totals = to_totals({"pack": "p", "items": ["add-to-copy"], "max_points": 1.0}, rows)
    assert "'=HYPERLINK" in totals


def test_a_huge_name_does_not_flood_the_terminal(capsys):
    from tutor.cli.grading import print_rows

    print_rows([Row("A" * 900_000, "add-to-copy", False, 0, 3, "failed", "m" * 900_000)])
    out = capsys.readouterr().out
    assert len(out) < 300 and "…" in out


def test_a_million_member_archive_costs_one_row(pack, tmp_path):
    from tests.instructor.test_archives import _million_member_zip

    root = tmp_path / "subs"
    (root / "amy").mkdir(parents=True)
    _million_member_zip(root / "amy" / "many.handin.zip", 1_000_000)
    found = by(collect(pack, root))
    assert found[("amy", "-")].status == "bad-archive"
    assert "1,000,000 files" in found[("amy", "-")].message
    assert found[("amy", "add-to-copy")].status == "missing"


def test_shards_partition_the_class(pack, tmp_path):
    root = _write(tmp_path / "subs", {f"l{i:02d}/add-to-copy.py": RIGHT for i in range(11)})
    subs = collect(pack, root).submissions
    parts = [{s.learner for s in shard_of(subs, k, 3)} for k in (1, 2, 3)]
    assert set().union(*parts) == {s.learner for s in subs}
    assert sum(len(p) for p in parts) == 11 and all(len(p) in (3, 4) for p in parts)
    assert parse_shard("2/3") == (2, 3)
    for bad in ("0/3", "4/3", "x", "1/0", "1-2"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def test_clean_name_keeps_ordinary_names():
    assert clean_name("Zoë O'Brien-Smith") == "Zoë O'Brien-Smith"
    assert clean_name("a\udcffb") == "a\ufffdb"


def test_feedback_shows_learner_names_and_run_text_as_text_only():
    from tutor.grading.output import feedback_markdown

    meta = {"pack": "p", "pack_version": "1", "pack_title": "P", "items": ["ex"]}
    name = "eve\n![track](http://evil.example/a.png) <img src=x>"
    row = Row(name, "ex", False, 0, 1, "error", "```\n[click](http://evil.example) ````")
    text = feedback_markdown(meta, name, [row])
    assert "feedback for eve \\!\\[track\\](http://evil.example/a.png) \\<img src=x\\>" in text
    assert "`````text\n```\n[click](http://evil.example) ````\n`````" in text  # fenced longer than inside


@pytest.mark.parametrize("args, message", [
    (["--shard", "3/2"], "--shard K/N needs 1 <= K <= N"),
    (["--shard", "half"], "--shard takes K/N"),
    (["--deadline", "next friday"], "--deadline takes an ISO 8601 date and time"),
    (["--workers", "0"], "--workers must be at least 1"),
])
def test_bad_grade_options_are_usage_errors(pack, tmp_path, args, message):
    (tmp_path / "subs" / "ann").mkdir(parents=True)
    out = subprocess.run([sys.executable, "-m", "tutor", "grade", str(pack.root), str(tmp_path / "subs"), *args],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "TORCH_TUTOR_DATA_DIR": str(tmp_path / "d")})
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("insert, message", [
    ("    deadline: '2026-12-01T23:59'\n", "a deadline needs a UTC offset"),
    ("    deadline: 'friday'\n", "not an ISO 8601 date and time"),
    ("    points: -1\n", "greater than or equal to 0"),
    ("    late_penalty: {per_day: 0}\n", "greater than 0"),
    ("    late_penalty: {per_day: 10, max: 150}\n", "less than or equal to 100"),
    ("    late_penalty: {per_days: 10}\n", "per_day"),
])
def test_pack_grading_fields_are_validated(tmp_path, insert, message):
    from tutor.pack.loader import PackError

    folder = tmp_path / "pack"
    scaffold(folder)
    lesson = folder / "01-first-lesson.yaml"
    lesson.write_text(lesson.read_text().replace("    kind: exercise\n", "    kind: exercise\n" + insert))
    with pytest.raises(PackError, match=message):
        load_pack(folder)


def test_pack_deadline_with_z_is_accepted(tmp_path):
    folder = tmp_path / "pack"
    scaffold(folder)
    lesson = folder / "01-first-lesson.yaml"
    lesson.write_text(lesson.read_text().replace("    kind: exercise\n",
                                                 "    kind: exercise\n    deadline: '2026-12-01T23:59:00Z'\n"))
    assert load_pack(folder).exercises()[0][1].deadline == "2026-12-01T23:59:00Z"


def test_autograder_usage_errors(pack, tmp_path):
    (tmp_path / "not-a-wheel.txt").write_text("x")
    env = {**os.environ, "TORCH_TUTOR_DATA_DIR": str(tmp_path / "d")}
    for args, message in ((["--gradescope", str(tmp_path / "b.zip"), "--tutor-wheel", str(tmp_path / "not-a-wheel.txt")],
                           "is not a wheel file"),
                          (["--run", str(tmp_path)], "--run needs --results FILE"),
                          (["--gradescope", str(tmp_path / "b.zip"), "--results", "r.json"], "--results goes with --run"),
                          (["--gradescope", str(tmp_path / "b.zip"), "--python", "2.7"], "--python takes a version"),
                          (["--github-classroom", str(tmp_path / "gc"), "--no-dependency-wheels"],
                           "go with --gradescope"),
                          ([], "one of the arguments")):
        out = subprocess.run([sys.executable, "-m", "tutor", "autograder", str(pack.root), *args], capture_output=True,
                             text=True, timeout=120, env=env)
        assert out.returncode == 2 and message in out.stderr, (args, out.stderr)
    assert not (tmp_path / "b.zip").exists()


def test_a_learner_cannot_hand_in_a_classmates_file_by_symlink(pack, tmp_path):
    root = _write(tmp_path / "subs", {"bob/add-to-copy.py": RIGHT, "amy/notes.txt": "x"})
    (root / "amy" / "add-to-copy.py").symlink_to(root / "bob" / "add-to-copy.py")
    (root / "cal").symlink_to(root / "bob", target_is_directory=True)
    found = by(collect(pack, root))
    assert found[("amy", "add-to-copy")].status == "refused"
    assert "into another learner's folder" in found[("amy", "add-to-copy")].message
    assert found[("cal", "-")].status == "refused" and ("cal", "add-to-copy") not in found
    assert found[("bob", "add-to-copy")].code == RIGHT
