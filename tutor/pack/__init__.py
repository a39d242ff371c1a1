"""The pack format and its loading: records, validation, the loader, discovery, the pack cache.

Knows nothing of the learner's record (tutor.record), the sandbox, the child side, grading, the
app or the command line; imports neither textual nor torch (pyproject's import contracts).
"""
