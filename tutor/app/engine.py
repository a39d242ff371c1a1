"""The app's one door to running code: the sandbox and the check engine, imported lazily.

Why a door: the UI must open instantly and keep working when running code is impossible (no
sandbox in this build, a broken interpreter setting); every screen asks this object instead of
importing ``tutor.sandbox`` itself, and gets a plain sentence when it cannot run. All the
``run``/``check`` calls block: the screens call them from thread workers, never the UI thread.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Sequence

from tutor.settings.config import Settings
from tutor.words.i18n import said, shown, t
from tutor.pack.models import Example, Exercise, PredictQuiz, Step
from tutor.errors import TutorError

if TYPE_CHECKING:  # the sandbox and grading load when the first run needs them, after start-up
    from tutor.grading.exercise import ExampleOutcome, ExerciseReport
    from tutor.sandbox.limits import Limits
    from tutor.sandbox.pool import Sandbox, SandboxState
    from tutor.sandbox.result import RunResult


class EngineUnavailable(TutorError):
    """Running code is not possible here; the message says why in the learner's terms."""


class Engine:
    """Owns the sandbox for the app's lifetime (start on mount, close on exit).

    Args:
        settings: limits, workers, isolation and interpreter for the sandbox.
        sandbox: an already-built sandbox to use (tests share one across apps); the engine
            then leaves closing it to whoever built it.
    """

    def __init__(self, settings: Settings, sandbox: Sandbox | None = None):
        self.settings = settings
        self._sandbox = sandbox
        self._owned = sandbox is None
        self._error: str | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._expected: Step | None = None  # the step the learner is on (``expect``)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Begin warming workers in the background; never blocks and never raises."""
        with self._lock:
            if self._sandbox is not None or self._error is not None or self._closed:
                return
            from tutor.grading.sandboxes import sandbox_for

            try:
                self._sandbox = sandbox_for(self.settings)
                self._sandbox.expect(may_profile(self._expected))
                self._sandbox.start()
            except Exception as exc:  # a bad interpreter setting must not stop the app
                self._error = str(exc) or type(exc).__name__
                self._sandbox = None

    def close(self) -> None:
        # Under the lock: a start() in progress (the app quit right after its first frame)
        # finishes making its sandbox, which is then closed here rather than left warming up.
        with self._lock:
            self._closed = True
            sandbox = self._sandbox
        if sandbox is not None and self._owned:
            try:
                sandbox.close()
            except Exception:
                pass

    def kill_now(self) -> None:
        """End the sandbox's processes at once, from any thread, taking no lock: the app is being
        ended from outside (``tutor.app.leaving``) and ``close()`` may not come in time. No
        sandbox starts afterwards; ``close()`` still cleans up."""
        self._closed = True
        sandbox = self._sandbox
        if sandbox is not None and self._owned:
            try:
                sandbox.kill_now()
            except Exception:
                pass

    def expect(self, step: Step | None) -> None:
        """The learner is on ``step``: tell the sandbox whether runs there may profile, so that
        a spare waiting for a Run loads the profiler's machinery only where it may be used
        (``Sandbox.expect``; in spawn mode every Run's runner would pay 1.2-2.4 s of CPU for it).
        Never blocks: the step views call it from the UI thread as they mount."""
        self._expected = step
        sandbox = self._sandbox  # None before start(): start() says it
        if sandbox is not None:
            try:
                sandbox.expect(may_profile(step))
            except Exception:  # only a warm-up hint: a run never depends on it
                pass

    def cancel(self) -> None:
        """Stop the run in flight (the Stop key); harmless when nothing runs."""
        if self._sandbox is not None:
            self._sandbox.cancel()

    # ------------------------------------------------------------------ state for the status bar

    @property
    def available(self) -> bool:
        return self._sandbox is not None

    @property
    def state(self) -> SandboxState | None:
        """The sandbox's state; None before one exists (not built yet, or it failed to build)."""
        return self._sandbox.state if self._sandbox is not None else None

    def _warm(self) -> Sandbox | None:
        """The sandbox once warm-up is over (Sandbox.isolation would wait for it until then)."""
        sandbox = self._sandbox
        if sandbox is None or sandbox.state.value not in ("ready", "busy"):
            return None
        return sandbox

    def status_text(self) -> str:
        """One line for the status bar; never blocks (it runs on the UI thread)."""
        sandbox = self._sandbox
        if sandbox is None:
            if self._error is None:  # start() comes once the first screen is drawn
                return t("status.sandbox.warming")
            return t("status.sandbox.none", reason=self._error)
        # Compared by value: naming SandboxState here would import the sandbox on the UI thread
        # before the first frame (the state's class is the sandbox's own, loaded with it).
        state = sandbox.state.value
        if state in ("ready", "busy"):
            text = t("status.sandbox.ready") if state == "ready" else t("status.sandbox.busy")
            level = sandbox.isolation.level
            # the level's name in the language in use ("none": 无); a level this tutor has no word for, as it is
            name = shown(level, said("isolation." + level)) if level else None
            return text + (" · " + t("status.isolation", level=name) if level else "")
        if state in ("warming up", "not started"):
            return t("status.sandbox.warming")
        if state == "unavailable":
            return t("status.sandbox.failed", reason=shown(sandbox.error, getattr(sandbox, "error_said", None)) or state)
        return t("status.sandbox.state", state=state)

    def torch_version(self) -> str | None:
        """The torch version of the interpreter that runs code, once warm-up reported it."""
        sandbox = self._warm()
        if sandbox is None:
            return None
        version = sandbox.worker_info.get("torch")
        return version if isinstance(version, str) else None

    def isolation_reason(self) -> str:
        sandbox = self._warm()
        if sandbox is None:
            return ""
        info = sandbox.isolation  # in the language in use (its English as it came, for a said this tutor lacks)
        return shown(info.reason, getattr(info, "reason_said", None)) or ""

    # ------------------------------------------------------------------ blocking calls

    def _require(self) -> Sandbox:
        if self._sandbox is None:
            self.start()
        sandbox = self._sandbox
        if sandbox is None:
            raise EngineUnavailable(t("sandbox.missing", reason=self._error or t("engine.not_started")))
        state = sandbox.state.value
        if state == "unavailable":
            raise EngineUnavailable(t("sandbox.missing", reason=shown(sandbox.error, getattr(sandbox, "error_said", None))
                                      or state))
        if state == "closed":
            raise EngineUnavailable(t("sandbox.missing", reason=state))
        return sandbox

    def run(self, code: str, *, timeout: float | None = None, filename: str = "snippet.py",
            prelude: str = "", uses: Sequence[tuple[str, str]] = ()) -> RunResult:
        """Run code and return the sandbox's RunResult (``timeout``: a step's own wall time;
        ``prelude`` and ``uses``: an exercise's pack prelude and the answers it builds on, run first)."""
        sandbox = self._require()
        return sandbox.run(code, limits=self._limits(sandbox, timeout), filename=filename,
                           prelude=prelude or None, uses=list(uses) or None)

    def run_example(self, step: Example | PredictQuiz, code: str | None = None) -> ExampleOutcome:
        """Run an example or predict-quiz step: did it give what the step expects."""
        sandbox = self._require()
        from tutor.grading.exercise import run_example

        return run_example(sandbox, step, code)

    def check(self, exercise: Exercise, code: str, *, language: str | None = None,
              fallback: str = "en", uses: Sequence[tuple[str, str | None]] = ()) -> ExerciseReport:
        """Check an exercise against its checks (``uses``: the learner's answers it builds on)."""
        sandbox = self._require()
        from tutor.grading.exercise import check_exercise

        return check_exercise(sandbox, exercise, code, language=language, fallback=fallback, uses=uses)

    def exercise_filename(self, exercise: Exercise) -> str:
        from tutor.grading.exercise import exercise_filename

        return exercise_filename(exercise)

    @staticmethod
    def _limits(sandbox: Sandbox, timeout: float | None) -> Limits:
        from tutor.sandbox.limits import step_limits

        return step_limits(sandbox.limits, timeout)


def may_profile(step: Step | None) -> bool | None:
    """Whether runs on ``step`` may reach the profiler's machinery (``torch._dynamo``): its code
    (an exercise's starter and solution, which the learner's fix resembles) or its checks name
    something that does (``tutor.sandbox.deferred``). False for a step with no code to run
    (prose, a choice or free-text quiz); None (nothing known) for none."""
    if step is None:
        return None
    if isinstance(step, Exercise):
        from tutor.pack.spec import as_data

        text = "\n".join([step.starter, step.solution, repr(as_data(step.checks))])
    elif isinstance(step, (Example, PredictQuiz)):
        text = step.code
    else:
        return False
    from tutor.sandbox.deferred import may_need_deferred

    return may_need_deferred(text)
