"""A browser tab on the tutor, read as a learner reads it.

The page draws the app on a canvas (xterm.js), so there is no text to query in the page: the
tab's screen is rebuilt from the very bytes the browser received on its websocket, by a terminal
emulator (pyte) of the size the page told the app. Keys are pressed and text typed with
Playwright's keyboard (Chromium's own key events, through xterm.js, as a learner's keys go), and
clicks land on the canvas at a cell's place.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyte

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "app" / "packs" / "mini"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(tmp: Path) -> dict[str, str]:
    """This environment without the tutor's variables, with a config folder of the test's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_TUTOR_", "JUPYTER", "XDG_"))}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(tmp / "config")
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Served:
    """`torch-tutor serve` as a learner starts it: its own process group, killed by its pid."""

    def __init__(self, tmp: Path, *argv: str):
        self.tmp = tmp
        self.data = tmp / "data"
        self.out = open(tmp / "serve.out", "w+")
        self.err = open(tmp / "serve.err", "w+")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tutor", "--data-dir", str(self.data), "--pack", str(MINI), "serve",
             "--port", "0", *argv],
            stdout=self.out, stderr=self.err, env=clean_env(tmp), start_new_session=True)
        self.url = self._address()

    def _address(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = self.output()
            for word in text.split():
                if word.startswith("http://") and "token=" in word:
                    return word
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"serve printed no address:\n{self.output()}\n{self.errors()}")

    def output(self) -> str:
        self.out.flush()
        return Path(self.out.name).read_text()

    def errors(self) -> str:
        self.err.flush()
        return Path(self.err.name).read_text()

    def stop(self) -> None:
        stop_group(self.process)
        self.out.close()
        self.err.close()


def stop_group(process: subprocess.Popen) -> None:
    """End a server started in its own session, and everything it started (its tabs' apps)."""
    if process.poll() is None:
        os.killpg(process.pid, 15)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait(timeout=30)


class Tab:
    """One browser tab on the tutor."""

    def __init__(self, context, url: str, size: tuple[int, int] | None = None):
        self.page = context.new_page()
        self.screen = pyte.Screen(80, 24)
        self.stream = pyte.ByteStream(self.screen)
        self.sizes: list[tuple[int, int]] = []
        self.closed = False
        self.page.on("websocket", self._socket)
        if size is not None:
            self.page.set_viewport_size({"width": 80 * 10, "height": 24 * 22})
        self.page.goto(url)
        self.page.wait_for_function("document.body.classList.contains('-first-byte')", timeout=120_000)
        if size is not None:
            self.fit(*size)
        self.page.focus(".xterm-helper-textarea")

    # ------------------------------------------------------------------ what the browser got

    def _socket(self, ws) -> None:
        from urllib.parse import parse_qs, urlsplit

        query = parse_qs(urlsplit(ws.url).query)
        self._resized(int(query["width"][0]), int(query["height"][0]))
        ws.on("framereceived", self._received)
        ws.on("framesent", self._sent)
        ws.on("close", lambda _ws: setattr(self, "closed", True))

    def _received(self, payload) -> None:
        if isinstance(payload, (bytes, bytearray)):
            self.stream.feed(bytes(payload))

    def _sent(self, payload) -> None:
        if isinstance(payload, str) and payload.startswith('["resize"'):
            size = json.loads(payload)[1]
            self._resized(size["width"], size["height"])

    def _resized(self, width: int, height: int) -> None:
        self.sizes.append((width, height))
        self.screen.resize(height, width)

    @property
    def size(self) -> tuple[int, int]:
        return self.sizes[-1]

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, text: str, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.text()
            if text in screen:
                return screen
            self.page.wait_for_timeout(100)  # lets Playwright deliver the frames meanwhile
        raise AssertionError(f"{text!r} never appeared; the tab showed ({self.size}):\n{self.text()}")

    # ------------------------------------------------------------------ the window

    def fit(self, columns: int, rows: int) -> None:
        """Size the window so that the page's terminal is ``columns`` x ``rows`` cells."""
        for _ in range(8):
            box = self.page.locator(".xterm-screen").bounding_box()
            width, height = self.size
            cell_w, cell_h = box["width"] / width, box["height"] / height
            if self.size == (columns, rows):
                return
            viewport = self.page.viewport_size
            self.page.set_viewport_size({
                "width": int(viewport["width"] + (columns - width) * cell_w + (cell_w / 2 if columns > width else 0)),
                "height": int(viewport["height"] + (rows - height) * cell_h + (cell_h / 2 if rows > height else 0))})
            deadline = time.monotonic() + 10
            before = len(self.sizes)
            while len(self.sizes) == before and time.monotonic() < deadline:
                self.page.wait_for_timeout(100)
        assert self.size == (columns, rows), f"the page's terminal is {self.size}, not {(columns, rows)}"

    # ------------------------------------------------------------------ the learner's hands

    def press(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)

    def click_text(self, text: str) -> None:
        """Click the middle of the first cell of ``text`` on the screen, once it is there and the
        screen has settled, as a learner clicks what they see: a step is drawn, then laid out again
        (its widgets mounted, scrolled into view), and a click aimed at the first frame's place
        can land beside the choice (CI, 2026-12-04: the Jupyter test's quiz never said Correct.)."""
        self.wait_for(text)
        self.settled()
        self.wait_for(text)
        lines = self.screen.display
        row = next((i for i, line in enumerate(lines) if text in line), None)
        assert row is not None, f"{text!r} is not on the screen:\n{self.text()}"
        column = lines[row].index(text)
        box = self.page.locator(".xterm-screen").bounding_box()
        width, height = self.size
        self.page.mouse.click(box["x"] + (column + 0.5) * box["width"] / width,
                              box["y"] + (row + 0.5) * box["height"] / height)

    def settled(self, quiet: float = 0.5, timeout: float = 15.0) -> str:
        """The screen once it has not changed for ``quiet`` seconds (or after ``timeout``)."""
        deadline = time.monotonic() + timeout
        last, since = self.text(), time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - since < quiet:
            self.page.wait_for_timeout(100)
            now = self.text()
            if now != last:
                last, since = now, time.monotonic()
        return last

    def close(self) -> None:
        self.page.close()


def command_lines(parent: int | None = None) -> list[str]:
    """Every process's command line (of ``parent``'s children only, when given), from /proc:
    no `ps` needed (a slim image has none)."""
    lines = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if parent is not None:
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) != parent:
                    continue
            lines.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip())
        except (OSError, ValueError, IndexError):  # gone meanwhile
            continue
    return lines
