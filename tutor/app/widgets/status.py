"""The status bar: sandbox warm-up, isolation level, and whether progress is being saved."""

from __future__ import annotations

from textual.widgets import Static

from tutor.core.i18n import t


class StatusBar(Static):
    """Polls the engine twice a second: warm-up happens in another thread and posts nothing."""

    DEFAULT_CSS = """
    StatusBar { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """

    def on_mount(self) -> None:
        self.refresh_status()
        self.set_interval(0.5, self.refresh_status)

    def refresh_status(self) -> None:
        app = self.app
        text = app.engine.status_text()  # type: ignore[attr-defined]
        if not app.store.persistent:  # type: ignore[attr-defined]
            text += " · " + t("status.progress.temp")
        self.update(text)
        reason = app.engine.isolation_reason()  # type: ignore[attr-defined]
        self.tooltip = reason or None
