"""Grading where courses already grade: a Gradescope autograder bundle, a GitHub Classroom setup.

Both run the same engine as `torch-tutor grade` and the learner's Check button. The Gradescope
bundle carries torch-tutor and the pack as wheels (so its setup does not depend on PyPI having
this tool) and, under ``wheels/deps/``, a wheel of every package they and torch depend on, at the
versions installed here, for the target Python on Linux x86_64, so setup installs them with
``--no-index``. It pins a CPU torch to the version the pack was validated with, and its
``run_autograder`` writes ``results.json`` in Gradescope's documented format
(``assets/gradescope-results.schema.json``). Both scripts honour ``AUTOGRADER_ROOT`` (default
``/autograder``), so the bundle can be tried outside Gradescope.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

from tutor.errors import TutorError
from tutor.grading.gradebook import Row
from tutor.grading.output import GradeMeta
from tutor.pack.models import Pack
from tutor.pack.text import resolve

TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")
#: Gradescope's containers are Ubuntu on x86_64: the platforms (newest first) bundled wheels may be for.
LINUX_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
                   "manylinux1_x86_64", "linux_x86_64")
#: Not bundled: torch comes from PyTorch's CPU index (or TORCH_PIP_ARGS); the rest are torch-tutor.
NOT_BUNDLED = frozenset({"torch", "torch-tutor"})


class AutograderError(TutorError):
    """The bundle cannot be built; the message says why."""


# --------------------------------------------------------------------------- wheels


def pack_module(pack: Pack) -> str:
    return "torch_tutor_pack_" + pack.id.replace("-", "_")


def _wheel_version(version: str) -> str:
    from packaging.version import InvalidVersion, Version

    try:
        return str(Version(version))
    except InvalidVersion:
        return "0+" + re.sub(r"[^A-Za-z0-9.]", ".", version)


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_pack_wheel(pack: Pack, out_dir: Path) -> Path:
    """A wheel holding the pack's YAML files as a module that declares the ``torch_tutor.packs``
    entry point, so an installed tutor discovers it by id."""
    if pack.root is None or not pack.sources:
        raise AutograderError("the pack was not loaded from a folder")
    module, version = pack_module(pack), _wheel_version(pack.version)
    dist = f"{module}-{version}"
    files: dict[str, bytes] = {f"{module}/__init__.py": f'"""The torch-tutor pack {pack.id}."""\n'.encode()}
    for source in pack.sources:
        relative = source.resolve().relative_to(pack.root.resolve()).as_posix()
        files[f"{module}/{relative}"] = source.read_bytes()
    name = "torch-tutor-pack-" + pack.id
    files[f"{dist}.dist-info/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        f"Summary: torch-tutor pack {pack.id} {pack.version}, packed by torch-tutor autograder\n").encode()
    files[f"{dist}.dist-info/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: torch-tutor\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    files[f"{dist}.dist-info/entry_points.txt"] = f"[torch_tutor.packs]\n{pack.id} = {module}\n".encode()
    record = [_record_line(n, d) for n, d in files.items()] + [f"{dist}.dist-info/RECORD,,"]
    files[f"{dist}.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for name_in, data in files.items():
            wheel.writestr(name_in, data)
    return path


def build_tutor_wheel(out_dir: Path, given: Path | None = None) -> Path:
    """This torch-tutor as a wheel: ``given`` as is, else built from the source checkout."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if given is not None:
        if not given.is_file() or not given.name.endswith(".whl"):
            raise AutograderError(f"{given} is not a wheel file")
        return Path(shutil.copy2(given, out_dir / given.name))
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file() or not (root / "tutor").is_dir():
        raise AutograderError("this torch-tutor was not installed from a source checkout, so it cannot "
                              "build its own wheel: pass --tutor-wheel FILE (a torch_tutor-*.whl)")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", tmp, str(root)],
                              capture_output=True, text=True, timeout=600)
        wheels = list(Path(tmp).glob("torch_tutor-*.whl"))
        if done.returncode != 0 or not wheels:
            tail = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise AutograderError(f"building the torch-tutor wheel failed: {tail}")
        return Path(shutil.move(str(wheels[0]), out_dir / wheels[0].name))


