"""Grading, parent side: an Exercise and the learner's code in, typed check results out.

The checks themselves run in the sandbox child (``tutor.child.checks.probe``); this module builds their
JSON payload from the pack's models, asks the sandbox for one run, and reads the probe's report
back into :class:`CheckResult` objects the app and the CLI can show. It never imports torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Sequence, get_args

from tutor.pack import safe_regex
from tutor.pack import form
from tutor.pack.check_models import PARENT_KINDS, ExprCheck
from tutor.words.i18n import english, said
from tutor.pack.models import Example, Exercise, PredictQuiz
from tutor.pack.spec import as_data
from tutor.pack.text import Text, resolve

if TYPE_CHECKING:  # the sandbox is only needed when something actually runs
    from tutor.sandbox import RunResult, Sandbox

PROBE_MODULE = "tutor.child.checks.probe"
PROBE_FUNCTION = "run_checks"
#: "tampered": the runner answered a question whose answer the judge knew, wrongly (a canary).
#: "timeout": the check ran past its time limit (its own `time_limit`, else its share of the time).
Status = Literal["passed", "failed", "error", "skipped", "tampered", "timeout"]
_STATUSES: dict[str, Status] = {status: status for status in get_args(Status)}

#: Share of an exercise's wall time given to the checks; the rest covers the learner's own
#: top-level code and the child's start, so the probe finishes (and reports) before the sandbox
#: has to kill the run.
_CHECK_SHARE = 0.8
#: A batch's run wall time (`grade`, `validate`), in units of the exercise's timeout. The checks'
#: budget is CPU time (the timeout's share above); the wall time only stops code that waits, so in
#: a batch it is a few times larger: a busy machine (or a shard of `grade` beside others) that gives
#: the code half a core must not turn work within its CPU budget into a `timeout`, nor a memory
#: bomb's `memory` into one. A learner's own Check (the app, `torch-tutor check`) keeps the
#: timeout as its wall time (factor 1): a top-level infinite loop there stops when the timeout says.
BATCH_WALL_FACTOR = 3.0


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
    data: dict[str, Any] | None = None  # profile: {"rows": [...]}; memory: {"curve": [[n, bytes], ...]}
    kind: str = ""
    lineno: int | None = None
    #: the seed of the case that did not pass (a check without ``seed`` draws a fresh one per run):
    #: setting the check's ``seed`` to it reproduces that case's inputs
    seed: int | None = None
    #: ``message`` as key + fields (tutor.words.i18n.said), when its maker gave one: shown in the
    #: learner's language by ``tutor.words.i18n.shown``, which falls back to ``message``
    said: dict[str, Any] | None = None
    #: (seconds the check took in the judge, seconds it had): `validate --repeat`'s margin to the budget
    seconds: tuple[float, float] | None = None
    #: ``expected`` and ``got`` as saids, where they are phrases rather than values ("a tensor")
    expected_said: dict[str, Any] | None = None
    got_said: dict[str, Any] | None = None

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
    #: ``message`` and ``cause`` as key + fields (see CheckResult.said)
    said: dict[str, Any] | None = None
    cause_said: dict[str, Any] | None = None

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
    said: dict[str, Any] | None = None  # ``summary`` as key + fields (see CheckResult.said)

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
        if check.kind in PARENT_KINDS:  # judged here from the text (judge_here), never in the sandbox
            continue
        data = as_data(check)
        del data["description"], data["hint"]
        if seed is not None and data.get("seed") is None:
            data["seed"] = seed
        if isinstance(check, ExprCheck):
            data["message"] = resolve(check.message, language, fallback)
        checks.append(data)
    payload: dict[str, Any] = {"version": 1, "exercise": exercise.id,
                               "filename": filename or exercise_filename(exercise), "source": code,
                               "time_budget": round(time_budget, 3), "checks": checks,
                               "contract": [item.name for item in exercise.contract]}  # the learner's names a check sees
    if exercise.prelude_code:
        payload["prelude"] = exercise.prelude_code
    decided = judge_here(exercise, code)
    if decided:  # for the `after:` of the sandbox's checks
        payload["decided"] = {check_id: raw["status"] for check_id, raw in decided.items()}
    return payload


def judge_here(exercise: Exercise, code: str) -> dict[str, dict[str, Any]]:
    """check id -> result (as the probe reports one) of the checks judged from the code's text, in
    this process (``form``): they need none of the learner's code to run."""
    decided: dict[str, dict[str, Any]] = {}
    for check in exercise.checks:
        if check.kind == "form":
            verdict = form.judge(as_data(check), code, used=getattr(exercise, "_used_names", ()))
            decided[check.id] = {"id": check.id, "kind": check.kind, "status": verdict.status,
                                 "message": verdict.message, "expected": verdict.expected, "got": verdict.got,
                                 "lineno": verdict.lineno, "case": None, "seed": None, "data": None}
    return decided


