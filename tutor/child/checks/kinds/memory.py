"""``memory``: how much memory what a call returns keeps alive, as the number of steps grows.

On the CPU the measure is exact and noise-free: the bytes of every tensor reachable from the
returned objects, including through their autograd graphs (``grad_fn.next_functions``, the
saved tensors each node exposes as ``_saved_*``, leaves behind ``AccumulateGrad.variable``),
each storage counted once. RSS is offered for signals too large to miss; on a CUDA run
``torch.cuda.memory_allocated`` is used.
"""

from __future__ import annotations

from typing import Any

from tutor.child.checks import modules, refs, render
from tutor.words import engine as words
from tutor.child.checks.context import Case, Failed
from tutor.child.checks.vocab import MemoryData
from tutor.child.checks.kinds.kind import Kind

_SAVED_NAMES: dict[type, list[str]] = {}
_MAX_OBJECTS = 200_000


def _saved_names(node: Any) -> list[str]:
    kind = refs.type_(node)
    names = _SAVED_NAMES.get(kind)
    if names is None:
        names = [n for n in refs.dir_(node) if n.startswith("_saved_") and not n.endswith(("_sym_sizes", "_sym_strides"))]
        _SAVED_NAMES[kind] = names
    return names


class Reachable:
    """Everything tensor-shaped reachable from a value; storages deduplicated."""

    def __init__(self) -> None:
        self.storages: dict[int, int] = {}
        self.devices: set[str] = set()
        self._seen: set[int] = set()

    def add_tensor(self, tensor: Any) -> None:
        if refs.id_(tensor) in self._seen:
            return
        self._seen.add(refs.id_(tensor))
        device = refs.t_device(tensor)
        self.devices.add(device.type)
        if device.type != "meta":
            storage = refs.t_untyped_storage(tensor)
            pointer = refs.storage_data_ptr(storage)
            self.storages[pointer or refs.id_(storage)] = refs.storage_nbytes(storage)
        if refs.t_is_leaf(tensor):  # only leaves keep a .grad
            grad = refs.t_grad(tensor)
            if grad is not None:
                self.add_tensor(grad)
        node = refs.t_grad_fn(tensor)
        if node is not None:
            self.add_graph(node)

    def add_graph(self, root: Any) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            if node is None or refs.id_(node) in self._seen or refs.len_(self._seen) > _MAX_OBJECTS:
                continue
            self._seen.add(refs.id_(node))
            for name in _saved_names(node):
                try:
                    saved = refs.getattr_(node, name)
                except (RuntimeError, AttributeError):  # freed by backward(): keeps nothing alive
                    continue
                for item in saved if refs.type_(saved) in (tuple, list) else (saved,):
                    if render.is_tensor(item):
                        self.add_tensor(item)
            variable = refs.getattr_(node, "variable", None)
            if variable is not None and render.is_tensor(variable):
                self.add_tensor(variable)
            for child, _ in refs.getattr_(node, "next_functions", ()):
                stack.append(child)

    def add(self, value: Any, depth: int = 0) -> None:
        if refs.len_(self._seen) > _MAX_OBJECTS:
            return
        if refs.isinstance_(value, refs.Tensor):
            self.add_tensor(value)
            return
        if depth > 20 or refs.id_(value) in self._seen:
            return
        self._seen.add(refs.id_(value))
        kind = refs.type_(value)
        if kind in (list, tuple, set, frozenset):
            for item in value:
                self.add(item, depth + 1)
        elif kind is dict:
            for item in value.values():
                self.add(item, depth + 1)
        elif modules.is_module(value):
            for _, tensor in modules.group(value, "_parameters") + modules.group(value, "_buffers"):
                self.add_tensor(tensor)
        elif kind.__module__ not in ("builtins",) and refs.hasattr_(value, "__dict__"):
            try:
                members = refs.object_getattribute(value, "__dict__")
            except (AttributeError, TypeError):
                return
            if refs.type_(members) is dict:
                for item in members.values():
                    self.add(item, depth + 1)

    @property
    def bytes(self) -> int:
        return sum(self.storages.values())


def _rss() -> int:
    return refs.resident_bytes()


