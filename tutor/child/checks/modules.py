"""Reading an ``nn.Module`` tree without calling anything the learner could have overridden.

``named_parameters``, ``named_modules`` and ``training`` are all reachable by the learner's class
(a property, an override); the module's instance ``__dict__`` (``_modules``, ``_parameters``,
``_buffers``, ``training``) is what nn.Module itself reads, so that is what the checks read.
"""

from __future__ import annotations

from typing import Any, Iterator

from tutor.child.checks import refs, render


def is_module(value: Any) -> bool:
    return refs.issubclass_(refs.type_(value), refs.Module)


def attrs(module: Any) -> dict[str, Any]:
    table: dict[str, Any] = refs.object_getattribute(module, "__dict__")
    return table


def training(module: Any) -> bool:
    return refs.bool_(attrs(module).get("training", True))


def walk(module: Any, prefix: str = "") -> Iterator[Any]:
    """(dotted name, module) for the module and every submodule, each once."""
    seen = set()
    stack = [(prefix, module)]
    while stack:
        name, current = stack.pop(0)
        if refs.id_(current) in seen:
            continue
        seen.add(refs.id_(current))
        yield name, current
        children = attrs(current).get("_modules") or {}
        for child_name, child in children.items():
            if child is not None and is_module(child):
                stack.append((f"{name}.{child_name}" if name else child_name, child))


def group(module: Any, which: str) -> Any:
    """(dotted name, tensor) of parameters (``_parameters``) or buffers (``_buffers``), each once."""
    seen = set()
    found = []
    for prefix, current in walk(module):
        for name, tensor in (attrs(current).get(which) or {}).items():
            if tensor is None or refs.id_(tensor) in seen:
                continue
            seen.add(refs.id_(tensor))
            found.append((f"{prefix}.{name}" if prefix else name, tensor))
    return found


def plain_tensors(module: Any) -> Any:
    """Tensors stored as ordinary attributes: ``.to()`` and ``state_dict`` never see them."""
    found = []
    for prefix, current in walk(module):
        for name, value in attrs(current).items():
            if refs.isinstance_(value, refs.Tensor) and not name.startswith("__"):
                found.append((f"{prefix}.{name}" if prefix else name, value))
    return found


def label(name: str, module: Any) -> str:
    kind = refs.type_(module).__name__
    return f"`{name}` ({kind})" if name else f"the module ({kind})"


_SETTING_TYPES = (bool, int, float, str, type(None))


def settings(module: Any) -> dict[tuple[str, str], Any]:
    """Hyper-parameters: the plain-valued public attributes of every submodule (Dropout's p,
    BatchNorm's momentum...), keyed by (submodule name, attribute)."""
    found = {}
    for prefix, current in walk(module):
        for name, value in attrs(current).items():
            if name.startswith("_") or name == "training":
                continue
            if refs.type_(value) in _SETTING_TYPES or (
                refs.type_(value) is tuple and all(refs.type_(v) in _SETTING_TYPES for v in value)
            ):
                found[(prefix, name)] = value
    return found


def fmt_setting(value: Any) -> str:
    return render.clip(refs.repr_(value), 40)
