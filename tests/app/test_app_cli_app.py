"""`torch-tutor progress`, `reset` and `open`, run as a learner runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from app_support import MINI, learner_store
from tutor.record.progress import ProgressStore


def tutor(*args: str, data_dir, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(data_dir / "config")
    return subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(data_dir), "--pack", str(MINI), *args],
                          capture_output=True, text=True, input=stdin, env=env, timeout=120)


def _seed(data_dir):
    store = learner_store(data_dir)
    store.positions.set("mini", "exercises", "double")
    store.steps.visit("mini", "basics", "intro")
    store.drafts.save("mini", "exercises", "double", "def double(x):\n    return x * 2\n")
    store.answers.record_attempt("mini", "exercises", "double", "check", passed=True, checks_passed=1, checks_total=1)
    store.answers.record_quiz("mini", "basics", "which-dim", "0", True)
    store.close()


def test_progress_json_reports_each_lesson(tmp_path):
    _seed(tmp_path)
    proc = tutor("progress", "--json", data_dir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    (pack,) = data["packs"]
    assert pack["pack"] == "mini" and pack["position"] == ["exercises", "double"]
    basics, exercises = pack["lessons"]
    assert basics["state"] == "progress" and basics["quiz_correct"] == 1
    assert exercises["state"] == "done" and exercises["exercises_solved"] == 1


def test_progress_text_reads_like_a_report(tmp_path):
    _seed(tmp_path)
    proc = tutor("progress", data_dir=tmp_path)
    assert proc.returncode == 0
    assert "Mini pack (mini)" in proc.stdout and "in progress" in proc.stdout
    assert "1/1 exercises" in proc.stdout and "resume at: Fixing code › Double it" in proc.stdout


def test_progress_with_nothing_done(tmp_path):
    proc = tutor("progress", data_dir=tmp_path)
    assert proc.returncode == 0 and "No progress yet" in proc.stdout


def test_reset_asks_and_does_nothing_without_a_yes(tmp_path):
    _seed(tmp_path)
    proc = tutor("reset", "mini", data_dir=tmp_path)  # no terminal, no --yes: refuse, exit 2
    assert proc.returncode == 2 and "--yes" in proc.stderr
    assert ProgressStore.open(tmp_path).drafts.get("mini", "exercises", "double") is not None


def test_reset_one_exercise_keeps_the_rest(tmp_path):
    _seed(tmp_path)
    proc = tutor("reset", "mini/double", "--yes", data_dir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "exercise exercises/double" in proc.stdout
    store = ProgressStore.open(tmp_path)
    assert store.drafts.get("mini", "exercises", "double") is None
    assert store.steps.get("mini", "basics", "which-dim").quiz_correct is True


def test_reset_everything(tmp_path):
    _seed(tmp_path)
    proc = tutor("reset", "--yes", data_dir=tmp_path)
    assert proc.returncode == 0
    assert ProgressStore.open(tmp_path).packs() == []


def test_reset_unknown_exercise_is_a_usage_error(tmp_path):
    proc = tutor("reset", "mini/nope", "--yes", data_dir=tmp_path)
    assert proc.returncode == 2 and "no exercise 'nope'" in proc.stderr


def test_open_unknown_pack_or_lesson_is_a_usage_error(tmp_path):
    proc = tutor("open", "no-such-pack", data_dir=tmp_path)
    assert proc.returncode == 2 and "no pack 'no-such-pack'" in proc.stderr
    proc = tutor("open", "mini/no-such-lesson", data_dir=tmp_path)
    assert proc.returncode == 2 and "has no lesson 'no-such-lesson'" in proc.stderr


def test_global_options_work_after_the_subcommand_too(tmp_path, capsys):
    """`torch-tutor progress --data-dir D` was a usage error; now it reads D's progress."""
    from tutor.cli.main import main
    from tutor.record.progress import ProgressStore

    data = tmp_path / "data"
    store = ProgressStore.open(data)
    store.positions.set("mini", "basics", "intro")
    store.steps.visit("mini", "basics", "intro")
    store.close()
    mini = str(MINI)
    assert main(["progress", "--data-dir", str(data), "--pack", mini]) == 0
    after = capsys.readouterr().out
    assert main(["--data-dir", str(data), "--pack", mini, "progress"]) == 0
    before = capsys.readouterr().out
    assert after == before and "Mini pack" in after
    assert main(["--pack", mini, "list", "--pack", str(tmp_path / "nowhere"), "--data-dir", str(data)]) == 0
    listed = capsys.readouterr().out
    assert "mini" in listed


