"""App start-up: `torch-tutor` to its first interactive screen, against a bare Textual hello world.

Both run side by side, alternating, each as a fresh process in Textual's headless mode (the
same compositor and rendering, no terminal: a pseudo-terminal made the hello world itself hang
now and then waiting on terminal queries), and each exits right after its first screen has been
painted; the time is from spawning the process to that paint (interpreter start, imports, packs, progress
store, compose, layout, first render).
The tutor is measured twice: a first start (the contents) and a resumed start (a lesson step
with its code editor). The target (issue 6): under 1.5x the hello world.

    python bench/startup.py [--repeat 15]
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

def painted(node):
    # Report the moment the first screen is drawn, then leave at once: what happens at exit
    # (the sandbox waiting out its warm-up) is not start-up.
    def done():
        print("PAINTED", time.time(), flush=True)
        os._exit(0)
    node.call_after_refresh(done)
"""

HELLO = HEADLESS + """
from textual.app import App
from textual.widgets import Footer, Static

class Hello(App):
    def compose(self):
        yield Static("Hello, world")
        yield Footer()

    def on_mount(self):
        painted(self)

Hello().run()
"""

# The tutor's own entry point, with one hook: exit once the first screen has been drawn.
TUTOR = HEADLESS + """
import sys
from tutor.app.screens import home, lesson

def exit_after_paint(screen):
    painted(screen)

_home_mount = home.HomeScreen.on_mount
def on_mount(self):
    _home_mount(self)
    if not self.app.store.position("mini"):  # a first start stays on the contents
        exit_after_paint(self)
home.HomeScreen.on_mount = on_mount

_show = lesson.LessonScreen._show
async def show(self, place):
    await _show(self, place)
    exit_after_paint(self)
lesson.LessonScreen._show = show

from tutor.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def run_once(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning a fresh process to its first screen being drawn."""
    started = time.time()
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=120)
    marks = [line for line in proc.stdout.decode().splitlines() if line.startswith("PAINTED ")]
    if proc.returncode != 0 or not marks:
        raise RuntimeError(f"exited {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    return float(marks[0].split()[1]) - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tt-startup-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env.update(TERM="xterm-256color", TORCH_TUTOR_CONFIG_DIR=str(tmp / "config"))
    fresh, resumed = tmp / "fresh", tmp / "resumed"
    tutor = [sys.executable, "-c", TUTOR, "--pack", str(MINI)]
    cases = {
        "hello world (bare Textual)": [sys.executable, "-c", HELLO],
        "torch-tutor, first start (contents)": tutor[:3] + ["--data-dir", str(fresh)] + tutor[3:],
        "torch-tutor, resumed (exercise + editor)": tutor[:3] + ["--data-dir", str(resumed)] + tutor[3:],
    }
    # Seed the resumed case: a saved position on the exercise step.
    from tutor.core.progress import ProgressStore

    store = ProgressStore.open(resumed)
    store.set_position("mini", "exercises", "double")
    store.close()

    times: dict[str, list[float]] = {name: [] for name in cases}
    for name, argv in cases.items():  # one warm-up each: page cache, .pyc files
        run_once(argv, env)
    for _ in range(args.repeat):
        for name, argv in cases.items():
            times[name].append(run_once(argv, env))
            if "first start" in name:  # keep it a first start
                shutil.rmtree(fresh, ignore_errors=True)
    base = statistics.median(times["hello world (bare Textual)"])
    print(f"{'case':<44}{'median':>10}{'min':>10}{'ratio':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<44}{median * 1000:>8.0f}ms{min(values) * 1000:>8.0f}ms{median / base:>8.2f}")
    print(f"({args.repeat} runs each, alternating; {os.cpu_count()} CPUs; python {sys.version.split()[0]})")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
