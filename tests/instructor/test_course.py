"""Grading a course end to end: roster, points and weights, quiz points, deadlines, feedback,
totals, a cache that re-grades exactly what changed, shards merged, isolation refused or accepted.
Real pack, real sandbox, real files."""

from __future__ import annotations

import csv
import io
import json
import os
import resource
import signal
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from tests.instructor.handins import handin_at
from tutor.pack.scaffold import scaffold

RIGHT = "def bumped(t):\n    return t + 1\n"
WRONG = "def bumped(t):\n    t += 1\n    return t\n"
DEADLINE = "2026-06-01T00:00:00+00:00"


def tutor(*args: str, env: dict[str, str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=600, **kwargs)


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def make_pack(folder: Path, *, changed: bool = False) -> Path:
    """The scaffold's pack with points, weights, a deadline, a second exercise and a graded quiz.
    ``changed``: the same id and version, with one check of `add-two` loosened."""
    scaffold(folder, title="Course test")
    lesson = folder / "01-first-lesson.yaml"
    text = lesson.read_text()
    start = text.index("  - id: add-to-copy")
    exercise = text[start:]
    second = exercise.replace("id: add-to-copy", "id: add-two")
    if changed:  # keep only the values check: the starter then passes add-two
        second = second[:second.index("      - id: caller-unchanged")] + second[second.index("    # Progressive"):]
    first = exercise.replace("    kind: exercise\n", "    kind: exercise\n    points: 4\n"
                             "    deadline: '2026-04-01T00:00:00+00:00'\n")
    first = first.replace("        description: returns t + 1\n", "        description: returns t + 1\n"
                          "        weight: 2\n")
    second = second.replace("    kind: exercise\n", "    kind: exercise\n    points: 2\n")
    text = text[:start] + first + second
    text = text.replace("    style: choice\n", "    style: choice\n    points: 1\n")
    lesson.write_text(text)
    return folder


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("course")
    pack = make_pack(base / "pack")
    changed = make_pack(base / "changed" / "pack", changed=True)
    subs = base / "subs"
    (subs / "ann").mkdir(parents=True)
    (subs / "dan").mkdir()
    (subs / "ann" / "add-to-copy.py").write_text(RIGHT)
    os.utime(subs / "ann" / "add-to-copy.py", (_epoch("2026-05-01T00:00:00+00:00"),) * 2)
    (subs / "ann" / "add-two.py").write_text(WRONG)
    os.utime(subs / "ann" / "add-two.py", (_epoch("2026-07-01T00:00:00+00:00"),) * 2)
    (subs / "dan" / "add-to-copy.py").write_text(RIGHT)
    (subs / "notes.csv").write_text("not a learner\n")
    handin_at(subs / "ben.handin.zip", "ben", "2026-05-15T12:00:00+0000",
              {"add-to-copy": WRONG, "add-two": RIGHT},
              {"first-lesson/which-is-a-view": {"answer": "0", "correct": True}})
    roster = base / "roster.csv"
    roster.write_text("learner,id,email\nann,1001,ann@example.org\nben,1002,ben@example.org\n"
                      "cat,1003,cat@example.org\n")
    env = {"TORCH_TUTOR_DATA_DIR": str(base / "data"), "TORCH_TUTOR_CONFIG_DIR": str(base / "config")}
    out = base / "out"
    outputs = ["--csv", str(out / "all.csv"), "--json", str(out / "all.json"), "--totals", str(out / "totals.csv")]
    common = [str(subs), "--roster", str(roster), "--deadline", DEADLINE]
    out.mkdir()
    runs = {
        "first": tutor("grade", str(pack), *common, *outputs, "--junit", str(out / "all.xml"),
                       "--feedback", str(out / "feedback"), env=env),
        "changed": tutor("grade", str(changed), *common, "--json", str(out / "changed.json"), env=env),
    }
    for k in (1, 2):
        runs[f"shard{k}"] = tutor("grade", str(pack), *common, "--shard", f"{k}/2", "--json",
                                  str(out / f"shard{k}.json"), env=env)
    runs["merge"] = tutor("grade-merge", str(out / "shard2.json"), str(out / "shard1.json"), "--csv",
                          str(out / "merged.csv"), "--totals", str(out / "merged-totals.csv"), "--feedback",
                          str(out / "merged-feedback"), "--json", str(out / "merged.json"), env=env)
    return {"base": base, "out": out, "runs": runs, "pack": pack, "subs": subs, "env": env}


def rows(path: Path) -> dict[tuple[str, str], dict]:
    return {(r["learner"], r["exercise"]): r for r in csv.DictReader(io.StringIO(path.read_text()))}


def test_every_run_succeeds(course):
    for name, run in course["runs"].items():
        assert run.returncode == 0, (name, run.stderr)
        assert "Traceback" not in run.stderr, name


def test_roster_rows_points_and_late_flags(course):
    got = rows(course["out"] / "all.csv")
    expected = {  # (status, points, max_points, late, handed_in_from, learner_id)
        ("ann", "add-to-copy"): ("passed", "4", "4", "true", "file mtime", "1001"),  # the exercise's own deadline
        ("ann", "add-two"): ("failed", "0.67", "2", "true", "file mtime", "1001"),  # 1 of 3 checks, rounded
        # ann handed in loose files, which carry no quiz answer: the quiz is 0 of its point, and says why
        ("ann", "first-lesson/which-is-a-view"): ("missing", "0", "1", "", "", "1001"),
        ("ben", "add-to-copy"): ("failed", "2", "4", "true", "archive", "1002"),  # weight 2 of 4 passed
        ("ben", "add-two"): ("passed", "2", "2", "false", "archive", "1002"),
        ("ben", "first-lesson/which-is-a-view"): ("passed", "1", "1", "false", "archive", "1002"),
        ("cat", "add-to-copy"): ("missing", "0", "4", "", "", "1003"),
        ("cat", "add-two"): ("missing", "0", "2", "", "", "1003"),
        ("cat", "first-lesson/which-is-a-view"): ("missing", "0", "1", "", "", "1003"),
    }
    assert {k: (r["status"], r["points"], r["max_points"], r["late"], r["handed_in_from"], r["learner_id"])
            for k, r in got.items()} == expected
    assert got[("ben", "add-two")]["handed_in"] == "2026-05-15T12:00:00+00:00"
    assert got[("ann", "add-to-copy")]["handed_in"] == "2026-05-01T00:00:00+00:00"
    stderr = course["runs"]["first"].stderr
    assert "notice: ignored dan/: not on the roster" in stderr
    assert "notice: ignored notes.csv" in stderr


def test_totals_for_the_gradebook(course):
    data = list(csv.reader(io.StringIO((course["out"] / "totals.csv").read_text())))
    assert data[0] == ["Student", "SIS User ID", "Email", "pack (7 points)", "Points Possible"]
    # ann 4 + 0.67 (2/3 of 2, rounded) of 7 (the quiz unanswered); ben 4 x 2/4 + 2 + 1; cat nothing
    assert data[1:] == [["ann", "1001", "ann@example.org", "4.67", "7"],
                        ["ben", "1002", "ben@example.org", "5", "7"],
                        ["cat", "1003", "cat@example.org", "0", "7"]]


def test_json_carries_every_check(course):
    data = json.loads((course["out"] / "all.json").read_text())
    ben = next(r for r in data["rows"] if (r["learner"], r["exercise"]) == ("ben", "add-to-copy"))
    assert [(c["id"], c["status"], c["weight"]) for c in ben["checks"]] == [
        ("values", "passed", 2.0), ("caller-unchanged", "failed", 1.0), ("new-memory", "failed", 1.0)]
    assert "caller's tensor" in ben["checks"][1]["message"]
    assert data["summary"]["isolation"]["level"] == "bwrap"
    assert data["summary"]["max_points"] == 7


def test_feedback_files(course):
    folder = course["out"] / "feedback"
    assert sorted(p.name for p in folder.iterdir()) == ["ann.md", "ben.md", "cat.md"]
    ben = (folder / "ben.md").read_text()
    assert "**5 of 7 points.**" in ben
    assert "## add-to-copy: failed, 2 of 4 points" in ben
    assert "- ✓ **passed**: returns t + 1 (weight 2)" in ben
    assert "- ✗ **failed**: leaves the caller's tensor as it was" in ben
    assert "Hint: `t += 1` writes into the caller's tensor" in ben  # the pack's hint for that check
    assert "Handed in 2026-05-15T12:00:00+00:00 (from the archive) (late)." in ben
    assert "nothing handed in" in (folder / "cat.md").read_text()


def test_a_changed_check_regrades_exactly_that_exercise(course):
    data = json.loads((course["out"] / "changed.json").read_text())
    got = {(r["learner"], r["exercise"]): r for r in data["rows"]}
    assert got[("ann", "add-to-copy")]["cached"] and got[("ben", "add-to-copy")]["cached"]
    assert not got[("ann", "add-two")]["cached"] and not got[("ben", "add-two")]["cached"]
    assert got[("ann", "add-two")]["why_not_cached"] == "the exercise changed"
    # same pack id and version, one check dropped: ann's starter-like code now passes add-two
    assert got[("ann", "add-two")]["status"] == "passed"
    assert "2 graded (2 the exercise changed), 2 from the cache" in course["runs"]["changed"].stderr


def test_shards_merged_equal_one_run(course):
    out = course["out"]
    s1 = {r["learner"] for r in json.loads((out / "shard1.json").read_text())["rows"]}
    s2 = {r["learner"] for r in json.loads((out / "shard2.json").read_text())["rows"]}
    assert s1 and s2 and not s1 & s2 and s1 | s2 == {"ann", "ben", "cat"}
    assert (out / "merged.csv").read_text() == (out / "all.csv").read_text()
    assert (out / "merged-totals.csv").read_text() == (out / "totals.csv").read_text()
    for path in (out / "feedback").iterdir():
        assert (out / "merged-feedback" / path.name).read_text() == path.read_text()
    merged = json.loads((out / "merged.json").read_text())
    assert merged["summary"]["shard"] is None and len(merged["rows"]) == 9  # 3 learners x 3 items (ann's quiz row too)


def test_merge_refuses_an_incomplete_set(course):
    out = course["out"]
    run = tutor("grade-merge", str(out / "shard1.json"), "--csv", str(out / "x.csv"), env=course["env"])
    assert run.returncode == 2 and "shard(s) 2 of 2 missing" in run.stderr
    run = tutor("grade-merge", str(out / "all.json"), "--csv", str(out / "x.csv"), env=course["env"])
    assert run.returncode == 2 and "is not a shard" in run.stderr
    run = tutor("grade-merge", str(out / "shard1.json"), str(out / "changed.json"), "--csv", str(out / "x.csv"),
                env=course["env"])
    assert run.returncode == 2 and "different packs" in run.stderr


def test_isolation_none_is_refused_before_anything_runs(course, tmp_path):
    marker = tmp_path / "ran"
    subs = tmp_path / "subs"
    (subs / "eve").mkdir(parents=True)
    (subs / "eve" / "add-to-copy.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n" + RIGHT)
    env = {**course["env"], "TORCH_TUTOR_ISOLATION": "none", "TORCH_TUTOR_DATA_DIR": str(tmp_path / "d")}
    refused = tutor("grade", str(course["pack"]), str(subs), "--csv", str(tmp_path / "g.csv"), env=env)
    assert refused.returncode == 2
    assert "refusing to grade at isolation 'none'" in refused.stderr
    for words in ("network access", "other learners' submissions", "/tmp", "install bubblewrap", "--unisolated"):
        assert words in refused.stderr
    # Who the submission would run as: root's runs each get a uid of their own.
    assert ("as a user of its own (you are root)" if os.geteuid() == 0 else "would run as you,") in refused.stderr
    assert not marker.exists() and not (tmp_path / "g.csv").exists()

    accepted = tutor("grade", str(course["pack"]), str(subs), "--unisolated", "--json", str(tmp_path / "g.json"),
                     env=env)
    assert accepted.returncode == 0, accepted.stderr
    summary = json.loads((tmp_path / "g.json").read_text())["summary"]
    assert summary["isolation"]["level"] == "none" and summary["isolation"]["accepted_unisolated"]
    assert "isolation: none (accepted with --unisolated)" in accepted.stderr.splitlines()[-1]
    # Where the runs' users cannot read this interpreter (a Python under /root), grade says so first.
    from tutor.sandbox.backends import choose
    from tutor.sandbox.isolation import UNREADABLE

    unreadable = [g for g in choose("none", sys.executable).gaps if g.startswith(UNREADABLE)]
    warned = [line for line in accepted.stderr.splitlines() if line.startswith(f"torch-tutor: warning: {UNREADABLE}")]
    assert len(warned) == len(unreadable), accepted.stderr


def test_a_damaged_cache_is_bypassed_with_a_notice(course, tmp_path):
    data = tmp_path / "d"
    data.mkdir()
    (data / "grade-cache.sqlite").write_bytes(b"this is not a database" * 100)
    subs = tmp_path / "subs"
    (subs / "eve").mkdir(parents=True)
    (subs / "eve" / "add-to-copy.py").write_text(RIGHT)
    run = tutor("grade", str(course["pack"]), str(subs), "--csv", str(tmp_path / "g.csv"),
                env={**course["env"], "TORCH_TUTOR_DATA_DIR": str(data)})
    assert run.returncode == 0, run.stderr
    assert "notice: the grade cache" in run.stderr and "is damaged" in run.stderr
    assert rows(tmp_path / "g.csv")[("eve", "add-to-copy")]["status"] == "passed"
    assert (data / "grade-cache.sqlite").read_bytes().startswith(b"this is not a database")  # left alone


def _small_files(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    return apply


def test_a_disk_that_fills_mid_batch_keeps_the_rows_done(course, tmp_path):
    subs = tmp_path / "subs"
    for i in range(6):
        (subs / f"learner{i}").mkdir(parents=True)
        (subs / f"learner{i}" / "add-to-copy.py").write_text(f"# {i}\n" + RIGHT)
    csv_path = tmp_path / "g.csv"
    # every file this grade writes may hold 600 bytes: the header and a few rows fit, the rest do not.
    # Two workers: rows finish out of order (a missing file at once), and are written in order.
    run = tutor("grade", str(course["pack"]), str(subs), "--csv", str(csv_path), "--no-cache", "--workers", "2",
                env={**course["env"], "TORCH_TUTOR_DATA_DIR": str(tmp_path / "d")}, preexec_fn=_small_files(600))
    assert "Traceback" not in run.stderr
    assert run.returncode == 1 and f"cannot write {csv_path}" in run.stderr
    kept = csv_path.read_text()
    table = list(csv.reader(io.StringIO(kept)))
    assert table[0][0] == "learner" and len(table) >= 2
    assert all(len(row) == 15 for row in table)  # whole rows only: a row cut by the full disk is taken back
    assert kept.endswith("\n") and table[1][:5] == ["learner0", "", "", "add-to-copy", "true"]
    # every submission was still graded and printed (2 exercises and the unanswered quiz each)
    assert sum(line.startswith("learner") for line in run.stdout.splitlines()) == 18
