"""Grading, parent side: an Exercise and the learner's code in, typed check results out.

The checks themselves run in the sandbox child (``tutor.checks.probe``); this module builds their
JSON payload from the pack's models, asks the sandbox for one run, and reads the probe's report
back into :class:`CheckResult` objects the app and the CLI can show. It never imports torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from tutor.core import safe_regex
from tutor.core.check_models import ExprCheck
from tutor.core.models import Example, Exercise, PredictQuiz
from tutor.core.spec import as_data
from tutor.core.text import Text, resolve

if TYPE_CHECKING:  # the sandbox is only needed when something actually runs
    from tutor.sandbox import RunResult, Sandbox

PROBE_MODULE = "tutor.checks.probe"
PROBE_FUNCTION = "run_checks"
#: "tampered": the runner answered a question whose answer the judge knew, wrongly (a canary).
#: "timeout": the check ran past its time limit (its own `time_limit`, else its share of the time).
Status = Literal["passed", "failed", "error", "skipped", "tampered", "timeout"]
_STATUSES: dict[str, Status] = {status: status for status in get_args(Status)}

#: Share of an exercise's wall time given to the checks; the rest covers the learner's own
#: top-level code and the child's start, so the probe finishes (and reports) before the sandbox
#: has to kill the run.
_CHECK_SHARE = 0.8


@dataclass
class CheckResult:
    """One check's verdict, in the learner's terms."""

    id: str
    status: Status
    description: str
    message: str
    expected: str | None = None
    got: str | None = None
    hint: Text | None = None
    data: dict | None = None  # profile: {"rows": [...]}; memory: {"curve": [[n, bytes], ...]}
    kind: str = ""
    lineno: int | None = None
    #: the seed of the case that did not pass (a check without ``seed`` draws a fresh one per run):
    #: setting the check's ``seed`` to it reproduces that case's inputs
    seed: int | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "status": self.status, "description": self.description,
                "message": self.message, "expected": self.expected, "got": self.got, "hint": self.hint,
                "lineno": self.lineno, "data": self.data, "seed": self.seed}


@dataclass
class ExerciseReport:
    """The outcome of checking an exercise: passed only when every check passed and the
    learner's code itself ran without an error."""

    exercise: str
    passed: bool
    checks: list[CheckResult]
    run: "RunResult"
    message: str
    tampered: list[str] = field(default_factory=list)
    #: set when the learner's code could not run at all (a syntax or import error): the one thing
    #: to fix, said first; the checks are then "skipped", never a list of their NameErrors
    cause: str | None = None

    def failed_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    def to_json(self) -> dict[str, Any]:
        run = self.run.to_dict()
        run.pop("report", None)  # its content is `checks`, typed
        return {"exercise": self.exercise, "passed": self.passed, "message": self.message,
                "checks": [c.to_json() for c in self.checks], "tampered": self.tampered, "run": run,
                "cause": self.cause}


@dataclass
class ExampleOutcome:
    """Whether running an example (or a predict-quiz's code) gave what its step expects."""

    matched: bool
    summary: str
    run: "RunResult"

    def to_json(self) -> dict[str, Any]:
        return {"matched": self.matched, "summary": self.summary, "run": self.run.to_dict()}


# --------------------------------------------------------------------------- exercises


def exercise_filename(exercise: Exercise) -> str:
    """What tracebacks call the learner's file, so line numbers match their editor."""
    return f"{exercise.id}.py"


def build_payload(exercise: Exercise, code: str, *, time_budget: float, language: str | None = None,
                  fallback: str = "en", filename: str | None = None, seed: int | None = None) -> dict[str, Any]:
    """The probe's input: plain JSON, learner-facing text resolved to one language. ``seed``:
    every check without a seed of its own draws its inputs from it (a replay)."""
    checks = []
    for check in exercise.checks:
        data = as_data(check)
        del data["description"], data["hint"]
        if seed is not None and data.get("seed") is None:
            data["seed"] = seed
        if isinstance(check, ExprCheck):
            data["message"] = resolve(check.message, language, fallback)
        checks.append(data)
    return {"version": 1, "exercise": exercise.id, "filename": filename or exercise_filename(exercise),
            "source": code, "time_budget": round(time_budget, 3), "checks": checks,
            "contract": [item.name for item in exercise.contract]}  # the learner's names a check sees


