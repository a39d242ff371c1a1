"""The probe: ``run_checks(namespace, payload, learner_error)`` runs an exercise's checks.

It runs in the **judge** (the run's keeper), a process in which learner code never ran: the
learner's names in ``namespace`` are proxies (:mod:`tutor.child.checks.remote`) whose calls are requests
to the runner, and what comes back is plain data rebuilt here. The judge evaluates the pack's
setup and expressions, computes the expected values, compares, and writes the report to the
parent on a descriptor the runner never had; ``tutor.grading.exercise`` turns it into typed results.

Payload (plain JSON, built by ``tutor.grading.exercise.build_payload``)::

    {"version": 1, "exercise": "id", "filename": "<exercise>", "source": "the learner's code",
     "time_budget": 8.0, "contract": ["names", "the", "checks", "may", "read"],
     "checks": [<check dicts as in tutor.pack.check_models>]}
"""

from __future__ import annotations

from traceback import walk_tb as _walk_tb
from typing import TYPE_CHECKING

from tutor.child.checks import canary, refs, render, vocab
from tutor.words import engine as words
from tutor.child.checks.context import Case, CheckTimeout, CodeRaised, Failed, Learner, TimeLimit, learner_names, reset_modes
from tutor.child.checks.remote import SEAL_BROKEN, RemoteRaised, RemoteTimeout, RunnerGone, Session, StuckCode
from tutor.child.checks.kinds import REGISTRY

if TYPE_CHECKING:
    from typing import Any

REPORT_VERSION = 1
#: Where the keeper puts the judge's session in the namespace it hands to the probe.
SESSION_KEY = "__tutor_session__"

#: kind -> the function that runs its checks (every table here is built from the kinds'
#: declarations: tutor/child/checks/kinds/__init__.py)
KINDS = {name: kind.run for name, kind in REGISTRY.items()}
#: Kinds whose cases (canaries included) run with this many intra-op threads in both processes:
#: a profile is ranked by self time, which a thread barrier on a busy machine distorts.
_THREADS = {name: kind.threads for name, kind in REGISTRY.items() if kind.threads is not None}
#: Kinds that repeat a workload get a bigger share of the time left.
_WEIGHT = {name: kind.weight for name, kind in REGISTRY.items() if kind.weight != 1.0}
_MIN_SLICE = 0.05


class Budget:
    """Splits the run's time for checks among the checks still to run, so one infinite loop
    cannot starve the others and a slow learner function still leaves every check a fair slice.

    The time is CPU time (``clock``: the judge's main thread and what the runner reported for
    its requests), so a busy machine's stolen time never shrinks a check's share; each check's
    wall time is capped at a few times its share (``context.TimeLimit.WALL_FACTOR``) and by the
    run's own end."""

    def __init__(self, seconds: float, checks: list[dict[str, Any]], clock: Any = None) -> None:
        self.total = seconds
        self.clock = clock if clock is not None else refs.thread_time
        self.start = self.clock()
        self.weights = [_WEIGHT.get(str(c.get("kind")), 1.0) for c in checks]
        self.limits = [c.get("time_limit") for c in checks]

    def slice(self, index: int) -> float:
        """The check's own ``time_limit`` (within the time left), else its weighted share."""
        left = self.total - (self.clock() - self.start)
        own = self.limits[index]
        if isinstance(own, (int, float)) and own > 0:
            return min(float(own), left)
        return left * self.weights[index] / sum(self.weights[index:])

    def wall(self, index: int, seconds: float, wall_left: float | None) -> float:
        """The check's wall-time cap: its weighted share of the run's wall time left, split as
        the CPU time is, and at least a few times its CPU time (``TimeLimit.WALL_FACTOR``), within
        the run's wall time left. The run's wall time is that many times the checks' CPU budget
        (``grading.exercise.BATCH_WALL_FACTOR`` in `grade` and `validate`), so a machine that gives the code a third of a core
        still runs the checks to their CPU budget (it was the budget over a fixed share, and a
        busy machine spent it first: issue 26)."""
        capped = seconds * TimeLimit.WALL_FACTOR
        if wall_left is None:
            return capped
        share = wall_left * self.weights[index] / sum(self.weights[index:])
        return max(min(max(capped, share), wall_left), 0.0)


