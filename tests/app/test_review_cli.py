"""`torch-tutor review --due` and `progress` with review counts, and what the first screen loads."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta

import pytest

from tutor.cli.main import main
from tutor.record.progress import FILE_NAME, ProgressStore

from app_support import MINI, learner_store
from test_review_cards import FIXTURE


def _run(capsys, data, *argv):
    code = main(["--data-dir", str(data), "--pack", str(MINI), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_due_lists_what_is_due_at_a_given_time(tmp_path, capsys):
    store = learner_store(tmp_path)
    store.answers.record_quiz("mini", "basics", "which-dim", "0", True)
    store.answers.record_quiz("mini", "basics", "predict-sum", "4", False)
    store.close()
    code, out, _ = _run(capsys, tmp_path, "review", "--due", "--json")
    assert code == 0 and json.loads(out)["due"] == []
    soon = (datetime.now() + timedelta(minutes=20)).isoformat(timespec="minutes")
    code, out, _ = _run(capsys, tmp_path, "review", "--due", "--json", "--at", soon)
    assert [d["id"] for d in json.loads(out)["due"]] == ["basics/predict-sum"]  # Again: back the same day
    month = (datetime.now() + timedelta(days=30)).isoformat(timespec="minutes")
    code, out, _ = _run(capsys, tmp_path, "review", "--due", "--at", month)
    assert code == 0 and "2 due at" in out and "basics/which-dim" in out and "predict" in out
    code, out, _ = _run(capsys, tmp_path, "review", "--due", "--pack", "mini", "--json", "--at", month)
    assert len(json.loads(out)["due"]) == 2


@pytest.mark.parametrize("argv, message", [
    (["review", "--due", "--at", "next tuesday"], "is not a date or time"),
    (["review", "--due", "--at", "0001-01-01"], "is out of range"),
    (["review", "--due", "--at", "9999-12-31T23:00"], "is out of range"),
    (["review", "--due", "--pack", "nope"], "no installed pack 'nope'"),
    (["review", "--json"], "--json goes with --due"),
    (["review", "--at", "2026-01-01"], "--at goes with --due"),
])
def test_bad_review_arguments_are_usage_errors(tmp_path, capsys, argv, message):
    code, _, err = _run(capsys, tmp_path, *argv)
    assert code == 2 and message in err and "Traceback" not in err


def test_progress_shows_due_counts_after_an_upgrade_from_the_current_release(tmp_path, capsys):
    shutil.copy(FIXTURE, tmp_path / FILE_NAME)
    code, out, _ = _run(capsys, tmp_path, "progress")
    assert code == 0 and "review: 0 due now, 5 new (5 cards; `torch-tutor review`)" in out
    code, out, _ = _run(capsys, tmp_path, "progress", "--json")
    assert json.loads(out)["packs"][0]["review"] == {"due": 0, "new": 5, "cards": 5, "next": None}


def test_reset_of_a_pack_resets_its_review_cards(tmp_path, capsys):
    store = learner_store(tmp_path)
    store.answers.record_quiz("mini", "basics", "which-dim", "0", True)
    store.close()
    code, out, _ = _run(capsys, tmp_path, "reset", "mini", "--yes")
    assert code == 0 and "review cards" in out
    store = ProgressStore.open(tmp_path)
    assert store.cards.all() == [] and store.cards.reviews() == []
    store.close()


def test_the_first_screen_loads_no_review_module(tmp_path):
    from test_app_startup import SCRIPT, _start  # noqa: F401

    import test_app_startup

    heavy = '("yaml", "pydantic", "pydantic_core", "markdown_it", "torch", "importlib.metadata")'
    assert heavy in SCRIPT
    original = test_app_startup.SCRIPT
    test_app_startup.SCRIPT = SCRIPT.replace(heavy, '("fsrs", "tutor.record.spaced_review", "tutor.app.screens.review", '
                                                    '"tutor.app.screens.review_chart")')
    try:
        store = learner_store(tmp_path)
        store.answers.record_quiz("mini", "basics", "which-dim", "1", False)  # a card, due in 10 minutes
        store.close()
        first, _ = test_app_startup._start(tmp_path)
        assert first["loaded"] == []
    finally:
        test_app_startup.SCRIPT = original


@pytest.mark.parametrize("value, expected", [("0", 0), ("25", 25), ("-1", "must be 0 or more"), ("lots", "whole number")])
def test_the_new_cards_per_day_setting(tmp_path, value, expected):
    from tutor.settings.config import ConfigError, load_settings

    environ = {"TORCH_TUTOR_NEW_CARDS_PER_DAY": value}
    if isinstance(expected, int):
        settings = load_settings({}, config_file=tmp_path / "none.toml", environ=environ)
        assert settings.new_cards_per_day == expected
    else:
        with pytest.raises(ConfigError, match=expected):
            load_settings({}, config_file=tmp_path / "none.toml", environ=environ)


def test_pack_text_and_stored_ids_reach_the_terminal_inert(tmp_path, capsys):
    """A title with an OSC 52 (clipboard) sequence, and a hand-edited card id with ESC: printed
    as visible characters, never as control sequences."""
    import dataclasses

    from tutor.record import spaced_review as review
    from tutor.pack.loader import load_pack

    pack = load_pack(MINI)
    store = learner_store(tmp_path)
    store.answers.record_quiz("mini", "basics", "which-dim", "1", False)
    store.cards.put(review._new_card(("mini", "basics", "gone\x1b]0;owned\x07"), "choice", 0.0))
    quiz = dataclasses.replace(pack.lessons[0].steps[2], title="Evil \x1b]52;c;aGk=\x07")
    lesson = dataclasses.replace(pack.lessons[0], steps=[*pack.lessons[0].steps[:2], quiz, *pack.lessons[0].steps[3:]])
    hostile = dataclasses.replace(pack, lessons=[lesson, *pack.lessons[1:]])
    store.close()

    import tutor.cli.app as cli_app

    original = cli_app._packs
    cli_app._packs = lambda args, settings: {"mini": hostile}
    try:
        soon = (datetime.now() + timedelta(days=1)).isoformat(timespec="minutes")
        code, out, err = _run(capsys, tmp_path, "review", "--due", "--at", soon)
    finally:
        cli_app._packs = original
    assert code == 0 and "basics/which-dim" in out
    assert "\x1b" not in out and "\x07" not in out and "\x1b" not in err
    assert "Evil ␛]52;c;aGk=␇" in out and "gone␛]0;owned␇" in err


def test_review_modules_and_review_due_import_neither_torch_nor_textual(tmp_path):
    import subprocess
    import sys

    code = ("import sys\nfrom tutor.cli.main import main\n"
            f"assert main(['--data-dir', {str(tmp_path)!r}, '--pack', {str(MINI)!r}, 'review', '--due']) == 0\n"
            "import tutor.record.spaced_review\n"
            "heavy = [m for m in ('torch', 'textual', 'pandas') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
