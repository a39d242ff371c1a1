"""``unchanged``: the learner's function leaves the caller's arguments as they were.

Snapshots (clones) of the named values are taken before the call and compared element by element
afterwards, so the message can say where and how a tensor was modified in place.
"""

from __future__ import annotations

from typing import Any

from tutor.child.checks import modules, refs, render, values
from tutor.words import engine as words
from tutor.child.checks.context import Case, Failed
from tutor.child.checks.vocab import UnchangedData
from tutor.child.checks.kinds.kind import Kind


def _snapshot(value: Any, depth: int = 0) -> Any:
    if render.is_tensor(value):
        return ("tensor", refs.t_clone(refs.t_detach(value)), render.shape(value), refs.t_requires_grad(value))
    if refs.np_ndarray is not None and refs.type_(value) is refs.np_ndarray:
        return ("ndarray", value.copy())
    if depth < 4 and refs.type_(value) in (list, tuple):
        return ("seq", refs.len_(value), [_snapshot(v, depth + 1) for v in value])
    if depth < 4 and refs.type_(value) is dict:
        return ("dict", {k: _snapshot(v, depth + 1) for k, v in value.items()})
    if modules.is_module(value):
        return ("module",
                {name: modules.training(sub) for name, sub in modules.walk(value)},
                {name: _snapshot(t, depth + 1) for name, t in modules.group(value, "_parameters")},
                {name: _snapshot(t, depth + 1) for name, t in modules.group(value, "_buffers")})
    if render.is_number(value) or refs.type_(value) in (str, bool, type(None)):
        return ("plain", value)
    return ("opaque",)


def run(check: UnchangedData, case: Case) -> None:
    names = check["names"]
    before = {}
    for name in names:
        if name not in case.namespace:
            raise Failed(words.say("checks.unchanged.undefined", name=name))
        before[name] = _snapshot(case.namespace[name])
    case.run(check["call"])
    for name in names:
        _compare(f"`{name}`", before[name], case.namespace[name])
    return None


def _compare(where: dict[str, Any] | str, snap: Any, value: Any) -> None:
    kind = snap[0]
    if kind == "tensor":
        _, saved, shape, requires_grad = snap
        if not render.is_tensor(value):
            raise Failed(words.say("checks.unchanged.replaced", where=where, got=render.described(value)))
        shape_now = render.shape(value)
        if shape_now != shape:
            raise Failed(words.say("checks.unchanged.resized", where=where, old=render.fmt_shape(shape),
                                   new=render.fmt_shape(shape_now)),
                         expected=render.fmt_shape(shape), got=render.fmt_shape(shape_now))
        if refs.t_device(value).type != "meta":
            got = values.as_float_tensor(value, where)
            expected = values.as_float_tensor(saved, where)
            mismatch = values.first_mismatch(got, expected, 0.0, 0.0)
            if mismatch is not None:
                index, new, old, count = mismatch
                integral = values.is_integral(saved)
                old_text, new_text = values.fmt_scalar(old, integral), values.fmt_scalar(new, integral)
                spot = words.say("checks.at_index", subject=where, index=render.fmt_index(index)) if index else where
                said = words.say("checks.unchanged.changed", where=spot, old=old_text, new=new_text)
                if count > 1:
                    said = words.say("checks.unchanged.elements_changed", sentence=said, count=count)
                raise Failed(said,
                             expected=old_text, got=new_text)
        if refs.t_requires_grad(value) != requires_grad:
            raise Failed(words.say("checks.unchanged.requires_grad", where=where, old=requires_grad,
                                   new=refs.t_requires_grad(value)))
    elif kind == "ndarray":
        if refs.type_(value) is not refs.np_ndarray or value.shape != snap[1].shape or not (value == snap[1]).all():
            raise Failed(words.say("checks.unchanged.array", where=where))
    elif kind == "seq":
        _, length, items = snap
        if refs.type_(value) not in (list, tuple) or refs.len_(value) != length:
            count = refs.len_(value) if refs.type_(value) in (list, tuple) else render.described(value)
            raise Failed(words.say("checks.unchanged.list", where=where, old=length, new=count))
        for index, item in enumerate(items):
            _compare(f"{words.english(where)}[{index}]", item, value[index])
    elif kind == "dict":
        if refs.type_(value) is not dict or set(value) != set(snap[1]):
            raise Failed(words.say("checks.unchanged.dict", where=where))
        for key, item in snap[1].items():
            _compare(f"{words.english(where)}[{key!r}]", item, value[key])
    elif kind == "module":
        _, training, params, buffers = snap
        for name, sub in modules.walk(value):
            was = training.get(name)
            if was is not None and was != modules.training(sub):
                now = "training" if modules.training(sub) else "eval"
                then = "training" if was else "eval"
                said = words.say(f"checks.unchanged.left_{now}", where=where)
                if name:
                    said = words.say(f"checks.unchanged.left_{now}_sub", where=where, name=name)
                raise Failed(said, expected=words.say(f"checks.phrase.{then}_mode"),
                             got=words.say(f"checks.phrase.{now}_mode"))
        for label, saved, group in ((words.say("checks.parameter"), params, "_parameters"),
                                    (words.say("checks.buffer"), buffers, "_buffers")):
            current = dict(modules.group(value, group))
            for name, item in saved.items():
                if name not in current:
                    raise Failed(words.say("checks.unchanged.removed", label=label, name=name, where=where))
                _compare(words.say("checks.unchanged.of", label=label, name=name, where=where), item, current[name])
    elif kind == "plain":
        if refs.type_(value) is not refs.type_(snap[1]) or value != snap[1]:
            raise Failed(words.say("checks.unchanged.plain", where=where, old=render.described(snap[1]),
                                   new=render.described(value)))


#: This module's kinds, registered in tutor/child/checks/kinds/__init__.py.
KINDS = (Kind("unchanged", run, canary="tensor"),)