def run_checks(namespace: dict[str, Any], payload: dict[str, Any],
               learner_error: dict[str, Any] | None) -> dict[str, Any]:
    """Run every check in ``payload`` against the learner's ``namespace``; never raises."""
    started = refs.monotonic()
    namespace = dict(namespace)
    session: Session = namespace.pop(SESSION_KEY)  # the keeper always puts it there
    namespace = learner_names(namespace, payload.get("contract"))
    reset_modes()
    prelude_error = _prelude(namespace, payload.get("prelude"))
    checks = payload.get("checks") or []
    learner = Learner(payload.get("filename", "<snippet>"), payload.get("source"))
    budget = Budget(float(payload.get("time_budget", 8.0)), checks,
                    clock=lambda: refs.thread_time() + session.runner_cpu)
    decided = payload.get("decided")  # checks the parent judged from the code's text (form), for `after:`
    status: dict[str, str] = {str(k): str(v) for k, v in decided.items()} if refs.type_(decided) is dict else {}
    results = []
    for index, check in enumerate(checks):
        check = vocab.with_defaults(check)  # a kind reads its record's defaults, never its own
        if prelude_error is not None:
            result = _result(check, "error", prelude_error, internal=True)
        else:
            result = _run_one(check, index, namespace, learner, budget, status, session)
        status[check.get("id", "")] = result["status"]
        results.append(result)
        reset_modes()
    return {
        "version": REPORT_VERSION,
        "exercise": payload.get("exercise"),
        "checks": results,
        "learner_error": learner_error,
        "tampered": sorted(session.repaired),
        "elapsed": refs.monotonic() - started,
        "requests": session.requests,
    }


def _prelude(namespace: dict[str, Any], prelude: object) -> dict[str, Any] | None:
    """Run the pack's prelude here, in the judge, and put its names over the learner's: the checks
    use the pack's helpers, never what the learner's code redefined under their names (the
    runner ran the same prelude before the learner's code). The error, when it fails here."""
    if refs.type_(prelude) is not str or not prelude:
        return None
    own: dict[str, Any] = {"__name__": "__prelude__"}
    try:
        refs.exec_(refs.compile_(prelude, "<prelude>", "exec"), own)
    except Exception as bug:  # noqa: BLE001 - the pack's bug, reported on every check
        return words.say("checks.prelude_failed", error=f"{refs.type_(bug).__name__}: {bug}")
    namespace.update({name: value for name, value in own.items() if not name.startswith("__")})
    return None


def _result(check: dict[str, Any], status: str, message: str | dict[str, Any] = "", **extra: Any) -> dict[str, Any]:
    """A check's result; ``message`` a said (tutor.words.engine), sent with its English beside it."""
    result = {"id": check.get("id"), "kind": check.get("kind"), "status": status, "message": words.english(message),
              "expected": None, "got": None, "case": None, "seed": None, "lineno": None, "data": None}
    if refs.type_(message) is dict:
        result["said"] = message
    result.update(extra)
    return result


def _run_one(check: dict[str, Any], index: int, namespace: dict[str, Any], learner: Learner, budget: Budget,
             status: dict[str, str], session: Session) -> dict[str, Any]:
    blocked = [dep for dep in check.get("after") or [] if status.get(dep) != "passed"]
    if blocked:
        names = ", ".join(f"'{dep}'" for dep in blocked)
        return _result(check, "skipped", words.say("checks.skipped", names=names))
    runner = KINDS.get(str(check.get("kind")))
    if runner is None:
        return _result(check, "error", words.say("checks.unknown_kind", kind=refs.repr_(check.get("kind"))),
                       internal=True)
    seconds = budget.slice(index)
    run_left = session.deadline - refs.monotonic() - 0.5 if session.deadline else None
    wall = budget.wall(index, seconds, run_left)  # the run's own end comes first
    if seconds < _MIN_SLICE or wall < _MIN_SLICE:
        return _result(check, "error", words.say("checks.out_of_time"))
    inference_off = refs.InferenceModeGuard(False) if refs.is_inference_mode_enabled() else None
    result = None
    current: list[Any] = []  # the case running and its Case, for a timeout's result
    session.start_check(seconds, wall)
    session.ship = True  # every check starts shipping its functions, whatever one before it did
    session.in_flight = None
    limit = TimeLimit(seconds, wall=wall,
                      spent=lambda: session.runner_cpu)
    try:
        # A warning raised while a check looks at the learner's values (float() of a tensor that
        # requires grad, say) is the check's doing: it must not show up as the learner's output.
        with refs.catch_warnings(), limit:
            refs.ignore_warnings("ignore")
            result = _cases(check, runner, namespace, learner, session, current)
    except CheckTimeout as stop:
        late = session.settle()
        if result is None:
            result = _timeout(check, learner, late if late is not None else stop, limit, current, session.matching)
            _remember_stuck(check, result, session)
    except RemoteTimeout as stop:
        if result is None:
            result = _timeout(check, learner, stop, limit, current, session.matching)
            _remember_stuck(check, result, session)
    except StuckCode as stuck:
        result = _told(check, stuck.told, current)
    finally:
        del inference_off
    result["seconds"] = [limit.used(), seconds]  # CPU used, budget: validate's margin to the budget
    return result


