"""`torch-tutor serve` without a browser: its door (token, cookie, host names), its warnings and
usage errors, the keys a browser tab binds, the Jupyter launcher's entry, and doctor's container
lines. The browser itself drives the tutor in tests/browser/."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tutor.web.hub import doctor_lines, doctor_report
from tutor.web.jupyter import PACK_ENV, setup_torch_tutor
from tutor.web.browser_server import is_loopback

textual_serve = pytest.importorskip("textual_serve", reason="needs textual-serve (the serve extra)")


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    return {**env, "TORCH_TUTOR_CONFIG_DIR": str(tmp / "config"), "PYTHONUNBUFFERED": "1"}


def serve(tmp: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(tmp / "data"), "serve", *args],
                          capture_output=True, text=True, timeout=timeout, env=_env(tmp))


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("192.0.2.1", False), ("no-such-host.invalid", False),
])
def test_what_counts_as_this_machine_only(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    done = serve(tmp_path, "--port", "70000")
    assert done.returncode == 2 and "--port 70000: expected 0 to 65535" in done.stderr


def test_an_address_other_machines_reach_is_warned_about(tmp_path: Path) -> None:
    """A name that is not this machine's: the warning comes first (here the name does not resolve,
    so nothing ever listens: no test opens a port beyond loopback)."""
    done = serve(tmp_path, "--host", "no-such-host.invalid", "--port", "0")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "WARNING: listening on no-such-host.invalid, which other machines can reach" in done.stderr
    assert "cannot listen on no-such-host.invalid port 0" in done.stderr
    assert "token=" not in done.stdout + done.stderr


def test_a_busy_port_says_what_to_do(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = serve(tmp_path, "--port", str(taken.getsockname()[1]))
    assert done.returncode == 2
    assert "pick another with --port N, or --port 0 for any free one" in done.stderr


def _request(url: str, **headers: str) -> tuple[int, dict[str, str], str]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            return None

    try:
        with urllib.request.build_opener(NoRedirect).open(urllib.request.Request(url, headers=headers),
                                                          timeout=30) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def test_the_door(tmp_path: Path) -> None:
    """No token: nothing (page, files, socket). The token: a cookie and the address without it.
    The cookie from another site's page, or under another host name (a page that rebound its own
    name to 127.0.0.1): nothing."""
    out = open(tmp_path / "out", "w+")
    process = subprocess.Popen([sys.executable, "-m", "tutor", "--data-dir", str(tmp_path / "data"), "serve",
                                "--port", "0"], stdout=out, stderr=subprocess.STDOUT, env=_env(tmp_path),
                               start_new_session=True)
    try:
        url = ""
        deadline = time.monotonic() + 60
        while not url and time.monotonic() < deadline and process.poll() is None:
            url = next((w for w in (tmp_path / "out").read_text().split() if "token=" in w), "")
            time.sleep(0.1)
        assert url, (tmp_path / "out").read_text()
        base, token = url.split("?token=")
        for path in ("", "static/js/textual.js", "ws"):
            status, _, body = _request(base + path)
            assert status == 403 and "needs its access token" in body, path
        assert _request(f"{base}?token=x{token}")[0] == 403
        status, headers, _ = _request(url)
        assert status == 303 and headers["Location"] == "./"
        # The redirect is never built from the path: two backslashes would make it another site's.
        status, headers, _ = _request(f"{base}%5C%5Cevil.example?token={token}&fontsize=20")
        assert status == 303 and headers["Location"] == "./?fontsize=20"
        cookie = headers["Set-Cookie"].split(";")[0]
        assert "HttpOnly" in headers["Set-Cookie"] and "SameSite=Strict" in headers["Set-Cookie"]
        status, headers, body = _request(base, Cookie=cookie)
        assert status == 200 and "static/js/textual.js" in body and token not in body
        assert headers["Referrer-Policy"] == "no-referrer"
        assert "fonts.googleapis" not in body  # nothing fetched from elsewhere
        assert _request(base + "ws", Cookie=cookie, Origin="http://evil.example")[0] == 403
        port = base.rsplit(":", 1)[1].strip("/")
        assert _request(base, Cookie=cookie, Host=f"evil.example:{port}")[0] == 421
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=30)
        out.close()
    printed = (tmp_path / "out").read_text()
    assert printed.count(token) == 1 and "stopping" in printed


def test_a_browser_tab_binds_its_own_key_for_quit() -> None:
    """In a fresh interpreter (the change is to the app's classes): ^g for Quit, no ctrl+t (every
    browser opens a tab), the F-keys as they are; the buttons' and F1's key names follow."""
    code = (
        "import os\n"
        "os.environ.update(TORCH_TUTOR_BROWSER='1', TEXTUAL_DRIVER='textual.drivers.web_driver:WebDriver')\n"
        "from tutor.app import browser\n"
        "assert browser.in_browser()\n"
        "browser.adapt_bindings()\n"
        "from tutor.app.app import TutorApp\n"
        "from tutor.app.screens.lesson import LessonScreen\n"
        "keys = {b.action: b.key for b in TutorApp.BINDINGS}\n"
        "assert keys['quit'] == 'ctrl+g' and keys['review'] == 'f10', keys\n"
        "merged = TutorApp._merged_bindings.key_to_bindings\n"
        "assert 'ctrl+g' in merged and 'ctrl+t' not in merged\n"
        "assert not [k for k, bs in merged.items() if any(b.action == 'quit' for b in bs) and k != 'ctrl+g']\n"
        "assert {b.key for b in LessonScreen.BINDINGS} >= {'f5', 'f6', 'f9'}\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


def test_only_serve_makes_a_browser_tab() -> None:
    from tutor.app.browser import browser_keys, in_browser

    assert not in_browser({"TORCH_TUTOR_BROWSER": "1"})  # not without the web driver
    assert not in_browser({"TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver"})
    assert browser_keys("f10,ctrl+t") == "f10" and browser_keys("ctrl+q") == "ctrl+g"
    assert browser_keys("ctrl+t") == ""


def test_the_jupyter_entry_serves_the_course_pack_on_a_private_socket() -> None:
    plain = setup_torch_tutor({})
    assert plain["command"][-2:] == ["--unix-socket", "{unix_socket}"] and plain["unix_socket"] is True
    assert plain["launcher_entry"]["title"] == "torch-tutor"
    assert Path(plain["launcher_entry"]["icon_path"]).read_text().startswith("<svg")
    course = setup_torch_tutor({PACK_ENV: "/srv/course/pack"})
    assert course["command"][-1] == "/srv/course/pack"
    assert course["command"][:4] == [sys.executable, "-m", "tutor", "serve"]


def test_the_entry_point_is_registered_for_jupyter_server_proxy() -> None:
    from importlib.metadata import entry_points

    found = {e.name: e.value for e in entry_points(group="jupyter_serverproxy_servers")}
    assert found.get("torch-tutor") == "tutor.web.jupyter:setup_torch_tutor"


def test_doctor_in_a_hubs_container_says_what_the_admin_enables() -> None:
    report = doctor_report(False, "auto", {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "JUPYTERHUB_USER": "ada"})
    assert report is not None and report["container"] == "Kubernetes"
    lines = doctor_lines(report)
    assert lines[0] == "container:  yes: the tutor runs in a Kubernetes pod, JupyterHub user ada"
    assert "no bubblewrap here" in lines[1] and "docs/jupyterhub.md" in lines[1]
    bwrap = doctor_report(True, "auto", {"JUPYTERHUB_USER": "ada"})
    assert bwrap is not None and doctor_lines(bwrap)[1] == "  bubblewrap works here: each run is isolated"
    off = doctor_report(False, "none", {"JUPYTERHUB_USER": "ada"})  # not tried: not the namespaces' fault
    assert off is not None and doctor_lines(off)[1] == "  bubblewrap not tried: the isolation setting is none"


def test_the_server_side_loads_neither_the_app_nor_torch() -> None:
    """The Jupyter server imports the entry point at its start (it must cost nothing), and the
    serving process only relays: each tab's app is a process of its own."""
    code = ("import sys, json\nimport tutor.web.jupyter\nfirst = sorted(sys.modules)\n"
            "import tutor.cli.serve, tutor.web.browser_server, textual_serve.server\n"
            "print(json.dumps([first, sorted(sys.modules)]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    import json

    first, after = json.loads(done.stdout.splitlines()[-1])
    assert [m for m in first if m.startswith("tutor")] == ["tutor", "tutor.web", "tutor.web.jupyter"]
    assert not any(m.split(".")[0] in ("aiohttp", "textual", "torch") for m in first)
    assert not any(m.split(".")[0] in ("textual", "torch") or m.startswith("tutor.app") for m in after)


def test_a_pack_or_lesson_that_is_not_there_is_said_before_serving(tmp_path: Path) -> None:
    """Not by each tab's app: a browser tab would only show that its session ended."""
    done = serve(tmp_path, "no-such-pack", "--port", "0")
    assert done.returncode == 2 and "no pack 'no-such-pack'" in done.stderr
    done = serve(tmp_path, "debugging-and-speed/no-such-lesson", "--port", "0")
    assert done.returncode == 2 and "has no lesson 'no-such-lesson'" in done.stderr
    assert "token=" not in done.stdout


def test_doctor_without_user_namespaces_says_what_the_admin_enables(tmp_path: Path) -> None:
    """Where bubblewrap fails as it does without user namespaces (the system's and the bundled
    one, both fakes), the container line points the admin to the docs."""
    from tests.cli.test_cli_validate_doctor import _failing_bubblewraps

    env = {**_failing_bubblewraps(tmp_path / "fake"), "KUBERNETES_SERVICE_HOST": "10.0.0.1",
           "TORCH_TUTOR_CONFIG_DIR": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(tmp_path / "data"), "doctor"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "isolation:  none" in done.stdout
    assert "container:  yes: the tutor runs in a Kubernetes pod" in done.stdout
    assert "no bubblewrap here: it needs unprivileged user namespaces" in done.stdout
    assert 'docs/jupyterhub.md, "3. Enable the sandbox"' in done.stdout


def _serving(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    """`torch-tutor serve --port 0 ARGS` started; (the process, the address it printed)."""
    out = open(tmp_path / "out", "w+")
    process = subprocess.Popen([sys.executable, "-m", "tutor", "--data-dir", str(tmp_path / "data"), "serve",
                                "--port", "0", *args], stdout=out, stderr=subprocess.STDOUT, env=_env(tmp_path),
                               start_new_session=True)
    out.close()
    url = ""
    deadline = time.monotonic() + 60
    while not url and time.monotonic() < deadline and process.poll() is None:
        url = next((w for w in (tmp_path / "out").read_text().split() if "token=" in w), "")
        time.sleep(0.1)
    if not url:
        os.killpg(process.pid, 15)
        process.wait(timeout=30)
    assert url, (tmp_path / "out").read_text()
    return process, url


@pytest.mark.parametrize("language, says", [
    ("en", ['<html lang="en">', "torch-tutor is starting…", "This session of torch-tutor has ended. Your progress "
            "and your code are saved.", ">Start again</button>", ">Start</button>"]),
    ("zh", ['<html lang="zh">', "torch-tutor 正在启动……", "这次 torch-tutor 会话已经结束。你的进度和代码都已保存。",
            ">重新开始</button>", ">开始</button>"]),
])
def test_the_page_and_the_door_speak_the_serving_language(tmp_path: Path, language: str, says: list[str]) -> None:
    """The page's words (starting, ended, the buttons), the door's refusal and the last line on the
    terminal: in the language the tutor serves in (issue 29); in English as they always were."""
    process, url = _serving(tmp_path, "--language", language)
    try:
        base, token = url.split("?token=")
        status, _, refused = _request(base)
        cookie = _request(url)[1]["Set-Cookie"].split(";")[0]
        status, _, page = _request(base, Cookie=cookie)
        assert status == 200
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=30)
    for said in says:
        assert said in page, (said, page)
    printed = (tmp_path / "out").read_text()
    if language == "en":
        assert refused == ("torch-tutor: this page needs its access token. Open the address that `torch-tutor serve` "
                           "printed when it started (it ends in ?token=...).\n")
        assert "torch-tutor serve: stopping (each open tab's tutor saves and quits)\n" in printed
    else:
        assert refused.startswith("torch-tutor：这个页面需要访问令牌。"), refused
        assert "torch-tutor serve：正在停止" in printed, printed
        shown = re.sub(r"<(style|script)[^>]*>.*?</\1>|<!--.*?-->", "", page, flags=re.S)
        text = " ".join(re.findall(r">([^<>]+)<", shown))  # what the page shows (not its style or script)
        assert not re.findall(r"\b(?!torch\b|tutor\b)[A-Za-z]{3,}\b", text.replace("torch-tutor", "")), text