def _limits_for(sandbox: "Sandbox", timeout: float | None) -> Any:
    from tutor.sandbox.limits import step_limits

    return step_limits(sandbox.limits, timeout)


#: The learner's answer to an exercise another one ``uses``: (its exercise id, its code, or None
#: where the learner has none).
UsedAnswer = tuple[str, "str | None"]


def used_runs(uses: "Sequence[UsedAnswer]") -> list[tuple[str, str]]:
    """What the runner runs before the learner's code: ``(filename, code)`` of each answer there is."""
    return [(f"{ident}.py", code) for ident, code in uses if code is not None]


def check_exercise(sandbox: "Sandbox", exercise: Exercise, code: str, *, timeout: float | None = None,
                   language: str | None = None, fallback: str = "en",
                   filename: str | None = None, seed: int | None = None,
                   uses: "Sequence[UsedAnswer]" = (), wall_factor: float = 1.0) -> ExerciseReport:
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
        wall_factor: the run's wall time in units of the timeout (``BATCH_WALL_FACTOR`` in a batch).
        uses: the learner's answers to the exercises this one builds on (``Pack.used_by``, in
            that order): run before ``code`` in the sandbox's runner only, never in the judge. One
            that is missing (None) is the report's cause when the code does not pass without it.
    """
    from tutor.sandbox import ProbeSpec

    if not filename or filename.startswith("<"):
        filename = exercise_filename(exercise)
    timeout = timeout or exercise.timeout
    limits = _limits_for(sandbox, timeout)
    budget = max(0.5, limits.wall_time * _CHECK_SHARE - 0.2)
    limits = limits.with_overrides(wall_time=limits.wall_time * wall_factor)
    payload = build_payload(exercise, code, time_budget=budget, language=language, fallback=fallback,
                            filename=filename, seed=seed)
    result = sandbox.run(code, limits=limits, filename=filename,
                         probe=ProbeSpec(PROBE_MODULE, PROBE_FUNCTION, payload),
                         **({"prelude": exercise.prelude_code} if exercise.prelude_code else {}),
                         **({"uses": used_runs(uses)} if used_runs(uses) else {}))
    return grade(exercise, result, language=language, fallback=fallback, decided=judge_here(exercise, code),
                 uses=uses)


def _seconds(value: Any) -> tuple[float, float] | None:
    """The judge's (used, budget) seconds of one check, if it sent two numbers."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return float(value[0]), float(value[1])
    return None


