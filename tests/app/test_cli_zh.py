"""The learner's commands in Chinese: `progress`, `review --due`, `run`, `check`, `handin`, with
the language from --language, TORCH_TUTOR_LANGUAGE, the config file or the locale (issue 29)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import datetime, timedelta

import pytest

from app_support import MINI, learner_store
from tutor.cli.main import main
from tutor.core import i18n
from tutor.core.progress import ProgressStore

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def _english_after(monkeypatch):
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG", "TORCH_TUTOR_LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TORCH_TUTOR_CONFIG_DIR", "/nonexistent-torch-tutor-config")
    yield
    i18n.set_language(None)


def _run(capsys, data, *argv):
    code = main(["--data-dir", str(data), "--pack", str(MINI), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _seed(data_dir):
    store = learner_store(data_dir)
    store.positions.set("mini", "exercises", "double")
    store.steps.visit("mini", "basics", "intro")
    store.answers.record_attempt("mini", "exercises", "double", "check", passed=True, checks_passed=1, checks_total=1)
    store.drafts.save("mini", "exercises", "double", "def double(x):\n    return x * 2\n")
    store.answers.record_quiz("mini", "basics", "which-dim", "0", True)
    store.close()


def test_progress_in_chinese_by_flag_before_or_after_the_command(tmp_path, capsys):
    _seed(tmp_path)
    for argv in (["--language", "zh", "progress"], ["progress", "--language", "zh"]):
        code, out, _ = _run(capsys, tmp_path, *argv)
        assert code == 0
        assert "进行中" in out and "1/1 个练习" in out and "从这里继续：" in out, out
        assert "in progress" not in out and "resume at" not in out and "exercises" not in out, out
    code, out, _ = _run(capsys, tmp_path, "progress")
    assert "in progress" in out and "resume at" in out


@pytest.mark.parametrize("how", ["variable", "config", "locale"])
def test_the_language_setting_and_the_locale_reach_the_commands(tmp_path, capsys, monkeypatch, how):
    _seed(tmp_path)
    if how == "variable":
        monkeypatch.setenv("TORCH_TUTOR_LANGUAGE", "zh")
    elif how == "config":
        folder = tmp_path / "config"
        folder.mkdir()
        (folder / "config.toml").write_text('language = "zh"\n')
        monkeypatch.setenv("TORCH_TUTOR_CONFIG_DIR", str(folder))
    else:
        monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    code, out, _ = _run(capsys, tmp_path, "progress")
    assert code == 0 and "进行中" in out, (how, out)
    code, out, _ = _run(capsys, tmp_path, "config")
    source = {"variable": "environment TORCH_TUTOR_LANGUAGE", "config": "config file", "locale": "system locale"}
    assert re.search(r"language\s+zh\s+" + re.escape(source[how]), out), out


def test_a_flag_wins_over_the_locale(tmp_path, capsys, monkeypatch):
    _seed(tmp_path)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    code, out, _ = _run(capsys, tmp_path, "--language", "en", "progress")
    assert "in progress" in out and not CJK.search(out.replace("›", ""))


def test_a_bad_language_is_a_usage_error(tmp_path, capsys):
    code, _, err = _run(capsys, tmp_path, "--language", "zh;rm -rf", "progress")
    assert code == 2 and "--language: expected a language code such as en or zh" in err, err


def test_review_due_in_chinese(tmp_path, capsys):
    store = learner_store(tmp_path)
    store.answers.record_quiz("mini", "basics", "which-dim", "0", True)
    store.close()
    month = (datetime.now() + timedelta(days=30)).isoformat(timespec="minutes")
    code, out, _ = _run(capsys, tmp_path, "--language", "zh", "review", "--due", "--at", month)
    assert code == 0 and "有 1 项到期" in out and "选择题" in out, out
    code, out, _ = _run(capsys, tmp_path, "--language", "zh", "review", "--due")
    assert "没有到期的复习" in out, out


def _tutor(*args: str, data_dir, env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(data_dir / "config")
    env.update(env_extra)
    return subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(data_dir), "--pack", str(MINI), *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_run_says_how_the_run_ended_in_chinese(tmp_path):
    script = tmp_path / "exit3.py"
    script.write_text("import os, sys\nprint('hi', flush=True)\nos._exit(3)\n")
    proc = _tutor("run", str(script), data_dir=tmp_path, env_extra={"LANG": "zh_CN.UTF-8"})
    assert proc.returncode == 1, proc.stderr
    assert "hi" in proc.stdout
    assert "程序以退出码 3 结束。" in proc.stderr and "[error] 墙钟时间" in proc.stderr, proc.stderr


def test_check_reports_a_wrong_fix_in_chinese(tmp_path):
    wrong = tmp_path / "double.py"
    wrong.write_text("def double(x):\n    return x + 1\n")
    proc = _tutor("check", "double", str(wrong), data_dir=tmp_path, env_extra={"TORCH_TUTOR_LANGUAGE": "zh"})
    assert proc.returncode == 1, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("exercises/double: ") and "项检查中通过了 0 项" in first, proc.stdout
    assert "  未通过 doubles: double(x) is twice x" in proc.stdout, proc.stdout
    assert "提示：Multiply by two." in proc.stdout, proc.stdout
    assert "checks passed" not in proc.stdout and "FAIL" not in proc.stdout, proc.stdout


def test_language_values_as_a_locale_writes_them_and_bad_ones_with_their_line(tmp_path):
    from tutor.core.config import ConfigError, language_of, load_settings

    none = tmp_path / "none.toml"
    settings = load_settings({"language": "zh_CN.UTF-8"}, config_file=none, environ={})
    assert settings.language == "zh-CN" and i18n.set_language(settings.language) == "zh"
    assert language_of(settings, saved="en") == "zh-CN"  # a flag wins over the app's saved choice
    by_locale = load_settings({}, config_file=none, environ={"LANG": "zh_CN.UTF-8"})
    assert (by_locale.language, by_locale.sources["language"]) == ("zh", "system locale")
    assert language_of(by_locale, saved="en") == "en"  # the app's saved choice wins over the locale
    assert language_of(load_settings({}, config_file=none, environ={}), environ={}) == "en"
    bad = tmp_path / "config.toml"
    bad.write_text('theme = "dark"\nlanguage = 3\n')
    with pytest.raises(ConfigError, match=r"config.toml:2: language: expected a non-empty string"):
        load_settings({}, config_file=bad, environ={})
    bad.write_text('language = "../../etc"\n')
    with pytest.raises(ConfigError, match=r"config.toml:1: language: expected a language code"):
        load_settings({}, config_file=bad, environ={})
