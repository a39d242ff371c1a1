"""Headless Chromium driving `torch-tutor serve` and the Jupyter launcher (see harness.py).

Chromium is Debian's (`apt-get install chromium`, which .ci/run does); Playwright's Python package
drives it through ``executable_path`` (Playwright's own browser download is never used). Where no
browser can be found these tests are skipped, and the reason says what to install.
"""

from __future__ import annotations

import os
import shutil

import pytest


def chromium_path() -> str | None:
    for candidate in (os.environ.get("TORCH_TUTOR_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
        import pyte  # noqa: F401
        import textual_serve  # noqa: F401
    except ImportError as exc:
        return f"needs the test extra ({exc.name} is missing): pip install -e '.[test]'"
    if chromium_path() is None:
        return ("needs a Chromium to drive: `apt-get install chromium` (Debian), or name one in "
                "TORCH_TUTOR_CHROMIUM")
    return None


def pytest_collection_modifyitems(config, items):
    reason = _missing()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(skip)


@pytest.fixture(scope="module")
def browser():
    """One Chromium per module: Playwright's sync API runs an event loop in the main thread while
    it is open, and a session-long one made every later test that calls asyncio.run (the
    snapshot tests, after tests/browser in a whole run) fail with "cannot be called from a
    running event loop"."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium refuses its own sandbox.
        chromium = playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()
