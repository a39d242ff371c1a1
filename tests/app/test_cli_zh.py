"""The learner's commands in Chinese: `progress`, `review --due`, `run`, `check`, `handin`, with
the language from --language, TORCH_TUTOR_LANGUAGE, the config file or the locale (issue 29);
and what a Chinese-mode learner or instructor still saw in English (issue 52, item 18): `list`,
`config`, a bad config file's message, `open` with a lesson that is not there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from app_support import MINI, learner_store
from tutor.cli.main import main
from tutor.words import i18n
from tutor.record.progress import ProgressStore

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def _no_language_chosen(no_locale, monkeypatch):
    """No locale, no TORCH_TUTOR_LANGUAGE and no config file: each test chooses its own."""
    monkeypatch.delenv("TORCH_TUTOR_LANGUAGE", raising=False)
    monkeypatch.setenv("TORCH_TUTOR_CONFIG_DIR", "/nonexistent-torch-tutor-config")


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
    source = {"variable": "环境变量 TORCH_TUTOR_LANGUAGE", "config": "配置文件", "locale": "系统区域设置"}
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
    assert first.startswith("exercises/double：") and "项检查中通过了 0 项" in first, proc.stdout
    assert "  未通过 doubles：double(x) is twice x" in proc.stdout, proc.stdout
    assert "提示：Multiply by two." in proc.stdout, proc.stdout
    assert "checks passed" not in proc.stdout and "FAIL" not in proc.stdout, proc.stdout


def test_language_values_as_a_locale_writes_them_and_bad_ones_with_their_line(tmp_path):
    from tutor.settings.config import ConfigError, language_of, load_settings

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
    with pytest.raises(ConfigError, match=r"config.toml:2：language：应为非空字符串"):  # the language spoken now
        load_settings({}, config_file=bad, environ={})
    i18n.set_language("en")
    with pytest.raises(ConfigError, match=r"config.toml:2: language: expected a non-empty string"):
        load_settings({}, config_file=bad, environ={})
    bad.write_text('language = "../../etc"\n')
    with pytest.raises(ConfigError, match=r"config.toml:1: language: expected a language code"):
        load_settings({}, config_file=bad, environ={})


# ---------------------------------------------------------------- every learner command, in zh
# (usage errors, check's own sentences, doctor, review --optimize, reset, serve, handin)


def test_check_says_what_the_checks_found_in_chinese(tmp_path):
    """The check engine's own sentence (made in the sandbox's child) arrives in Chinese, its
    numbers, shapes and names as the check saw them; in English without the setting."""
    wrong = tmp_path / "double.py"
    wrong.write_text("def double(x):\n    return x + 1\n")
    proc = _tutor("check", "double", str(wrong), "--seed", "7", data_dir=tmp_path,
                  env_extra={"TORCH_TUTOR_LANGUAGE": "zh"})
    assert proc.returncode == 1, proc.stderr
    said = next((line for line in proc.stdout.splitlines() if "值不对" in line), proc.stdout)
    assert re.fullmatch(r"\s+值不对（位置 \[0\]）：预期 \S+，实际 \S+（3 个元素中有 3 个不同；rtol 1e-05, atol 1e-06）"
                        r"（输入为 n=3，形状为 \(3,\) 的 x）", said), proc.stdout
    english = _tutor("check", "double", str(wrong), "--seed", "7", data_dir=tmp_path, env_extra={})
    assert re.fullmatch(r"\s+wrong value at \[0\]: expected \S+, got \S+ \(3 of 3 elements differ; rtol 1e-05, "
                        r"atol 1e-06\) \(for n=3, x of shape \(3,\)\)",
                        next((line for line in english.stdout.splitlines() if "wrong value" in line), "")), english.stdout


@pytest.mark.parametrize("argv, chinese, english", [
    (["check"], "缺少以下参数：EXERCISE, FILE", "the following arguments are required"),
    (["run", "x.py", "--isolation", "walls"], "无效的选择：'walls'（可选：'auto', 'bwrap', 'none'）", "invalid choice"),
    (["progress", "--bogus"], "无法识别的参数：--bogus", "unrecognized arguments"),
    (["check", "double", "x.py", "--timeout", "soon"], "参数 --timeout：无效的 float 值：'soon'", "invalid float value"),
])
def test_usage_errors_of_argparse_in_chinese(tmp_path, capsys, monkeypatch, argv, chinese, english):
    monkeypatch.setenv("TORCH_TUTOR_LANGUAGE", "zh")
    with pytest.raises(SystemExit) as exit_:
        _run(capsys, tmp_path, *argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith("用法：torch-tutor ") and "：错误：" in err and chinese in err, err
    assert english not in err and "usage:" not in err, err
    monkeypatch.delenv("TORCH_TUTOR_LANGUAGE")
    with pytest.raises(SystemExit):
        _run(capsys, tmp_path, "--language", "en", *argv)
    err = capsys.readouterr().err
    assert err.startswith("usage: torch-tutor ") and ": error: " in err and english in err, err


def test_a_commands_own_usage_errors_in_chinese(tmp_path, capsys):
    code, _, err = _run(capsys, tmp_path, "--language", "zh", "review", "--at", "someday", "--due")
    assert code == 2 and err == "torch-tutor：错误：--at 'someday' 不是日期或时间（用 ISO 8601，例如 2026-05-01T09:30）\n"
    code, _, err = _run(capsys, tmp_path, "review", "--json", "--language", "zh")
    assert code == 2 and err == "torch-tutor：错误：--json 要与 --due 一起使用\n", err
    code, _, err = _run(capsys, tmp_path, "--language", "zh", "check", "nosuch", "x.py")
    assert code == 2 and "导师能看到的课程包中没有练习 'nosuch'" in err, err
    code, _, err = _run(capsys, tmp_path, "--language", "zh", "handin", "--learner", " ")
    assert code == 2 and err == "torch-tutor：错误：--learner 不能为空\n", err
    code, _, err = _run(capsys, tmp_path, "--language", "zh", "serve", "--port", "70000")
    assert code == 2 and ("--port 70000：应在 0 到 65535 之间" in err or "textual-serve" in err), err


def test_review_optimize_says_not_yet_in_chinese(tmp_path, capsys):
    code, out, _ = _run(capsys, tmp_path, "--language", "zh", "review", "--optimize")
    assert code == 0 and out.startswith("还不行：FSRS 能从你的 0 次复习中学习") and "继续复习吧。" in out, out


def test_reset_asks_and_answers_in_chinese(tmp_path, capsys, monkeypatch):
    _seed(tmp_path)
    code, _, err = _run(capsys, tmp_path, "--language", "zh", "reset", "mini")  # not at a terminal
    assert code == 2 and "reset 会清除课程包 mini 的进度、草稿和复习卡片；不在终端中运行时，请加 --yes 确认" in err, err
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    asked = []
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "n")
    code, out, _ = _run(capsys, tmp_path, "--language", "zh", "reset", "mini")
    assert code == 1 and asked == ["清除课程包 mini 的进度、草稿和复习卡片？此操作无法撤销。[y/N] "] and out == "什么都没改。\n"
    monkeypatch.setattr("builtins.input", lambda prompt: "是")
    code, out, _ = _run(capsys, tmp_path, "--language", "zh", "reset", "mini")
    assert code == 0 and re.fullmatch(r"已清除课程包 mini 的进度、草稿和复习卡片（\d+ 条记录）。\n", out), out


def test_doctor_in_chinese(tmp_path):
    proc = _tutor("doctor", data_dir=tmp_path, env_extra={"LANG": "zh_CN.UTF-8"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    heads = [line.split("：")[0].strip() for line in lines if not line.startswith("  ")]
    assert heads[:2] == ["Python 解释器", "torch 版本"] and {"隔离", "模式", "进程数", "限制", "预热", "试运行"} <= set(heads), lines
    isolation = next(line for line in lines if line.startswith("隔离："))
    assert re.match(r"隔离：\s+(无|bwrap) — ", isolation), isolation
    assert "每次运行" in proc.stdout and "墙钟时间" in proc.stdout, proc.stdout
    for english in ("isolation:", "limits:", "warm-up:", "test run:", "each run is"):
        assert english not in proc.stdout, (english, proc.stdout)


def test_the_servers_lines_are_the_tables():
    """tutor/web cannot import the table: the English lines of its server and of doctor's container
    facts are the table's serve.* and hub.* keys; serve and doctor pass them in the learner's language."""
    from tutor.web import hub, browser_server as serve

    for prefix, words in (("serve.", serve.WORDS), ("hub.", hub.WORDS)):
        assert words == {key: i18n.TABLE["en"][prefix + key] for key in words}
        assert {key.removeprefix(prefix) for key in i18n.TABLE["en"] if key.startswith(prefix)} == set(words)


def test_handin_in_chinese(tmp_path, capsys):
    _seed(tmp_path)
    target = tmp_path / "out.tthandin"
    code, out, _ = _run(capsys, tmp_path, "--language", "zh", "handin", "mini", "--learner", "ada",
                        "--output", str(target))
    said = "".join(out.split())
    assert code == 0 and said.startswith(f"已写入{target}：1个练习中的1个（已解出0个），6个测验中的1个答案"), out
    assert "未解出，按你最后留下的样子提交（1个）：double" in said, out


# ---------------------------------------------------------------- the sandbox's isolation, in Chinese
#
# What protects the machine, why bubblewrap was not used, and what a run can still reach
# (tutor/sandbox/isolation.py) are saids: doctor and the status bar's tooltip say them in the
# learner's language, and their English (JSON, logs, the English doctor) is what it always was.

RESTRICTED = "bwrap: setting up uid map: Permission denied"
#: doctor's isolation lines for the machine below, in English, as they read before they were saids.
ENGLISH_LINES = [
    "isolation:  none — limits only (no usable bubblewrap: see below)",
    "  not used: system bubblewrap: no bwrap on PATH",
    "  not used: bundled bubblewrap (/opt/bwrap): bubblewrap does not work here: "
    f"{RESTRICTED} (unprivileged user namespaces are restricted; on Ubuntu 23.10+ allow them with an AppArmor "
    "profile for bwrap or `sysctl kernel.apparmor_restrict_unprivileged_userns=0`)",
]


@pytest.fixture
def no_bubblewrap(monkeypatch):
    """A machine with no bwrap on PATH and a bundled one that user namespaces refuse."""
    from tutor.words.i18n import said
    from tutor.sandbox import backends, isolation
    from tutor.sandbox.backends import bwrap

    monkeypatch.delenv("TORCH_TUTOR_EMULATE_WINDOWS", raising=False)
    monkeypatch.setattr(isolation, "is_root", lambda: False)
    monkeypatch.setattr(bwrap, "bwrap_candidates", lambda: [
        ("system", None, said("isolation.why.no_bwrap_on_path")), ("bundled", "/opt/bwrap", None)])
    monkeypatch.setattr(bwrap, "_try_bwrap_said", lambda python, path: (
        False, False, False, said("isolation.why.bwrap_restricted", message=RESTRICTED)))
    return backends.choose("auto", sys.executable)


def _unnamed_english(text: str) -> list[str]:
    """English words left in ``text`` once names, code and the program's own message are taken out."""
    for kept in (RESTRICTED, "/opt/bwrap", "/tmp", "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`"):
        text = text.replace(kept, "")
    names = {"bubblewrap", "bwrap", "PATH", "PID", "Linux", "Ubuntu", "AppArmor", "pids", "cgroup", "root", "none",
             "torch"}
    return [word for word in re.findall(r"[A-Za-z]{2,}", text) if word not in names]


