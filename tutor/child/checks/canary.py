"""Canaries: questions whose answers the judge knows, asked of the runner like real ones.

Some facts only the runner can see: what a call did to its arguments, whether a result shares
memory with one of them, ``grad_fn``, the modes a module's forward ran under, the memory a result
keeps alive, profiler events, timings. The runner reports them, and a runner rewritten by the
learner's code could report anything. So in every check case the judge also asks, at a random
moment, for a call whose facts it can work out itself (a small function of its own on fresh
random tensors, travelling and answered exactly as a real call does, with the same options;
for a module check, a call that switches a module's modes and changes a parameter, a buffer and a
setting, on a module of the judge's or one made in the runner).
A wrong answer means the runner lies: the check's status becomes ``tampered``, never ``passed``.

What this catches: a runner that lies about a kind of fact across the board (always "unchanged",
always "grad disabled", always the same profile). What it cannot catch: a runner that inspects
every function it is asked to call and lies only about the learner's own (the threat model in
docs/architecture.md says so).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from tutor.child.checks import modules, protocol, refs, render, values
from tutor.words import engine as words
from tutor.child.checks.kinds import REGISTRY
from tutor.child.checks.remote import RemoteRaised, Tampered as Tampered  # probe catches canary.Tampered

if TYPE_CHECKING:
    from typing import Any

    from tutor.child.checks.remote import Session

_RNG = random.SystemRandom()
_LABEL = "<check canary>"

#: Pieces of the tensor canary: each exercises facts the runner reports (an argument changed in
#: place, a view sharing an argument's memory, a copy, an autograd graph, a detached result).
_PIECES = [
    "    t[0] += k",
    "    out.append(u[1])",
    "    out.append(u[0].clone() + k)",
    "    out.append((u.detach().requires_grad_() * k).sum(0))",
    "    out.append((u.detach().requires_grad_() * k).detach())",
    "    out.append(float(u.sum()) + k)",
]
_MODE = ("def step(m, x, g):\n"
         "    torch.set_grad_enabled(g)\n"
         "    return m(x)\n")
_INFERENCE = ("def step(m, x, g):\n"
              "    with torch.inference_mode():\n"
              "        return m(x)\n")
_MODULE_MAKE = ("def step(n, w):\n"
                "    return nn.Sequential(nn.Linear(n, w), nn.BatchNorm1d(w), nn.Dropout(0.5))\n")
#: One submodule ends in each mode, so a runner that reports one mode for all is always wrong; a
#: parameter, a buffer and a setting change. (No BatchNorm forward in training mode: its kernel
#: starts torch's thread pool, which costs 10 ms or more per process on a busy machine.)
_MODULE_STEP = ("def step(m, x, flag, p):\n"
                "    m.train(flag)\n"
                "    m[2].train(not flag)\n"
                "    with torch.no_grad():\n"
                "        m[0].bias.add_(x[0])\n"
                "        m[1].running_mean.add_(x.sum(0))\n"
                "        m[1].num_batches_tracked += 1\n"
                "    m[2].p = p\n")
_MEMORY = "def step(n):\n    return [torch.zeros(n, 8, dtype=torch.float32) for _ in range(2)]\n"
_PROFILE = ("def step():\n"
            "    for _ in range(mm):\n"
            "        a @ b\n"
            "    for _ in range(exp):\n"
            "        torch.exp(c)\n")
_TIMING_FAST = "def step():\n    return 1\n"
_TIMING_SLOW = "def step():\n    time.sleep(0.004)\n"


def _and(names: list[str]) -> dict[str, Any] | str:
    """Names one after another ("a and b and c"), as one said."""
    return words.joined(names, "checks.and_then")


def _function(source: str, scope: dict[str, Any], label: str = _LABEL) -> Any:
    namespace = {"torch": refs.torch_module, "nn": refs.nn_module, **scope}
    refs.exec_(refs.compile_(source, label, "exec"), namespace)
    return namespace["step"]


def coin() -> bool:
    """Before the real question or after it: the runner cannot tell which comes first."""
    return _RNG.random() < 0.5


def _generator(seed: int | None) -> Any:
    """The canary's own generator: its tensors never come from (or move) the judge's global
    one, which a case's inputs are drawn from. Asked first in a case, a canary draws from the
    case's seed as the case's setup does; asked last, from a fresh one."""
    from tutor.child.checks.protocol import fresh_seed

    return refs.torch_module.Generator().manual_seed(seed if seed is not None else fresh_seed())


def ask(session: Session, kind: str, label: str = _LABEL, seed: int | None = None,
        check: dict[str, Any] | None = None) -> None:
    """One canary fitting the check's kind; raises Tampered on a wrong answer. ``label`` is the
    check's own (its functions' file name), so the canary's code is named like the check's;
    ``seed`` is the case's when the canary comes before the case's own requests; ``check``: the
    check itself, whose warm-up, repeats and threads a profile or timing canary asks for, as the
    check's own request does (no field of the request tells them apart)."""
    if not session.alive:
        return
    check = check or {}
    generator = _generator(seed)
    CANARIES[REGISTRY[kind].canary](session, label, generator, check)