def _limits_for(sandbox: "Sandbox", timeout: float | None):
    from tutor.sandbox.limits import step_limits

    return step_limits(sandbox.limits, timeout)


def check_exercise(sandbox: "Sandbox", exercise: Exercise, code: str, *, timeout: float | None = None,
                   language: str | None = None, fallback: str = "en",
                   filename: str | None = None, seed: int | None = None) -> ExerciseReport:
    """Run ``code`` as the learner's solution of ``exercise`` and grade it (blocking).

    Args:
        timeout: seconds for the whole run; default: the exercise's own, else the sandbox's.
        language: which translation of descriptions and messages to use (pack text may be
            ``{en: ..., zh: ...}``); ``fallback`` is the pack's first language.
        filename: what tracebacks call the code (`check FILE` passes the learner's path); default
            and instead of a name starting with "<" (those name the checks' own code):
            ``exercise_filename``.
        seed: draw the inputs of every check that has no seed of its own from this one, as a
            failing case reported it (`check --seed`): the same inputs again, to debug with.
    """
    from tutor.sandbox import ProbeSpec

    if not filename or filename.startswith("<"):
        filename = exercise_filename(exercise)
    timeout = timeout or exercise.timeout
    limits = _limits_for(sandbox, timeout)
    budget = max(0.5, limits.wall_time * _CHECK_SHARE - 0.2)
    payload = build_payload(exercise, code, time_budget=budget, language=language, fallback=fallback,
                            filename=filename, seed=seed)
    result = sandbox.run(code, limits=limits, filename=filename,
                         probe=ProbeSpec(PROBE_MODULE, PROBE_FUNCTION, payload))
    return grade(exercise, result, language=language, fallback=fallback)


def grade(exercise: Exercise, result: "RunResult", *, language: str | None = None,
          fallback: str = "en") -> ExerciseReport:
    """Turn a run's report into typed results (also for a run that never reported)."""
    specs = {check.id: check for check in exercise.checks}
    report = result.report if isinstance(result.report, dict) else None
    raw_checks = {c.get("id"): c for c in (report or {}).get("checks", []) if isinstance(c, dict)}
    checks = []
    for check_id, spec in specs.items():
        description = resolve(spec.description, language, fallback)
        raw = raw_checks.get(check_id)
        if raw is None:
            why = result.message or "the run ended before this check reported"
            checks.append(CheckResult(check_id, "error", description, f"not checked: {why}", kind=spec.kind,
                                      hint=None))
            continue
        reported = raw.get("status")
        status = _STATUSES.get(reported, "error") if isinstance(reported, str) else "error"
        checks.append(CheckResult(
            id=check_id, status=status, description=description, message=str(raw.get("message") or ""),
            expected=_text_or_none(raw.get("expected")), got=_text_or_none(raw.get("got")),
            # an error is not the learner's miss: only a hint written for that status (or case) shows
            hint=spec.hint_for(str(status), raw.get("case") if isinstance(raw.get("case"), int) else None),
            data=raw.get("data") if isinstance(raw.get("data"), dict) else None,
            kind=spec.kind, lineno=raw.get("lineno") if isinstance(raw.get("lineno"), int) else None,
            seed=raw.get("seed") if type(raw.get("seed")) is int else None,
        ))
    titles = {c.id: c.description for c in checks}
    checks = [c if c.status != "skipped" else _named(c, titles) for c in checks]
    cause = does_not_run(result)
    if cause is not None:  # nothing the checks said is about the exercise: they only lacked the code
        checks = [c if c.passed else CheckResult(c.id, "skipped", c.description, NOT_RUN, kind=c.kind)
                  for c in checks]
    all_passed = bool(checks) and all(c.passed for c in checks)
    learner_failed = result.error is not None
    passed = all_passed and not learner_failed and report is not None
    return ExerciseReport(exercise=exercise.id, passed=passed, checks=checks, run=result,
                          message=cause or _summary(checks, result, report),
                          tampered=[str(t) for t in (report or {}).get("tampered", [])], cause=cause)


