"""``profile``: operators ranked by CPU time for a workload, measured so the verdict is stable.

One profiled run on a small shared CPU is noisy (``aten::sum`` or ``aten::copy_`` can jump to
second place). So: warm-up runs first (caches, lazy initialisation, the profiler's own first-use
cost), then ``repeat`` profiled runs, and each operator's *median* self (or total) time over them.
Assertions compare sets, shares and call counts, never exact places among near-ties. The whole
check runs with the check's ``threads`` (default one intra-op thread): with another core busy, a
multi-threaded op waits at its thread barrier for a core, and a 33 MFLOP matmul measured slower
than an elementwise exp (seen once in 30 runs before this). One thread makes the ranking a
property of the work, not of the load. Call counts are per call of the workload (each profiled
run calls it once), the median over the runs.
"""

from __future__ import annotations

from typing import Any

from tutor.child.checks import refs, render
from tutor.words import engine as words
from tutor.child.checks.context import Case, Failed
from tutor.child.checks.server import top_level_calls
from tutor.child.checks.kinds.measure import callable_of, in_runner, median, thread_said, threads
from tutor.child.checks.vocab import CompareRankingData, ProfileData
from tutor.child.checks.kinds.kind import Kind

_IGNORED_PREFIXES = ("ProfilerStep", "[memory]", "[OutOfMemory]")
_TABLE_ROWS = 15
#: Sums of shares computed in floating point miss a bound they meet by this much at most.
_ROUNDING = 1e-9


def measure(case: Case, workload: Any, warmup: int, repeat: int, sort_by: str, count: int = 1) -> list[dict[str, Any]]:
    """The table: one row per operator, medians over ``repeat`` profiled runs, sorted."""
    if in_runner(case, workload):
        runs = _runner_runs(case, workload, warmup, repeat, count)
        return _table(runs, sort_by)
    # in_runner ran it here once: that call is the first warm-up (issue 55: one call of a 35 ms
    # workload less, per workload and per try, in profiler-hotspot's compare)
    for _ in range(warmup - 1):
        case.call(workload)
    runs = []
    for _ in range(repeat):
        with refs.profile(activities=[refs.ProfilerActivity.CPU]) as prof:
            case.call(workload)
        direct = top_level_calls(prof)
        per_op: dict[str, tuple[float, float, int, int]] = {}
        for event in prof.key_averages():
            name = event.key
            if name.startswith(_IGNORED_PREFIXES):
                continue
            per_op[name] = (refs.float_(event.self_cpu_time_total), refs.float_(event.cpu_time_total),
                            refs.int_(event.count), refs.int_(direct.get(name, 0)))
        runs.append(per_op)
    return _table(runs, sort_by)


def _runner_runs(case: Case, workload: Any, warmup: int, repeat: int, count: int) -> list[dict[str, Any]]:
    """Profiled runs made in the runner, as the numbers it reports (checked for shape here)."""
    session = case.session
    numbers = session.repeat("profile", [workload], warmup, repeat, count)
    runs = []
    for run in numbers if refs.type_(numbers) is list else []:
        per_op = {}
        for name, row in (run.items() if refs.type_(run) is dict else ()):
            # a row without its direct count reads as 0 here; the profile canary, which wants all
            # four numbers right, makes such a runner's check `tampered`
            if refs.type_(row) is list and refs.len_(row) in (3, 4):
                per_op[refs.str_(name)] = (refs.float_(row[0]), refs.float_(row[1]), refs.int_(row[2]),
                                           refs.int_(row[3]) if refs.len_(row) == 4 else 0)
        runs.append(per_op)
    return runs


def _table(runs: list[dict[str, Any]], sort_by: str) -> list[dict[str, Any]]:
    names = {name for run in runs for name in run}
    rows = []
    for name in names:
        samples = [run.get(name, (0.0, 0.0, 0, 0)) for run in runs]
        rows.append({
            "op": name,
            "self_us": median([s[0] for s in samples]),
            "total_us": median([s[1] for s in samples]),
            "calls": refs.int_(median([s[2] for s in samples])),
            "direct": refs.int_(median([s[3] for s in samples])),  # called by the workload's own code
        })
    total_self = sum(row["self_us"] for row in rows) or 1.0
    for row in rows:
        row["share"] = row["self_us"] / total_self
    key = "self_us" if sort_by == "self" else "total_us"
    rows.sort(key=lambda row: (-row[key], row["op"]))
    return rows


