"""`validate --watch`: run a validation again whenever a pack file changes.

Polling (twice a second) rather than inotify: it works on every platform and file system,
including network mounts and editors that save by renaming, and a pack is a handful of files.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

POLL_SECONDS = 0.5


def snapshot(roots: list[Path]) -> dict[Path, tuple[float, int]]:
    """(mtime, size) of every YAML file under the packs' folders."""
    seen: dict[Path, tuple[float, int]] = {}
    for root in roots:
        folder = root if root.is_dir() else root.parent
        for path in sorted(folder.rglob("*.y*ml")):
            try:
                stat = path.stat()
            except OSError:
                continue
            seen[path] = (stat.st_mtime, stat.st_size)
    return seen


def watch_packs(roots: list[Path], validate: Callable[[], int], *, max_rounds: int | None = None) -> int:
    """Validate now and after every change; returns the last exit code when stopped."""
    code = validate()
    last = snapshot(roots)
    rounds = 0
    print(f"watching {len(last)} file(s); ctrl+c to stop", file=sys.stderr, flush=True)
    try:
        while max_rounds is None or rounds < max_rounds:
            time.sleep(POLL_SECONDS)
            current = snapshot(roots)
            if current == last:
                continue
            changed = sorted({p.name for p in set(current) ^ set(last)}
                             | {p.name for p in current if p in last and current[p] != last[p]})
            last = current
            rounds += 1
            print(f"\n--- {time.strftime('%H:%M:%S')} changed: {', '.join(changed)} ---", flush=True)
            code = validate()
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass
    return code
