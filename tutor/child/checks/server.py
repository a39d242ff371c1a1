"""The runner's side of checking: answer the judge's narrow requests about the learner's code.

Runs in the process that ran the learner's code, so nothing here is trusted by the judge: it only
calls what it is asked to call, and reports what happened as plain data (:mod:`protocol`): values,
exceptions, printed text, what a call did to its arguments, facts observed during a call. It never
computes a verdict. Its references to torch (``refs``) were taken before the learner's code ran,
which keeps honest answers right when the learner monkeypatches torch; a learner who rewrites this
module can make it answer anything, which is why the judge checks values itself and cross-checks
the facts it cannot recompute (see docs/architecture.md, "Threat model"). Its records are kept
where the learner's Python cannot reach them: every method that runs learner code is a generator
that hands the call to ``tutor.child.checks.driver.drive`` (see ``Server.serving``).
"""

from __future__ import annotations

import pickle
import random
import types
import warnings
from typing import Any, Callable, Generator

from tutor.child.checks import guard, modules, protocol, refs
from tutor.child.checks.driver import CALLBACK_CODE, DRIVE_CODE, Callback, Raised, here
from tutor.child.checks.context import CheckTimeout, Learner, TimeLimit, reset_modes, seed_all

_SETTING_TYPES = (bool, int, float, str, type(None))
_MAX_DEPTH = 30
#: A global tensor bigger than this is not copied to the judge up front (a check rarely reads one).
_MANIFEST_TENSOR_BYTES = 16 * 1024 * 1024


