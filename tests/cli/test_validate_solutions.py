"""validate runs every reference solution (issue 34.5) and reports each `calls` bound's measured
count and margin in --json and --repeat, where `measured` and `margin` used to be null."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PACK = """\
format_version: 1
id: sols
title: Solutions
version: "0.1.0"
lessons:
  - id: lesson
    title: Lesson
    steps:
      - id: diag
        kind: exercise
        body: the diagonal
        contract:
          - {name: diag, signature: diag(a), description: the diagonal of a}
        starter: |
          import torch
          def diag(a):
              return torch.stack([a[i, i] for i in range(len(a))])
        solution: |
          import torch
          def diag(a):
              return a[torch.arange(len(a)), torch.arange(len(a))]
        solutions:
          - |
            import torch
            def diag(a):
                i = torch.arange(len(a))
                return a.flatten()[i * (len(a) + 1)]
          - |
            import torch
            def diag(a):
                return torch.stack([a[i, i] for i in range(len(a))])
        checks:
          - id: values
            kind: tensor
            description: the diagonal
            setup: a = torch.randn(6, 6)
            value: diag(a)
            close_to: torch.diagonal(a)
          - id: few-calls
            kind: profile
            description: a handful of operator calls
            setup: a = torch.randn(6, 6)
            workload: "lambda: diag(a)"
            calls: [{ops: ["aten::*"], at_most: 24}]
        hints: [one, two, three]
"""


def test_every_solution_runs_and_each_calls_bound_has_its_margin(tmp_path):
    folder = tmp_path / "pack"
    folder.mkdir()
    (folder / "pack.yaml").write_text(PACK)
    out = subprocess.run([sys.executable, "-m", "tutor", "validate", "--json", str(folder)], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 1, out.stdout + out.stderr  # the third solution loops: it must be reported
    data = json.loads(out.stdout)
    runs = {run["role"]: run for pack in (data if isinstance(data, list) else [data])
            for run in pack.get("runs", [])}
    assert {"starter", "solution", "solution 2", "solution 3"} <= set(runs), runs.keys()
    assert runs["solution"]["ok"] and runs["solution 2"]["ok"]
    bad = runs["solution 3"]
    assert not bad["ok"]
    problem = bad["problems"][0]
    assert "solutions[1] fails check 'few-calls'" in problem["message"]
    measured = runs["solution"]["measured"]["few-calls calls aten::*"]
    assert measured["needs"] == "at most 24 calls" and measured["measured"].endswith(" calls")
    calls = int(measured["measured"].split()[0])
    assert measured["margin"] == 24 / calls and measured["margin"] >= 1
    assert runs["solution 3"]["measured"]["few-calls calls aten::*"]["margin"] < 1
