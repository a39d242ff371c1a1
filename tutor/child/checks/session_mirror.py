"""Mirrors of the learner's modules in the judge: :class:`MirrorModule` shells rebuilt from the
runner's description of an ``nn.Module`` (its parameters and buffers as tensors decoded here, its
plain settings as data), refreshed after each call that may change them.

The session owns every mirror it builds and the classes it made for them (``mirror_classes``): a
run names its own classes, and nothing here outlives the session. Calling a mirror, or ``.to()``,
``.train()`` and the like, runs on the real module in the runner through the session.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from tutor.child.checks import refs


class MirrorOwner(Protocol):
    """What building a mirror asks of the session that owns it (``tutor.child.checks.session_codec``)."""

    mirrors: dict[int, object]
    mirror_classes: dict[tuple[str, type | None], type]
    pristine: dict[int, bytes]

    def charge(self, nbytes: int) -> None: ...

    def decode(self, value: Any, data: list[Any], known_tensors: dict[str, Any], known_objects: dict[str, Any],
               built: dict[str, Any]) -> Any: ...

    def decode_tensor(self, spec: dict[str, Any], data: list[Any], known_tensors: dict[str, Any],
                      built: dict[str, Any]) -> Any: ...


class MirrorModule(refs.Module):
    """An nn.Module rebuilt from the runner's description of one of the learner's modules.

    Its ``__dict__`` holds what nn.Module's own code reads (``_parameters``, ``_buffers``,
    ``_modules``, ``training``, plain settings), as data; calling it, ``.to()``, ``.train()`` and
    the like run on the real module in the runner, and the mirror is refreshed from the answer.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._remote("__call__", args, kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._remote("forward", args, kwargs)

    def _remote(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        session = refs.object_getattribute(self, "_session")
        handle = refs.object_getattribute(self, "_handle")
        return session.call({"handle": handle} if method == "__call__" else {"getattr": [handle, method]},
                            args, kwargs, refresh=(handle,))

    def __getattr__(self, name: str) -> Any:
        attrs = refs.object_getattribute(self, "__dict__")
        for group in ("_parameters", "_buffers", "_modules"):
            members = attrs.get(group) or {}
            if name in members:
                return members[name]
        if name.startswith("_"):
            raise AttributeError(name)
        session = attrs["_session"]
        return session.getattr(attrs["_handle"], name)


for _method in ("to", "train", "eval", "cuda", "cpu", "float", "double", "half", "bfloat16", "requires_grad_",
                "zero_grad", "load_state_dict", "apply", "type"):
    def _make(method: str) -> Callable[..., Any]:
        def remote_method(self: MirrorModule, *args: Any, **kwargs: Any) -> Any:
            return self._remote(method, args, kwargs)
        remote_method.__name__ = method
        return remote_method
    setattr(MirrorModule, _method, _make(_method))


def _torch_class(bases: list[Any]) -> type | None:
    """The judge's own torch class a mirrored module derives from, if the runner named one."""
    import sys

    for entry in bases:
        if refs.type_(entry) is not list or refs.len_(entry) != 2:
            continue
        module = sys.modules.get(refs.str_(entry[0]))
        found = refs.getattr_(module, refs.str_(entry[1]), None) if module is not None else None
        if refs.type_(found) is type and refs.issubclass_(found, refs.Module):
            return found
    return None


def mirror(session: MirrorOwner, spec: dict[str, Any], data: list[Any], known_tensors: dict[str, Any]) -> MirrorModule:
    name = refs.str_(spec.get("type") or "Module")
    base = _torch_class(spec.get("torch_bases") or [])
    cls = session.mirror_classes.get((name, base))
    if cls is None:  # isinstance(m, nn.Linear) holds for a mirror of a Linear (or a subclass of it)
        bases = (MirrorModule,) if base is None or base is refs.Module else (MirrorModule, base)
        cls = type(name, bases, {"__module__": "your code"})
        session.mirror_classes[(name, base)] = cls
    module: MirrorModule = object.__new__(cls)
    session.mirrors[spec["handle"]] = module
    attrs = refs.object_getattribute(module, "__dict__")
    attrs.update(_session=session, _handle=spec["handle"], _parameters={}, _buffers={}, _modules={},
                 _non_persistent_buffers_set=set(), _forward_hooks={}, _forward_pre_hooks={},
                 _backward_hooks={}, _backward_pre_hooks={}, _state_dict_hooks={}, _load_state_dict_pre_hooks={},
                 _load_state_dict_post_hooks={}, _state_dict_pre_hooks={}, _forward_hooks_with_kwargs={},
                 _forward_pre_hooks_with_kwargs={}, _forward_hooks_always_called={}, _is_full_backward_hook=None)
    fill_mirror(session, module, spec, data, known_tensors)
    return module


def fill_mirror(session: MirrorOwner, module: Any, spec: dict[str, Any], data: list[Any],
                known_tensors: dict[str, Any]) -> None:
    attrs = refs.object_getattribute(module, "__dict__")
    built: dict[str, Any] = {}
    _fill(session, attrs, spec, data, known_tensors, built)
    for group in ("_parameters", "_buffers"):
        for tensor in attrs[group].values():
            if tensor is not None and refs.t_device(tensor).type != "meta":
                _keep_pristine(session, tensor)
    for name, value in list(attrs.items()):
        if refs.type_(value) in (refs.Tensor, refs.Parameter) and refs.t_device(value).type != "meta":
            _keep_pristine(session, value)


def _keep_pristine(session: MirrorOwner, tensor: Any) -> None:
    """The bytes a mirrored module's tensor had as the runner sent them (charged to the budget)."""
    storage = refs.t_untyped_storage(tensor)
    before = session.pristine.get(refs.id_(tensor))
    session.charge(refs.storage_nbytes(storage) - (refs.len_(before) if before is not None else 0))
    session.pristine[refs.id_(tensor)] = refs.storage_bytes(storage)


def _fill(session: MirrorOwner, attrs: dict[str, Any], spec: dict[str, Any], data: list[Any],
          known_tensors: dict[str, Any], built: dict[str, Any]) -> None:
    attrs["training"] = bool(spec.get("training", True))
    attrs["_parameters"] = {n: None if t is None else session.decode_tensor(t, data, known_tensors, built)
                            for n, t in spec.get("params", {}).items()}
    attrs["_buffers"] = {n: None if t is None else session.decode_tensor(t, data, known_tensors, built)
                         for n, t in spec.get("buffers", {}).items()}
    children: dict[str, Any] = {}
    for name, child in spec.get("children", {}).items():
        existing = session.mirrors.get(child["handle"])
        if existing is not None:
            fill_mirror(session, existing, child, data, known_tensors)
            children[name] = existing
        else:
            children[name] = mirror(session, child, data, known_tensors)
    attrs["_modules"] = children
    for name, (type_label, value) in spec.get("settings", {}).items():
        attrs[name] = _setting(type_label, session.decode(value, data, {}, {}, built))
    for name, tensor in spec.get("tensors", {}).items():
        attrs[name] = session.decode_tensor(tensor, data, known_tensors, built)


def _setting(type_label: str, value: Any) -> Any:
    if type_label == "tuple" and refs.type_(value) is list:
        return tuple(value)
    return value


def sync_module(session: MirrorOwner, module: Any, spec: dict[str, Any], data: list[Any],
                known_tensors: dict[str, Any]) -> None:
    """Bring a judge-built module up to what the runner's copy became after a call."""
    attrs = refs.object_getattribute(module, "__dict__")
    built: dict[str, Any] = {}
    attrs["training"] = bool(spec.get("training", True))
    for group, field in (("_parameters", "params"), ("_buffers", "buffers")):
        current = attrs.get(group)
        if current is None:
            continue
        wanted = spec.get(field, {})
        for name in [n for n in current if n not in wanted]:
            del current[name]
        for name, tensor_spec in wanted.items():
            existing = current.get(name)
            if tensor_spec is None:
                current[name] = None
            elif existing is None or tensor_spec.get("known") != f"t{refs.id_(existing)}":
                current[name] = session.decode_tensor(tensor_spec, data, known_tensors, built)
    children = attrs.get("_modules") or {}
    for name, child_spec in spec.get("children", {}).items():
        child = children.get(name)
        if child is not None and refs.issubclass_(refs.type_(child), refs.Module):
            sync_module(session, child, child_spec, data, known_tensors)
    for name, (type_label, value) in spec.get("settings", {}).items():
        attrs[name] = _setting(type_label, session.decode(value, data, {}, {}, built))
