"""One module per isolation backend, strongest first in ``MODULES``. Each ends with ``BACKEND``, its
:class:`Backend` declaration: how it is probed (and why it is not available), how it wraps a
worker's command, what it tells the worker to do for each run, how doctor describes it, and whether
`grade` may run strangers' code under it without ``--unisolated``. Every table is built from these
declarations: the levels (``LEVELS``, the ``isolation`` setting's choices), :func:`choose`
and :func:`containment`, the worker's command (``process.py``), doctor's lines, `grade`'s
refusal and its record of what was accepted, the autograder's words, and the hub's report.

Adding a backend: docs/architecture.md, "Adding a kind of anything".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Callable

from tutor.sandbox import isolation
from tutor.sandbox.isolation import Interpreter, IsolationError, IsolationInfo
from tutor.words.i18n import english, said


@dataclass
class Probe:
    """What :func:`choose` hands each backend it tries, strongest first."""

    requested: str  # the setting: "auto" or a backend's name
    python: str  # the worker interpreter
    process_limit: str  # "cgroup", "rlimit" or "none": how the number of a run's processes is limited
    #: each stronger option tried and why it was not used, in order: a backend that is not
    #: available adds its reasons here (and its ``IsolationInfo`` lists the stronger ones' as ``not_used``)
    not_used: list[dict[str, Any]] = field(default_factory=list)  # saids (tutor.words.i18n), English beside them in IsolationInfo


@dataclass(frozen=True, kw_only=True)
class Backend:
    """One isolation backend, declared once in its module (``BACKEND = Backend(...)``)."""

    #: the level's name: a value of the ``isolation`` setting and ``IsolationInfo.level``
    name: str
    #: ``probe(Probe)``: the ``IsolationInfo`` of runs under it, or None when it is not available
    #: here, having added why to ``Probe.not_used``. The weakest backend is always available.
    probe: Callable[[Probe], IsolationInfo | None]
    #: ``wrap(info, interpreter, scratch_root, private)``: what goes before a worker's command (the
    #: worker is started under it); ``private``: folders to keep from the runs where they are visible
    wrap: Callable[[IsolationInfo, Interpreter, str, tuple[str, ...]], list[str]]
    #: ``containment(info)``: the worker's instructions for each run (its ``containment`` config)
    containment: Callable[[IsolationInfo], dict[str, Any]]
    #: ``doctor(info)``: doctor's lines about it after the isolation line, as (``tutor.words.i18n``
    #: key, its fields) pairs, since the sandbox does not word things for learners
    doctor: Callable[[IsolationInfo], list[tuple[str, dict[str, Any]]]]
    #: how the autograder's results name the isolation inside its container (``info`` in force)
    in_container: Callable[[IsolationInfo], str]
    #: runs are isolated from the machine: `grade` runs strangers' code under it without
    #: ``--unisolated`` (and records nothing as accepted), and doctor's container report says it works
    isolates: bool


#: The registered modules (under tutor/sandbox/backends/), strongest first: ``auto`` takes the first
#: that is available.
MODULES = ("bwrap", "none")


def _registry() -> dict[str, Backend]:
    found: dict[str, Backend] = {}
    for name in MODULES:
        backend = getattr(import_module(f"{__name__}.{name}"), "BACKEND", None)
        if not isinstance(backend, Backend) or backend.name in found:
            raise TypeError(f"tutor/sandbox/backends/{name}.py must end with BACKEND = Backend(name=..., ...), "
                            f"a new name (got {backend!r})")
        found[backend.name] = backend
    return found


REGISTRY: dict[str, Backend] = _registry()
#: The isolation levels, strongest first; ``auto`` picks the strongest that works.
LEVELS: tuple[str, ...] = tuple(REGISTRY)


def of(level: str) -> Backend:
    """The backend of a level in force (``IsolationInfo.level``)."""
    return REGISTRY[level]


def choose(requested: str, python: str) -> IsolationInfo:
    """Resolve ``auto`` or a level (a backend's name, ``tutor.sandbox.backends``) into what will
    actually protect the runs: ``auto`` takes the strongest backend available, a level that is not
    available fails with why."""
    if requested not in ("auto", *LEVELS):
        raise ValueError(f"isolation must be auto, {', '.join(LEVELS[:-1])} or {LEVELS[-1]}, "
                         f"not {requested!r}")
    # Without a cgroup, root gives each run a uid of its own and others count their own tasks, so
    # RLIMIT_NPROC applies in the fallback.
    process_limit = "cgroup" if isolation.cgroup_available() else "rlimit" if isolation._has_rlimits() else "none"
    probe = Probe(requested, python, process_limit)
    for backend in REGISTRY.values():
        if requested not in ("auto", backend.name):
            continue
        info = backend.probe(probe)
        if info is not None:
            return info
        if requested == backend.name:
            why = isolation._joined(probe.not_used) if probe.not_used else said("isolation.why.no_bwrap")
            raise IsolationError(english(why), why)
    raise IsolationError(english(isolation._joined(probe.not_used)) if probe.not_used else "no isolation backend works here")


def containment(info: IsolationInfo) -> dict[str, Any]:
    """The worker's instructions for each run, from the backend in force."""
    return of(info.level).containment(info)