class ServerCodec:
    """The runner's half of what crosses the channel: the learner's objects by handle, values out
    as plain data (:meth:`encode`, a call's :meth:`writeback`), requests' arguments in
    (:meth:`arguments`). Defined here, beside :class:`Server`, on purpose: the seal tells the
    checker's frames by this module's globals (``seal._reaches``), and none of this runs learner
    code itself (what does is a :class:`Server` generator, driven by ``tutor.child.checks.driver``)."""

    #: what a callback among a request's arguments is made with (``Server.callback_maker``)
    callback_maker: Callable[[], Any]

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace  # the learner's globals (the manifest describes them)
        self.objects: list[Any] = []
        self._handles: dict[int, int] = {}
        # per request
        self.received_storages: dict[int, tuple[str, bytes]] = {}
        self.received_tensors: dict[int, tuple[str, object]] = {}
        self.received_objects: dict[str, object] = {}

    # ------------------------------------------------------------------ handles and encoding

    def handle(self, obj: Any) -> int:
        key = refs.id_(obj)
        index = self._handles.get(key)
        if index is None:
            index = refs.len_(self.objects)
            self.objects.append(obj)
            self._handles[key] = index
        return index

    def encode(self, value: Any, blobs: list[Any], storages: dict[str, Any], depth: int = 0) -> Any:
        kind = refs.type_(value)
        if value is None or kind in (bool, str):
            return value
        if kind is int:
            return value if -(1 << 53) < value < (1 << 53) else {"$": "int", "text": refs.int_repr(value)}
        if kind is float:
            return value if refs.isfinite(value) else {"$": "float", "text": refs.repr_(value)}
        if kind is refs.Tensor or kind is refs.Parameter:
            return self.encode_tensor(value, blobs, storages)
        if refs.issubclass_(kind, (int, float)) and not refs.issubclass_(kind, bool):
            real = refs.float_value(value) if refs.issubclass_(kind, float) else refs.int_value(value)
            return {"$": "number", "type": kind.__name__, "float": refs.issubclass_(kind, float),
                    "value": real if refs.isfinite(refs.float_(real)) else refs.repr_(real)}
        if depth > _MAX_DEPTH:
            return self.foreign(value)
        if kind in (list, tuple):
            return {"$": kind.__name__, "items": [self.encode(v, blobs, storages, depth + 1) for v in value]}
        if kind is dict:
            return {"$": "dict", "items": [[self.encode(k, blobs, storages, depth + 1),
                                            self.encode(v, blobs, storages, depth + 1)] for k, v in value.items()]}
        if kind is refs.Size:
            return {"$": "size", "items": [refs.int_(d) for d in value]}
        if kind is refs.torch_module.dtype:
            return {"$": "dtype", "name": refs.str_(value).removeprefix("torch.")}
        if kind is refs.device_type:
            return {"$": "device", "name": refs.str_(value)}
        if refs.np_ndarray is not None and kind is refs.np_ndarray and value.dtype.hasobject is False:
            blobs.append(value.tobytes())
            return {"$": "ndarray", "dtype": refs.str_(value.dtype), "shape": list(value.shape),
                    "blob": refs.len_(blobs) - 1}
        if refs.np_generic is not None and refs.isinstance_(value, refs.np_generic):
            return {"$": "npscalar", "dtype": refs.str_(value.dtype), "value": self.encode(value.item(), blobs, storages)}
        if refs.issubclass_(kind, refs.Module):
            return self.encode_module(value, blobs, storages, depth)
        return self.foreign(value)

    def foreign(self, value: Any) -> dict[str, Any]:
        kind = refs.type_(value)
        known = self._known_key(value)
        if known is not None:
            return {"$": "known", "key": known}
        return {"$": "foreign", "type": kind.__name__, "handle": self.handle(value),
                "callable": refs.bool_(callable(value)),
                "tensor_subclass": refs.issubclass_(kind, refs.Tensor),
                "exception": refs.issubclass_(kind, BaseException)}

    def _known_key(self, value: Any) -> Any:
        for key, obj in self.received_objects.items():
            if obj is value:
                return key
        return None

    def storage_key(self, tensor: Any, blobs: list[Any], storages: dict[str, Any]) -> tuple[str | None, int | None]:
        """The judge's key for a storage it sent, or a fresh key and the blob holding its bytes."""
        device = refs.t_device(tensor)
        if device.type == "meta":
            return None, None
        storage = refs.t_untyped_storage(tensor)
        pointer = refs.storage_data_ptr(storage)
        known = self.received_storages.get(pointer)
        if known is not None:
            return known[0], None
        key = f"r{pointer}"
        if key not in storages:
            blobs.append(refs.storage_bytes(storage if device.type == "cpu" else storage.cpu()))
            storages[key] = refs.len_(blobs) - 1
        return key, storages[key]

    def encode_tensor(self, tensor: Any, blobs: list[Any], storages: dict[str, Any]) -> dict[str, Any]:
        layout = refs.str_(refs.t_layout(tensor)).removeprefix("torch.")
        facts = {
            "$": "tensor", "param": refs.type_(tensor) is refs.Parameter,
            "dtype": refs.str_(refs.t_dtype(tensor)).removeprefix("torch."),
            "device": refs.str_(refs.t_device(tensor)), "layout": layout,
            "requires_grad": refs.bool_(refs.t_requires_grad(tensor)),
            "is_leaf": refs.bool_(refs.t_is_leaf(tensor)),
            "grad_fn": None if refs.t_grad_fn(tensor) is None else refs.type_(refs.t_grad_fn(tensor)).__name__,
            "is_inference": refs.bool_(refs.t_is_inference(tensor)),
        }
        known = self.received_tensors.get(refs.id_(tensor))
        if known is not None:
            facts["known"] = known[0]
        if layout != "strided":  # sparse and friends: their values, densely
            tensor = tensor.to_dense()
        facts.update(shape=[refs.int_(d) for d in refs.t_shape(tensor)], stride=list(tensor.stride()),
                     offset=refs.int_(tensor.storage_offset()))
        facts["storage"], facts["blob"] = self.storage_key(tensor, blobs, storages)
        return facts

    def encode_module(self, module: Any, blobs: list[Any], storages: dict[str, Any], depth: int) -> dict[str, Any]:
        known = self._known_key(module)
        attrs = refs.object_getattribute(module, "__dict__")
        torch_bases = [[cls.__module__, cls.__qualname__] for cls in refs.type_(module).__mro__
                       if refs.str_(cls.__module__).startswith("torch.")]
        encoded: dict[str, Any] = {"$": "module", "type": refs.type_(module).__name__, "handle": self.handle(module),
                   "torch_bases": torch_bases[:1],
                   "training": refs.bool_(attrs.get("training", True)), "params": {}, "buffers": {},
                   "children": {}, "settings": {}, "tensors": {}}
        if known is not None:
            encoded["known"] = known
        for which, field in (("_parameters", "params"), ("_buffers", "buffers")):
            for name, tensor in (attrs.get(which) or {}).items():
                encoded[field][name] = None if tensor is None else self.encode_tensor(tensor, blobs, storages)
        for name, child in (attrs.get("_modules") or {}).items():
            if child is not None and refs.issubclass_(refs.type_(child), refs.Module) and depth < _MAX_DEPTH:
                encoded["children"][name] = self.encode_module(child, blobs, storages, depth + 1)
        for name, value in attrs.items():
            if name.startswith("_") or name == "training":
                continue
            if refs.type_(value) in _SETTING_TYPES or (
                    refs.type_(value) is tuple and all(refs.type_(v) in _SETTING_TYPES for v in value)):
                encoded["settings"][name] = [refs.type_(value).__name__, self.encode(value, blobs, storages)]
            elif refs.type_(value) in (refs.Tensor, refs.Parameter):
                encoded["tensors"][name] = self.encode_tensor(value, blobs, storages)
        return encoded

    def manifest(self, blobs: list[Any]) -> dict[str, Any]:
        """The learner's global names, encoded: values as data, the rest as handles."""
        names = {}
        storages: dict[str, Any] = {}
        for name, value in list(self.namespace.items()):
            if name.startswith("__"):
                continue
            if refs.type_(value) is types.ModuleType:
                names[name] = {"$": "pymodule", "name": refs.str_(refs.getattr_(value, "__name__", ""))}
                continue
            if refs.type_(value) in (refs.Tensor, refs.Parameter) and refs.t_device(value).type != "meta" and \
                    refs.storage_nbytes(refs.t_untyped_storage(value)) > _MANIFEST_TENSOR_BYTES:
                names[name] = self.foreign(value)  # fetched only if a check reads it
                continue
            try:
                names[name] = self.encode(value, blobs, storages)
            except Exception:  # noqa: BLE001 - an object we cannot describe stays a handle
                names[name] = self.foreign(value)
        return names

    # ------------------------------------------------------------------ requests in

    def _tensor_from(self, spec: dict[str, Any], blobs: list[Any], built: dict[str, Any]) -> Any:
        key = spec["storage"]
        dtype = refs.getattr_(refs.torch_module, spec["dtype"])
        if spec.get("device") == "meta":
            tensor = refs.torch_module.empty_strided(spec["shape"], spec["stride"], dtype=dtype, device="meta")
        else:
            storage = built.get(key)
            if storage is None:
                data = blobs[spec["blob"]]
                base = refs.torch_module.frombuffer(bytearray(data), dtype=refs.torch_module.uint8) if data \
                    else refs.torch_module.empty(0, dtype=refs.torch_module.uint8)
                storage = refs.t_untyped_storage(base)
                built[key] = storage
                self.received_storages[refs.storage_data_ptr(storage)] = (key, data)
            tensor = refs.torch_module.empty(0, dtype=dtype)
            tensor.set_(storage, spec["offset"], spec["shape"], spec["stride"])
        if spec.get("param"):
            tensor = refs.Parameter(tensor, requires_grad=spec["requires_grad"])
        elif spec["requires_grad"]:
            tensor.requires_grad_(True)
        self.received_tensors[refs.id_(tensor)] = (spec["key"], tensor)
        return tensor

    def arguments(self, request: dict[str, Any], blobs: list[Any]) -> Any:
        self.received_storages, self.received_tensors, self.received_objects = {}, {}, {}
        if request.get("args") is None:
            return (), {}
        table = request.get("tensors") or []
        built: dict[str, Any] = {}
        tensors = [self._tensor_from(spec, blobs, built) for spec in table]
        server = self

        class Loader(pickle.Unpickler):
            def persistent_load(self, pid: Any) -> Any:
                kind, value = pid
                if kind == "tensor":
                    return tensors[value]
                if kind == "handle":
                    return server.objects[value]
                if kind == "function":
                    return server.rebuild_function(value)
                if kind == "callback":
                    return Callback(server.callback_maker(), value)
                if kind == "container":
                    key, container = value
                    server.received_objects[key] = container
                    return container
                if kind == "pymodule":
                    import importlib

                    return importlib.import_module(value)
                raise pickle.UnpicklingError(f"unknown reference {kind}")

        import io

        loaded = Loader(io.BytesIO(blobs[request["args"]])).load()
        args, kwargs, objects = loaded[0], loaded[1], loaded[-1]
        self.received_objects.update(objects)
        if refs.len_(loaded) == 4:
            self.push(request.get("push") or [], loaded[2])
        return args, kwargs

    def push(self, where: list[Any], tensors: list[Any]) -> None:
        """The judge changed tensors of a module that lives here (``net.scale.copy_(...)`` in a
        check's setup): make the real module's tensors hold the same values."""
        with refs.no_grad():
            for (handle, path, group, name), tensor in zip(where, tensors):
                module = self.objects[handle]
                for part in path:
                    module = (refs.object_getattribute(module, "__dict__").get("_modules") or {})[part]
                members = refs.object_getattribute(module, "__dict__").get(group) if group else None
                real = members.get(name) if members is not None else \
                    refs.object_getattribute(module, "__dict__").get(name)
                if real is not None and refs.t_shape(real) == refs.t_shape(tensor) and \
                        refs.t_dtype(real) == refs.t_dtype(tensor):
                    real.copy_(tensor)

    def rebuild_function(self, shipped: Any) -> Any:
        """A function of the check's (a workload, a lambda) from its code and the values it reads
        in the judge (the learner's names among them travel as handles to the learner's objects
        here). Its globals are those values, torch's names and the builtins as they were before
        the learner's code ran: nothing else of the learner's module (a ``range`` of theirs must
        not run inside the check's reference loop)."""
        import marshal

        code, values, defaults, cells, name = shipped
        scope: dict[str, Any] = {"__builtins__": dict(refs.BUILTINS)}
        scope.update(torch=refs.torch_module, nn=refs.nn_module, F=refs.F_module)
        if refs.numpy_module is not None:
            scope["np"] = refs.numpy_module
        scope.update(values)
        closure = tuple(types.CellType(value) for value in cells) if cells else None
        return types.FunctionType(marshal.loads(code), scope, name, defaults, closure)

    def target(self, spec: dict[str, Any]) -> Any:
        if "handle" in spec:
            return self.objects[spec["handle"]]
        handle, name = spec["getattr"]
        return refs.getattr_(self.objects[handle], name)

    def writeback(self, out: list[Any]) -> dict[str, Any]:
        """What the call did to the arguments it received: changed storages, tensor metadata,
        and the state of every module among them."""
        storages = {}
        for pointer, (key, original) in self.received_storages.items():
            tensor = None
            for _, candidate in self.received_tensors.values():
                if refs.t_device(candidate).type != "meta" and \
                        refs.storage_data_ptr(refs.t_untyped_storage(candidate)) == pointer:
                    tensor = candidate
                    break
            if tensor is None:
                continue
            now = refs.storage_bytes(refs.t_untyped_storage(tensor))
            if now != original:
                out.append(now)
                storages[key] = refs.len_(out) - 1
        tensors = {}
        shared: dict[str, Any] = {}
        for key, tensor in self.received_tensors.values():
            tensors[key] = self.encode_tensor(tensor, out, shared)
        modules, containers = {}, {}
        for key, obj in self.received_objects.items():
            if refs.type_(obj) in (list, dict, set):
                saved = self.received_objects
                self.received_objects = {}
                try:
                    value = list(obj) if refs.type_(obj) is set else obj
                    containers[key] = self.encode(value, out, shared)
                finally:
                    self.received_objects = saved
                continue
            if refs.issubclass_(refs.type_(obj), refs.Module):
                saved = self.received_objects
                self.received_objects = {}
                try:
                    modules[key] = self.encode_module(obj, out, shared, 0)
                finally:
                    self.received_objects = saved
        return {"storages": storages, "tensors": tensors, "modules": modules, "containers": containers}

