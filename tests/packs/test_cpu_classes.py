"""What the pack says about bfloat16 speed holds on every CPU class this machine can stand in for.

oneDNN, which runs PyTorch's CPU matrix multiplies, reads ``ONEDNN_MAX_CPU_ISA`` and then uses
no instruction above that class: one machine behaves, for matrix multiplies, like each class at
or below its own (AVX2 < AVX512_CORE < AVX512_CORE_BF16 < AVX512_CORE_AMX). For each class the
machine can emulate, this runs the autocast lesson's timing example and Lab 2 (as written, with
the lab's suggested ``WIDTH, BATCH = 2048, 16`` and with its tiny ``WIDTH = 64``) once, and
twice more unless every number lies far beyond its bound (``SURE_FACTOR``), takes the median of
every number, and asserts what the lesson says for that class (the classes
of the lesson's list: "none", "AVX-512 BF16 without AMX", "AMX"). Only ratios measured side by
side in one run are compared, with margins (faster below 0.9, slower above 1.1, "more than" by a
factor of 1.2), never an absolute time. The quiz ``q-cpu-slower`` rests on one of these
measurements (its premise: an ``avx512_bf16`` CPU where ``copy_`` outweighs the multiplies at
batch 16), so it is checked here too.

What makes batch 16 lose there is the allocator, not the casts' arithmetic: with glibc's default
settings each forward's fresh 8 MiB bf16 copies land in pages given back to the system, and the
first write to each is a page fault inside ``copy_``. These runs use the default allocator
(``GLIBC_TUNABLES`` is taken out of their environment), and the page faults the example prints
are held to the lesson's counts; one more set of runs with ``GLIBC_TUNABLES`` as the lesson gives
it holds the other side: the faults gone and the batch-16 verdict turned (AVX512_CORE_BF16).

Cost on the 2-core AVX-512 BF16 machine this was written on: 1 min 50 s to 4 min 13 s of wall
time while six other sessions kept both cores busy (about 41 s of CPU time: three classes x
three runs of three snippets, one after another; AVX2, far from every bound, now runs once); Lab 2 at 64 wide adds about 1 s, the runs
with glibc keeping freed memory about 18 s (one speed example, three of Lab 2 at 2048 wide).
Run with -s to see the medians, e.g. AVX2 {256: bf16 4.56x as long, 16: 3.5x; Lab 2 0.21x},
AVX512_CORE {1.35x, 1.47x; 0.78x}, AVX512_CORE_BF16 {0.36x, 1.75x with copy_ 40.4 ms against
7.6 ms; Lab 2 2.88x, wide 0.49x}; with the tiny Lab 2 and the faults (2026-12-07): AVX2 tiny
0.06x, 8 160 faults a bf16 forward at batch 16; AVX512_CORE 0.35x, 1 355; AVX512_CORE_BF16
0.70x, 6 112 (float32: 0 everywhere), and with glibc keeping freed memory 0 faults, batch 16
0.70x, Lab 2 wide 1.23x against 0.47x.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packs.conftest import en

RUNNER = Path(__file__).with_name("snippet_runner.py")
ORDER = ("AVX2", "AVX512_CORE", "AVX512_CORE_BF16", "AVX512_CORE_AMX")
LESSON_CLASS = {"AVX2": "none", "AVX512_CORE": "none", "AVX512_CORE_BF16": "AVX-512 BF16 without AMX",
                "AVX512_CORE_AMX": "AMX"}
RUNS = 3
FASTER, SLOWER, MORE = 0.9, 1.1, 1.2


def real_class() -> str | None:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    flags = set()
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags":
            flags.update(value.split())
    if "amx_bf16" in flags:
        return "AVX512_CORE_AMX"
    if "avx512_bf16" in flags:
        return "AVX512_CORE_BF16"
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "AVX512_CORE"
    if "avx2" in flags:
        return "AVX2"
    return None


REAL = real_class()
CLASSES = ORDER[:ORDER.index(REAL) + 1] if REAL else ()


def _step(pack, lesson_id, step_id):
    return next(step for step in pack.lesson(lesson_id).steps if step.id == step_id)


def glibc() -> bool:
    """Whether this Python runs on glibc, whose allocator the lesson's page-fault claims are about."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") is not None
    except (ValueError, OSError, AttributeError):
        return False


def huge_pages_always() -> bool:
    """With transparent huge pages 'always', a fresh 8 MiB copy can take a few 2 MiB pages instead
    of 2048 small ones: the first touch still costs, but the count of faults is no longer its size."""
    try:
        return "[always]" in Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return False


