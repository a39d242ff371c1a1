"""A run sees its interpreter, its libraries, the system and the tutor package, and nothing else
of the machine's files (issue 26, part 3): an allow-list under bubblewrap, not a deny-list.

During `grade`, only the graded pack and the submissions folder were hidden: a submission read the
roster next to the class folder, the grade CSV being written, and another pack's YAML with its
`solution:` blocks. The files here lie where the old deny-list left them in the open (/var/tmp,
not /tmp or a home; the checkout's own lessons). At isolation none nothing can be hidden that
the run's user may read (docs/architecture.md says so): those runs are not asserted here.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tutor.sandbox.isolation import package_root

READ_ALL = ("import sys\n"
            "for path in sys.argv_paths:\n"
            "    try:\n"
            "        with open(path) as handle:\n"
            "            print('READ', path, handle.read()[:40].replace('\\n', ' '))\n"
            "    except OSError as exc:\n"
            "        print('HIDDEN', path, type(exc).__name__)\n")


@pytest.fixture(scope="module")
def class_folder():
    base = Path(tempfile.mkdtemp(prefix="tt-allow-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    (base / "class" / "ada").mkdir(parents=True)
    (base / "class" / "ada" / "view-inplace.py").write_text("print('hi')\n")
    (base / "roster.csv").write_text("name,id,email\nAda Lovelace,1815,ada@example.org\n")
    (base / "grades.csv").write_text("learner,exercise,status\nbob,view-inplace,passed\n")
    (base / "other-pack").mkdir()
    (base / "other-pack" / "lesson.yaml").write_text("steps:\n  - solution: |\n      the answer\n")
    for path in base.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _read(sandbox, paths: list[str]) -> dict[str, str]:
    code = READ_ALL.replace("sys.argv_paths", repr(paths))
    result = sandbox.run(code)
    assert result.status == "ok", (result.status, result.message, result.stderr)
    seen = {}
    for line in result.stdout.splitlines():
        word, path = line.split()[:2]
        seen[path] = word
    return seen


def test_a_run_reads_nothing_of_a_class_folders_neighbourhood(sandbox, class_folder):
    if sandbox.isolation.level != "bwrap":
        pytest.skip("isolation none hides nothing the run's user may read (the threat model says so)")
    paths = [str(class_folder / "roster.csv"), str(class_folder / "grades.csv"),
             str(class_folder / "class" / "ada" / "view-inplace.py"), str(class_folder / "other-pack" / "lesson.yaml")]
    seen = _read(sandbox, paths)
    assert all(seen[p] == "HIDDEN" for p in paths), seen


def test_a_run_reads_no_packs_solutions_in_the_tutors_checkout_or_package(sandbox):
    if sandbox.isolation.level != "bwrap":
        pytest.skip("isolation none hides nothing the run's user may read (the threat model says so)")
    root = Path(package_root())
    pack = sorted((root / "lessons" / "debugging-and-speed").glob("*.yaml")) or \
        sorted((root / "tutor" / "_bundled" / "lessons").rglob("*.yaml"))
    assert pack, "no built-in pack found to test with"
    seen = _read(sandbox, [str(pack[0]), "/etc/hostname" if os.path.exists("/etc/hostname") else "/etc/passwd"])
    assert seen[str(pack[0])] == "HIDDEN", seen


def test_what_a_run_needs_is_still_there(sandbox):
    """The interpreter, its libraries, the tutor package, /proc and /sys (torch reads the CPU's
    description), the system's configuration."""
    code = ("import torch, numpy, tutor.child.checks.protocol, os\n"
            "print(torch.ones(2).sum().item(), os.path.exists('/proc/cpuinfo'), os.path.isdir('/sys/devices'),"
            " os.path.exists('/etc/passwd'))\n")
    result = sandbox.run(code)
    assert (result.status, result.stdout) == ("ok", "2.0 True True True\n"), (result.status, result.stderr)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_bubblewrap_works_for_a_tutor_installed_under_tmp(monkeypatch, tmp_path):
    """A wheel installed in a virtual environment under /tmp (a clone there, the README's first
    command) has its bundled pack (`tutor/_bundled`, with the solutions) covered by a tmpfs; the
    probe bound the host's whole /tmp over it and bubblewrap failed to remount it read-only, so such
    a tutor ran at isolation none, and doctor blamed user namespaces. The probe binds a scratch
    folder of its own, as a real run does, and the host's /tmp stays out of sight."""
    import sys

    from tutor.sandbox import isolation
    from tutor.sandbox.backends import bwrap

    fake = Path(tempfile.mkdtemp(prefix="tt-wheel-", dir="/tmp"))
    try:
        (fake / "tutor" / "_bundled" / "lessons").mkdir(parents=True)
        (fake / "tutor" / "_bundled" / "lessons" / "pack.yaml").write_text("solution: secret\n")
        os.chmod(fake, 0o755)
        monkeypatch.setattr(isolation, "package_root", lambda: str(fake))
        works, _namespaces, _drops, why = bwrap._try_bwrap(sys.executable)
        assert works, why
    finally:
        shutil.rmtree(fake, ignore_errors=True)
