"""A pack whose `requires.torch` the learner's torch does not meet says so on every step.

The session's real sandbox reports the installed torch; a copy of the mini pack asks for a
range that torch is outside of (and, for contrast, one it is inside of).
"""

from __future__ import annotations

import shutil

from app_support import MINI, SIZE, make_settings, screen_text, settle
from tutor.app.app import TutorApp
from tutor.app.engine import Engine
from tutor.pack.discovery import FoundPack
from tutor.pack.loader import load_pack
from tutor.record.progress import ProgressStore


def _pack_requiring(tmp_path, spec: str):
    folder = tmp_path / "mini"
    shutil.copytree(MINI, folder)
    header = folder / "pack.yaml"
    header.write_text(header.read_text(encoding="utf-8") + f'requires:\n  torch: "{spec}"\n', encoding="utf-8")
    return folder, load_pack(folder)


async def _lesson_text(tmp_path, sandbox, spec: str) -> str:
    assert sandbox.wait_ready(300), "the sandbox did not warm up"
    folder, pack = _pack_requiring(tmp_path, spec)
    settings = make_settings(tmp_path / "data")
    store = ProgressStore.open(tmp_path / "data")
    try:
        app = TutorApp(found=[FoundPack(folder, "--pack", pack)], store=store, engine=Engine(settings, sandbox=sandbox),
                       settings=settings, start_pack="mini", start_lesson="basics", resume=True)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("f4")  # the next step is built after warm-up too
            await settle(pilot)
            return " ".join(screen_text(app).split())
    finally:
        store.close()


async def test_a_torch_below_the_pack_range_is_named_on_the_lesson_screen(tmp_path, sandbox):
    text = await _lesson_text(tmp_path, sandbox, ">=99")
    installed = sandbox.worker_info["torch"]
    assert "This pack needs torch >=99" in text
    assert f"has torch {installed}" in text


async def test_a_torch_inside_the_range_gets_no_notice(tmp_path, sandbox):
    text = await _lesson_text(tmp_path, sandbox, ">=2.0")
    assert "This pack needs torch" not in text
