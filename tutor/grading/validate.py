"""``validate``'s second half: run what a pack promises and report where a promise breaks.

A loaded pack is structurally sound; this proves it teaches what it claims. Every exercise's
starter must fail at least one check (or it is not an exercise), its reference solution must pass
them all, every example must give its expected outcome, and every predict-quiz's code must run.
Problems are located in the YAML (the check, the starter, the example's code) like the loader's.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator
from xml.etree import ElementTree

from tutor.pack import loader
from tutor.grading.exercise import BATCH_WALL_FACTOR, ExerciseReport, check_exercise, run_example
from tutor.pack.loader import Problem
from tutor.pack.check_models import RECORDS, Check, ExprCheck, ProfileCheck
from tutor.pack.models import QUIZ_TYPES, Example, Exercise, Pack, PredictQuiz
from tutor.pack.spec import format_fields, is_record
from tutor.pack.yaml_source import read_source
from tutor.words.safe_text import neutralize

if TYPE_CHECKING:
    from tutor.sandbox import Sandbox


@dataclass
class StepRun:
    """One thing validate ran: an exercise's starter or solution, an example, a quiz's code."""

    lesson: str
    step: str
    role: str  # "starter", "solution", "example", "predict"
    ok: bool
    summary: str
    seconds: float
    problems: list[Problem] = field(default_factory=list)
    skipped: bool = False
    #: predict quizzes: the answer learners' predictions are compared against (the recorded output)
    answer: str | None = None
    #: solutions: what each measurement check measured (see ``_measured``), for ``--repeat``
    measured: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: solutions: each check's time in the judge against its budget (see ``_budgets``), for ``--repeat``
    budgets: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: solutions: what passes but should worry the author (a tolerance far from the data's scale)
    warnings: list[Problem] = field(default_factory=list)
    #: solutions: the checks (or "the run") that ended `timeout` on the reference solution
    timeouts: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.lesson}/{self.step} {self.role}"

    def to_json(self) -> dict[str, Any]:
        return {"lesson": self.lesson, "step": self.step, "role": self.role, "ok": self.ok,
                "skipped": self.skipped,
                "summary": self.summary, "seconds": round(self.seconds, 3),
                "problems": [p.to_json() for p in self.problems],
                **({"answer": self.answer} if self.answer is not None else {}),
                **({"measured": self.measured} if self.measured else {}),
                **({"budgets": self.budgets} if self.budgets else {}),
                **({"warnings": [w.to_json() for w in self.warnings]} if self.warnings else {}),
                **({"timeouts": self.timeouts} if self.timeouts else {})}


class _Locator:
    """Maps (lesson, step, key path) to file:line:col, re-reading the pack's YAML nodes."""

    def __init__(self, pack_dir: Path):
        self.sources: dict[str, tuple[Any, tuple[Any, ...]]] = {}
        pack_file = loader.pack_file_of(pack_dir)
        try:
            root = read_source(pack_file)
        except Exception:  # noqa: BLE001 - locating is best effort; the pack already loaded
            return
        self.root = root
        for index, entry in enumerate(root.data.get("lessons") or []):
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                self.sources[entry["id"]] = (root, ("lessons", index))
            elif isinstance(entry, str):
                try:
                    source = read_source(pack_file.parent / entry)
                except Exception:  # noqa: BLE001
                    continue
                if isinstance(source.data, dict) and isinstance(source.data.get("id"), str):
                    self.sources[source.data["id"]] = (source, ())
        self.pack_file = pack_file

    def header_problem(self, path: tuple[Any, ...], message: str) -> Problem:
        """A problem at a key of pack.yaml (e.g. ("requires", "torch"))."""
        root = getattr(self, "root", None)
        if root is None:
            return Problem(getattr(self, "pack_file", Path(".")), None, None, message)
        line, col = root.locate(path)
        return Problem(root.path, line, col, message)

    def problem(self, lesson: str, step_index: int, path: tuple[Any, ...], message: str) -> Problem:
        found = self.sources.get(lesson)
        if found is None:
            return Problem(getattr(self, "pack_file", Path(".")), None, None, message)
        source, base = found
        line, col = source.locate(base + ("steps", step_index) + path)
        return Problem(source.path, line, col, message)


