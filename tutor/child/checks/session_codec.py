"""What crosses the judge's channel to a runner, and the proxies it makes: the judge's half of the
protocol's values (``tutor.child.checks.remote.Session`` is its transport).

Arguments travel out as a pickle whose persistent ids name tensors (sent as bytes), the learner's
objects (by handle), the check's functions (shipped as code, or called back) and modules (by
name); the runner is the untrusted side: it may unpickle what the judge sends, the judge never
unpickles anything. Values come back as plain data and are rebuilt here: tensors from their
bytes, dtype, shape and strides (their facts, what their values cannot carry, kept beside them
in the session, :meth:`SessionCodec.facts_of`); modules as mirrors (``session_mirror``); anything
else as a :class:`Remote`. Every byte of the runner's data kept here is charged to the session's
memory budget.
"""

from __future__ import annotations

import io
import pickle
import types
from typing import TYPE_CHECKING, Any, Callable

from tutor.child.checks import protocol, refs
from tutor.child.checks.session_mirror import MirrorModule, fill_mirror, mirror, sync_module

if TYPE_CHECKING:
    import torch


class RunnerRefused(BaseException):
    """The runner sent what the judge will not hold: more data than the judge's budget
    (``status == "memory"``) or a message nested too deep (``"error"``). It ends the run with that
    status: the submission's doing, never the sandbox's. A BaseException: no check catches it."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message



class SessionCodec:
    """The judge's half of what crosses the channel, and everything the session holds of the
    runner's data: tensors it decoded (and their facts), mirrors and the classes made for them,
    the check's functions the runner may call back. All of it is the session's, dropped with it
    (``forget``): nothing is kept at module level, so no run reads another's."""

    #: The bytes of the runner's data the judge may hold for one run (decoded tensor storages,
    #: frames being read), whatever the runner sends: a fixed budget, so a runner that describes
    #: one 64 MiB blob as many tensors cannot make the judge decode a copy per tensor.
    MEMORY_BUDGET = 512 * 1024 * 1024

    def __init__(self, kill: Callable[[], None] | None = None) -> None:
        self.kill = kill
        self.alive = True
        self.ship = True  # hand the check's functions to the runner (False: call them back here)
        self.mirrors: dict[int, object] = {}
        #: classes made for this session's mirrors, by (the runner's type name, torch base)
        self.mirror_classes: dict[tuple[str, type | None], type] = {}
        self.callbacks: dict[int, Callable[..., Any]] = {}
        self._callback_ids: dict[int, int] = {}
        self._keep: list[Any] = []
        #: id(tensor decoded here) -> the runner's facts about it (its spec: ``grad_fn``'s name,
        #: device, layout); the tensor is in ``_keep``, so its id is not reused while it is here
        self.facts: dict[int, dict[str, Any]] = {}
        self._storages: dict[str, torch.UntypedStorage] = {}
        self.pristine: dict[int, bytes] = {}  # id(mirror tensor) -> its bytes as the runner sent them
        self.held = 0  # bytes of the runner's data decoded and kept here (see MEMORY_BUDGET)

    # ------------------------------------------------------------------ the judge's memory budget

    def room(self) -> int:
        return max(self.MEMORY_BUDGET - self.held, 0)

    def charge(self, nbytes: int) -> None:
        """Count ``nbytes`` more of the runner's data held here; over the budget ends the run."""
        self.held += nbytes
        if self.held > self.MEMORY_BUDGET:
            self.die()
            raise RunnerRefused("memory", self.over_budget())

    def over_budget(self) -> str:
        return (f"your code's process sent the checker more than {self.MEMORY_BUDGET >> 20} MB of data "
                "to hold (the checker's own memory has that limit)")

    def die(self, kill: bool = True) -> None:
        """The runner is wedged or gone: nothing more is asked of it."""
        self.alive = False
        if kill and self.kill is not None:
            self.kill()

    def facts_of(self, tensor: Any) -> dict[str, Any] | None:
        """The runner's facts about a tensor this session decoded (None for any other value)."""
        return self.facts.get(refs.id_(tensor))

    def forget_values(self) -> None:
        """Drop every value kept of the runner's: tensors and their facts, mirrors, callbacks."""
        self._keep.clear()
        self.facts.clear()
        self.mirrors.clear()
        self.mirror_classes.clear()
        self.callbacks.clear()
        self._callback_ids.clear()
        self._storages.clear()
        self.pristine.clear()

    # ------------------------------------------------------------------ the judge's objects

    def _changed_mirror_tensors(self, mirrors: list[Any]) -> tuple[list[Any], list[Any]]:
        """Tensors of mirrored modules the judge changed since the runner described them."""
        where, changed = [], []
        for top in mirrors:
            stack: list[tuple[Any, list[str]]] = [(top, [])]
            while stack:
                module, path = stack.pop()
                attrs = refs.object_getattribute(module, "__dict__")
                handle = attrs.get("_handle")
                for group in ("_parameters", "_buffers", None):
                    members = attrs.get(group) if group else {k: v for k, v in attrs.items()
                                                              if refs.type_(v) in (refs.Tensor, refs.Parameter)}
                    for name, tensor in (members or {}).items():
                        pristine = self.pristine.get(refs.id_(tensor))
                        if tensor is None or pristine is None or refs.t_device(tensor).type == "meta":
                            continue
                        if refs.storage_bytes(refs.t_untyped_storage(tensor)) != pristine:
                            where.append([handle, [], group, name])
                            changed.append(tensor)
                for name, child in (attrs.get("_modules") or {}).items():
                    if refs.isinstance_(child, MirrorModule):
                        stack.append((child, path + [name]))
        return where, changed

    def callback_id(self, function: Any) -> int:
        key = refs.id_(function)
        fid = self._callback_ids.get(key)
        if fid is None:
            fid = refs.len_(self.callbacks)
            self.callbacks[fid] = function
            self._callback_ids[key] = fid
            self._keep.append(function)
        return fid

    def _mirrors_in(self, payload: Any, depth: int = 0) -> list[Any]:
        if depth > 6:
            return []
        if refs.isinstance_(payload, MirrorModule):
            return [payload]
        if refs.type_(payload) in (list, tuple):
            return [m for item in payload for m in self._mirrors_in(item, depth + 1)]
        if refs.type_(payload) is dict:
            return [m for item in payload.values() for m in self._mirrors_in(item, depth + 1)]
        return []

    def _ref(self, obj: Any, known_objects: dict[str, Any]) -> dict[str, Any]:
        if refs.isinstance_(obj, (Remote, MirrorModule)):
            return {"handle": object_handle(obj)}
        key = f"o{refs.id_(obj)}"
        known_objects.setdefault(key, obj)
        return {"known": key}

    # ------------------------------------------------------------------ arguments out

    def pack(self, payload: Any, blobs: list[Any], message: protocol.Call | protocol.Repeat | protocol.Result,
             known_tensors: dict[str, Any], known_objects: dict[str, Any]) -> int:
        session = self
        tensors: list[dict[str, Any]] = []
        index: dict[str, int] = {}
        storages: dict[str, int] = {}

        class Packer(pickle.Pickler):
            def persistent_id(self, obj: Any) -> Any:
                kind = refs.type_(obj)
                if kind is refs.Tensor or kind is refs.Parameter:
                    key = f"t{refs.id_(obj)}"
                    if key not in index:
                        known_tensors[key] = obj
                        index[key] = refs.len_(tensors)
                        tensors.append(session._tensor_spec(obj, key, blobs, storages))
                    return ("tensor", index[key])
                if refs.isinstance_(obj, (Remote, MirrorModule)):
                    return ("handle", object_handle(obj))
                if kind is types.FunctionType and obj.__code__.co_filename.startswith("<check ") and session.ship:
                    return ("function", ship_function(obj))
                if kind is _Container:
                    key = f"c{refs.id_(obj.value)}"
                    known_objects.setdefault(key, obj.value)
                    return ("container", [key, obj.value])
                if (kind is types.FunctionType and obj.__code__.co_filename.startswith("<check ")) or \
                        kind in (types.BuiltinMethodType, types.MethodType):
                    return ("callback", session.callback_id(obj))
                if kind is types.ModuleType:
                    return ("pymodule", obj.__name__)
                if refs.issubclass_(kind, refs.Module):
                    known_objects.setdefault(f"o{refs.id_(obj)}", obj)
                return None

        # modules among the arguments are known objects: the runner reports back their state
        _collect_modules(payload, known_objects)
        buffer = io.BytesIO()
        Packer(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((*payload, known_objects))
        message["tensors"] = tensors
        blobs.append(buffer.getvalue())
        return refs.len_(blobs) - 1

    def _tensor_spec(self, tensor: Any, key: str, blobs: list[Any], storages: dict[str, Any]) -> dict[str, Any]:
        device = refs.t_device(tensor)
        spec = {"key": key, "dtype": refs.str_(refs.t_dtype(tensor)).removeprefix("torch."),
                "shape": list(refs.t_shape(tensor)), "stride": list(tensor.stride()),
                "offset": refs.int_(tensor.storage_offset()), "requires_grad": refs.bool_(refs.t_requires_grad(tensor)),
                "param": refs.type_(tensor) is refs.Parameter, "device": device.type}
        if device.type == "meta":
            spec["storage"] = None
            return spec
        storage = refs.t_untyped_storage(tensor)
        skey = f"s{refs.storage_data_ptr(storage) or refs.id_(storage)}"
        if skey not in storages:
            blobs.append(refs.storage_bytes(storage if device.type == "cpu" else storage.cpu()))
            storages[skey] = refs.len_(blobs) - 1
            self._storages[skey] = storage
        spec["storage"] = skey
        spec["blob"] = storages[skey]
        return spec

    # ------------------------------------------------------------------ values in

    def apply_writeback(self, back: dict[str, Any], data: list[Any], known_tensors: dict[str, Any],
                        known_objects: dict[str, Any]) -> None:
        """Make the judge's arguments what the call left them: values, shapes, modules' state."""
        with refs.no_grad():
            for skey, index in (back.get("storages") or {}).items():
                storage = self._storages.get(skey)
                new = data[index]
                if storage is None or refs.storage_nbytes(storage) != refs.len_(new):
                    continue
                target = refs.torch_module.empty(0, dtype=refs.torch_module.uint8)
                target.set_(storage)
                target.copy_(refs.torch_module.frombuffer(bytearray(new), dtype=refs.torch_module.uint8))
            for key, spec in (back.get("tensors") or {}).items():
                tensor = known_tensors.get(key)
                if tensor is not None:
                    self._write_tensor(tensor, spec, data)
        for key, spec in (back.get("modules") or {}).items():
            module = known_objects.get(key)
            if module is not None:
                sync_module(self, module, spec, data, known_tensors)
        for key, spec in (back.get("containers") or {}).items():
            container = known_objects.get(key)
            value = self.decode(spec, data, known_tensors, known_objects, {})
            if refs.type_(container) is list and refs.type_(value) in (list, tuple):
                container[:] = value
            elif refs.type_(container) is dict and refs.type_(value) is dict:
                container.clear()
                container.update(value)
            elif refs.type_(container) is set and refs.type_(value) in (list, tuple):
                container.clear()
                container.update(value)

    def _write_tensor(self, tensor: Any, spec: dict[str, Any], data: list[Any]) -> None:
        """One argument tensor as the call left it (under no_grad)."""
        device = refs.t_device(tensor)
        same_storage = device.type != "meta" and spec.get("storage") is not None and \
            self._storages.get(spec["storage"]) is not None and \
            refs.storage_data_ptr(self._storages[spec["storage"]]) == \
            refs.storage_data_ptr(refs.t_untyped_storage(tensor))
        same_dtype = refs.str_(refs.t_dtype(tensor)).removeprefix("torch.") == spec.get("dtype")
        if same_storage and same_dtype:
            if list(refs.t_shape(tensor)) != spec["shape"] or list(tensor.stride()) != spec["stride"] or \
                    refs.int_(tensor.storage_offset()) != spec["offset"]:
                tensor.set_(self._storages[spec["storage"]], spec["offset"], spec["shape"], spec["stride"])
        elif spec.get("device") != "meta" or device.type != "meta" or not same_dtype:
            fresh = dict(spec)
            fresh.pop("known", None)
            tensor.data = self.decode_tensor(fresh, data, {}, {}).detach()
        if refs.bool_(spec.get("requires_grad")) != refs.t_requires_grad(tensor) and refs.t_is_leaf(tensor):
            tensor.requires_grad_(refs.bool_(spec.get("requires_grad")))

    def decode(self, value: Any, data: list[Any], known_tensors: dict[str, Any], known_objects: dict[str, Any],
               built: dict[str, Any]) -> Any:
        kind = refs.type_(value)
        if kind is not dict:
            return value
        tag = value.get("$")
        if tag in ("list", "tuple"):
            items = [self.decode(v, data, known_tensors, known_objects, built) for v in value["items"]]
            return items if tag == "list" else tuple(items)
        if tag == "dict":
            return {self.decode(k, data, known_tensors, known_objects, built):
                    self.decode(v, data, known_tensors, known_objects, built) for k, v in value["items"]}
        if tag == "tensor":
            return self.decode_tensor(value, data, known_tensors, built)
        if tag == "int":
            return refs.int_(value["text"])
        if tag == "float":
            return refs.float_(value["text"])
        if tag == "number":
            real = value["value"]
            return refs.float_(real) if value.get("float") else refs.int_(real)
        if tag == "size":
            return refs.Size(value["items"])
        if tag == "dtype":
            return refs.getattr_(refs.torch_module, value["name"])
        if tag == "device":
            return refs.device_type(value["name"])
        if tag == "ndarray" and refs.numpy_module is not None:
            array = refs.numpy_module.frombuffer(data[value["blob"]], dtype=value["dtype"])
            return array.reshape(value["shape"]).copy()
        if tag == "npscalar" and refs.numpy_module is not None:
            return refs.numpy_module.dtype(value["dtype"]).type(self.decode(value["value"], data, {}, {}, built))
        if tag == "known":
            return known_objects.get(value["key"])
        if tag == "pymodule":  # the judge's own copy of a module the learner imported, if it has one
            import sys

            module = sys.modules.get(refs.str_(value.get("name")))
            return module if module is not None else Remote(self, -1, "module", False)
        if tag == "module":
            if value.get("known") in known_objects:
                return known_objects[value["known"]]
            existing = self.mirrors.get(value["handle"])
            if existing is not None:
                fill_mirror(self, existing, value, data, known_tensors)
                return existing
            return mirror(self, value, data, known_tensors)
        if tag == "foreign":
            return Remote(self, value["handle"], value.get("type", "object"), bool(value.get("callable")),
                          bool(value.get("tensor_subclass")))
        return None

    def decode_tensor(self, spec: dict[str, Any], data: list[Any], known_tensors: dict[str, Any],
                      built: dict[str, Any]) -> Any:
        known = spec.get("known")
        if known is not None and known in known_tensors:
            return known_tensors[known]
        dtype = refs.getattr_(refs.torch_module, spec["dtype"])
        if spec.get("storage") is None:
            tensor = refs.torch_module.empty_strided(spec["shape"], spec["stride"], dtype=dtype, device="meta")
        else:
            skey = spec["storage"]
            storage = self._storages.get(skey) if skey.startswith("s") else built.get(skey)
            if storage is None:
                raw = data[spec["blob"]]
                self.charge(refs.len_(raw))  # a copy per storage key: counted, whatever blob it names
                base = refs.torch_module.frombuffer(bytearray(raw), dtype=refs.torch_module.uint8) if raw \
                    else refs.torch_module.empty(0, dtype=refs.torch_module.uint8)
                storage = refs.t_untyped_storage(base)
                built[skey] = storage
            tensor = refs.torch_module.empty(0, dtype=dtype)
            tensor.set_(storage, spec["offset"], spec["shape"], spec["stride"])
        if spec.get("is_inference"):
            with refs.torch_module.inference_mode():
                tensor = tensor.clone()
        if spec.get("param"):
            tensor = refs.Parameter(tensor, requires_grad=bool(spec.get("requires_grad")))
        elif spec.get("requires_grad") and not spec.get("is_inference"):
            tensor.requires_grad_(True)
            if not spec.get("is_leaf"):
                tensor = tensor.view_as(tensor)  # a node of a graph, as it was in the runner
        self.facts[refs.id_(tensor)] = spec
        self._keep.append(tensor)
        return tensor



class _Container:
    """A list, dict or set a shipped function reads: the runner reports it back after the call,
    so ``calls.append(args)`` in a check's ``record`` lands in the check's own ``calls``."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _mark(value: Any) -> Any:
    return _Container(value) if refs.type_(value) in (list, dict, set) else value


def ship_function(function: Any) -> tuple[Any, ...]:
    """A function of the check's own (a workload, a lambda) as what rebuilds it in the runner:
    its compiled code and the values of the names it reads. Pickled, they travel through the
    same references as arguments (tensors, the learner's objects, modules by name)."""
    import marshal

    code = function.__code__
    names: set[str] = set()
    stack = [code]
    while stack:  # names read by nested code too (a comprehension, a lambda, at any depth)
        current = stack.pop()
        names.update(current.co_names)
        stack.extend(const for const in current.co_consts if refs.type_(const) is types.CodeType)
    scope = function.__globals__
    values = {name: _mark(scope[name]) for name in names if name in scope and name not in ("__builtins__",)}
    cells = tuple(cell.cell_contents for cell in function.__closure__ or ())
    name = fresh_name()
    return (marshal.dumps(_renamed(code, function.__name__, name)), values, function.__defaults__, cells, name)


def fresh_name() -> str:
    """A name drawn afresh for each function shipped: the pack's names for its reference
    workloads (``matmul_heavy``) are public, and a submission must not answer by looking them up
    (issue 26: a ranking keyed by ``fn.__name__`` passed ``profiler-hotspot`` unprofiled)."""
    import secrets

    return f"f_{secrets.token_hex(6)}"


def _renamed(code: types.CodeType, old: str, new: str) -> types.CodeType:
    """``code`` and the code nested in it with the function's name replaced in ``co_name`` and
    ``co_qualname`` (a nested lambda's qualified name starts with its parent's)."""
    consts = tuple(_renamed(const, old, new) if refs.type_(const) is types.CodeType else const
                   for const in code.co_consts)
    changes: dict[str, Any] = {"co_consts": consts, "co_name": new if code.co_name == old else code.co_name}
    qualname = getattr(code, "co_qualname", None)  # Python 3.11 and later
    if qualname is not None:
        changes["co_qualname"] = new + qualname[len(old):] if qualname == old or qualname.startswith(old + ".") \
            else qualname
    return code.replace(**changes)


def _collect_modules(payload: Any, found: dict[str, Any], depth: int = 0) -> None:
    if depth > 6:
        return
    if refs.type_(payload) in (list, tuple):
        for item in payload:
            _collect_modules(item, found, depth + 1)
    elif refs.type_(payload) is dict:
        for item in payload.values():
            _collect_modules(item, found, depth + 1)
    elif refs.issubclass_(refs.type_(payload), refs.Module) and not refs.isinstance_(payload, MirrorModule):
        found.setdefault(f"o{refs.id_(payload)}", payload)



# --------------------------------------------------------------------------- proxies


def object_handle(obj: Any) -> int:
    handle: int = refs.object_getattribute(obj, "_handle")
    return handle


class Remote:
    """Something the learner's code made, living in the runner: call it, read its attributes."""

    __slots__ = ("_session", "_handle", "_type", "_callable", "_tensor_subclass")

    def __init__(self, session: Any, handle: int, type_name: str, is_callable: bool,
                 tensor_subclass: bool = False) -> None:
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_type", type_name)
        object.__setattr__(self, "_callable", is_callable)
        object.__setattr__(self, "_tensor_subclass", tensor_subclass)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # the callee travels inside the arguments: a canary's request looks the same
        return self._session.call({"callee": True}, (self, *args), kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._session.getattr(self._handle, name)

    def __repr__(self) -> str:
        return f"<{self._type} in your code>"

    def __bool__(self) -> bool:
        return True


def callee_key(target: dict[str, Any], args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """Which of the learner's callables a call runs: a function or object of theirs by its handle
    (``{"callee": true}`` with a Remote first), a module of theirs or its method; None for the
    check's own functions (a canary's, a workload shipped to the runner)."""
    if refs.type_(target) is not dict:
        return None
    if target.get("callee") is True:
        first = args[0] if args else None
        handle = refs.object_getattribute(first, "_handle") if refs.type_(first) is Remote else None
    else:
        handle = target.get("handle")
        method = target.get("getattr")
        if refs.type_(method) is list and refs.len_(method) == 2 and refs.type_(method[1]) is str:
            handle = method[0]
            if refs.type_(handle) is int:
                return ("method", handle, method[1])
    # a handle is the runner's number (as data: anything else names no callable of the learner's)
    return ("handle", handle) if refs.type_(handle) is int else None


def type_name(value: Any) -> str:
    """The learner-facing type name of a value (a Remote names the runner's type)."""
    if refs.type_(value) is Remote:
        name: str = refs.object_getattribute(value, "_type")
        return name
    return refs.type_(value).__name__