def _repeats(check: dict[str, Any], warmup: int, repeat: int) -> tuple[int, int, int]:
    """(warm-up, repeats, threads) as the check's own request asks them (its defaults as the
    kind's: ``kinds/profile.py``, ``kinds/timing.py``)."""
    threads = check.get("threads", 1)
    return (check.get("warmup", warmup), check.get("repeat", repeat),
            threads if refs.type_(threads) is int and 1 <= threads <= 256 else 1)


def _fingerprint(session: Session, value: Any, args: tuple[Any, ...]) -> object:
    tensors = [a for a in args if render.is_tensor(a)]

    def one(item: Any) -> Any:
        if render.is_tensor(item):
            shares = [i for i, t in enumerate(tensors) if values.storage_ptr(t) == values.storage_ptr(item)]
            return ("tensor", render.dtype_name(refs.t_dtype(item)), render.shape(item),
                    refs.t_tolist(refs.t_detach(item)), refs.bool_(refs.t_requires_grad(item)),
                    refs.bool_(refs.t_is_leaf(item)), render.grad_fn_name(item, session.facts_of(item)), shares)
        if render.is_number(item):
            return ("number", render.number(item))
        if refs.type_(item) in (list, tuple):
            return [one(v) for v in item]
        return ("other", refs.type_(item).__name__)

    return one(value), [one(a) for a in args]


def _tensor(session: Session, label: str, generator: Any) -> None:
    pieces = list(_PIECES)
    _RNG.shuffle(pieces)
    source = "def step(t, u, k):\n    out = []\n" + "\n".join(pieces) + "\n    return out\n"
    function = _function(source, {}, label)
    k = _RNG.choice([0.5, 1.5, 2.0, -3.0])
    mine = (refs.torch_module.randn(_RNG.randint(2, 5), _RNG.randint(2, 4), generator=generator),
            refs.torch_module.randn(_RNG.randint(2, 5), _RNG.randint(2, 4), generator=generator))
    theirs = tuple(refs.t_clone(t) for t in mine)
    expected = _fingerprint(session, function(*mine, k), mine)
    got = _fingerprint(session, _call(session, function, (*theirs, k)), theirs)
    if got != expected:
        raise Tampered(words.say("checks.canary.call"))


def _call(session: Session, function: Any, args: tuple[Any, ...]) -> Any:
    from tutor.child.checks.remote import adopt_modes, current_modes

    modes = current_modes()
    try:
        return session.call({"callee": True}, (function, *args), {})
    except RemoteRaised as raised:
        raise Tampered(words.say("checks.canary.raised", type=raised.type_name)) from None
    finally:
        adopt_modes(modes)  # whatever the canary switched stays in the runner


def _mode(session: Session, label: str, generator: Any, outputs: list[str]) -> None:
    """``outputs``: the submodules whose output dtypes the check's own request watches; the
    canary's request watches the same (it always watched ``Linear``, and a check that watches
    nothing asked ``outputs: []``: a runner could tell them apart)."""
    order = [True, False]
    _RNG.shuffle(order)
    for inference in order:
        _one_mode(session, label, inference, generator, outputs)


def _linear(generator: Any) -> Any:
    """A Linear(3, 2) whose parameters come from ``generator``: made on the meta device (so its
    initialisation draws nothing from the judge's generators), then given parameters of its own.
    ``to_empty()`` would import sympy (torch's meta-to-CPU path): 0.4-0.7 s of CPU in every
    judge that asks a mode canary, most of a Check of numpy-dtype (issue 55)."""
    module = refs.nn_module.Linear(3, 2, device="meta")
    for name in ("weight", "bias"):
        shape = getattr(module, name).shape
        setattr(module, name, refs.nn_module.Parameter(refs.torch_module.randn(shape, generator=generator)))
    return module


