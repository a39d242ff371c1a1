"""``tensor``: properties of a value the learner's code returns."""

from __future__ import annotations

from tutor.checks import refs, render, values
from tutor.checks.context import Case, Failed
from tutor.checks.remote import Remote, tensor_facts, type_name


def is_remote_tensor_subclass(value) -> bool:
    return refs.type_(value) is Remote and refs.object_getattribute(value, "_tensor_subclass")


def _device(tensor):
    facts = tensor_facts(tensor)
    return refs.device_type(facts["device"]) if facts is not None else refs.t_device(tensor)

_TENSOR_KEYS = ("dtype", "shape", "device", "requires_grad", "is_leaf", "grad_fn", "is_inference",
                "contiguous", "layout", "shares_storage_with", "independent_of")


def run(check: dict, case: Case):
    reference = None
    if check.get("close_to") is not None:
        # the reference first, with the RNG put back, so a learner's function that modifies its
        # inputs in place cannot move the target (the `unchanged` check reports that separately)
        state = refs.torch_get_rng_state()
        reference = case.eval(check["close_to"])
        refs.torch_set_rng_state(state)
    value = case.eval(check["value"])
    if not check.get("each"):
        _check_one(check, case, value, reference, "")
        return None
    if refs.type_(value) not in (list, tuple):
        raise Failed(f"expected a list or tuple of values, got {render.describe(value)}",
                     expected="a list or tuple", got=render.describe(value))
    paired = refs.type_(reference) in (list, tuple) and refs.len_(reference) == refs.len_(value)
    for index, item in enumerate(value):
        _check_one(check, case, item, reference[index] if paired else reference, f"item {index}")
    return None


def _check_one(check: dict, case: Case, value, reference, what: str) -> None:
    if check.get("number") is True and not render.is_number(value):
        raise Failed(f"{_lead(what)}expected a plain Python number (e.g. from .item()), got {render.describe(value)}",
                     expected="a Python number", got=render.describe(value))
    if check.get("number") is False and render.is_number(value):
        raise Failed(f"{_lead(what)}expected a tensor, got a plain Python {refs.type_(value).__name__}",
                     expected="a tensor", got=render.describe(value))
    wants_tensor = any(check.get(key) is not None for key in _TENSOR_KEYS)
    if wants_tensor:
        if not render.is_tensor(value):
            if refs.isinstance_(value, refs.Tensor) or is_remote_tensor_subclass(value):
                got = f"a {type_name(value)} (a Tensor subclass)"
            else:
                got = render.describe(value)
            raise Failed(f"{_lead(what)}expected a torch.Tensor, got {got}", expected="a torch.Tensor", got=got)
        _properties(check, case, value, what)
    if reference is not None:
        values.compare_close(value, reference, check.get("rtol", 1e-5), check.get("atol", 1e-6), what=what)


def _lead(what: str) -> str:
    return f"{what}: " if what else ""


def _mismatch(what: str, name: str, expected: str, got: str, extra: str = "") -> Failed:
    return Failed(f"{_lead(what)}expected {name} {expected}, got {got}{extra}", expected=expected, got=got)


def _properties(check: dict, case: Case, tensor, what: str) -> None:
    dtype = check.get("dtype")
    if dtype is not None:
        got = render.dtype_name(refs.t_dtype(tensor))
        if got != dtype.removeprefix("torch."):
            raise _mismatch(what, "dtype", dtype.removeprefix("torch."), got)
    shape = check.get("shape")
    if shape is not None:
        expected = tuple(case.eval(d) if refs.type_(d) is str else d for d in shape)
        got_shape = render.shape(tensor)
        if got_shape != tuple(refs.int_(d) for d in expected):
            raise Failed(f"{_lead(what)}shape: expected {render.fmt_shape(expected)}, got {render.fmt_shape(got_shape)}",
                         expected=render.fmt_shape(expected), got=render.fmt_shape(got_shape))
    device = check.get("device")
    if device is not None:
        got_device = _device(tensor)
        got = refs.str_(got_device)
        wanted = refs.device_type(device)
        same = got_device.type == wanted.type and (wanted.index is None or got_device.index == wanted.index)
        if not same:
            raise _mismatch(what, "device", device, got)
    layout = check.get("layout")
    if layout is not None:
        facts = tensor_facts(tensor)
        got = facts["layout"] if facts is not None else refs.str_(refs.t_layout(tensor)).removeprefix("torch.")
        if got != layout.removeprefix("torch."):
            raise _mismatch(what, "layout", layout, got)
    contiguous = check.get("contiguous")
    if contiguous is not None and refs.t_is_contiguous(tensor) != contiguous:
        got = "contiguous" if not contiguous else "not contiguous"
        raise Failed(f"{_lead(what)}expected a {'contiguous' if contiguous else 'non-contiguous'} tensor, got one "
                     f"that is {got}", expected="contiguous" if contiguous else "not contiguous", got=got)
    for key, getter in (("requires_grad", refs.t_requires_grad), ("is_leaf", refs.t_is_leaf)):
        wanted = check.get(key)
        if wanted is not None and getter(tensor) != wanted:
            raise _mismatch(what, key, refs.str_(wanted), refs.str_(getter(tensor)))
    grad_fn = check.get("grad_fn")
    if grad_fn is not None:
        got = render.grad_fn_name(tensor)
        if grad_fn.lower() == "none" and got != "None":
            raise _mismatch(what, "grad_fn", "None", got,
                            " (the result is still attached to the autograd graph)")
        if grad_fn.lower() == "present" and got == "None":
            raise _mismatch(what, "grad_fn", "to be set (part of the autograd graph)", "None")
        if grad_fn.lower() not in ("none", "present") and got != grad_fn:
            raise _mismatch(what, "grad_fn", grad_fn, got)
    is_inference = check.get("is_inference")
    if is_inference is not None and refs.t_is_inference(tensor) != is_inference:
        wanted = "an inference tensor (made under torch.inference_mode)" if is_inference else "a normal tensor"
        got = "an inference tensor" if not is_inference else "a normal tensor"
        raise Failed(f"{_lead(what)}expected {wanted}, got {got}", expected=wanted, got=got)
    for key, must_share in (("shares_storage_with", True), ("independent_of", False)):
        source = check.get(key)
        if source is None:
            continue
        other = case.eval(source)
        if not render.is_tensor(other):
            raise Failed(f"`{source}` is {render.describe(other)}, not a tensor")
        shared = values.storage_ptr(tensor) == values.storage_ptr(other)
        if shared != must_share:
            if must_share:
                raise Failed(f"{_lead(what)}expected a view sharing memory with `{source}`, got a copy",
                             expected=f"shares memory with {source}", got="a separate copy")
            raise Failed(f"{_lead(what)}expected a copy independent of `{source}`, got a tensor sharing its memory "
                         f"(changing one changes the other)",
                         expected=f"independent of {source}", got=f"shares memory with {source}")
