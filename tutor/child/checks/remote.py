"""The judge's view of the learner's code: proxies that turn a call into a request to the runner.

The judge evaluates the pack's expressions in a namespace where every name the learner defined is
a :class:`Remote` (a function, a class, an object living in the runner) and every value that comes
back is rebuilt here from plain data: tensors from their bytes, dtype, shape and strides; modules
as :class:`MirrorModule` shells whose parameters and buffers are such tensors; anything else as
another :class:`Remote`. Facts about a tensor that its values cannot carry (``grad_fn``'s name,
where its storage came from) are kept beside it in the session (``Session.facts_of``).

:class:`Session` here is the transport and the check's budget; what crosses the channel, and the
proxies, are ``session_codec``; the module mirrors ``session_mirror``.

Arguments travel the other way as a pickle (the runner is the untrusted side: it may unpickle what
the judge sends; the judge never unpickles anything).
"""

from __future__ import annotations

import select
from typing import Any, Literal

from tutor.child.checks import protocol, refs
from tutor.words import engine as words
from tutor.child.checks.session_codec import RunnerRefused as RunnerRefused
from tutor.child.checks.session_codec import SessionCodec, object_handle
from tutor.child.checks.session_codec import Remote as Remote
from tutor.child.checks.session_codec import callee_key as callee_key
from tutor.child.checks.session_codec import type_name as type_name
from tutor.child.checks.session_mirror import MirrorModule as MirrorModule
from tutor.child.checks.session_mirror import fill_mirror

