"""What the format's records are made from, stamped, for the caches that keep their results
between processes: the pack cache (validated packs, ``packcache``) and the kept validators
(``validation``). A cache whose stamp differs from the running code's is not used.
"""

from __future__ import annotations

import os
import stat
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

#: The modules that define the format (each quiz type's module too: ``quizzes/*.py``).
FORMAT_MODULES = ("spec", "step_base", "models", "check_models", "text", "loader", "packcache")


def file_stamp(path: str | Path | None) -> tuple[str, int, int] | None:
    """``path``'s name, size and mtime; None when it cannot be stat'ed."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return str(path), st.st_size, st.st_mtime_ns


@lru_cache(maxsize=1)
def format_stamp() -> tuple[Any, ...]:
    """The tutor and Python versions and the format's modules, stat'ed once per process (they do
    not change under a running tutor; one start reads several packs)."""
    from tutor import __version__

    here = Path(__file__).parent
    modules = [here / f"{name}.py" for name in FORMAT_MODULES] + sorted((here / "quizzes").glob("*.py"))
    return (__version__, sys.version_info[:2], tuple(file_stamp(path) for path in modules))


def trusted(st: os.stat_result) -> bool:
    """A cache file or folder kept beside the tutor's code (the kept validators, the built-in
    packs) is unpickled only when this is true of it and of its folder: owned by the user running
    the tutor or by the owner of the tutor's code, and writable by no one else."""
    try:
        owners = {os.getuid(), os.stat(__file__).st_uid}
    except (AttributeError, OSError):  # no uids (Windows): the folder's own permissions decide
        return True
    return st.st_uid in owners and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
