"""Grading: the parent side of checking code, and grading a class.

Above ``tutor.pack`` (the pack format) and ``tutor.sandbox`` (running code): it builds a check's
payload from a validated exercise, asks the sandbox to run it, and turns reports into rows,
gradebooks and autograder bundles. ``tutor.pack`` never imports it.
"""