def grade(exercise: Exercise, result: "RunResult", *, language: str | None = None,
          fallback: str = "en", decided: dict[str, dict[str, Any]] | None = None,
          uses: "Sequence[UsedAnswer]" = ()) -> ExerciseReport:
    """Turn a run's report into typed results (also for a run that never reported). ``decided``:
    the results of the checks judged before the run (``judge_here``); ``uses``: the answers the
    run built on (a missing one, or one that does not run, is the cause to fix first)."""
    specs = {check.id: check for check in exercise.checks}
    report = result.report if isinstance(result.report, dict) else None
    raw_checks: dict[Any, dict[str, Any]] = {c.get("id"): c for c in (report or {}).get("checks", [])
                                              if isinstance(c, dict)}
    for check_id, raw in (decided or {}).items():
        spec_of = specs.get(check_id)
        waiting = [dep for dep in (spec_of.after if spec_of is not None else [])
                   if (raw_checks.get(dep) or (decided or {}).get(dep) or {}).get("status") != "passed"]
        raw_checks[check_id] = dict(raw, status="skipped", message="skipped: needs " + ", ".join(
            f"'{dep}'" for dep in waiting) + " to pass first") if waiting else raw
    checks = []
    for check_id, spec in specs.items():
        description = resolve(spec.description, language, fallback)
        found = raw_checks.get(check_id)
        if found is None:
            why = (result.extra.get("said") or result.message) if result.message else said("check.not_reported")
            message = said("check.not_checked", why=why)
            checks.append(CheckResult(check_id, "error", description, _english(message), kind=spec.kind,
                                      hint=None, said=message))
            continue
        raw = found
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
            said=raw.get("said") if isinstance(raw.get("said"), dict) else None,  # rendered by i18n.shown
            seconds=_seconds(raw.get("seconds")),
            expected_said=raw.get("expected_said") if isinstance(raw.get("expected_said"), dict) else None,
            got_said=raw.get("got_said") if isinstance(raw.get("got_said"), dict) else None,
        ))
    titles = {c.id: c.description for c in checks}
    checks = [c if c.status != "skipped" else _named(c, titles) for c in checks]
    cause_said = _used_does_not_run(result, uses) or _does_not_run(result)
    if cause_said is None and not all(c.passed for c in checks):
        missing = [ident for ident, used in uses if used is None]
        if missing:
            cause_said = said("grade.uses_missing", exercises=", ".join(missing))
    cause = _english(cause_said) if cause_said is not None else None
    if cause is not None:  # nothing the checks said is about the exercise: they only lacked the code
        checks = [c if c.passed or c.kind in PARENT_KINDS and c.status != "skipped"
                  else CheckResult(c.id, "skipped", c.description, NOT_RUN, kind=c.kind, said=NOT_RUN_SAID)
                  for c in checks]
    all_passed = bool(checks) and all(c.passed for c in checks)
    learner_failed = result.error is not None
    passed = all_passed and not learner_failed and report is not None
    summary = cause_said or _summary(checks, result, report)
    return ExerciseReport(exercise=exercise.id, passed=passed, checks=checks, run=result,
                          message=_english(summary),
                          tampered=[str(t) for t in (report or {}).get("tampered", [])], cause=cause,
                          said=summary if isinstance(summary, dict) else None, cause_said=cause_said)


def _english(message: "dict[str, Any] | str") -> str:
    """A said's English (a plain string as it is: a run's message that came without one)."""
    return english(message) if isinstance(message, dict) else message


def _named(check: CheckResult, titles: dict[str, str]) -> CheckResult:
    """A skip reason names the checks it waits for by what they check, not by their ids."""
    def name(match: "re.Match[str]") -> str:
        ident = match.group(1)
        title = (titles.get(ident) or "").strip()
        return f"“{title}”" if title and title != ident else match.group(0)

    check.message = re.sub(r"'([A-Za-z0-9_-]+)'", name, check.message)
    if isinstance(check.said, dict) and isinstance(check.said.get("fields"), dict):  # its fields too
        check.said = {**check.said, "fields": {key: re.sub(r"'([A-Za-z0-9_-]+)'", name, value)
                                               if isinstance(value, str) else value
                                               for key, value in check.said["fields"].items()}}
    return check


#: Errors that mean the learner's file did not run at all, so no check could look at anything.
DOES_NOT_RUN = ("SyntaxError", "IndentationError", "TabError", "ImportError", "ModuleNotFoundError")
NOT_RUN_SAID = said("check.not_run")
NOT_RUN = english(NOT_RUN_SAID)


def _where(error: Any) -> dict[str, Any]:
    """" at line 4" (a said), or nothing when no line of the learner's is involved."""
    return said("grade.at_line", line=error.lineno) if error.lineno else said("grade.nowhere")


