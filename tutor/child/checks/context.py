"""What every check kind shares: the case namespace, seeding, time limits and error reports.

A check never sees the learner's namespace itself: each case gets the contract's names taken
from the learner's globals (:func:`learner_names`), the real builtins, ``torch``, ``nn``, ``F``
and ``np`` and the case's bindings, re-seeded,
so one check's side effects cannot leak into the next. The seed is the check's ``seed`` when the
pack sets one, else a fresh one per case and per run (:func:`fresh_seed`), so a submission cannot
carry answers for inputs it predicted; a failing result names the seed, which reproduces it.
"""

from __future__ import annotations

import _thread
import typing
import threading
from typing import Any


from tutor.child.checks import refs, render
from tutor.words import engine as words
from tutor.child.checks.protocol import fresh_seed
from tutor.child.checks.remote import RemoteRaised, RemoteTimeout, RunnerGone, RunnerRefused, RunStopped, Session, StuckCode, Tampered

#: What the runner's seal may say it refused (tutor.child.checks.seal.Refused): ``checks.refused.<key>``.
REFUSALS = ("profile", "audit", "frames", "gc", "memory")


class CheckTimeout(BaseException):
    """Raised (repeatedly) by SIGALRM in a check that ran out of time. A BaseException, and
    re-raised every few milliseconds, so ``except Exception: pass`` in a learner's loop cannot
    swallow it for good."""


class Failed(Exception):
    """The learner's code ran but behaved wrongly; the message is the learner-facing sentence."""

    def __init__(self, message: str | dict[str, Any], expected: str | dict[str, Any] | None = None,
                 got: str | dict[str, Any] | None = None, data: Any = None) -> None:
        """``expected`` and ``got``: a value as it prints, or a phrase as a said (its English kept in
        ``expected``/``got``, the said in ``expected_said``/``got_said`` for the learner's language)."""
        text = words.english(message)  # a said (tutor.words.engine) or, from a pack's own text, a string
        super().__init__(text)
        self.message = text
        self.said = message if refs.type_(message) is dict else None
        self.expected = words.english(expected) if refs.type_(expected) is dict else expected
        self.expected_said = expected if refs.type_(expected) is dict else None
        self.got = words.english(got) if refs.type_(got) is dict else got
        self.got_said = got if refs.type_(got) is dict else None
        self.data = data


class CodeRaised(Exception):
    """Code evaluated for a check raised; ``source`` is the check expression being evaluated."""

    def __init__(self, error: BaseException, source: str):
        super().__init__(source)
        self.error = error
        self.source = source


class Learner:
    """Where the learner's code lives, to point at the learner's own line in a traceback."""

    def __init__(self, filename: str, source: str | None):
        self.filename = filename
        self.lines = (source or "").splitlines()

    def line(self, lineno: int | None) -> str:
        if lineno is None or not 1 <= lineno <= refs.len_(self.lines):
            return ""
        return self.lines[lineno - 1].strip()

    def last_line(self, tb: Any) -> int | None:
        """The innermost frame of the traceback that is in the learner's file."""
        found = None
        while tb is not None:  # read here, not in traceback.walk_tb: the seal lets this module read it
            if tb.tb_frame.f_code.co_filename == self.filename:
                found = tb.tb_lineno
            tb = tb.tb_next
        return found

    def explain(self, error: BaseException, source: str | None = None) -> dict[str, Any]:
        """An exception as the learner should read it: type, message, their line."""
        if refs.type_(error) is RemoteRaised:  # raised in the runner: its type, message and line as data
            kind, message, lineno = error.type_name, error.message, error.lineno
        else:
            kind = refs.type_(error).__name__
            try:
                message = refs.str_(error)
            except Exception:  # a learner's exception whose __str__ raises
                message = ""
            lineno = self.last_line(error.__traceback__)
        error_text: dict[str, Any] | str = f"{kind}: {render.clip(message, 300)}" if message else kind
        refused = error.info.get("refused") if refs.type_(error) is RemoteRaised else None
        if refused in REFUSALS:  # what the runner's seal refused: said in the learner's language
            error_text = words.say("checks.refused", why=words.say(f"checks.refused.{refused}"))
        said: dict[str, Any] | str = error_text
        if lineno is not None:
            code = self.line(lineno)
            said = (words.say("checks.raised_line_code", error=error_text, line=lineno, code=render.clip(code, 80))
                    if code else words.say("checks.raised_line", error=error_text, line=lineno))
        elif source:
            said = words.say("checks.raised_while", error=error_text, code=render.clip(source.strip(), 80))
        return {"type": kind, "message": render.clip(message, 2000), "lineno": lineno, "text": words.english(said),
                "said": said}