def fmt_bytes(count: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if abs(count) < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GiB"


def run(check: MemoryData, case: Case) -> dict[str, Any]:
    steps = check["steps"]
    measure = check["measure"]
    curve = []
    used: str = measure
    session = case.session
    held = []  # what the learner's call left allocated in its process, result aside (graph only)
    for n in steps:
        case.namespace["n"] = n
        # a call into the learner's code is measured where it runs
        session.measure, session.kept, session.heap_left = ("graph" if measure == "auto" else measure), [], []
        try:
            kept, used = _one_step(check, case, measure)
        finally:
            session.measure = None
        curve.append([n, max(int(kept), 0)])
        if session.heap_left and used == "graph":
            held.append([n, max(session.heap_left[-1], int(kept))])
    data = {"measure": used, "curve": curve}
    _verdict(check, curve, data)
    if check["expect"] == "flat" and refs.len_(held) == refs.len_(steps) >= 3:
        _held_verdict(check, held[1:], data)  # the first call pays what a process allocates once
    return data


def _one_step(check: MemoryData, case: Case, measure: str) -> tuple[int, str]:
    baseline = 0
    if measure in ("rss", "cuda"):  # a full collection costs ~0.5 s with torch loaded
        refs.gc_collect()
    if measure == "rss":
        baseline = _rss()
    elif measure == "cuda":
        refs.cuda_synchronize()
        baseline = refs.cuda_memory_allocated()
    result = case.eval(check["call"])
    session = case.session
    if session.kept:  # the runner measured the learner's call's result
        return session.kept[-1], ("graph" if measure == "auto" else measure)
    if measure == "rss":
        refs.gc_collect()
        return _rss() - baseline, measure
    if measure == "cuda":
        refs.cuda_synchronize()
        return refs.cuda_memory_allocated() - baseline, measure
    reachable = Reachable()
    reachable.add(result)
    return reachable.bytes, "graph"


#: What a call may leave allocated beyond its result without counting against a flat curve (a
#: cache torch fills, a dict that grew, a list of floats).
HEAP_ALLOWANCE = 16 * 1024


def _held_verdict(check: MemoryData, held: list[Any], data: dict[str, Any]) -> None:
    """Memory kept outside the result (a module-level list of losses with their graphs, while
    the returned values are floats) grows with the steps too: the C heap a call leaves in use
    is measured around it, and must stay flat as the result's must (issue 26)."""
    (first_n, first), (last_n, last) = held[0], held[-1]
    tolerance = check["tolerance"]
    slack = check["slack_per_step"] * (last_n - first_n)
    if last <= first * (1 + tolerance) + slack + HEAP_ALLOWANCE:
        return
    per_step = (last - first) / (last_n - first_n)
    summary = words.say("checks.memory.summary", first=fmt_bytes(first), first_n=first_n, last=fmt_bytes(last),
                        last_n=last_n)
    raise Failed(words.say("checks.memory.held", summary=summary, per_step=fmt_bytes(per_step)),
                 expected=words.say("checks.phrase.flat"),
                 got=words.say("checks.phrase.grows_outside", per_step=fmt_bytes(per_step)),
                 data=dict(data, held=held))


def _verdict(check: MemoryData, curve: list[Any], data: dict[str, Any]) -> None:
    (first_n, first), (last_n, last) = curve[0], curve[-1]
    tolerance = check["tolerance"]
    slack = check["slack_per_step"] * (last_n - first_n)
    flat = last <= first * (1 + tolerance) + slack
    per_step = (last - first) / (last_n - first_n)
    summary = words.say("checks.memory.summary", first=fmt_bytes(first), first_n=first_n, last=fmt_bytes(last),
                        last_n=last_n)
    if check["expect"] == "flat" and not flat:
        raise Failed(words.say("checks.memory.grows", summary=summary, per_step=fmt_bytes(per_step)),
                     expected=words.say("checks.phrase.flat"),
                     got=words.say("checks.phrase.grows_by", per_step=fmt_bytes(per_step)), data=data)
    if check.get("expect") == "grows" and flat:
        raise Failed(words.say("checks.memory.flat", summary=summary),
                     expected=words.say("checks.phrase.grows"), got=words.say("checks.phrase.flat"), data=data)


#: This module's kinds, registered in tutor/child/checks/kinds/__init__.py.
KINDS = (Kind("memory", run, canary="memory", weight=3.0),)
