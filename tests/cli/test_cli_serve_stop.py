"""`torch-tutor serve` stopped and started again as a hub stops it, and the addresses it prints for
0.0.0.0 (issue 52, item 14). On a real JupyterHub a plain SIGTERM to the per-user tutor made it
exit 0 and leave its socket file; jupyter-server-proxy starts again only a process that exits
non-zero, so the launcher's tile answered HTTP 500 until the user's whole server restarted."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

from tutor.web import browser_server as web_serve

pytest.importorskip("textual_serve", reason="needs textual-serve (the serve extra)")


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    return {**env, "TORCH_TUTOR_CONFIG_DIR": str(tmp / "config"), "PYTHONUNBUFFERED": "1"}


def _start(tmp: Path, *args: str, log: str = "out") -> subprocess.Popen[bytes]:
    out = open(tmp / log, "w")
    process = subprocess.Popen([sys.executable, "-m", "tutor", "--data-dir", str(tmp / "data"), "serve", *args],
                               stdout=out, stderr=subprocess.STDOUT, env=_env(tmp), start_new_session=True)
    out.close()
    return process


def _wait_for(tmp: Path, process: subprocess.Popen[bytes], text: str, log: str = "out") -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        printed = (tmp / log).read_text()
        if text in printed:
            return printed
        if process.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError((tmp / log).read_text())


def _get_over_socket(path: Path) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(30)
        client.connect(str(path))
        client.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        return client.recv(64)


def test_sigterm_exits_non_zero_and_takes_its_socket_away(tmp_path: Path) -> None:
    path = tmp_path / "tutor.sock"
    process = _start(tmp_path, "--unix-socket", str(path))
    try:
        _wait_for(tmp_path, process, "is serving on unix:")
        assert _get_over_socket(path).startswith(b"HTTP/1.1 200")
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)
    assert code == 128 + signal.SIGTERM, (tmp_path / "out").read_text()
    assert not path.exists()
    again = _start(tmp_path, "--unix-socket", str(path), log="again")  # the tile's next click
    try:
        _wait_for(tmp_path, again, "is serving on unix:", log="again")
        assert _get_over_socket(path).startswith(b"HTTP/1.1 200")
    finally:
        again.send_signal(signal.SIGINT)  # Ctrl+C in a terminal: the way to stop it, exit 0
        assert again.wait(timeout=60) == 0


def test_the_socket_of_a_killed_tutor_does_not_refuse_the_next_start(tmp_path: Path) -> None:
    """SIGKILL runs no clean-up: the file stays, and binding over it failed with "address already
    in use". The next start removes a socket nothing listens on."""
    path = tmp_path / "tutor.sock"
    process = _start(tmp_path, "--unix-socket", str(path))
    _wait_for(tmp_path, process, "is serving on unix:")
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    assert path.is_socket()
    again = _start(tmp_path, "--unix-socket", str(path), log="again")
    try:
        _wait_for(tmp_path, again, "is serving on unix:", log="again")
        assert _get_over_socket(path).startswith(b"HTTP/1.1 200")
    finally:
        again.send_signal(signal.SIGTERM)
        assert again.wait(timeout=60) == 143


def test_a_live_socket_or_a_file_at_the_path_is_never_removed(tmp_path: Path) -> None:
    """Only a dead socket goes: another program's live socket, a file or a link stays, and the
    start fails saying why."""
    live = tmp_path / "live.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(live))
        listener.listen()
        done = subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(tmp_path / "data"), "serve",
                               "--unix-socket", str(live)], capture_output=True, text=True, timeout=60,
                              env=_env(tmp_path))
        assert done.returncode == 2 and f"cannot listen on {live}" in done.stderr, done.stdout + done.stderr
        assert live.is_socket()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(live))  # still the listener's
    for kind in ("file", "link"):
        path = tmp_path / f"{kind}.sock"
        if kind == "file":
            path.write_text("keep me\n")
        else:
            (tmp_path / "target").write_text("keep me too\n")
            path.symlink_to(tmp_path / "target")
        web_serve._free_stale_socket(str(path))
        assert path.read_text().startswith("keep me"), kind


def test_all_addresses_print_the_ones_a_browser_can_open(tmp_path: Path) -> None:
    """`--host 0.0.0.0` printed http://0.0.0.0:PORT/?token=..., which no other machine can open:
    it prints loopback (marked: this machine only) and the machine's own addresses, and each
    printed address reaches the tutor."""
    process = _start(tmp_path, "--host", "0.0.0.0", "--port", "0")
    try:
        printed = _wait_for(tmp_path, process, "Each tab is its own tutor")
        urls = [word for word in printed.split() if "token=" in word]
        assert urls and not any("0.0.0.0" in url for url in urls), printed
        assert urls[0].startswith("http://127.0.0.1:") and "(from this machine only)" in printed, printed
        for url in urls:  # each answers: the token is taken into a cookie (303 to the page)
            parts = urllib.parse.urlsplit(url)
            with socket.create_connection((parts.hostname, parts.port), timeout=30) as client:
                client.sendall(f"GET /?{parts.query} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                               "Connection: close\r\n\r\n".encode())
                assert client.recv(64).startswith(b"HTTP/1.1 303"), url
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def test_the_addresses_of_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(web_serve, "_interface_addresses",
                        lambda family: ["127.0.0.1", "10.1.2.3", "169.254.0.9"] if family == socket.AF_INET
                        else ["::1", "fe80::1", "2001:db8::5"])
    four = web_serve.reachable_hosts("0.0.0.0")
    assert four[0] == "127.0.0.1" and "10.1.2.3" in four
    assert "169.254.0.9" not in four and four.count("127.0.0.1") == 1  # link-local and loopback once
    assert not any(":" in host for host in four)
    six = web_serve.reachable_hosts("::")
    assert six[0] == "::1" and "2001:db8::5" in six and "fe80::1" not in six
    assert not any("." in host and ":" not in host for host in six)
    assert web_serve.reachable_hosts("192.0.2.7") == ["192.0.2.7"]  # a given address is the address
    assert web_serve.reachable_hosts("localhost") == ["localhost"]
    assert web_serve._url("::1", 80) == "http://[::1]:80/"
