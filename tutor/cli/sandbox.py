"""`torch-tutor run` and `torch-tutor doctor`: the sandbox from the command line."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from tutor.cli.common import UsageError, guarded, print_json, say, settings_from_args
from tutor.settings.config import ISOLATION_CHOICES
from tutor.words.i18n import t


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "run", help="run a Python file in the sandbox",
        description="Run FILE the way the tutor runs learner code: in a fresh child of a warm "
        "worker, with the configured limits and isolation. Exit code 0 when the run succeeded, "
        "1 otherwise.")
    p.add_argument("file", metavar="FILE", help="the Python file to run ('-' reads stdin)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--timeout", type=float, metavar="S", help="wall-time limit in seconds")
    p.add_argument("--memory", type=int, metavar="MB", help="memory limit above the worker's baseline")
    p.add_argument("--python", metavar="PATH", help="interpreter with torch for the workers")
    p.add_argument("--isolation", choices=ISOLATION_CHOICES, help="isolation level")
    p.set_defaults(func=cmd_run)

    d = subparsers.add_parser(
        "doctor", help="check the sandbox: torch, isolation, limits, warm-up time",
        description="Start a sandbox worker and report the torch it loaded, the isolation in "
        "force and why, the limits, and how long warming up took.")
    d.add_argument("--json", action="store_true", help="print JSON")
    d.add_argument("--python", metavar="PATH", help="interpreter with torch for the workers")
    d.add_argument("--isolation", choices=ISOLATION_CHOICES, help="isolation level")
    d.set_defaults(func=cmd_doctor)


def _sandbox(args: argparse.Namespace, **flags: Any) -> Any:
    """The sandbox of ``run`` and ``doctor``: one run at most, so no spare is started after it."""
    from tutor.grading.sandboxes import sandbox_for

    settings = settings_from_args(args, python=args.python, isolation=args.isolation, **flags)
    if settings.python and not Path(settings.python).exists():
        raise UsageError(t("cli.no_interpreter", path=settings.python))
    return sandbox_for(settings, workers=1, runs=1)


@guarded
def cmd_run(args: argparse.Namespace) -> int:
    from tutor.sandbox import SandboxUnavailable

    if args.file == "-":
        code, filename = sys.stdin.read(), "<stdin>"
    else:
        path = Path(args.file)
        try:
            code = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(t("cli.cannot_read", path=args.file, error=exc)) from None
        filename = str(path)
    with _sandbox(args, wall_time=args.timeout, memory_mb=args.memory) as sandbox:
        try:
            result = sandbox.run(code, filename=filename)
        except SandboxUnavailable as exc:

            print(t("cli.sandbox_failed", reason=exc), file=sys.stderr)
            return 1
    if args.json:
        print_json(result.to_dict())
    else:
        _print_result(result)
    return 0 if result.ok else 1


def _print_result(result: Any) -> None:
    if result.stdout:
        sys.stdout.write(result.stdout if result.stdout.endswith("\n") else result.stdout + "\n")
    if result.stderr:
        sys.stderr.write(result.stderr if result.stderr.endswith("\n") else result.stderr + "\n")
    if result.error and result.status in ("error", "memory", "sandbox-failure"):
        sys.stderr.write(result.error.traceback.rstrip("\n") + "\n")
    from tutor.words.i18n import shown, t

    if result.message:  # the sandbox's sentence, in the language the commands speak
        sys.stderr.write(str(shown(result.message, result.extra.get("said"))) + "\n")
    sys.stderr.write(t("cli.run.summary", status=result.status, wall=result.wall_time, cpu=result.cpu_time,
                       peak=result.peak_memory_mb, isolation=isolation_name(result.isolation)) + "\n")


def mode_reason(requested: str, mode: str) -> str:
    """Why the sandbox runs in ``mode``: one line for doctor's JSON (English)."""
    from tutor.words.i18n import english

    return english(mode_said(requested, mode))


