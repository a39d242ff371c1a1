"""Hand-in archives: a learner's solved code and quiz answers, in a zip that `grade` reads.

Layout of ``<learner>-<pack>.handin.zip``::

    manifest.json          {"format": "torch-tutor-handin", "format_version": 1, "learner", "pack",
                            "pack_version", "created", "tutor_version",
                            "exercises": {id: {"file": "exercises/<id>.py", "solved": bool}},
                            "quizzes": {"lesson/step": {"answer": str, "correct": bool|null}}}
    exercises/<id>.py      the code (the last code that passed its checks, else the latest draft)

Reading is defensive: the archive comes from someone else. Members are size-capped (no zip
bombs), names are matched exactly (no path traversal), and every problem is a message, never a
crash.
"""

from __future__ import annotations

import json
import os
import re
import struct
import time
import zipfile
import zlib
from datetime import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutor.errors import TutorError

FORMAT = "torch-tutor-handin"
FORMAT_VERSION = 1
SUFFIX = ".handin.zip"
MAX_MEMBER_BYTES = 1024 * 1024
MAX_MEMBERS = 500
MAX_LEARNER_CHARS = 200
_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record (22 bytes + comment)
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")
_SAFE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class HandinError(TutorError):
    """An archive that cannot be read; the message says why in one line."""


@dataclass
class Handin:
    learner: str
    pack: str
    pack_version: str
    exercises: dict[str, bytes] = field(default_factory=dict)  # raw bytes: the grader decodes
    solved: dict[str, bool] = field(default_factory=dict)
    quizzes: dict[str, dict[str, Any]] = field(default_factory=dict)
    created: float | None = None  # when the learner wrote it (seconds since the epoch), if recorded


def write_handin(path: Path, *, learner: str, pack_id: str, pack_version: str, tutor_version: str,
                 exercises: dict[str, tuple[str, bool]], quizzes: dict[str, dict[str, Any]]) -> Path:
    """Write an archive; ``exercises`` maps id -> (code, solved)."""
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "learner": learner, "pack": pack_id,
        "pack_version": pack_version, "tutor_version": tutor_version,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "exercises": {eid: {"file": f"exercises/{eid}.py", "solved": solved}
                      for eid, (_code, solved) in sorted(exercises.items())},
        "quizzes": quizzes,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
        for eid, (code, _solved) in sorted(exercises.items()):
            archive.writestr(f"exercises/{eid}.py", code)
    partial.replace(path)  # never leave half an archive under the real name
    return path


def central_directory_count(path: Path) -> int | None:
    """How many members the archive's end record declares (Zip64 too), read from the last bytes
    only, so a million-member archive is refused before anything parses its directory."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            tail_at = max(0, size - (_EOCD.size + 0xFFFF))
            handle.seek(tail_at)
            tail = handle.read()
            at = tail.rfind(b"PK\x05\x06")
            if at < 0 or len(tail) - at < _EOCD.size:
                return None
            count = int(_EOCD.unpack_from(tail, at)[4])
            locator_at = at - _ZIP64_LOCATOR.size
            if locator_at >= 0 and tail[locator_at:locator_at + 4] == b"PK\x06\x07":
                offset = _ZIP64_LOCATOR.unpack_from(tail, locator_at)[2]
                handle.seek(offset)
                record = handle.read(_ZIP64_EOCD.size)
                if len(record) == _ZIP64_EOCD.size and record[:4] == b"PK\x06\x06":
                    count = max(count, _ZIP64_EOCD.unpack(record)[7])
            return count
    except OSError:
        return None


def read_handin(path: Path) -> Handin:
    declared = central_directory_count(path)
    if declared is not None and declared > MAX_MEMBERS:
        raise HandinError(f"{declared:,} files in the archive; a hand-in has at most {MAX_MEMBERS}")
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RecursionError) as exc:
        # ValueError covers a member name flagged UTF-8 that is not (UnicodeDecodeError)
        raise HandinError(f"not a readable zip archive ({_short(exc)})") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise HandinError(f"{len(infos):,} files in the archive; a hand-in has at most {MAX_MEMBERS}")
        members = {info.filename: info for info in infos}
        manifest = _json_member(archive, members, "manifest.json")
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise HandinError("manifest.json is not a torch-tutor hand-in manifest")
        if manifest.get("format_version") != FORMAT_VERSION:
            raise HandinError(f"hand-in format_version {manifest.get('format_version')!r}; this torch-tutor "
                              f"reads {FORMAT_VERSION}")
        learner = manifest.get("learner")
        if not isinstance(learner, str) or not learner.strip():
            raise HandinError("manifest.json names no learner")
        if len(learner) > MAX_LEARNER_CHARS:
            raise HandinError(f"manifest.json gives a learner name of {len(learner):,} characters; the limit "
                              f"is {MAX_LEARNER_CHARS}")
        handin = Handin(learner=learner.strip(), pack=str(manifest.get("pack", ""))[:200],
                        pack_version=str(manifest.get("pack_version", ""))[:200],
                        created=_parse_created(manifest.get("created")))
        entries = manifest.get("exercises")
        if not isinstance(entries, dict):
            raise HandinError("manifest.json has no exercises mapping")
        for eid, entry in entries.items():
            if not isinstance(eid, str) or not _SAFE_ID.match(eid):
                raise HandinError(f"manifest.json names an invalid exercise id {eid!r}")
            name = f"exercises/{eid}.py"
            if name not in members:
                raise HandinError(f"{name} is listed in the manifest but missing from the archive")
            handin.exercises[eid] = _member(archive, members[name])
            handin.solved[eid] = bool(isinstance(entry, dict) and entry.get("solved"))
        quizzes = manifest.get("quizzes")
        if isinstance(quizzes, dict):
            handin.quizzes = {str(k): v for k, v in quizzes.items() if isinstance(v, dict)}
        return handin


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    if info.file_size > MAX_MEMBER_BYTES:
        raise HandinError(f"{info.filename} is {info.file_size:,} bytes unpacked; the limit is "
                          f"{MAX_MEMBER_BYTES:,}")
    try:
        with archive.open(info) as handle:
            data = handle.read(MAX_MEMBER_BYTES + 1)  # the header's size may lie
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
        raise HandinError(f"{info.filename} cannot be unpacked ({exc})") from None
    if len(data) > MAX_MEMBER_BYTES:
        raise HandinError(f"{info.filename} unpacks to more than {MAX_MEMBER_BYTES:,} bytes")
    return data


def _json_member(archive: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], name: str) -> Any:
    if name not in members:
        raise HandinError(f"no {name} in the archive")
    try:
        return json.loads(_member(archive, members[name]).decode("utf-8"))
    except RecursionError:
        raise HandinError(f"{name} is nested too deeply to be a hand-in manifest") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HandinError(f"{name} is not valid JSON ({_short(exc)})") from None


def _parse_created(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except ValueError:
        return None


def _short(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