class TimeLimit:
    """A check's (or a request's) time limit, raised as CheckTimeout in the main thread.

    ``seconds`` is CPU time: the main thread's own (``time.thread_time``: the code being judged
    runs there; torch's pool threads are not counted, so a limit means the same at any thread
    count) plus what ``spent()`` adds (the judge counts what the runner reported for its
    requests). Wall time a busy machine stole does not count. ``wall`` caps the wall time too
    (default: WALL_FACTOR times ``seconds``), for code that waits (a sleep, a lock); ``by_wall``
    says which limit was reached.

    POSIX: SIGALRM (an interval timer) first after ``seconds`` of wall time (CPU time cannot run
    ahead of it in one thread) and every REPEAT seconds after that, each time checking the CPU
    time; once reached it raises at every tick until the block is left, so a check that catches
    the first one still stops. Elsewhere (Windows): a timer thread that interrupts the main
    thread through SIGINT's handler, on wall time only (no thread CPU clock to read there)."""

    REPEAT = 0.02
    WALL_FACTOR = 3.0

    def __init__(self, seconds: float, wall: float | None = None, spent: Any = None) -> None:
        self.seconds = seconds
        self.wall = max(wall if wall is not None else seconds * self.WALL_FACTOR, 0.001)
        self.spent = spent
        self.fired = False
        self.by_wall = False
        self.cpu_clock = True  # False where only wall time is watched (the timer thread)
        self._previous: Any = None
        self._stop: threading.Event | None = None
        self._timer: threading.Thread | None = None
        self._inside = False
        self._cpu0 = 0.0
        self._spent0 = 0.0
        self._wall0 = 0.0

    def used(self) -> float:
        """CPU seconds used inside the block so far (the main thread's, plus ``spent``'s)."""
        extra = (self.spent() - self._spent0) if self.spent is not None else 0.0
        return refs.thread_time() - self._cpu0 + extra

    def _handler(self, signum: Any, frame: Any) -> None:
        # Raised only inside the block: one that lands while entering (a tiny limit) is ignored,
        # and the repeat lands again 20 ms later, inside; one on its way as the block ends too.
        if not self._inside:
            return
        if not self.fired:
            over_wall = refs.monotonic() - self._wall0 >= self.wall
            if self._stop is None and not over_wall and self.used() < self.seconds:
                return
            self.by_wall = over_wall and self.used() < self.seconds
        self.fired = True
        raise CheckTimeout()

    def __enter__(self) -> TimeLimit:
        self._cpu0, self._wall0 = refs.thread_time(), refs.monotonic()
        self._spent0 = self.spent() if self.spent is not None else 0.0
        if refs.setitimer is not None and refs.SIGALRM is not None:
            self._previous = refs.signal_signal(refs.SIGALRM, self._handler)
            refs.setitimer(refs.ITIMER_REAL, max(min(self.seconds, self.wall), 0.001), self.REPEAT)
            self._inside = True
            return self
        self._previous = refs.signal_signal(refs.SIGINT, self._handler)
        self._stop = stop = threading.Event()
        self.cpu_clock = False

        def interrupt() -> None:
            if stop.wait(max(min(self.seconds, self.wall), 0.001)):
                return
            while True:
                _thread.interrupt_main(refs.SIGINT)
                if stop.wait(self.REPEAT):
                    return

        self._timer = threading.Thread(target=interrupt, name="tutor-check-timer", daemon=True)
        self._timer.start()
        self._inside = True
        return self

    def __exit__(self, *exc: Any) -> typing.Literal[False]:
        self._inside = False
        if self._stop is None:
            refs.setitimer(refs.ITIMER_REAL, 0, 0)
        else:
            self._stop.set()
            if self._timer is not None:
                self._timer.join()
        for _ in range(1000):  # a signal sent just before the timer stopped lands here, harmlessly
            pass
        if self._stop is None:
            refs.signal_signal(refs.SIGALRM, self._previous or 0)
        else:
            refs.signal_signal(refs.SIGINT, self._previous or refs.default_int_handler)
        return False


def _draws() -> tuple[Any, ...]:
    """The state of the judge's generators (random, torch's CPU one, NumPy's), to compare."""
    numpy_state: "typing.Any" = refs.np_get_state() if refs.np_get_state is not None else None
    return (refs.random_getstate(), refs.cpu_generator.get_state(),
            None if numpy_state is None else (numpy_state[2], bytes(numpy_state[1].tobytes())))


def seed_all(seed: int) -> None:
    refs.random_seed(seed)
    # the CPU generator as torch.manual_seed seeds it; CUDA's only once CUDA is in use (seeding it
    # before queues a lazy call that records a stack trace: 5 ms a case)
    refs.cpu_generator.manual_seed(seed)
    if refs.torch_module.cuda.is_initialized():
        refs.torch_module.cuda.manual_seed_all(seed)
    if refs.np_seed is not None:
        refs.np_seed(seed % (2**32))


def reset_modes() -> None:
    """Start every check in the default grad/autocast state, whatever the learner's top level
    left switched on (an inference-mode leak is handled by :class:`Case` with a guard)."""
    refs.set_grad_enabled_raw(True)
    for device in ("cpu", "cuda"):
        try:
            if refs.autocast_enabled(device):
                refs.set_autocast_enabled(device, False)
        except (RuntimeError, KeyError):
            continue


#: What a check's evaluation lets through untouched: its own timer, the runner's, a stopped run, a runner
#: gone or refused, a call of code an earlier check had to stop.
PASS_THROUGH = (CheckTimeout, RemoteTimeout, RunStopped, RunnerGone, RunnerRefused, Tampered, StuckCode,
                KeyboardInterrupt, SystemExit)


