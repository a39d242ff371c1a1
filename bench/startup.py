"""App start-up: `torch-tutor` to its first interactive screen, against a bare Textual hello world.

Both run side by side, in pairs (a hello world, then a tutor start), each as a fresh process in Textual's headless mode (the
same compositor and rendering, no terminal: a pseudo-terminal made the hello world itself hang
now and then waiting on terminal queries), and each exits as soon as the first frame showing its
content has been rendered to the bytes a terminal would be sent; the time is from spawning the
process to that frame (interpreter start, imports, packs, progress store, compose, layout, first
render).
The tutor is measured three ways: its very first start (no pack cache yet, so the packs are
read from YAML and validated: once after installing, and again only when a pack or the tutor
changes), a start on the contents, and a resumed start (a lesson step with its code editor).
The target (issue 6): under 1.5x the hello world. Like the hello world, which runs from warm
.pyc files, the later starts run from the caches the first one wrote, and the very first start
from what an earlier process kept beside the tutor's own .pyc files: the validators
(validation.py) and the built-in pack, validated (packcache.shared_dir); ``--after-install``
removes those before each very first start (the first start after installing, which reads the
built-in pack's YAML and builds the validators with pydantic).

    python bench/startup.py [--repeat 15] [--after-install]
    (--repeat 1: the suite runs it so, tests/bench/test_bench.py)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MINI = ROOT / "tests" / "app" / "packs" / "mini"

HEADLESS = """
import os, time
from functools import partialmethod
from textual.app import App
App.run = partialmethod(App.run, headless=True, size=(100, 32))

def shows_content(screen):
    return False  # each case says what its first screen must show

_display = App._display

def _display_when_ready(self, screen, renderable):
    _display(self, screen, renderable)
    # A frame Textual actually sends (not held back by a batch update) showing the content.
    if renderable is not None and not self._batch_count and shows_content(screen):
        renderable.render_segments(self.console)  # the bytes a terminal would be sent
        # Leave at once: what happens at exit (the sandbox waiting out its warm-up) is not start-up.
        print("PAINTED", time.time(), type(screen).__name__, flush=True)
        os._exit(0)
App._display = _display_when_ready
"""

HELLO = HEADLESS + """
from textual.widgets import Footer, Static

def shows_content(screen):
    return bool(screen.query("#hello"))

class Hello(App):
    def compose(self):
        yield Static("Hello, world", id="hello")
        yield Footer()

Hello().run()
"""

# The tutor's own entry point; its first screen shows content once the contents table has rows
# or a lesson step is mounted.
TUTOR = HEADLESS + """
import sys

def shows_content(screen):
    name = type(screen).__name__
    if name == "HomeScreen":
        return any(table.row_count for table in screen.query("#toc"))
    return name == "LessonScreen" and bool(screen.query("StepView"))

import tutor.app.launch  # headless: no terminal needed (the command refuses to start without one)
tutor.app.launch.at_a_terminal = lambda: True
from tutor.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


#: The first screen each case must draw: a start that drew another one measured the wrong thing
#: (a resumed start that lost its saved place draws the contents).
SCREENS = {"hello world (bare Textual)": "Screen", "torch-tutor, very first start (no cache)": "HomeScreen",
           "torch-tutor, start (contents)": "HomeScreen", "torch-tutor, resumed (exercise + editor)": "LessonScreen"}


def run_once(argv: list[str], env: dict[str, str], screen: str) -> float:
    """Seconds from spawning a fresh process to its first screen, ``screen``, being drawn."""
    started = time.time()
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=120)
    marks = [line.split() for line in proc.stdout.decode().splitlines() if line.startswith("PAINTED ")]
    if proc.returncode != 0 or not marks:
        raise RuntimeError(f"exited {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    if marks[0][2:] != [screen]:
        raise RuntimeError(f"drew {' '.join(marks[0][2:]) or 'nothing'} first, not {screen}")
    return float(marks[0][1]) - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--after-install", action="store_true",
                        help="remove what earlier processes kept beside the tutor's bytecode before each very first start")
    args = parser.parse_args()
    from tutor.pack.packcache import shared_dir
    from tutor.pack.validation import kept_file
    tmp = Path(tempfile.mkdtemp(prefix="tt-startup-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env.update(TERM="xterm-256color", TORCH_TUTOR_CONFIG_DIR=str(tmp / "config"))
    # A learner's Python keeps .pyc files (pip writes them for an installed wheel); this machine's
    # environment sets PYTHONDONTWRITEBYTECODE, which would recompile the tutor's own modules (an
    # editable install has no .pyc) on every start while Textual's came precompiled.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    fresh, contents, resumed = tmp / "fresh", tmp / "contents", tmp / "resumed"
    tutor = [sys.executable, "-c", TUTOR, "--pack", str(MINI)]
    cases = {
        "hello world (bare Textual)": [sys.executable, "-c", HELLO],
        "torch-tutor, very first start (no cache)": tutor[:3] + ["--data-dir", str(fresh)] + tutor[3:],
        "torch-tutor, start (contents)": tutor[:3] + ["--data-dir", str(contents)] + tutor[3:],
        "torch-tutor, resumed (exercise + editor)": tutor[:3] + ["--data-dir", str(resumed)] + tutor[3:],
    }
    # Seed the resumed case: a saved position on the exercise step.
    from tutor.record.progress import ProgressStore

    store = ProgressStore.open(resumed)
    store.positions.set("mini", "exercises", "double")
    store.close()

    hello = "hello world (bare Textual)"
    times: dict[str, list[float]] = {name: [] for name in cases}
    ratios: dict[str, list[float]] = {name: [] for name in cases if name != hello}
    for name, argv in cases.items():  # one warm-up each: page cache, .pyc files
        run_once(argv, env, SCREENS[name])
    shutil.rmtree(fresh, ignore_errors=True)
    for _ in range(args.repeat):
        for name, argv in cases.items():
            if name == hello:
                continue
            # Each tutor start right after a hello world: the pair sees the same machine, so
            # the ratio of the pair cancels the VM's drift between rounds.
            if "very first" in name and args.after_install:
                kept_file().unlink(missing_ok=True)
                shutil.rmtree(shared_dir(), ignore_errors=True)
            base = run_once(cases[hello], env, SCREENS[hello])
            times[hello].append(base)
            times[name].append(run_once(argv, env, SCREENS[name]))
            ratios[name].append(times[name][-1] / base)
            if "very first" in name:  # keep it a first start: no progress, no pack cache
                shutil.rmtree(fresh, ignore_errors=True)
    print(f"{'case':<44}{'median':>10}{'min':>10}{'ratio':>8}")
    for name, values in times.items():
        ratio = statistics.median(ratios[name]) if name in ratios else 1.0
        print(f"{name:<44}{statistics.median(values) * 1000:>8.0f}ms{min(values) * 1000:>8.0f}ms{ratio:>8.2f}")
    print(f"(ratio: median over {args.repeat} pairs of the case's time over a hello world run just "
          f"before it; {os.cpu_count()} CPUs; python {sys.version.split()[0]}; very first start with "
          f"{'nothing kept: as after installing' if args.after_install else 'what an earlier process kept'})")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
