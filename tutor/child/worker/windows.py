"""Every Windows-specific call of the child side: a Job Object that holds a run's processes.

Windows has no process groups to signal and no subreaper: a process the learner's code starts
would outlive the run. A job that the runner is put in before it takes its request holds every
process it starts after that, and closing the job (``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``) ends
them all. Called only where ``AVAILABLE`` (Windows); elsewhere ``Job`` is never made.

Supported by design, not tested: we have no Windows machine (README, "Where it runs").
"""

from __future__ import annotations

import sys

AVAILABLE = sys.platform == "win32"

_KILL_ON_JOB_CLOSE = 0x2000
_EXTENDED_LIMIT_INFORMATION = 9
_PROCESS_SET_QUOTA = 0x0100
_PROCESS_TERMINATE = 0x0001


class Job:
    """A job holding one process (and all it starts); ``close`` ends every one of them."""

    def __init__(self, pid: int):
        import ctypes
        from ctypes import wintypes

        class IoCounters(ctypes.Structure):
            _fields_ = [(name, ctypes.c_ulonglong) for name in (
                "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
                "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]

        class BasicLimits(ctypes.Structure):
            _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                        ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                        ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                        ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD),
                        ("SchedulingClass", wintypes.DWORD)]

        class ExtendedLimits(ctypes.Structure):
            _fields_ = [("BasicLimitInformation", BasicLimits), ("IoInfo", IoCounters),
                        ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                        ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
        kernel32.CreateJobObjectW.restype = wintypes.HANDLE
        kernel32.OpenProcess.restype = wintypes.HANDLE
        self._kernel32 = kernel32
        self._handle = kernel32.CreateJobObjectW(None, None)
        if not self._handle:
            raise OSError(ctypes.get_last_error(), "CreateJobObjectW failed")  # type: ignore[attr-defined]
        limits = ExtendedLimits()
        limits.BasicLimitInformation.LimitFlags = _KILL_ON_JOB_CLOSE
        if not kernel32.SetInformationJobObject(wintypes.HANDLE(self._handle), _EXTENDED_LIMIT_INFORMATION,
                                                ctypes.byref(limits), ctypes.sizeof(limits)):
            self.close()
            raise OSError(ctypes.get_last_error(), "SetInformationJobObject failed")  # type: ignore[attr-defined]
        process = kernel32.OpenProcess(_PROCESS_SET_QUOTA | _PROCESS_TERMINATE, False, pid)
        if not process:
            self.close()
            raise OSError(ctypes.get_last_error(), "OpenProcess failed")  # type: ignore[attr-defined]
        try:
            if not kernel32.AssignProcessToJobObject(wintypes.HANDLE(self._handle), wintypes.HANDLE(process)):
                raise OSError(ctypes.get_last_error(), "AssignProcessToJobObject failed")  # type: ignore[attr-defined]
        except OSError:
            self.close()
            raise
        finally:
            kernel32.CloseHandle(wintypes.HANDLE(process))

    def close(self) -> None:
        """End every process in the job (the runner and all it started)."""
        from ctypes import wintypes

        if self._handle:
            self._kernel32.TerminateJobObject(wintypes.HANDLE(self._handle), 1)
            self._kernel32.CloseHandle(wintypes.HANDLE(self._handle))
            self._handle = None
