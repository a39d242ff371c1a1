"""Bytes from someone else's file to text: refuse binary and non-UTF-8 data with a position.

Used by the pack loader (YAML) and the grader (learners' Python files), which word the problem
for their own reader.
"""

from __future__ import annotations

from tutor.errors import TutorError


class NotText(TutorError, ValueError):
    """``kind`` is "binary" or "not-utf8"; ``line``/``col`` are 1-based."""

    def __init__(self, kind: str, line: int, col: int, message: str):
        super().__init__(message)
        self.kind, self.line, self.col, self.message = kind, line, col, message


def position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


def decode_text(data: bytes) -> str:
    """UTF-8 text without a byte-order mark; raises NotText for a NUL byte or invalid UTF-8."""
    if b"\x00" in data:
        raise NotText("binary", *position(data, data.index(b"\x00")), "a binary file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotText("not-utf8", *position(data, exc.start),
                      f"not UTF-8 text (byte 0x{data[exc.start]:02x})") from None
    return text.removeprefix("\ufeff")