def test_doctor_says_why_bubblewrap_was_not_used_in_chinese(no_bubblewrap):
    from tutor.cli.sandbox import isolation_lines

    info = no_bubblewrap
    assert isolation_lines(info) == ENGLISH_LINES  # English: as it always was
    assert info.reason == ("limits only (system bubblewrap: no bwrap on PATH; bundled bubblewrap (/opt/bwrap): "
                           + ENGLISH_LINES[2].split("(/opt/bwrap): ", 1)[1] + ")")
    assert info.gaps == ("network is reachable",
                         "files outside the scratch dir can be written where permissions allow")
    i18n.set_language("zh")
    lines = isolation_lines(info)
    assert lines[0] == "隔离：           无 — 只有限制（没有可用的 bubblewrap：见下文）", lines
    assert lines[1] == "  未使用：系统的 bubblewrap：PATH 上没有 bwrap", lines
    assert lines[2].startswith(f"  未使用：自带的 bubblewrap（/opt/bwrap）：bubblewrap 在这里不能用：{RESTRICTED}（"), lines
    for line in lines:
        assert not _unnamed_english(line), line


def test_the_gaps_and_the_status_bars_reason_in_chinese(no_bubblewrap, monkeypatch):
    """doctor's "weaker" lines and the status bar's tooltip (Engine.isolation_reason)."""
    from types import SimpleNamespace

    from tutor.app.engine import Engine
    from tutor.settings.config import Settings
    from tutor.words.i18n import render

    info = no_bubblewrap
    i18n.set_language("zh")
    gaps = [render(gap) for gap in info.gaps_said]
    assert gaps == ["可以访问网络", "在权限允许的地方，可以写临时目录以外的文件"], gaps
    engine = Engine(Settings())
    engine._sandbox = SimpleNamespace(state=SimpleNamespace(value="ready"), isolation=info)
    reason = engine.isolation_reason()
    assert reason.startswith("只有限制（系统的 bubblewrap：PATH 上没有 bwrap；自带的 bubblewrap（/opt/bwrap）："), reason
    assert not _unnamed_english(reason), reason
    i18n.set_language("en")
    assert engine.isolation_reason() == info.reason


