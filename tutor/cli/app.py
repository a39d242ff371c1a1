"""Commands about the learner's app and progress: open, progress, reset."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tutor.cli.common import UsageError, fit, guarded, line_width, print_json, say, settings_from_args
from tutor.words.i18n import t

if TYPE_CHECKING:
    from tutor.settings.config import Settings
    from tutor.pack.models import Pack
    from tutor.record.progress import ProgressStore

#: A pack's review cards: due now, new allowed in today, all, and when the next comes due.
ReviewCounts = dict[str, "int | str | None"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("open", help="open the tutor on a pack or one of its lessons",
                              description="Open the app on PACK (a pack id or folder), optionally at "
                              "LESSON; without a lesson, resume where you left off in that pack.")
    p.add_argument("target", metavar="PACK[/LESSON]")
    p.set_defaults(func=cmd_open)

    p = subparsers.add_parser("progress", help="show what you have done, pack by pack",
                              description="Show each lesson's state (done, in progress, not started), "
                              "exercises solved and quiz score, from the progress store.")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_progress)

    p = subparsers.add_parser("reset", help="forget progress (all, a pack, or one exercise)",
                              description="Forget progress and drafts: everything, one PACK, or one "
                              "PACK/EXERCISE (exercise id, or lesson/exercise). Asks first unless --yes.")
    p.add_argument("target", nargs="?", metavar="PACK[/EXERCISE]")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.set_defaults(func=cmd_reset)


@guarded
def cmd_open(args: argparse.Namespace) -> int:
    return launch_app(args, args.target)


def launch_app(args: argparse.Namespace, target: str | None = None, *, review: str | None = None) -> int:
    """Open the app from the command line: settings from flags and configuration, the target
    ``PACK[/LESSON]`` (with ``--pack`` folders), the review queue when ``review`` is not None."""
    from tutor.app import run_app
    from tutor.app.launch import Target

    settings = settings_from_args(args)
    return run_app(settings, Target(packs=tuple(getattr(args, "pack", None) or ()), target=target, review=review))


def _open_store(args: argparse.Namespace) -> tuple[Settings, ProgressStore]:
    from tutor.record.progress import ProgressStore

    settings = settings_from_args(args)
    store = ProgressStore.open(settings.data_path, config_dir=settings.config_file.parent)
    if store.storage.notice:
        print(store.storage.notice, file=sys.stderr)
    return settings, store


def _packs(args: argparse.Namespace, settings: Settings) -> dict[str, Pack]:
    from tutor.pack.discovery import discover

    return {f.pack.id: f.pack for f in discover(args.pack, settings.data_path, cache=True) if f.pack is not None}


@guarded
def cmd_progress(args: argparse.Namespace) -> int:
    from tutor.pack.text import resolve

    settings, store = _open_store(args)
    try:
        packs = _packs(args, settings)
        recorded = set(store.packs())
        summaries = [store.summarize(pack) for pack in packs.values() if pack.id in recorded]
        orphans = sorted(recorded - set(packs))
        due = _review_counts(store, [packs[s.pack] for s in summaries], settings.new_cards_per_day)
    finally:
        store.close()
    if args.json:
        print_json({"store": str(store.storage.path) if store.storage.path else None,
                    "packs": [{**s.to_json(), "review": due[s.pack]} for s in summaries],
                    "unknown_packs": orphans})
        return 0
    if not summaries and not orphans:
        print(t("cli.progress.none"))
        return 0
    width = line_width()
    for summary in summaries:
        pack = packs[summary.pack]
        lang = settings.language
        say(t("cli.progress.pack", title=resolve(pack.title, lang, pack.languages[0]), pack=pack.id))
        rows = []
        for lesson, entry in zip(pack.lessons, summary.lessons):
            title = resolve(lesson.title, lang, pack.languages[0])
            state = t(f"home.state.{entry.state}")
            parts = [t("cli.progress.steps", seen=entry.steps_seen, total=entry.steps)]
            if entry.exercises:
                parts.append(t("cli.progress.exercises", solved=entry.exercises_solved, total=entry.exercises))
            if entry.quizzes:
                parts.append(t("cli.progress.quiz", correct=entry.quiz_correct, total=entry.quizzes))
            rows.append((title, state, t("cli.progress.sep").join(parts)))
        for line in _table(rows, width):
            print(line)
        if summary.position:
            lesson_id, step_id = summary.position
            say(t("cli.progress.resume", where=_where(pack, lesson_id, step_id, lang)))
        counts = due[summary.pack]
        if counts["cards"]:
            nxt = t("cli.progress.next", when=counts["next"]) if counts["next"] else ""
            say(t("cli.progress.review", due=counts["due"], new=counts["new"], next=nxt, cards=counts["cards"]))
    for pack_id in orphans:
        say(t("cli.progress.orphan", pack=pack_id))
    return 0


def _table(rows: list[tuple[str, str, str]], width: int | None) -> list[str]:
    """progress's lessons: title, state and counts in columns, two cells in. The counts and the
    state keep their width; the title column takes what is left of ``width`` (at most 40 cells)
    and a longer title goes on under itself; with less than 20 cells left, each lesson is a title
    and state line and a counts line. ``width`` None: every title whole on its row."""
    from rich.cells import cell_len

    from tutor.app.cjk_wrap import divide_line

    if not rows:
        return []
    states = max(cell_len(state) for _, state, _ in rows)
    counts = max(cell_len(count) for _, _, count in rows)
    titles = min(40, max(cell_len(title) for title, _, _ in rows))
    if width is not None:
        titles = min(titles, width - 2 - 1 - states - 1 - counts)
        if titles < 20:  # too narrow for three columns: the counts go on a line of their own
            return [line for title, state, count in rows
                    for line in (fit(f"  {title}  {state}", width, 4), fit(f"      {count}", width, 6))]
    lines = []
    for title, state, count in rows:
        pieces = [title]
        if width is not None and cell_len(title) > titles:
            cuts = [0, *divide_line(title, titles), len(title)]
            pieces = [title[a:b].strip() for a, b in zip(cuts, cuts[1:])]
        line = f"  {_pad(pieces[0], titles)} {_pad(state, states)} {count}".rstrip()
        lines.append(fit(line, width, 2 + titles + 1 + states + 1))
        lines += [f"  {piece}" for piece in pieces[1:]]
    return lines


def _pad(text: str, cells: int) -> str:
    """``text`` padded to ``cells`` terminal cells (a CJK character is two), never cut."""
    from rich.cells import cell_len

    return text + " " * max(0, cells - cell_len(text))


def _where(pack: Pack, lesson_id: str, step_id: str, lang: str | None) -> str:
    """"Lesson title › step title" for a saved position (ids only for what the pack no longer has)."""
    from tutor.pack.text import resolve

    lesson = pack.lesson(lesson_id)
    if lesson is None:
        return f"{lesson_id}/{step_id}"
    fallback = pack.languages[0]
    found = next(((i, s) for i, s in enumerate(lesson.steps) if s.id == step_id), None)
    if found is None:
        return resolve(lesson.title, lang, fallback)
    index, step = found
    from tutor.pack.titles import step_title

    title = step_title(step, lang, fallback, index)
    return f"{resolve(lesson.title, lang, fallback)} › {title}"


def _review_counts(store: ProgressStore, packs: list[Pack], new_per_day: int) -> dict[str, ReviewCounts]:
    """Per pack: review cards due now, new ones allowed in today, and when the next comes due."""
    import time

    from tutor.record import spaced_review as review

    review.sync(store, packs)
    now = time.time()
    out: dict[str, ReviewCounts] = {}
    for pack in packs:
        due, new = store.cards.due_counts([pack.id], now, new_per_day)
        upcoming = review.next_due(store, [pack], now)
        out[pack.id] = {"due": due, "new": new, "cards": len(store.cards.all([pack.id])),
                        "next": review.when(upcoming, now) if upcoming else None}
    return out


@guarded
def cmd_reset(args: argparse.Namespace) -> int:
    settings, store = _open_store(args)
    try:
        pack_id = step = lesson = None
        what = t("cli.reset.all")
        if args.target:
            pack_id, _, ref = args.target.partition("/")
            packs = _packs(args, settings)
            if pack_id not in packs and pack_id not in store.packs():
                raise UsageError(t("cli.reset.no_pack", pack=repr(pack_id)))
            what = t("cli.reset.pack", pack=pack_id)
            if ref:
                pack = packs.get(pack_id)
                found = pack.find_exercise(ref) if pack is not None else None
                if found is None:
                    raise UsageError(t("cli.reset.no_exercise", pack=repr(pack_id), ref=repr(ref)))
                lesson, step = found[0].id, found[1].id
                what = t("cli.reset.exercise", lesson=lesson, step=step, pack=pack_id)
        if not args.yes:
            if not sys.stdin.isatty():
                raise UsageError(t("cli.reset.not_a_terminal", what=what))
            answer = input(t("cli.reset.confirm", what=what)).strip().lower()
            if answer not in t("cli.reset.yes").split() + ["y", "yes"]:
                print(t("cli.reset.unchanged"))
                return 1
        if not store.storage.persistent:  # read-only, busy or newer: _open_store has said why
            print(t("cli.reset.read_only"), file=sys.stderr)
            return 1
        import sqlite3

        try:
            removed = store.reset(pack_id, step=step, lesson=lesson)
        except sqlite3.OperationalError as exc:
            print(t("cli.reset.failed", error=exc), file=sys.stderr)
            return 1
    finally:
        store.close()
    print(t("cli.reset.done", what=what, count=removed))
    return 0