#: glibc keeps freed memory for reuse: the setting the autocast lesson gives, verbatim
KEEP_FREED = "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824"


def _run_all(snippets: list[str], isa: str, tunables: str | None = None) -> list[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "ONEDNN_MAX_CPU_ISA": isa}
    env.pop("GLIBC_TUNABLES", None)  # the default allocator, unless a test sets it
    if tunables:
        env["GLIBC_TUNABLES"] = tunables
    payload = json.dumps([{"code": code, "timeout": 240} for code in snippets])
    done = subprocess.run([sys.executable, str(RUNNER)], input=payload, capture_output=True, text=True,
                          timeout=240 * len(snippets) + 120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout)
    for result in results:
        assert result["returncode"] == 0, result["stderr"][-2000:]
    return [result["stdout"] for result in results]


SPEED = re.compile(r"^(?P<width>\d+) wide, batch (?P<batch>\d+): bf16 takes (?P<ratio>[0-9.]+)x as long\n"
                   r"  one bf16 forward: matrix multiplies (?P<mm>[0-9.]+) ms, casts and copies (?P<copy>[0-9.]+) ms",
                   re.MULTILINE)
LAB2 = re.compile(r"speed-up of bf16 autocast: ([0-9.]+)x")
FAULTS = re.compile(r"^(?P<width>\d+) wide, batch (?P<batch>\d+):.*\n.*\n"
                    r"  page faults per forward: float32 (?P<fp32>\d+), bf16 (?P<bf16>\d+)$", re.MULTILINE)


def _faults(outputs: list[str]) -> dict[int, tuple[float, float]]:
    """batch -> (float32, bf16) page faults per forward, medians over the outputs of the speed example."""
    per_batch: dict[int, list] = {}
    for out in outputs:
        rows = list(FAULTS.finditer(out))
        assert len(rows) == 2, out
        for row in rows:
            per_batch.setdefault(int(row["batch"]), []).append((int(row["fp32"]), int(row["bf16"])))
    return {batch: tuple(statistics.median(v[i] for v in values) for i in range(2))
            for batch, values in per_batch.items()}


def _variants(pack) -> tuple[str, str, str, str]:
    """The speed example, Lab 2 as written, at 2048 wide and batch 16, and at 64 wide (tiny)."""
    speed = _step(pack, "autocast", "speed").code
    lab2 = _step(pack, "labs", "autocast-cpu").code
    assert "WIDTH, BATCH, LAYERS = 512, 256, 4" in lab2
    wide = lab2.replace("WIDTH, BATCH, LAYERS = 512, 256, 4", "WIDTH, BATCH, LAYERS = 2048, 16, 4")
    tiny = lab2.replace("WIDTH, BATCH, LAYERS = 512, 256, 4", "WIDTH, BATCH, LAYERS = 64, 256, 4")
    return speed, lab2, wide, tiny


def _medians(outputs: list[str]) -> dict:
    """The numbers of rounds of the four variants (``outputs`` in _variants' order, round after
    round), each the median over the rounds."""
    per_batch: dict[int, list] = {}
    for out in outputs[0::4]:
        rows = list(SPEED.finditer(out))
        assert len(rows) == 2, out
        for row in rows:
            per_batch.setdefault(int(row["batch"]), []).append(
                (float(row["ratio"]), float(row["mm"]), float(row["copy"])))
    return {
        "speed": {batch: tuple(statistics.median(v[i] for v in values) for i in range(3))
                  for batch, values in per_batch.items()},
        "faults": _faults(outputs[0::4]),
        "lab2": statistics.median(float(LAB2.search(out).group(1)) for out in outputs[1::4]),
        "lab2_wide": statistics.median(float(LAB2.search(out).group(1)) for out in outputs[2::4]),
        "lab2_tiny": statistics.median(float(LAB2.search(out).group(1)) for out in outputs[3::4]),
        "rounds": len(outputs) // 4,
    }


#: A claim: what it is, the measured value, ">" or "<", and the bound it must lie beyond.
Claim = tuple[str, float, str, float]


