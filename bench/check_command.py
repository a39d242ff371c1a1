"""`torch-tutor check` as a learner or a grader runs it from a shell: one command, a sandbox
started for it, one check. Wall time and the machine's CPU time per command, medians, for one or
more checkouts side by side (alternating, so that the machine's load falls on each alike).

    python bench/check_command.py [--runs 5] [--tree .] [--tree ../other-checkout] EXERCISE FILE

Each tree is a checkout with its own ``.venv`` (the README's command); without ``--tree``, this
one, run by the interpreter that runs this script. The CPU time is the whole machine's (``/proc/stat``, Linux), from the command's start to a
second after its end (the sandbox's processes end after the command returns): run it on a quiet
machine. docs/performance.md, "Check in the app, and `torch-tutor check`".
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SETTLE_S = 1.0
SPACING_S = 1.5


def machine_cpu() -> float:
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exercise")
    parser.add_argument("file", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", action="append", type=Path, help="a checkout with a .venv (repeatable)")
    args = parser.parse_args()
    if not os.path.exists("/proc/stat"):
        parser.error("this bench reads /proc/stat (Linux)")
    # Each --tree runs with its own .venv; without one, this checkout runs with this interpreter.
    pythons = {t.resolve(): t.resolve() / ".venv" / "bin" / "python" for t in args.tree or []} \
        or {Path(__file__).resolve().parents[1]: Path(sys.executable)}
    trees = list(pythons)
    for tree, python in pythons.items():
        if not python.exists():
            parser.error(f"{tree} has no .venv/bin/python")
    results: dict[Path, list[tuple[float, float]]] = {tree: [] for tree in trees}
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "TORCH_TUTOR_DATA_DIR": f"{home}/data", "TORCH_TUTOR_CONFIG_DIR": f"{home}/config"}
        for _ in range(args.runs):
            for tree in trees:
                time.sleep(SPACING_S)
                cpu0, start = machine_cpu(), time.monotonic()
                done = subprocess.run([str(pythons[tree]), "-m", "tutor", "check", args.exercise,
                                       str(args.file.resolve())], capture_output=True, text=True, env=env, cwd=home)
                wall = time.monotonic() - start
                time.sleep(SETTLE_S)
                if done.returncode not in (0, 1):
                    print(f"{tree}: exit {done.returncode}: {done.stderr[-500:]}", file=sys.stderr)
                    return 1
                results[tree].append((wall, machine_cpu() - cpu0))
    for tree, rows in results.items():
        print(f"{tree}: check {args.exercise}, {len(rows)} runs: wall median "
              f"{statistics.median(r[0] for r in rows):.2f} s, CPU median {statistics.median(r[1] for r in rows):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
