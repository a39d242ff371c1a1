"""The tutor's base error: a failure the user can act on, reported as one line.

Every error the parent side raises for the user to read (a bad pack, configuration, roster or
hand-in, a sandbox that cannot start, a port in use) derives from :class:`TutorError`, so the
command line reports all of them in one place (``tutor.cli.main.main`` and
``tutor.cli.common.guarded``: ``torch-tutor: error: <message>``, exit code 2) and never as a
traceback. A leaf module: standard library only, importable from every layer but the child side
(``tutor.child.checks``, ``tutor.child.worker``), whose exceptions are its own control flow (a failed
check, the learner's exception, a runner that went away) and never reach a user as such.
"""

from __future__ import annotations


class TutorError(Exception):
    """A failure the user can act on; its message is the one line they read."""
