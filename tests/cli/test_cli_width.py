"""The learner's commands at 80 columns, English and Chinese: `progress`, `check` (its seed lines),
`doctor` (its limits and container lines) and `--help` print no line wider than the terminal and
break none inside a word; doctor says what its limits and container line mean (issue 52, item 13)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from tutor.pack.loader import load_pack
from tutor.record.progress import ProgressStore

REPO = Path(__file__).resolve().parents[2]
BUILTIN = REPO / "lessons" / "debugging-and-speed"
#: A word as it must never be broken: a Latin word, number or path (CJK breaks between characters).
WORD = re.compile(r"[A-Za-z0-9_./+\-=`'\"()\[\],:;]+")


def tutor(*args: str, data: Path, columns: int | None = 80, language: str = "en") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_") and k != "COLUMNS"}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(data / "config")
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(data), "--language", language, *args],
                          capture_output=True, text=True, timeout=300, env=env)


def fits(text: str, width: int = 80) -> None:
    for line in text.splitlines():
        assert cell_len(line) <= width, (cell_len(line), line)


def words_whole(text: str, unwrapped: str) -> None:
    """Every word of the unwrapped output is whole on some line of the wrapped one."""
    lines = text.splitlines()
    for word in set(WORD.findall(unwrapped)):
        if cell_len(word) <= 60:
            assert any(word in line for line in lines), (word, text)


def _seed(data: Path) -> None:
    """Every step of the built-in pack visited, the learner at lesson 4's exercise: the lines
    the issue measured at 90-94 columns."""
    pack = load_pack(BUILTIN)
    store = ProgressStore.open(data)
    for lesson in pack.lessons:
        for step in lesson.steps:
            store.steps.visit(pack.id, lesson.id, step.id)
    store.positions.set(pack.id, "autocast", "autocast-bf16")
    store.close()


@pytest.mark.parametrize("language", ["en", "zh"])
def test_progress_fits_80_columns(tmp_path: Path, language: str) -> None:
    _seed(tmp_path)
    done = tutor("progress", data=tmp_path, language=language)
    assert done.returncode == 0, done.stderr
    fits(done.stdout)
    piped = tutor("progress", data=tmp_path, language=language, columns=None)  # a pipe: one line a lesson
    if language == "en":  # the English rows are wider than 80 columns unwrapped
        assert any(cell_len(line) > 80 for line in piped.stdout.splitlines()), piped.stdout
    words_whole(done.stdout, piped.stdout)
    pack = load_pack(BUILTIN)
    for lesson in pack.lessons:  # each title's words (its characters, in Chinese) all there
        title = lesson.title[language]
        for word in title.split() if language == "en" else [title]:
            assert word in done.stdout or language == "zh" and title in done.stdout.replace("\n  ", ""), \
                (word, done.stdout)
    resume = "resume at:" if language == "en" else "从这里继续："
    assert resume in done.stdout
    # a narrow terminal: each lesson's counts go on a line of their own, and still nothing is cut
    narrow = tutor("progress", data=tmp_path, language=language, columns=50)
    fits(narrow.stdout, 50)
    words_whole(narrow.stdout, piped.stdout)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_checks_seed_lines_fit_80_columns(tmp_path: Path, language: str) -> None:
    starter = next(step for lesson in load_pack(BUILTIN).lessons for step in lesson.steps
                   if step.id == "view-inplace").starter
    mine = tmp_path / "mine.py"
    mine.write_text(starter)
    done = tutor("check", "view-inplace", str(mine), data=tmp_path, language=language)
    assert done.returncode == 1, done.stdout + done.stderr
    seed = re.search(r"--seed (\d+)", done.stdout)
    assert seed is not None, done.stdout
    fits(done.stdout)
    words_whole(done.stdout, done.stdout.replace("\n", " "))
    for line in done.stdout.splitlines():  # a line goes on under its own start, never at column 0
        assert line.startswith(("three-traps/view-inplace", "  ")), line
    if language == "zh":
        assert "view-inplace：" in done.stdout and "caller-unchanged：" in done.stdout, done.stdout


@pytest.mark.parametrize("language", ["en", "zh"])
def test_doctor_fits_80_columns_and_says_what_its_limits_mean(tmp_path: Path, language: str) -> None:
    done = tutor("doctor", data=tmp_path, language=language)
    assert done.returncode == 0, done.stdout + done.stderr
    fits(done.stdout)
    text = re.sub(r"\n +", " ", done.stdout)  # the wrapped lines joined back
    if language == "en":
        assert re.search(r"limits: +each run: wall 10 s, CPU 30 s, memory \+2048 MB", text), text
        assert "CPU adds up the time of all the run's threads: a run busy on 3 cores spends 30 s of CPU in 10 s" \
            in text, text
        assert "memory +2048 MB: what a run may map beyond what the warm worker already holds" in text, text
        assert re.search(r"test run: +ok in \d+ ms", text), text
    else:
        assert re.search(r"限制： +每次运行：墙钟时间 10 s，CPU 时间 30 s，内存 \+2048 MB", text.replace("\n", "")), text
        joined = re.sub(r"\s+", "", text)
        assert "CPU时间是这次运行所有线程的用时之和：同时占满3个核心的运行，10s内就会用掉30sCPU时间" in joined, text
        assert re.search(r"试运行： +成功，用时 \d+ ms", text), text
        assert " ok" not in text, text
    assert "container:  a container" not in text and "容器：       一个容器" not in text


def test_doctors_container_line_says_what_it_means() -> None:
    from tutor.words import i18n
    from tutor.web.hub import WORDS, doctor_lines, doctor_report

    report = doctor_report(True, "auto", {"KUBERNETES_SERVICE_HOST": "10.0.0.1"})
    assert report is not None
    assert doctor_lines(report)[0] == "container:  yes: the tutor runs in a Kubernetes pod"
    docker = {**report, "container": "a container"}
    assert doctor_lines(docker)[0] == "container:  yes: the tutor runs inside a container (Docker, Podman or the like)"
    try:
        i18n.set_language("zh")
        words = {key: i18n.t("hub." + key) for key in WORDS}
        assert doctor_lines(docker, words)[0] == "容器：       是：导师运行在容器里（Docker、Podman 之类）"
    finally:
        i18n.set_language(None)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_help_says_where_progress_is_kept_and_fits_80_columns(tmp_path: Path, language: str) -> None:
    from tutor.settings.paths import default_data_dir

    folder = str(default_data_dir()).replace(str(Path.home()), "~", 1)
    for argv in (["--help"], ["progress", "--help"], ["check", "--help"], ["doctor", "--help"]):
        done = tutor(*argv, data=tmp_path, language=language)
        assert done.returncode == 0, done.stderr
        fits(done.stdout)
        assert folder in done.stdout, (argv, done.stdout)
        assert "data_dir" in done.stdout