def test_every_isolation_sentence_has_its_chinese(monkeypatch):
    """Root without bubblewrap, and a bubblewrap without nested namespaces: each sentence said."""
    from tutor.words.i18n import english, render, said
    from tutor.sandbox import backends, isolation
    from tutor.sandbox.backends import bwrap

    monkeypatch.setattr(isolation, "is_root", lambda: True)
    monkeypatch.setattr(isolation, "unreadable_for_runs", lambda python: "/root/.pyenv")
    info = backends.choose("none", sys.executable)
    assert info.reason == "limits only (isolation is set to none)"
    assert info.gaps[-1].startswith(f"{isolation.UNREADABLE} (/root/.pyenv): a module the worker")
    monkeypatch.setattr(bwrap, "bwrap_candidates", lambda: [("system", "/usr/bin/bwrap", None)])
    monkeypatch.setattr(bwrap, "_try_bwrap_said", lambda python, path: (
        True, False, False, said("isolation.why.no_nested_namespaces")))
    monkeypatch.setattr(isolation, "cgroup_available", lambda: False)
    boxed = backends.choose("auto", sys.executable)
    assert boxed.reason.endswith("read-only; nested user namespaces are not permitted inside bubblewrap")
    assert boxed.gaps == ("runs share the worker's PID namespace",
                          "runs keep root's access to files (nested user namespaces are not permitted inside "
                          "bubblewrap)", "no limit on processes (needs root for a pids cgroup)")
    from tutor.cli.sandbox import isolation_lines

    assert isolation_lines(boxed)[1] == "bubblewrap: /usr/bin/bwrap (system)"
    i18n.set_language("zh")
    assert isolation_lines(boxed)[1] == "bubblewrap 程序：/usr/bin/bwrap（系统）"
    for said_one in (info.reason_said, *info.gaps_said, boxed.reason_said, *boxed.gaps_said):
        assert english(said_one) in (info.reason, *info.gaps, boxed.reason, *boxed.gaps)
        chinese = render(said_one, "zh")
        assert CJK.search(chinese) and not _unnamed_english(chinese.replace("/root/.pyenv", "")), chinese