def _cases(check: dict[str, Any], runner: Any, namespace: dict[str, Any], learner: Learner, session: Session,
           current: list[Any] | None = None) -> dict[str, Any]:
    kind = str(check.get("kind"))
    pinned = _pinned_threads(check, kind)
    if pinned is None:
        return _each_case(check, kind, runner, namespace, learner, session, current)
    threads = refs.get_num_threads()
    refs.set_num_threads(pinned)
    session.threads = pinned  # the learner's code, in the runner, with as many
    try:
        return _each_case(check, kind, runner, namespace, learner, session, current)
    finally:
        refs.set_num_threads(threads)
        session.threads = None


def _pinned_threads(check: dict[str, Any], kind: str) -> int | None:
    """The intra-op threads a measuring check runs with (its ``threads``, default one), in the
    judge and, for every call of the case, canaries' included, in the runner; None: no pin."""
    if kind not in _THREADS:
        return None
    count = check.get("threads", _THREADS[kind])
    return count if refs.type_(count) is int and 1 <= count <= 256 else _THREADS[kind]


def _each_case(check: dict[str, Any], kind: str, runner: Any, namespace: dict[str, Any], learner: Learner,
               session: Session, current: list[Any] | None = None) -> dict[str, Any]:
    if not session.sealed:  # the runner's seal broke: nothing it answered or defined is evidence
        return _result(check, "tampered", words.say("checks.tampered", lie=SEAL_BROKEN))
    cases = check.get("cases") or [{}]
    data = None
    scales: list[Any] = []  # each case's reference_scale (a tensor check's): its data says the largest
    for number, bindings in enumerate(cases):
        if number:  # a mode the learner's call left switched stays in its own case (as in its own check)
            reset_modes()
        case = Case(learner, namespace, check, dict(bindings), session)
        if current is not None:
            current[:] = [number, case]  # the case a timeout stopped (for its message and hints)
        session.start_case(case.seed)  # every request of the case, the canary's too, carries its seed
        canary_first = canary.coin()
        try:
            if canary_first:
                canary.ask(session, kind, case.label, seed=case.seed, check=check)
            case.prepare()
            data = runner(check, case)
            if refs.type_(data) is dict and "reference_scale" in data:
                scales.append(data["reference_scale"])
            if not canary_first:
                canary.ask(session, kind, case.label, check=check)
        except canary.Tampered as lie:
            return _result(check, "tampered", words.say("checks.tampered", lie=lie.said), case=number,
                           seed=case.seed)
        except Failed as failure:
            message = words.where(failure.said or failure.message, case.where())
            phrases = {name: said for name, said in (("expected_said", failure.expected_said),
                                                      ("got_said", failure.got_said)) if said is not None}
            return _result(check, "failed", message, expected=failure.expected, got=failure.got, **phrases,
                           case=number, seed=case.seed if case.drew() else None,
                           data=render.to_jsonable(failure.data))
        except CodeRaised as raised:
            explained = learner.explain(raised.error, raised.source)
            message = words.where(explained["said"], case.where())
            extra = _own_code(check, raised, learner, case.label)
            return _result(check, "error", message, case=number, seed=case.seed, lineno=explained["lineno"],
                           exception={"type": explained["type"], "message": explained["message"]}, **extra)
        except (CheckTimeout, RemoteTimeout):
            raise
        except RunnerGone as gone:
            return _result(check, "error", words.where(words.say("checks.runner_gone"), case.where()),
                           case=number, seed=case.seed, detail=refs.str_(gone))
        except Exception as bug:  # noqa: BLE001 - a checker bug must not hide the other results
            import traceback

            return _result(check, "error", words.say("checks.checker_failed", error=f"{refs.type_(bug).__name__}: {bug}"),
                           case=number, seed=case.seed, internal=True, detail=traceback.format_exc(limit=-6))
    if scales and refs.type_(data) is dict:  # the largest of every case: one near-zero case is not the scale
        data["reference_scale"] = None if None in scales else max(scales)
    summary = data.get("summary") if refs.type_(data) is dict else None
    if refs.type_(summary) is dict and data is not None:  # a said: its English stays in the data
        data["summary"] = words.english(summary)
    said = summary if refs.type_(summary) in (str, dict) else ""
    return _result(check, "passed", said or "", data=render.to_jsonable(data))


