"""``tensor``: properties of a value the learner's code returns."""

from __future__ import annotations

from typing import Any, Callable

from tutor.child.checks import refs, render, values
from tutor.words import engine as words
from tutor.child.checks.context import Case, Failed
from tutor.child.checks.remote import Remote, type_name
from tutor.child.checks.vocab import TensorData
from tutor.child.checks.kinds.kind import Kind


def is_remote_tensor_subclass(value: Any) -> bool:
    return refs.type_(value) is Remote and refs.object_getattribute(value, "_tensor_subclass")


def _device(case: Case, tensor: Any) -> Any:
    facts = case.session.facts_of(tensor)
    return refs.device_type(facts["device"]) if facts is not None else refs.t_device(tensor)



def run(check: TensorData, case: Case) -> dict[str, Any] | None:
    reference = None
    if check.get("close_to") is not None:
        # the reference first, with the RNG put back, so a learner's function that modifies its
        # inputs in place cannot move the target (the `unchanged` check reports that separately)
        state = refs.torch_get_rng_state()
        reference = case.eval(check.get("close_to") or "")
        refs.torch_set_rng_state(state)
    value = case.eval(check["value"])
    # how far from zero the reference lies, for `validate` (a tolerance at the data's scale)
    data = {"reference_scale": values.largest_magnitude(reference)} if reference is not None else None
    if not check.get("each"):
        _check_one(check, case, value, reference, "")
        return data
    if refs.type_(value) not in (list, tuple):
        raise Failed(words.say("checks.tensor.not_sequence", got=render.described(value)),
                     expected=words.say("checks.phrase.a_sequence"), got=render.described(value))
    paired = isinstance(reference, (list, tuple)) and refs.len_(reference) == refs.len_(value)
    for index, item in enumerate(value):
        _check_one(check, case, item, reference[index] if paired else reference, words.say("checks.item", index=index))  # type: ignore[index]  # paired: a sequence
    return data


def _check_one(check: TensorData, case: Case, value: Any, reference: Any, what: dict[str, Any] | str) -> None:
    if check.get("number") is True and not render.is_number(value):
        raise Failed(words.lead(what, words.say("checks.tensor.want_number", got=render.described(value))),
                     expected=words.say("checks.phrase.a_number"), got=render.described(value))
    if check.get("number") is False and render.is_number(value):
        raise Failed(words.lead(what, words.say("checks.tensor.want_tensor", type=refs.type_(value).__name__)),
                     expected=words.say("checks.phrase.a_tensor"), got=render.described(value))
    wants_tensor = any(check.get(key) is not None for key in _PROPERTIES)
    if wants_tensor:
        if not render.is_tensor(value):
            if refs.isinstance_(value, refs.Tensor) or is_remote_tensor_subclass(value):
                got: dict[str, Any] | str = words.say("checks.phrase.subclass", type=type_name(value))
            else:
                got = render.described(value)
            raise Failed(words.lead(what, words.say("checks.tensor.want_torch_tensor", got=got)),
                         expected=words.say("checks.phrase.a_torch_tensor"), got=got)
        _properties(check, case, value, what)
    if reference is not None:
        values.compare_close(value, reference, check["rtol"], check["atol"], what=what,
                             broadcast=check["broadcast"])


def _mismatch(what: dict[str, Any] | str, name: str, expected: str, got: str, extra: str = "") -> Failed:
    said = words.say(f"checks.tensor.mismatch{extra}", name=name, expected=expected, got=got)
    return Failed(words.lead(what, said), expected=expected, got=got)


def _dtype(check: TensorData, case: Case, tensor: Any, what: dict[str, Any] | str) -> None:
    wanted = (check.get("dtype") or "").removeprefix("torch.")
    got = render.dtype_name(refs.t_dtype(tensor))
    if got != wanted:
        raise _mismatch(what, "dtype", wanted, got)


def _shape(check: TensorData, case: Case, tensor: Any, what: dict[str, Any] | str) -> None:
    expected = tuple(case.eval(d) if refs.type_(d) is str else d for d in check.get("shape") or [])
    got_shape = render.shape(tensor)
    if got_shape != tuple(refs.int_(d) for d in expected):
        raise Failed(words.lead(what, words.say("checks.shape", expected=render.fmt_shape(expected),
                                                got=render.fmt_shape(got_shape))),
                     expected=render.fmt_shape(expected), got=render.fmt_shape(got_shape))


def _device_of(check: TensorData, case: Case, tensor: Any, what: dict[str, Any] | str) -> None:
    device = check.get("device") or ""
    got_device = _device(case, tensor)
    wanted = refs.device_type(device)
    if not (got_device.type == wanted.type and (wanted.index is None or got_device.index == wanted.index)):
        raise _mismatch(what, "device", device, refs.str_(got_device))


