"""One module per check kind; each ends with ``KINDS``, the :class:`~tutor.child.checks.kinds.kind.Kind`
declarations of the kinds it judges, and is registered in ``MODULES`` below.

A kind's ``run(check, case)`` raises :class:`tutor.child.checks.context.Failed` with the learner-facing
sentence when the learner's code misbehaves, lets :class:`~tutor.child.checks.context.CodeRaised`
through when it raises, and may return JSON-able data (a profile table, a memory curve) for the
app to draw. ``REGISTRY`` (kind name -> Kind) is what the probe and the canaries read.

Adding a kind: docs/architecture.md, "Adding a check kind".
"""

from __future__ import annotations

from importlib import import_module

from tutor.child.checks.kinds.kind import Kind

#: The registered modules (under tutor/child/checks/kinds/), in the order their kinds are listed.
MODULES = ("tensor", "module", "mode", "unchanged", "raises", "memory", "profile", "timing", "expr")


def _registry() -> dict[str, Kind]:
    found: dict[str, Kind] = {}
    for name in MODULES:
        for kind in import_module(f"{__name__}.{name}").KINDS:
            if not isinstance(kind, Kind) or kind.name in found:
                raise TypeError(f"tutor/child/checks/kinds/{name}.py: KINDS must hold Kind declarations with new names "
                                f"(got {kind!r})")
            found[kind.name] = kind
    return found


REGISTRY: dict[str, Kind] = _registry()
