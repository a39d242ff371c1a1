"""Where the learner's code runs during checks: under this module's frames, never the server's.

The runner's server (``tutor.child.checks.server``) answers the judge from inside the learner's process.
Its records (what a call received, the modes a forward ran under, the measurements, the answer
being made) once lived in the frames of the methods that called the learner's function, so the
function could walk up to them (``sys._getframe().f_back``) and edit them (issue 50). Now every
server method that runs learner code is a generator: it yields a job (a function and its
arguments) and :func:`drive`, here, calls it and sends back its value, or throws back its
exception wrapped in :class:`Raised`. While the learner's code runs, the server's generators are
suspended: their frames are on no stack, and reached only through a generator's ``gi_frame`` or
the garbage collector, which the seal's audit hook refuses (``tutor.child.checks.seal``). The frames
the learner's code can walk to are this module's and the runner's start-up: none holds the
server. Only this module's functions and :class:`Callback` (which holds no server) are ever under
the learner's code; the seal refuses a frame whose callers include the server's own (learner code
that runs inside the server's code: a dunder method of one of its objects).
"""

from __future__ import annotations

import sys
from typing import Any

from tutor.child.checks import refs

perf_counter = refs.perf_counter


class Raised(BaseException):
    """The learner's exception, thrown into a server generator: ``error``, and ``traceback`` as it
    was when it reached :func:`drive` (the learner's frames and this module's only). The server
    raises ``error`` again and puts that traceback back once it has caught it, so that it never
    carries the server's frames to the learner's code that may keep it."""

    def __init__(self, error: BaseException):
        super().__init__()
        self.error = error
        self.traceback = error.__traceback__
        self.context = error.__context__


def drive(gen: Any) -> Any:
    """Run a server generator (``Server.serving``, ``Server.callback``): each job it yields (the
    learner's code: a function, its arguments and keyword arguments, and ``timed``) is called here,
    its value sent back (a timed job's: the seconds it took, after a CUDA synchronisation if
    ``timed`` is true) or its exception thrown back; what the generator returns is returned. The
    learner's code runs with this frame under it. Its locals cannot be rebound by the learner's
    code without a trace function or native code, which the seal refuses or leaves open."""
    send, throw = gen.send, gen.throw
    ok = True
    outcome: Any = None  # the last job's value, or its exception
    floor = (refs.function_mode_depth(), refs.dispatch_mode_depth())  # modes pushed by whoever called
    while True:
        try:
            job = send(outcome) if ok else throw(Raised(outcome))
        except StopIteration as done:
            return done.value
        outcome = None  # the learner's next job must not find the last one's outcome here
        timed = job[3]
        try:
            if timed is None:
                ok, outcome = True, job[0](*job[1], **job[2])
            else:  # a timing's call: timed here, where nothing but the call itself is in the bracket
                started = perf_counter()
                job[0](*job[1], **job[2])
                if timed:
                    refs.cuda_synchronize()
                ok, outcome = True, perf_counter() - started
        except BaseException as error:  # noqa: BLE001 - the learner's exception goes to the server
            ok, outcome = False, error
        job = None
        leave_modes(floor)


def leave_modes(floor: tuple[Any, ...] = (0, 0)) -> None:
    """Torch function and dispatch modes the learner's code left pushed (above ``floor``, the
    depths before it ran) are popped before the server runs again: the server's own torch calls
    must not run the learner's code, which would then run with the server's frames under it."""
    while refs.function_mode_depth() > floor[0]:
        refs.pop_function_mode()
    while refs.dispatch_mode_depth() > floor[1]:
        refs.pop_dispatch_mode()


def here() -> Any:
    """This function's own frame (the caller reads ``f_back`` from it): the one frame the seal
    lets the server's code take, since no learner code ever runs above it."""
    return sys._getframe(0)


class Callback:
    """A function of the check's, handed to the learner's code: calling it asks the judge to run
    it there (its side effects belong to the check), answering the judge's requests meanwhile.
    It holds only the send of a generator of the server's (``Server.callbacks``), which makes one
    generator per call (``Server.callback``) for :func:`drive`: the server is never reachable
    from it."""

    __slots__ = ("_make", "fid")

    def __init__(self, make: Any, fid: int) -> None:
        self._make = make
        self.fid = fid

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return drive(self._make((self.fid, args, kwargs)))


DRIVE_CODE = drive.__code__
CALLBACK_CODE = Callback.__call__.__code__
