"""Run the tutor here as it would run on Windows, as far as its own code can tell: for tests.

We cannot run Windows here. What we can do is take away, in this interpreter and in every one
it starts, the POSIX-only calls that Windows's Python lacks, so that any of the tutor's code
paths that still reaches for one fails loudly instead of passing by luck. With
``TORCH_TUTOR_EMULATE_WINDOWS=1`` set before ``tutor`` is imported (``tutor/__init__.py`` calls
``install``):

* ``os`` loses fork, wait3/wait4, killpg, setsid, the uid/gid calls, ``pidfd_open``,
  ``sched_getaffinity``, ``getloadavg``, ``sysconf`` and ``statvfs``;
* ``socket`` loses ``send_fds``/``recv_fds`` (no descriptor passing, so ``wire.fd_passing`` is
  false and the sandbox uses its pipe transport);
* ``signal`` keeps only the signals Windows has (no SIGKILL, SIGALRM, SIGXCPU..., no
  ``setitimer``/``alarm``);
* ``select.select`` refuses anything that is not a socket, as on Windows (WinError 10038), and
  ``selectors.DefaultSelector`` is the select-based one;
* ``fcntl``, ``resource``, ``pwd``, ``grp`` and ``termios`` cannot be imported;
* ``subprocess.Popen`` refuses ``pass_fds``, and ``Popen.kill`` stops the process outright
  (TerminateProcess there), as it cannot signal a group.

What this cannot show: that Windows's own calls (paths, consoles, ``taskkill``) behave as the code
expects. README's platform table says which parts are tested and which are supported by design.
"""

from __future__ import annotations

import os
import sys
from typing import Any

ENV = "TORCH_TUTOR_EMULATE_WINDOWS"

_OS = ("fork", "forkpty", "wait3", "wait4", "waitid", "killpg", "setsid", "getsid", "getpgid", "setpgid",
       "getpgrp", "getuid", "geteuid", "getgid", "getegid", "setuid", "setgid", "seteuid", "setegid",
       "setgroups", "getgroups", "setresuid", "setresgid", "getresuid", "getresgid", "pidfd_open",
       "sched_getaffinity", "sched_setaffinity", "getloadavg", "sysconf", "statvfs", "fstatvfs",
       "O_PATH", "O_NOFOLLOW", "O_DIRECTORY", "ST_RDONLY", "ST_NOSUID")
_SOCKET = ("send_fds", "recv_fds")
#: Windows's signal module has these (and CTRL_* and SIGBREAK, which Linux lacks).
_WINDOWS_SIGNALS = {"SIGABRT", "SIGFPE", "SIGILL", "SIGINT", "SIGSEGV", "SIGTERM"}
_SIGNAL_CALLS = ("alarm", "setitimer", "getitimer", "ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF",
                 "pthread_kill", "pthread_sigmask", "sigwait", "siginterrupt", "pause")
_MODULES = ("fcntl", "resource", "pwd", "grp", "termios")

#: Loaded before anything is taken away (see ``install``).
_THIRD_PARTY = ("platformdirs", "platformdirs.unix", "getpass", "tempfile", "shutil", "pathlib")

_installed = False


def active() -> bool:
    return os.environ.get(ENV) == "1"


def install() -> None:
    """Take the POSIX-only calls away in this interpreter (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    import select
    import selectors
    import signal
    import socket
    import stat
    import subprocess

    # Other people's libraries take their Linux branch here (sys.platform is still "linux") and
    # would trip over what goes missing; on Windows they take their Windows branch. Load them
    # first: the emulation is about the tutor's own code.
    for name in _THIRD_PARTY:
        try:
            __import__(name)
        except ImportError:
            pass

    for name in _OS:
        if hasattr(os, name):
            delattr(os, name)
    for name in _SOCKET:
        if hasattr(socket, name):
            delattr(socket, name)
    for name in [n for n in dir(signal) if n.startswith("SIG") and not n.startswith(("SIG_", "SIGRT"))]:
        if name not in _WINDOWS_SIGNALS:
            delattr(signal, name)
    for name in _SIGNAL_CALLS:
        if hasattr(signal, name):
            delattr(signal, name)
    for name in _MODULES:
        sys.modules[name] = None  # type: ignore[assignment]  # then "import fcntl" raises ImportError

    real_select = select.select

    def sockets_only(rlist: Any, wlist: Any, xlist: Any, timeout: float | None = None) -> Any:
        for item in (*rlist, *wlist, *xlist):
            fd = item if isinstance(item, int) else item.fileno()
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                raise OSError(10038, "An operation was attempted on something that is not a socket "
                                     "(select on a pipe: Windows has no such thing)")
        return real_select(rlist, wlist, xlist, timeout)

    setattr(select, "select", sockets_only)
    for name in ("poll", "epoll", "devpoll", "kqueue"):
        if hasattr(select, name):
            delattr(select, name)
    setattr(selectors, "DefaultSelector", selectors.SelectSelector)
    setattr(selectors.SelectSelector, "_select",
            staticmethod(lambda r, w, _, timeout=None: sockets_only(r, w, [], timeout)))

    real_init = subprocess.Popen.__init__

    def init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        if kwargs.get("pass_fds"):
            raise ValueError("pass_fds is not supported on Windows")
        if kwargs.get("start_new_session") or kwargs.get("preexec_fn") is not None:
            raise ValueError("start_new_session and preexec_fn are POSIX-only")
        real_init(self, *args, **kwargs)

    setattr(subprocess.Popen, "__init__", init)
    setattr(subprocess.Popen, "kill", lambda self: self.send_signal(9))
    setattr(subprocess.Popen, "terminate", lambda self: self.send_signal(9))