def validate_runs(pack: Pack, pack_dir: Path, sandbox: "Sandbox",
                  progress: Callable[[StepRun], None] | None = None) -> list[StepRun]:
    """Run every starter, solution, example and predict-quiz of ``pack``; see the module doc."""
    locator = _Locator(pack_dir)
    runs: list[StepRun] = []
    cuda: list[bool] = []  # asked of the sandbox once, the first time a step needs CUDA

    def record(run: StepRun) -> None:
        runs.append(run)
        if progress is not None:
            progress(run)

    notice = _torch_outside_range(pack, sandbox)
    if notice is not None:
        record(StepRun(pack.id, "requires", "torch", False, notice, 0.0,
                       [locator.header_problem(("requires", "torch"), notice)]))

    for run in _static_runs(pack, locator, sandbox_lookup(sandbox)):
        record(run)

    for lesson in pack.lessons:
        for index, step in enumerate(lesson.steps):
            needs_cuda = pack.requires.cuda or bool(step.requires and step.requires.cuda)
            if needs_cuda and (isinstance(step, (Exercise, Example)) or _runs_code(step)):
                if not cuda:
                    cuda.append(_has_cuda(sandbox))
                if not cuda[0]:
                    record(StepRun(lesson.id, step.id, step.kind, True, "skipped: needs a CUDA device", 0.0,
                                   skipped=True))
                    continue
            if isinstance(step, Exercise):
                uses: list[tuple[str, str | None]] = [(earlier.id, earlier.solution)
                                                      for _lesson, earlier in pack.used_by(step)]
                for run in _exercise_runs(lesson.id, index, step, sandbox, locator, uses):
                    record(run)
            elif isinstance(step, Example) or _runs_code(step):
                record(_example_run(lesson.id, index, step, sandbox, locator))  # type: ignore[arg-type]
    return runs


def _runs_code(step: object) -> bool:
    """A quiz whose type runs code of its own (tutor/pack/quizzes/): validate runs it as an example."""
    quiz = QUIZ_TYPES.get(type(step))
    return quiz is not None and quiz.runs_code


# --------------------------------------------------------------------------- checks read without running

#: Names every check's code may use without the contract declaring them.
_CHECK_NAMES = frozenset({"torch", "nn", "F", "np"})


def _code_of(check: Check) -> list[tuple[tuple[Any, ...], str, str]]:
    """(key path, source, mode) of every piece of Python in a check."""
    found: list[tuple[tuple[Any, ...], str, str]] = []

    def walk(value: Any, path: tuple[Any, ...]) -> None:
        if is_record(type(value)):
            for name in format_fields(type(value)):
                walk(getattr(value, name), path + (name,))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, path + (i,))
        elif isinstance(value, str) and path and path[0] in _PYTHON_FIELDS:
            mode = "exec" if path[-1] in ("setup", "run") or (path[-1] == "call" and len(path) == 1) else "eval"
            found.append((path, value, mode))

    walk(check, ())
    if isinstance(check, ExprCheck):  # `{{ expression }}` in its message is evaluated like the predicate
        texts = check.message.values() if isinstance(check.message, dict) else [check.message]
        for text in texts:
            for expression in re.findall(r"\{\{(.+?)\}\}", text):
                found.append((("message",), expression.strip(), "eval"))
    return found


_PYTHON_FIELDS = frozenset({"setup", "value", "close_to", "shares_storage_with", "independent_of", "run", "module",
                            "call", "fast", "slow", "workload", "predicate", "compare", "shape"})


def _names(source: str, mode: str) -> tuple[set[str], set[str]]:
    """(names read, names bound) by a piece of Python; both empty when it does not parse."""
    try:
        tree = ast.parse(source, mode=mode)
    except SyntaxError:
        return set(), set()
    read: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return read, bound


