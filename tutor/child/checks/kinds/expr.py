"""``expr``: an instructor's predicate, the escape hatch.

Truthiness is only taken from values whose truth cannot lie (builtins, numpy scalars, one-element
tensors); a learner object with its own ``__bool__`` is an instructor error, reported as such.
"""

from __future__ import annotations

import re
from typing import Any

from tutor.child.checks import refs, render
from tutor.words import engine as words
from tutor.child.checks.context import PASS_THROUGH, Case, CodeRaised, Failed
from tutor.child.checks.vocab import ExprData
from tutor.child.checks.kinds.kind import Kind

_PLAIN = (bool, int, float, str, list, tuple, dict, set, type(None))


def truth(value: Any) -> bool:
    kind = refs.type_(value)
    if kind in _PLAIN:
        return refs.bool_(value)
    if render.is_tensor(value):
        if refs.t_numel(value) != 1:
            raise Failed(words.say("checks.expr.tensor", shape=render.fmt_shape(render.shape(value))))
        return refs.bool_(refs.t_item(value))
    if refs.np_generic is not None and refs.isinstance_(value, refs.np_generic):
        return refs.bool_(value.item())
    raise Failed(words.say("checks.expr.not_truth", got=render.described(value)))


_SEEN = re.compile(r"\{\{(.+?)\}\}")


def shown(value: Any) -> str:
    """What a message says about a value it names: plain values as written, anything else described."""
    kind = refs.type_(value)
    if kind in (bool, int, str) or value is None:
        return render.clip(refs.repr_(value) if kind is str else refs.str_(value), 60)
    if kind is float:
        return render.fmt_number(value)
    if kind in (list, tuple) and refs.len_(value) <= 8 and all(refs.type_(v) in (bool, int, float, str) for v in value):
        return render.clip(", ".join(shown(v) for v in value) or "none", 200)
    return render.describe(value)


def _fill(message: str, case: Case) -> str:
    """``{{ expression }}`` in a message says what the check saw (evaluated like the predicate)."""
    def one(match: Any) -> str:
        try:
            value = case.eval(match.group(1).strip())
            return render.clip(value, 60) if refs.type_(value) is str else shown(value)
        except PASS_THROUGH:
            raise
        except CodeRaised:  # the learner's code raised while being described: the message stands
            return "?"
    return _SEEN.sub(one, message)


def run(check: ExprData, case: Case) -> None:
    value = case.eval(check["predicate"])
    if not truth(value):
        message = check.get("message")
        if isinstance(message, dict):  # normally resolved by the parent; any language will do
            message = next(iter(message.values()), "")
        raise Failed(_fill(message, case) if message else words.say("checks.expr.false", predicate=check["predicate"]))
    return None


#: This module's kinds, registered in tutor/child/checks/kinds/__init__.py.
KINDS = (Kind("expr", run, canary="tensor"),)
