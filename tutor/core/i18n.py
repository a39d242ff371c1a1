"""The app's own words, in one table, so a translation is one dictionary away.

Pack text is translated by pack authors (``tutor.core.text``); this module only covers the
strings the tutor itself shows: buttons, bindings, messages. Keys are short English phrases in
dotted namespaces; a missing key in a language falls back to English, and a key missing in
English is a programming error that a test catches, so a typo cannot ship as a blank label.
"""

from __future__ import annotations

from typing import Any

FALLBACK = "en"

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
        "cmd.theme": "Toggle light/dark theme",
        "cmd.theme.help": "Switch between the light and the dark theme",
        "cmd.help": "Help",
        "cmd.help.help": "Show every key and what it does",
        "cmd.home": "Contents",
        "cmd.home.help": "Go to the table of contents",
        "cmd.resume": "Resume",
        "cmd.resume.help": "Open the step where you left off",
        "cmd.language": "Language: {name}",
        "cmd.language.help": "Show the pack's text in {name}",
        "cmd.action.help": "{shortcut} on the lesson screen",
        "cmd.filter.help": "Type to narrow the lessons (ctrl+f)",
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
        "exercise.contract": "Your code must define",
        "exercise.optional": "optional",
        "exercise.hint": "Hint {n}/{total}: {text}",
        "exercise.nomorehints": "That was the last hint.",
        "exercise.passed": "All {total} checks passed. Solved!",
        "exercise.passed.one": "The check passed. Solved!",
        "exercise.failed": "{passed}/{total} checks passed.",
        "exercise.solution.locked": "The solution opens once you solve the exercise, or after {n} checks that failed.",
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
        "quiz.free.grade": "How did you do?",
        "quiz.free.right": "I got it",
        "quiz.free.wrong": "I missed it",
        "quiz.choice.pick": "Pick one answer (Up/Down to move, Enter to choose, or a click).",
        "quiz.choice.pick_many": "Tick every correct answer (Up/Down to move, Space to tick, Enter to submit).",
        "quiz.choice.submit": "Submit",
        "quiz.choice.right": "Correct.",
        "quiz.choice.wrong": "Not quite.",
        "quiz.choice.yours": "your answer",
        "quiz.choice.more": "Try again, or see every choice explained with",
        "exercise.does_not_run": "Your code does not run yet, so no check could look at it.",
        "outcome.no_cuda": "This step needs a CUDA GPU and this machine has none, so its code cannot do "
                           "what the lesson shows. Nothing you did caused this; read on, or run it where "
                           "there is a GPU (the `python` setting).",
        "exercise.id": "Exercise id: {id}  (torch-tutor check {id} your_file.py)",
        "editor.tab_first_line": "You are already in the editor: type to change the code. (Tab did nothing: "
                                 "indenting the first line is an IndentationError in Python.)",
        "editor.title.focused": "✎ editing: keys type into your code",
        "editor.title.escape": " · Esc leaves",
        "answer.title.focused": "✎ editing: keys type into your answer",
        "editor.title.blurred": "not editing: keys drive the lesson · Tab or click here to type",
        "exercise.starter_unchanged": "That is still the starter code: this Check does not count as an attempt.",
        "exercise.stamp": "Check {n} at {time}",
        "exercise.run_stamp": "Run {n} at {time}",
        "exercise.checks_waiting": "Checks waiting for your code to run: {total}.",
        "key.page_down": "Page",
        "key.palette": "Command palette: every action of this screen",
        "key.page_up": "Page up",
        "editor.select_all": "Select all the code (editor)",
        "editor.document_start": "Go to the start of the code (editor)",
        "editor.document_end": "Go to the end of the code (editor)",
        "editor.select_to_start": "Select to the start of the code (editor)",
        "editor.select_to_end": "Select to the end of the code (editor)",
        "quiz.predict.placeholder": "What will this print? Type it, then Run to compare.",
        "quiz.predict.run": "Run and compare",
        "quiz.predict.right": "Your prediction matches the output.",
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
        "solution.title": "Reference solution",
        "solution.use": "Put it in the editor",
        "solution.close": "Close",
        "help.title": "Keys",
        "help.body": "A focused editor takes ordinary keys, so every action has a function key "
                     "or a ctrl key. Ctrl+P opens the command palette with every action. "
                     "Your code is saved as you type; quitting loses nothing.\n"
                     "In the editor, Enter keeps the indentation (one level more after ':'), "
                     "Backspace in the leading spaces removes one level, Tab/Shift+Tab indent/dedent "
                     "the selected lines, and PageUp/PageDown scroll the lesson. "
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
    },
    # Chinese: filled in by a translator; every missing key falls back to English.
    "zh": {
        "app.title": "torch-tutor",
        "key.help": "帮助",
        "key.quit": "退出",
    },
}

_language = FALLBACK


def set_language(code: str | None) -> str:
    """Use ``code`` for the UI if the table has it (``zh-CN`` uses ``zh``); returns the one in use."""
    global _language
    _language = FALLBACK
    if code:
        for candidate in (code, code.split("-")[0]):
            if candidate in TABLE:
                _language = candidate
                break
    return _language


def language() -> str:
    return _language


def t(key: str, **fields: Any) -> str:
    """The UI string ``key`` in the current language, formatted with ``fields``.

    Raises KeyError for a key English lacks: a missing string is a bug to catch in tests.
    """
    template = TABLE.get(_language, {}).get(key) or TABLE[FALLBACK][key]
    return template.format(**fields) if fields else template
