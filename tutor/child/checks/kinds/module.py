"""``module``: a module's mode, parameters and buffers, optionally after ``.to()`` or some code."""

from __future__ import annotations

from typing import Any

from tutor.child.checks import modules, refs, render
from tutor.words import engine as words
from tutor.child.checks.context import Case, Failed
from tutor.child.checks.vocab import ModuleData, TensorGroupData
from tutor.child.checks.kinds.kind import Kind


def _module(case: Case, source: str) -> Any:
    value = case.eval(source)
    if not modules.is_module(value):
        raise Failed(words.say("checks.module.not_module", source=source, got=render.described(value)),
                     expected=words.say("checks.phrase.a_module"), got=render.described(value))
    return value


def run(check: ModuleData, case: Case) -> None:
    module = _module(case, check["value"])
    before = modules.settings(module) if check.get("hyperparameters_unchanged") else None
    target = check.get("to")
    if target is not None:
        case.namespace["module"] = module
        case.namespace["__tutor_device__"] = target
        moved = case.eval("module.to(__tutor_device__)")
        if not modules.is_module(moved):
            raise Failed(words.say("checks.module.to_returned", target=repr(target), got=render.described(moved)),
                         expected=words.say("checks.phrase.the_module"), got=render.described(moved))
        module = moved
        _all_moved(module, target)
    case.namespace["module"] = module
    statements = check.get("run")
    if statements:
        case.run(statements)
    training = check.get("training")
    if training is not None:
        _training(module, training)
    for which, spec in (("parameters", check.get("parameters")), ("buffers", check.get("buffers"))):
        if spec:
            _group(module, which, spec)
    if before is not None:
        _unchanged_settings(module, before)
    return None


def _same_device(device: Any, wanted: str) -> bool:
    target = refs.device_type(wanted)
    return bool(device.type == target.type and (target.index is None or device.index == target.index))


def _all_moved(module: Any, target: str) -> None:
    for which, label in (("_parameters", words.say("checks.parameter")), ("_buffers", words.say("checks.buffer"))):
        for name, tensor in modules.group(module, which):
            device = refs.t_device(tensor)
            if not _same_device(device, target):
                raise Failed(words.say("checks.module.not_moved", target=repr(target), label=label, name=name,
                                       device=refs.str_(device)),
                             expected=target, got=refs.str_(device))
    for name, tensor in modules.plain_tensors(module):
        device = refs.t_device(tensor)
        if not _same_device(device, target):
            raise Failed(words.say("checks.module.plain_not_moved", target=repr(target), name=name,
                                   device=refs.str_(device)),
                         expected=target, got=refs.str_(device))


def _readable(name: str, sub: Any) -> dict[str, Any] | str:
    """`body[3]` (Dropout) for the name "body.3"; "the Dropout at index 3" for a bare "3"."""
    kind = refs.type_(sub).__name__
    if not name:
        return words.say("checks.module.itself", kind=kind)
    parts = name.split(".")
    if parts[0].isdigit() and len(parts) == 1:
        return words.say("checks.module.at_index", kind=kind, index=parts[0])
    text = f"[{parts[0]}]" if parts[0].isdigit() else parts[0]
    text += "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in parts[1:])
    return f"`{text}` ({kind})"


def _training(module: Any, wanted: bool) -> None:
    for name, sub in modules.walk(module):
        if modules.training(sub) != wanted:
            mode = "training" if wanted else "eval"
            got = "training" if not wanted else "eval"
            raise Failed(words.say("checks.module.training" if wanted else "checks.module.eval", sub=_readable(name, sub)),
                         expected=words.say(f"checks.phrase.{mode}_mode"),
                         got=words.say(f"checks.phrase.{got}_mode_of", sub=_readable(name, sub)))


def _group(module: Any, which: str, spec: TensorGroupData) -> None:
    label = words.say("checks.parameter" if which == "parameters" else "checks.buffer")
    plural = words.say("checks." + which)
    found = modules.group(module, "_" + which)
    names = [name for name, _ in found]
    count = spec.get("count")
    if count is not None and refs.len_(found) != count:
        raise Failed(words.say("checks.module.count_names" if names else "checks.module.count", count=count,
                               which=plural, got=refs.len_(found), names=", ".join(names[:8])),
                     expected=refs.str_(count), got=refs.str_(refs.len_(found)))
    exact = spec.get("names")
    if exact is not None and set(exact) != set(names):
        missing = [n for n in exact if n not in names]
        extra = [n for n in names if n not in exact]
        parts = ([words.say("checks.module.missing", names=", ".join(missing))] if missing else []) \
            + ([words.say("checks.module.unexpected", names=", ".join(extra))] if extra else [])
        differ = parts[0] if refs.len_(parts) == 1 else words.say("checks.module.both", missing=parts[0], unexpected=parts[1])
        raise Failed(words.say("checks.module.differ", which=plural, parts=differ), expected=", ".join(exact), got=", ".join(names))
    for name in spec.get("include") or []:
        if name not in names:
            raise Failed(words.say("checks.module.none_named_there" if names else "checks.module.none_named",
                                   label=label, name=name, names=", ".join(names[:8])),
                         expected=name, got=", ".join(names[:8]) or words.say("checks.phrase.none"))
    for name in spec.get("exclude") or []:
        if name in names:
            raise Failed(words.say("checks.module.should_not", name=name, label=label),
                         expected=words.say("checks.phrase.no_named", label=label, name=name),
                         got=words.say("checks.phrase.named", label=label, name=name))
    for name, tensor in found:
        dtype = spec.get("dtype")
        if dtype is not None and render.dtype_name(refs.t_dtype(tensor)) != dtype.removeprefix("torch."):
            got = render.dtype_name(refs.t_dtype(tensor))
            raise Failed(words.say("checks.module.dtype", label=label, name=name, got=got,
                                   expected=dtype.removeprefix("torch.")),
                         expected=dtype.removeprefix("torch."), got=got)
        device = spec.get("device")
        if device is not None and not _same_device(refs.t_device(tensor), device):
            got = refs.str_(refs.t_device(tensor))
            raise Failed(words.say("checks.module.device", label=label, name=name, got=got, expected=device),
                         expected=device, got=got)
        requires_grad = spec.get("requires_grad")
        if requires_grad is not None and refs.t_requires_grad(tensor) != requires_grad:
            got = refs.t_requires_grad(tensor)
            raise Failed(words.say("checks.module.requires_grad", label=label, name=name, got=got,
                                   expected=requires_grad),
                         expected=f"requires_grad={requires_grad}", got=f"requires_grad={got}")


def _unchanged_settings(module: Any, before: dict[tuple[str, str], Any]) -> None:
    after = modules.settings(module)
    for key, value in before.items():
        prefix, attr = key
        now = after.get(key, "<removed>")
        if refs.type_(now) is not refs.type_(value) or now != value:
            where = f"`{prefix}`" if prefix else words.say("checks.module.the_module")
            raise Failed(words.say("checks.module.setting", where=where, attr=attr, old=modules.fmt_setting(value),
                                   new=modules.fmt_setting(now)),
                         expected=f"{attr}={modules.fmt_setting(value)}", got=f"{attr}={modules.fmt_setting(now)}")


#: This module's kinds, registered in tutor/child/checks/kinds/__init__.py.
KINDS = (Kind("module", run, canary="module"),)
