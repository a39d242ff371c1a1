"""Making text that did not come from the tutor safe to show on a terminal.

Pack text, exception messages, a learner's code, file and folder names: any of them can carry
escape sequences that set the terminal's title, write the clipboard (OSC 52), plant hyperlinks or
clear the screen, and bidi overrides that make code read differently than it runs. Every such
string goes through :func:`neutralize` before a terminal sees it: control characters become
visible and inert (ESC shows as ``␛``), tab and newline stay. One implementation for the app, the
commands, the sandbox's output cleaning (``tutor.sandbox.textclean``) and every file ``grade`` and
the autograder write (CSV, JSON, JUnit XML, feedback, Gradescope's results: see
``tutor.grading.output.inert``), where the same characters would reach a spreadsheet, a CI
server's XML parser or an LMS page.
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, C1 controls, the bidi/invisible formatting marks (the
# Arabic letter mark, LRM/RLM, the embeddings and overrides, the isolates), and what no UTF-8 file
# or XML 1.0 document may hold: lone surrogates (a name decoded with surrogateescape) and the
# noncharacters U+FFFE and U+FFFF. What is left is printable and well-formed everywhere.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff\ufffe\uffff]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control picture": ␛ for ESC
    if code == 0x7F:
        return "\u2421"
    return f"\\u{code:04x}" if code > 0xFF else f"\\x{code:02x}"


def neutralize(text: str) -> str:
    """``text`` with every control and bidi character made visible and inert."""
    if not isinstance(text, str):
        text = str(text)
    return _UNSAFE.sub(_visible, text)


def first_unsafe(text: str) -> tuple[int, str] | None:
    """(offset, description) of the first unsafe character in ``text``, or None."""
    match = _UNSAFE.search(text)
    if match is None:
        return None
    char = match.group()
    names = {0x1B: "ESC", 0x07: "BEL", 0x0D: "carriage return", 0x08: "backspace", 0x00: "NUL",
             0x9B: "CSI", 0x9D: "OSC"}
    name = names.get(ord(char))
    label = f"U+{ord(char):04X}" + (f" ({name})" if name else "")
    return match.start(), label