def test_the_hubs_user_namespace_reason_in_chinese(monkeypatch):
    from tutor.web import hub

    monkeypatch.setattr(hub, "_read", lambda path: "0" if path == "/proc/sys/user/max_user_namespaces" else None)
    assert hub.user_namespaces() == "user.max_user_namespaces is 0"
    report = {"container": "Kubernetes", "jupyterhub_user": None, "user_namespaces_off": hub.user_namespaces(),
              "bwrap": False, "isolation_setting": "auto"}
    assert "(user.max_user_namespaces is 0)" in hub.doctor_lines(report)[1]
    i18n.set_language("zh")
    lines = hub.doctor_lines(report, {key: i18n.t("hub." + key) for key in hub.WORDS})
    assert "（user.max_user_namespaces 为 0）" in lines[1], lines


def test_the_torch_range_notice_in_chinese():
    from tutor.pack.versions import floor_notice

    assert floor_notice("2.1.0", ">=2.4").startswith("This pack needs torch >=2.4, but")
    i18n.set_language("zh")
    notice = floor_notice("2.1.0", ">=2.4")
    assert notice.startswith("这个课程包需要 torch >=2.4") and "2.1.0" in notice, notice


# ---------------------------------------------------------------- --help, in Chinese

#: The learner's commands, whose --help is all in the table (the instructors' keep their English).
LEARNER_COMMANDS = ("check", "run", "progress", "review", "doctor", "handin", "quiz", "open", "reset", "serve")


