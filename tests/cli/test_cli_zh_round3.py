"""The commands a Chinese-mode learner or instructor still saw in English (issue 52, item 18):
`list` ("9 lessons", "[built-in]"), all of `config`, a bad config file's message (and its "did
you mean" in ASCII brackets), `open` with a lesson that is not there. English stays as it was."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

CJK = re.compile(r"[\u4e00-\u9fff]")


def tutor(*args: str, tmp: Path, language: str | None = "zh", **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith("TORCH_TUTOR_") and k not in ("LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    environ.update({"TORCH_TUTOR_CONFIG_DIR": str(tmp / "config"), "COLUMNS": "80", **env})
    flag = ["--language", language] if language else []
    return subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(tmp / "data"), *flag, *args],
                          capture_output=True, text=True, timeout=120, env=environ)


def _english_words(text: str, allowed: set[str]) -> list[str]:
    text = re.sub(r"`[^`]*`|\S*/\S*|'[^']*'|\b[A-Z_]{2,}\b|--?[\w-]+", "", text)
    return [word for word in re.findall(r"[A-Za-z_]{3,}", text) if word not in allowed]


def test_list_in_chinese(tmp_path: Path) -> None:
    done = tutor("list", tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.search(r"debugging-and-speed  调试与提速  v\S+  9 课  \[内置\]", done.stdout), done.stdout
    assert not _english_words(done.stdout, {"debugging", "and", "speed"}), done.stdout
    lessons = tutor("list", "debugging-and-speed", tmp=tmp_path)
    assert "调试与提速（debugging-and-speed v" in lessons.stdout, lessons.stdout
    assert "1. 读懂报错信息（17 步；用 `torch-tutor open" in lessons.stdout, lessons.stdout
    assert "练习 shape-mismatch：" in lessons.stdout
    for word in (r"\d lessons?\b", r"\d steps?\b", "open with", "exercise ", "built-in"):
        assert not re.search(word, lessons.stdout + done.stdout), word
    english = tutor("list", tmp=tmp_path, language=None)
    assert "9 lessons  [built-in]" in english.stdout, english.stdout


def test_config_in_chinese(tmp_path: Path) -> None:
    done = tutor("config", tmp=tmp_path, TORCH_TUTOR_WORKERS="2", COLUMNS="250")  # the paths on their rows
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("配置文件：") and "（不存在；使用默认值）" in out, out
    assert re.search(r"workers\s+2\s+环境变量 TORCH_TUTOR_WORKERS", out), out
    assert re.search(r"language\s+zh\s+命令行", out) and re.search(r"theme\s+dark\s+默认值", out), out
    assert "（当前解释器）" in out
    names = {"data_dir", "python", "theme", "dark", "language", "workers", "isolation", "auto", "sandbox_mode",
             "spawn_runners", "forked", "wall_time", "cpu_time", "memory_mb", "output_kb", "processes",
             "file_size_mb", "open_files", "new_cards_per_day", "toml", "local", "share", "config", "torch", "tutor"}
    assert not _english_words(out, names), out
    english = tutor("config", tmp=tmp_path, language=None)
    assert "(not present; defaults apply)" in english.stdout and "default" in english.stdout
    json = tutor("config", "--json", tmp=tmp_path)  # JSON keeps its English: a program reads it
    assert '"source": "command line"' in json.stdout, json.stdout


@pytest.mark.parametrize("how", ["flag", "locale"])
def test_a_bad_config_file_is_said_in_chinese(tmp_path: Path, how: str) -> None:
    """Before, a bad config file made every message English, --language zh or not: the language
    could not be read from the file that failed."""
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "config.toml").write_text('langauge = "zh"\n')
    done = tutor("progress", tmp=tmp_path, language="zh" if how == "flag" else None,
                 **({"LANG": "zh_CN.UTF-8"} if how == "locale" else {}))
    assert done.returncode == 2
    assert "未知的设置 'langauge'（你是想写 'language' 吗？）" in done.stderr, done.stderr
    assert "did you mean" not in done.stderr and "(" not in done.stderr.replace(str(folder), ""), done.stderr
    english = tutor("progress", tmp=tmp_path, language=None)
    assert "unknown setting 'langauge' (did you mean 'language'?)" in english.stderr, english.stderr
    (folder / "config.toml").unlink()
    bad = tutor("progress", tmp=tmp_path, TORCH_TUTOR_WORKERS="0")  # a variable, not the file
    assert "环境变量 TORCH_TUTOR_WORKERS：至少为 1" in bad.stderr, bad.stderr


def test_open_names_a_missing_lesson_in_chinese(tmp_path: Path) -> None:
    done = tutor("open", "debugging-and-speed/three-trap", tmp=tmp_path)
    assert done.returncode == 2
    assert "课程包 'debugging-and-speed' 中没有课程 'three-trap'（它有：reading-errors, three-traps" in done.stderr, \
        done.stderr
    missing = tutor("open", "no-such-pack", tmp=tmp_path)
    assert "没有课程包 'no-such-pack'（见 `torch-tutor list`）" in missing.stderr, missing.stderr