def contract_problems(exercise: Exercise) -> list[tuple[tuple[Any, ...], str]]:
    """(key path, message) for each name a check's code reads that neither the contract, the
    check (its setup, cases, kind) nor Python and the check namespace provide."""
    declared = {item.name for item in exercise.contract} | _CHECK_NAMES | set(dir(builtins))
    declared |= _names(exercise.prelude_code, "exec")[1]  # the pack's prelude runs before every check
    problems = []
    for number, check in enumerate(exercise.checks):
        pieces = _code_of(check)
        bound = set(check.BINDS) | {key for case in check.cases for key in case}  # the kind's own names
        for _, source, mode in pieces:
            bound |= _names(source, mode)[1]
        reported: set[str] = set()
        for path, source, mode in pieces:
            for name in sorted(_names(source, mode)[0] - bound - declared - reported):
                reported.add(name)
                close = difflib.get_close_matches(name, sorted(declared - _CHECK_NAMES - set(dir(builtins))), 1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                problems.append((("checks", number) + path,
                                 f"exercise {exercise.id!r}: check {check.id!r} uses `{name}`, which the contract "
                                 f"does not declare{hint}: add it to `contract` (optional: true if learners need "
                                 "not define it), or define it in the check's setup or cases"))
    return problems


def _operator_names(check: Check) -> list[tuple[tuple[Any, ...], str]]:
    """(key path, name) of every operator name (not a prefix pattern) a profile check lists."""
    if not isinstance(check, ProfileCheck):
        return []
    found: list[tuple[tuple[Any, ...], str]] = []

    def add(path: tuple[Any, ...], names: list[str] | None) -> None:
        for i, name in enumerate(names or []):
            if not name.endswith("*") and ":" in name:  # a name without ':' is a record_function label
                found.append((path + (i,), name))

    add(("top1_in",), check.top1_in)
    add(("absent",), check.absent)
    add(("only",), check.only)
    if check.top_k is not None:
        add(("top_k", "within"), check.top_k.within)
    if check.share is not None:
        add(("share", "ops"), check.share.ops)
    for number, count in enumerate(check.calls or []):
        add(("calls", number, "ops"), count.ops)
    return found


#: Run in the worker (the parent never imports torch): which of NAMES torch does not know, each
#: with the closest names it does know.
_OPERATOR_PROBE = """
import difflib, json, torch
names = json.loads({names!r})
known = {{n.split(".")[0] for n in torch._C._dispatch_get_all_op_names()}}
known |= {{s.name for s in torch._C._jit_get_all_schemas()}}
unknown = {{}}
for name in names:
    if name not in known:
        unknown[name] = difflib.get_close_matches(name, sorted(known), 3, 0.6)
print(json.dumps(unknown))
"""


#: Asks torch which of NAMES it does not know: name -> close names, or None when it cannot say.
OperatorLookup = Callable[[list[str]], "dict[str, list[str]] | None"]


def _probe_answer(status_ok: bool, stdout: str) -> dict[str, list[str]] | None:
    try:
        unknown = json.loads(stdout.strip().splitlines()[-1]) if status_ok else None
    except (ValueError, IndexError):
        unknown = None
    return unknown if isinstance(unknown, dict) else None


def sandbox_lookup(sandbox: "Sandbox") -> OperatorLookup:
    """Operator names asked of the sandbox's worker (a full `validate`, which has one warm)."""

    def lookup(names: list[str]) -> dict[str, list[str]] | None:
        result = sandbox.run(_OPERATOR_PROBE.format(names=json.dumps(names)), filename="<operator-names>")
        return _probe_answer(result.status == "ok", result.stdout)

    return lookup


_KNOWN_OPERATORS: dict[tuple[str, tuple[str, ...]], dict[str, list[str]] | None] = {}


def interpreter_lookup(python: str) -> OperatorLookup:
    """Operator names asked of ``python``'s torch in a plain child process: `validate --no-run`
    runs none of the pack's code and starts no sandbox, but still knows torch's operators. The
    probe is ours (it only lists names); answers are kept for the process (`--watch`)."""
    import subprocess

    def lookup(names: list[str]) -> dict[str, list[str]] | None:
        key = (python, tuple(names))
        if key not in _KNOWN_OPERATORS:
            try:
                done = subprocess.run([python, "-c", _OPERATOR_PROBE.format(names=json.dumps(names))],
                                      capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
                _KNOWN_OPERATORS[key] = _probe_answer(done.returncode == 0, done.stdout)
            except (OSError, subprocess.SubprocessError):
                _KNOWN_OPERATORS[key] = None
        return _KNOWN_OPERATORS[key]

    return lookup


def operator_problems(pack: Pack, lookup: OperatorLookup) -> list[tuple[str, int, tuple[Any, ...], str]]:
    """(lesson, step index, key path, message) for operator names torch does not know."""
    places = []
    for lesson in pack.lessons:
        for index, step in enumerate(lesson.steps):
            if isinstance(step, Exercise):
                for number, check in enumerate(step.checks):
                    for path, name in _operator_names(check):
                        places.append((lesson.id, index, step.id, check.id, ("checks", number) + path, name))
    if not places:
        return []
    names = sorted({place[-1] for place in places})
    unknown = lookup(names)
    if unknown is None:
        return []  # torch could not say: nothing is claimed either way
    problems = []
    for lesson_id, index, step_id, check_id, path, name in places:
        if name in unknown:
            close = unknown[name] or []
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            problems.append((lesson_id, index, path,
                             f"exercise {step_id!r}: check {check_id!r} names operator {name!r}, which this torch "
                             f"does not have{hint} (names look like aten::mm; see torch.profiler's "
                             "key_averages() for the ones a workload runs; a prefix ending in * is not checked)"))
    return problems


def static_runs(pack: Pack, pack_dir: Path, lookup: OperatorLookup) -> list[StepRun]:
    """What `validate --no-run` reports besides the schema: the same reading of the checks a full
    run starts with, none of the pack's code run."""
    return _static_runs(pack, _Locator(pack_dir), lookup)


def _static_runs(pack: Pack, locator: _Locator, lookup: OperatorLookup) -> list[StepRun]:
    """Mistakes in checks found by reading them (and asking torch for operator names)."""
    runs = []
    for lesson in pack.lessons:
        for index, step in enumerate(lesson.steps):
            if isinstance(step, Exercise):
                found = contract_problems(step)
                if found:
                    problems = [locator.problem(lesson.id, index, path, message) for path, message in found]
                    runs.append(StepRun(lesson.id, step.id, "checks", False,
                                        f"{len(problems)} name(s) not in the contract", 0.0, problems))
    by_step: dict[tuple[str, int], list[Problem]] = {}
    for lesson_id, index, path, message in operator_problems(pack, lookup):
        by_step.setdefault((lesson_id, index), []).append(locator.problem(lesson_id, index, path, message))
    for (lesson_id, index), problems in by_step.items():
        step_id = next(lesson for lesson in pack.lessons if lesson.id == lesson_id).steps[index].id
        runs.append(StepRun(lesson_id, step_id, "operators", False, f"{len(problems)} unknown operator name(s)",
                            0.0, problems))
    return runs


def _torch_outside_range(pack: Pack, sandbox: "Sandbox") -> str | None:
    """The sentence to show when the sandbox's torch is outside ``requires.torch`` (else None)."""
    from tutor.pack.versions import floor_notice

    if not pack.requires.torch:
        return None
    try:
        sandbox.wait_ready()
    except Exception:  # noqa: BLE001 - a sandbox that cannot start fails every run, each with its reason
        return None
    return floor_notice((getattr(sandbox, "worker_info", None) or {}).get("torch"), pack.requires.torch)


def _has_cuda(sandbox: "Sandbox") -> bool:
    result = sandbox.run("import torch\nprint(torch.cuda.is_available())\n", filename="<cuda-probe>")
    available: bool = result.status == "ok" and result.stdout.strip() == "True"
    return available


def _exercise_runs(lesson: str, index: int, exercise: Exercise, sandbox: "Sandbox", locator: _Locator,
                   uses: list[tuple[str, str | None]]) -> Iterator[Any]:
    """The starter, the solution and every other solution of ``exercise``, each built on the
    reference solutions of the exercises it ``uses``."""
    check_index = {check.id: i for i, check in enumerate(exercise.checks)}
    started = time.perf_counter()
    starter = check_exercise(sandbox, exercise, exercise.starter, uses=uses, wall_factor=BATCH_WALL_FACTOR)
    starter_seconds = time.perf_counter() - started
    started = time.perf_counter()
    report = check_exercise(sandbox, exercise, exercise.solution, uses=uses, wall_factor=BATCH_WALL_FACTOR)
    solution_seconds = time.perf_counter() - started
    # a check whose own code fails on the reference solution is the pack's bug: reported as the
    # check's, at its place in the YAML, and never counted as the solution's or the starter's failure
    broken = _broken_checks(report)

    problems = []
    internal = [c for c in starter.checks if c.status == "error" and c.message.startswith("the checker itself")]
    for check in internal:
        problems.append(locator.problem(lesson, index, ("checks", check_index[check.id]),
                                        f"exercise {exercise.id!r}, check {check.id!r}: {check.message}"))
    working = [c for c in starter.checks if c.id not in broken]
    if working and all(c.passed for c in working) and starter.run.error is None:
        problems.append(locator.problem(lesson, index, ("starter",),
                                        f"exercise {exercise.id!r}: the starter passes every check"
                                        + (" that works" if broken else "") + "; it must fail at least one"))
    failing = [c.id for c in working if not c.passed and c.status != "skipped"]
    skipped = [c.id for c in working if c.status == "skipped"]
    summary = f"fails {', '.join(failing)}" if failing else starter.message
    if failing and skipped:  # a skipped check was not judged: never listed among the failed
        summary += f"; skipped {', '.join(skipped)} (a check it runs after did not pass)"
    yield StepRun(lesson, exercise.id, "starter", not problems, summary, starter_seconds, problems,
                  measured=_measured(starter, exercise))

    problems = []
    timeouts = [c.id for c in report.checks if c.status == "timeout" and c.id not in broken]
    if report.run.status == "timeout":
        timeouts.insert(0, "the run")
        problems.append(locator.problem(lesson, index, ("solution",),
                                        f"exercise {exercise.id!r}: TIMEOUT: the reference solution's run ran out of "
                                        f"time ({report.run.message or 'timeout'}): not a wrong answer, a budget too "
                                        "small for this machine: raise the exercise's `timeout`, or make the "
                                        "solution or the checks' inputs smaller"))
    if report.run.error is not None:
        where = f" (line {report.run.error.lineno} of the solution)" if report.run.error.lineno else ""
        problems.append(locator.problem(lesson, index, ("solution",),
                                        f"exercise {exercise.id!r}: the solution raised {report.run.error.type}"
                                        f"{where}: {report.run.error.message}"))
    for check in report.checks:
        if check.id in broken:
            field_name, line = broken[check.id]
            part = f"its {field_name}" if field_name else "its own code"
            at_line = f" (line {line} of its {field_name})" if line and field_name == "setup" else ""
            path: tuple[Any, ...] = ("checks", check_index[check.id]) + ((field_name,) if field_name else ())
            problems.append(locator.problem(lesson, index, path,
                                            f"exercise {exercise.id!r}: check {check.id!r} is broken: {part} "
                                            f"fails on the reference solution{at_line}: "
                                            f"{check.message.split(' (while evaluating')[0]}"))
        elif check.status == "timeout":  # flagged apart: the budget, not the solution, is what is wrong
            problems.append(locator.problem(lesson, index, ("checks", check_index[check.id]),
                                            f"exercise {exercise.id!r}: TIMEOUT: check {check.id!r} ran out of time on "
                                            f"the reference solution ({check.message}): not a wrong answer, a budget "
                                            "too small for this machine: give the check a `time_limit`, raise the "
                                            "exercise's `timeout`, or make its inputs smaller (`validate --repeat` "
                                            "shows each check's margin to its budget)"))
        elif not check.passed:
            problems.append(locator.problem(lesson, index, ("checks", check_index[check.id]),
                                            f"exercise {exercise.id!r}: the solution fails check {check.id!r}: "
                                            f"{check.message}{_replay(check.seed)}"))
    if not report.checks or (report.run.report is None and not problems):
        problems.append(locator.problem(lesson, index, ("solution",),
                                        f"exercise {exercise.id!r}: the solution gave no check results: {report.message}"))
    summary = report.message
    if timeouts:
        summary = f"timeout ({', '.join(timeouts)}) on the reference solution; {summary}"
    yield StepRun(lesson, exercise.id, "solution", not problems, summary, solution_seconds, problems,
                  measured=_measured(report, exercise), budgets=_budgets(report), timeouts=timeouts,
                  warnings=tolerance_warnings(lesson, index, exercise, report, locator))
    for number, code in enumerate(exercise.solutions):
        yield _other_solution(lesson, index, exercise, number, code, sandbox, locator, uses)


def _other_solution(lesson: str, index: int, exercise: Exercise, number: int, code: str, sandbox: "Sandbox",
                    locator: _Locator, uses: list[tuple[str, str | None]]) -> StepRun:
    """One more reference solution (``solutions[number]``): it too must pass every check."""
    check_index = {check.id: i for i, check in enumerate(exercise.checks)}
    started = time.perf_counter()
    report = check_exercise(sandbox, exercise, code, uses=uses, wall_factor=BATCH_WALL_FACTOR)
    seconds = time.perf_counter() - started
    name = f"solutions[{number}]"
    problems = []
    if report.run.error is not None:
        where = f" (line {report.run.error.lineno})" if report.run.error.lineno else ""
        problems.append(locator.problem(lesson, index, ("solutions", number),
                                        f"exercise {exercise.id!r}: {name} raised {report.run.error.type}{where}: "
                                        f"{report.run.error.message}"))
    for check in report.checks:
        if not check.passed:
            problems.append(locator.problem(lesson, index, ("checks", check_index[check.id]),
                                            f"exercise {exercise.id!r}: {name} fails check {check.id!r}: "
                                            f"{check.message}{_replay(check.seed)}"))
    return StepRun(lesson, exercise.id, f"solution {number + 2}", not problems, report.message, seconds, problems,
                   measured=_measured(report, exercise))


#: A tensor check whose reference values all lie within this many `atol` of zero, on every case,
#: compares at the scale of its tolerance rather than of its data: wrong values near zero pass.
NEAR_ZERO_ATOLS = 10.0


def tolerance_warnings(lesson: str, index: int, exercise: Exercise, report: ExerciseReport,
                       locator: "_Locator") -> list[Problem]:
    """A warning for each `close_to` check of ``exercise`` whose reference values, on every case
    the reference solution's run drew, are within NEAR_ZERO_ATOLS x `atol` of zero (the judge
    reports each check's largest reference magnitude), saying which `atol` to set."""
    specs = {check.id: (position, check) for position, check in enumerate(exercise.checks)}
    out: list[Problem] = []
    for check in report.checks:
        scale = (check.data or {}).get("reference_scale") if check.status == "passed" else None
        found = specs.get(check.id)
        if not isinstance(scale, (int, float)) or found is None:
            continue
        position, spec = found
        atol = float(getattr(spec, "atol", 0.0) or 0.0)
        if atol <= 0 or scale == 0 or scale >= NEAR_ZERO_ATOLS * atol:
            continue  # (a reference that is exactly zero everywhere is a check that something vanishes)
        advice = f"set the check's `atol` to about {float(f'{scale / 1000:.0e}'):g} (a thousandth of the largest value)"
        out.append(Problem(*_where(locator, lesson, index, ("checks", position, "atol") if "atol" in
                                   _written(locator, lesson, index, position) else ("checks", position)),
                           f"exercise {exercise.id!r}: check {check.id!r}: every reference value is within "
                           f"{scale / atol:.2g} atol of zero (the largest is {scale:.3g}, atol {atol:g}), so an "
                           f"answer near zero passes as well as the right one: {advice}, or scale the "
                           "inputs up", severity="warning"))
    return out


def _where(locator: "_Locator", lesson: str, index: int, path: tuple[Any, ...]) -> tuple[Path, int | None, int | None]:
    problem = locator.problem(lesson, index, path, "")
    return problem.file, problem.line, problem.col


def _written(locator: "_Locator", lesson: str, index: int, position: int) -> dict[str, Any]:
    """The check's own keys as the YAML holds them (to point at its `atol` where it wrote one)."""
    found = locator.sources.get(lesson)
    if found is None:
        return {}
    source, base = found
    place = source.walk(base + ("steps", index, "checks", position))
    return place.value if not place.missed and isinstance(place.value, dict) else {}


def _replay(seed: int | None) -> str:
    """An author's way back to a failing case whose inputs were drawn at random."""
    if seed is None:
        return ""
    return f" (inputs drawn with seed {seed}: give this check `seed: {seed}` to replay them)"


def _broken_checks(report: ExerciseReport) -> dict[str, tuple[str | None, int | None]]:
    """check id -> (field, line) for each check whose own code raised on this run (the probe
    marks an exception raised with no line of the learner's code running as ``own_code``)."""
    raw = report.run.report if isinstance(report.run.report, dict) else {}
    broken: dict[str, tuple[str | None, int | None]] = {}
    for item in raw.get("checks") or []:
        own = item.get("own_code") if isinstance(item, dict) else None
        if isinstance(own, dict) and item.get("status") == "error":
            field_name = own.get("field") if isinstance(own.get("field"), str) else None
            line = own.get("line") if isinstance(own.get("line"), int) else None
            broken[str(item.get("id"))] = (field_name, line)
    return broken


def _measured(report: ExerciseReport, exercise: Exercise | None = None) -> dict[str, dict[str, Any]]:
    """What each measurement check measured on this run: check id -> {status, measured, needs,
    margin} (margin: measured/threshold, >= 1 passes; None where the kind has no threshold). A
    profile check's `calls` bounds have entries of their own, "<check id> calls <ops>"."""
    out: dict[str, dict[str, Any]] = {}
    specs = {check.id: check for check in exercise.checks} if exercise is not None else {}
    for check in report.checks:
        record_class = RECORDS.get(check.kind)
        if record_class is None or not record_class.MEASURES:
            continue
        data = check.data or {}
        value = data.get("margin")
        out[check.id] = {"status": check.status, "measured": data.get("measured"), "needs": data.get("needs"),
                         "margin": float(value) if isinstance(value, (int, float)) else None}
        spec = specs.get(check.id)
        if isinstance(spec, ProfileCheck) and spec.calls:
            out.update(_call_margins(check, spec))
    return out


def _call_margins(check: Any, spec: ProfileCheck) -> dict[str, dict[str, Any]]:
    """Each `calls` bound of a profile check as a margin: at_most / calls, calls / at_least (>= 1
    passes). A passing check reports every count; a failing one the count it failed on."""
    import re

    counts = {tuple(item.get("ops") or ()): item.get("calls") for item in (check.data or {}).get("counts") or []
              if isinstance(item, dict)}
    if not counts and check.status == "failed" and check.got and check.expected:
        got = re.fullmatch(r"(\d+) calls", check.got.strip())
        bound = re.fullmatch(r"([<>]=) (\d+) calls", check.expected.strip())
        if got and bound:
            key = "at_most" if bound.group(1) == "<=" else "at_least"
            for item in spec.calls or ():
                if getattr(item, key) == int(bound.group(2)):
                    counts[tuple(item.ops)] = int(got.group(1))
                    break
    out: dict[str, dict[str, Any]] = {}
    for item in spec.calls or ():
        calls = counts.get(tuple(item.ops))
        if not isinstance(calls, int):
            continue
        margins, needs = [], []
        if item.at_most is not None:
            margins.append(item.at_most / calls if calls else float("inf"))
            needs.append(f"at most {item.at_most} calls")
        if item.at_least is not None:
            margins.append(calls / item.at_least if item.at_least else float("inf"))
            needs.append(f"at least {item.at_least} calls")
        margin = min(margins) if margins else None
        passed = margin is not None and margin >= 1
        out[f"{check.id} calls {' + '.join(item.ops)}"] = {
            "status": "passed" if passed else "failed", "measured": f"{calls} calls", "needs": " and ".join(needs),
            "margin": margin if margin is None or margin != float("inf") else None}
    return out


def _budgets(report: ExerciseReport) -> dict[str, dict[str, Any]]:
    """Each check's time in the judge against the time it had: check id -> {status, used, budget,
    margin} (margin: budget/used; under 1 the check ended `timeout`)."""
    out: dict[str, dict[str, Any]] = {}
    for check in report.checks:
        if check.seconds is None:
            continue
        used, budget = check.seconds
        out[check.id] = {"status": check.status, "used": round(used, 3), "budget": round(budget, 3),
                         "margin": round(budget / used, 2) if used > 0 else None}
    return out


def _margin_text(value: float) -> str:
    """A margin to two places, rounded down: never more than it is, so that a margin shown as
    1.50 is never one under the safety factor 1.5 (1.496 printed as 1.50 beside the warning).
    A starter that measured nothing has an unbounded margin: "inf"."""
    if not math.isfinite(value):
        return f"{value:.2f}"
    return f"{math.floor(value * 100 + 1e-9) / 100:.2f}"


def repeat_summary(rounds: list[list[StepRun]], safety: float) -> tuple[list[str], bool]:
    """Lines that compare ``validate --repeat`` rounds, and whether any verdict changed.

    A verdict that changed between rounds is a problem (exit 1). For each measurement check, the
    smallest margin over the rounds is shown: the solution's measured/threshold, the starter's
    threshold/measured (it must fail by a margin too); under ``safety`` it is a warning."""
    lines: list[str] = []
    changed = False
    keyed: dict[str, list[StepRun]] = {}
    for runs in rounds:
        for run in runs:
            keyed.setdefault(run.name, []).append(run)
    total = len(rounds)
    for name, runs in keyed.items():
        good = sum(run.ok for run in runs)
        if 0 < good < len(runs):
            changed = True
            bad = next(run for run in runs if not run.ok)
            lines.append(f"verdict changed: {name} was as expected in {good} of {total} runs; "
                         f"otherwise: {bad.summary}")
        budgets: dict[str, list[dict[str, Any]]] = {}
        for run in runs:
            for check_id, spent in run.budgets.items():
                budgets.setdefault(check_id, []).append(spent)
        for check_id, seen in budgets.items():  # the reference solution's time against each check's budget
            timed_out = sum(b["status"] == "timeout" for b in seen)
            margins = [b for b in seen if b["margin"] is not None]
            if not margins and not timed_out:
                continue
            worst = min(margins, key=lambda b: b["margin"]) if margins else seen[0]
            value = worst["margin"] if worst["margin"] is not None else 0.0
            if value >= safety and not timed_out:
                continue  # comfortably inside its budget: nothing to say
            lowest = f" (lowest of {total} runs)" if total > 1 else ""
            text = (f"time budget: {name}, check {check_id!r}: {worst['used']:.2f} s of its {worst['budget']:.2f} s: "
                    f"margin {_margin_text(value)}{lowest}")
            if timed_out:
                text += f"; TIMEOUT in {timed_out} of {total} runs"
            text += ("; warning: under the safety factor "
                     f"{safety:g}: on a busier machine it may end `timeout`: give the check a `time_limit` or the "
                     "exercise a longer `timeout`")
            lines.append(text)
        checks: dict[str, list[dict[str, Any]]] = {}
        for run in runs:
            for check_id, measured in run.measured.items():
                checks.setdefault(check_id, []).append(measured)
        for check_id, seen in checks.items():
            statuses = {m["status"] for m in seen}
            if len(statuses) > 1:
                changed = True
                counts = ", ".join(f"{status} {sum(m['status'] == status for m in seen)}x"
                                   for status in sorted(statuses))
                lines.append(f"verdict changed: {name}, check {check_id!r}: {counts} in {total} runs")
            margins = [m for m in seen if m["margin"] is not None
                       and (runs[0].role.startswith("solution") or m["status"] == "failed")]
            if not margins:
                continue
            role = runs[0].role
            # the solution must clear the bound; the starter must miss it, by a factor too
            factor: Callable[[dict[str, Any]], float] = (
                (lambda m: m["margin"]) if role.startswith("solution")
                else (lambda m: 1 / m["margin"] if m["margin"] else float("inf")))
            worst = min(margins, key=factor)
            value = factor(worst)
            lowest = f" (lowest of {total} runs)" if total > 1 else ""
            text = (f"margin: {name}, check {check_id!r}: {worst['measured']}, needs {worst['needs']}"
                    f"{' (must fail it)' if not role.startswith('solution') else ''}: margin {_margin_text(value)}{lowest}")
            if value < safety:
                text += (f"; warning: under the safety factor {safety:g}, so a busier or faster machine may "
                         "change the verdict: widen the gap between starter and solution, or move the bound")
            lines.append(text)
    return lines, changed


def _example_run(lesson: str, index: int, step: Example | PredictQuiz, sandbox: "Sandbox",
                 locator: _Locator) -> StepRun:
    started = time.perf_counter()
    outcome = run_example(sandbox, step)
    role = "example" if isinstance(step, Example) else "predict"
    problems = []
    if not outcome.matched:
        where = ("expect",) if isinstance(step, Example) and (step.expect.raises or step.expect.output) else ("code",)
        problems.append(locator.problem(lesson, index, where, f"{role} {step.id!r}: {outcome.summary}"))
    answer = None
    if isinstance(step, PredictQuiz) and outcome.run.status in ("ok", "error"):
        from tutor.pack.predict_compare import expected_answer

        error = outcome.run.error
        raised = error.type.rsplit(".", 1)[-1] if error is not None else None
        answer = expected_answer(outcome.run.stdout, raised, step.raises)
    return StepRun(lesson, step.id, role, outcome.matched, outcome.summary, time.perf_counter() - started, problems,
                   answer=answer)


def junit_xml(results: list[tuple[str, list[StepRun]]]) -> str:
    """JUnit XML (one testsuite per pack, one testcase per run) for instructors' CI."""
    suites = ElementTree.Element("testsuites")
    for pack_name, runs in results:
        failures = sum(not r.ok for r in runs)
        suite = ElementTree.SubElement(suites, "testsuite", name=pack_name, tests=str(len(runs)),
                                       failures=str(failures), errors="0",
                                       skipped=str(sum(r.skipped for r in runs)),
                                       time=f"{sum(r.seconds for r in runs):.3f}")
        for run in runs:
            case = ElementTree.SubElement(suite, "testcase", classname=f"{pack_name}.{run.lesson}",
                                          name=f"{run.step} {run.role}", time=f"{run.seconds:.3f}")
            if run.skipped:
                ElementTree.SubElement(case, "skipped", message=run.summary)
            elif not run.ok:
                failure = ElementTree.SubElement(case, "failure", message=run.summary[:500])
                failure.text = "\n".join(str(p) for p in run.problems) or run.summary
    ElementTree.indent(suites)
    # what the pack's code printed is in summaries and problems: no control character reaches CI's
    # XML parser (XML 1.0 forbids most of them) or a terminal that shows the file
    return neutralize(ElementTree.tostring(suites, encoding="unicode", xml_declaration=True)) + "\n"
