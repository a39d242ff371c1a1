"""The UI process never imports torch: it costs seconds and belongs in the sandbox workers."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

MINI = Path(__file__).parent / "packs" / "mini"


def test_driving_every_screen_never_imports_torch(tmp_path):
    script = textwrap.dedent(f"""
        import asyncio, sys
        from tutor.app.app import TutorApp
        from tutor.app.engine import Engine
        from tutor.settings.config import load_settings
        from tutor.pack.discovery import FoundPack
        from tutor.pack.loader import load_pack
        from tutor.record.progress import ProgressStore
        from pathlib import Path

        data = Path({str(tmp_path)!r})
        settings = load_settings({{"data_dir": str(data)}}, config_file=data / "none.toml", environ={{}})
        pack = load_pack({str(MINI)!r})
        app = TutorApp(found=[FoundPack(Path({str(MINI)!r}), "--pack", pack)], store=ProgressStore.open(data),
                       engine=Engine(settings), settings=settings, start_pack="mini", start_lesson="basics")

        async def main():
            async with app.run_test(size=(100, 32)) as pilot:
                for _ in range(8):
                    await pilot.press("f4")
                    await pilot.pause()
                await pilot.press("f1")
                await pilot.pause()
        asyncio.run(main())
        app.engine.close()
        leaked = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
        print("LEAKED", leaked)
        sys.exit(1 if leaked else 0)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "LEAKED []" in proc.stdout
