"""In the app, an exercise that `uses` an earlier one runs on what the learner's editor holds for
that one (issue 34, item 4): Check and Run build on the learner's own `checkerboard`, after the
pack's prelude, and say what is missing when there is none."""

from __future__ import annotations

from pathlib import Path

from app_support import SIZE, make_settings, screen_text, settle
from tutor.app.app import TutorApp
from tutor.app.engine import Engine
from tutor.app.widgets.editor import CodeEditor
from tutor.pack.discovery import FoundPack
from tutor.pack.loader import load_pack
from tutor.record.progress import ProgressStore

PUZZLES = Path(__file__).resolve().parents[2] / "examples" / "tensor-puzzles"
RIGHT = "def checkerboard(n):\n    return (arange(n)[:, None] + arange(n)[None, :]) % 2\n"
WRONG = "def checkerboard(n):\n    return arange(n)[:, None] * 0 + arange(n)[None, :] * 0\n"
INVERTED = "def inverted(n):\n    return where(checkerboard(n) == 0, 1, 0)\n"


async def _finish(pilot, app) -> None:
    await app.workers.wait_for_complete()
    await settle(pilot, 3)


async def test_check_and_run_build_on_the_learners_own_earlier_answer(tmp_path, sandbox):
    pack = load_pack(PUZZLES)
    store = ProgressStore.open(tmp_path)
    settings = make_settings(tmp_path)
    app = TutorApp(found=[FoundPack(PUZZLES, "--pack", pack)], store=store, engine=Engine(settings, sandbox=sandbox),
                   settings=settings, start_pack=pack.id, start_lesson="puzzles", resume=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            while app.screen.place.step.id != "inverted":
                await pilot.press("f4")
                await settle(pilot)
            editor = app.screen.query_one(CodeEditor)
            editor.replace_all(INVERTED)
            await pilot.press("f6")
            await _finish(pilot, app)
            text = screen_text(app)
            assert "not there yet:" in text and "checkerboard; write them first" in text
            store.drafts.save(pack.id, "puzzles", "checkerboard", WRONG)  # what their editor holds there
            await pilot.press("f6")
            await _finish(pilot, app)
            text = screen_text(app)
            assert "1/2 checks passed." in text and "not there yet" not in text
            store.drafts.save(pack.id, "puzzles", "checkerboard", RIGHT)
            editor.replace_all(INVERTED + "print(inverted(2).tolist(), arange(3).tolist())\n")
            await pilot.press("f5")  # Run: the prelude (arange, where) and the answer it builds on, first
            await _finish(pilot, app)
            assert "[[1, 0], [0, 1]] [0, 1, 2]" in screen_text(app)
            await pilot.press("f6")
            await _finish(pilot, app)
            assert "Solved!" in screen_text(app)
    finally:
        store.close()
