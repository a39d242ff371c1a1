"""``raises``, ``output`` and ``warns``: an expected exception, printed text or a warning matching a pattern."""

from __future__ import annotations

from typing import Any

from tutor.child.checks import refs, render
from tutor.words import engine as words
from tutor.child.checks.context import Case, CodeRaised, Failed
from tutor.child.checks.remote import RemoteRaised, Session
from tutor.child.checks.vocab import OutputData, RaisesData, WarnsData
from tutor.child.checks.kinds.kind import Kind


def _message(error: BaseException) -> str:
    try:
        return refs.str_(error)
    except Exception:  # noqa: BLE001 - a learner's exception whose __str__ raises
        return ""


def search(session: Session, pattern: str, text: str) -> Any:
    """``re.search``, with the pattern noted in the check's state while it runs
    (``Session.matching``): a check stopped by its time limit meanwhile was stopped by the
    author's pattern (catastrophic backtracking), not by the learner's code."""
    session.matching = pattern  # left there when the check's timer stops the match
    found = refs.re_search(pattern, text)
    session.matching = None
    return found


def run_raises(check: RaisesData, case: Case) -> dict[str, Any]:
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
            raise Failed(words.say("checks.raises.other", wanted=wanted, got=got), expected=wanted, got=got) from None
        pattern = check.get("match")
        if pattern and search(case.session, pattern, message) is None:
            raise Failed(words.say("checks.raises.message", name=name, pattern=pattern,
                                   message=repr(render.clip(message, 100))),
                         expected=words.say("checks.phrase.matching", pattern=pattern),
                         got=render.clip(message, 100)) from None
        return {"raised": name, "message": render.clip(message, 300)}
    raise Failed(words.say("checks.raises.none", wanted=wanted),
                 expected=wanted, got=words.say("checks.phrase.no_exception"))


def run_output(check: OutputData, case: Case) -> dict[str, Any]:
    buffer = refs.StringIO()
    session = case.session
    session.capture = True  # what the learner's code prints comes back with the answer
    try:
        with refs.redirect_stdout(buffer):
            case.run(check["call"])
    finally:
        session.capture = False
    printed = buffer.getvalue()
    pattern = check["match"]
    if search(session, pattern, printed) is None:
        shown = render.clip(printed.strip(), 100) or "nothing"
        raise Failed(words.say("checks.output.other", pattern=pattern, got=repr(shown)) if printed.strip()
                     else words.say("checks.output.none", pattern=pattern),
                     expected=f"/{pattern}/", got=shown)
    return {"output": render.clip(printed, 500)}


def _caught(items: list[Any]) -> list[dict[str, Any]]:
    return [{"category": w.category.__name__, "mro": [cls.__name__ for cls in w.category.__mro__],
             "message": _message(w.message)} for w in items]


def run_warns(check: WarnsData, case: Case) -> dict[str, Any]:
    """The code emits a warning of ``category`` (or a subclass), its message matching ``match``.
    Warnings of the learner's code are recorded where it runs and reported as data."""
    wanted = check["category"]
    session = case.session
    session.record_warnings, session.warned = True, []
    try:
        with refs.catch_warnings(record=True) as local:
            refs.ignore_warnings("always")
            case.run(check["call"])
    finally:
        session.record_warnings = False
    seen = _caught(local) + list(session.warned)
    kinds = [w for w in seen if wanted in (w.get("mro") or [])]
    pattern = check.get("match")
    if not kinds:
        got = ", ".join(f"{w.get('category')}: {render.clip(refs.str_(w.get('message')), 60)}" for w in seen[:3])
        raise Failed(words.say("checks.warns.other", wanted=wanted, got=got) if seen
                     else words.say("checks.warns.none", wanted=wanted),
                     expected=wanted, got=got or "no warning")
    if pattern:
        matching = [w for w in kinds if search(session, pattern, refs.str_(w.get("message"))) is not None]
        if not matching:
            message = render.clip(refs.str_(kinds[0].get("message")), 100)
            raise Failed(words.say("checks.warns.message", category=kinds[0].get("category"), pattern=pattern,
                                   message=repr(message)), expected=words.say("checks.phrase.matching", pattern=pattern),
                                   got=message)
        kinds = matching
    first = kinds[0]
    return {"warned": first.get("category"), "message": render.clip(refs.str_(first.get("message")), 300),
            "summary": f"{first.get('category')}: {render.clip(refs.str_(first.get('message')), 100)}"}


#: This module's kinds, registered in tutor/child/checks/kinds/__init__.py.
KINDS = (Kind("raises", run_raises, canary="tensor"), Kind("output", run_output, canary="tensor"),
         Kind("warns", run_warns, canary="tensor"))
