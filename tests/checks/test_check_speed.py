"""Issue 55: every Check of the built-in pack under a second; an infinite loop stopped in a few.

What made a Check slow is held here by what it costs, never by a timed assertion: an import a
judge did not need, the number of checks that ran to their limit.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_mode_canary_builds_its_module_without_importing_sympy():
    """The mode canary's Linear was made with ``to_empty()``, whose meta-to-CPU path imports
    sympy: 0.4-0.7 s of CPU in every judge that asked a mode canary (most of numpy-dtype's
    Check). Its parameters still come from the canary's own generator."""
    script = textwrap.dedent("""
        import sys
        import torch
        from tutor.checks import canary
        first = canary._linear(torch.Generator().manual_seed(3))
        second = canary._linear(torch.Generator().manual_seed(3))
        assert isinstance(first, torch.nn.Linear) and first.weight.device.type == "cpu"
        assert first.weight.shape == (2, 3) and first.bias.shape == (2,)
        assert torch.equal(first.weight, second.weight) and torch.equal(first.bias, second.bias)
        assert first.weight.requires_grad
        print("sympy" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"

