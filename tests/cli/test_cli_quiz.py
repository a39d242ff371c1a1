"""`torch-tutor quiz PACK [LESSON]` (issue 51): a pack's quizzes in a plain terminal, answered at a
`?` prompt line by line, recorded as the app records them (progress, review cards), handed in by
`handin` and marked by `grade`. Driven through a real subprocess with a pipe for stdin, as a
script or a learner's redirect would; tests/e2e/test_e2e_quiz.py drives it in a terminal."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tutor.cli.common import cells
from tutor.pack.scaffold import scaffold

LESSON = "first-lesson"
CHOICE, FREE, PREDICT = "which-is-a-view", "why-views", "predict-view"
SEED = "fixed-seed"


def tutor(*args: str, data: Path, stdin: str = "", cwd: Path | None = None,
          timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(data.parent / "config")
    return subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(data), *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)


@pytest.fixture
def course(tmp_path: Path) -> dict[str, Path]:
    """The scaffold's pack (a free, a choice and a predict quiz), its choice quiz worth a point, and
    a data folder whose shuffle seed is known, so the test knows which letter is right."""
    pack = tmp_path / "views"
    scaffold(pack, title="Views")
    lesson = pack / "01-first-lesson.yaml"
    text = lesson.read_text()
    text = text.replace("    question: Which of these shares memory with `t`?\n",
                        "    question: Which of these shares memory with `t`?\n    points: 1\n")
    lesson.write_text(text)
    data = tmp_path / "data"
    from tutor.record.progress import ProgressStore
    from tutor.pack.quizzes.choice import SEED_PREFERENCE

    store = ProgressStore.open(data)
    store.preferences.set(SEED_PREFERENCE, SEED)
    store.close()
    return {"pack": pack, "data": data, "work": tmp_path}


def letters_for(pack: Path) -> tuple[str, str]:
    """(the right letter, a wrong letter) of the choice quiz, in the order this learner sees."""
    from tutor.pack.loader import load_pack
    from tutor.pack.quizzes.choice import choice_order

    loaded = load_pack(pack)
    quiz = next(s for lesson in loaded.lessons for s in lesson.steps if s.id == CHOICE)
    order = choice_order(len(quiz.choices), SEED, (loaded.id, LESSON, CHOICE), quiz.shuffle)
    right = "abc"[order.index(next(i for i, c in enumerate(quiz.choices) if c.correct))]
    wrong = next(letter for letter in "abc" if letter != right)
    return right, wrong


def recorded(data: Path) -> dict:
    from tutor.record.progress import ProgressStore

    store = ProgressStore.open(data)
    try:
        steps = store.steps.of_pack("views")
        cards = {step for _pack, _lesson, step in
                 ((c["pack"], c["lesson"], c["step"]) for c in store.cards.all(["views"]))}
        return {"steps": steps, "cards": cards}
    finally:
        store.close()


def within_80(text: str) -> bool:
    return all(cells(line) <= 80 for line in text.splitlines())


def test_every_kind_of_quiz_answered_recorded_handed_in_and_graded(course):
    pack, data, work = course["pack"], course["data"], course["work"]
    right, wrong = letters_for(pack)
    answers = [
        "Copies cost memory; views are free.", "", "3",  # free: an answer over lines, then self-graded 3 Good
        "zz", f"{right} {wrong}", wrong, "?",  # choice: not a letter, two for one, wrong, then every choice
        "[0, 10, 2]", "",  # predict: right
    ]
    done = tutor("quiz", str(pack), data=data, stdin="\n".join(answers) + "\n")
    out = done.stdout
    assert done.returncode == 0, done.stderr + out
    assert "Traceback" not in done.stderr
    assert within_80(out), out
    assert "views: 3 of 3 quizzes to answer." in out
    assert "Model answer:" in out and "a view is free" in out  # the model answer after the learner's
    assert "'zz' is not a choice here: type letters from a to c, or Enter to skip." in out
    assert "((your answer))" not in out and "(your answer)" in out  # the words carry their own brackets
    assert "This question has one right answer: type one letter." in out
    assert "-- Not quite. --" in out and "Try again, ? to see every choice explained" in out
    assert f"{right}) right: Basic indexing returns a view." in out  # ? explains every choice
    assert "-- Correct! Your prediction matches the output. --" in out
    assert "3 answered, 2 right." in out
    assert "`torch-tutor handin views` hands them in" in out

    got = recorded(data)
    steps = got["steps"]
    assert (steps[(LESSON, FREE)].quiz_answer, steps[(LESSON, FREE)].quiz_correct) == (
        "Copies cost memory; views are free.", True)
    assert steps[(LESSON, CHOICE)].quiz_correct is False and steps[(LESSON, CHOICE)].solution_seen
    assert steps[(LESSON, PREDICT)].quiz_correct is True
    assert got["cards"] == {FREE, CHOICE, PREDICT}  # a first graded answer is a first review, as in the app

    # again: what is already right is not asked; the choice is, and now the right letter
    again = tutor("quiz", str(pack), LESSON, data=data, stdin=f"{right}\n")
    assert again.returncode == 0, again.stderr
    assert "views/first-lesson: 1 of 3 quizzes to answer." in again.stdout
    assert "-- Correct! --" in again.stdout and "1 answered, 1 right." in again.stdout
    nothing_left = tutor("quiz", str(pack), data=data)
    assert "Every quiz of views (3) is answered right. `--all` asks them again." in nothing_left.stdout

    # the same hand-in as the app's, and `grade` marks the choice against the pack
    handed = tutor("--pack", str(pack), "handin", "views", "--learner", "kim", data=data, cwd=work)
    assert handed.returncode == 0, handed.stderr
    assert "0 of 1 exercises (0 solved), 3 of 3 quiz answers" in " ".join(handed.stdout.split())
    archive = work / "kim-views.handin.zip"
    with zipfile.ZipFile(archive) as zf:
        quizzes = json.loads(zf.read("manifest.json"))["quizzes"]
    assert set(quizzes) == {f"{LESSON}/{q}" for q in (FREE, CHOICE, PREDICT)}
    (work / "class" / "kim").mkdir(parents=True)
    archive.rename(work / "class" / "kim" / archive.name)
    graded = tutor("grade", str(pack), str(work / "class"), "--csv", str(work / "g.csv"), "--unisolated",
                   "--no-cache", data=data)
    assert graded.returncode == 0, graded.stderr
    rows = {r["exercise"]: r for r in csv.DictReader((work / "g.csv").open())}
    assert (rows[f"{LESSON}/{CHOICE}"]["status"], rows[f"{LESSON}/{CHOICE}"]["points"]) == ("passed", "1")


def test_end_of_input_stops_without_a_traceback_and_keeps_what_was_answered(course):
    pack, data = course["pack"], course["data"]
    right, _wrong = letters_for(pack)
    # the free answer, then input ends at its self-grade: the answer is kept (revealed, not graded)
    done = tutor("quiz", str(pack), data=data, stdin="my answer\n\n")
    assert done.returncode == 0 and "Traceback" not in done.stderr + done.stdout
    assert "Stopped: every answer you gave is kept." in done.stdout
    steps = recorded(data)["steps"]
    assert (steps[(LESSON, FREE)].quiz_answer, steps[(LESSON, FREE)].quiz_correct) == ("my answer", None)
    # a quit word stops as well, after the choice is answered
    quit_ = tutor("quiz", str(pack), data=data, stdin=f"again\n\n3\n{right}\nexit()\n")
    assert quit_.returncode == 0 and "Stopped" in quit_.stdout and "2 answered, 2 right." in quit_.stdout
    assert recorded(data)["steps"][(LESSON, CHOICE)].quiz_correct is True
    # no input at all
    empty = tutor("quiz", str(pack), data=data, stdin="")
    assert empty.returncode == 0 and "Traceback" not in empty.stderr + empty.stdout


def test_ctrl_c_at_the_prompt_keeps_every_answer(course):
    import signal
    import select
    import time

    pack, data = course["pack"], course["data"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(data.parent / "config")
    # Ctrl-C as a terminal's foreground process gets it: a test run started in the background by a
    # shell without job control (`.ci/run &`) ignores SIGINT, and a child inherits that.
    proc = subprocess.Popen([sys.executable, "-m", "tutor", "--data-dir", str(data), "quiz", str(pack)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"typed before the interrupt\n\n3\n")
    proc.stdin.flush()
    seen = b""
    deadline = time.monotonic() + 60
    while b"Type the letter" not in seen and time.monotonic() < deadline:  # at the choice quiz's prompt
        if select.select([proc.stdout], [], [], 1.0)[0]:
            seen += os.read(proc.stdout.fileno(), 65536)
    assert b"Type the letter" in seen, seen
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    # Its end comes from the interrupt alone: stdin stays open until it has exited. (Closed at once,
    # an end of input could come first: a clean clone's run ended 0, the end-of-input path.)
    try:
        proc.wait(timeout=60)
    finally:
        rest, err = proc.communicate(timeout=60)
    out = (seen + rest).decode()
    assert proc.returncode == 130, err
    assert "Traceback" not in err.decode() and "Stopped: every answer you gave is kept." in out
    assert recorded(data)["steps"][(LESSON, FREE)].quiz_correct is True


@pytest.mark.parametrize("language", ["en", "zh"])
def test_bad_arguments_are_one_clear_line(course, language):
    pack, data = course["pack"], course["data"]
    unknown = tutor("--language", language, "quiz", str(pack), "no-such-lesson", data=data)
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    if language == "en":
        assert "no lesson 'no-such-lesson' in views; lessons with quizzes: first-lesson" in unknown.stderr
    else:
        assert "views 里没有课程 'no-such-lesson'；有测验的课程：first-lesson" in unknown.stderr
    missing = tutor("quiz", "no-such-pack", data=data)
    assert missing.returncode == 2 and "no-such-pack" in missing.stderr and "Traceback" not in missing.stderr


def test_chinese_within_80_columns(course):
    pack, data = course["pack"], course["data"]
    right, _wrong = letters_for(pack)
    done = tutor("--language", "zh", "quiz", str(pack), data=data, stdin=f"\n{right}\n\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert within_80(out), out
    assert "views：共 3 个测验，3 个待回答。" in out and "第 2/3 题（Views and copies）" in out
    assert "-- 正确！ --" in out and "回答了 1 个，答对 1 个。" in out


def test_hostile_pack_text_and_input_reach_the_terminal_inert(course):
    """A question carrying a terminal escape (set the title, write the clipboard) is refused with the
    pack's one line; an answer of a megabyte with control characters acts on nothing (its echo is
    made inert) and is kept capped."""
    pack, data = course["pack"], course["data"]
    answer = "\x1b]0;mine\x07" + "x" * 1_000_000
    done = tutor("quiz", str(pack), data=data, stdin=answer + "\n\n1\n")  # 1 Again: a miss
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    from tutor.cli.quiz import MAX_ANSWER_CHARS

    kept = recorded(data)["steps"][(LESSON, FREE)]
    assert kept.quiz_correct is False and len(kept.quiz_answer or "") == MAX_ANSWER_CHARS
    lesson = pack / "01-first-lesson.yaml"
    lesson.write_text(lesson.read_text().replace(
        "question: Why does PyTorch return views from slicing instead of copies?",
        'question: "Why views? \\e]0;pwned\\a \\e]52;c;cm0gLXJmIH4=\\a"'))
    refused = tutor("quiz", str(pack), data=data, stdin="")
    assert refused.returncode == 2 and "control character U+001B (ESC)" in refused.stderr
    assert "\x1b" not in refused.stdout + refused.stderr and "Traceback" not in refused.stderr


def test_every_quiz_type_has_a_way_to_be_asked():
    """A quiz type added to tutor.pack.quizzes fails here until `torch-tutor quiz` can ask it."""
    from types import SimpleNamespace

    from tutor.cli.quiz import Asker, Session
    from tutor.pack.models import QUIZ_TYPES
    from tutor.record.progress import ProgressStore

    session = Session(SimpleNamespace(id="p", languages=["en"]), ProgressStore.in_memory(), Asker(),
                      SimpleNamespace(language="en"))
    assert set(session.askers) == set(QUIZ_TYPES)


def test_markdown_is_plain_lines_within_the_width():
    from tutor.cli.quiz import render_markdown

    text = ("A paragraph that goes on for long enough to need wrapping at eighty columns, with `code` and "
            "**bold** kept as typed.\n\n```python\nx = torch.ones(2, 3)  # " + "a very long comment " * 5
            + "\n```\n\n- one item\n- another item that is also long enough to wrap past the width of the "
            "terminal line\n\n中文的段落没有空格，" + "每个字都可以换行，" * 12)
    lines = render_markdown(text, 80)
    assert all(cells(line) <= 80 for line in lines), lines
    assert "    x = torch.ones(2, 3)" in lines[3] and lines[3].endswith("…")
    item = next(i for i, line in enumerate(lines) if line.startswith("- another item"))
    assert lines[item + 1].startswith("  ") and lines[item + 1].strip()  # the item's hanging indent
    assert "`code` and **bold**" in " ".join(lines)


@pytest.mark.parametrize("language,shown,hidden", [("zh", "# 写入视图", "# write through the view"),
                                                   ("en", "# write through the view", "写入视图")])
def test_a_predict_quizs_code_comments_are_in_the_learners_language(course, language, shown, hidden):
    """Issue 52, item 18: the code of a predict question shows its `#zh:` comment in Chinese, and
    no `#zh:` line in English."""
    pack, data = course["pack"], course["data"]
    lesson = pack / "01-first-lesson.yaml"
    lesson.write_text(lesson.read_text().replace(
        "      v[0] = 10\n", "      # write through the view\n      #zh: 写入视图\n      v[0] = 10\n", 1))
    right, _wrong = letters_for(pack)
    done = tutor("--language", language, "quiz", str(pack), data=data, stdin=f"\n{right}\n\n")
    assert done.returncode == 0, done.stderr
    assert shown in done.stdout and hidden not in done.stdout and "#zh:" not in done.stdout
    assert within_80(done.stdout)