def _does_not_run(result: "RunResult") -> dict[str, Any] | None:
    error = result.error
    if error is None:  # (os._exit at import is the sandbox's "No check results: ... (os._exit?)")
        return None
    kind = str(error.type).rsplit(".", 1)[-1]
    if kind == "SystemExit":
        code = error.message if error.message not in ("", "None") else ""
        return said("grade.ended_itself", code=code, where=_where(error))
    if kind == "MemoryError" or result.status == "memory":
        return said("grade.out_of_memory", where=_where(error), message=result.message or kind)
    if kind not in DOES_NOT_RUN:
        return None
    return said("grade.does_not_run", type=error.type, where=_where(error), message=_clip(error.message))


def _used_does_not_run(result: "RunResult", uses: "Sequence[UsedAnswer]") -> dict[str, Any] | None:
    """The error of an answer this one builds on (its own file's frames name it), said as that."""
    error = result.error
    if error is None:
        return None
    for ident, code in uses:
        if code is not None and f'File "{ident}.py"' in (error.traceback or ""):
            return said("grade.used_does_not_run", exercise=ident, type=error.type,
                        where=_where(error), message=_clip(error.message))
    return None


def does_not_run(result: "RunResult") -> str | None:
    """"your code does not run: IndentationError at line 4: ..." when the file could not run, or
    did not run to its end: it ended itself (sys.exit) or ran out of memory at import."""
    cause = _does_not_run(result)
    return english(cause) if cause is not None else None


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _summary(checks: list[CheckResult], result: "RunResult", report: dict[str, Any] | None) -> "dict[str, Any] | str":
    """A said; a run's own message as it came when the run said it without one."""
    total = len(checks)
    if report is None:
        if result.message:
            own: dict[str, Any] | str = result.extra.get("said") or result.message
            return own
        return said("grade.no_results", status=result.status)
    good = sum(c.passed for c in checks)
    noun = said("grade.check" if total == 1 else "grade.checks")
    if result.error is not None:
        return said("grade.raised", type=result.error.type, where=_where(result.error),
                    message=_clip(result.error.message), good=good, total=total, noun=noun)
    if good == total:
        return said("grade.one_passed") if total == 1 else said("grade.all_passed", total=total)
    return said("grade.some_passed", good=good, total=total, noun=noun)


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
    matched, summary = _compare(expect, result)
    return ExampleOutcome(matched=matched, summary=_english(summary), run=result,
                          said=summary if isinstance(summary, dict) else None)


def compare_outcome(expect: Any, result: "RunResult") -> tuple[bool, str]:
    """(matched, one-line summary) for a run against an ``Expect`` (None: must run cleanly)."""
    matched, summary = _compare(expect, result)
    return matched, _english(summary)


def _compare(expect: Any, result: "RunResult") -> "tuple[bool, dict[str, Any] | str]":
    """compare_outcome's verdict with its summary as a said (a plain string: a message that came
    without one)."""
    raises = getattr(expect, "raises", None)
    output = getattr(expect, "output", None)
    error = result.error
    if result.status not in ("ok", "error"):
        if result.message:
            return False, result.extra.get("said") or result.message
        return False, said("example.status", status=result.status)
    if raises is not None:
        if error is None:
            return False, said("example.no_error", type=raises.type)
        got = f"{error.type}: {_clip(error.message)}" if error.message else error.type
        if error.type != raises.type and error.type.rsplit(".", 1)[-1] != raises.type:
            return False, said("example.other_error", type=raises.type, got=got)
        if raises.match:
            try:
                found = safe_regex.search(raises.match, error.message)
            except safe_regex.PatternTimeout as slow:
                return False, str(slow)
            if not found:
                return False, said("example.no_match", type=error.type, pattern=raises.match, got=got)
    elif error is not None:
        return False, said("example.unexpected_error", type=error.type, where=_where(error),
                           message=_clip(error.message))
    if output is not None:
        try:
            found = safe_regex.search(output, result.stdout)
        except safe_regex.PatternTimeout as slow:
            return False, str(slow)
    if output is not None and not found:
        if result.stdout.strip():
            return False, said("example.output_differs", pattern=output, got=_clip(result.stdout.strip(), 80))
        return False, said("example.output_nothing", pattern=output)
    if raises is not None:
        return True, said("example.raised_ok", type=error.type, message=_clip(error.message))
    if output is not None:
        return True, said("example.output_ok")
    return True, said("example.ran_ok")
