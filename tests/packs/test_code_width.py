"""Every line of the pack's code fits the editor at 80x24, so nothing scrolls sideways.

Measured in the app at 80x24 (tmux, torch-tutor 2026-12): the code editor of an exercise or an
example shows 66 columns of code when its line numbers take two digits and the code is taller
than the editor (the vertical scrollbar takes its share); with three-digit line numbers it is
one column less. Code of fewer lines gets a little more room, but a pack line has to fit every
case, so the limit is 66 (65 from line 100 on).
"""

from __future__ import annotations

import re

from tests.packs.conftest import PACK_DIR
from tutor.pack.models import Example, Exercise, PredictQuiz

EDITOR_COLUMNS = 66
CODE_KEYS = ("code", "starter", "solution")
BLOCK = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_-]+): *[|>][-+0-9]*\s*$")


def limit(lines_in_block: int) -> int:
    return EDITOR_COLUMNS - max(0, len(str(lines_in_block)) - 2)


def code_blocks(path):
    """(first file line, [block lines]) for every code/starter/solution block scalar in a YAML file
    (also the per-language blocks under such a key)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, parents = [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if stripped and not stripped.startswith("#"):
            parents = [(d, k) for d, k in parents if d < indent]
            key = stripped.split(":", 1)[0].lstrip("- ").strip()
            parents.append((indent, key))
        match = BLOCK.match(line)
        if match and any(k in CODE_KEYS for _, k in parents):
            start, body = i + 1, []
            j = start
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip(" ")) > indent):
                body.append(lines[j])
                j += 1
            while body and not body[-1].strip():
                body.pop()
            depth = min((len(b) - len(b.lstrip(" ")) for b in body if b.strip()), default=0)
            blocks.append((start + 1, [b[depth:] for b in body]))
            i = j
            continue
        i += 1
    return blocks


def _loaded_code_lines(pack) -> int:
    total = 0
    for lesson in pack.lessons:
        for step in lesson.steps:
            fields = []
            if isinstance(step, (Example, PredictQuiz)):
                fields.append(step.code)
            if isinstance(step, Exercise):
                fields += [step.starter, step.solution]
            for text in fields:
                for variant in (text.values() if isinstance(text, dict) else [text]):
                    total += len(variant.rstrip("\n").splitlines())
    return total


def test_every_code_line_fits_the_editor_at_80x24(pack):
    too_wide, seen = [], 0
    for path in sorted(PACK_DIR.glob("*.yaml")):
        for first, body in code_blocks(path):
            seen += len(body)
            width = limit(len(body))
            for offset, line in enumerate(body):
                if len(line) > width:
                    too_wide.append(f"{path.name}:{first + offset}: {len(line)} columns (the editor shows {width}): "
                                    f"{line.strip()[:40]}")
    # the scan found every line the loader gives the learner, so a line it missed cannot hide
    assert seen == _loaded_code_lines(pack)
    assert not too_wide, "\n".join(too_wide)


def test_the_scan_names_file_and_line(tmp_path):
    sample = tmp_path / "lesson.yaml"
    sample.write_text("steps:\n  - id: a\n    kind: example\n    code: |\n      import torch\n\n      x = "
                      + "1" * 70 + "\n    expect: {output: x}\n", encoding="utf-8")
    assert code_blocks(sample) == [(5, ["import torch", "", "x = " + "1" * 70])]
    assert limit(9) == limit(99) == 66 and limit(100) == 65