def speed_claims(isa: str, got: dict) -> list[Claim]:
    """What the lessons say of speed on the class ``isa``, as values and the bounds they must pass."""
    (ratio_256, mm_256, copy_256), (ratio_16, mm_16, copy_16) = got["speed"][256], got["speed"][16]
    if LESSON_CLASS[isa] == "none":
        # "the profile puts the time in the matrix multiplies themselves, more than in the casts,
        # and autocast is slower at both shapes"; Lab 2: "expect a speed-up below 1 at any size"
        # (the lesson's words are "below 1"; AVX512_CORE measured 0.78 and 0.82, medians of three);
        # tiny layers "do not break even" (0.35x AVX512_CORE, 0.1x AVX2 here)
        return [("bf16 / float32 at batch 256", ratio_256, ">", SLOWER),
                ("bf16 / float32 at batch 16", ratio_16, ">", SLOWER),
                ("multiplies / casts at batch 256", mm_256 / max(copy_256, 1e-9), ">", MORE),
                ("Lab 2's speed-up", got["lab2"], "<", 1.0), ("Lab 2's speed-up, wide", got["lab2_wide"], "<", 1.0),
                ("Lab 2's speed-up, tiny", got["lab2_tiny"], "<", FASTER)]
    if LESSON_CLASS[isa] == "AVX-512 BF16 without AMX":
        # "At batch 256 that wins ... At batch 16 with 2048-wide layers it can lose ... It lost here,
        # with glibc's default allocator: ... `copy_` taking longer than the multiplies"; Lab 2 wins
        # as written and drops below 1 at 2048 wide, batch 16 ("it did here"); q-cpu-slower's
        # premise: copy_ outweighs the multiplies there; tiny layers come out slower (0.67x here)
        return [("bf16 / float32 at batch 256", ratio_256, "<", FASTER),
                ("bf16 / float32 at batch 16", ratio_16, ">", SLOWER),
                ("casts / multiplies at batch 16", copy_16 / max(mm_16, 1e-9), ">", MORE),
                ("Lab 2's speed-up", got["lab2"], ">", SLOWER), ("Lab 2's speed-up, wide", got["lab2_wide"], "<", FASTER),
                ("Lab 2's speed-up, tiny", got["lab2_tiny"], "<", FASTER)]
    # AMX: "the case where autocast is expected to gain most at batch 256"
    return [("bf16 / float32 at batch 256", ratio_256, "<", FASTER), ("Lab 2's speed-up", got["lab2"], ">", SLOWER)]


def fault_claims(isa: str, got: dict) -> list[Claim]:
    """What the speed example's page-fault counts must show on the class ``isa`` (see the test)."""
    fp32, bf16 = got["faults"][16]
    claims: list[Claim] = [("float32's faults per forward", fp32, "<", 50)]
    if LESSON_CLASS[isa] == "AVX-512 BF16 without AMX" and not huge_pages_always():
        claims += [("bf16's faults per forward", bf16, ">", 1000),
                   ("bf16's faults over float32's", bf16 / (fp32 + 1), ">", 10)]
    return claims


def holds(claim: Claim, factor: float = 1.0) -> bool:
    """Whether the claim's value lies beyond its bound, by ``factor`` (1: just beyond)."""
    _name, value, side, bound = claim
    return value > bound * factor if side == ">" else value < bound / factor


#: A class whose every claim lies this far beyond its bound after one round is not run twice more:
#: no round of the same code on the same machine moves a ratio that far (AVX2's 3.5-4.6x against
#: 1.1: one round instead of three, about 40 s of the suite), and one nearer a bound gets RUNS.
SURE_FACTOR = 1.5


def failed(claims: list[Claim]) -> list[str]:
    return [f"{name}: {value:.3g} is not {side} {bound}" for name, value, side, bound in claims
            if not holds((name, value, side, bound))]


@pytest.fixture(scope="module")
def measured(pack):
    """isa -> {"speed": {batch: (ratio, mm, copy)}, "faults": {batch: (float32, bf16)}, "lab2": speed-up,
    "lab2_wide": speed-up, "lab2_tiny": speed-up, "rounds": n}, medians of one round where every
    claim is far from its bound (SURE_FACTOR), else of RUNS, with the default allocator."""
    found = {}
    for isa in CLASSES:
        outputs = _run_all(list(_variants(pack)), isa)
        got = _medians(outputs)
        if not all(holds(claim, SURE_FACTOR) for claim in speed_claims(isa, got) + fault_claims(isa, got)):
            got = _medians(outputs + _run_all(list(_variants(pack)) * (RUNS - 1), isa))
        found[isa] = got
        print(f"ONEDNN_MAX_CPU_ISA={isa}: {got}")  # shown with -s: the numbers behind a verdict
    return found