def _layout(check: TensorData, case: Case, tensor: Any, what: dict[str, Any] | str) -> None:
    layout = check.get("layout") or ""
    facts = case.session.facts_of(tensor)
    got = facts["layout"] if facts is not None else refs.str_(refs.t_layout(tensor)).removeprefix("torch.")
    if got != layout.removeprefix("torch."):
        raise _mismatch(what, "layout", layout, got)


def _contiguous(check: TensorData, case: Case, tensor: Any, what: dict[str, Any] | str) -> None:
    wanted = check.get("contiguous")
    if refs.t_is_contiguous(tensor) != wanted:
        want_text = "contiguous" if wanted else "not contiguous"
        got = "contiguous" if not wanted else "not contiguous"
        raise Failed(words.lead(what, words.say("checks.tensor.want_contiguous" if wanted
                                                else "checks.tensor.want_non_contiguous")), expected=want_text, got=got)


def _flag(key: str, getter: Callable[[Any], bool]) -> Callable[[TensorData, Case, Any, dict[str, Any] | str], None]:
    def check_flag(check: TensorData, case: Case, tensor: Any, what: dict[str, Any] | str) -> None:
        wanted = check.get(key)
        if getter(tensor) != wanted:
            raise _mismatch(what, key, refs.str_(wanted), refs.str_(getter(tensor)))
    return check_flag


def _grad_fn(check: TensorData, case: Case, tensor: Any, what: dict[str, Any] | str) -> None:
    grad_fn = check.get("grad_fn") or ""
    got = render.grad_fn_name(tensor, case.session.facts_of(tensor))
    if grad_fn.lower() == "none" and got != "None":
        raise _mismatch(what, "grad_fn", "None", got, ".attached")
    if grad_fn.lower() == "present" and got == "None":
        raise Failed(words.lead(what, words.say("checks.tensor.want_grad_fn")),
                     expected=words.say("checks.phrase.grad_fn_set"), got="None")
    if grad_fn.lower() not in ("none", "present") and got != grad_fn:
        raise _mismatch(what, "grad_fn", grad_fn, got)


def _is_inference(check: TensorData, case: Case, tensor: Any, what: dict[str, Any] | str) -> None:
    is_inference = check.get("is_inference")
    if refs.t_is_inference(tensor) != is_inference:
        wanted = "an inference tensor (made under torch.inference_mode)" if is_inference else "a normal tensor"
        got = "an inference tensor" if not is_inference else "a normal tensor"
        raise Failed(words.lead(what, words.say("checks.tensor.want_inference" if is_inference
                                                else "checks.tensor.want_normal")), expected=wanted, got=got)


def _storage(key: str, must_share: bool) -> Callable[[TensorData, Case, Any, dict[str, Any] | str], None]:
    def check_storage(check: TensorData, case: Case, tensor: Any, what: dict[str, Any] | str) -> None:
        source = str(check.get(key) or "")
        other = case.eval(source)
        if not render.is_tensor(other):
            raise Failed(words.say("checks.tensor.source_not_tensor", source=source, got=render.described(other)))
        shared = values.storage_ptr(tensor) == values.storage_ptr(other)
        if shared == must_share:
            return
        if must_share:
            raise Failed(words.lead(what, words.say("checks.tensor.want_view", source=source)),
                         expected=words.say("checks.phrase.shares", source=source), got=words.say("checks.phrase.a_copy"))
        raise Failed(words.lead(what, words.say("checks.tensor.want_copy", source=source)),
                     expected=words.say("checks.phrase.independent", source=source),
                     got=words.say("checks.phrase.shares", source=source))
    return check_storage


#: field -> how it is checked, in the order the messages should come (the first mismatch is reported)
_PROPERTIES: dict[str, Callable[[TensorData, Case, Any, dict[str, Any] | str], None]] = {
    "dtype": _dtype,
    "shape": _shape,
    "device": _device_of,
    "layout": _layout,
    "contiguous": _contiguous,
    "requires_grad": _flag("requires_grad", refs.t_requires_grad),
    "is_leaf": _flag("is_leaf", refs.t_is_leaf),
    "grad_fn": _grad_fn,
    "is_inference": _is_inference,
    "shares_storage_with": _storage("shares_storage_with", True),
    "independent_of": _storage("independent_of", False),
}


def _properties(check: TensorData, case: Case, tensor: Any, what: dict[str, Any] | str) -> None:
    for key, verify in _PROPERTIES.items():
        if check.get(key) is not None:
            verify(check, case, tensor, what)


#: This module's kinds, registered in tutor/child/checks/kinds/__init__.py.
KINDS = (Kind("tensor", run, canary="tensor"),)
