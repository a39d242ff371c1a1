"""An exercise step: the task and contract, the editor, Run/Check/Hint/Reset/Solution, the report."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static
from textual.widget import AwaitMount

from tutor.app.widgets.keybutton import KeyButton, key_label, with_key
from tutor.app.widgets.markdown import Markdown
from tutor.app.markdown_render import inline
from tutor.app.widgets.editor import CodeEditor
from tutor.app.widgets.output import Hanging, OutputBox, render_run
from tutor.app.widgets.running import RunningIndicator
from tutor.app.widgets.steps.base import StepView, reveal
from tutor.pack.comments import same_code
from tutor.words.i18n import t
from tutor.pack.models import Exercise
from tutor.words.safe_text import neutralize

if TYPE_CHECKING:  # the sandbox and grading load with the first run, after start-up
    from tutor.grading.exercise import ExerciseReport
    from tutor.sandbox.result import RunResult

#: Failed checks after which the solution may be seen (with a confirmation) before solving.
SOLUTION_AFTER_FAILED = 3


def only_defines(code: str) -> list[str]:
    """The functions ``code`` defines when that is all it does (besides imports, assignments
    and classes): nothing in it calls them, so a Run prints nothing. [] when it does more, or
    does not parse (the run says why)."""
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(node.name)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        elif not isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.Assign, ast.AnnAssign, ast.Pass)):
            return []
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(inner, ast.Call) for inner in ast.walk(node)):
            return []  # x = f(...): something is called
    return names


class ExerciseStep(StepView):
    @property
    def step(self) -> Exercise:
        return self.step_as(Exercise)

    #: The code a Check was started with: kept with the result if it passes.
    _checked_code: str | None = None
    ACTIONS = frozenset({"run", "check", "hint", "solution", "reset"})
    #: Checks and runs in this visit: numbered, so a result with the same text still visibly changes.
    _checks = 0
    _runs = 0

    def compose(self) -> ComposeResult:
        step = self.step
        progress = self.store.steps.get(*self.key)
        # Checks go on being numbered from those recorded (a restart began again at 1 while the
        # solution's gate went on counting).
        self._checks = progress.checks
        yield Static(Text("✓ " + t("exercise.solved"), style="bold green"), id="solved-badge",
                     classes="-shown" if progress.solved else "")
        yield Markdown(self.text(step.body), id="task")
        from rich.console import Group
        from rich.padding import Padding
        from rich.table import Table

        # a grid, so that a long description wraps under its own start, never at column 0
        items = Table.grid(padding=(0, 2))
        items.add_column(no_wrap=False, max_width=36, overflow="fold")
        items.add_column(ratio=1, overflow="fold")
        for item in step.contract:
            signature = Text(neutralize(item.signature), style="bold cyan")
            if item.optional:
                signature.append(f" ({t('exercise.optional')})", style="dim")
            items.add_row(signature, inline(self.text(item.description)))
        yield Static(Group(Text(t("exercise.contract"), style="bold"), Padding(items, (0, 0, 0, 2))),
                     id="contract")
        # The id is what `torch-tutor check` takes: shown where a learner working in their own
        # editor needs it.
        yield Static(Text(t("exercise.id", id=step.id), style="dim"), id="exercise-id")
        if step.all_or_nothing:  # how the exercise is graded: no share of its points for some checks
            yield Static(Text(t("exercise.all_or_nothing"), style="italic"), id="all-or-nothing")
        draft, starter = self.store.drafts.get(*self.key), self.text.code(step.starter)
        yield CodeEditor(draft if draft is not None else starter, original=starter, key=self.key,
                         id="editor", dark=self.app.current_theme.dark)
        with Horizontal(classes="buttons"):
            yield KeyButton(with_key(t("step.run"), self, "step('run')"), id="run")
            yield KeyButton(with_key(t("step.check"), self, "step('check')"), id="check", variant="primary")
            yield KeyButton(with_key(t("step.hint"), self, "step('hint')"), id="hint")
            yield KeyButton(with_key(t("step.solution"), self, "step('solution')"), id="solution")
            yield KeyButton(with_key(t("step.reset"), self, "step('reset')"), id="reset")
        yield RunningIndicator()
        with Vertical(id="hints"):
            for index in range(min(progress.hints_used, len(step.hints))):
                yield self._hint_widget(index)
        yield Vertical(id="result")

    def _hint_widget(self, index: int) -> Markdown:
        hints = self.step.hints
        return Markdown(t("exercise.hint", n=index + 1, total=len(hints), text=self.text(hints[index])),
                        classes="hint")

    @property
    def editor(self) -> CodeEditor:
        return self.query_one(CodeEditor)

    # ------------------------------------------------------------------ actions

    def used_answers(self) -> list[tuple[str, str | None]]:
        """The learner's answers to the exercises this one builds on (``uses``), in the order they
        run: what their editor holds for each (a draft), else the code that solved it, else None."""
        pack_id = self.key[0]
        answers: list[tuple[str, str | None]] = []
        for lesson, exercise in self.place.pack.used_by(self.step):
            code = self.store.drafts.get(pack_id, lesson.id, exercise.id)
            if code is None:
                code = self.store.answers.solved_code(pack_id, lesson.id, exercise.id)
            answers.append((exercise.id, code))
        return answers

    #: The code of the last Run started.
    _ran_code = ""

    @on(KeyButton.Pressed, "#run")
    def do_run(self) -> None:
        code, step = self.editor.text, self.step
        self._ran_code = code
        uses = [(f"{ident}.py", used) for ident, used in self.used_answers() if used is not None]
        self.start_run(lambda: self.engine.run(code, timeout=step.timeout,
                                               filename=self.engine.exercise_filename(step),
                                               prelude=step.prelude_code, uses=uses))

    @on(KeyButton.Pressed, "#check")
    def do_check(self) -> None:
        code = self.editor.text
        self._checked_code = code
        self.editor.flush()
        step, texts, uses = self.step, self.text, self.used_answers()
        self.start_check(lambda: self.engine.check(step, code, language=texts.language,
                                                   fallback=texts.fallback, uses=uses))

    @on(KeyButton.Pressed, "#hint")
    def do_hint(self) -> None:
        shown = len(self.query(".hint"))
        if shown >= len(self.step.hints):
            self.toast(t("exercise.nomorehints"))
            return
        self.store.steps.use_hint(*self.key)
        widget = self._hint_widget(shown)
        self.query_one("#hints").mount(widget)
        reveal(widget)

    @on(KeyButton.Pressed, "#reset")
    def do_reset(self) -> None:
        from tutor.app.modals.confirm import ConfirmScreen

        def done(yes: bool | None) -> None:
            if yes:
                self.editor.replace_all(self.text.code(self.step.starter))
                self.app.notify(t("exercise.reset.done"))

        self.app.push_screen(ConfirmScreen(t("exercise.reset.confirm")), done)

    @on(KeyButton.Pressed, "#solution")
    def do_solution(self) -> None:
        from tutor.app.modals.confirm import ConfirmScreen

        progress = self.store.steps.get(*self.key)
        if progress.solved or progress.solution_seen:
            self._show_solution()
        elif progress.failed_checks >= SOLUTION_AFTER_FAILED:
            self.app.push_screen(ConfirmScreen(t("exercise.solution.confirm")),
                                 lambda yes: self._show_solution() if yes else None)
        else:
            self.toast(t("exercise.solution.locked", n=SOLUTION_AFTER_FAILED, failed=progress.failed_checks),
                       severity="warning")

    def _show_solution(self) -> None:
        from tutor.app.modals.solution import SolutionScreen

        self.store.steps.mark_solution_seen(*self.key)

        def done(use: bool | None) -> None:
            if use:
                self.editor.replace_all(solution)

        solution = self.text.code(self.step.solution)
        self.app.push_screen(SolutionScreen(solution), done)

    # ------------------------------------------------------------------ results

    def _result_box(self) -> Vertical:
        """The #result box, emptied."""
        box = self.query_one("#result", Vertical)
        box.remove_children()
        return box

    @staticmethod
    def _say_error(box: Vertical, error: str) -> AwaitMount:
        """Show why a run has no result in ``box``, in place of one."""
        return box.mount(Static(Text(neutralize(error), style="bold red"), classes="output -shown"))

    def run_finished(self, result: RunResult | None, error: str | None) -> AwaitMount | None:
        box = self._result_box()
        if error is not None:
            return self._say_error(box, error)
        if result is None:
            return None
        self.store.answers.record_attempt(*self.key, "run", passed=result.status == "ok", wall_time=result.wall_time)
        self._runs += 1
        uncalled = only_defines(self._ran_code) if result.status == "ok" else []
        nothing = None
        if uncalled:
            nothing = t("exercise.uncalled.one" if len(uncalled) == 1 else "exercise.uncalled.many",
                        names=", ".join(uncalled), check=key_label(self, "step('check')") or "F6")
        output = render_run(result, nothing=nothing)
        output.append("\n")
        output.append(t("exercise.run_stamp", n=self._runs, time=time.strftime("%H:%M:%S")), style="dim")
        widget = OutputBox(Hanging.of(output), classes="output -shown")
        mounted = box.mount(widget)
        reveal(widget)
        return mounted

    def check_finished(self, report: ExerciseReport | None, error: str | None) -> AwaitMount | None:
        box = self._result_box()
        if error is not None:
            return self._say_error(box, error)
        if report is None:
            return None
        checks = report.checks
        passed = report.passed
        unchanged = same_code(self._checked_code or "", self.step.starter)
        note: Static | None = None
        if unchanged and not passed:
            # Checking the starter as given is a look at the task, not an attempt: it must
            # not count towards opening the solution. Said above the report, not in a toast that
            # covered the report's right half for seconds (and could sit on a later "Solved!").
            note = Static(Text(t("exercise.starter_unchanged"), style="italic"), classes="starter-note")
        else:
            self.store.answers.record_attempt(*self.key, "check", passed=passed,
                                              checks_passed=sum(c.status == "passed" for c in checks),
                                              checks_total=len(checks), wall_time=report.run.wall_time,
                                              code=self._checked_code)
        if passed:
            self.query_one("#solved-badge").add_class("-shown")
        from tutor.app.widgets.report import CheckReport

        self._checks += 1
        shown = CheckReport(report, self.text, stamp=t("exercise.stamp", n=self._checks, time=time.strftime("%H:%M:%S")),
                            exercise=self.step)
        return box.mount_all([note, shown] if note is not None else [shown])
