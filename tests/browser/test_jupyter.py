"""The Jupyter launcher in headless Chromium: a Jupyter server with jupyter-server-proxy and the
tutor's entry point (the jupyter extra) lists "torch-tutor" for the launcher, and opening it runs
the tutor for the server's user, on that user's home, on the pack the hub's environment names.

Cost: one Jupyter server for the module (about 3 s to start) and one walk through the mini pack.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser.harness import MINI, Tab, clean_env, command_lines, free_port, stop_group
from tests.browser.test_serve import learn

pytestmark = [pytest.mark.slow, pytest.mark.browser]

jupyter_server = pytest.importorskip("jupyter_server", reason="needs jupyter-server (the test extra)")
pytest.importorskip("jupyter_server_proxy", reason="needs jupyter-server-proxy (the test extra)")


class Jupyter:
    def __init__(self, tmp: Path):
        self.home = tmp / "home"
        self.home.mkdir()
        self.token = secrets.token_hex(16)
        self.port = free_port()
        env = clean_env(tmp)
        env.pop("TORCH_TUTOR_CONFIG_DIR")  # the user's own, in their home
        env.update(HOME=str(self.home), JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"),
                   JUPYTER_DATA_DIR=str(tmp / "jupyter-data"), JUPYTER_RUNTIME_DIR=str(tmp / "jupyter-runtime"),
                   TORCH_TUTOR_COURSE_PACK=str(MINI))  # what a hub's admin sets (docs/jupyterhub.md)
        self.log = open(tmp / "jupyter.log", "w+")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", "--ip=127.0.0.1",
             f"--port={self.port}", "--port-retries=0", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={self.home}"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=self.home, start_new_session=True)
        self.base = f"http://127.0.0.1:{self.port}/"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                self.api("api/status")
                return
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.2)
        raise AssertionError("the Jupyter server did not start:\n" + Path(self.log.name).read_text())

    def api(self, path: str) -> dict:
        request = urllib.request.Request(self.base + path, headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        stop_group(self.process)
        self.log.close()


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory):
    server = Jupyter(tmp_path_factory.mktemp("jupyter"))
    yield server
    server.stop()


def test_the_launcher_lists_the_tutor(jupyter):
    servers = {s["name"]: s for s in jupyter.api("server-proxy/servers-info")["server_processes"]}
    entry = servers["torch-tutor"]["launcher_entry"]
    assert entry["enabled"] and entry["title"] == "torch-tutor" and entry["path_info"] == "torch-tutor/"
    assert servers["torch-tutor"]["new_browser_tab"]


def test_the_tutor_through_jupyter_in_a_browser(jupyter, browser):
    context = browser.new_context()
    try:
        tab = Tab(context, f"{jupyter.base}torch-tutor/?token={jupyter.token}", size=(80, 24))
        assert tab.page.url == f"{jupyter.base}torch-tutor/"  # the Jupyter token is out of the address bar
        learn(tab)
        tab.close()
    finally:
        context.close()
    # As that user, on that user's home: the progress is in the default data folder there.
    progress = jupyter.home / ".local" / "share" / "torch-tutor" / "progress.sqlite3"
    assert progress.exists(), sorted(str(p) for p in jupyter.home.rglob("*"))[:40]
    # No port: the tutor listens on a Unix socket in a folder only its user can open.
    commands = command_lines(parent=jupyter.process.pid)
    served = [line.split("--unix-socket ", 1)[1].split()[0] for line in commands if "--unix-socket" in line]
    assert served, commands
    assert Path(served[0]).is_socket() and Path(served[0]).parent.stat().st_mode & 0o077 == 0
