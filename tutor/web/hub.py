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
    for name, off in (("user.max_user_namespaces", "0"), ("kernel.unprivileged_userns_clone", "0"),
                      ("kernel.apparmor_restrict_unprivileged_userns", "1")):
        if _read("/proc/sys/" + name.replace(".", "/")) == off:
            return WORDS["sysctl_is"].format(name=name, value=off)
    return None


def doctor_report(isolates: bool, chosen: str = "auto",
                  environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """doctor's "hub" facts: None outside a container and a Jupyter server. ``isolates``: the
    backend in force isolates runs (``tutor.sandbox.backends``, which this layer cannot import),
    ``chosen`` the isolation setting (none: bubblewrap was not even tried)."""
    environ = os.environ if environ is None else environ
    kind = container_kind(environ)
    hub_user = environ.get("JUPYTERHUB_USER")
    if kind is None and not hub_user:
        return None
    return {"container": kind, "jupyterhub_user": hub_user, "user_namespaces_off": user_namespaces(),
            "bwrap": isolates, "isolation_setting": chosen}


#: doctor's lines about a container, in English: `torch-tutor doctor` passes them in the learner's
#: language (the table's ``hub.*`` keys, kept equal to these by a test; tutor.web cannot import it).
WORDS = {
    "container": "container:  {where}",
    "a_container": "yes: the tutor runs inside a container (Docker, Podman or the like)",
    "kubernetes": "yes: the tutor runs in a Kubernetes pod",
    "no_container": "no container this process can see",
    "hub_user": "{where}, JupyterHub user {user}",
    "bwrap_works": "  bubblewrap works here: each run is isolated",
    "not_tried": "  bubblewrap not tried: the isolation setting is none",
    "may_refuse": "the runtime's seccomp or AppArmor profile may refuse them",
    "sysctl_is": "{name} is {value}",
    "no_bwrap": "  no bubblewrap here: it needs unprivileged user namespaces ({why}); runs have limits only. What a "
                "hub's admin enables: docs/jupyterhub.md, \"3. Enable the sandbox\"",
}


def doctor_lines(report: dict[str, Any], words: dict[str, str] | None = None) -> list[str]:
    """doctor's lines for ``report``; ``words``: :data:`WORDS` in the language to say them in."""
    say = {**WORDS, **(words or {})}
    kind = report["container"]
    where = {"a container": say["a_container"], "Kubernetes": say["kubernetes"]}.get(kind or "", kind or say["no_container"])
    if report["jupyterhub_user"]:
        where = say["hub_user"].format(where=where, user=report["jupyterhub_user"])
    lines = [say["container"].format(where=where)]
    if report["bwrap"]:
        lines.append(say["bwrap_works"])
        return lines
    if report["isolation_setting"] == "none":
        lines.append(say["not_tried"])
        return lines
    off = report["user_namespaces_off"]
    if off:  # "user.max_user_namespaces is 0" (user_namespaces): the setting and its value stay as they are
        name, _, value = off.rpartition(" is ")
        off = say["sysctl_is"].format(name=name, value=value) if name else off
    lines.append(say["no_bwrap"].format(why=off or say["may_refuse"]))
    return lines