def _one_mode(session: Session, label: str, inference: bool, generator: Any, outputs: list[str]) -> None:
    function = _function(_INFERENCE if inference else _MODE, {}, label)
    module = _linear(generator)
    x = refs.torch_module.randn(2, 3, generator=generator)
    grad = _RNG.random() < 0.5
    before = dict(_modes())
    observe, observed = session.observe, session.observed
    session.observe, session.observed = {"module": module, "outputs": list(outputs)}, []
    try:
        _call(session, function, (module, x, grad))
        report = session.observed[-1] if session.observed else {}
    finally:
        session.observe, session.observed = observe, observed
    during = dict(before, grad_enabled=False, inference_mode=True) if inference else dict(before, grad_enabled=grad)
    after = before if inference else dict(before, grad_enabled=grad)
    seen = report.get("seen") or []
    # A Linear's output follows an autocast the learner's own call left on (the canary asks under
    # the modes a real question would have: that is no lie, and an honest learner's leak no tamper).
    dtype = before.get("autocast") or "float32"
    wrong_dtype = "Linear" in outputs and report.get("outputs", {}).get("Linear") != [dtype]
    if refs.len_(seen) != 1 or seen[0] != during or report.get("after") != after or \
            report.get("before") != before or wrong_dtype:
        raise Tampered(words.say("checks.canary.modes"))


def _module_state(module: Any) -> tuple[Any, ...]:
    """What a module check reads: each submodule's mode, the settings, every tensor's values."""
    return ([(name, modules.training(sub)) for name, sub in modules.walk(module)],
            sorted(modules.settings(module).items()),
            [(name, render.shape(tensor), refs.t_tolist(refs.t_detach(tensor)))
             for which in ("_parameters", "_buffers") for name, tensor in modules.group(module, which)])


def _same_state(got: tuple[Any, ...], expected: tuple[Any, ...]) -> bool:
    if got[0] != expected[0] or got[1] != expected[1] or refs.len_(got[2]) != refs.len_(expected[2]):
        return False
    for (name, shape, values), (want_name, want_shape, want_values) in zip(got[2], expected[2]):
        if name != want_name or shape != want_shape:
            return False
        float64 = refs.torch_module.float64
        if not refs.bool_(refs.torch_module.allclose(refs.torch_module.tensor(values, dtype=float64),
                                                     refs.torch_module.tensor(want_values, dtype=float64),
                                                     rtol=1e-4, atol=1e-5)):
            return False
    return True


def _copy_of(module: Any, n: int, w: int, label: str) -> Any:
    """The judge's own module with the same state, to work out what the call must do to it."""
    mine = _function(_MODULE_MAKE, {}, label)(n, w)
    tensors = dict(modules.group(module, "_parameters") + modules.group(module, "_buffers"))
    with refs.no_grad():
        for which in ("_parameters", "_buffers"):
            for name, tensor in modules.group(mine, which):
                source = tensors.get(name)
                if source is None or render.shape(source) != render.shape(tensor):
                    raise Tampered(words.say("checks.canary.module_changed"))
                tensor.copy_(source)
    subs = dict(modules.walk(module))
    for name, sub in modules.walk(mine):
        modules.attrs(sub)["training"] = modules.training(subs[name]) if name in subs else True
    return mine


def _module(session: Session, label: str, generator: Any) -> None:
    """A module's state after a call, both ways a check meets one: built by the judge (what the
    call did is written back) or living in the runner (the judge's mirror of it is refreshed)."""
    n, w = _RNG.randint(2, 5), _RNG.randint(2, 6)
    flag, p = _RNG.random() < 0.5, _RNG.choice([0.1, 0.25, 0.3, 0.7])
    x = refs.torch_module.randn(_RNG.randint(2, 5), w, generator=generator)
    step = _function(_MODULE_STEP, {}, label)
    if _RNG.random() < 0.5:  # the judge's own module, sent with the call
        module = _function(_MODULE_MAKE, {}, label)(n, w)
        with refs.no_grad():
            for tensor in module.parameters():
                tensor.copy_(refs.torch_module.randn(tensor.shape, generator=generator))
    else:  # made where the learner's code runs
        module = _call(session, _function(_MODULE_MAKE, {}, label), (n, w))
        if not modules.is_module(module):
            raise Tampered(words.say("checks.canary.not_a_module"))
    mine = _copy_of(module, n, w, label)
    step(mine, refs.t_clone(x), flag, p)
    _call(session, step, (module, x, flag, p))
    if not _same_state(_module_state(module), _module_state(mine)):
        raise Tampered(words.say("checks.canary.module_state"))


