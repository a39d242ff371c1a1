"""``validate``'s second half: run what a pack promises and report where a promise breaks.

A loaded pack is structurally sound; this proves it teaches what it claims. Every exercise's
starter must fail at least one check (or it is not an exercise), its reference solution must pass
them all, every example must give its expected outcome, and every predict-quiz's code must run.
Problems are located in the YAML (the check, the starter, the example's code) like the loader's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable
from xml.etree import ElementTree

from tutor.core import loader
from tutor.grading.exercise import check_exercise, run_example
from tutor.core.loader import Problem
from tutor.core.models import Example, Exercise, Pack, PredictQuiz
from tutor.core.yaml_source import read_source

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

    @property
    def name(self) -> str:
        return f"{self.lesson}/{self.step} {self.role}"

    def to_json(self) -> dict[str, Any]:
        return {"lesson": self.lesson, "step": self.step, "role": self.role, "ok": self.ok,
                "skipped": self.skipped,
                "summary": self.summary, "seconds": round(self.seconds, 3),
                "problems": [p.to_json() for p in self.problems],
                **({"answer": self.answer} if self.answer is not None else {})}


class _Locator:
    """Maps (lesson, step, key path) to file:line:col, re-reading the pack's YAML nodes."""

    def __init__(self, pack_dir: Path):
        self.sources: dict[str, tuple[Any, tuple]] = {}
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

    def header_problem(self, path: tuple, message: str) -> Problem:
        """A problem at a key of pack.yaml (e.g. ("requires", "torch"))."""
        root = getattr(self, "root", None)
        if root is None:
            return Problem(getattr(self, "pack_file", Path(".")), None, None, message)
        line, col = root.locate(path)
        return Problem(root.path, line, col, message)

    def problem(self, lesson: str, step_index: int, path: tuple, message: str) -> Problem:
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

    for lesson in pack.lessons:
        for index, step in enumerate(lesson.steps):
            needs_cuda = pack.requires.cuda or bool(step.requires and step.requires.cuda)
            if needs_cuda and isinstance(step, (Exercise, Example, PredictQuiz)):
                if not cuda:
                    cuda.append(_has_cuda(sandbox))
                if not cuda[0]:
                    record(StepRun(lesson.id, step.id, step.kind, True, "skipped: needs a CUDA device", 0.0,
                                   skipped=True))
                    continue
            if isinstance(step, Exercise):
                for run in _exercise_runs(lesson.id, index, step, sandbox, locator):
                    record(run)
            elif isinstance(step, (Example, PredictQuiz)):
                record(_example_run(lesson.id, index, step, sandbox, locator))
    return runs


def _torch_outside_range(pack: Pack, sandbox: "Sandbox") -> str | None:
    """The sentence to show when the sandbox's torch is outside ``requires.torch`` (else None)."""
    from tutor.core.versions import floor_notice

    if not pack.requires.torch:
        return None
    try:
        sandbox.wait_ready()
    except Exception:  # noqa: BLE001 - a sandbox that cannot start fails every run, each with its reason
        return None
    return floor_notice((getattr(sandbox, "worker_info", None) or {}).get("torch"), pack.requires.torch)


def _has_cuda(sandbox: "Sandbox") -> bool:
    result = sandbox.run("import torch\nprint(torch.cuda.is_available())\n", filename="<cuda-probe>")
    return result.status == "ok" and result.stdout.strip() == "True"


def _exercise_runs(lesson: str, index: int, exercise: Exercise, sandbox: "Sandbox", locator: _Locator):
    check_index = {check.id: i for i, check in enumerate(exercise.checks)}
    started = time.perf_counter()
    report = check_exercise(sandbox, exercise, exercise.starter)
    problems = []
    internal = [c for c in report.checks if c.status == "error" and c.message.startswith("the checker itself")]
    for check in internal:
        problems.append(locator.problem(lesson, index, ("checks", check_index[check.id]),
                                        f"exercise {exercise.id!r}, check {check.id!r}: {check.message}"))
    if report.passed:
        problems.append(locator.problem(lesson, index, ("starter",),
                                        f"exercise {exercise.id!r}: the starter passes every check; "
                                        "it must fail at least one"))
    failing = [c.id for c in report.checks if not c.passed]
    summary = f"fails {', '.join(failing)}" if failing else report.message
    yield StepRun(lesson, exercise.id, "starter", not problems, summary, time.perf_counter() - started, problems)

    started = time.perf_counter()
    report = check_exercise(sandbox, exercise, exercise.solution)
    problems = []
    if report.run.error is not None:
        where = f" (line {report.run.error.lineno} of the solution)" if report.run.error.lineno else ""
        problems.append(locator.problem(lesson, index, ("solution",),
                                        f"exercise {exercise.id!r}: the solution raised {report.run.error.type}"
                                        f"{where}: {report.run.error.message}"))
    for check in report.checks:
        if not check.passed:
            problems.append(locator.problem(lesson, index, ("checks", check_index[check.id]),
                                            f"exercise {exercise.id!r}: the solution fails check {check.id!r}: "
                                            f"{check.message}"))
    if not report.checks or (report.run.report is None and not problems):
        problems.append(locator.problem(lesson, index, ("solution",),
                                        f"exercise {exercise.id!r}: the solution gave no check results: {report.message}"))
    yield StepRun(lesson, exercise.id, "solution", not problems, report.message, time.perf_counter() - started,
                  problems)


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
        from tutor.core.predict import expected_answer

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
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
