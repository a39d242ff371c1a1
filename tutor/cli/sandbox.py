"""`torch-tutor run` and `torch-tutor doctor`: the sandbox from the command line."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tutor.cli.common import UsageError, guarded, print_json, settings_from_args
from tutor.core.config import ISOLATION_CHOICES


def register(subparsers: argparse._SubParsersAction) -> None:
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


def _sandbox(args: argparse.Namespace, **flags):
    from tutor.grading.sandboxes import sandbox_for

    settings = settings_from_args(args, python=args.python, isolation=args.isolation, **flags)
    if settings.python and not Path(settings.python).exists():
        raise UsageError(f"no interpreter at {settings.python}")
    return sandbox_for(settings, workers=1)


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
            raise UsageError(f"cannot read {args.file}: {exc}") from None
        filename = str(path)
    with _sandbox(args, wall_time=args.timeout, memory_mb=args.memory) as sandbox:
        try:
            result = sandbox.run(code, filename=filename)
        except SandboxUnavailable as exc:
            from tutor.core.i18n import t

            print(t("cli.sandbox_failed", reason=exc), file=sys.stderr)
            return 1
    if args.json:
        print_json(result.to_dict())
    else:
        _print_result(result)
    return 0 if result.ok else 1


def _print_result(result) -> None:
    if result.stdout:
        sys.stdout.write(result.stdout if result.stdout.endswith("\n") else result.stdout + "\n")
    if result.stderr:
        sys.stderr.write(result.stderr if result.stderr.endswith("\n") else result.stderr + "\n")
    if result.error and result.status in ("error", "memory", "sandbox-failure"):
        sys.stderr.write(result.error.traceback.rstrip("\n") + "\n")
    from tutor.core.i18n import shown, t

    if result.message:  # the sandbox's sentence, in the language the commands speak
        sys.stderr.write(str(shown(result.message, result.extra.get("said"))) + "\n")
    sys.stderr.write(t("cli.run.summary", status=result.status, wall=result.wall_time, cpu=result.cpu_time,
                       peak=result.peak_memory_mb, isolation=result.isolation) + "\n")


def mode_reason(requested: str, mode: str) -> str:
    """Why the sandbox runs in ``mode``: one line for doctor."""
    how = ("each run is a fresh child of a warm worker" if mode == "fork"
           else "each run gets a single-use interpreter started ahead of time")
    if requested != "auto":
        return f"{how} (sandbox_mode = {requested})"
    if mode == "spawn" and not hasattr(os, "fork"):
        where = "this OS has no fork"  # Windows (and TORCH_TUTOR_EMULATE_WINDOWS=1)
    elif sys.platform == "darwin":
        where = "on macOS, where forking a process that has loaded torch is unsafe"
    else:
        where = "on Linux" if sys.platform.startswith("linux") else f"on {sys.platform}"
    return f"{how} (auto: {where}; see docs/performance.md)"


def isolation_lines(info) -> list[str]:
    """doctor's isolation lines, each reason said once: the fallback's reason names the options
    not used, which the "not used" lines list, and two bubblewraps (the system's and the
    bundled one) usually fail for the same reason, which is then said for both at once."""
    import re

    reason = info.reason
    joined = "; ".join(info.not_used)
    if joined and joined in reason:
        reason = reason.replace(joined, "no usable bubblewrap: see below")
    lines = [f"isolation:  {info.level} — {reason}"]
    if info.bwrap:
        lines.append(f"bubblewrap: {info.bwrap} ({info.bwrap_source})")
    grouped: dict[str, list[str]] = {}  # why -> which bubblewraps, in order
    for note in info.not_used:
        found = re.match(r"(.*?bubblewrap(?: \([^)]*\))?): (.*)", note, re.S)
        which, why = (found.group(1), found.group(2)) if found else ("", note)
        grouped.setdefault(why, []).append(which)
    for why, which in grouped.items():
        named = ", ".join(w for w in which if w)
        lines.append(f"  not used: {named}: {why}" if named else f"  not used: {why}")
    return lines


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
                print(f"sandbox: unavailable: {exc}")
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
                     "transport": worker.get("transport", "fds")},
            "limits": sandbox.limits.to_dict(),
            "limits_not_enforced": worker.get("unenforced", []),
            "os_helpers": worker.get("os_helpers", True),
            "warmup_s": round(sandbox.warmup_s or time.perf_counter() - started, 2),
            # spawn mode: a spare is two interpreters, the judge and its runner
            "worker_rss_mb": round(worker.get("rss_mb", 0) + (worker.get("runner_rss_mb") or 0), 1),
            "preloaded": worker.get("preloaded", []),
            "preload_failures": worker.get("preload_failures", {}),
            "test_run": {"status": probe.status, "wall_time": round(probe.wall_time, 3)},
        }
    from tutor.web.hub import doctor_lines, doctor_report

    chosen = settings_from_args(args, isolation=args.isolation).isolation
    hub = doctor_report(info.level, chosen)  # a container (a JupyterHub's server): what holds for bubblewrap
    if hub is not None:
        data["container"] = hub
    if args.json:
        print_json(data)
        return 0 if probe.ok else 1
    print(f"python:     {data['python']} ({data['python_version']})")
    print(f"torch:      {data['torch']}")
    for line in isolation_lines(info):
        print(line)
    print(f"mode:       {sandbox.mode} — {data['mode']['reason']}")
    if data["mode"]["transport"] == "pipes":
        print("  transport: pipes (this OS cannot pass descriptors: the judge relays each run's output)")
    print("processes:  not limited" if info.process_limit == "none" else f"processes:  limited by {info.process_limit}")
    for gap in info.gaps:
        print(f"  weaker:   {gap}")
    limits = data["limits"]
    print(f"limits:     wall {limits['wall_time']:g} s, CPU {limits['cpu_time']:g} s, memory "
          f"+{limits['memory_mb']} MB, output {limits['output_kb']} KiB/stream, "
          f"{limits['processes']} processes, files {limits['file_size_mb']} MB, "
          f"{limits['open_files']} open files")
    if data["limits_not_enforced"]:
        print(f"  not enforced on this OS: {', '.join(data['limits_not_enforced'])} "
              "(wall time and output caps hold everywhere)")
    kept = "worker" if sandbox.mode == "fork" else "spare (judge + runner)"
    rss = f"{data['worker_rss_mb']:.0f} MB" if data["worker_rss_mb"] else "not measurable on this OS"
    print(f"warm-up:    {data['warmup_s']:.2f} s ({kept} RSS {rss})")
    for name, why in data["preload_failures"].items():
        print(f"  not preloaded: {name} ({why})")
    print(f"test run:   {probe.status} in {probe.wall_time * 1000:.0f} ms")
    for line in doctor_lines(hub) if hub is not None else ():
        print(line)
    return 0 if probe.ok else 1
