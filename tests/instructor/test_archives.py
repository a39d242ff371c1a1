"""Hostile hand-in archives: each costs one `bad-archive` row, never the batch (no sandbox needed)."""

from __future__ import annotations

import json
import struct
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from tutor.record.handin import HandinError, read_handin, write_handin

MANIFEST = {"format": "torch-tutor-handin", "format_version": 1, "learner": "x", "pack": "p",
            "exercises": {"ex": {"file": "exercises/ex.py", "solved": True}}}


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_deeply_nested_manifest_is_one_clear_error(tmp_path):
    nested = b'{"format": "torch-tutor-handin", "quizzes": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    path = _zip(tmp_path / "deep.handin.zip", {"manifest.json": nested})
    assert path.stat().st_size < 4000  # tiny zipped, as in the report
    with pytest.raises(HandinError, match="nested too deeply"):
        read_handin(path)


def test_member_name_flagged_utf8_but_invalid(tmp_path):
    path = _zip(tmp_path / "name.handin.zip", {"manifest.json": json.dumps(MANIFEST).encode(),
                                               "exercises/ex.py": b"x = 1\n"})
    data = bytearray(path.read_bytes())
    # flag the central directory entry of exercises/ex.py as UTF-8 and break its name's bytes
    at = data.rfind(b"PK\x01\x02", 0, data.rfind(b"exercises/ex.py") + 1)
    flags = struct.unpack_from("<H", data, at + 8)[0]
    struct.pack_into("<H", data, at + 8, flags | 0x800)
    name_at = data.index(b"exercises/ex.py", at)
    data[name_at:name_at + 2] = b"\xff\xfe"
    path.write_bytes(bytes(data))
    with pytest.raises(HandinError, match="not a readable zip"):
        read_handin(path)


def _million_member_zip(path: Path, count: int) -> Path:
    """A zip whose central directory really lists ``count`` empty stored files (no local data)."""
    entries = []
    for i in range(count):
        name = b"%07d" % i
        entries.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name),
                                   0, 0, 0, 0, 0, 0) + name)
    central = b"".join(entries)
    count16 = min(count, 0xFFFF)
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count16, count16, len(central), 0, 0)
    if count > 0xFFFF:  # Zip64: the real count lives in the Zip64 end record
        z64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, len(central), 0)
        locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, len(central), 1)
        eocd = z64 + locator + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                                           0xFFFFFFFF, 0)
    path.write_bytes(central + eocd)
    return path


def test_a_million_member_zip_is_refused_from_the_central_directory_count(tmp_path):
    path = _million_member_zip(tmp_path / "many.handin.zip", 1_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(HandinError, match="1,000,000 files in the archive"):
            read_handin(path)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * 1024 * 1024, f"{peak:,} bytes allocated to refuse it"


def test_a_huge_learner_name_is_refused(tmp_path):
    manifest = {**MANIFEST, "learner": "A" * 900_000, "exercises": {}}
    path = _zip(tmp_path / "name.handin.zip", {"manifest.json": json.dumps(manifest).encode()})
    with pytest.raises(HandinError, match="learner name of 900,000 characters"):
        read_handin(path)


def test_recorded_time_is_read(tmp_path):
    path = write_handin(tmp_path / "a.handin.zip", learner="a", pack_id="p", pack_version="1",
                        tutor_version="t", exercises={"ex": ("x = 1\n", True)}, quizzes={})
    handin = read_handin(path)
    assert handin.created is not None and abs(handin.created - path.stat().st_mtime) < 120
