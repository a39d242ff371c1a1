"""Pack loading speed: a generated 2,000-lesson pack and the built-in pack.

Run: python bench/load.py [--lessons 2000] [--repeat 7]
Prints medians; docs/performance.md quotes them with this command.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.pack.discovery import builtin_pack_dirs  # noqa: E402
from tutor.pack.loader import load_pack  # noqa: E402

LESSON = """\
id: lesson-{i}
title: {{en: Lesson {i}, zh: 第 {i} 课}}
steps:
  - id: read
    kind: prose
    body: |
      Some **Markdown** for lesson {i}, long enough to look like a real paragraph of prose
      that explains one idea about tensors and their shapes.
  - id: run
    kind: example
    code: |
      import torch
      print(torch.ones({i} % 7 + 1).sum())
    expect: {{output: "tensor"}}
  - id: ask
    kind: quiz
    style: choice
    question: Which one?
    choices:
      - {{text: this, correct: true, explain: because}}
      - {{text: that, explain: because not}}
  - id: fix-{i}
    kind: exercise
    body: Write double.
    contract: [{{name: double, signature: "double(t)", description: twice t}}]
    starter: "def double(t):\\n    return t\\n"
    solution: "def double(t):\\n    return 2 * t\\n"
    checks:
      - id: values
        kind: tensor
        description: doubles
        cases: [{{n: 2}}, {{n: 5}}]
        setup: x = torch.randn(n)
        value: double(x)
        close_to: 2 * x
    hints: [Multiply., "return 2 * t"]
"""


def generate(root: Path, lessons: int) -> None:
    names = []
    for i in range(lessons):
        name = f"lesson-{i:04d}.yaml"
        (root / name).write_text(LESSON.format(i=i), encoding="utf-8")
        names.append(name)
    header = "format_version: 1\nid: big\ntitle: Big\nversion: 1.0.0\nlanguages: [en, zh]\nlessons:\n"
    (root / "pack.yaml").write_text(header + "".join(f"  - {n}\n" for n in names), encoding="utf-8")


def median_seconds(func, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        func()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lessons", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(root, args.lessons)
        big = median_seconds(lambda: load_pack(root), args.repeat)
        command = [sys.executable, "-m", "tutor", "validate", tmp]
        help_text = subprocess.run(command[:4] + ["--help"], capture_output=True, text=True).stdout
        if "--no-run" in help_text:  # structure only: running 2,000 exercises is another benchmark
            command.append("--no-run")
        cli = median_seconds(lambda: subprocess.run(command, check=True, capture_output=True),
                             max(1, args.repeat // 2))
    print(f"load {args.lessons}-lesson pack (in process): median {big:.3f} s over {args.repeat} runs")
    print(f"`torch-tutor validate` of it (whole command):  median {cli:.3f} s")
    builtin = builtin_pack_dirs()[0]
    small = median_seconds(lambda: load_pack(builtin), args.repeat * 3)
    print(f"load the built-in pack ({builtin.name}): median {small * 1000:.1f} ms over {args.repeat * 3} runs")


if __name__ == "__main__":
    main()