def _without_terminal(data_dir, *args: str, stdin=subprocess.DEVNULL) -> subprocess.CompletedProcess:
    """The app's commands with no terminal: before the fix they drew the app into the pipe and
    waited for keys until killed (here: the timeout)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(data_dir / "config")
    return subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(data_dir), "--pack", str(MINI), *args],
                          stdin=stdin, capture_output=True, text=True, env=env, timeout=60)


def test_the_app_without_a_terminal_says_so_in_one_line_and_exits_2(tmp_path):
    _seed(tmp_path)
    for argv in (["review"], [], ["open", "mini"], ["review", "--pack", "mini"]):
        proc = _without_terminal(tmp_path, *argv)
        assert proc.returncode == 2, (argv, proc.stderr)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and "needs a terminal" in lines[0], (argv, proc.stderr)
        assert "torch-tutor check" in lines[0] and "review --due" in lines[0]
        assert proc.stdout == "", argv  # nothing drawn
    store = ProgressStore.open(tmp_path)  # nothing lost, and the folder is not left marked in use
    assert store.drafts.get("mini", "exercises", "double") == "def double(x):\n    return x * 2\n"
    assert store.positions.get("mini") == ("exercises", "double")
    assert store.claim() is None
    store.close()


def test_keys_from_a_terminal_but_drawing_into_a_pipe_is_refused_too(tmp_path):
    """Textual draws on standard error: a terminal on stdin is not enough."""
    import pty

    leader, follower = pty.openpty()
    try:
        proc = _without_terminal(tmp_path, "open", "mini", stdin=follower)
    finally:
        os.close(leader)
        os.close(follower)
    assert proc.returncode == 2 and "needs a terminal" in proc.stderr


def test_a_wrong_target_is_still_the_first_thing_said_without_a_terminal(tmp_path):
    proc = _without_terminal(tmp_path, "open", "no-such-pack")
    assert proc.returncode == 2 and "no pack 'no-such-pack'" in proc.stderr
    assert "terminal" not in proc.stderr
    proc = _without_terminal(tmp_path, "review", "--due")  # the command that works without one
    assert proc.returncode == 0 and "terminal" not in proc.stderr


@pytest.mark.parametrize("language, done, left", [("en", "done", "in progress"), ("zh", "已完成", "进行中")])
def test_a_lesson_paged_through_is_not_done_until_its_questions_are_answered(tmp_path, mini_pack, language,
                                                                            done, left):
    """Issue 52, item 7: paging past the questions made a lesson "done … quiz 0/2" in
    `torch-tutor progress` (Chinese: "已完成 20/20 步，测验 0/19"). Done means every exercise
    solved and every question answered; until then the lesson is in progress, its counts say
    what is left."""
    import os
    import subprocess
    import sys

    from app_support import MINI, learner_store

    store = learner_store(tmp_path)
    for step in mini_pack.lessons[0].steps:  # every step of Basics seen, no question answered
        store.steps.visit("mini", "basics", step.id)
    assert store.summarize(mini_pack).lessons[0].state == "progress"
    store.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(tmp_path / "config")

    def progress() -> str:
        out = subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(tmp_path), "--pack", str(MINI),
                              "--language", language, "progress"], capture_output=True, text=True, env=env,
                             timeout=120, check=True).stdout
        return next(line for line in out.splitlines() if "Basics" in line or "基础" in line)

    row = progress()
    assert left in row and done not in row, row
    store = learner_store(tmp_path)
    for step in mini_pack.lessons[0].steps:
        if step.id.startswith(("which", "why", "predict")):
            store.answers.record_quiz("mini", "basics", step.id, "x", False)
    assert store.summarize(mini_pack).lessons[0].state == "done"  # answered: wrong answers count too
    store.close()
    row = progress()
    assert done in row, row