def torch_version() -> str:
    """The torch this tutor validates with, without its local tag (2.13.0+cpu -> 2.13.0)."""
    try:
        return metadata.version("torch").split("+", 1)[0]
    except metadata.PackageNotFoundError:
        raise AutograderError("torch is not installed here; pass --torch VERSION") from None


def _marker_environment(python: str) -> dict[str, str]:
    """PEP 508 marker values of a CPython ``python`` (e.g. "3.11") on Linux x86_64."""
    return {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
            "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
            "implementation_name": "cpython", "platform_python_implementation": "CPython",
            "platform_release": "", "platform_version": "", "implementation_version": f"{python}.0"}


def dependency_pins(python: str, root: str = "torch-tutor") -> tuple[list[str], list[str]]:
    """What ``root`` needs on a CPython ``python`` on Linux, read from the installed metadata:
    (``name==version`` for each package installed here, the requirement for each that is not,
    e.g. ``tomli`` for a 3.10 target from a 3.11 tutor). Torch's own dependencies are included
    (so torch installs offline too), torch and torch-tutor are not."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    environment = _marker_environment(python)
    pins: dict[str, str] = {}
    missing: dict[str, str] = {}
    todo: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    walked: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in walked:
            continue
        walked.add((name, extras))
        for line in metadata.distribution(name).requires or []:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is not None and not any(marker.evaluate({**environment, "extra": extra})
                                              for extra in sorted(extras) or [""]):
                continue
            key = canonicalize_name(requirement.name)
            try:
                installed = metadata.version(requirement.name)
            except metadata.PackageNotFoundError:
                if key not in NOT_BUNDLED:
                    missing[key] = str(requirement).split(";", 1)[0].strip()
                continue
            if key not in NOT_BUNDLED:
                pins[key] = f"{key}=={installed}"
            todo.append((requirement.name, frozenset(canonicalize_name(e) for e in requirement.extras)))
    return sorted(pins.values()), sorted(missing.values())


def download_dependencies(out_dir: Path, python: str) -> list[Path]:
    """Wheels of every dependency (``dependency_pins``) for CPython ``python`` on Linux x86_64,
    fetched by pip as it is configured here (its index, its cache, its find-links)."""
    pins, missing = dependency_pins(python)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = [arg for platform in LINUX_PLATFORMS for arg in ("--platform", platform)]
    target += ["--python-version", python, "--implementation", "cp", "--only-binary=:all:"]
    commands = [["--no-deps", *pins]] + ([[*missing]] if missing else [])
    for requirements in commands:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(out_dir),
                               *target, *requirements], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise AutograderError(f"fetching the dependencies' wheels for Python {python} on Linux failed: "
                                  f"{tail} (pass --no-dependency-wheels to let setup.sh fetch them instead)")
    return sorted(out_dir.glob("*.whl"))


# --------------------------------------------------------------------------- Gradescope


SETUP_SH = """#!/usr/bin/env bash
# Gradescope setup for the torch-tutor pack {pack_id} {pack_version}.
# Installs Python {python} (if needed), a CPU torch {torch}, and torch-tutor plus the pack from the
# wheels in this bundle. When the bundle carries wheels/deps/ (every other dependency, built for
# Python {python} on Linux x86_64), those install with --no-index: nothing but torch needs an index.
# AUTOGRADER_ROOT (default /autograder) is where the virtual environment goes; TORCH_PIP_ARGS
# replaces where torch comes from (unset: PyTorch's CPU index; "": pip's own index and configuration);
# PYTHON picks the interpreter.
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
HERE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
WANT="{python}"
usable() {{ "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; }}
if [ -z "${{PYTHON:-}}" ]; then
  if ! usable "python$WANT" && command -v apt-get >/dev/null; then
    apt-get update || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y "python$WANT" "python$WANT-venv" || true
  fi
  if usable "python$WANT"; then PYTHON="python$WANT"; else PYTHON=python3; fi
fi
if ! usable "$PYTHON"; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y python3 python3-venv python3-pip
  PYTHON=python3
fi
HAVE="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
"$PYTHON" -m venv "$ROOT/venv"
LINKS=(--find-links "$HERE/wheels")
OFFLINE=()
if [ -d "$HERE/wheels/deps" ]; then
  LINKS+=(--find-links "$HERE/wheels/deps")
  if [ "$HAVE" = "$WANT" ]; then
    OFFLINE=(--no-index)
  else
    echo "note: the bundled dependency wheels are for Python $WANT, this is $HAVE: fetching them from the index"
  fi
fi
# TORCH_PIP_ARGS unset: PyTorch's CPU index; set, even to "", it replaces it ("" = pip's own configuration)
"$ROOT/venv/bin/python" -m pip install --quiet ${{TORCH_PIP_ARGS---index-url {index}}} "${{LINKS[@]}}" "torch=={torch}"
"$ROOT/venv/bin/python" -m pip install --quiet ${{OFFLINE[@]+"${{OFFLINE[@]}}"}} "${{LINKS[@]}}" "$HERE"/wheels/*.whl
"$ROOT/venv/bin/torch-tutor" list >/dev/null
echo "torch-tutor is ready to grade {pack_id} {pack_version}"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope run_autograder for the torch-tutor pack {pack_id} {pack_version}: grades
# $AUTOGRADER_ROOT/submission (loose <exercise-id>.py files or a hand-in archive) and writes
# $AUTOGRADER_ROOT/results/results.json. Inside Gradescope the container is the isolation.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
mkdir -p "$ROOT/results"
export TORCH_TUTOR_DATA_DIR="$ROOT/torch-tutor-data" TORCH_TUTOR_CONFIG_DIR="$ROOT/torch-tutor-config"
exec "$ROOT/venv/bin/torch-tutor" autograder {pack_id} --run "$ROOT/submission" \\
  --results "$ROOT/results/results.json" --visibility {visibility}
"""


def target_python() -> str:
    """This interpreter's version, X.Y: the default Python of a bundle's dependency wheels."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def build_gradescope_bundle(pack: Pack, out: Path, *, torch: str, tutor_wheel: Path | None = None,
                            visibility: str = "visible", python: str | None = None,
                            dependencies: bool = True) -> Path:
    """setup.sh, run_autograder and wheels/ at the root of a zip (Gradescope wants them there);
    with ``dependencies``, wheels/deps/ holds every dependency but torch for CPython ``python``."""
    python = python or target_python()
    if not re.fullmatch(r"3\.\d{1,2}", python):
        raise AutograderError(f"--python takes a version such as 3.11, not {python!r}")
    with tempfile.TemporaryDirectory() as tmp:
        wheels = Path(tmp) / "wheels"
        tutor = build_tutor_wheel(wheels, tutor_wheel)
        packed = build_pack_wheel(pack, wheels)
        deps = download_dependencies(wheels / "deps", python) if dependencies else []
        values = dict(pack_id=pack.id, pack_version=pack.version, torch=torch, index=TORCH_CPU_INDEX,
                      visibility=visibility, python=python)
        out.parent.mkdir(parents=True, exist_ok=True)
        # written beside OUT and renamed into place once whole: a failure leaves no file behind
        partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
        try:
            with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
                for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
                    info = zipfile.ZipInfo(name)
                    info.external_attr = 0o100755 << 16
                    info.compress_type = zipfile.ZIP_DEFLATED
                    bundle.writestr(info, text.format(**values))
                for wheel in (tutor, packed):
                    bundle.write(wheel, f"wheels/{wheel.name}")
                for wheel in deps:
                    bundle.write(wheel, f"wheels/deps/{wheel.name}")
            partial.replace(out)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    return out


def _num(value: float) -> str:
    from tutor.grading.output import _num as num

    return num(value)


def _points(value: float) -> str:
    from tutor.grading.output import _points as points

    return points(value)


def _test_output(row: Row) -> str:
    lines = [row.message] if row.message else []
    for check in row.checks:
        mark = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP", "timeout": "TIME",
                "tampered": "TAMPR"}.get(check["status"], "?")
        line = f"{mark}  {check['description']}"
        if check["status"] != "passed" and check.get("message"):
            line += f": {check['message']}"
        lines.append(line)
        if check.get("hint"):
            lines.append(f"      hint: {check['hint']}")
    return "\n".join(lines)


def gradescope_results(meta: GradeMeta, rows: list[Row], *, seconds: float, isolation: str,
                       visibility: str = "visible") -> dict[str, Any]:
    """results.json in Gradescope's format: one test per exercise (and graded quiz), named by it;
    files that are no exercise are listed as failed tests worth nothing."""
    from tutor.grading.gradebook import round_points
    from tutor.grading.output import inert, without_quiz_answers

    from tutor.grading.output import ALL_OR_NOTHING

    items = set(meta["items"])
    whole = set(meta.get("all_or_nothing") or [])
    tests = []
    for row in rows:
        graded = row.exercise in items
        name = row.exercise if graded else f"{row.origin or row.exercise}: {row.status}"
        output = _test_output(row) or row.status
        if row.exercise in whole:
            output = f"Scored {ALL_OR_NOTHING}.\n{output}"
        test: dict[str, Any] = {"name": name, "status": "passed" if row.passed else "failed",
                                "output": output, "visibility": visibility}
        if graded:
            test["score"] = row.points  # rounded like every output's (gradebook.POINT_PLACES)
            test["max_score"] = row.max_points
        tests.append(test)
    score = round_points(sum(row.points for row in rows if row.exercise in items))
    maximum = round_points(sum(row.max_points for row in rows if row.exercise in items))
    quizzes = ("" if without_quiz_answers(meta, rows) is None else
               f" No quiz answer: this submission is loose files, and only the archive `torch-tutor handin` "
               f"writes carries quiz answers, so the quizzes ({_points(meta.get('quiz_points') or 0)}) "
               "count 0.")
    results: dict[str, Any] = inert({  # a learner's message and names show on Gradescope's page: no raw control
        "score": score,
        "execution_time": max(0, round(seconds)),
        "output": (f"Graded by torch-tutor against the pack {meta['pack']} {meta['pack_version']}: "
                   f"{_num(score)} of {_num(maximum)} points.{quizzes} Isolation: {isolation}"),
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": tests,
    })
    return results


def results_schema() -> dict[str, Any]:
    from tutor.settings import paths

    schema: dict[str, Any] = json.loads(
        (paths.bundled_dir("assets") / "gradescope-results.schema.json").read_text(encoding="utf-8"))
    return schema


# --------------------------------------------------------------------------- GitHub Classroom


def _shares(pack: Pack) -> list[tuple[str, str, str | None, float]]:
    """(test name, item, check id or None, points) of every Classroom test: each check of each
    exercise worth points x weight / the exercise's weights, or one test for the whole of an
    all-or-nothing exercise (it passes when every check does), each graded quiz its points."""
    from tutor.grading.gradebook import graded_quizzes

    out: list[tuple[str, str, str | None, float]] = []
    for _lesson, exercise in pack.exercises():
        if exercise.all_or_nothing:
            out.append((f"{exercise.id}: every check (all or nothing)", exercise.id, None, float(exercise.points)))
            continue
        total = sum(check.weight for check in exercise.checks)
        for check in exercise.checks:
            share = float(exercise.points) * check.weight / total if total else 0.0
            out.append((f"{exercise.id}: {check.id}", exercise.id, check.id, share))
    for ref, quiz in graded_quizzes(pack):
        out.append((f"quiz {ref}", ref, None, float(quiz.points)))
    return out


def classroom_scale(pack: Pack) -> int:
    """Classroom's `max-score` is a whole number: the smallest of 1, 10, 100 that makes every
    share whole (else 100, each exercise's shares then rounded so that they add up exactly)."""
    shares = [points for *_rest, points in _shares(pack)]
    for scale in (1, 10, 100):
        if all(abs(p * scale - round(p * scale)) < 1e-9 for p in shares):
            return scale
    return 100


def classroom_tests(pack: Pack) -> list[tuple[str, str, str | None, int]]:
    """``_shares`` in whole Classroom points (x ``classroom_scale``): per exercise, largest
    remainders, so an exercise's tests add up to its points exactly."""
    scale = classroom_scale(pack)
    shares = _shares(pack)
    out: list[tuple[str, str, str | None, int]] = []
    by_item: dict[str, list[int]] = {}
    for index, (_name, item, _check, _points) in enumerate(shares):
        by_item.setdefault(item, []).append(index)
    whole = [int(points * scale) for *_rest, points in shares]
    for indices in by_item.values():
        target = round(sum(shares[i][3] for i in indices) * scale)
        left = target - sum(whole[i] for i in indices)
        for i in sorted(indices, key=lambda i: -(shares[i][3] * scale - whole[i]))[:max(0, left)]:
            whole[i] += 1
    for (name, item, check, _points), points in zip(shares, whole):
        out.append((name, item, check, points))
    return out


def classroom_total(pack: Pack) -> int:
    return sum(points for *_rest, points in classroom_tests(pack))


#: What a published pack has where the author's reference solution was.
NOT_PUBLISHED = ("# The reference solution is not published with this assignment: it stays with your "
                 "instructor.\n")


def public_yaml(source: Path) -> str:
    """A pack file as learners may see it: every exercise's ``solution`` replaced by NOT_PUBLISHED,
    and the author's comments gone (the YAML is read and written again). What stays is what
    `check` needs to judge their code: checks, contracts, starters, hints, quizzes."""
    import yaml

    from tutor.pack.yaml_source import read_source

    data = read_source(source).data

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            out = {key: scrub(item) for key, item in value.items()}
            if out.get("kind") == "exercise" and "solution" in out:
                out["solution"] = NOT_PUBLISHED
            if out.get("kind") == "exercise":
                out.pop("solutions", None)  # the further reference solutions: never published either
            return out
        if isinstance(value, list):
            return [scrub(item) for item in value]
        return value

    return str("# Published by `torch-tutor autograder --github-classroom`: the pack without its solutions.\n"
            + yaml.safe_dump(scrub(data), sort_keys=False, allow_unicode=True, width=100))


def github_classroom(pack: Pack, out: Path, *, torch: str, tutor_wheel: Path | None = None) -> list[Path]:
    """A starter repository's autograding: the workflow GitHub Classroom runs (one grading step,
    then a test per check, or per all-or-nothing exercise, and per graded quiz, worth its share of
    the points, see ``classroom_tests``), the legacy autograding.json, the pack without its
    solutions (its prelude_file as written) and the torch-tutor wheel under .torch-tutor/, and each
    exercise's starter file (kept if present).

    Everything is written into a folder of its own inside ``out`` first and moved into place only
    when all of it is there: a failure (a wheel that cannot be built, a full disk) leaves ``out`` as
    it was."""
    if pack.root is None:
        raise AutograderError("the pack was not loaded from a folder")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".torch-tutor-classroom-", dir=out))
    try:
        written = _write_classroom(pack, staging, out, torch=torch, tutor_wheel=tutor_wheel)
        return _move_in(staging, out, written)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not any(out.iterdir()):
            out.rmdir()


def _move_in(staging: Path, out: Path, written: list[Path]) -> list[Path]:
    """Each file written under ``staging`` to its place under ``out`` (renames, on one file
    system); .torch-tutor/pack/ as a whole, so nothing of an older pack stays published."""
    pack_dir = out / ".torch-tutor" / "pack"
    (out / ".torch-tutor").mkdir(exist_ok=True)
    if pack_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=".torch-tutor-old-", dir=out))
        pack_dir.rename(old / "pack")
        shutil.rmtree(old, ignore_errors=True)
    (staging / ".torch-tutor" / "pack").rename(pack_dir)
    for old_wheel in (out / ".torch-tutor" / "wheels").glob("torch_tutor-*.whl"):
        old_wheel.unlink()
    moved: list[Path] = []
    for path in written:
        relative = path.relative_to(staging)
        target = out / relative
        if relative.parts[:2] != (".torch-tutor", "pack"):
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
        moved.append(target)
    return moved


def _is_yaml(path: Path) -> bool:
    return path.suffix in (".yaml", ".yml")


def _write_classroom(pack: Pack, home_root: Path, out: Path, *, torch: str,
                     tutor_wheel: Path | None) -> list[Path]:
    """``github_classroom``'s files, written under ``home_root`` (a starter file only where
    ``out`` has none)."""
    import yaml

    assert pack.root is not None
    written: list[Path] = []
    home = home_root / ".torch-tutor"
    pack_dir = home / "pack"
    for source in pack.sources:
        target = pack_dir / source.resolve().relative_to(pack.root.resolve())
        target.parent.mkdir(parents=True, exist_ok=True)
        if _is_yaml(source):
            target.write_text(public_yaml(source), encoding="utf-8")
        else:  # the prelude_file: Python the checks run, published as written
            target.write_bytes(source.read_bytes())
        written.append(target)
    written.append(build_tutor_wheel(home / "wheels", tutor_wheel))
    setup = (f"python -m pip install --quiet --index-url {TORCH_CPU_INDEX} torch=={torch} && "
             "python -m pip install --quiet .torch-tutor/wheels/*.whl")
    steps: list[dict[str, Any]] = [
        {"name": "Checkout code", "uses": "actions/checkout@v4"},
        {"name": "Set up Python", "uses": "actions/setup-python@v5", "with": {"python-version": "3.11"}},
        {"name": "Install torch-tutor and a CPU torch", "run": setup},
    ]
    results = ".torch-tutor/results.json"
    grade_minutes = max(2, int(sum((ex.timeout or 60) for _l, ex in pack.exercises()) * 3 // 60) + 2)
    # One ungraded step grades the whole repository as `grade` would (loose <exercise-id>.py files,
    # and a hand-in archive for the quizzes); each test after it is one check (or quiz) worth its
    # share of the points, so Classroom's per-test all-or-nothing adds up to partial credit; an
    # all-or-nothing exercise is one test, passed when every check passed.
    steps.append({"name": "Grade with torch-tutor", "run": f"rm -f {results} && torch-tutor autograder "
                  f".torch-tutor/pack --run . --json {results}", "continue-on-error": True,
                  "timeout-minutes": grade_minutes})
    tests: list[dict[str, Any]] = []
    runners: list[str] = []
    taken: set[str] = set()
    for name, item, check, points in classroom_tests(pack):
        step_id = re.sub(r"[^a-z0-9-]", "-", name.lower())
        while step_id in taken:
            step_id += "-"
        taken.add(step_id)
        command = f"torch-tutor autograder .torch-tutor/pack --passed {item} --json {results}"
        if check is not None:
            command += f" --check {check}"
        steps.append({"name": name, "id": step_id, "uses": "classroom-resources/autograding-command-grader@v1",
                      "with": {"test-name": name, "setup-command": "", "command": command, "timeout": 1,
                               "max-score": points}})
        runners.append(step_id)
        setup = "" if tests else f"torch-tutor autograder .torch-tutor/pack --run . --json {results}"
        tests.append({"name": name, "setup": setup, "run": command, "input": "", "output": "",
                      "comparison": "included", "timeout": grade_minutes if setup else 1, "points": points})
    for _lesson, exercise in pack.exercises():
        if not (out / f"{exercise.id}.py").exists():
            starter = home_root / f"{exercise.id}.py"
            starter.write_text(exercise.starter, encoding="utf-8")
            written.append(starter)
    steps.append({"name": "Autograding Reporter", "uses": "classroom-resources/autograding-grading-reporter@v1",
                  "env": {f"{r.upper()}_RESULTS": f"${{{{steps.{r}.outputs.result}}}}" for r in runners},
                  "with": {"runners": ",".join(runners)}})
    workflow = {"name": "Autograding Tests", "on": ["push", "repository_dispatch"],
                "permissions": {"checks": "write", "actions": "read", "contents": "read"},
                "jobs": {"run-autograding-tests": {"runs-on": "ubuntu-latest",
                                                   "if": "github.actor != 'github-classroom[bot]'",
                                                   "steps": steps}}}
    target = home_root / ".github" / "workflows" / "classroom.yml"
    target.parent.mkdir(parents=True, exist_ok=True)
    title = resolve(pack.title, None, pack.languages[0])
    target.write_text(f"# Written by `torch-tutor autograder {pack.id} --github-classroom`: {title} "
                      f"{pack.version}\n" + yaml.safe_dump(workflow, sort_keys=False, width=120), encoding="utf-8")
    written.append(target)
    config = home_root / ".github" / "classroom" / "autograding.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"tests": tests}, indent=2) + "\n", encoding="utf-8")
    written.append(config)
    return written


def bundle_listing(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as bundle:
        return sorted(bundle.namelist())
