"""The UI language belongs to whoever set it (a command's run, the app, a ``speaking`` block),
never to the process: nothing a test, a command or an app sets reaches the next one."""

from __future__ import annotations

import asyncio
import threading

from tutor.cli.main import main
from tutor.words import i18n


def test_a_command_run_in_process_leaves_its_callers_language(tmp_path, capsys):
    assert main(["--language", "zh", "--data-dir", str(tmp_path), "progress"]) == 0
    assert capsys.readouterr().out.startswith("还没有进度")  # the command spoke Chinese
    assert i18n.language() == "en" and i18n.t("key.help") == "Help"


def test_a_speaking_block_has_its_own_language_and_gives_the_old_one_back():
    with i18n.speaking("zh") as code:
        assert code == "zh" and i18n.t("key.help") == "帮助"
        i18n.set_language("en")  # the block's own, as the app's switch is the app's
        assert i18n.t("key.help") == "Help"
        i18n.set_language("zh-CN")
        with i18n.speaking():
            assert i18n.language() == "en"
        assert i18n.language() == "zh"
    assert i18n.language() == "en"


def test_an_owners_switch_reaches_its_tasks_and_carried_threads_not_the_caller():
    """The app switches language in one widget's task; every other task and the worker thread
    that runs a step must speak the new one, and the test that ran the app stays in English."""
    said: dict[str, str] = {}

    async def app() -> None:
        i18n.own_language("en")  # the app's own, as TutorApp.__init__ makes it
        switched = asyncio.Event()

        async def palette() -> None:
            i18n.set_language("zh")
            switched.set()

        async def other_widget() -> None:
            await switched.wait()
            said["task"] = i18n.t("key.help")

        await asyncio.gather(asyncio.ensure_future(other_widget()), asyncio.ensure_future(palette()))
        job = i18n.carried(lambda: said.__setitem__("carried", i18n.t("key.help")))
        bare = threading.Thread(target=lambda: said.__setitem__("bare", i18n.t("key.help")))
        for thread in (threading.Thread(target=job), bare):
            thread.start()
            thread.join()

    i18n.set_language("en")  # a language set before, in this context (a test's, a command's)
    asyncio.run(app())
    assert said == {"task": "帮助", "carried": "帮助", "bare": "Help"}, said
    assert i18n.language() == "en"