def learner_names(learner_globals: dict[str, Any], contract: Any = None) -> dict[str, Any]:
    """The learner's names a check's own code may see: the contract's (the names the exercise
    asks the learner to define), taken from the submission; nothing else of the learner's module.
    Without a contract (a payload that names none), every name but those that would shadow a
    builtin or a dunder. A learner's module-level ``list = [...]`` or ``def range(n): ...`` then
    never reaches the pack's ``setup``, predicates or reference workloads, which see the real
    builtins (:data:`refs.BUILTINS`)."""
    if refs.type_(contract) in (list, tuple):
        wanted = {refs.str_(name) for name in contract}
        return {name: value for name, value in learner_globals.items() if name in wanted}
    return {name: value for name, value in learner_globals.items()
            if not name.startswith("__") and name not in refs.BUILTIN_NAMES}


class Case:
    """One run of a check: a fresh namespace, seeded, with the case's bindings and setup done."""

    def __init__(self, learner: Learner, learner_globals: dict[str, Any], check: dict[str, Any],
                 bindings: dict[str, Any], session: Session):
        self.learner = learner
        self.check = check
        self.bindings = bindings
        seed = check.get("seed")
        self.seed: int = seed if refs.type_(seed) is int else fresh_seed()
        namespace = dict(learner_globals)
        namespace["__builtins__"] = refs.BUILTINS
        namespace.update(torch=refs.torch_module, nn=refs.nn_module, F=refs.F_module)
        if refs.numpy_module is not None:
            namespace["np"] = refs.numpy_module
        namespace.update(bindings)
        self.namespace = namespace
        self._base_names = set(namespace) - set(bindings)
        self._label = f"<check {check.get('id', '?')}>"
        self._inputs: dict[str, Any] | str | None = None
        self.session = session
        self.running: str | None = None  # the check's code being evaluated (a timeout names it)

    @property
    def label(self) -> str:
        """What the check's own code is called in tracebacks (and where it runs)."""
        return self._label

    def prepare(self) -> None:
        seed_all(self.seed)
        self._seeded = _draws()
        if self.session.case_seed != self.seed:
            # the learner's code draws from the runner's generators: seeded the same way, at the
            # case's first request (the probe starts the case before its canary, so this is a fallback)
            self.session.start_case(self.seed)
        setup = self.check.get("setup")
        if setup:
            self.run(setup)
        self._inputs = self._inputs_text()  # as the inputs were, before a call could resize them

    def drew(self) -> bool:
        """Whether the check's own code (its setup, its expressions) drew from a generator since
        the case was seeded: when it did not, its inputs are not random and a seed replays nothing."""
        seeded = getattr(self, "_seeded", None)
        if seeded is None:
            return True
        now = _draws()
        return now[0] != seeded[0] or not now[1].equal(seeded[1]) or now[2] != seeded[2]

    def _inputs_text(self) -> dict[str, Any] | str:
        names = [n for n in self.namespace if n not in self._base_names or n in self.bindings]
        return render.inputs_text(self.namespace, names)

    def _compile(self, source: str, mode: str) -> Any:
        return refs.compile_(source, self._label, mode)

    def eval(self, source: str) -> Any:
        """Evaluate a check expression; learner code it calls may raise (-> CodeRaised)."""
        self.running = source
        try:
            return refs.eval_(self._compile(source, "eval"), self.namespace)
        except PASS_THROUGH:
            raise
        except BaseException as error:  # noqa: BLE001 - the learner's exception is the result
            raise CodeRaised(error, source) from None

    def run(self, source: str) -> None:
        self.running = source
        try:
            refs.exec_(self._compile(source, "exec"), self.namespace)
        except PASS_THROUGH:
            raise
        except BaseException as error:  # noqa: BLE001
            raise CodeRaised(error, source) from None

    def call(self, function: Any, *args: Any) -> Any:
        """Call something the learner gave us (a workload, a ranking function). Nothing to undo
        here afterwards: only the pack's code runs in the judge (the learner's runs in the runner,
        which restores its own torch after every request)."""
        self.running = getattr(function, "__name__", "the callable") + "()"
        try:
            return function(*args)
        except PASS_THROUGH:
            raise
        except BaseException as error:  # noqa: BLE001
            raise CodeRaised(error, getattr(function, "__name__", "the callable") + "()") from None

    def describe(self) -> dict[str, Any] | str:
        """"b=2, x of shape (4, 8)" (a said): which inputs this case used, for messages ("" when none)."""
        parts: list[Any] = []
        plain = render.bindings_text(self.bindings)
        if plain:
            parts.append(plain)
        tensors = self._inputs if self._inputs is not None else self._inputs_text()
        if tensors:
            parts.append(tensors)
        return words.joined(parts, "checks.comma")

    def where(self) -> dict[str, Any] | str:
        """"for b=2, x of shape (4, 8)" (a said), or "" when the case has no inputs to name."""
        inputs = self.describe()
        return words.say("checks.for", inputs=inputs) if inputs else ""
