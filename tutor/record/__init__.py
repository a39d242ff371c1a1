"""The learner's record: the progress store, spaced review and hand-ins.

Reads the pack format (tutor.pack); the pack never reads it (pyproject's import contracts).
"""