def _matches(op: str, patterns: list[str]) -> bool:
    return any(refs.fnmatchcase(op, p) if p.endswith("*") else op == p for p in patterns)


def _percent(share: float) -> str:
    return f"{share * 100:.0f}%"


def _table_data(rows: list[dict[str, Any]], sort_by: str) -> dict[str, Any]:
    return {"sort_by": sort_by, "rows": [dict(row) for row in rows[:_TABLE_ROWS]]}


def run(check: ProfileData, case: Case) -> Any:
    with threads(check["threads"]):
        return _run(check, case)


def _run(check: ProfileData, case: Case) -> Any:
    sort_by = check["sort_by"]
    warmup, repeat = check["warmup"], check["repeat"]
    count = check["threads"]
    data: dict[str, Any] = {}
    workload = check.get("workload")
    if workload:
        rows = measure(case, callable_of(case, workload), warmup, repeat, sort_by, count)
        data = _table_data(rows, sort_by)
        data["threads"] = count
        try:
            _assert_ranking(check, rows, sort_by)
            data["counts"] = _assert_counts(check, rows, data)
        except Failed as failure:
            failure.data = data
            raise
        data["summary"] = _summary(check, rows, data["counts"], count)
        share = check.get("share")
        if share:  # the one threshold on a measured time: its margin, for validate --repeat
            got = sum(row["share"] for row in rows if _matches(row["op"], share["ops"]))
            data.update(measured=_percent(got), needs=f"at least {_percent(share['at_least'])}",
                        margin=got / share["at_least"])
    compare = check.get("compare")
    if compare:
        data["compare"] = _compare(check, compare, case, warmup, repeat, sort_by, count)
    return data


def _summary(check: ProfileData, rows: list[dict[str, Any]], counts: list[dict[str, Any]], count: int) -> dict[str, Any]:
    """What a passing profile check measured, in one line (a said)."""
    parts: list[Any] = [words.say("checks.profile.top", op=rows[0]["op"], share=_percent(rows[0]["share"]))] if rows else []
    share = check.get("share")
    if share:
        got = sum(row["share"] for row in rows if _matches(row["op"], share["ops"]))
        parts.append(f"{', '.join(share['ops'])}: {_percent(got)}")
    for item in counts:
        parts.append(words.say("checks.profile.per_call", ops=" + ".join(item["ops"]), calls=item["calls"]))
    return words.say("checks.profile.summary", parts=words.joined(parts), threads=thread_said(count))


