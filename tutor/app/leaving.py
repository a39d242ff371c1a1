"""How the app leaves when it is told to from outside: a signal, or a terminal that has gone.

A signal handler runs between any two bytecodes of the main thread, inside Textual's own locks
too, so nothing the app does may happen in one: SIGTERM, SIGHUP and SIGINT are only written, by
the interpreter's C handler, to a socket pair (``signal.set_wakeup_fd``; a socket, because
Windows takes nothing else there). A watchdog thread waits on it and on the terminal itself (a hung-up terminal reports POLLHUP on standard input and
standard error: reads there only see end-of-file and writes fail), and a failed write to the
terminal (``textual_compat.guard_output``) is written to the same socket. On the first reason to
leave, the watchdog asks the app, on its own event loop, to write the drafts and exit (``ask``),
and sets a deadline; when the deadline passes, or a second SIGTERM or SIGINT comes, it ends the
sandbox's processes (``kill``) and the process itself with ``os._exit``, whatever the main
thread is doing. docs/architecture.md, "Leaving", says why.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import sys
import threading
import time
from types import FrameType
from typing import Any, Callable

#: Seconds from the first reason to leave until the process ends, whatever it is doing.
DEADLINE_S = 1.2
#: The signals that end the app (SIGHUP: its terminal closed).
SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")
#: A second one of these, once the app is leaving, ends it at once.
URGENT = ("SIGTERM", "SIGINT")
#: Bytes on the socket beside the signal numbers (which are 1 to 64).
GONE = 0  # a write to the terminal failed
STOP = 255  # the app ended by itself: the watchdog stops
HANDLED = 0x80  # added to a signal's number when its Python handler reports it (see _on_signal)
#: Exit code when the terminal went without a signal: as if it had sent SIGHUP.
GONE_CODE = 128 + 1
#: What puts a terminal back (left the alternate screen, cursor shown, no mouse or paste modes)
#: after a hard end; Textual writes the same when it stops normally.
RESET = ("\x1b[<u\x1b[?1049l\x1b[?25h\x1b[?1004l\x1b[?2004l\x1b[?7h"
         "\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l")
#: How often a request to an app whose loop is not running (yet, or any more) is tried again.
RETRY_S = 0.05
#: Seconds before the deadline at which ``rescue`` runs when the app has not answered ``ask``.
RESCUE_S = 0.35


class Leaving:
    """Watches for a reason to leave and makes sure the process does, in time.

    Args:
        ask: called once, from a thread of its own, with the exit code, on the first reason to
            leave: asks the app to write its drafts and exit. It may block (the app's loop is
            busy); RuntimeError means the app's loop is not running (not yet, or no more) and
            it is tried again every ``RETRY_S`` until the deadline.
        kill: ends the sandbox's processes at once, from any thread, taking no lock.
        rescue: called from a thread of its own ``RESCUE_S`` before the deadline when ``ask``
            has not returned (the app's loop is busy or stuck): writes what it can of the drafts
            from outside the loop. The hard end does not wait for it.
        deadline: seconds from the first reason to the hard end.
        terminal: the descriptors to watch for a hang-up (default: standard input and error).
    """

    def __init__(self, ask: Callable[[int], None], kill: Callable[[], None], *, deadline: float = DEADLINE_S,
                 terminal: tuple[int, ...] | None = None, rescue: Callable[[], None] | None = None):
        self.ask = ask
        self.kill = kill
        self.rescue = rescue
        self._answered = False
        self._rescued = False
        self.deadline = deadline
        self.terminal = terminal if terminal is not None else _terminal_fds()
        #: Why the app is leaving (its exit code), once it is.
        self.code: int | None = None
        self._leave_at: float | None = None
        self._read: socket.socket | None = None
        self._write: socket.socket | None = None
        self._previous: dict[int, object] = {}
        #: How many of each signal the wake-up descriptor and the Python handler reported.
        self._seen: tuple[dict[int, int], dict[int, int]] = ({}, {})
        self._previous_wakeup = -1
        self._watching = False
        self._thread: threading.Thread | None = None
        self._tty: tuple[int, list[Any]] | None = None
        self._installed = False

    # ------------------------------------------------------------------ set-up

    def install(self) -> "Leaving":
        """Take over the signals (main thread only) and start watching. The socket then also
        receives every other signal that has a Python handler (Textual's SIGWINCH, SIGTSTP and
        SIGCONT): those are not reasons to leave."""
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        self._tty = _terminal_state(self.terminal)
        self._previous_wakeup = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        for name in SIGNALS:
            number = getattr(signal, name, None)
            if number is not None:
                self._previous[number] = signal.signal(number, self._on_signal)
        self._watching = True
        self._thread = threading.Thread(target=self._watch, name="tutor-leaving", daemon=True)
        self._thread.start()
        self._installed = True
        return self

    def uninstall(self) -> None:
        """The app ended by itself: give the signals back and stop watching. Once the app is
        leaving this does nothing: the deadline stays armed until the process is gone."""
        if not self._installed or self.code is not None:
            return
        self._installed = False
        signal.set_wakeup_fd(self._previous_wakeup)
        for number, handler in self._previous.items():
            signal.signal(number, handler)  # type: ignore[arg-type]  # what signal() returned
        self._poke(STOP)

    def terminal_gone(self, _error: BaseException | None = None) -> None:
        """A write to the terminal failed (any thread; never blocks)."""
        self._poke(GONE)

    def _poke(self, byte: int) -> None:
        try:
            if self._write is not None:
                self._write.send(bytes([byte]))
        except OSError:  # full (it is already awake) or closed (it has stopped)
            pass

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # The C handler has already written the number to the socket, unless something else
        # took the wake-up descriptor since (asyncio's add_signal_handler does): say it here too.
        # The watchdog counts each signal once (``_count``). Only if the watchdog itself is gone
        # does this end the process (as the default would).
        if not self._watching:
            os._exit(128 + signum)
        self._poke(signum | HANDLED)

    # ------------------------------------------------------------------ the watchdog

    def _watch(self) -> None:
        # tcsetattr from a background process group would stop this thread (SIGTTOU).
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
        assert self._read is not None and self._write is not None
        wake = self._read.fileno()
        poller = select.poll() if hasattr(select, "poll") else None  # Windows: no terminal to watch
        if poller is not None:
            poller.register(wake, select.POLLIN)
            for fd in self.terminal:
                poller.register(fd, 0)  # POLLHUP, POLLERR and POLLNVAL are always reported
        try:
            self._serve(poller, wake)
        except Exception:  # a bug here must not leave a process that ignores its signals
            if self.code is not None:
                self.hard_end()
        finally:
            self._watching = False  # from now on a signal's own handler ends the process
            if self.code is None:
                self._read.close()
                self._write.close()

    def _serve(self, poller: Any, wake: int) -> None:
        assert self._read is not None
        while True:
            timeout = None
            if self._leave_at is not None:
                timeout = max(0.0, self._leave_at - time.monotonic())
                if timeout == 0.0:
                    self.hard_end()
                if not self._rescued and not self._answered and self.rescue is not None:
                    if timeout <= RESCUE_S:  # the app has not answered: rescue what it can
                        self._rescued = True
                        threading.Thread(target=self._rescue, name="tutor-leaving-rescue", daemon=True).start()
                    else:  # wake up then
                        timeout -= RESCUE_S
            if poller is not None:
                ready = poller.poll(None if timeout is None else max(1, int(timeout * 1000)))
            else:
                ready = [(wake, 0)] if select.select([self._read], [], [], timeout)[0] else []
            for fd, _mask in ready:
                if fd != wake:  # the terminal hung up: reads end, writes fail
                    assert poller is not None
                    poller.unregister(fd)
                    self._begin(GONE_CODE)
                    continue
                try:
                    data = self._read.recv(256)
                except (BlockingIOError, InterruptedError):
                    continue
                for byte in data:
                    if byte == STOP:
                        return
                    if byte == GONE:
                        self._begin(GONE_CODE)
                    elif byte & ~HANDLED in self._previous and self._count(byte):  # not Textual's SIGWINCH
                        self._signal(byte & ~HANDLED)

    def _count(self, byte: int) -> bool:
        """True when ``byte`` reports a signal not reported yet: each is reported twice, by the
        wake-up descriptor and by the Python handler, and either may be missing (the descriptor
        taken by someone else; the handler running once for two signals that came at once)."""
        number = byte & ~HANDLED
        before = max(seen.get(number, 0) for seen in self._seen)
        counts = self._seen[1 if byte & HANDLED else 0]
        counts[number] = counts.get(number, 0) + 1
        return counts[number] > before

    def _signal(self, number: int) -> None:
        urgent = {getattr(signal, name, None) for name in URGENT}
        if self.code is not None and number in urgent:
            self.hard_end(128 + number)
        self._begin(128 + number)

    def _begin(self, code: int) -> None:
        if self.code is not None:
            return
        self.code = code
        self._leave_at = time.monotonic() + self.deadline
        threading.Thread(target=self._ask, args=(code,), name="tutor-leaving-ask", daemon=True).start()

    def _ask(self, code: int) -> None:
        while self._leave_at is not None and time.monotonic() < self._leave_at:
            try:
                self.ask(code)
                self._answered = True
                return
            except RuntimeError:  # the app's loop is not running (yet, or any more)
                time.sleep(RETRY_S)
            except Exception:
                return

    def _rescue(self) -> None:
        assert self.rescue is not None
        try:
            self.rescue()
        except Exception:  # it races the app's own loop: whatever it could not do is lost
            pass

    def hard_end(self, code: int | None = None) -> None:
        """End the sandbox's processes and this process now (any thread)."""
        try:
            self.kill()
        except Exception:
            pass
        _restore_terminal(self._tty)
        os._exit(code if code is not None else (self.code or 1))


def _terminal_fds() -> tuple[int, ...]:
    """Standard input and error, where Textual reads keys and draws."""
    fds: list[int] = []
    for stream in (sys.__stdin__, sys.__stderr__):
        try:
            fd = stream.fileno() if stream is not None else -1
        except (OSError, ValueError):
            continue
        if fd >= 0 and fd not in fds:
            fds.append(fd)
    return tuple(fds)


def _terminal_state(fds: tuple[int, ...]) -> tuple[int, list[Any]] | None:
    """The terminal's modes before the app changed them, to put back after a hard end."""
    try:
        import termios
    except ImportError:
        return None
    for fd in reversed(fds):  # standard error first: where the app draws
        try:
            return fd, termios.tcgetattr(fd)
        except (termios.error, OSError):
            continue
    return None


def _restore_terminal(saved: tuple[int, list[Any]] | None) -> None:
    """Best effort and never blocking: the terminal may be gone or not reading."""
    if saved is None:
        return
    import termios

    fd, modes = saved
    try:
        termios.tcsetattr(fd, termios.TCSANOW, modes)
    except (termios.error, OSError):
        return  # gone
    try:
        blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)
        try:
            os.write(fd, RESET.encode())
        finally:
            os.set_blocking(fd, blocking)
    except OSError:
        pass
