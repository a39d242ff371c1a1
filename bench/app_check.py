"""A Check in the app, on a warm worker: from the key press to the report on screen.

Drives the real app (Pilot, headless) on the test pack's small exercise with the real sandbox
and check engine; medians over several Checks once the worker is warm. Target (issue 6): 0.5 s.
Two times per Check: until the first frame the screen draws with the new report in it
(``Screen._compositor_refresh``, where Textual draws a frame), and until the app is idle again
(the report laid out to its full height and revealed; Pilot's ``pause``).

    python bench/app_check.py [--repeat 10] [--mode auto|fork|spawn] [--spawn-runners forked|fresh]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "app"))

from app_support import MINI, make_settings  # noqa: E402
from tutor.app.app import TutorApp  # noqa: E402
from tutor.app.engine import Engine  # noqa: E402
from tutor.app.widgets.report import CheckReport  # noqa: E402
from tutor.pack.discovery import FoundPack  # noqa: E402
from tutor.pack.loader import load_pack  # noqa: E402
from tutor.record.progress import ProgressStore  # noqa: E402


async def measure(repeat: int, first: list[float] | None = None, **flags: str) -> list[float]:
    """Seconds from the key press to the app idle again, per Check; ``first`` gets those to the
    first frame drawn with the new report. ``flags``: settings (``sandbox_mode``, ``spawn_runners``)."""
    data = Path(tempfile.mkdtemp(prefix="tt-check-"))
    settings = make_settings(data, **flags)
    app = TutorApp(found=[FoundPack(MINI, "--pack", load_pack(MINI))], store=ProgressStore.open(data),
                   engine=Engine(settings), settings=settings, start_pack="mini", start_lesson="exercises")
    times = []
    async with app.run_test(size=(100, 32)) as pilot:
        while not app.engine.available:
            await pilot.pause(0.1)
        await asyncio.to_thread(app.engine._sandbox.wait_ready, 300)
        screen = app.screen
        draw = screen._compositor_refresh
        old: set[int] = set()
        shown: list[float] = []

        def drawn() -> None:
            if not shown and any(id(r) not in old and r.is_mounted and r.region.height > 0
                                 for r in screen.query(CheckReport)):
                shown.append(time.perf_counter())
            draw()

        screen._compositor_refresh = drawn
        for i in range(repeat + 1):  # the first Check warms the probe's imports
            before = len(app.screen.query(CheckReport))
            old = {id(r) for r in screen.query(CheckReport)}
            shown.clear()
            started = time.perf_counter()
            await pilot.press("f6")
            while True:
                reports = app.screen.query(CheckReport)
                if reports and (before == 0 or reports.first() is not None) and not app.screen.step_view.running:
                    break
                await asyncio.sleep(0.005)
            await pilot.pause()
            if i:
                times.append(time.perf_counter() - started)
                if first is not None and shown:
                    first.append(shown[0] - started)
    app.engine.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--mode", choices=("auto", "fork", "spawn"), default="auto", help="the sandbox_mode setting")
    parser.add_argument("--spawn-runners", choices=("forked", "fresh"), default="forked",
                        help="the spawn_runners setting (spawn mode)")
    args = parser.parse_args()
    first: list[float] = []
    times = asyncio.run(measure(args.repeat, first, sandbox_mode=args.mode, spawn_runners=args.spawn_runners))
    print(f"sandbox_mode {args.mode}" + (f", spawn_runners {args.spawn_runners}" if args.mode == "spawn" else ""))
    print(f"Check on a warm worker, key press to the first frame with the report: median "
          f"{statistics.median(first) * 1000:.0f} ms, min {min(first) * 1000:.0f} ms, max {max(first) * 1000:.0f} ms")
    print(f"Check on a warm worker, key press to the app idle again: median {statistics.median(times) * 1000:.0f} ms, "
          f"min {min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms ({len(times)} Checks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
