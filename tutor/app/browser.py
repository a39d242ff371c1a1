"""The app in a browser tab (``torch-tutor serve``): the one place that knows which keys a
browser keeps for itself, and the key the app binds and shows there instead.

``torch-tutor serve`` starts each tab's app with ``TORCH_TUTOR_BROWSER=1`` (and textual-serve sets
``TEXTUAL_DRIVER`` to Textual's web driver). The page's terminal (xterm.js) cancels the browser's
own action for every key it turns into terminal input, so F1-F10, ctrl+p, ctrl+r and ctrl+f reach
the app. What a page never gets are the keys a browser reserves: Chromium's list is close tab
(ctrl+w, ctrl+F4), close window (ctrl+shift+w), new tab (ctrl+t), new window (ctrl+n and
ctrl+shift+n), reopen a closed tab (ctrl+shift+t), the next and previous tab (ctrl+tab,
ctrl+shift+tab, ctrl+PgDn, ctrl+PgUp) and quit (ctrl+shift+q); Firefox also keeps ctrl+q (quit)
on Linux. F11 (full screen) and F12 (developer tools) stay the browser's too; the app uses neither.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from typing import Mapping

from textual.binding import Binding

#: Set (to 1) in each tab's environment by ``torch-tutor serve``.
BROWSER_ENV = "TORCH_TUTOR_BROWSER"

#: A terminal key the app binds -> the key bound and shown in its place in a browser (None: not
#: bound there; what it did stays in the command palette). Every app key not listed here works
#: in a browser as it is.
BROWSER_KEYS: dict[str, str | None] = {
    "ctrl+q": "ctrl+g",  # Quit: Firefox on Linux quits the whole browser on ctrl+q
    "ctrl+t": None,  # the review queue's second key (F10 is the first): every browser opens a tab
}

#: The modules whose classes bind keys (imported so their classes are adapted before first use).
_MODULES = ("tutor.app.app", "tutor.app.screens.home", "tutor.app.screens.lesson",
            "tutor.app.screens.review", "tutor.app.modals.help", "tutor.app.modals.confirm",
            "tutor.app.modals.solution", "tutor.app.widgets.editor", "tutor.app.widgets.keybutton")


def in_browser(environ: Mapping[str, str] | None = None) -> bool:
    """True in an app that ``torch-tutor serve`` started for a browser tab."""
    environ = os.environ if environ is None else environ
    return environ.get(BROWSER_ENV) == "1" and "web_driver" in environ.get("TEXTUAL_DRIVER", "")


def browser_keys(keys: str) -> str:
    """A binding's comma-separated keys as a browser tab binds them ("" when none is left)."""
    out: list[str] = []
    for key in (k.strip() for k in keys.split(",")):
        mapped = BROWSER_KEYS.get(key, key)
        if mapped is not None and mapped not in out:
            out.append(mapped)
    return ",".join(out)


def adapt_bindings() -> None:
    """Rebind the app's keys for a browser tab (see ``BROWSER_KEYS``): the BINDINGS of every class
    of the app, which the key bar, the buttons' key labels and F1's list all read. Called once,
    before the app is made."""
    from textual.app import App
    from textual.dom import DOMNode

    for name in _MODULES:
        importlib.import_module(name)
    # Textual's App binds ctrl+q too, and its ctrl+c names the first quit key it finds ("Press
    # ctrl+q to quit the app"): this process's App class is adapted with the tutor's own.
    classes: list[type[DOMNode]] = [App]
    pending: list[type[DOMNode]] = [DOMNode]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("tutor.app."):
            classes.append(cls)
    for cls in classes:
        declared = vars(cls).get("BINDINGS")
        if not declared:
            continue
        adapted: list[object] = []
        for binding in declared:
            if isinstance(binding, Binding):
                keys = browser_keys(binding.key)
                if not keys:
                    continue
                binding = dataclasses.replace(binding, key=keys)
            adapted.append(binding)
        cls.BINDINGS = adapted  # type: ignore[assignment]
    for cls in classes:  # Textual merges each class's BINDINGS with its bases' when it is made
        cls._merged_bindings = cls._merge_bindings()
