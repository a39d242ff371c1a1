"""Issue 50: a learner's error message and folder name carry terminal controls (ESC, BEL, C1),
bidi overrides and characters XML 1.0 forbids. None reaches a file `grade` or the Gradescope
runner writes raw; the JUnit file always parses."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tutor.pack.scaffold import scaffold

#: Everything a hostile message may carry: ESC (an OSC title sequence ended by BEL), a C1 CSI and
#: NEL, DEL, NUL, a vertical tab, the right-to-left override and an isolate, the Arabic letter mark,
#: and U+FFFE / U+FFFF, which XML 1.0 forbids.
HOSTILE = "\x1b]0;owned\x07 \x9b2J\x85 \x7f\x00\x0b \u202etxt.exe\u2066 \u061c \ufffe\uffff \ud800"
RAW = ["\x1b", "\x07", "\x9b", "\x85", "\x7f", "\x00", "\x0b", "\u202e", "\u2066", "\u061c", "\ufffe", "\uffff", "\ud800"]
FOLDER = "eve\x1b[31m\u202eevil\x07"
SUBMISSION = f"def bumped(t):\n    raise ValueError({HOSTILE!r})\n"


def tutor(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=600)


def raw_in(data: bytes) -> list[str]:
    text = data.decode("utf-8")
    return [repr(c) for c in RAW if c in text]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile-text")
    pack = base / "pack"
    scaffold(pack, title="Hostile text")
    subs = base / "subs"
    (subs / FOLDER).mkdir(parents=True)
    (subs / FOLDER / "add-to-copy.py").write_text(SUBMISSION)
    (subs / "mia").mkdir()
    (subs / "mia" / "add-to-copy.py").write_text(SUBMISSION)
    env = {"TORCH_TUTOR_DATA_DIR": str(base / "data"), "TORCH_TUTOR_CONFIG_DIR": str(base / "config"),
           "TORCH_TUTOR_WALL_TIME": "20"}
    out = base / "out"
    out.mkdir()
    done = tutor("grade", str(pack), str(subs), "--csv", str(out / "grades.csv"), "--json",
                 str(out / "grades.json"), "--junit", str(out / "grades.xml"), "--feedback", str(out / "feedback"),
                 "--totals", str(out / "totals.csv"), env=env)
    gradescope = tutor("autograder", str(pack), "--run", str(subs / "mia"), "--results",
                       str(out / "results.json"), env=env)
    return {"done": done, "out": out, "gradescope": gradescope}


def test_grade_finishes_and_says_the_message(graded):
    done = graded["done"]
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert not [c for c in RAW if c in done.stdout + done.stderr]


def test_the_junit_file_parses_and_shows_the_message_inert(graded):
    path = graded["out"] / "grades.xml"
    assert raw_in(path.read_bytes()) == []
    root = ET.parse(path).getroot()  # "not well-formed (invalid token)" before
    suites = {s.get("name"): s for s in root}
    assert set(suites) == {"mia", "eve␛[31m\\u202eevil␇"}
    error = suites["mia"].find("testcase").find("error")
    assert "ValueError: ␛]0;owned␇" in error.get("message")
    assert "\\u202etxt.exe" in error.get("message")


def test_the_csv_files_carry_no_control_character(graded):
    for name in ("grades.csv", "totals.csv"):
        data = (graded["out"] / name).read_bytes()
        assert raw_in(data) == [], name
    rows = list(csv.DictReader(io.StringIO((graded["out"] / "grades.csv").read_text(encoding="utf-8"))))
    assert {r["learner"] for r in rows} == {"mia", "eve␛[31m\\u202eevil␇"}
    assert all("ValueError: ␛]0;owned␇" in r["message"] for r in rows)


def test_the_json_and_feedback_carry_no_control_character(graded):
    data = (graded["out"] / "grades.json").read_bytes()
    assert raw_in(data) == []
    for row in json.loads(data)["rows"]:  # JSON's own \u001b escapes would still give ESC here
        assert not [c for c in RAW if c in json.dumps(row, ensure_ascii=False)]
    files = sorted((graded["out"] / "feedback").iterdir())
    assert len(files) == 2
    for path in files:
        text = path.read_bytes()
        assert raw_in(text) == [], path.name
        assert "ValueError: ␛]0;owned␇" in text.decode("utf-8")


def test_gradescope_results_carry_no_control_character(graded):
    assert graded["gradescope"].returncode == 0, graded["gradescope"].stderr
    data = (graded["out"] / "results.json").read_bytes()
    results = json.loads(data)
    assert not [c for c in RAW if c in json.dumps(results, ensure_ascii=False)]
    assert "ValueError: ␛]0;owned␇" in results["tests"][0]["output"]


def test_validate_junit_parses_whatever_a_run_printed(tmp_path):
    """`validate --junit`: a run's summary and problems carry what the pack's code printed (an
    example's `print("\\x1b]0;x\\x07")`), which the YAML check cannot see in its source."""
    from tutor.pack.problems import Problem
    from tutor.grading.validate import StepRun, junit_xml

    run = StepRun("basics", "show", "example", False, f"output differs: {HOSTILE}", 0.1,
                  [Problem(tmp_path / "lesson.yaml", 3, 1, f"got {HOSTILE}")])
    xml = junit_xml([("pack", [run])])
    assert not [c for c in RAW if c in xml]
    failure = ET.fromstring(xml).find("testsuite").find("testcase").find("failure")
    assert "␛]0;owned␇" in failure.get("message") and "␛]0;owned␇" in failure.text