def _named(check: CheckResult, titles: dict[str, str]) -> CheckResult:
    """A skip reason names the checks it waits for by what they check, not by their ids."""
    def name(match: "re.Match[str]") -> str:
        ident = match.group(1)
        title = (titles.get(ident) or "").strip()
        return f"“{title}”" if title and title != ident else match.group(0)

    check.message = re.sub(r"'([A-Za-z0-9_-]+)'", name, check.message)
    return check


#: Errors that mean the learner's file did not run at all, so no check could look at anything.
DOES_NOT_RUN = ("SyntaxError", "IndentationError", "TabError", "ImportError", "ModuleNotFoundError")
NOT_RUN = "not run: your code has to run first"


def does_not_run(result: "RunResult") -> str | None:
    """"your code does not run: IndentationError at line 4: ..." when the file could not run."""
    error = result.error
    if error is None or str(error.type).rsplit(".", 1)[-1] not in DOES_NOT_RUN:
        return None
    where = f" at line {error.lineno}" if error.lineno else ""
    return f"your code does not run: {error.type}{where}: {_clip(error.message)}"


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _summary(checks: list[CheckResult], result: "RunResult", report: dict | None) -> str:
    total = len(checks)
    if report is None:
        return result.message or f"the run ended ({result.status}) without check results"
    good = sum(c.passed for c in checks)
    noun = "check" if total == 1 else "checks"
    if good == total:
        text = "the one check passed" if total == 1 else f"all {total} checks passed"
    else:
        text = f"{good} of {total} {noun} passed"
    if result.error is not None:
        where = f" at line {result.error.lineno}" if result.error.lineno else ""
        text = (f"your code raised {result.error.type}{where}: {_clip(result.error.message)}; "
                f"{good} of {total} {noun} passed on what it had defined")
    return text


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------- examples


def run_example(sandbox: "Sandbox", example: Example | PredictQuiz, code: str | None = None, *,
                timeout: float | None = None) -> ExampleOutcome:
    """Run an example (or the code of a predict-the-output quiz) and compare with its expectation.

    ``code`` is the learner's edited version; default: the step's own code.
    """
    code = example.code if code is None else code
    timeout = timeout or example.timeout
    limits = _limits_for(sandbox, timeout)
    result = sandbox.run(code, limits=limits, filename=f"{example.id}.py")
    expect = getattr(example, "expect", None)
    raises = getattr(example, "raises", None)
    if raises:  # a predict quiz about an exception: the code must raise it
        from types import SimpleNamespace

        expect = SimpleNamespace(raises=SimpleNamespace(type=raises, match=None), output=None)
    matched, summary = compare_outcome(expect, result)
    return ExampleOutcome(matched=matched, summary=summary, run=result)


def compare_outcome(expect: Any, result: "RunResult") -> tuple[bool, str]:
    """(matched, one-line summary) for a run against an ``Expect`` (None: must run cleanly)."""
    raises = getattr(expect, "raises", None)
    output = getattr(expect, "output", None)
    error = result.error
    if result.status not in ("ok", "error"):
        return False, result.message or f"the run ended with status {result.status}"
    if raises is not None:
        if error is None:
            return False, f"expected {raises.type}, but the code ran without an error"
        got = f"{error.type}: {_clip(error.message)}" if error.message else error.type
        if error.type != raises.type and error.type.rsplit(".", 1)[-1] != raises.type:
            return False, f"expected {raises.type}, got {got}"
        if raises.match:
            try:
                found = safe_regex.search(raises.match, error.message)
            except safe_regex.PatternTimeout as slow:
                return False, str(slow)
            if not found:
                return False, f"raised {error.type} as expected, but its message does not match /{raises.match}/: {got}"
    elif error is not None:
        where = f" at line {error.lineno}" if error.lineno else ""
        return False, f"expected no error, got {error.type}{where}: {_clip(error.message)}"
    if output is not None:
        try:
            found = safe_regex.search(output, result.stdout)
        except safe_regex.PatternTimeout as slow:
            return False, str(slow)
    if output is not None and not found:
        shown = _clip(result.stdout.strip(), 80) or "nothing"
        return False, f"expected output matching /{output}/, got {shown!r}" if result.stdout.strip() \
            else f"expected output matching /{output}/, but nothing was printed"
    if raises is not None:
        return True, f"raised as expected: {error.type}: {_clip(error.message)}"
    if output is not None:
        return True, "output matches"
    return True, "ran without an error"