#: The check fields that hold the check's own code, in the order a check evaluates them.
_CODE_FIELDS = ("setup", "close_to", "value", "module", "call", "fast", "slow", "workload", "predicate",
                "shares_storage_with", "independent_of", "run", "to")


def _own_code(check: dict[str, Any], raised: CodeRaised, learner: Learner, label: str) -> dict[str, Any]:
    """Where an exception came from when no line of the learner's code was running: the check's
    own code (its setup, an expression). On the reference solution that is the pack's bug, and
    validate reports it as a broken check; ``{}`` when the learner's code raised it."""
    error = raised.error
    if refs.type_(error) is RemoteRaised:
        return {}
    line = None
    for frame, lineno in _walk_tb(error.__traceback__):
        filename = frame.f_code.co_filename
        if filename == learner.filename:
            return {}
        if filename == label:
            line = lineno
    field = next((name for name in _CODE_FIELDS if check.get(name) == raised.source), None)
    return {"own_code": {"field": field, "line": line}}

def _remember_stuck(check: dict[str, Any], result: dict[str, Any], session: Session) -> None:
    """A check stopped while a call of the learner's code was still running their code (the
    runner named their line): later checks that call the same function or module are told at
    once (``remote.StuckCode``), not each run to its own limit. An infinite loop in a function
    that four checks call cost a learner's Check four shares (~8 s); now it costs one."""
    code = result.pop("code", "")
    callee = session.in_flight
    session.in_flight = None
    if callee is None or result.get("lineno") is None:
        return
    if check.get("time_limit") is not None:  # its own limit, not a share: code slower than that check
        return                                 # allows may still finish within another's share
    session.stuck[callee] = {"check": check.get("id"), "lineno": result.get("lineno"), "code": code}


def _told(check: dict[str, Any], told: dict[str, Any], current: list[Any] | None) -> dict[str, Any]:
    """The result of a check that called code an earlier check had to stop (``_remember_stuck``):
    a timeout, naming that check and the learner's line where it stopped."""
    code = told.get("code")
    said = (words.say("checks.stuck_code", check=told.get("check"), line=told.get("lineno"),
                      code=render.clip(refs.str_(code), 80)) if code
            else words.say("checks.stuck", check=told.get("check"), line=told.get("lineno")))
    return _result(check, "timeout", said, lineno=told.get("lineno"), timeout=True,
                   case=current[0] if current else None)


def _timeout(check: dict[str, Any], learner: Learner, stop: Any, limit: TimeLimit, current: list[Any] | None = None,
             matching: str | None = None) -> dict[str, Any]:
    """A check stopped for time: how much CPU time it used (or how long it waited, when the
    wall-time cap stopped it), which limit, what was running and the learner's line there. It
    does not guess why (a loop over 2,048 elements is not an infinite loop)."""
    elapsed = refs.monotonic() - limit._wall0
    if matching is not None:  # the check's own pattern was still matching: the pack's problem
        pattern = matching
        return _result(check, "error", words.say("checks.pattern_slow", pattern=pattern, seconds=f"{elapsed:.1f}"),
                       internal=True, timeout=True)
    lineno = stop.lineno if refs.type_(stop) is RemoteTimeout else learner.last_line(stop.__traceback__)
    own = check.get("time_limit")
    which = (words.say("checks.time_limit", seconds=f"{own:g}") if refs.type_(own) in (int, float)
             else words.say("checks.time_share"))
    used = limit.used()
    by_wall = limit.by_wall or (refs.type_(stop) is RemoteTimeout and stop.by_wall)
    if not limit.cpu_clock:
        message = words.say("checks.stopped", seconds=f"{elapsed:.1f}", which=which)
    elif by_wall:
        message = words.say("checks.stopped_wall", seconds=f"{elapsed:.1f}", used=f"{used:.1f}", which=which,
                            cpu=f"{limit.seconds:.1f}", wall=f"{limit.wall:.1f}")
    else:
        message = words.say("checks.stopped_cpu", used=f"{used:.1f}", which=which)
    case = current[1] if current and refs.len_(current) > 1 else None
    running = case.running if case is not None else None
    if running:
        message = words.say("checks.while_running", sentence=message, code=render.clip(running.strip(), 80))
    code = learner.line(lineno) if lineno is not None else ""
    if lineno is not None:
        message = (words.say("checks.at_line_code", sentence=message, line=lineno, code=render.clip(code, 80))
                   if code else words.say("checks.at_line", sentence=message, line=lineno))
    result = _result(check, "timeout", message, lineno=lineno, timeout=True, case=current[0] if current else None)
    result["code"] = code  # the learner's line (for the checks told of it: _remember_stuck)
    return result
