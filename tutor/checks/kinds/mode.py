"""``mode``: grad, inference and autocast state seen inside a module's forward, and afterwards.

Observed with forward (pre-)hooks registered through nn.Module's own methods, so the state is
read at the moment the learner's code actually runs the module, not guessed from their text.
"""

from __future__ import annotations

from tutor.checks import modules, refs, render
from tutor.checks.context import Case, Failed
from tutor.checks.vocab import ModeData
from tutor.checks.kinds.kind import Kind


def _autocast_device(module) -> str:
    for _, tensor in modules.group(module, "_parameters"):
        if refs.t_device(tensor).type == "cuda":
            return "cuda"
    return "cpu"


def state(device: str) -> dict:
    on = refs.bool_(refs.autocast_enabled(device))
    return {
        "grad_enabled": refs.bool_(refs.is_grad_enabled()),
        "inference_mode": refs.bool_(refs.is_inference_mode_enabled()),
        "autocast": render.dtype_name(refs.autocast_dtype(device)) if on else False,
    }


def _fmt(key: str, value) -> str:
    if key == "grad_enabled":
        return "grad enabled" if value else "grad disabled"
    if key == "inference_mode":
        return "inference mode on" if value else "inference mode off"
    if value is False:
        return "autocast off"
    if value is True:
        return "autocast on"
    return f"autocast on with {value}"


def _matches(key: str, wanted, got) -> bool:
    if key != "autocast":
        return wanted == got
    if wanted is True:
        return got is not False
    if wanted is False:
        return got is False
    return got == refs.str_(wanted).removeprefix("torch.")


def run(check: ModeData, case: Case) -> dict:
    module = case.eval(check["module"])
    if not modules.is_module(module):
        raise Failed(f"`{check['module']}` gave {render.describe(module)}, expected an nn.Module")
    case.namespace["module"] = module
    device = _autocast_device(module)
    seen: list[dict] = []
    outputs: dict[str, list[str]] = {}
    session = case.session
    wanted_outputs = check.get("output_dtypes") or {}
    # the call runs the learner's code in the runner, which watches its copy of the module
    session.observe, session.observed = {"module": module, "outputs": list(wanted_outputs)}, []
    before = state(device)
    try:
        case.eval(check["call"])
        after = state(device)
    finally:
        session.observe = None
    if session.observed:
        before, after = _observed(session.observed, seen, outputs, before, after)
    during = {k: v for k, v in (check.get("during") or {}).items() if v is not None}
    if during:
        if not seen:
            raise Failed(f"the module's forward never ran during `{check['call']}`",
                         expected="at least one forward", got="none")
        for observed in seen:
            for key, wanted in during.items():
                if not _matches(key, wanted, observed[key]):
                    raise Failed(f"during the forward pass: expected {_fmt(key, wanted)}, got {_fmt(key, observed[key])}",
                                 expected=_fmt(key, wanted), got=_fmt(key, observed[key]))
    if check.get("restored", True):
        for key in ("grad_enabled", "inference_mode", "autocast"):
            if before[key] != after[key]:
                raise Failed(f"after `{check['call']}` returned: expected {_fmt(key, before[key])} as before the call, "
                             f"got {_fmt(key, after[key])} (use a with-block so the mode is restored)",
                             expected=_fmt(key, before[key]), got=_fmt(key, after[key]))
    for key, dtype in wanted_outputs.items():
        wanted = dtype.removeprefix("torch.")
        got = outputs.get(key)
        if not got:
            raise Failed(f"no output of `{key}` was seen during `{check['call']}`", expected=wanted, got="no output")
        for got_dtype in got:
            if got_dtype != wanted:
                raise Failed(f"output of `{key}`: expected {wanted}, got {got_dtype}", expected=wanted, got=got_dtype)
    return {"during": seen[:8], "before": before, "after": after}


def _observed(observed: list[dict], seen: list, outputs: dict, before: dict, after: dict):
    """Merge what the runner watched (facts it reports) into the judge's own record."""
    for report in observed:
        for item in report.get("seen") or []:
            if refs.type_(item) is dict:
                seen.append({k: item.get(k) for k in ("grad_enabled", "inference_mode", "autocast")})
        for key, dtypes in (report.get("outputs") or {}).items():
            outputs.setdefault(refs.str_(key), []).extend(refs.str_(d) for d in dtypes)
    first, last = observed[0].get("before"), observed[-1].get("after")
    return (first if refs.type_(first) is dict else before), (last if refs.type_(last) is dict else after)


#: This module's kinds, registered in tutor/checks/kinds/__init__.py.
KINDS = (Kind("mode", run, canary="mode"),)