@pytest.mark.parametrize("command", [None, *LEARNER_COMMANDS])
def test_help_in_chinese(capsys, command):
    argv = ["--language", "zh", *([command] if command else []), "--help"]
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("用法：torch-tutor") and "\n可选参数：\n" in out and "\n退出码：\n" in out, out
    for line in out.splitlines():
        if line.startswith(("用法", " " * 10)) and not CJK.search(line):
            continue  # the usage lines: the command's own words
        shown = re.sub(r"`[^`]*`|--?[\w-]+|\{[^}]*\}|\b[A-Z_]{2,}\b|\S*\.(?:py|yaml|zip)\b|[~/]\S*/\S*", "", line)
        names = {"torch", "tutor", "id", "JSON", "Schema", "FSRS", "ISO", "Python", "Gradescope", "GitHub",
                 "Classroom", "PyTorch", "en", "zh", "sandbox_mode", "data_dir", "language", "list", "validate", "schema",
                 "config", "check", "new", "grade", "merge", "handin", "autograder", "open", "progress", "reset",
                 "review", "run", "doctor", "serve", "pack", "yaml", "quiz", "Enter", "Ctrl"}  # key names stay
        english = [word for word in re.findall(r"[A-Za-z_]{2,}", shown) if word not in names]
        assert not english, (line, english)
    if command is None:
        assert "\n位置参数：\n" in out and "  --language CODE       导师使用的语言" in out, out


def test_help_in_english_is_as_it_was(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert "\npositional arguments:\n" in out and "\noptions:\n" in out and "\nexit codes:\n" in out
    assert "  FILE                  the Python file to check ('-' reads standard input)\n" in out, out


def test_every_help_text_of_the_learners_commands_is_in_the_table():
    """A help text changed in a command's module without its table entry would show in English."""
    import argparse

    from tutor.cli.main import build_parser

    english = set(i18n.TABLE["en"][key] for key in i18n.TABLE["en"] if key.startswith("help."))
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    texts = [parser.description, parser.epilog, *(a.help for a in parser._actions),
             *(a.help for a in commands._choices_actions)]
    for name in LEARNER_COMMANDS:
        sub = commands.choices[name]
        texts += [sub.description, sub.epilog, *(g.title for g in sub._action_groups), *(a.help for a in sub._actions)]
    missing = [text for text in texts if text and text != argparse.SUPPRESS and text not in english]
    assert not missing, missing


def test_isolation_required_but_missing_is_said_in_chinese(monkeypatch):
    """zh2's note: the error of `isolation = "bwrap"` where bubblewrap cannot work was English
    only. It is a said now: the sandbox's failure reads in the learner's language, its English
    (what grade and the logs print) unchanged."""
    from tutor.sandbox.backends import choose
    from tutor.sandbox.isolation import IsolationError
    from tutor.sandbox.pool import Sandbox, SandboxUnavailable

    monkeypatch.setenv("TORCH_TUTOR_EMULATE_WINDOWS", "1")  # bubblewrap is Linux only
    with pytest.raises(IsolationError) as raised:
        choose("bwrap", sys.executable)
    assert str(raised.value) == "bubblewrap: Linux only (this is win32 (emulated))"
    sandbox = Sandbox(isolation="bwrap")
    try:
        with pytest.raises(SandboxUnavailable):
            sandbox.wait_ready(timeout=60)
        assert sandbox.error == str(raised.value)
        before = i18n.language()
        i18n.set_language("zh")
        try:
            text = i18n.shown(sandbox.error, sandbox.error_said)
        finally:
            i18n.set_language(before)
        assert text and "bubblewrap" in text and "win32" in text and re.search(r"[\u4e00-\u9fff]", text), text
        assert "Linux only" not in text
    finally:
        sandbox.close()


# ------------------------------------------- list, config and open in Chinese (issue 52, item 18)
# `list` ("9 lessons", "[built-in]"), all of `config`, a bad config file's message (and its "did
# you mean" in ASCII brackets), `open` with a lesson that is not there. English stays as it was.


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
