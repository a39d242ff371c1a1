"""Which code may need what the workers load only on demand (``worker.startup.SPARE_DEFERS``:
``torch._dynamo``, which the profiler's first use imports). Read on both sides: by the worker for
a run's request, by the tutor for the step a learner is on. Imports nothing.
"""

from __future__ import annotations

#: Words in a run's code, or in its checks, that say it may reach what imports ``torch._dynamo``
#: on first use, found on torch 2.13: the profiler, ``torch.compile``, an optimizer's ``step``,
#: non-reentrant ``torch.utils.checkpoint``, ``torch.use_deterministic_algorithms``, the meta
#: device (a module's first forward there imports 822 modules: 1.3 s of CPU). A run that
#: reaches it without them still works; it pays the import itself (1.2-2.4 s of CPU).
DYNAMO_WORDS = ("profile", "compile", "_dynamo", "_inductor", "optim", "checkpoint", "deterministic", "meta")


def may_need_deferred(text: str) -> bool:
    """Whether code (or checks, as text) with ``text`` may reach what the workers defer
    (``worker.startup.SPARE_DEFERS``): a run's request (``worker.judging.needs_dynamo``), or a
    step the tutor expects runs of (``Sandbox.expect``, ``tutor.app.engine.may_profile``)."""
    return any(word in text for word in DYNAMO_WORDS)
