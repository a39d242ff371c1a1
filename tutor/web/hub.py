"""What ``torch-tutor doctor`` says about a container (a JupyterHub's single-user server is one):
bubblewrap needs unprivileged user namespaces, which container runtimes often turn off."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(errors="replace").strip()
    except OSError:
        return None


def container_kind(environ: Mapping[str, str] | None = None) -> str | None:
    """"Kubernetes", "a container" or None (not that this process can tell)."""
    environ = os.environ if environ is None else environ
    if environ.get("KUBERNETES_SERVICE_HOST"):
        return "Kubernetes"
    if Path("/.dockerenv").exists() or Path("/run/.containerenv").exists():
        return "a container"
    cgroup = _read("/proc/1/cgroup") or ""
    if any(word in cgroup for word in ("docker", "kubepods", "containerd", "libpod", "lxc")):
        return "a container"
    return None


def user_namespaces() -> str | None:
    """Why unprivileged user namespaces are off here, or None when nothing says they are."""
    if _read("/proc/sys/user/max_user_namespaces") == "0":
        return "user.max_user_namespaces is 0"
    if _read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
        return "kernel.unprivileged_userns_clone is 0"
    if _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
        return "kernel.apparmor_restrict_unprivileged_userns is 1"
    return None


def doctor_report(isolation: str, chosen: str = "auto",
                  environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """doctor's "hub" facts: None outside a container and a Jupyter server. ``isolation`` is the
    level in force, ``chosen`` the isolation setting (none: bubblewrap was not even tried)."""
    environ = os.environ if environ is None else environ
    kind = container_kind(environ)
    hub_user = environ.get("JUPYTERHUB_USER")
    if kind is None and not hub_user:
        return None
    return {"container": kind, "jupyterhub_user": hub_user, "user_namespaces_off": user_namespaces(),
            "bwrap": isolation == "bwrap", "isolation_setting": chosen}


def doctor_lines(report: dict[str, Any]) -> list[str]:
    where = report["container"] or "no container this process can see"
    if report["jupyterhub_user"]:
        where += f", JupyterHub user {report['jupyterhub_user']}"
    lines = [f"container:  {where}"]
    if report["bwrap"]:
        lines.append("  bubblewrap works here: each run is isolated")
        return lines
    if report["isolation_setting"] == "none":
        lines.append("  bubblewrap not tried: the isolation setting is none")
        return lines
    why = report["user_namespaces_off"] or "the runtime's seccomp or AppArmor profile may refuse them"
    lines.append(f"  no bubblewrap here: it needs unprivileged user namespaces ({why}); runs have "
                 "limits only. What a hub's admin enables: docs/jupyterhub.md, \"3. Enable the sandbox\"")
    return lines
