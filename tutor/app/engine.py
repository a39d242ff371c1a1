"""The app's one door to running code: the sandbox and the check engine, imported lazily.

Why a door: the UI must open instantly and keep working when running code is impossible (no
sandbox in this build, a broken interpreter setting); every screen asks this object instead of
importing ``tutor.sandbox`` itself, and gets a plain sentence when it cannot run. All the
``run``/``check`` calls block: the screens call them from thread workers, never the UI thread.
"""

from __future__ import annotations

import threading
from typing import Any

from tutor.core.config import Settings
from tutor.core.i18n import t


class EngineUnavailable(Exception):
    """Running code is not possible here; the message says why in the learner's terms."""


class Engine:
    """Owns the sandbox for the app's lifetime (start on mount, close on exit).

    Args:
        settings: limits, workers, isolation and interpreter for the sandbox.
        sandbox: an already-built sandbox to use (tests share one across apps); the engine
            then leaves closing it to whoever built it.
    """

    def __init__(self, settings: Settings, sandbox: Any | None = None):
        self.settings = settings
        self._sandbox = sandbox
        self._owned = sandbox is None
        self._error: str | None = None
        self._lock = threading.Lock()
        self._closed = False

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Begin warming workers in the background; never blocks and never raises."""
        with self._lock:
            if self._sandbox is not None or self._error is not None or self._closed:
                return
            try:
                from tutor.grading.sandboxes import sandbox_for
            except ImportError as exc:
                self._error = f"this build has no sandbox ({exc.name or exc})"
                return
            try:
                self._sandbox = sandbox_for(self.settings)
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

    def cancel(self) -> None:
        """Stop the run in flight (the Stop key); harmless when nothing runs."""
        if self._sandbox is not None:
            self._sandbox.cancel()

    # ------------------------------------------------------------------ state for the status bar

    @property
    def available(self) -> bool:
        return self._sandbox is not None

    def _ready(self) -> bool:
        # Sandbox.isolation waits for warm-up: ask only once the status says it is over.
        return self._sandbox is not None and str(getattr(self._sandbox, "status", "")) in ("ready", "busy")

    def status_text(self) -> str:
        """One line for the status bar; never blocks (it runs on the UI thread)."""
        if self._sandbox is None:
            if self._error is None:  # start() comes once the first screen is drawn
                return t("status.sandbox.warming")
            return t("status.sandbox.none", reason=self._error)
        status = str(getattr(self._sandbox, "status", ""))
        if status in ("ready", "busy"):
            text = t("status.sandbox.ready") if status == "ready" else t("status.sandbox.busy")
            level = getattr(self._sandbox.isolation, "level", None)
            return text + (" · " + t("status.isolation", level=level) if level else "")
        if status in ("warming up", "not started"):
            return t("status.sandbox.warming")
        if status.startswith("unavailable"):
            return t("status.sandbox.failed", reason=status.partition(": ")[2] or status)
        return f"sandbox: {status}"

    def torch_version(self) -> str | None:
        """The torch version of the interpreter that runs code, once warm-up reported it."""
        if not self._ready():
            return None
        return (getattr(self._sandbox, "worker_info", None) or {}).get("torch")

    def isolation_reason(self) -> str:
        if not self._ready():
            return ""
        return str(getattr(self._sandbox.isolation, "reason", "") or "")

    # ------------------------------------------------------------------ blocking calls

    def _require(self) -> Any:
        if self._sandbox is None:
            self.start()
        if self._sandbox is None:
            raise EngineUnavailable(t("sandbox.missing", reason=self._error or "not started"))
        status = str(getattr(self._sandbox, "status", ""))
        if status.startswith("unavailable") or status == "closed":
            raise EngineUnavailable(t("sandbox.missing", reason=status.partition(": ")[2] or status))
        return self._sandbox

    def run(self, code: str, *, timeout: float | None = None, filename: str = "snippet.py") -> Any:
        """Run code and return the sandbox's RunResult (``timeout``: a step's own wall time)."""
        sandbox = self._require()
        return sandbox.run(code, limits=self._limits(sandbox, timeout), filename=filename)

    def run_example(self, step: Any, code: str | None = None) -> Any:
        """Run an example or predict-quiz step; returns grading's ExampleOutcome (matched, summary, run)."""
        sandbox = self._require()
        grading = self._grading()
        return grading.run_example(sandbox, step, code)

    def check(self, exercise: Any, code: str, *, language: str | None = None, fallback: str = "en") -> Any:
        """Check an exercise; returns grading's ExerciseReport."""
        sandbox = self._require()
        grading = self._grading()
        return grading.check_exercise(sandbox, exercise, code, language=language, fallback=fallback)

    def exercise_filename(self, exercise: Any) -> str:
        return self._grading().exercise_filename(exercise)

    @staticmethod
    def _grading() -> Any:
        try:
            from tutor.grading import exercise as grading
        except ImportError as exc:
            raise EngineUnavailable(t("sandbox.missing", reason=f"this build has no check engine ({exc})")) from None
        return grading

    @staticmethod
    def _limits(sandbox: Any, timeout: float | None) -> Any:
        from tutor.sandbox.limits import step_limits

        return step_limits(getattr(sandbox, "limits", None), timeout)