def count_margins(check: ProfileData, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each ``calls`` bound: the operators, the count measured per call of the workload, the bound
    and its margin (>= 1 passes: (at_most + 1) / (count + 1), count / at_least; the smaller of the
    two where both are given), for ``validate --repeat`` and ``--json``."""
    measured = []
    for item in check.get("calls") or []:
        ops = item["ops"]
        got = sum(row["calls"] for row in rows if _matches(row["op"], ops))
        most, least = item.get("at_most"), item.get("at_least")
        margins = ([(most + 1) / (got + 1)] if most is not None else []) + (
            [got / least] if least else [])
        needs = " and ".join(([f"at most {most}"] if most is not None else [])
                             + ([f"at least {least}"] if least is not None else []))
        measured.append({"ops": ops, "calls": got, "needs": needs, "margin": min(margins) if margins else None})
    return measured


def _assert_counts(check: ProfileData, rows: list[dict[str, Any]], data: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Call counts per call of the workload (summed over the listed operators) within bounds."""
    measured = count_margins(check, rows)
    if data is not None:
        data["counts"] = measured  # a failing bound still shows every count and its margin
    for item, count in zip(check.get("calls") or [], measured):
        ops = item["ops"]
        got = count["calls"]
        names = " or ".join(ops)
        most, least = item.get("at_most"), item.get("at_least")
        if most is not None and got > most:
            raise Failed(words.say("checks.profile.too_many", names=names, got=got, most=most),
                         expected=words.say("checks.phrase.at_most_calls", n=most),
                         got=words.say("checks.phrase.calls", n=got))
        if least is not None and got < least:
            raise Failed(words.say("checks.profile.too_few", names=names, got=got, least=least),
                         expected=words.say("checks.phrase.at_least_calls", n=least),
                         got=words.say("checks.phrase.calls", n=got))
    return measured


def _assert_ranking(check: ProfileData, rows: list[dict[str, Any]], sort_by: str) -> None:
    what = words.say("checks.profile.self" if sort_by == "self" else "checks.profile.total")
    if not rows:
        raise Failed(words.say("checks.profile.nothing"))
    top1 = check.get("top1_in")
    if top1 and not _matches(rows[0]["op"], top1):
        raise Failed(words.say("checks.profile.top1", what=what, op=rows[0]["op"], share=_percent(rows[0]["share"]),
                               expected=", ".join(top1)),
                     expected=" or ".join(top1), got=rows[0]["op"])
    top_k = check.get("top_k")
    if top_k:
        k, within = top_k["k"], top_k["within"]
        outside = [row["op"] for row in rows[:k] if not _matches(row["op"], within)]
        if outside:
            raise Failed(words.say("checks.profile.top_k_one" if refs.len_(outside) == 1 else "checks.profile.top_k",
                                   k=k, what=what, within=", ".join(within), outside=", ".join(outside)),
                         expected=", ".join(within), got=", ".join(row["op"] for row in rows[:k]))
    for pattern in check.get("absent") or []:
        present = [row for row in rows if row["calls"] > 0 and _matches(row["op"], [pattern])]
        if present:
            row = present[0]
            raise Failed(words.say("checks.profile.absent", op=row["op"], calls=row["calls"],
                                   share=_percent(row["share"]), pattern=pattern), expected=words.say("checks.phrase.no_op", pattern=pattern),
                         got=words.say("checks.phrase.calls", n=row['calls']))
    only = check.get("only")
    if only is not None:
        outside = [row for row in rows if row["direct"] > 0 and not _matches(row["op"], only)]
        if outside:
            row = outside[0]
            said = words.say("checks.profile.direct", op=row["op"], calls=row["direct"])
            if refs.len_(outside) > 1:
                said = words.say("checks.profile.and_others", sentence=said,
                                 others=", ".join(r["op"] for r in outside[1:4]))
            raise Failed(words.say("checks.profile.only", sentence=said, allowed=_some(only)),
                         expected=words.say("checks.phrase.only", ops=", ".join(only)),
                         got=", ".join(r["op"] for r in outside))
    share = check.get("share")
    if share:
        got = sum(row["share"] for row in rows if _matches(row["op"], share["ops"]))
        if got < share["at_least"] - _ROUNDING:  # shares that sum to 1 may add up to 0.9999999
            raise Failed(words.say("checks.profile.share", ops=", ".join(share["ops"]), got=_percent(got),
                                   least=_percent(share["at_least"])), expected=f">= {_percent(share['at_least'])}",
                         got=_percent(got))


def _some(names: list[str], shown: int = 6) -> dict[str, Any] | str:
    """'a, b, c and 12 more': a long allow-list in a message that has to fit a terminal."""
    if not names:
        return words.say("checks.profile.no_operator")
    more = refs.len_(names) - shown
    listed = ", ".join(names[:shown])
    return words.say("checks.profile.more", names=listed, more=more) if more > 0 else listed


def _ordinal(n: int) -> dict[str, Any]:
    return words.say(f"checks.profile.ordinal_{n}") if n in (1, 2, 3) else words.say("checks.profile.ordinal", n=n)


#: How many times a compared workload is measured, both rankings each time, before a ranking that
#: disagrees with the checker's fails. A ranking is a measurement too: one stall of a busy core
#: during a 13 us ``aten::sum`` put it above a 45 us ``aten::exp`` in an honest learner's medians
#: of three. A wrong ranking (by name, by total instead of self time) disagrees every time; an
#: honest one that a stall upset agrees on the next try. Only a disagreement costs a try.
COMPARE_ATTEMPTS = 3


def _compare(check: ProfileData, spec: CompareRankingData, case: Case, warmup: int, repeat: int, sort_by: str,
             count: int) -> list[dict[str, Any]]:
    """The learner's ranking function against the checker's own, on workloads they never saw."""
    compared = []
    for number, source in enumerate(spec["workloads"], 1):
        workload = callable_of(case, source)
        for attempt in range(1, COMPARE_ATTEMPTS + 1):
            try:
                compared.append(_compare_once(spec, case, workload, number, source, warmup, repeat, sort_by, count))
                break
            except _Disagrees as disagreement:
                if attempt == COMPARE_ATTEMPTS:
                    raise disagreement.failure from None
    return compared


class _Disagrees(Exception):
    """The learner's ranking put an operator where the checker's measurement does not (beyond a
    near-tie): worth measuring again, as a shape error or a repeated name is not."""

    def __init__(self, failure: Failed) -> None:
        super().__init__(str(failure))
        self.failure = failure


def _compare_once(spec: CompareRankingData, case: Case, workload: Any, number: int, source: str, warmup: int,
                  repeat: int, sort_by: str, count: int) -> dict[str, Any]:
    k, near_tie = spec["k"], spec["near_tie"]
    key = "self_us" if sort_by == "self" else "total_us"
    rows = measure(case, workload, warmup, repeat, sort_by, count)
    case.namespace["workload"] = workload
    case.namespace["k"] = k
    session = case.session
    shipping = session.ship
    session.ship = True  # the learner's function profiles the workload: it must run there
    try:
        ranking = case.eval(spec["call"])
    finally:
        session.ship = shipping  # as it was (never left off for the checks after this one)
    if refs.type_(ranking) not in (list, tuple) or not all(refs.type_(op) is str for op in ranking):
        raise Failed(words.say("checks.profile.not_ranking", got=render.described(ranking)), expected=words.say("checks.phrase.op_names"),
                     got=render.described(ranking))
    ranking = list(ranking)
    theirs = [row["op"] for row in rows[:k]]
    if refs.len_(ranking) < min(k, refs.len_(rows)):
        raise Failed(words.say("checks.profile.too_short", number=number, got=refs.len_(ranking), k=k),
                     expected=", ".join(theirs), got=", ".join(ranking))
    times = {row["op"]: row[key] for row in rows}
    if refs.len_(set(ranking[:k])) != refs.len_(ranking[:k]):
        raise Failed(words.say("checks.profile.twice", number=number, ranking=", ".join(ranking[:k])),
                     expected=", ".join(theirs), got=", ".join(ranking[:k]))
    for place, (mine, reference) in enumerate(zip(ranking[:k], theirs), 1):
        if mine == reference:
            continue
        mine_time, reference_time = times.get(mine, 0.0), times[reference]
        if abs(mine_time - reference_time) <= near_tie * max(mine_time, reference_time):
            continue  # a near-tie: either order is a correct measurement
        detail = (words.say("checks.profile.takes", op=mine, us=f"{mine_time:.0f}") if mine in times
                  else words.say("checks.profile.does_not_run", op=mine))
        raise _Disagrees(Failed(words.say("checks.profile.misplaced", number=number, mine=mine, place=_ordinal(place),
                                          detail=detail, reference=reference, us=f"{reference_time:.0f}"),
                                expected=", ".join(theirs), got=", ".join(ranking[:k])))
    return {"workload": source, "yours": ranking[:k], "reference": theirs}


#: This module's kinds, registered in tutor/child/checks/kinds/__init__.py.
KINDS = (Kind("profile", run, canary="profile", weight=4.0, threads=1, profiles=True),)
