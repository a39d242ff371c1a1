"""``torch-tutor quiz PACK [LESSON]``: a pack's quizzes in a plain terminal, one question at a time.

For a learner who works from a shell and an editor (and `torch-tutor check`), after okpy's
terminal "unlock" questions: each question is printed, the learner types a line at the ``?``
prompt, and the answer is recorded in the progress store exactly as the app records it (same
rows, same review cards, the same hand-in). Nothing here is a rule of its own: the choice order,
what counts as right and how a prediction is judged are ``tutor.pack.quizzes``'s.

Every kind of quiz the pack format has is asked (``choice``, ``predict``, ``free``): a type added
to ``tutor.pack.quizzes`` without a way to ask it here fails ``tests/cli/test_cli_quiz.py``. Each
answer is written the moment it is given, so end of input or Ctrl-C loses nothing answered;
input is read line by line, from a terminal or a pipe alike; every line fits 80 columns.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, cast

from tutor.cli.common import UsageError, cells, guarded, wrap_cells
from tutor.words.i18n import t

if TYPE_CHECKING:
    from tutor.pack.models import ChoiceQuiz, FreeQuiz, Lesson, Pack, PredictQuiz, QuizBase, Step
    from tutor.record.progress import ProgressStore
    from tutor.sandbox import Sandbox

#: The widest line the command prints.
WIDTH = 80
PROMPT = "? "
#: What a learner types to stop (as okpy's unlock does), besides end of input and Ctrl-C.
QUIT_WORDS = ("exit()", "quit()", ":q")
#: The longest answer kept: more is a paste gone wrong, not an answer.
MAX_ANSWER_CHARS = 20_000


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "quiz", help="answer a pack's quizzes in a plain terminal, one question at a time",
        description="Ask PACK's quizzes (or LESSON's) one at a time at a ? prompt, the choices of each in "
        "your own order, and record every answer as the app does: the same progress, review cards and "
        "hand-in (`torch-tutor handin`). Quizzes already answered right are skipped unless --all. Enter "
        "on an empty line skips a question; end of input (Ctrl-D) or Ctrl-C stops, keeping every answer given.")
    p.add_argument("pack_arg", metavar="PACK", help="a pack id (as `torch-tutor list` shows it), folder or pack.yaml")
    p.add_argument("lesson", nargs="?", metavar="LESSON", help="only this lesson's quizzes (its id)")
    p.add_argument("--all", dest="ask_all", action="store_true",
                   help="ask again the quizzes already answered right")
    p.set_defaults(func=cmd_quiz)


class Stop(EOFError):
    """The learner typed a quit word: the end of their input, as Ctrl-D is."""


class Asker:
    """Questions and answers on stdin and stdout, in lines of at most ``width`` cells."""

    def __init__(self, read: Callable[[], str] | None = None, width: int = WIDTH):
        self.width = width
        self._read = read or _read_line

    def say(self, text: str = "", indent: str = "", first: str | None = None) -> None:
        if not text:
            print(flush=True)
            return
        for paragraph in text.split("\n"):
            for line in wrap_cells(paragraph, self.width, indent, first) if paragraph.strip() else [""]:
                print(line)
            first = None
        sys.stdout.flush()

    def markdown(self, text: str) -> None:
        """Markdown as plain text: code blocks kept as written, paragraphs wrapped."""
        for line in render_markdown(text, self.width):
            print(line)
        sys.stdout.flush()

    def ask(self, prompt: str = PROMPT) -> str:
        """One line of input (its end of line removed). EOFError at end of input; Stop on a quit word."""
        sys.stdout.write(prompt)
        sys.stdout.flush()
        line = self._read()
        if line.strip() in QUIT_WORDS:
            raise Stop
        return line[:MAX_ANSWER_CHARS]

    def ask_lines(self) -> str:
        """Lines up to an empty one (a prediction or a free answer may span several)."""
        lines = [self.ask()]
        if not lines[0].strip():
            return ""
        while True:
            try:
                line = self.ask("  ")
            except EOFError:  # the answer so far is the answer; the next question sees the end
                break
            if not line.strip():
                break
            lines.append(line)
            if sum(map(len, lines)) > MAX_ANSWER_CHARS:
                break
        return "\n".join(lines)[:MAX_ANSWER_CHARS]


def _read_line() -> str:
    if sys.stdin.isatty():
        return input()  # line editing where the terminal has it; EOFError at Ctrl-D
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    print(line.rstrip("\n"))  # a piped answer shows in the transcript, as a typed one does
    return line.rstrip("\r\n")


def render_markdown(text: str, width: int = WIDTH) -> list[str]:
    """A question, choice or explanation as plain lines: fenced and indented code as written (a
    line longer than the width is cut, with '…'), every other line wrapped (CJK between characters);
    emphasis and inline-code marks are kept as typed, so nothing the author wrote is lost."""
    out: list[str] = []
    fence: str | None = None
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            joined = " ".join(part.strip() for part in paragraph)
            lead = paragraph[0][: len(paragraph[0]) - len(paragraph[0].lstrip())]
            bullet = ""
            stripped = joined.lstrip()
            for mark in ("- ", "* ", "+ "):
                if stripped.startswith(mark):
                    bullet = mark
            hang = lead + " " * len(bullet)
            out.extend(wrap_cells(joined, width, hang, first=lead if bullet else hang))
            paragraph.clear()

    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.rstrip()
        marker = line.lstrip()[:3]
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
                continue
            out.append(_cut("    " + line, width))
            continue
        if marker in ("```", "~~~"):
            flush()
            fence = marker
            continue
        if not line.strip():
            flush()
            if out and out[-1]:
                out.append("")
            continue
        if line.lstrip().startswith(("- ", "* ", "+ ")) or line.lstrip()[:1].isdigit() and ". " in line[:6]:
            flush()
        if line.startswith("    ") and not paragraph:
            out.append(_cut(line, width))
            continue
        paragraph.append(line)
    flush()
    while out and not out[-1]:
        out.pop()
    return out


def _cut(line: str, width: int) -> str:
    if cells(line) <= width:
        return line
    while cells(line + "…") > width:
        line = line[:-1]
    return line + "…"


# --------------------------------------------------------------------------- the command


@guarded
def cmd_quiz(args: argparse.Namespace) -> int:
    from tutor.cli.common import resolve_pack_arg, settings_from_args
    from tutor.record import spaced_review as review
    from tutor.pack.loader import PackError, load_pack
    from tutor.record.progress import ProgressStore

    settings = settings_from_args(args)
    try:
        pack = load_pack(resolve_pack_arg(args.pack_arg, args))
    except PackError as exc:
        raise UsageError(t("cli.handin.broken_pack", problems=exc)) from None
    lessons = list(pack.lessons)
    if args.lesson is not None:
        lessons = [lesson for lesson in pack.lessons if lesson.id == args.lesson]
        if not lessons:
            raise UsageError(t("cli.quiz.no_lesson", lesson=repr(args.lesson), pack=pack.id,
                               lessons=", ".join(lesson.id for lesson in pack.lessons if _quizzes_of(lesson))
                               or "-"))
    quizzes = [(lesson, step) for lesson in lessons for step in _quizzes_of(lesson)]
    asker = Asker()
    where = pack.id if args.lesson is None else f"{pack.id}/{args.lesson}"
    if not quizzes:
        asker.say(t("cli.quiz.none", where=where))
        return 0
    store = ProgressStore.open(settings.data_path)
    review.keep_first_meetings(store)  # a first graded answer is the item's first review, as in the app
    session = Session(pack, store, asker, settings)
    try:
        if not store.storage.persistent:
            print(t("cli.quiz.not_kept", reason=store.storage.notice or ""), file=sys.stderr)
        return session.run(quizzes, ask_all=args.ask_all, where=where)
    finally:
        session.close()
        store.close()


def _quizzes_of(lesson: "Lesson") -> list["QuizBase"]:
    from tutor.pack.models import QuizBase

    return [step for step in lesson.steps if isinstance(step, QuizBase)]


class Session:
    """One sitting: the quizzes asked in order, each answer recorded as it is given."""

    def __init__(self, pack: "Pack", store: "ProgressStore", asker: Asker, settings: Any):
        from tutor.pack.models import ChoiceQuiz, FreeQuiz, PredictQuiz

        self.pack, self.store, self.asker, self.settings = pack, store, asker, settings
        self.language = settings.language
        self.answered = 0
        self.right = 0
        self._sandbox: "Sandbox | None" = None
        #: How each quiz type is asked; every type of tutor.pack.quizzes has its entry (a test holds it).
        self.askers: dict[type, Callable[[Any, tuple[str, str, str]], bool | None]] = {
            ChoiceQuiz: self.ask_choice, PredictQuiz: self.ask_predict, FreeQuiz: self.ask_free}

    def text(self, value: Any) -> str:
        from tutor.pack.text import resolve

        return resolve(value, self.language, self.pack.languages[0]) or ""

    def run(self, quizzes: list[tuple["Lesson", "QuizBase"]], *, ask_all: bool, where: str) -> int:
        from tutor.pack.titles import step_title

        recorded = self.store.steps.of_pack(self.pack.id)
        todo = [(lesson, quiz) for lesson, quiz in quizzes
                if ask_all or recorded.get((lesson.id, quiz.id)) is None
                or recorded[(lesson.id, quiz.id)].quiz_correct is not True]
        say = self.asker.say
        if not todo:
            say(t("cli.quiz.all_right", where=where, count=len(quizzes)))
            return 0
        say(t("cli.quiz.intro", where=where, count=len(todo), total=len(quizzes)))
        say(t("cli.quiz.how"))
        try:
            for number, (lesson, quiz) in enumerate(todo, 1):
                key = (self.pack.id, lesson.id, quiz.id)
                say()
                say("-" * self.asker.width)
                heading = t("cli.quiz.heading", n=number, count=len(todo), lesson=self.text(lesson.title))
                if quiz.title:  # the question itself follows: a title only when the author gave one
                    heading += ": " + step_title(cast("Step", quiz), self.language, self.pack.languages[0])
                say(heading, indent="  ")
                say()
                started = time.monotonic()
                self.store.steps.visit(*key)
                outcome = self.askers[type(quiz)](quiz, key)
                self.store.steps.visit(*key, seconds=time.monotonic() - started)
                if outcome is not None:
                    self.answered += 1
                    self.right += bool(outcome)
        except EOFError:  # Stop, a quit word, is one
            print()
            say(t("cli.quiz.stopped"))
            self._end(where)
            return 0
        except KeyboardInterrupt:
            print()
            say(t("cli.quiz.stopped"))
            self._end(where)
            return 130
        say()
        say("-" * self.asker.width)
        self._end(where)
        return 0

    def _end(self, where: str) -> None:
        say = self.asker.say
        say(t("cli.quiz.done", answered=self.answered, right=self.right))
        if self.answered:
            if self.store.storage.persistent and self.store.storage.write_error is None:
                say(t("cli.quiz.kept", pack=self.pack.id))
            else:
                say(t("cli.quiz.not_kept", reason=self.store.storage.write_error or self.store.storage.notice or ""))

    def close(self) -> None:
        if self._sandbox is not None:
            try:
                self._sandbox.close()
            finally:
                self._sandbox = None

    # ------------------------------------------------------------------ choice

    def ask_choice(self, quiz: "ChoiceQuiz", key: tuple[str, str, str]) -> bool | None:
        from tutor.pack.quizzes.choice import answer_text, choice_order, learner_seed

        asker = self.asker
        asker.markdown(self.text(quiz.question))
        order = choice_order(len(quiz.choices), learner_seed(self.store), key, quiz.shuffle)
        letters = "abcdefghijklmnopqrstuvwxyz"[:len(order)]
        asker.say()
        for letter, index in zip(letters, order):
            self._choice_lines(f"  {letter}) ", quiz, index)
        asker.say()
        last = letters[-1]
        asker.say(t("cli.quiz.pick_many" if quiz.multiple else "cli.quiz.pick", last=last))
        verdict: bool | None = None
        while True:
            line = asker.ask().strip().lower()
            if not line:
                return verdict
            if line == "?" and verdict is not None:
                self.store.steps.mark_solution_seen(*key)
                self._explain(quiz, order, letters, None)
                return verdict
            shown, problem = _letters(line, letters, quiz.multiple)
            if problem is not None:
                asker.say(problem)
                continue
            picked = {order[position] for position in shown}
            right = quiz.is_right(picked)
            self.store.answers.record_quiz(*key, answer_text(picked), right)
            verdict = right
            if right:
                asker.say(t("cli.quiz.right"))
                self._explain(quiz, order, letters, picked)
                return True
            asker.say(t("cli.quiz.wrong"))
            self._explain(quiz, order, letters, picked, only_picked=True)
            asker.say(t("cli.quiz.try_again"))

    def _choice_lines(self, lead: str, quiz: "ChoiceQuiz", index: int) -> None:
        from tutor.pack.text import resolve

        text = " ".join(resolve(quiz.choices[index].text, self.language, self.pack.languages[0]).split())
        for line in wrap_cells(text, self.asker.width, " " * len(lead), first=lead):
            print(line)

    def _explain(self, quiz: "ChoiceQuiz", order: list[int], letters: str, picked: set[int] | None,
                 only_picked: bool = False) -> None:
        """Each choice (only those picked, after a wrong answer) marked right or wrong, with why."""
        for letter, index in zip(letters, order):
            if only_picked and picked is not None and index not in picked:
                continue
            choice = quiz.choices[index]
            mark = t("cli.quiz.mark_right" if choice.correct else "cli.quiz.mark_wrong")
            yours = f" {t('quiz.choice.yours')}" if picked is not None and index in picked else ""
            self.asker.say(f"{letter}) {mark}{yours}: " + " ".join(self.text(choice.explain).split()),
                           indent="      ", first="  ")

    # ------------------------------------------------------------------ predict

    def ask_predict(self, quiz: "PredictQuiz", key: tuple[str, str, str]) -> bool | None:
        from tutor.pack.comments import code_for
        from tutor.pack.quizzes.predict import judge_run

        asker = self.asker
        asker.markdown(self.text(quiz.question))
        asker.say()
        for line in code_for(quiz.code, self.language or self.pack.languages[0]).rstrip().split("\n"):
            print(_cut("    " + line, asker.width))
        asker.say()
        if quiz.raises:
            asker.say(t("quiz.predict.raises_hint"))
        asker.say(t("cli.quiz.predict"))
        prediction = asker.ask_lines()
        if not prediction.strip():
            return None
        asker.say(t("cli.quiz.running"))
        result = self._run(quiz)
        if result is None:
            return None
        if result.status not in ("ok", "error"):
            asker.say(t("cli.quiz.run_failed", status=result.status, message=result.message or ""))
            return None
        verdict = judge_run(quiz, prediction, result.stdout or "", result.error.type if result.error else None)
        self.store.answers.record_quiz(*key, prediction, verdict.right)
        if verdict.right:
            asker.say(t("cli.quiz.predict_right"))
        else:
            asker.say(t("cli.quiz.predict_wrong"))
            self._side_by_side(prediction, verdict.expected)
        if quiz.explain:
            asker.say()
            asker.markdown(self.text(quiz.explain))
        return verdict.right

    def _run(self, quiz: "PredictQuiz") -> Any:
        from tutor.grading.exercise import run_example
        from tutor.grading.sandboxes import sandbox_for
        from tutor.sandbox import SandboxUnavailable

        try:
            if self._sandbox is None:
                self._sandbox = sandbox_for(self.settings)
                self._sandbox.start()
            return run_example(self._sandbox, quiz).run
        except SandboxUnavailable as exc:
            self.asker.say(t("cli.sandbox_failed", reason=exc))
            self.close()
            return None

    def _side_by_side(self, prediction: str, expected: str) -> None:
        from tutor.pack.predict_compare import side_by_side

        half = (self.asker.width - 3) // 2
        print(_fit(t("quiz.predict.yours"), half) + " | " + t("quiz.predict.actual"))
        for mine, theirs, differs in side_by_side(prediction, expected):
            print(_fit(mine, half) + (" ≠ " if differs else " | ") + _cut(theirs, half))
        sys.stdout.flush()

    # ------------------------------------------------------------------ free

    def ask_free(self, quiz: "FreeQuiz", key: tuple[str, str, str]) -> bool | None:
        asker = self.asker
        asker.markdown(self.text(quiz.question))
        asker.say()
        asker.say(t("cli.quiz.free"))
        answer = asker.ask_lines()
        if not answer.strip():
            return None
        self.store.answers.record_quiz(*key, answer, None)  # revealed: kept before the model answer shows
        asker.say()
        asker.say(t("quiz.free.model") + ":")
        asker.markdown(self.text(quiz.answer))
        asker.say()
        asker.say(t("cli.quiz.self_grade"))
        while True:
            line = asker.ask().strip()
            if line not in ("1", "2", "3", "4"):
                asker.say(t("cli.quiz.one_to_four"))
                continue
            rating = int(line)  # FSRS's 1 Again .. 4 Easy, as the app and the review queue grade
            self.store.answers.record_quiz(*key, answer, rating >= 2, rating=rating)
            asker.say(t("quiz.graded", verdict=f"{rating} {t(f'review.rate.{rating}')}"))
            return rating >= 2


def _fit(text: str, width: int) -> str:
    text = _cut(text, width)
    return text + " " * (width - cells(text))


def _letters(line: str, letters: str, multiple: bool) -> tuple[set[int], str | None]:
    """The choice indexes (in the order shown) a line of letters names, or the problem with it."""
    parts = [part for part in line.replace(",", " ").split() if part]
    if len(parts) == 1 and len(parts[0]) > 1 and all(ch in letters for ch in parts[0]):
        parts = list(parts[0])  # "ac" for "a c"
    shown = [part for part in parts if part not in letters or len(part) != 1]
    if shown:
        return set(), t("cli.quiz.bad_letter", text=shown[0][:20], last=letters[-1])
    if not multiple and len(set(parts)) > 1:
        return set(), t("cli.quiz.one_letter")
    return {letters.index(part) for part in parts}, None
