"""The check engine's sentences travel as saids (tutor/words/engine.py): the English message is
the said's English, and the learner's language shows the same sentence with the same values."""

from __future__ import annotations

import re

import pytest

from tutor.words import engine as words
from tutor.words import i18n

CJK = re.compile(r"[\u4e00-\u9fff]")

#: (check, wrong code, English start, Chinese start): one failure of each way a sentence is put together
CASES = [
    ({"id": "shape", "kind": "tensor", "value": "f(x)", "setup": "x = torch.randn(4, 8)", "shape": [4, 2]},
     "def f(x):\n    return x\n", "shape: expected (4, 2), got (4, 8) (for x of shape (4, 8))",
     "形状：预期 (4, 2)，实际 (4, 8)（输入为 形状为 (4, 8) 的 x）"),
    ({"id": "each", "kind": "tensor", "value": "f()", "each": True, "dtype": "float64"},
     "import torch\ndef f():\n    return [torch.zeros(1, dtype=torch.float64), torch.zeros(1)]\n",
     "item 1: expected dtype float64, got float32", "第 1 项：dtype：预期 float64，实际 float32"),
    ({"id": "kind", "kind": "tensor", "value": "f()", "number": True},
     "def f():\n    return [1, 2]\n", "expected a plain Python number (e.g. from .item()), got a list of 2 item(s)",
     "预期一个普通的 Python 数字（例如来自 .item()），实际是 一个有 2 项的 list"),
    ({"id": "raises", "kind": "raises", "call": "f()", "type": "ValueError"},
     "def f():\n    return 1\n", "expected ValueError to be raised, but the code ran without an error",
     "预期抛出 ValueError，但代码运行时没有出错"),
    ({"id": "unchanged", "kind": "unchanged", "setup": "x = torch.ones(2, 3)", "call": "f(x)", "names": ["x"]},
     "def f(x):\n    x[0, 1] += 100\n    return x\n", "your function changed the caller's tensor `x` at [0, 1]: 1.0 -> 101.0",
     "你的函数改动了调用方的张量 `x`（位置 [0, 1]）：1.0 -> 101.0"),
    ({"id": "outputs", "kind": "mode", "setup": "model = nn.Sequential(nn.Linear(4, 2)); x = torch.randn(3, 4)",
      "module": "model", "call": "f(model, x)", "output_dtypes": {"Conv2d": "bfloat16"}},
     "def f(m, x):\n    return m(x)\n", "no output of `Conv2d` was seen during `f(model, x)`",
     "在 `f(model, x)` 期间没有看到 `Conv2d` 的输出"),
    ({"id": "raised", "kind": "tensor", "value": "f()", "shape": [1]},
     "def f():\n    return 1 / 0\n", "ZeroDivisionError: division by zero (line 2 of your code: `return 1 / 0`)",
     "ZeroDivisionError: division by zero（你代码的第 2 行：`return 1 / 0`）"),
]


@pytest.mark.parametrize("check, code, english, chinese", CASES, ids=[case[0]["id"] for case in CASES])
def test_a_checks_sentence_in_english_and_in_chinese(grade, check, code, english, chinese):
    result = grade(code, check).checks[0]
    assert result.status in ("failed", "error"), result.message
    assert result.message.startswith(english), result.message
    assert isinstance(result.said, dict) and i18n.english(result.said) == result.message
    assert i18n.render(result.said, "zh").startswith(chinese), i18n.render(result.said, "zh")


def test_every_sentence_renders_in_every_language_with_its_fields():
    """Each key with its own fields (a field named like say's own argument included) renders."""
    for key, template in words.WORDS.items():
        fields = {name: "1" for _text, name, _spec, _conv in __import__("string").Formatter().parse(template) if name}
        said = words.say(key, **fields)
        assert words.english(said) == i18n.render(said, "en")
        assert CJK.search(i18n.render(said, "zh")) or not re.search(r"[A-Za-z]{2,}", template.format(**fields))
    assert words.english(words.say("checks.mode.no_output", key="Linear", call="f()")) == \
        "no output of `Linear` was seen during `f()`"


#: (check, wrong code, expected in English, got in English, expected in Chinese, got in Chinese)
PHRASES = [
    ({"id": "kind", "kind": "tensor", "value": "f()", "shape": [1]}, "def f():\n    return [1]\n",
     "a torch.Tensor", "a list of 1 item(s)", "一个 torch.Tensor", "一个有 1 项的 list"),
    ({"id": "raises", "kind": "raises", "call": "f()", "type": "ValueError"}, "def f():\n    return 1\n",
     "ValueError", "no exception", "ValueError", "没有异常"),
    ({"id": "view", "kind": "tensor", "setup": "x = torch.ones(3)", "value": "f(x)", "shares_storage_with": "x"},
     "def f(x):\n    return x.clone()\n", "shares memory with x", "a separate copy", "与 x 共享内存", "一份独立的副本"),
]


@pytest.mark.parametrize("check, code, expected, got, expected_zh, got_zh", PHRASES, ids=[p[0]["id"] for p in PHRASES])
def test_a_checks_expected_and_got_phrases_in_english_and_in_chinese(grade, check, code, expected, got,
                                                                     expected_zh, got_zh):
    """What a report shows under "expected:" and "got:" is a phrase where it is not a value: the
    English stays as it was (instructors' outputs and `validate` read it), and the learner's
    language shows the phrase translated with the same names and numbers."""
    result = grade(code, check).checks[0]
    assert result.status == "failed", result.message
    assert (result.expected, result.got) == (expected, got)
    assert i18n.shown(result.expected, result.expected_said) == expected  # English in use
    shown = [i18n.render(said, "zh") if said else plain
             for plain, said in ((result.expected, result.expected_said), (result.got, result.got_said))]
    assert shown == [expected_zh, got_zh]
