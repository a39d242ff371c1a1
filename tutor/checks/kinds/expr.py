"""``expr``: an instructor's predicate, the escape hatch.

Truthiness is only taken from values whose truth cannot lie (builtins, numpy scalars, one-element
tensors); a learner object with its own ``__bool__`` is an instructor error, reported as such.
"""

from __future__ import annotations

from tutor.checks import refs, render
from tutor.checks.context import Case, Failed
from tutor.checks.vocab import ExprData

_PLAIN = (bool, int, float, str, list, tuple, dict, set, type(None))


def truth(value) -> bool:
    kind = refs.type_(value)
    if kind in _PLAIN:
        return refs.bool_(value)
    if render.is_tensor(value):
        if refs.t_numel(value) != 1:
            raise Failed(f"the check's predicate gave a tensor of shape {render.fmt_shape(render.shape(value))}; "
                         "it must give one truth value (use .all() or .any())")
        return refs.bool_(refs.t_item(value))
    if refs.np_generic is not None and refs.isinstance_(value, refs.np_generic):
        return refs.bool_(value.item())
    raise Failed(f"the check's predicate gave {render.describe(value)}, not a truth value")


def run(check: ExprData, case: Case) -> None:
    value = case.eval(check["predicate"])
    if not truth(value):
        message = check.get("message")
        if isinstance(message, dict):  # normally resolved by the parent; any language will do
            message = next(iter(message.values()), "")
        raise Failed(message or f"`{check['predicate']}` is false")
    return None
