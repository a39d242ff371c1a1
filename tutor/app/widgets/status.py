"""The status bar: sandbox warm-up, isolation level, and whether progress is being saved."""

from __future__ import annotations

from textual.widgets import Static

from tutor.app.state import tutor_app
from tutor.words.i18n import t


class StatusBar(Static):
    """Polls the engine twice a second: warm-up happens in another thread and posts nothing."""

    DEFAULT_CSS = """
    StatusBar { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """

    #: The running line of a step's run while it runs (``RunningIndicator``): shown first here, on
    #: the screen's last rows, so it is in view however the page is scrolled.
    _run_line: str | None = None
    _said = ""

    def on_mount(self) -> None:
        self.refresh_status()
        self.set_interval(0.5, self.refresh_status)

    def show_running(self, text: str | None) -> None:
        """Say ``text`` (a run's running line) before the status, or nothing (None)."""
        if text != self._run_line:
            self._run_line = text
            self._draw()

    def _draw(self) -> None:
        self.update(self._said if self._run_line is None else f"{self._run_line} · {self._said}")

    def refresh_status(self) -> None:
        app = tutor_app(self)
        text = app.engine.status_text()
        store = app.store
        if not store.storage.persistent:
            text += " · " + t("status.progress.temp")
        if store.drafts.unsaved and not store.drafts.retry(every=5.0):  # the disk refused a draft: say so, retry
            text = t("status.unsaved", count=len(store.drafts.unsaved)) + " · " + text
            self.tooltip = store.storage.write_error
        due, new = store.cards.due_counts([p.id for p in app.packs], store.cards.clock(),
                                          app.settings.new_cards_per_day)
        if due + new:
            text += " · " + t("status.review", count=due + new)
        self._said = text
        self._draw()
        reason = app.engine.isolation_reason()
        self.tooltip = store.storage.write_error or reason or None
