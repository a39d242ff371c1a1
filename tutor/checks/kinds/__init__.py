"""One module per check kind; each exposes ``run(check, case) -> data | None``.

``run`` raises :class:`tutor.checks.context.Failed` with the learner-facing sentence when the
learner's code misbehaves, lets :class:`~tutor.checks.context.CodeRaised` through when it raises,
and may return JSON-able data (a profile table, a memory curve) for the app to draw.
"""