def test_the_lesson_names_each_class_it_is_tested_for(pack):
    explain = " ".join(en(_step(pack, "autocast", "speed").explain).split())
    for name in set(LESSON_CLASS.values()):
        assert f"**{name}**" in explain, name
        assert f"**{name}**" in _step(pack, "autocast", "speed").explain["zh"], name
    # the sentences the measurements below hold the lesson to
    for phrase in ("autocast is slower at both shapes", "At batch 256 that wins",
                   "At batch 16 with 2048-wide layers it can lose", "time in the matrix multiplies themselves",
                   "It lost here, with glibc's default allocator: thousands of page faults per bf16 forward against "
                   "none for float32, and `copy_` taking longer than the multiplies",
                   "Very small layers (try 64 wide) do not break even"):
        assert phrase in explain, phrase
    lab2 = " ".join(en(_step(pack, "labs", "autocast-cpu").explain).split())
    for phrase in ("Without bfloat16 matrix instructions, expect a speed-up below 1 at any size",
                   "The ratio can drop below 1", "Tiny layers (`WIDTH = 64`) do not break even",
                   "Here bf16 came out slower on every CPU class tried"):
        assert phrase in lab2, phrase


@pytest.mark.slow
@pytest.mark.skipif(not CLASSES, reason="not an x86 CPU with AVX2 or better (or not Linux)")
@pytest.mark.parametrize("isa", ORDER)
def test_what_the_lesson_says_for_the_class_is_what_it_measures(pack, measured, isa):
    if isa not in CLASSES:
        pytest.skip(f"this machine is {REAL}: it cannot stand in for {isa}")
    got = measured[isa]
    assert not failed(speed_claims(isa, got)), (f"under ONEDNN_MAX_CPU_ISA={isa} ({LESSON_CLASS[isa]}): "
                                                f"{failed(speed_claims(isa, got))}; {got}")


def test_the_quiz_premise_is_the_lesson_case(pack):
    """q-cpu-slower describes the AVX-512 BF16 case the measurements above check."""
    quiz = _step(pack, "self-test", "q-cpu-slower")
    question = en(quiz.question)
    assert "avx512_bf16" in question and "batch 16" in question and "2048-wide" in question
    correct = [choice for choice in quiz.choices if choice.correct]
    assert len(correct) == 1 and "casts" in en(correct[0].text)
    # its explanation teaches what the measurements show: the fresh copies' page faults, not the
    # conversion's arithmetic, and that another allocator can turn the verdict
    why = " ".join(en(correct[0].explain).split())
    assert "takes a page fault for every new page, inside `copy_`" in why, why
    assert "more than the conversion itself" in why and "an allocator that keeps freed memory" in why, why


@pytest.mark.slow
@pytest.mark.skipif(not CLASSES, reason="not an x86 CPU with AVX2 or better (or not Linux)")
@pytest.mark.parametrize("isa", ORDER)
def test_the_casts_take_page_faults_with_the_default_allocator(pack, measured, isa):
    """04 `speed`: "thousands of page faults per bf16 forward against none for float32" at 2048 wide,
    batch 16 (the AVX-512 BF16 bullet's "It lost here"): each forward's fresh 8 MiB copies land in
    pages glibc gave back, up to 2048 small pages each. Medians of three here: 6 112 and 6 522
    (BF16), 8 160 twice (AVX2), but 1 355 and 239 (AVX512_CORE): how many depends on where glibc
    put the copies among the other blocks, which oneDNN's path changes, so only the class the
    lesson says it for is held to thousands; float32's forward takes none on every class (0 in
    all six). Counted, not timed."""
    if isa not in CLASSES:
        pytest.skip(f"this machine is {REAL}: it cannot stand in for {isa}")
    if not glibc():
        pytest.skip("the lesson's count is glibc's default allocator's")
    problems = failed(fault_claims(isa, measured[isa]))
    assert not problems, f"under ONEDNN_MAX_CPU_ISA={isa}: {problems}; {measured[isa]['faults']}"


