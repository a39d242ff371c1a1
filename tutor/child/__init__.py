"""The child side: the worker and the check engine it runs, a package each.

Runs inside the sandbox, possibly under another interpreter that has torch but none of the
tutor's dependencies: the standard library, torch, numpy, tutor.words and tutor.sandbox.wire only.
"""
