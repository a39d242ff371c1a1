"""``mode``: grad, inference and autocast state seen inside a module's forward, and afterwards.

Observed with forward (pre-)hooks registered through nn.Module's own methods, so the state is
read at the moment the learner's code actually runs the module, not guessed from their text.
"""

from __future__ import annotations

from typing import Any

from tutor.child.checks import modules, refs, render
from tutor.words import engine as words
from tutor.child.checks.context import Case, Failed
from tutor.child.checks.vocab import ModeData
from tutor.child.checks.kinds.kind import Kind


def _autocast_device(module: Any) -> str:
    for _, tensor in modules.group(module, "_parameters"):
        if refs.t_device(tensor).type == "cuda":
            return "cuda"
    return "cpu"


def state(device: str) -> dict[str, Any]:
    on = refs.bool_(refs.autocast_enabled(device))
    return {
        "grad_enabled": refs.bool_(refs.is_grad_enabled()),
        "inference_mode": refs.bool_(refs.is_inference_mode_enabled()),
        "autocast": render.dtype_name(refs.autocast_dtype(device)) if on else False,
    }


def _fmt(key: str, value: Any) -> str:
    """A mode's state in English (a check's expected/got)."""
    return words.english(_said(key, value))


def _said(key: str, value: Any) -> dict[str, Any]:
    """A mode's state, as a said: "grad enabled", "autocast on with bfloat16"."""
    if key == "grad_enabled":
        return words.say("checks.mode.grad_on" if value else "checks.mode.grad_off")
    if key == "inference_mode":
        return words.say("checks.mode.inference_on" if value else "checks.mode.inference_off")
    if value is False:
        return words.say("checks.mode.autocast_off")
    if value is True:
        return words.say("checks.mode.autocast_on")
    return words.say("checks.mode.autocast_with", dtype=value)


def _matches(key: str, wanted: Any, got: Any) -> bool:
    if key != "autocast":
        return bool(wanted == got)
    if wanted is True:
        return got is not False
    if wanted is False:
        return got is False
    return bool(got == refs.str_(wanted).removeprefix("torch."))


def run(check: ModeData, case: Case) -> dict[str, Any]:
    module = case.eval(check["module"])
    if not modules.is_module(module):
        raise Failed(words.say("checks.module.not_module", source=check["module"], got=render.described(module)))
    case.namespace["module"] = module
    device = _autocast_device(module)
    seen: list[dict[str, Any]] = []
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
            raise Failed(words.say("checks.mode.never_ran", call=check["call"]),
                         expected=words.say("checks.phrase.a_forward"), got=words.say("checks.phrase.none"))
        for observed in seen:
            for key, wanted in during.items():
                if not _matches(key, wanted, observed[key]):
                    raise Failed(words.say("checks.mode.during", expected=_said(key, wanted),
                                           got=_said(key, observed[key])),
                                 expected=_fmt(key, wanted), got=_fmt(key, observed[key]))
    if check["restored"]:
        for key in ("grad_enabled", "inference_mode", "autocast"):
            if before[key] != after[key]:
                raise Failed(words.say("checks.mode.after", call=check["call"], expected=_said(key, before[key]),
                                       got=_said(key, after[key])),
                             expected=_fmt(key, before[key]), got=_fmt(key, after[key]))
    for key, dtype in wanted_outputs.items():
        wanted = dtype.removeprefix("torch.")
        got = outputs.get(key)
        if not got:
            raise Failed(words.say("checks.mode.no_output", key=key, call=check["call"]), expected=wanted, got=words.say("checks.phrase.no_output"))
        for got_dtype in got:
            if got_dtype != wanted:
                raise Failed(words.say("checks.mode.output", key=key, expected=wanted, got=got_dtype), expected=wanted, got=got_dtype)
    return {"during": seen[:8], "before": before, "after": after}


def _observed(observed: list[dict[str, Any]], seen: list[Any], outputs: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> Any:
    """Merge what the runner watched (facts it reports) into the judge's own record."""
    for report in observed:
        for item in report.get("seen") or []:
            if refs.type_(item) is dict:
                seen.append({k: item.get(k) for k in ("grad_enabled", "inference_mode", "autocast")})
        for key, dtypes in (report.get("outputs") or {}).items():
            outputs.setdefault(refs.str_(key), []).extend(refs.str_(d) for d in dtypes)
    first, last = observed[0].get("before"), observed[-1].get("after")
    return (first if refs.type_(first) is dict else before), (last if refs.type_(last) is dict else after)


#: This module's kinds, registered in tutor/child/checks/kinds/__init__.py.
KINDS = (Kind("mode", run, canary="mode"),)