def mode_said(requested: str, mode: str) -> dict[str, Any]:
    """Why the sandbox runs in ``mode``, as a said (shown in the learner's language)."""
    from tutor.words.i18n import said

    how = said("cli.doctor.mode.fork" if mode == "fork" else "cli.doctor.mode.spawn")
    if requested != "auto":
        return said("cli.doctor.mode.set", how=how, requested=requested)
    if mode == "spawn" and not hasattr(os, "fork"):
        where = said("cli.doctor.mode.no_fork")  # Windows (and TORCH_TUTOR_EMULATE_WINDOWS=1)
    elif sys.platform == "darwin":
        where = said("cli.doctor.mode.macos")
    else:
        where = said("cli.doctor.mode.linux") if sys.platform.startswith("linux") \
            else said("cli.doctor.mode.platform", platform=sys.platform)
    return said("cli.doctor.mode.auto", how=how, where=where)


def isolation_lines(info: Any) -> list[str]:
    """doctor's isolation lines, each reason said once: the fallback's reason names the options
    not used, which the "not used" lines list, and two bubblewraps (the system's and the
    bundled one) usually fail for the same reason, which is then said for both at once."""
    import re

    from tutor.words.i18n import render, said, shown

    reason = info.reason
    joined = "; ".join(info.not_used)
    if joined and joined in reason:
        reason = reason.replace(joined, t("cli.doctor.no_bubblewrap"))
    reason_said = info.reason_said
    if reason_said and info.not_used and reason_said["fields"].get("why") and \
            render(reason_said["fields"]["why"], "en") == joined:  # the fallback's reason: the notes, said below
        reason_said = said(reason_said["key"], why=said("cli.doctor.no_bubblewrap"))
    lines = [t("cli.doctor.isolation", level=isolation_name(info.level), reason=shown(reason, reason_said))]
    from tutor.sandbox import backends

    lines += [t(key, **fields) for key, fields in backends.of(info.level).doctor(info)]
    grouped: dict[str, list[str]] = {}  # why -> which bubblewraps, in order
    saids = info.not_used_said if len(info.not_used_said) == len(info.not_used) else (None,) * len(info.not_used)
    for note, note_said in zip(info.not_used, saids):
        if note_said is not None and note_said.get("key") == "isolation.note":  # in the learner's language
            which, why = (shown(None, part) if isinstance(part, dict) else str(part)
                          for part in (note_said["fields"]["named"], note_said["fields"]["why"]))
        else:
            found = re.match(r"(.*?bubblewrap(?: \([^)]*\))?): (.*)", note, re.S)
            which, why = (found.group(1), found.group(2)) if found else ("", note)
        grouped.setdefault(why or "", []).append(which or "")
    for why, names in grouped.items():
        named = ", ".join(w for w in names if w)
        lines.append(t("cli.doctor.not_used_named", named=named, why=why) if named else t("cli.doctor.not_used", why=why))
    return lines


def isolation_name(level: str) -> str:
    """An isolation level as the learner reads it ("none" in English, 无 in Chinese)."""
    from tutor.words.i18n import shown, said

    return shown(level, said("isolation." + level)) or level