class RunStopped(BaseException):
    """The run was cancelled or ran out of wall time while the judge waited: stop judging."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RunnerGone(Exception):
    """The runner closed the channel, died, or stopped answering."""


class Tampered(BaseException):
    """The runner's answer contradicts what the judge knows (a canary, ``tutor.child.checks.canary``),
    or the runner found its own code replaced (its seal, ``tutor.child.checks.seal``). A BaseException,
    as the run's other ends are: no handler of a learner's error may turn it into one. ``said``
    says what (a said of tutor/words/engine.py, the ``{lie}`` of ``checks.tampered``, rendered in
    the learner's language); ``str()`` is its English."""

    def __init__(self, said: dict[str, Any]) -> None:
        super().__init__(words.english(said))
        self.said = said


#: Why every check after a runner's broken seal is ``tampered``.
SEAL_BROKEN = words.say("checks.seal_broken")


class RemoteRaised(Exception):
    """Learner code raised in the runner; its type names and message, as data."""

    def __init__(self, info: dict[str, Any]) -> None:
        super().__init__(info.get("message", ""))
        self.info = info
        self.type_name = str(info.get("type", "Exception"))
        self.mro_names = [str(n) for n in info.get("mro") or [self.type_name]]
        self.message = str(info.get("message", ""))
        self.lineno = info.get("lineno") if refs.type_(info.get("lineno")) is int else None
        self.text = str(info.get("text") or self.type_name)

    def __str__(self) -> str:
        return self.message


class RemoteTimeout(BaseException):
    """The runner stopped a call that ran past its budget (or the judge gave up waiting)."""

    def __init__(self, lineno: int | None, code: str = "", by_wall: bool = False) -> None:
        super().__init__("timeout")
        self.lineno = lineno
        self.code = code
        self.by_wall = by_wall  # stopped at the wall-time cap, not for CPU time


class StuckCode(BaseException):
    """A call of the learner's code that an earlier check of this run had to stop there (it ran
    out of its time still running the learner's code): the call is not made again, so one
    infinite loop does not cost every check that calls it its whole share (issue 55). ``told``:
    the stopped check's id and where the learner's code was."""

    def __init__(self, told: dict[str, Any]) -> None:
        super().__init__("stuck")
        self.told = told




class Session(SessionCodec):
    """The judge's channel to one runner: its transport, the case and check under way and their
    time. Not thread-safe: the judge is one thread."""

    GRACE = 1.0

    def __init__(self, sock: Any, *, stop_fd: int | None = None, deadline: float | None = None, kill: Any=None) -> None:
        super().__init__(kill)
        self.sock = sock
        self.stop_fd = stop_fd
        self.deadline = deadline
        self.pending = False
        self.sealed = True  # False once the runner said its own code was replaced: never trusted again
        # the case under way: every call and repeat carries its seed, and the runner seeds its
        # generators at the first request of a new case (a canary's requests look the same)
        self.case: int | None = None
        self.case_seed: int | None = None
        # intra-op threads the learner's code runs with during the current check; None: its own
        self.threads: int | None = None
        self.calls = 0
        self.requests = 0  # round trips to the runner (callbacks it makes meanwhile not counted)
        self.repaired: set[str] = set()
        self.capture = False
        self.record_warnings = False  # ask the runner for the warnings each call emits
        self.warned: list[dict[str, Any]] = []
        self.observe: dict[str, Any] | None = None
        self.observed: list[dict[str, Any]] = []
        self.measure: protocol.Measure | None = None
        self.kept: list[int] = []
        self.heap_left: list[int] = []  # what each measured call left allocated in the runner's process
        # the check under way's time: CPU seconds (the judge's main thread's and what the runner
        # reported for its requests, see context.TimeLimit) and a wall-time cap
        self.budget_until: float | None = None  # the wall-time cap (monotonic)
        self.budget_cpu: float | None = None
        self.runner_cpu = 0.0  # CPU the runner reported for every request so far
        self._cpu_at_start = (0.0, 0.0)  # (judge thread time, runner_cpu) when the check began
        #: the learner's callees a check had to stop while they ran (``callee_key``), and where:
        #: a later call of one is told at once (StuckCode), not run to its own limit again
        self.stuck: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.in_flight: tuple[Any, ...] | None = None  # the callee of the call under way, until it answers
        #: the author's pattern being matched (``kinds.raises.search``), if any: a check stopped
        #: by its time meanwhile was stopped by the pattern, not by the learner's code
        self.matching: str | None = None

    def receive(self) -> tuple[dict[str, Any], list[Any]]:
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

    def request(self, message: protocol.Request,
                blobs: list[Any] | tuple[Any, ...] = ()) -> tuple[dict[str, Any], list[Any]]:
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

    def _callback(self, request: dict[str, Any], data: list[Any]) -> None:
        """The learner's code called a function of the check's (``record`` in ``bench(record)``):
        it runs here, in the judge, on the arguments it was given (as data), so its side effects
        land in the check's own namespace; its result travels back like any argument."""
        function = self.callbacks.get(refs.int_(request.get("fid", -1)))
        reply: protocol.Result = {"op": "result", "budget": self.budget()}
        blobs: list[Any] = []
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
        """The run is over: drop what this session kept (its values, their facts, its mirrors):
        nothing of one run is read as a later run's."""
        self.forget_values()

    def start_case(self, seed: int) -> None:
        """A new case: the runner seeds its generators with ``seed`` at the case's first request."""
        self.case, self.case_seed = protocol.fresh_seed(), seed

    def _stamp(self, message: protocol.Call | protocol.Repeat) -> None:
        if self.case is not None and self.case_seed is not None:
            message["case"], message["seed"] = self.case, self.case_seed
        if self.threads is not None:  # a check that pins torch's intra-op threads (a profile)
            message["threads"] = self.threads

    def start_check(self, seconds: float, wall: float) -> None:
        """A check begins with ``seconds`` of CPU time and ``wall`` seconds of wall time at most."""
        self.budget_cpu = seconds
        self.budget_until = refs.monotonic() + wall
        self.matching = None
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

    def _count_cpu(self, answer: dict[str, Any], elapsed: float) -> None:
        """Add what the runner says a request cost (its main thread's CPU time: at most the wall
        time it took; a runner that says less only gives its own code more time, within the cap)."""
        cpu = answer.get("cpu")
        if refs.type_(cpu) in (int, float) and cpu == cpu:
            assert isinstance(cpu, (int, float))  # the line above saw its type: for mypy, never a cast
            self.runner_cpu += min(max(refs.float_(cpu), 0.0), elapsed)

    # ------------------------------------------------------------------ requests

    def call(self, target: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any],
             refresh: tuple[Any, ...] = ()) -> Any:
        message: protocol.Call = {"op": "call", "target": target, "modes": current_modes(), "budget": self.budget()}
        blobs: list[Any] = []
        known_tensors: dict[str, Any] = {}
        known_objects: dict[str, Any] = {}
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

    def getattr(self, handle: int, name: str) -> Any:
        answer, data = self.request({"op": "getattr", "handle": handle, "name": name, "budget": self.budget()})
        if "raised" in answer:
            raise RemoteRaised(answer["raised"])
        return self.decode(answer.get("value"), data, {}, {}, {})

    def repeat(self, op: Literal["time", "profile"], targets: list[Any], warmup: int, repeat: int,
               threads: int = 1) -> Any:
        """Time (``op="time"``) or profile the callables where the learner's code lives, with
        ``threads`` intra-op threads."""
        message: protocol.Repeat = {"op": op, "warmup": warmup, "repeat": repeat, "budget": self.budget(),
                                    "threads": threads}
        blobs: list[Any] = []
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


def adopt_modes(modes: Any) -> None:
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

