"""The Jupyter server launcher: a ``jupyter_serverproxy_servers`` entry point (see pyproject.toml).

With ``pip install 'torch-tutor[jupyter]'`` in a hub's single-user image, jupyter-server-proxy
calls :func:`setup_torch_tutor` when the user's Jupyter server starts; JupyterLab's launcher then
shows "torch-tutor", and opening it starts ``torch-tutor serve`` for that user, as that user, on a
Unix socket in a new folder only that user can open (the Jupyter server authenticates every
request before it proxies it, so the tutor needs no token of its own there). The tutor's data
folder is that user's, as for ``torch-tutor`` in a terminal (``~/.local/share/torch-tutor`` unless
``TORCH_TUTOR_DATA_DIR`` or the config file says otherwise), and the course's pack is named by
:data:`PACK_ENV` in the single-user server's environment (docs/jupyterhub.md).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Mapping

#: The pack (an id, a folder, or PACK/LESSON) each tutor opens on; unset: as `torch-tutor` does.
PACK_ENV = "TORCH_TUTOR_COURSE_PACK"
ICON = Path(__file__).with_name("icon.svg")


def setup_torch_tutor(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """jupyter-server-proxy's description of the server: the command and the launcher entry."""
    environ = os.environ if environ is None else environ
    command = [sys.executable, "-m", "tutor", "serve", "--unix-socket", "{unix_socket}"]
    pack = environ.get(PACK_ENV, "").strip()
    if pack:
        command.append(pack)
    return {
        "command": command,
        "unix_socket": True,
        # The first start of a fresh container imports aiohttp and Textual from a cold disk.
        "timeout": 60,
        "new_browser_tab": True,
        "launcher_entry": {"title": "torch-tutor", "icon_path": str(ICON), "category": "Other"},
    }
