"""What one run may use. Defaults are sized for torch; every field is a setting."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

#: Names shared with tutor.settings.config's settings (``tutor.grading.sandboxes.limits_from`` maps them).
LIMIT_NAMES = ("wall_time", "cpu_time", "memory_mb", "output_kb", "processes", "file_size_mb",
               "open_files")


@dataclass(frozen=True)
class Limits:
    """Per-run ceilings. ``memory_mb`` is *above* the worker's baseline: torch alone maps far
    more address space than a snippet uses, so an absolute ceiling would be meaningless."""

    wall_time: float = 10.0
    cpu_time: float = 30.0
    memory_mb: int = 2048
    output_kb: int = 1024
    processes: int = 64
    file_size_mb: int = 64
    open_files: int = 256

    def with_overrides(self, **overrides: Any) -> "Limits":
        """A copy with the given fields changed; None means keep (an exercise's own timeout)."""
        known = {f.name for f in fields(self)}
        unknown = set(overrides) - known
        if unknown:
            raise TypeError(f"unknown limit(s): {', '.join(sorted(unknown))}")
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def to_wire(self) -> dict[str, float | int]:
        """The limits as a run's request carries them to the worker (JSON: one key per field)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_wire(cls, data: object) -> "Limits":
        """The limits a request carries, as the worker reads them: every field, each a number of
        its type (an int field takes an int, a float field any number). Anything else is
        ``ValueError`` naming the key, so a malformed request fails where it is read, not as a
        ``KeyError`` deep in the run."""
        if not isinstance(data, dict):
            raise ValueError(f"limits: expected a mapping, got {type(data).__name__}")
        unknown = set(data) - set(LIMIT_NAMES)
        if unknown:
            raise ValueError(f"limits: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
        values: dict[str, float | int] = {}
        for f in fields(cls):
            if f.name not in data:
                raise ValueError(f"limits: missing {f.name}")
            value = data[f.name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
                raise ValueError(f"limits: {f.name} must be a number, got {value!r}")
            if f.type == "int" and not isinstance(value, int):
                raise ValueError(f"limits: {f.name} must be a whole number, got {value!r}")
            values[f.name] = float(value) if f.type == "float" else value
        return cls(**values)  # type: ignore[arg-type]  # each checked against its field's type above

    @property
    def tmp_mb(self) -> int:
        """What a run's files may take in all where the run has a /tmp of its own in memory (per-run
        namespaces: a tmpfs, gone with the run): four times the largest file it may write. That is
        memory beside ``memory_mb``, which counts address space, not files. Each runner mounts it
        before its request, at its sandbox's limits: a run given limits of its own keeps it."""
        return TMP_FILES * self.file_size_mb


#: ``Limits.tmp_mb``: a run's private /tmp holds this many of its largest files.
TMP_FILES = 4


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one: a container or
    ``taskset`` gives fewer than the machine has), at least 1."""
    import os

    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is not None:
        try:
            return max(1, len(getaffinity(0)))
        except OSError:
            pass
    return max(1, os.cpu_count() or 1)


def step_limits(base: Limits, timeout: float | None) -> Limits:
    """The limits of one step's run: the step's own timeout (an exercise's ``timeout``) replaces
    the wall time, and CPU time grows with it so that every usable CPU may be busy for all of it.
    The one place this is computed: the app's Run and Check, ``check`` and ``grade`` call it."""
    if timeout is None or base is None:
        return base
    return base.with_overrides(wall_time=timeout, cpu_time=max(base.cpu_time, timeout * usable_cpus()))