def _modes() -> protocol.Modes:
    from tutor.child.checks.remote import current_modes

    return current_modes()


def _memory(session: Session, label: str) -> None:
    function = _function(_MEMORY, {}, label)
    n = _RNG.randint(3, 40)
    measure, kept = session.measure, session.kept
    session.measure, session.kept = "graph", []
    try:
        _call(session, function, (n,))
        got = session.kept[-1] if session.kept else None
    finally:
        session.measure, session.kept = measure, kept
    if got != 2 * n * 8 * 4:
        raise Tampered(words.say("checks.canary.memory"))


def _profile(session: Session, label: str, generator: Any, warmup: int = 0, repeat: int = 2, threads: int = 1) -> None:
    """Two profiled runs of a workload whose counts and top operator the judge knows: a random
    number of matrix products and of exponentials, one of the two kinds large and the other
    tiny, at random. Counts are exact: a wrong count is a lie. The large kind must be the top
    operator in at least one run (a preemption on a busy machine can put a trivial operator
    first in one run, seen: ``aten::resolve_conj``, not in both). A made-up profile, the same
    whatever ran, is wrong about the counts or the top operator most of the time."""
    big = _RNG.choice(["aten::mm", "aten::exp"])
    mm, exp = _RNG.randint(1, 3), _RNG.randint(1, 3)
    side = _RNG.choice([192, 224, 256]) if big == "aten::mm" else 8
    values = {"a": refs.torch_module.randn(side, side, generator=generator),
              "b": refs.torch_module.randn(side, side, generator=generator),
              "c": refs.torch_module.randn(*((_RNG.choice([320, 384]),) * 2 if big == "aten::exp" else (8, 8)),
                                           generator=generator),
              "mm": mm, "exp": exp}
    function = _function(_PROFILE, values, label)
    runs = session.repeat("profile", [function], warmup, repeat, threads)
    if refs.type_(runs) is not list or refs.len_(runs) != repeat:
        raise Tampered(words.say("checks.canary.profile_runs", repeat=repeat))
    tops = []
    for run in runs:
        for op, count in (("aten::mm", mm), ("aten::exp", exp)):
            row = run.get(op) if refs.type_(run) is dict else None
            if refs.type_(row) is not list or refs.len_(row) != 4 or row[2] != count:
                raise Tampered(words.say("checks.canary.profile_calls", op=op, count=count))
            # called directly: exp by torch.exp; mm only from inside aten::matmul (a @ b)
            direct = 0 if op == "aten::mm" else count
            if row[3] != direct:
                raise Tampered(words.say("checks.canary.profile_direct", op=op, count=direct))
        tops.append(max(run, key=lambda op: run[op][0] if refs.type_(run[op]) is list and run[op] else 0.0))
    if repeat >= 2 and big not in tops:  # one run alone may be preempted: no verdict on its order
        raise Tampered(words.say("checks.canary.profile_rank", big=big, ranked=_and(sorted(set(tops)))))


def _timing(session: Session, label: str, warmup: int = 0, repeat: int = 3, threads: int = 1) -> None:
    import time

    fast = _function(_TIMING_FAST, {}, label)
    slow = _function(_TIMING_SLOW, {"time": time}, label)
    times = session.repeat("time", [fast, slow], warmup, repeat, threads)
    fast_times = (times or {}).get("fast") or []
    slow_times = (times or {}).get("slow") or []
    if refs.len_(slow_times) != repeat or refs.len_(fast_times) != repeat or \
            not all(refs.type_(t) in (int, float) for t in fast_times + slow_times) or min(slow_times) < 0.004 or \
            sorted(fast_times)[repeat // 2] >= sorted(slow_times)[repeat // 2]:
        raise Tampered(words.say("checks.canary.timing"))


#: canary name -> ``ask(session, label, generator, check)``; each kind names its own
#: (``Kind.canary`` in tutor/child/checks/kinds/), so a new kind never gets one it did not choose.
CANARIES = {
    "tensor": lambda session, label, generator, check: _tensor(session, label, generator),
    "mode": lambda session, label, generator, check: _mode(session, label, generator,
                                                           [str(key) for key in check.get("output_dtypes") or {}]),
    "module": lambda session, label, generator, check: _module(session, label, generator),
    "memory": lambda session, label, generator, check: _memory(session, label),
    "profile": lambda session, label, generator, check: _profile(session, label, generator, *_repeats(check, 2, 5)),
    "timing": lambda session, label, generator, check: _timing(session, label, *_repeats(check, 3, 15)),
}