@guarded
def cmd_doctor(args: argparse.Namespace) -> int:
    from tutor.sandbox import SandboxUnavailable

    started = time.perf_counter()
    with _sandbox(args) as sandbox:
        try:
            sandbox.wait_ready()
            info = sandbox.isolation
            probe = sandbox.run("import torch\nprint(torch.__version__)")
        except SandboxUnavailable as exc:
            if args.json:
                print_json({"ok": False, "error": str(exc)})
            else:

                print(t("cli.doctor.unavailable", error=exc))
            return 1
        worker = sandbox.worker_info
        data = {
            "ok": probe.ok,
            "python": worker.get("executable"), "python_version": worker.get("python"),
            "torch": worker.get("torch"),
            "isolation": {"level": info.level, "reason": info.reason,
                          "per_run_namespaces": info.per_run_namespaces,
                          "process_limit": info.process_limit, "gaps": list(info.gaps),
                          "bwrap": info.bwrap, "bwrap_source": info.bwrap_source,
                          "not_used": list(info.not_used)},
            "mode": {"mode": sandbox.mode, "requested": sandbox.requested_mode,
                     "reason": mode_reason(sandbox.requested_mode, sandbox.mode),
                     "transport": worker.get("transport", "fds"),
                     "runners": worker.get("runners"), "runners_why": worker.get("runners_why")},
            "limits": sandbox.limits.to_wire(),
            "limits_not_enforced": worker.get("unenforced", []),
            "os_helpers": worker.get("os_helpers", True),
            "warmup_s": round(sandbox.warmup_s or time.perf_counter() - started, 2),
            # spawn mode: a spare is two interpreters, the judge and its runner
            "worker_rss_mb": round(worker.get("rss_mb", 0) + (worker.get("runner_rss_mb") or 0), 1),
            "preloaded": worker.get("preloaded", []),
            "preload_failures": worker.get("preload_failures", {}),
            "test_run": {"status": probe.status, "wall_time": round(probe.wall_time, 3)},
        }
    from tutor.web.hub import WORDS, doctor_lines, doctor_report

    chosen = settings_from_args(args, isolation=args.isolation).isolation
    from tutor.sandbox import backends

    hub = doctor_report(backends.of(info.level).isolates, chosen)  # a container (a JupyterHub's server)
    if hub is not None:
        data["container"] = hub
    if args.json:
        print_json(data)
        return 0 if probe.ok else 1
    from tutor.words.i18n import render, shown, t

    say(t("cli.doctor.python", python=data["python"], version=data["python_version"]))
    say(t("cli.doctor.torch", torch=data["torch"]))
    for line in isolation_lines(info):
        say(line)
    say(t("cli.doctor.mode", mode=sandbox.mode, reason=render(mode_said(sandbox.requested_mode, sandbox.mode))))
    if data["mode"]["transport"] == "pipes":
        say(t("cli.doctor.transport"))
    if data["mode"]["runners"] == "forked":
        say(t("cli.doctor.runners.forked"))
    elif data["mode"]["runners"] == "fresh":
        say(t("cli.doctor.runners.fresh", why=data["mode"]["runners_why"] or "spawn_runners = fresh"))
    say(t("cli.doctor.processes.none") if info.process_limit == "none"
        else t("cli.doctor.processes", how=info.process_limit))
    gaps_said = info.gaps_said if len(info.gaps_said) == len(info.gaps) else (None,) * len(info.gaps)
    for gap, gap_said in zip(info.gaps, gaps_said):
        say(t("cli.doctor.weaker", gap=shown(gap, gap_said)))
    limits = data["limits"]
    say(t("cli.doctor.limits", wall=limits["wall_time"], cpu=limits["cpu_time"], memory=limits["memory_mb"],
          output=limits["output_kb"], processes=limits["processes"], files=limits["file_size_mb"],
          open_files=limits["open_files"]))
    cores = limits["cpu_time"] / limits["wall_time"] if limits["wall_time"] else 0
    say(t("cli.doctor.limits.cpu", cores=round(cores, 1), cpu=limits["cpu_time"], wall=limits["wall_time"])
        if cores > 1 else t("cli.doctor.limits.cpu_one"))
    say(t("cli.doctor.limits.memory", memory=limits["memory_mb"]))
    if data["limits_not_enforced"]:
        say(t("cli.doctor.not_enforced", names=", ".join(data["limits_not_enforced"])))
    kept = t("cli.doctor.kept.worker") if sandbox.mode == "fork" else t("cli.doctor.kept.spare")
    rss = f"{data['worker_rss_mb']:.0f} MB" if data["worker_rss_mb"] else t("cli.doctor.rss_unknown")
    say(t("cli.doctor.warmup", seconds=data["warmup_s"], kept=kept, rss=rss))
    for name, why in data["preload_failures"].items():
        say(t("cli.doctor.not_preloaded", name=name, why=why))
    say(t("cli.doctor.test_run", status=t("cli.doctor.ok") if probe.status == "ok" else probe.status,
          ms=probe.wall_time * 1000))
    words = {key: t("hub." + key) for key in WORDS}  # the container's lines in the learner's language
    for line in doctor_lines(hub, words) if hub is not None else ():
        say(line)
    return 0 if probe.ok else 1