def test_a_sure_class_is_measured_once_and_one_near_a_bound_three_times():
    """The early stop above: AVX2's numbers of 2026-12-07 are all far from their bounds, AVX512_CORE's
    1.35x is not (1.1 is its bound), and a failing claim is never sure."""
    avx2 = {"speed": {256: (4.56, 30.0, 5.0), 16: (3.5, 20.0, 4.0)}, "faults": {16: (0, 8160)},
            "lab2": 0.21, "lab2_wide": 0.3, "lab2_tiny": 0.06}
    claims = speed_claims("AVX2", avx2) + fault_claims("AVX2", avx2)
    assert all(holds(claim, SURE_FACTOR) for claim in claims) and not failed(claims)
    core = {**avx2, "speed": {256: (1.35, 30.0, 5.0), 16: (1.47, 20.0, 4.0)}, "lab2": 0.78}
    assert not failed(speed_claims("AVX512_CORE", core))
    assert not all(holds(claim, SURE_FACTOR) for claim in speed_claims("AVX512_CORE", core))
    wrong = {**avx2, "speed": {256: (0.5, 30.0, 5.0), 16: (3.5, 20.0, 4.0)}}
    assert failed(speed_claims("AVX2", wrong)) == ["bf16 / float32 at batch 256: 0.5 is not > 1.1"]
    assert not all(holds(claim, SURE_FACTOR) for claim in speed_claims("AVX2", wrong))


@pytest.fixture(scope="module")
def kept(pack):
    """(isa, results) with glibc keeping freed memory (the lesson's setting): the speed example once
    and Lab 2 at 2048 wide, batch 16, RUNS times, under AVX512_CORE_BF16 where this machine can
    stand in for it (the class whose batch-16 verdict the allocator decides); elsewhere the speed
    example once under the machine's own class, for the fault count only. (One speed run: its
    batch-16 ratio, 0.7-0.9x here, is far from the 1.1 it is held to; 12 s of the 18 s this costs.)"""
    speed, _, wide, _ = _variants(pack)
    isa = "AVX512_CORE_BF16" if "AVX512_CORE_BF16" in CLASSES else REAL
    if isa == "AVX512_CORE_BF16":
        outputs = _run_all([speed] + [wide] * RUNS, isa, tunables=KEEP_FREED)
        speeds, wides = outputs[:1], outputs[1:]
    else:
        speeds, wides = _run_all([speed], isa, tunables=KEEP_FREED), []
    ratios = [float(row["ratio"]) for out in speeds for row in SPEED.finditer(out) if row["batch"] == "16"]
    got = {"faults": _faults(speeds), "ratio_16": statistics.median(ratios),
           "lab2_wide": statistics.median(float(LAB2.search(out).group(1)) for out in wides) if wides else None}
    print(f"GLIBC_TUNABLES={KEEP_FREED}, ONEDNN_MAX_CPU_ISA={isa}: {got}")  # shown with -s
    return isa, got


@pytest.mark.slow
@pytest.mark.skipif(not CLASSES, reason="not an x86 CPU with AVX2 or better (or not Linux)")
@pytest.mark.skipif(not glibc(), reason="GLIBC_TUNABLES is glibc's")
def test_keeping_freed_memory_removes_the_faults_and_decides_the_batch_16_verdict(pack, measured, kept):
    """04 `speed`: with GLIBC_TUNABLES as the lesson gives it "the bf16 forward's page faults then fell
    from thousands to at most a few hundred, and at batch 16 autocast came out as fast as float32
    or faster"; Lab 2: "it rose above 1 (1.05-1.4x)" from 0.4-0.5x. The verdicts are held side by side
    with the default allocator's, run for run the same code (here: 1.6-1.9x -> 0.7-0.9x, and Lab 2
    0.47x -> 1.23x); the faults are counted."""
    explain = " ".join(en(_step(pack, "autocast", "speed").explain).split())
    mmap, trim = KEEP_FREED.split(":")
    assert f"`GLIBC_TUNABLES` to `{mmap}` and `{trim}`, joined by a colon" in explain, explain
    isa, got = kept
    default = measured[isa]
    where = f"under ONEDNN_MAX_CPU_ISA={isa}: kept freed memory {got}, default allocator {default}"
    fp32, bf16 = got["faults"][16]
    assert fp32 < 50 and bf16 < 1000, where
    if isa == "AVX512_CORE_BF16":
        if not huge_pages_always():  # "from thousands"; the default's count elsewhere varies (see above)
            assert bf16 < default["faults"][16][1] / 10, where
        ratio_16 = default["speed"][16][0]
        assert ratio_16 > SLOWER and got["ratio_16"] < SLOWER and got["ratio_16"] < ratio_16 / 1.5, where
        assert default["lab2_wide"] < FASTER and got["lab2_wide"] > FASTER, where
        assert got["lab2_wide"] > 1.5 * default["lab2_wide"], where
