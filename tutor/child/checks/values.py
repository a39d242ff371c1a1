"""Comparing values without trusting them: tensors through TensorBase, numbers through their C
slots, never through a learner-controlled ``__eq__``, ``__bool__`` or ``__torch_function__``."""

from __future__ import annotations

from typing import Any

from tutor.child.checks import refs, render
from tutor.words import engine as words
from tutor.child.checks.context import Failed


def as_float_tensor(value: Any, what: dict[str, Any] | str) -> Any:
    """A detached float64 (or complex128) CPU copy of a tensor or number, for comparing."""
    if render.is_tensor(value):
        tensor = refs.t_detach(value)
        device = refs.t_device(tensor)
        if device.type == "meta":
            raise Failed(words.say("checks.meta", what=what))
        dtype = refs.t_dtype(tensor)
        target = refs.torch_complex128 if dtype.is_complex else refs.torch_float64
        return refs.t_to(tensor, device="cpu", dtype=target)
    if render.is_number(value):
        return refs.torch_tensor(render.number(value), dtype=refs.torch_float64)
    if refs.np_ndarray is not None and refs.isinstance_(value, (refs.np_ndarray, refs.np_generic)):
        return refs.torch_tensor(value.tolist(), dtype=refs.torch_float64)
    if refs.type_(value) in (list, tuple):
        try:
            return refs.torch_tensor(_plain(value), dtype=refs.torch_float64)
        except (TypeError, ValueError, RuntimeError):
            pass
    raise Failed(words.lead(what, words.say("checks.not_numeric", got=render.described(value))),
                 expected=words.say("checks.phrase.tensor_or_number"), got=render.described(value))


def _plain(value: Any) -> Any:
    if refs.type_(value) in (list, tuple):
        return [_plain(v) for v in value]
    if render.is_number(value):
        return render.number(value)
    if render.is_tensor(value):
        return refs.t_tolist(refs.t_detach(value))
    raise TypeError("not numeric")


def largest_magnitude(reference: Any) -> float | None:
    """The largest absolute value of a reference (a tensor, a number, or a sequence of them), or
    None when it holds no number: how far from zero the values a check compares against lie."""
    items = reference if refs.type_(reference) in (list, tuple) else [reference]
    largest: float | None = None
    for item in items:
        try:
            tensor = as_float_tensor(item, "")
        except Failed:
            return None
        if not refs.t_numel(tensor):
            continue
        value = refs.float_(refs.t_item(refs.t_amax(refs.t_abs(tensor))))
        if not refs.isfinite(value):
            return None
        largest = value if largest is None else max(largest, value)
    return largest


def first_mismatch(got: Any, expected: Any, rtol: float, atol: float) -> Any:
    """(index, got, expected, count) of the first element outside tolerance, or None."""
    close = refs.torch_isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    bad = refs.t_logical_not(close)
    if not refs.t_item(refs.t_any(bad)):
        return None
    positions = refs.t_nonzero(bad)
    count = refs.int_(refs.t_numel(positions) // max(refs.t_dim(got), 1)) if refs.t_dim(got) else 1
    index = tuple(refs.t_tolist(positions[0])) if refs.t_dim(got) else ()
    got_value = refs.t_item(got[index]) if index else refs.t_item(got)
    expected_value = refs.t_item(expected[index]) if index else refs.t_item(expected)
    return index, got_value, expected_value, count


def is_integral(value: Any) -> bool:
    """Whether values of this tensor or number read best as integers (1, not 1.0)."""
    if render.is_tensor(value):
        dtype = refs.t_dtype(value)
        return not (dtype.is_floating_point or dtype.is_complex)
    return refs.issubclass_(refs.type_(value), int)


def fmt_scalar(value: Any, integral: bool = False) -> str:
    """1.0 -> 101.0 for floats (as the learner would print them), 1 -> 101 for integers."""
    if refs.type_(value) is complex:
        return refs.repr_(value)
    if refs.type_(value) is bool:
        return "True" if value else "False"
    if integral and refs.isfinite(value):
        return refs.int_repr(refs.int_(value))
    text = f"{value:.6g}"
    if text.lstrip("-").isdigit():
        text += ".0"
    return text


def compare_close(value: Any, reference: Any, rtol: float, atol: float, *, what: dict[str, Any] | str = "",
                  broadcast: bool = False) -> None:
    """Raise Failed with a located, specific sentence unless value ≈ reference (``broadcast``:
    after broadcasting the two to one shape, as a harness comparing with ``==`` would)."""
    got = as_float_tensor(value, what)
    expected = as_float_tensor(reference, words.say("checks.reference_value"))
    got_shape, expected_shape = render.shape(got), render.shape(expected)
    if got_shape != expected_shape and broadcast:
        try:
            got, expected = refs.torch_module.broadcast_tensors(got, expected)
        except RuntimeError:
            raise Failed(words.lead(what, words.say("checks.shape_broadcast", expected=render.fmt_shape(expected_shape),
                                                    got=render.fmt_shape(got_shape))),
                         expected=render.fmt_shape(expected_shape), got=render.fmt_shape(got_shape)) from None
        got_shape = expected_shape = render.shape(got)
    if got_shape != expected_shape:
        raise Failed(words.lead(what, words.say("checks.shape", expected=render.fmt_shape(expected_shape),
                                                got=render.fmt_shape(got_shape))),
                     expected=render.fmt_shape(expected_shape), got=render.fmt_shape(got_shape))
    mismatch = first_mismatch(got, expected, rtol, atol)
    if mismatch is None:
        return
    index, got_value, expected_value, count = mismatch
    total = refs.t_numel(got)
    expected_text = fmt_scalar(expected_value, is_integral(reference))
    got_text = fmt_scalar(got_value, is_integral(value))
    subject = words.say("checks.is_wrong", what=what) if what else words.say("checks.wrong_value")
    if index:
        subject = words.say("checks.at_index", subject=subject, index=render.fmt_index(index))
    tolerance: dict[str, Any] | str = f"rtol {rtol:g}, atol {atol:g}"
    if total > 1:
        tolerance = words.say("checks.elements_differ", count=count, total=total, tolerance=tolerance)
    raise Failed(words.say("checks.wrong", subject=subject, expected=expected_text, got=got_text, tolerance=tolerance),
                 expected=expected_text, got=got_text)


def storage_ptr(tensor: Any) -> int:
    pointer: int = refs.storage_data_ptr(refs.t_untyped_storage(tensor))
    return pointer
