"""The tutor in Chinese in a real terminal (tmux, private socket, 80x24): TORCH_TUTOR_LANGUAGE=zh,
a lesson, an exercise with a wrong fix checked for real, a hint, and review (issue 29)."""

from __future__ import annotations

import re
import time

import pytest

from test_e2e_tmux import MINI, TUTOR, Terminal, pytestmark  # noqa: F401  (same markers)


class ZhTerminal(Terminal):
    def start(self, *argv: str, size: tuple[int, int] = (80, 24), raw: str | None = None) -> None:
        # tmux draws wide characters only for a UTF-8 locale; the tutor's language comes from its variable
        command = " ".join(["exec", "env", "LANG=C.UTF-8", "TORCH_TUTOR_LANGUAGE=zh", str(TUTOR),
                            "--data-dir", str(self.tmp / "data"), "--pack", str(MINI), *argv])
        super().start(*argv, size=size, raw=command)

    def tmux(self, *args: str) -> str:
        return super().tmux("-u", *args) if args and args[0] != "-u" else super().tmux(*args)


@pytest.fixture
def terminal(tmp_path):
    term = ZhTerminal(tmp_path)
    yield term
    term.close()


def _footer(screen: str) -> str:
    return screen.rstrip("\n").splitlines()[-1]


def test_a_chinese_learners_journey(terminal):
    terminal.start("open", "mini/exercises")
    screen = terminal.wait_for("f6 检查")
    assert "第 1/1 步" in screen and "第 2/2 课" in screen, screen
    footer = _footer(screen)
    # every key keeps its name; at 80 columns the step's own keys stay (^q goes first: F1 lists it)
    assert all(key in footer for key in ("f1 帮助", "f2 目录", "f3 上一步", "f9 重置")), footer
    assert not re.search(r"\bf\d+\s*$", footer.rstrip()), footer  # no key left without its name
    assert "Check" not in screen and "Help" not in screen, screen

    terminal.keys("Escape")  # leave the editor for the page, then back in with Tab at the end
    time.sleep(0.3)
    terminal.keys("Tab")
    time.sleep(0.3)
    terminal.keys("C-End")
    terminal.keys("Enter")
    terminal.type("def double(x):")
    terminal.wait_for("6  def double(x):")
    terminal.keys("Enter")  # the editor indents the body
    # typed as a person types, after the new line shows: keys that reach the app in one read are a
    # paste, which keeps its own indentation (a loaded machine once read Enter and the next line as one)
    terminal.wait_for("▊ 7")
    terminal.type("return x + 1")  # a wrong fix
    time.sleep(0.5)
    terminal.keys("F6")
    screen = terminal.wait_for("0/1 项检查通过", timeout=180)
    terminal.keys("Escape", "PageDown")  # the rest of the report
    screen = terminal.wait_for("未通过")
    assert "double(x) is twice x" in screen, screen  # the pack's own text: English in this pack
    terminal.keys("F7")
    screen = terminal.wait_for("提示 1/2")
    terminal.keys("C-q")
    deadline = time.monotonic() + 30
    while terminal.alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not terminal.alive()

    terminal.start("review")
    screen = terminal.wait_for("现在没有要复习的内容")
    assert "未来 14 天到期的复习" in screen and "今天" in screen, screen
    assert "f1 帮助" in _footer(screen), screen
    terminal.keys("C-q")


def test_the_built_in_pack_in_chinese(terminal):
    """The built-in pack's own text in Chinese: a prose step, an example, an exercise with a wrong
    fix checked for real (the pack's check descriptions and hint), and its first hint."""
    terminal.start("open", "debugging-and-speed/reading-errors")
    screen = terminal.wait_for("其中大多数可归为三类")
    assert "先看报错信息" in screen and "RuntimeError" in screen, screen
    assert "Start with the message" not in screen and "Most PyTorch bugs" not in screen, screen
    terminal.keys("F4")
    screen = terminal.wait_for("运行它，读一读报错信息")  # the body comes a moment after the top bar
    assert "一个不可能成立的矩阵乘法" in screen, screen
    for _ in range(8):  # on to the exercise: step 10 of 17
        terminal.keys("F4")
        time.sleep(0.4)
    screen = terminal.wait_for("练习：用 (out, in) 权重做投影")
    assert "第 10/17 步" in screen, screen

    screen = terminal.wait_for("编辑中")  # the editor has the keys: to the end of `return x @ w`
    terminal.keys("C-End", "Up", "End")
    terminal.type(".reshape(w.shape[1], w.shape[0])")  # shapes fit, the numbers are wrong
    time.sleep(0.5)
    terminal.keys("F6")
    screen = terminal.wait_for("1/2 项检查通过", timeout=180)
    terminal.keys("Escape", "PageDown")
    screen = terminal.wait_for("只让形状对上的改法")
    assert "结果等于 torch.nn.functional.linear(x, w)" in screen, screen
    assert "the result equals" not in screen and "Exercise" not in screen, screen
    terminal.keys("F7")
    screen = terminal.wait_for("提示 1/4")
    assert "用形状为 (4, 8) 的 x 和形状为 (3, 8) 的 w 运行初始代码" in screen, screen
    terminal.keys("C-q")
