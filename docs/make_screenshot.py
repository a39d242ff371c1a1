"""Regenerate assets/screenshot.svg (the picture in the README): the built-in pack's first trap
exercise, its starter checked in the real sandbox (a failed check with its hint and the memory
chart), at 100x32.

    python docs/make_screenshot.py [--out assets/screenshot.svg]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.app.app import TutorApp  # noqa: E402
from tutor.app.engine import Engine  # noqa: E402
from tutor.settings.config import load_settings  # noqa: E402
from tutor.pack.discovery import FoundPack, builtin_pack_dirs  # noqa: E402
from tutor.pack.loader import load_pack  # noqa: E402
from tutor.record.progress import ProgressStore  # noqa: E402

PACK, LESSON, STEP = "debugging-and-speed", "three-traps", "accumulate-graph"


async def shoot(out: Path) -> None:
    data = Path(tempfile.mkdtemp(prefix="tt-shot-"))
    settings = load_settings({"data_dir": str(data)}, config_file=data / "none.toml", environ={})
    store = ProgressStore.open(data)
    store.positions.set(PACK, LESSON, STEP)
    folder = next(p for p in builtin_pack_dirs() if p.name == PACK)
    engine = Engine(settings)
    app = TutorApp(found=[FoundPack(folder, "built-in", load_pack(folder))], store=store, engine=engine,
                   settings=settings, start_pack=PACK)
    async with app.run_test(size=(100, 32)) as pilot:
        while "ready" not in engine.status_text():  # the sandbox warms up in the background
            await pilot.pause(0.2)
        await pilot.press("f6")
        while app.screen.step_view.running:
            await pilot.pause(0.2)
        await pilot.pause(0.5)
        app.screen.set_focus(None)  # no blinking cursor in the picture
        await pilot.pause(0.2)
        out.write_text(app.export_screenshot(title="torch-tutor"), encoding="utf-8")
    engine.close()
    store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "assets" / "screenshot.svg")
    args = parser.parse_args()
    asyncio.run(shoot(args.out))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
