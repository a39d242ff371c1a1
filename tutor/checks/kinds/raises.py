"""``raises`` and ``output``: an expected exception, or printed text matching a pattern."""

from __future__ import annotations

from tutor.checks import refs, render
from tutor.checks.context import Case, CodeRaised, Failed
from tutor.checks.remote import RemoteRaised


def _message(error: BaseException) -> str:
    try:
        return refs.str_(error)
    except Exception:  # noqa: BLE001 - a learner's exception whose __str__ raises
        return ""


#: The author pattern being matched, if any: a check stopped by its time limit meanwhile was
#: stopped by the pattern (catastrophic backtracking), not by the learner's code.
MATCHING: list[str] = []


def search(pattern: str, text: str):
    MATCHING.append(pattern)  # left there when the check's timer stops the match
    found = refs.re_search(pattern, text)
    MATCHING.pop()
    return found


def run_raises(check: dict, case: Case):
    wanted = check["type"]
    try:
        case.run(check["call"])
    except CodeRaised as raised:
        error = raised.error
        if refs.type_(error) is RemoteRaised:
            name, names, message = error.type_name, error.mro_names, error.message
        else:
            kind = refs.type_(error)
            name, names, message = kind.__name__, [cls.__name__ for cls in kind.__mro__], _message(error)
        if wanted not in names:
            got = f"{name}: {render.clip(message, 100)}" if message else name
            raise Failed(f"expected {wanted}, got {got}", expected=wanted, got=got) from None
        pattern = check.get("match")
        if pattern and search(pattern, message) is None:
            raise Failed(f"raised {name} as expected, but its message does not match /{pattern}/: "
                         f"{render.clip(message, 100)!r}",
                         expected=f"a message matching /{pattern}/", got=render.clip(message, 100)) from None
        return {"raised": name, "message": render.clip(message, 300)}
    raise Failed(f"expected {wanted} to be raised, but the code ran without an error",
                 expected=wanted, got="no exception")


def run_output(check: dict, case: Case):
    buffer = refs.StringIO()
    session = case.session
    if session is not None:
        session.capture = True  # what the learner's code prints comes back with the answer
    try:
        with refs.redirect_stdout(buffer):
            case.run(check["call"])
    finally:
        if session is not None:
            session.capture = False
    printed = buffer.getvalue()
    pattern = check["match"]
    if search(pattern, printed) is None:
        shown = render.clip(printed.strip(), 100) or "nothing"
        raise Failed(f"expected output matching /{pattern}/, got {shown!r}" if printed.strip()
                     else f"expected output matching /{pattern}/, but nothing was printed",
                     expected=f"/{pattern}/", got=shown)
    return {"output": render.clip(printed, 500)}
