"""Honest code keeps working under issue 50's closures (the seal's audit hook refuses profile and
trace functions, the garbage collector's object lists, frames that reach the checker's server,
memory by address; the learner's calls run under ``tutor.child.checks.driver``'s frames): each idiom is
a checked run that must pass, in both sandbox modes. What is refused is said plainly, in the
learner's language, and never blamed on their PyTorch (``test_what_is_refused_is_said``).
"""

from __future__ import annotations

import re
import textwrap

import pytest

pytestmark = [pytest.mark.both_modes, pytest.mark.slow]

#: Each idiom defines ``answer(x)``, which must return ``x * 2`` (a tensor check with fresh inputs).
IDIOMS = {
    "logging": """
        import logging
        logging.basicConfig(level=logging.INFO)
        log = logging.getLogger("mine")
        def answer(x):
            log.info("doubling %s", tuple(x.shape))
            log.warning("a warning with a stack", stack_info=True)
            return x * 2
    """,
    "namedtuple": """
        from collections import namedtuple
        Pair = namedtuple("Pair", "a b")
        def answer(x):
            return Pair(x, x).a * 2
    """,
    "dataclasses": """
        from dataclasses import dataclass, field
        @dataclass
        class Box:
            value: object
            tags: list = field(default_factory=list)
        def answer(x):
            return Box(x).value * 2
    """,
    "enum": """
        import enum
        class Scale(enum.Enum):
            DOUBLE = 2
        def answer(x):
            return x * Scale.DOUBLE.value
    """,
    "typing.NamedTuple": """
        from typing import NamedTuple
        class Scaled(NamedTuple):
            factor: int = 2
        def answer(x):
            return x * Scaled().factor
    """,
    "warnings.warn": """
        import warnings
        def answer(x):
            warnings.warn("just saying", UserWarning, stacklevel=2)
            return x * 2
    """,
    "traceback": """
        import io, traceback
        def answer(x):
            try:
                raise ValueError("caught")
            except ValueError:
                traceback.print_exc(file=io.StringIO())
                text = traceback.format_exc()
                stack = traceback.format_stack()
            assert "caught" in text and stack
            return x * 2
    """,
    "inspect.signature": """
        import inspect
        def answer(x, scale=2):
            assert list(inspect.signature(answer).parameters) == ["x", "scale"]
            assert inspect.currentframe().f_code.co_name == "answer"
            return x * scale
    """,
    "functools.lru_cache": """
        import functools
        @functools.lru_cache(maxsize=None)
        def factor(n):
            return n
        def answer(x):
            return x * factor(2)
    """,
    "a thread started and joined": """
        import threading
        def answer(x):
            out = []
            worker = threading.Thread(target=lambda: out.append(x * 2))
            worker.start()
            worker.join()
            return out[0]
    """,
    "tqdm": """
        from tqdm import tqdm
        def answer(x):
            total = x * 0
            for _ in tqdm(range(2), disable=False):
                total = total + x
            return total
    """,
    "torch.compile": """
        import torch
        @torch.compile(backend="eager")
        def twice(t):
            return t * 2
        def answer(x):
            return twice(x)
    """,
    "torch.profiler": """
        import torch
        from torch.profiler import profile, record_function, ProfilerActivity
        def answer(x):
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                with record_function("mine"):
                    out = x * 2
            assert any(e.key == "mine" for e in prof.key_averages())
            return out
    """,
    "torch.profiler with_stack": """
        import torch
        from torch.profiler import profile, ProfilerActivity
        def answer(x):
            with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
                out = x * 2
            prof.key_averages(group_by_stack_n=2)
            return out
    """,
    "torch.utils.checkpoint": """
        import torch
        from torch.utils.checkpoint import checkpoint
        def answer(x):
            leaf = x.detach().requires_grad_()
            out = checkpoint(lambda t: t * 2, leaf, use_reentrant=False)
            out.sum().backward()
            return out.detach()
    """,
    "a TorchDispatchMode": """
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode
        class Counting(TorchDispatchMode):
            def __init__(self):
                super().__init__()
                self.calls = 0
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.calls += 1
                return func(*args, **(kwargs or {}))
        def answer(x):
            with Counting() as mode:
                out = x * 2
            assert mode.calls >= 1
            return out
    """,
}

CHECK = {"id": "doubles", "kind": "tensor", "setup": "x = torch.randn(3, 4)", "value": "answer(x)",
         "close_to": "x * 2"}


@pytest.mark.parametrize("idiom", sorted(IDIOMS))
def test_an_honest_idiom_passes(grade, idiom):
    report = grade(textwrap.dedent(IDIOMS[idiom]), CHECK, timeout=120)
    check = report.checks[0]
    assert check.status == "passed", (idiom, check.status, check.message, report.run.stderr[-2000:])


#: What the seal refuses, from inside the learner's function: each raises there, its message says
#: what was refused and why, and the run is never passed.
REFUSED = {
    "profile": "import sys\ndef answer(x):\n    sys.setprofile(lambda *a: None)\n    return x * 2\n",
    "gc": "import gc\ndef answer(x):\n    gc.get_objects()\n    return x * 2\n",
    "memory": "import ctypes\ndef answer(x):\n    ctypes.c_char.from_address(id(x))\n    return x * 2\n",
}


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_what_is_refused_is_said(grade, what):
    from tutor.words.i18n import render

    check = grade(REFUSED[what], CHECK).checks[0]
    assert check.status == "error", (check.status, check.message)
    assert "refused while your code is checked" in check.message, check.message
    assert "PyTorch" not in check.message and "torch" not in check.message.lower().split("(line")[0]
    chinese = render(check.said, "zh")
    assert "检查" in chinese and not re.search(r"\b(refused|checked)\b", chinese), chinese
