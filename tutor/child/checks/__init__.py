"""The check engine's child side: runs inside the sandbox child, after the learner's code.

Only the standard library, torch and numpy may be imported here: the child may be another
interpreter (a learner's CUDA environment) that has torch but none of the tutor's dependencies.
The entry point is :func:`tutor.child.checks.probe.run_checks`.
"""
