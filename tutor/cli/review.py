"""`torch-tutor review`: the review queue in the app, and what is due (for scripts and tests)."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone

from tutor.cli.common import UsageError, guarded, print_json, settings_from_args
from tutor.words.i18n import t


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "review", help="review what you learned, when it is about to be forgotten",
        description="Open the tutor on the review queue: the quiz items and exercises you have met come "
        "back on FSRS's schedule (all packs, or one with --pack ID). With --due, list what is due instead "
        "(id, pack, title, kind, due time); --at shows what will be due at another time.")
    p.add_argument("--pack", dest="review_pack", metavar="ID", help="only this pack's cards")
    p.add_argument("--due", action="store_true", help="list what is due and exit")
    p.add_argument("--json", action="store_true", help="with --due: print JSON")
    p.add_argument("--at", metavar="DATETIME",
                   help="with --due: as if it were this time (ISO 8601, e.g. 2026-05-01 or 2026-05-01T09:30; "
                   "local time unless it names a zone)")
    p.add_argument("--optimize", action="store_true",
                   help="fit FSRS's parameters to your own review log (in a subprocess: it uses torch); "
                   "needs 512 reviews made a day or more after the card's previous one")
    p.set_defaults(func=cmd_review)


def parse_at(value: str | None) -> float:
    """Seconds since the epoch for --at (now without it); a bad value is a usage error."""
    if value is None:
        return datetime.now(timezone.utc).timestamp()
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(t("cli.review.at_not_a_date", value=repr(value))) from None
    try:
        if moment.tzinfo is None:
            moment = moment.astimezone()  # local time
        seconds = moment.timestamp()
        datetime.fromtimestamp(seconds).astimezone()  # shown back in local time: must be in range
        datetime.fromtimestamp(seconds + 86400 * 15)  # the day arithmetic after it too
    except (ValueError, OverflowError, OSError):
        raise UsageError(t("cli.review.at_out_of_range", value=repr(value))) from None
    return seconds


def _local(seconds: float) -> str:
    return datetime.fromtimestamp(seconds).astimezone().strftime("%Y-%m-%d %H:%M")


@guarded
def cmd_review(args: argparse.Namespace) -> int:
    if args.json and not args.due:
        raise UsageError(t("cli.review.goes_with_due", option="--json"))
    if args.at is not None and not args.due:
        raise UsageError(t("cli.review.goes_with_due", option="--at"))
    if args.optimize:
        if args.due:
            raise UsageError(t("cli.review.optimize_not_with_due"))
        return _optimize(args)
    if not args.due:
        from tutor.cli.app import launch_app

        return launch_app(args, args.review_pack, review=args.review_pack or "")
    return _due(args)


def _due(args: argparse.Namespace) -> int:
    from tutor.cli.app import _open_store, _packs
    from tutor.record import spaced_review as review

    at = parse_at(args.at)
    settings, store = _open_store(args)
    try:
        packs = _packs(args, settings)
        if args.review_pack is not None and args.review_pack not in packs:
            raise UsageError(t("cli.no_installed_pack", pack=repr(args.review_pack)))
        chosen = [packs[args.review_pack]] if args.review_pack else list(packs.values())
        notices = review.sync(store, list(packs.values()))
        due = review.queue(store, chosen, at, settings.new_cards_per_day, settings.language)
    finally:
        store.close()
    from tutor.sandbox.textclean import clean_output  # pack text: no control sequence reaches the terminal

    for notice in notices:
        print(clean_output(notice.encode()), file=sys.stderr)
    if args.json:
        print_json({"at": datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="seconds"),
                    "due": [d.to_json() for d in due], "notices": notices})
        return 0
    from rich.cells import cell_len

    from tutor.words.i18n import TABLE

    if not due:
        print(t("cli.review.nothing", at=_local(at)))
        return 0
    new = sum(d.new for d in due)
    print(t("cli.review.due", count=len(due), at=_local(at), old=len(due) - new, new=new))
    width = max(len(d.item) for d in due)

    def pad(text: str, cells: int) -> str:  # by cells: a CJK character is two
        return text + " " * max(0, cells - cell_len(text))

    for d in due:
        when = t("cli.review.new") if d.new else t("cli.review.due_at", at=_local(d.due))
        kind = t(f"review.kind.{d.kind}") if f"review.kind.{d.kind}" in TABLE["en"] else d.kind
        print(clean_output(f"  {d.item:<{width}}  {d.pack}  {pad(kind, 8)}  {pad(when, 20)}  {d.title}".encode()))
    return 0


def _optimize(args: argparse.Namespace) -> int:
    """Fit the learner's FSRS parameters in a subprocess (fsrs's optimizer imports torch, which
    the tutor's own processes never do) and keep them only if they fit the log better."""
    import json
    import subprocess

    from tutor.cli.app import _open_store
    from tutor.record import spaced_review as review

    _settings, store = _open_store(args)
    try:
        logs, counted = review.fit_reviews(store)
        if counted < review.MIN_REVIEWS_TO_FIT:
            print(t("cli.optimize.not_yet", counted=counted, needed=review.MIN_REVIEWS_TO_FIT))
            return 0
        if not store.storage.persistent:
            print(t("cli.optimize.read_only"), file=sys.stderr)
            return 1
        print(t("cli.optimize.fitting", counted=counted), flush=True)
        try:
            done = subprocess.run([sys.executable, "-m", "tutor.record.fsrs_fit"], input=json.dumps({"reviews": logs}),
                                  capture_output=True, text=True, timeout=3600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            print(t("cli.optimize.could_not_run", error=exc), file=sys.stderr)
            return 1
        try:
            result = json.loads(done.stdout)
            fitted = [float(x) for x in result["parameters"]]
            before, after = result["before"], result["after"]
        except (ValueError, KeyError, TypeError):
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            print(t("cli.optimize.failed_extra", last=last) if "No module named" in done.stderr
                  else t("cli.optimize.failed", last=last), file=sys.stderr)
            return 1
        print(t("cli.optimize.result", before=before["predicted"], after=after["predicted"], actual=after["actual"],
                loss_before=before["loss"], loss_after=after["loss"]))
        if after["loss"] >= before["loss"]:
            print(t("cli.optimize.no_better"))
            return 0
        try:
            review.scheduler_with(fitted)
        except ValueError as exc:
            print(t("cli.optimize.unusable", error=exc), file=sys.stderr)
            return 1
        store.preferences.set(review.PARAMETERS_KEY, json.dumps(fitted))
        print(t("cli.optimize.done"))
        return 0
    finally:
        store.close()
