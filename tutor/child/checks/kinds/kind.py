"""What a check kind declares about itself on the child side (standard library only).

Each module of ``tutor/child/checks/kinds/`` ends with its ``KINDS``: one :class:`Kind` per check kind it
judges. ``tutor/child/checks/kinds/__init__.py`` registers the modules, and every table of the probe
(which function runs a kind, its share of the time, its pinned threads, its canary) is built from
these declarations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Kind:
    """One check kind as the judge runs it."""

    #: the ``kind:`` of its checks (``tutor.pack.check_models`` has the record with this tag)
    name: str
    #: ``run(check, case)``: raises ``Failed`` or lets ``CodeRaised`` through; may return data
    run: Callable[[Any, Any], Any]
    #: the canary asked in each case: a key of ``tutor.child.checks.canary.CANARIES``, chosen to ask the
    #: runner the same kind of question the check asks (so a runner that lies about that kind of
    #: fact is caught); required, so a kind without one fails at import
    canary: str
    #: its share of the time left for checks, relative to a plain check's 1
    weight: float = 1.0
    #: intra-op threads its cases run with by default (its check's ``threads`` overrides); None:
    #: no pin. A kind that ranks or times work pins them, as thread barriers on a busy machine
    #: distort self time.
    threads: int | None = None
    #: its checks profile the learner's code, which loads ``torch._dynamo`` on first use (a spawn-
    #: mode spare warms its runner up for it first: ``tutor.child.worker.judging.needs_dynamo``)
    profiles: bool = False
