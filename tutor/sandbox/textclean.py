"""Turning a run's raw bytes into text that is safe to show.

A learner's program (or a stranger's pack) can print anything: invalid UTF-8, escape sequences
that clear the screen, set the clipboard (OSC 52) or plant hyperlinks, bidi overrides that make
code read differently than it runs. Everything the tutor displays from a run passes through
:func:`clean_output` first, so no widget has to remember to.
"""

from __future__ import annotations

import re

#: This torch build prints these on every profiler start and stop; no variable silences them.
_USDT = re.compile(rb"^USDT:[^\n]*\] profiler_(?:start|stop)[^\n]*\n?", re.MULTILINE)

from tutor.words.safe_text import _UNSAFE, _visible  # one implementation (see there)


def strip_profiler_noise(data: bytes) -> bytes:
    return _USDT.sub(b"", data)


def _carriage_returns(line: str) -> str:
    """A progress bar redraws its line with \\r: show what a terminal would have left."""
    if "\r" not in line:
        return line
    parts = [p for p in line.split("\r") if p]
    return parts[-1] if parts else ""


def clean_output(data: bytes) -> str:
    """Decode safely (invalid UTF-8 becomes U+FFFD) and make every control sequence inert."""
    text = data.decode("utf-8", errors="replace")
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        text = "\n".join(_carriage_returns(line) for line in text.split("\n"))
    return _UNSAFE.sub(_visible, text)
