"""Short, specific renderings of values for expected/got sentences.

Everything here reads values through :mod:`tutor.child.checks.refs`, so an object with a lying
``__repr__`` or ``__eq__`` cannot make a message claim something false about it; learner objects
that are not tensors, numbers or plain containers are named by type only.
"""

from __future__ import annotations

from typing import Any

from tutor.child.checks import refs
from tutor.words import engine as words

MAX_TEXT = 120


def clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if refs.len_(text) <= limit else text[: limit - 1] + "…"


def is_tensor(value: Any) -> bool:
    """A real tensor: torch.Tensor or nn.Parameter exactly. Subclasses can intercept every
    operation through ``__torch_function__``, so they are not trusted as values to check."""
    kind = refs.type_(value)
    return kind is refs.Tensor or kind is refs.Parameter


def is_number(value: Any) -> bool:
    return refs.issubclass_(refs.type_(value), (int, float))


def number(value: Any) -> float:
    """The real value of an int/float (subclasses included, whatever they override)."""
    if refs.issubclass_(refs.type_(value), float):
        return refs.float_value(value)
    return refs.float_(refs.int_value(value))


def shape(value: Any) -> tuple[Any, ...]:
    return tuple(refs.t_shape(value))


def fmt_shape(dims: Any) -> str:
    dims = tuple(dims)
    return "(" + ", ".join(str(d) for d in dims) + ("," if refs.len_(dims) == 1 else "") + ")"


def dtype_name(dtype: Any) -> str:
    return refs.str_(dtype).removeprefix("torch.")


def fmt_number(value: float) -> str:
    if refs.type_(value) is bool:
        return "True" if value else "False"
    if refs.type_(value) is int:
        return refs.int_repr(value)
    return f"{value:.6g}"


def fmt_index(index: Any) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]"


def grad_fn_name(tensor: Any, facts: dict[str, Any] | None = None) -> str:
    """The name of a tensor's ``grad_fn``: the one the runner reported (``facts``, what the
    session keeps of a tensor it rebuilt: ``Session.facts_of``), else the tensor's own."""
    if facts is not None:  # rebuilt from the runner's answer: the name it reported
        return "None" if facts.get("grad_fn") is None else refs.str_(facts["grad_fn"])
    node = refs.t_grad_fn(tensor)
    return "None" if node is None else refs.type_(node).__name__


def describe(value: Any) -> str:
    """A short, trustworthy description of any value (in English: see :func:`described`)."""
    return words.english(described(value))


def described(value: Any) -> dict[str, Any] | str:
    """A short, trustworthy description of any value, as a said (tutor.words.engine) where it
    has words to translate; names, numbers, shapes and dtypes stay as they are."""
    if value is None:
        return "None"
    if is_tensor(value):
        key = "checks.describe.parameter" if refs.type_(value) is refs.Parameter else "checks.describe.tensor"
        said: dict[str, Any] | str = words.say(key, shape=fmt_shape(shape(value)), dtype=dtype_name(refs.t_dtype(value)))
        device = refs.t_device(value)
        if device.type != "cpu":
            said = words.say("checks.describe.on", what=said, device=refs.str_(device))
        return said
    if is_number(value):
        return f"{refs.type_(value).__name__} {fmt_number(number(value))}"
    if refs.type_(value) in (list, tuple):
        return words.say("checks.describe.sequence", type=refs.type_(value).__name__, count=refs.len_(value))
    if refs.type_(value) is str:
        return clip(refs.repr_(value), 60)
    if refs.issubclass_(refs.type_(value), refs.Module):
        return words.say("checks.describe.module", type=refs.type_(value).__name__)
    from tutor.child.checks.remote import type_name

    return words.say("checks.describe.other", type=type_name(value))


def bindings_text(bindings: dict[str, Any]) -> str:
    """"b=2, n=3" for a case's plain-valued bindings."""
    parts = []
    for name, value in bindings.items():
        if is_number(value) or refs.type_(value) in (str, bool) or value is None:
            parts.append(f"{name}={clip(refs.repr_(value), 30)}")
    return ", ".join(parts)


def inputs_text(namespace: dict[str, Any], names: Any) -> dict[str, Any] | str:
    """"x of shape (4, 8), w of shape (8, 2)" for the tensors a check built (a said; "" for none)."""
    parts = []
    for name in names:
        value = namespace.get(name)
        if is_tensor(value):
            parts.append(words.say("checks.describe.input", name=name, shape=fmt_shape(shape(value))))
        if refs.len_(parts) == 3:
            break
    return words.joined(parts, "checks.comma")


def to_jsonable(value: Any) -> Any:
    """Plain JSON values (NaN and infinities become strings, which strict JSON accepts)."""
    if refs.type_(value) is float and not refs.isfinite(value):
        return refs.repr_(value)
    if refs.type_(value) in (list, tuple):
        return [to_jsonable(v) for v in value]
    if refs.type_(value) is dict:
        return {refs.str_(k): to_jsonable(v) for k, v in value.items()}
    if value is None or refs.type_(value) in (bool, int, float, str):
        return value
    return refs.str_(value)