class Server(ServerCodec):
    """The runner's server: answers the judge's requests one after another (:meth:`serving`),
    running the learner's code only as jobs its generators hand to ``tutor.child.checks.driver``."""

    def __init__(self, sock: Any, namespace: dict[str, Any], learner: Learner) -> None:
        super().__init__(namespace)
        self.sock = sock
        self.learner = learner
        self._held: int | None = None  # what the last measured call left allocated (see _held)
        self.case: object = None  # the judge's case whose seed the generators were last given
        # how this server's generators run (see serving)
        self._driver: Any = None  # the frame of the drive() that may resume them now
        self._thrown: Raised | None = None  # the learner's exception last thrown in (driver.Raised)
        self._make_callback: Any = None  # what a Callback holds (callbacks)

    # ------------------------------------------------------------------ serving
    #
    # The learner's code runs only from :func:`drive`'s frame (issue 50): every method below that
    # needs it is a generator that yields a job (a function, its arguments) and is sent the job's
    # value or thrown its exception. So the frames a learner's function can walk up to
    # (``sys._getframe().f_back``, a traceback's ``tb_frame``) are ``drive``'s and the runner's
    # start-up: none holds this server, its records or an answer being made. They live in the
    # suspended generators' frames, reached only through ``gi_frame`` or the garbage collector,
    # which the seal's audit hook refuses (``tutor.child.checks.seal``); and a generator resumed by
    # anything but its driver's frame (the learner's code holding one and sending it a value) ends
    # the run as tampering.

    def serving(self, serve_one: Any = None) -> Any:
        """The server's loop, as a generator for :func:`drive`: one request after another until
        the judge says bye. ``serve_one``: taken once, while the seal holds (the runner checked it
        just before), so a serve_one the learner's code puts on the class later is never called."""
        self._driver = here().f_back.f_back  # drive's
        serve_one = serve_one or Server.serve_one
        while True:
            try:
                request, blobs = protocol.recv(self.sock)
            except (protocol.ProtocolError, OSError):
                return
            op = str(request.get("op"))
            if op == "bye":
                return
            if not (yield from serve_one(self, op, request, blobs)):
                return

    def job(self, function: Any, args: Any = (), kwargs: Any = None, timed: Any = None) -> Any:
        """Have the driver run ``function(*args, **kwargs)``: its value, or its exception raised here.
        ``timed`` (``False``, or ``True`` to synchronise CUDA first): the seconds the call took instead."""
        try:
            value = yield (function, args, kwargs or {}, timed)
        except Raised as carried:
            self._resumed()
            self._thrown = carried
            raise carried.error from None
        except BaseException:
            self._resumed()
            raise
        self._resumed()
        return value

    def learners(self, error: BaseException) -> BaseException:
        """The learner's exception as it reached the driver (its traceback and context then): one
        thrown into the server's generators came back with their frames, which must not stay
        within the reach of learner code that kept it."""
        thrown = self._thrown
        if thrown is not None and thrown.error is error:
            error.__traceback__, error.__context__ = thrown.traceback, thrown.context
            error.__suppress_context__ = False
            self._thrown = None
        return error

    def _resumed(self) -> None:
        """The frame that resumed this server's generators (past their own frames) must be the
        driver's that runs them: anything else is the learner's code sending or throwing to a
        generator it reached, to stop a measurement early or hand it a value of its own."""
        frame = here().f_back.f_back.f_back  # past here, _resumed and job
        while frame is not None and frame.f_globals is _GLOBALS:
            frame = frame.f_back
        if frame is not self._driver:
            seal_broken()

    def serve_one(self, op: str, request: dict[str, Any], blobs: list[Any], nested: bool = False,
                  check: Any = None) -> Any:
        """Answer one request (a generator for :func:`drive`); whether the channel still works.
        ``check``: the runner's seal (``tutor.child.checks.seal``, which puts it in this function's
        defaults), looked at before the answer leaves: the learner's code ran while it was made,
        and an answer made by code it replaced never goes out as an answer."""
        answer, out = yield from self.answer(op, request, blobs)
        repaired = guard.restore()
        if not nested:  # a request made while the learner's code waits on a callback keeps its modes
            reset_modes()
        if check is not None:
            check(self)
        if repaired:
            answer["repaired"] = repaired
        try:
            protocol.send(self.sock, answer, out)
        except OSError:
            return False
        return True

    def save(self) -> tuple[Any, ...]:
        return self.received_storages, self.received_tensors, self.received_objects

    def restore(self, saved: tuple[Any, ...]) -> None:
        self.received_storages, self.received_tensors, self.received_objects = saved

    def answer(self, op: str, request: dict[str, Any], blobs: list[Any]) -> Any:
        """The answer to one request (``protocol.Request``: its handler in ``HANDLERS``), and its blobs."""
        out: list[Any] = []
        handler = HANDLERS.get(op)
        try:
            if handler is None:
                return {"op": "answer", "error": f"unknown request {op!r}"}, out
            return (yield from handler(self, request, blobs, out)), out
        except CheckTimeout:
            return {"op": "answer", "timeout": {"lineno": None}}, []
        except Exception as bug:  # noqa: BLE001 - a request we could not serve is reported, not fatal
            return {"op": "answer", "error": f"{refs.type_(bug).__name__}: {bug}"}, []

    def guarded(self, request: dict[str, Any], action: Any, out: list[Any], finish: Any = None) -> Any:
        """Run learner code under the request's time budget; its value, exception or timeout.
        ``action``: a generator function (its learner code runs as :meth:`job`\\ s)."""
        answer: protocol.Answer = {"op": "answer"}
        storages: dict[str, Any] = {}
        wall: Any = request.get("wall")  # the judge's word: a number, or anything (then no cap of its own)
        want = request.get("want", "value")
        limit = TimeLimit(float(request.get("budget", 5.0)),
                          wall=refs.float_(wall) if refs.type_(wall) in (int, float) else None)
        try:
            with limit:
                try:
                    value = yield from action()
                except CheckTimeout as stop:
                    raise self.learners(stop) from None
                except BaseException as error:  # noqa: BLE001 - the learner's exception is the answer
                    answer["raised"] = self.raised(self.learners(error))
                    answer["cpu"] = limit.used()
                    return answer
                if finish is not None:
                    finish(answer, value, out, storages)
                if want == "value":
                    answer["value"] = self.encode(value, out, storages)
        except CheckTimeout as stop:
            lineno = self.learner.last_line(stop.__traceback__)
            return {"op": "answer", "cpu": limit.used(),
                    "timeout": {"lineno": lineno, "code": self.learner.line(lineno), "by_wall": limit.by_wall}}
        answer["cpu"] = limit.used()  # what the request cost, for the judge's count of the check's time
        return answer

    def raised(self, error: BaseException) -> dict[str, Any]:
        explained = self.learner.explain(error)
        kind = refs.type_(error)
        raised = {"type": kind.__name__, "mro": [cls.__name__ for cls in kind.__mro__],
                  "message": explained["message"], "lineno": explained["lineno"], "text": explained["text"]}
        if kind.__module__ == "tutor.child.checks.seal" and kind.__name__ == "Refused" and refs.len_(error.args) > 1:
            raised["refused"] = refs.str_(error.args[1])  # what the seal refused: said in the learner's language
        return raised

    def getattr_request(self, request: dict[str, Any], blobs: list[Any], out: list[Any]) -> Any:
        """``protocol.GetAttr``: an attribute of one of the learner's objects (a property runs code)."""
        obj, name = self.objects[request["handle"]], request["name"]
        return (yield from self.guarded(request, lambda: self.job(refs.getattr_, (obj, name)), out))

    def call(self, request: dict[str, Any], blobs: list[Any], out: list[Any]) -> Any:
        args, kwargs = self.arguments(request, blobs)
        spec = request["target"]
        if spec.get("callee"):
            function, args = args[0], args[1:]
        elif "handle" in spec:
            function = self.objects[spec["handle"]]
        else:
            handle, name = spec["getattr"]
            function = yield from self.job(refs.getattr_, (self.objects[handle], name))
        observe = request.get("observe")
        watcher = Watcher(self, observe) if observe else None
        measure = request.get("measure")
        printed = refs.StringIO() if request.get("capture") else None
        warned: list[Any] = []
        record = WarningsRecorder(warned) if request.get("warnings") else None
        measured: dict[str, Any] = {}

        def action() -> Any:
            self.seed_case(request)
            modes = set_modes(request.get("modes"))
            threads = _set_threads(request.get("threads"))
            try:
                if watcher is not None:
                    watcher.start()
                baseline = _baseline(measure)
                heap = refs.heap_in_use() if measure == "graph" else None
                if record is not None:
                    record.start()
                try:
                    if printed is not None:
                        with refs.redirect_stdout(printed):
                            value = yield from self.job(function, args, kwargs)
                    else:
                        value = yield from self.job(function, args, kwargs)
                finally:
                    if record is not None:
                        record.stop()
                    if watcher is not None:
                        watcher.stop()
                if measure:
                    measured["held"] = _held(heap) if measure == "graph" else None
                    measured["kept"] = _kept(measure, value, baseline)
                return value
            finally:
                del modes
                _set_threads(threads)

        def finish(answer: Any, value: Any, out: Any, storages: Any) -> Any:
            if measure:
                answer["kept"] = measured["kept"]
                if measured["held"] is not None:
                    answer["held"] = measured["held"]

        answer = yield from self.guarded(request, action, out, finish=finish)
        answer["modes_after"] = state("cpu")  # a mode the call left switched (set_grad_enabled(False))
        if printed is not None:
            answer["printed"] = printed.getvalue()
        if record is not None:
            answer["warned"] = warned
        if watcher is not None:
            answer["observed"] = watcher.report()
        answer["writeback"] = self.writeback(out)
        refreshed = {}
        for handle in request.get("refresh") or []:
            obj = self.objects[handle]
            if refs.issubclass_(refs.type_(obj), refs.Module):
                refreshed[refs.str_(handle)] = self.encode_module(obj, out, {}, 0)
        if refreshed:
            answer["refreshed"] = refreshed
        return answer

    def seed_case(self, request: dict[str, Any]) -> None:
        """Seed the generators at the first request of each of the judge's cases."""
        case, seed = request.get("case"), request.get("seed")
        if refs.type_(case) is int and refs.type_(seed) is int and case != self.case:
            self.case = case
            seed_all(seed)

    def repeat(self, request: dict[str, Any], blobs: list[Any], out: list[Any]) -> Any:
        """``protocol.Repeat``: time or profile callables here, where the learner's code runs."""
        op = request.get("op")
        targets, _ = self.arguments(request, blobs)
        warmup, repeat = int(request.get("warmup", 2)), int(request.get("repeat", 5))
        threads = request.get("threads", 1)
        threads = threads if refs.type_(threads) is int and 1 <= threads <= 256 else 1

        def action() -> Any:
            self.seed_case(request)
            if op == "time":
                return (yield from time_calls(self, targets, warmup, repeat, threads))
            return (yield from profile_calls(self, targets[0], warmup, repeat, threads))

        return (yield from self.guarded(dict(request, want="none"), action, [],
                                        finish=lambda answer, value, out, storages: answer.update(numbers=value)))

    def callback(self, fid: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """One call of a check's function by the learner's code (:class:`Callback`), as a generator
        for :func:`drive`: the judge runs it, and this answers the judge's requests meanwhile."""
        caller = here().f_back.f_back  # drive's frame, in Callback.__call__'s
        if caller is None or caller.f_code is not DRIVE_CODE or caller.f_back is None or \
                caller.f_back.f_code is not CALLBACK_CODE:
            seal_broken()
        self._driver, driver = caller, self._driver
        saved = self.save()
        try:
            blobs: list[Any] = []
            encoded = self.encode([list(args), kwargs], blobs, {})
            protocol.send(self.sock, {"op": "callback", "fid": fid, "args": encoded}, blobs)
            while True:
                request, data = protocol.recv(self.sock)
                op = request.get("op")
                if op == "result":
                    break
                yield from self.serve_one(str(op), request, data, nested=True)
                self.restore(saved)
            if "raised" in request:
                raise RuntimeError(f"the check's function failed: {request['raised']}")
            result, _ = self.arguments(request, data)
            return result[0]
        finally:
            self.restore(saved)
            self._driver = driver

    def callback_maker(self) -> Any:
        """The send of this server's :meth:`callbacks` generator, made once."""
        if self._make_callback is None:
            maker = self.callbacks()
            next(maker)
            self._make_callback = maker.send
        return self._make_callback

    def callbacks(self) -> Any:
        """What a :class:`Callback` holds: a generator that makes one :meth:`callback` generator per
        call (the callback itself never holds this server, which the learner's code could reach)."""
        made = None
        while True:
            fid, args, kwargs = yield made
            made = self.callback(fid, args, kwargs)


def seal_broken() -> None:
    """The server's generators were resumed by the learner's code: the seal's tampered frame goes
    out and the process ends (``tutor.child.checks.seal``); with no seal, the process ends."""
    check = (Server.serve_one.__defaults__ or (None, None))[-1]
    if check is not None:
        check(None, _broken=True)
    refs.os_exit(seal_exit_code())


def seal_exit_code() -> int:
    return protocol.EXIT_TAMPERED


#: The runner's handler of each request the judge sends (``protocol.Request``, ``REQUEST_OPS``):
#: ``tests/static/test_protocol.py`` checks that there is one for each, and no other. Each is a
#: generator for :func:`drive` (``Server.serving``), its value the answer.
HANDLERS: dict[str, Callable[[Server, dict[str, Any], list[Any], list[Any]], Generator[Any, Any, protocol.Answer]]] = {
    "call": Server.call,
    "getattr": Server.getattr_request,
    "time": Server.repeat,
    "profile": Server.repeat,
}


def _set_threads(wanted: Any) -> int | None:
    """Switch torch's intra-op threads to ``wanted`` if it differs; what to switch back to."""
    if refs.type_(wanted) is not int or wanted < 1:
        return None
    current = refs.int_(refs.get_num_threads())
    if current == wanted:
        return None
    refs.set_num_threads(wanted)
    return current


# --------------------------------------------------------------------------- observing


def set_modes(modes: dict[str, Any] | None) -> Any:
    """Run a call under the judge's grad/inference modes; returns what keeps inference mode on."""
    reset_modes()
    if not modes:
        return None
    refs.set_grad_enabled_raw(refs.bool_(modes.get("grad_enabled", True)))
    autocast = modes.get("autocast")
    if autocast:
        refs.set_autocast_enabled("cpu", True)
        if refs.type_(autocast) is str:
            refs.torch_module.set_autocast_dtype("cpu", refs.getattr_(refs.torch_module, autocast))
    if modes.get("inference_mode"):
        return refs.InferenceModeGuard(True)
    return None


def state(device: str) -> dict[str, Any]:
    on = refs.bool_(refs.autocast_enabled(device))
    return {
        "grad_enabled": refs.bool_(refs.is_grad_enabled()),
        "inference_mode": refs.bool_(refs.is_inference_mode_enabled()),
        "autocast": refs.str_(refs.autocast_dtype(device)).removeprefix("torch.") if on else False,
    }


class Watcher:
    """Forward hooks on one module during a call: the modes its forward ran under, output dtypes.

    The records live in a generator's frame (:func:`_recording`), and the hooks in the module's
    hook tables hold only that generator's ``send`` and the module they watch: the learner's code,
    which can read those tables, reaches no record (``gi_frame`` is refused by the seal). A record
    is taken only when torch's own module call runs the hook, for the module it watches; the
    learner's code calling a hook itself adds nothing. A recorder the learner's code closed or
    threw into is tampering."""

    def __init__(self, server: Server, spec: dict[str, Any]) -> None:
        self.server = server
        self.module = self._resolve(spec.get("module") or {})
        self.outputs_wanted = spec.get("outputs") or []
        self.handles: list[Any] = []
        self.before: dict[str, Any] | None = None
        self.after: dict[str, Any] | None = None
        self.device = "cpu"
        self.recorder = None
        self.records: tuple[list[Any], dict[str, Any]] = ([], {})

    def _resolve(self, ref: dict[str, Any]) -> Any:
        if "handle" in ref:
            return self.server.objects[ref["handle"]]
        return self.server.received_objects.get(str(ref.get("known")))

    def start(self) -> None:
        module = self.module
        if module is not None and refs.issubclass_(refs.type_(module), refs.Module):
            for tensor in (refs.object_getattribute(module, "__dict__").get("_parameters") or {}).values():
                if tensor is not None and refs.t_device(tensor).type == "cuda":
                    self.device = "cuda"
            recorder = self.recorder = _recording(self.device)
            next(recorder)
            self.handles.append(refs.register_forward_pre_hook(module, _pre_hook(recorder.send, module)))
            for key in self.outputs_wanted:
                for name, sub in modules.walk(module):
                    if name == key or refs.type_(sub).__name__ == key:
                        self.handles.append(refs.register_forward_hook(sub, _output_hook(recorder.send, sub, key)))
        self.before = state(self.device)

    def stop(self) -> None:
        self.after = state(self.device)
        for handle in self.handles:
            handle.remove()
        if self.recorder is not None:
            try:
                self.recorder.send(None)
            except StopIteration as done:
                if done.value is None:  # closed or thrown into by the learner's code
                    seal_broken()
                self.records = done.value
            else:
                seal_broken()
            self.recorder = None

    def report(self) -> dict[str, Any]:
        seen, outputs = self.records
        return {"seen": seen[:64], "outputs": outputs, "before": self.before, "after": self.after}


def _pre_hook(send: Any, module: Any) -> Any:
    def hook(_module: Any, _args: Any) -> Any:
        send(("pre", module, None, None))
    return hook


def _output_hook(send: Any, module: Any, key: str) -> Any:
    def hook(_module: Any, _args: Any, output: Any) -> Any:
        send(("output", module, key, output))
    return hook


def _recording(device: str) -> Any:
    """The records of one :class:`Watcher`, kept in this generator's frame: sent ``(what, module,
    key, output)`` by a hook, ``None`` to end; returns ``(seen, outputs)``. A message counts only
    when it comes from one of the watcher's own hooks that torch's module call, for the module it
    watches, ran itself: not from a hook of the learner's, nor from the learner's code calling one."""
    seen: list[Any] = []
    outputs: dict[str, Any] = {}
    message = yield
    while message is not None:
        what, module, key, output = message
        hook = here().f_back.f_back  # past here and this generator: the hook that sent this
        caller = hook.f_back if hook is not None and hook.f_code in _HOOK_CODES else None
        if caller is not None and caller.f_code in _MODULE_CALL_CODES and caller.f_locals.get("self") is module:
            if what == "pre":
                seen.append(state(device))
            else:
                tensor = output
                if refs.type_(output) in (tuple, list) and output:
                    tensor = output[0]
                if refs.type_(tensor) in (refs.Tensor, refs.Parameter):
                    outputs.setdefault(key, []).append(refs.str_(refs.t_dtype(tensor)).removeprefix("torch."))
        del message, module, output, hook, caller
        message = yield
    return seen, outputs


def _module_call_codes() -> frozenset[types.CodeType]:
    """The code of torch's ``Module._call_impl`` and of the functions it defines (``inner``): the
    frames a module's forward hooks are called from."""
    code = refs.Module._call_impl.__code__
    return frozenset([code, *(c for c in code.co_consts if isinstance(c, types.CodeType))])


_MODULE_CALL_CODES = _module_call_codes()
#: The watcher's own hooks: a record is taken only when torch's module call runs one of them itself.
_HOOK_CODES = frozenset(c for f in (_pre_hook, _output_hook) for c in f.__code__.co_consts if isinstance(c, types.CodeType))


# --------------------------------------------------------------------------- measuring


def _rss() -> int:
    return refs.resident_bytes()


def _baseline(measure: str | None) -> int:
    if measure in ("rss", "cuda"):
        refs.gc_collect()
    if measure == "rss":
        return _rss()
    if measure == "cuda":
        refs.cuda_synchronize()
        return refs.cuda_memory_allocated()
    return 0


def _kept(measure: str, value: Any, baseline: int) -> int:
    if measure == "rss":
        refs.gc_collect()
        return _rss() - baseline
    if measure == "cuda":
        refs.cuda_synchronize()
        return refs.cuda_memory_allocated() - baseline
    from tutor.child.checks.kinds.memory import Reachable

    reachable = Reachable()
    reachable.add(value)
    return reachable.bytes


def _held(before: int | None) -> int | None:
    """What a call left allocated in the process, its result still alive: the C heap in use
    after it less before it. Memory kept outside the result counts here: a submission that
    stashed every loss with its graph in a list of its own and returned floats passed
    ``memory-flat`` (issue 26). None where the C library does not say."""
    after = refs.heap_in_use()
    return None if after is None or before is None else after - before


class WarningsRecorder:
    """Records the warnings a call emits (every one, even a repeat the filters would hide), as
    data: category name, its class names, message."""

    def __init__(self, into: list[Any]) -> None:
        self.into = into
        self._context: warnings.catch_warnings | None = None
        self._caught: list[warnings.WarningMessage] = []

    def start(self) -> None:
        self._context = refs.catch_warnings(record=True)
        caught = self._context.__enter__()  # the list warnings are appended to (empty: falsy)
        self._caught = caught if caught is not None else []
        refs.ignore_warnings("always")

    def stop(self) -> None:
        if self._context is None:
            return
        self._context.__exit__(None, None, None)
        self._context = None
        for item in self._caught[:100]:
            kind = item.category
            self.into.append({"category": kind.__name__, "mro": [c.__name__ for c in kind.__mro__],
                              "message": refs.str_(item.message)[:2000]})


_Random = random.Random  # taken at import: the learner's code may replace random.Random later


def time_calls(server: Server, targets: list[Any], warmup: int, repeat: int, threads: int = 1) -> Any:
    """A generator for :func:`drive` (each call is a :meth:`Server.job`): the timings."""
    previous = refs.get_num_threads()
    refs.set_num_threads(threads)
    try:
        return (yield from _time_calls(server, targets, warmup, repeat))
    finally:
        refs.set_num_threads(previous)


def _time_calls(server: Server, targets: list[Any], warmup: int, repeat: int) -> Any:
    fast, slow = targets
    for _ in range(warmup):
        yield from server.job(fast)
        guard.restore()
        yield from server.job(slow)
        guard.restore()
    sync = refs.cuda_is_available() and refs.torch_module.cuda.is_initialized()  # type: ignore[no-untyped-call, unused-ignore]
    times: dict[str, list[float]] = {"fast": [], "slow": []}
    pairs = (("fast", fast), ("slow", slow))
    # Each pair in a shuffled order: on a busy machine the scheduler preempts every ~4 ms, and
    # with calls of ~1 ms in a fixed order (even ABBA) the stalls lined up with one side: a loop
    # measured against itself gave medians of 1.0 and 5.0 ms, 1 run in 25. (Seeded: the same
    # order every run.)
    order = _Random(len(pairs) * repeat)
    for _ in range(repeat):
        for name, function in (pairs if order.random() < 0.5 else pairs[::-1]):
            times[name].append((yield from server.job(function, timed=bool(sync))))
    return times


_IGNORED_PREFIXES = ("ProfilerStep", "[memory]", "[OutOfMemory]")


def top_level_calls(prof: Any) -> dict[str, Any]:
    """operator -> how many times the profiled code called it directly (an event with no parent
    event: not run from inside another operator)."""
    calls: dict[str, Any] = {}
    for event in prof.events():
        if event.cpu_parent is None:
            calls[event.name] = calls.get(event.name, 0) + 1
    return calls


def profile_calls(server: Server, workload: Any, warmup: int, repeat: int, threads: int = 1) -> Any:
    """A generator for :func:`drive` (each call is a :meth:`Server.job`): per run, operator ->
    [self CPU time, CPU time, count, direct calls]."""
    previous = refs.get_num_threads()
    refs.set_num_threads(threads)
    try:
        for _ in range(warmup):
            yield from server.job(workload)
            guard.restore()
        runs = []
        for _ in range(repeat):
            with refs.profile(activities=[refs.ProfilerActivity.CPU]) as prof:
                yield from server.job(workload)
            guard.restore()
            per_op = {}
            for event in prof.key_averages():
                name = event.key
                if name.startswith(_IGNORED_PREFIXES):
                    continue
                per_op[name] = [refs.float_(event.self_cpu_time_total), refs.float_(event.cpu_time_total),
                                refs.int_(event.count), 0]
            for name, calls in top_level_calls(prof).items():  # called directly by the workload's Python
                if name in per_op:
                    per_op[name][3] = calls
            runs.append(per_op)
        return runs
    finally:
        refs.set_num_threads(previous)


#: The server module's globals: a frame that has them is the server's own (the seal refuses learner
#: code a frame whose callers include one, and ``Server._resumed`` walks past the generators' own).
_GLOBALS = globals()
