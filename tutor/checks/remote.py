"""The judge's view of the learner's code: proxies that turn a call into a request to the runner.

The judge evaluates the pack's expressions in a namespace where every name the learner defined is
a :class:`Remote` (a function, a class, an object living in the runner) and every value that comes
back is rebuilt here from plain data: tensors from their bytes, dtype, shape and strides; modules
as :class:`MirrorModule` shells whose parameters and buffers are such tensors; anything else as
another :class:`Remote`. Facts about a tensor that its values cannot carry (``grad_fn``'s name,
where its storage came from) are kept beside it in :data:`FACTS`.

Arguments travel the other way as a pickle (the runner is the untrusted side: it may unpickle what
the judge sends; the judge never unpickles anything).
"""

from __future__ import annotations

import io
import pickle
import select
import types
from typing import TYPE_CHECKING, Any, Callable, Literal, cast

from tutor.checks import protocol, refs, words

if TYPE_CHECKING:
    import torch

#: id(tensor) -> the runner's facts about it; the tensors are kept alive by the session.
FACTS: dict[int, dict] = {}


class RunStopped(BaseException):
    """The run was cancelled or ran out of wall time while the judge waited: stop judging."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class RunnerGone(Exception):
    """The runner closed the channel, died, or stopped answering."""


class Tampered(BaseException):
    """The runner's answer contradicts what the judge knows (a canary, ``tutor.checks.canary``),
    or the runner found its own code replaced (its seal, ``tutor.checks.seal``). A BaseException,
    as the run's other ends are: no handler of a learner's error may turn it into one. ``said``
    says what (a said of tutor/checks/words.py, the ``{lie}`` of ``checks.tampered``, rendered in
    the learner's language); ``str()`` is its English."""

    def __init__(self, said: dict) -> None:
        super().__init__(words.english(said))
        self.said = said


#: Why every check after a runner's broken seal is ``tampered``.
SEAL_BROKEN = words.say("checks.seal_broken")


class RemoteRaised(Exception):
    """Learner code raised in the runner; its type names and message, as data."""

    def __init__(self, info: dict):
        super().__init__(info.get("message", ""))
        self.info = info
        self.type_name = str(info.get("type", "Exception"))
        self.mro_names = [str(n) for n in info.get("mro") or [self.type_name]]
        self.message = str(info.get("message", ""))
        self.lineno = info.get("lineno") if refs.type_(info.get("lineno")) is int else None
        self.text = str(info.get("text") or self.type_name)

    def __str__(self) -> str:
        return self.message


class RunnerRefused(BaseException):
    """The runner sent what the judge will not hold: more data than the judge's budget
    (``status == "memory"``) or a message nested too deep (``"error"``). It ends the run with that
    status: the submission's doing, never the sandbox's. A BaseException: no check catches it."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class RemoteTimeout(BaseException):
    """The runner stopped a call that ran past its budget (or the judge gave up waiting)."""

    def __init__(self, lineno: int | None, code: str = "", by_wall: bool = False):
        super().__init__("timeout")
        self.lineno = lineno
        self.code = code
        self.by_wall = by_wall  # stopped at the wall-time cap, not for CPU time


class StuckCode(BaseException):
    """A call of the learner's code that an earlier check of this run had to stop there (it ran
    out of its time still running the learner's code): the call is not made again, so one
    infinite loop does not cost every check that calls it its whole share (issue 55). ``told``:
    the stopped check's id and where the learner's code was."""

    def __init__(self, told: dict):
        super().__init__("stuck")
        self.told = told


def tensor_facts(tensor) -> dict | None:
    return FACTS.get(refs.id_(tensor))


class Session:
    """The judge's channel to one runner. Not thread-safe: the judge is one thread."""

    GRACE = 1.0
    #: The bytes of the runner's data the judge may hold for one run (decoded tensor storages,
    #: frames being read), whatever the runner sends: a fixed budget, so a runner that describes
    #: one 64 MiB blob as many tensors cannot make the judge decode a copy per tensor.
    MEMORY_BUDGET = 512 * 1024 * 1024

    def __init__(self, sock, *, stop_fd: int | None = None, deadline: float | None = None, kill=None):
        self.sock = sock
        self.stop_fd = stop_fd
        self.deadline = deadline
        self.kill = kill
        self.alive = True
        self.pending = False
        self.sealed = True  # False once the runner said its own code was replaced: never trusted again
        self.mirrors: dict[int, object] = {}
        self.callbacks: dict[int, Callable[..., Any]] = {}
        self._callback_ids: dict[int, int] = {}
        # the case under way: every call and repeat carries its seed, and the runner seeds its
        # generators at the first request of a new case (a canary's requests look the same)
        self.case: int | None = None
        self.case_seed: int | None = None
        # intra-op threads the learner's code runs with during the current check; None: its own
        self.threads: int | None = None
        self.ship = True  # hand the check's functions to the runner (False: call them back here)
        self.calls = 0
        self.requests = 0  # round trips to the runner (callbacks it makes meanwhile not counted)
        self.repaired: set[str] = set()
        self.capture = False
        self.record_warnings = False  # ask the runner for the warnings each call emits
        self.warned: list[dict] = []
        self.observe: dict | None = None
        self.observed: list[dict] = []
        self.measure: protocol.Measure | None = None
        self.kept: list[int] = []
        self.heap_left: list[int] = []  # what each measured call left allocated in the runner's process
        # the check under way's time: CPU seconds (the judge's main thread's and what the runner
        # reported for its requests, see context.TimeLimit) and a wall-time cap
        self.budget_until: float | None = None  # the wall-time cap (monotonic)
        self.budget_cpu: float | None = None
        self.runner_cpu = 0.0  # CPU the runner reported for every request so far
        self._cpu_at_start = (0.0, 0.0)  # (judge thread time, runner_cpu) when the check began
        self._keep: list = []
        self._storages: dict[str, torch.UntypedStorage] = {}
        self._pristine: dict[int, bytes] = {}  # id(mirror tensor) -> its bytes as the runner sent them
        self.held = 0  # bytes of the runner's data decoded and kept here (see MEMORY_BUDGET)
        #: the learner's callees a check had to stop while they ran (``callee_key``), and where:
        #: a later call of one is told at once (StuckCode), not run to its own limit again
        self.stuck: dict[tuple, dict] = {}
        self.in_flight: tuple | None = None  # the callee of the call under way, until it answers

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

    def receive(self) -> tuple[dict, list]:
        """One frame from the runner, within the room left; a frame refused ends the run."""
        try:
            frame = protocol.recv(self.sock, self.room())
        except protocol.FrameRefused as refused:
            self.pending = False
            self.die()
            if refused.memory:
                raise RunnerRefused("memory", self.over_budget()) from None
            raise RunnerRefused("error", f"your code's process sent the checker {refused}, which it does "
                                "not read") from None
        if frame[0].get("op") == "tampered":  # the runner's seal broke: it has ended
            self.sealed = False
            self.pending = False
            self.alive = False
            raise Tampered(SEAL_BROKEN)
        return frame

    # ------------------------------------------------------------------ transport

    def _wait(self, limit: float | None) -> None:
        """Block until the runner answers; a cancel, the wall time or the limit stop the wait."""
        while True:
            now = refs.monotonic()
            timeout = None
            if self.deadline is not None:
                timeout = self.deadline - now
                if timeout <= 0:
                    raise RunStopped("timeout")
            if limit is not None:
                timeout = min(timeout, limit - now) if timeout is not None else limit - now
                if timeout <= 0:
                    raise RemoteTimeout(None, by_wall=True)
            watch = [self.sock] + ([self.stop_fd] if self.stop_fd is not None else [])
            ready, _, _ = select.select(watch, [], [], timeout)
            if self.stop_fd is not None and self.stop_fd in ready:
                raise RunStopped("cancelled")
            if self.sock in ready:
                return

    def settle(self) -> RemoteTimeout | None:
        """After the judge's own timer interrupted a wait: collect the runner's late answer (its
        own timer stops the call too), or give up on a runner that no longer answers."""
        if not self.pending:
            return None
        self.pending = False
        try:
            self._wait(refs.monotonic() + self.GRACE)
            answer, _ = self.receive()
        except (RemoteTimeout, protocol.ProtocolError, OSError):
            self.die()
            return RemoteTimeout(None)
        for name in answer.get("repaired") or []:
            self.repaired.add(refs.str_(name))
        self._count_cpu(answer, self.GRACE + (self.budget_cpu or 0.0))
        info = answer.get("timeout")
        if refs.type_(info) is dict:
            lineno = info.get("lineno") if refs.type_(info.get("lineno")) is int else None
            return RemoteTimeout(lineno, refs.str_(info.get("code") or ""), info.get("by_wall") is True)
        return None

    def request(self, message: protocol.Request, blobs: list | tuple = ()) -> tuple[dict, list]:
        """Send one request (``protocol.Request``; the runner's ``server.HANDLERS`` answers it)
        and wait for its ``Answer``, running the check's functions it calls back meanwhile. The
        answer is the runner's word: read it as untrusted data."""
        if not self.sealed:
            raise Tampered(SEAL_BROKEN)
        self.settle()
        if not self.alive:
            raise RunnerGone("your code's process is no longer answering")
        budget = float(message.get("budget", 5.0))
        wall = self.wall_left() if self.budget_cpu is not None else budget
        message.setdefault("wall", wall)
        self.requests += 1
        sent = refs.monotonic()
        try:
            protocol.send(self.sock, message, blobs)
            limit = refs.monotonic() + wall + self.GRACE
            while True:
                self.pending = True
                self._wait(limit)
                self.pending = False
                answer, data = self.receive()
                if answer.get("op") != "callback":
                    break
                self._callback(answer, data)
        except RemoteTimeout:
            self.pending = False
            self.die()
            raise
        except (protocol.ProtocolError, OSError) as exc:
            self.pending = False
            self.die(kill=not isinstance(exc, protocol.ChannelClosed))  # a closed channel: it is ending
            raise RunnerGone(f"your code's process ended or broke the channel ({exc})") from None
        for name in answer.get("repaired") or []:
            self.repaired.add(refs.str_(name))
        self._count_cpu(answer, refs.monotonic() - sent)
        if "timeout" in answer:
            info = answer["timeout"] or {}
            lineno = info.get("lineno") if refs.type_(info.get("lineno")) is int else None
            raise RemoteTimeout(lineno, refs.str_(info.get("code") or ""), info.get("by_wall") is True)
        if "error" in answer:
            raise RuntimeError(f"the runner could not serve the request: {answer['error']}")
        return answer, data

    def _callback(self, request: dict, data: list) -> None:
        """The learner's code called a function of the check's (``record`` in ``bench(record)``):
        it runs here, in the judge, on the arguments it was given (as data), so its side effects
        land in the check's own namespace; its result travels back like any argument."""
        function = self.callbacks.get(refs.int_(request.get("fid", -1)))
        reply: protocol.Result = {"op": "result", "budget": self.budget()}
        blobs: list = []
        try:
            args = self.decode(request.get("args"), data, {}, {}, {})
            positional, keywords = (args[0], args[1]) if refs.type_(args) is list and refs.len_(args) == 2 else ([], {})
            if function is None:
                raise LookupError("no such function of the check's")
            result = function(*positional, **(keywords if refs.type_(keywords) is dict else {}))
            reply["args"] = self.pack(((result,), {}), blobs, reply, {}, {})
        except Exception as error:  # noqa: BLE001 - reported to the learner's code as its exception
            blobs = []
            reply = {"op": "result", "raised": f"{refs.type_(error).__name__}: {error}"}
        except BaseException:
            self.die()  # the judge's own timer, mid-callback: the runner cannot be resynchronised
            raise
        protocol.send(self.sock, reply, blobs)

    def die(self, kill: bool = True) -> None:
        """The runner is wedged or gone: nothing more is asked of it."""
        self.alive = False
        if kill and self.kill is not None:
            self.kill()

    def bye(self) -> None:
        """No more requests: the runner leaves (after a late answer, if a timer cut one off)."""
        if not self.alive:
            return
        try:
            self.settle()
            protocol.send(self.sock, {"op": "bye"})
        except (protocol.ProtocolError, OSError):
            pass

    def forget(self) -> None:
        """The run is over: drop what this session kept. Its tensors' :data:`FACTS` go with them,
        since an id is reused once its tensor is freed: a judge that serves another run would
        otherwise read one run's facts (a ``grad_fn``, a device) as a later tensor's, and its
        canaries would call honest code tampered."""
        for kept in self._keep:
            FACTS.pop(refs.id_(kept), None)
        self._keep.clear()
        self.mirrors.clear()
        self.callbacks.clear()
        self._callback_ids.clear()
        self._storages.clear()
        self._pristine.clear()
        _MIRROR_CLASSES.clear()  # classes named by this run's answers: the next run names its own

    def start_case(self, seed: int) -> None:
        """A new case: the runner seeds its generators with ``seed`` at the case's first request."""
        from tutor.checks.context import fresh_seed

        self.case, self.case_seed = fresh_seed(), seed

    def _stamp(self, message: protocol.Call | protocol.Repeat) -> None:
        if self.case is not None and self.case_seed is not None:
            message["case"], message["seed"] = self.case, self.case_seed
        if self.threads is not None:  # a check that pins torch's intra-op threads (a profile)
            message["threads"] = self.threads

    def start_check(self, seconds: float, wall: float) -> None:
        """A check begins with ``seconds`` of CPU time and ``wall`` seconds of wall time at most."""
        self.budget_cpu = seconds
        self.budget_until = refs.monotonic() + wall
        self._cpu_at_start = (refs.thread_time(), self.runner_cpu)

    def check_cpu(self) -> float:
        """CPU seconds the check under way has used: the judge's main thread and the runner's."""
        judge0, runner0 = self._cpu_at_start
        return refs.thread_time() - judge0 + self.runner_cpu - runner0

    def budget(self) -> float:
        """CPU seconds the check under way has left (what a request may use)."""
        if self.budget_until is None:
            return 5.0
        if self.budget_cpu is None:
            return max(self.budget_until - refs.monotonic(), 0.001)
        return max(min(self.budget_cpu - self.check_cpu(), self.wall_left()), 0.001)

    def wall_left(self) -> float:
        """Wall seconds before the check's cap (or the run's end), whichever comes first."""
        until = self.budget_until if self.budget_until is not None else refs.monotonic() + 5.0 * 3
        if self.deadline is not None:
            until = min(until, self.deadline - 0.2)
        return max(until - refs.monotonic(), 0.001)

    def _count_cpu(self, answer: dict, elapsed: float) -> None:
        """Add what the runner says a request cost (its main thread's CPU time: at most the wall
        time it took; a runner that says less only gives its own code more time, within the cap)."""
        cpu = answer.get("cpu")
        if refs.type_(cpu) in (int, float) and cpu == cpu:
            self.runner_cpu += min(max(refs.float_(cast(float, cpu)), 0.0), elapsed)

    # ------------------------------------------------------------------ requests

    def call(self, target: dict, args: tuple, kwargs: dict, refresh: tuple = ()):
        message: protocol.Call = {"op": "call", "target": target, "modes": current_modes(), "budget": self.budget()}
        blobs: list = []
        known_tensors: dict = {}
        known_objects: dict = {}
        if self.observe is not None:
            module = self.observe["module"]
            message["observe"] = {"module": self._ref(module, known_objects), "outputs": self.observe["outputs"]}
        involved = [self.mirrors[h] for h in refresh if h in self.mirrors] + self._mirrors_in((args, kwargs))
        where, changed = self._changed_mirror_tensors(involved)
        payload = (args, kwargs, changed) if changed else (args, kwargs)
        if changed:
            message["push"] = where
        message["args"] = self.pack(payload, blobs, message, known_tensors, known_objects)
        handles = list(refresh) + [object_handle(m) for m in self._mirrors_in((args, kwargs))]
        if handles:
            message["refresh"] = handles
        if self.capture:
            message["capture"] = True
        if self.record_warnings:
            message["warnings"] = True
        if self.measure:
            message["measure"] = self.measure
        self._stamp(message)
        key = callee_key(target, args)
        if key is not None and key in self.stuck:
            raise StuckCode(self.stuck[key])
        self.calls += 1
        self.in_flight = key
        answer, data = self.request(message, blobs)
        self.in_flight = None  # it answered (a timeout raised above leaves it: the check's stop names it)
        self.apply_writeback(answer.get("writeback") or {}, data, known_tensors, known_objects)
        for handle, spec in (answer.get("refreshed") or {}).items():
            existing = self.mirrors.get(refs.int_(handle))
            if existing is not None:
                fill_mirror(self, existing, spec, data, known_tensors)
        adopt_modes(answer.get("modes_after"))
        if "observed" in answer:
            self.observed.append(answer["observed"])
        if "kept" in answer:
            self.kept.append(refs.int_(answer["kept"]))
        if refs.type_(answer.get("held")) is int:
            self.heap_left.append(answer["held"])
        if self.record_warnings and refs.type_(answer.get("warned")) is list:
            self.warned.extend(w for w in answer["warned"] if refs.type_(w) is dict)
        printed = answer.get("printed")
        if printed:
            import sys

            sys.stdout.write(refs.str_(printed))
        if "raised" in answer:
            raise RemoteRaised(answer["raised"])
        return self.decode(answer.get("value"), data, known_tensors, known_objects, {})

    def getattr(self, handle: int, name: str):
        answer, data = self.request({"op": "getattr", "handle": handle, "name": name, "budget": self.budget()})
        if "raised" in answer:
            raise RemoteRaised(answer["raised"])
        return self.decode(answer.get("value"), data, {}, {}, {})

    def repeat(self, op: Literal["time", "profile"], targets: list, warmup: int, repeat: int, threads: int = 1):
        """Time (``op="time"``) or profile the callables where the learner's code lives, with
        ``threads`` intra-op threads."""
        message: protocol.Repeat = {"op": op, "warmup": warmup, "repeat": repeat, "budget": self.budget(),
                                    "threads": threads}
        blobs: list = []
        shipping, self.ship = self.ship, True  # measured where the learner's code runs
        try:
            message["args"] = self.pack((tuple(targets), {}), blobs, message, {}, {})
        finally:
            self.ship = shipping
        self._stamp(message)
        self.calls += 1
        answer, _ = self.request(message, blobs)
        if "raised" in answer:
            raise RemoteRaised(answer["raised"])
        return answer.get("numbers")

    def _changed_mirror_tensors(self, mirrors: list) -> tuple[list, list]:
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
                        pristine = self._pristine.get(refs.id_(tensor))
                        if tensor is None or pristine is None or refs.t_device(tensor).type == "meta":
                            continue
                        if refs.storage_bytes(refs.t_untyped_storage(tensor)) != pristine:
                            where.append([handle, [], group, name])
                            changed.append(tensor)
                for name, child in (attrs.get("_modules") or {}).items():
                    if refs.isinstance_(child, MirrorModule):
                        stack.append((child, path + [name]))
        return where, changed

    def callback_id(self, function) -> int:
        key = refs.id_(function)
        fid = self._callback_ids.get(key)
        if fid is None:
            fid = refs.len_(self.callbacks)
            self.callbacks[fid] = function
            self._callback_ids[key] = fid
            self._keep.append(function)
        return fid

    def _mirrors_in(self, payload, depth: int = 0) -> list:
        if depth > 6:
            return []
        if refs.isinstance_(payload, MirrorModule):
            return [payload]
        if refs.type_(payload) in (list, tuple):
            return [m for item in payload for m in self._mirrors_in(item, depth + 1)]
        if refs.type_(payload) is dict:
            return [m for item in payload.values() for m in self._mirrors_in(item, depth + 1)]
        return []

    def _ref(self, obj, known_objects: dict) -> dict:
        if refs.isinstance_(obj, (Remote, MirrorModule)):
            return {"handle": object_handle(obj)}
        key = f"o{refs.id_(obj)}"
        known_objects.setdefault(key, obj)
        return {"known": key}

    # ------------------------------------------------------------------ arguments out

    def pack(self, payload, blobs: list, message: protocol.Call | protocol.Repeat | protocol.Result,
             known_tensors: dict, known_objects: dict) -> int:
        session = self
        tensors: list[dict] = []
        index: dict[str, int] = {}
        storages: dict[str, int] = {}

        class Packer(pickle.Pickler):
            def persistent_id(self, obj):
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

    def _tensor_spec(self, tensor, key: str, blobs: list, storages: dict) -> dict:
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

    def apply_writeback(self, back: dict, data: list, known_tensors: dict, known_objects: dict) -> None:
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

    def _write_tensor(self, tensor, spec: dict, data: list) -> None:
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

    def decode(self, value, data: list, known_tensors: dict, known_objects: dict, built: dict):
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

    def decode_tensor(self, spec: dict, data: list, known_tensors: dict, built: dict):
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
        FACTS[refs.id_(tensor)] = spec
        self._keep.append(tensor)
        return tensor


class _Container:
    """A list, dict or set a shipped function reads: the runner reports it back after the call,
    so ``calls.append(args)`` in a check's ``record`` lands in the check's own ``calls``."""

    def __init__(self, value):
        self.value = value


def _mark(value):
    return _Container(value) if refs.type_(value) in (list, dict, set) else value


def ship_function(function) -> tuple:
    """A function of the check's own (a workload, a lambda) as what rebuilds it in the runner:
    its compiled code and the values of the names it reads. Pickled, they travel through the
    same references as arguments (tensors, the learner's objects, modules by name)."""
    import marshal

    code = function.__code__
    names: set = set()
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
    changes: dict = {"co_consts": consts, "co_name": new if code.co_name == old else code.co_name}
    qualname = getattr(code, "co_qualname", None)  # Python 3.11 and later
    if qualname is not None:
        changes["co_qualname"] = new + qualname[len(old):] if qualname == old or qualname.startswith(old + ".") \
            else qualname
    return code.replace(**changes)


def _collect_modules(payload, found: dict, depth: int = 0) -> None:
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


def adopt_modes(modes) -> None:
    """Carry over a grad or autocast mode the learner's call left switched, as if the check's code
    ran in the same process (``torch.set_grad_enabled(False)`` never switched back on breaks a
    later ``backward()`` in the check). Inference mode ends with the call that entered it."""
    if refs.type_(modes) is not dict:
        return
    if refs.type_(modes.get("grad_enabled")) is bool:
        refs.set_grad_enabled_raw(modes["grad_enabled"])
    autocast = modes.get("autocast")
    if autocast is False:
        refs.set_autocast_enabled("cpu", False)
    elif refs.type_(autocast) is str and refs.type_(refs.getattr_(refs.torch_module, autocast, None)) is \
            refs.torch_module.dtype:
        refs.set_autocast_enabled("cpu", True)
        refs.torch_module.set_autocast_dtype("cpu", refs.getattr_(refs.torch_module, autocast))


def current_modes() -> protocol.Modes:
    on = refs.bool_(refs.autocast_enabled("cpu"))
    return {"grad_enabled": refs.bool_(refs.is_grad_enabled()),
            "inference_mode": refs.bool_(refs.is_inference_mode_enabled()),
            "autocast": refs.str_(refs.autocast_dtype("cpu")).removeprefix("torch.") if on else False}


# --------------------------------------------------------------------------- proxies


def object_handle(obj) -> int:
    return refs.object_getattribute(obj, "_handle")


class Remote:
    """Something the learner's code made, living in the runner: call it, read its attributes."""

    __slots__ = ("_session", "_handle", "_type", "_callable", "_tensor_subclass")

    def __init__(self, session: Session, handle: int, type_name: str, is_callable: bool,
                 tensor_subclass: bool = False):
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_type", type_name)
        object.__setattr__(self, "_callable", is_callable)
        object.__setattr__(self, "_tensor_subclass", tensor_subclass)

    def __call__(self, *args, **kwargs):
        # the callee travels inside the arguments: a canary's request looks the same
        return self._session.call({"callee": True}, (self, *args), kwargs)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._session.getattr(self._handle, name)

    def __repr__(self) -> str:
        return f"<{self._type} in your code>"

    def __bool__(self) -> bool:
        return True


def callee_key(target: dict, args: tuple) -> tuple | None:
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


def type_name(value) -> str:
    """The learner-facing type name of a value (a Remote names the runner's type)."""
    if refs.type_(value) is Remote:
        return refs.object_getattribute(value, "_type")
    return refs.type_(value).__name__


class MirrorModule(refs.Module):
    """An nn.Module rebuilt from the runner's description of one of the learner's modules.

    Its ``__dict__`` holds what nn.Module's own code reads (``_parameters``, ``_buffers``,
    ``_modules``, ``training``, plain settings), as data; calling it, ``.to()``, ``.train()`` and
    the like run on the real module in the runner, and the mirror is refreshed from the answer.
    """

    def __call__(self, *args, **kwargs):
        return self._remote("__call__", args, kwargs)

    def forward(self, *args, **kwargs):
        return self._remote("forward", args, kwargs)

    def _remote(self, method: str, args, kwargs):
        session = refs.object_getattribute(self, "_session")
        handle = refs.object_getattribute(self, "_handle")
        return session.call({"handle": handle} if method == "__call__" else {"getattr": [handle, method]},
                            args, kwargs, refresh=(handle,))

    def __getattr__(self, name: str):
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
    def _make(method):
        def remote_method(self, *args, **kwargs):
            return self._remote(method, args, kwargs)
        remote_method.__name__ = method
        return remote_method
    setattr(MirrorModule, _method, _make(_method))


_MIRROR_CLASSES: dict[tuple, type] = {}


def _torch_class(bases: list):
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


def mirror(session: Session, spec: dict, data: list, known_tensors: dict):
    name = refs.str_(spec.get("type") or "Module")
    base = _torch_class(spec.get("torch_bases") or [])
    cls = _MIRROR_CLASSES.get((name, base))
    if cls is None:  # isinstance(m, nn.Linear) holds for a mirror of a Linear (or a subclass of it)
        bases = (MirrorModule,) if base is None or base is refs.Module else (MirrorModule, base)
        cls = type(name, bases, {"__module__": "your code"})
        _MIRROR_CLASSES[(name, base)] = cls
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


def fill_mirror(session: Session, module, spec: dict, data: list, known_tensors: dict) -> None:
    attrs = refs.object_getattribute(module, "__dict__")
    built: dict = {}
    _fill(session, attrs, spec, data, known_tensors, built)
    for group in ("_parameters", "_buffers"):
        for tensor in attrs[group].values():
            if tensor is not None and refs.t_device(tensor).type != "meta":
                _keep_pristine(session, tensor)
    for name, value in list(attrs.items()):
        if refs.type_(value) in (refs.Tensor, refs.Parameter) and refs.t_device(value).type != "meta":
            _keep_pristine(session, value)


def _keep_pristine(session: Session, tensor) -> None:
    """The bytes a mirrored module's tensor had as the runner sent them (charged to the budget)."""
    storage = refs.t_untyped_storage(tensor)
    before = session._pristine.get(refs.id_(tensor))
    session.charge(refs.storage_nbytes(storage) - (refs.len_(before) if before is not None else 0))
    session._pristine[refs.id_(tensor)] = refs.storage_bytes(storage)


def _fill(session: Session, attrs: dict, spec: dict, data: list, known_tensors: dict, built: dict) -> None:
    attrs["training"] = bool(spec.get("training", True))
    attrs["_parameters"] = {n: None if t is None else session.decode_tensor(t, data, known_tensors, built)
                            for n, t in spec.get("params", {}).items()}
    attrs["_buffers"] = {n: None if t is None else session.decode_tensor(t, data, known_tensors, built)
                         for n, t in spec.get("buffers", {}).items()}
    children = {}
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


def _setting(type_label: str, value):
    if type_label == "tuple" and refs.type_(value) is list:
        return tuple(value)
    return value


def sync_module(session: Session, module, spec: dict, data: list, known_tensors: dict) -> None:
    """Bring a judge-built module up to what the runner's copy became after a call."""
    attrs = refs.object_getattribute(module, "__dict__")
    built: dict = {}
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
