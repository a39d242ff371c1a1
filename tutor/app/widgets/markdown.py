"""A Markdown block for lesson text: our renderer (``tutor.app.markdown_render``) in one widget."""

from __future__ import annotations

from rich.console import RenderableType
from textual.widget import Widget

from tutor.app.markdown_render import Block, parse, render


class Markdown(Widget):
    """Lesson Markdown, parsed once and drawn as one widget (code highlighted for the theme).

    Args:
        markdown: the text; ``update`` replaces it.
    """

    DEFAULT_CSS = """
    Markdown { height: auto; }
    """

    def __init__(self, markdown: str = "", *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self._source = markdown
        self._blocks: list[Block] = parse(markdown)
        self._rendered: dict[bool, RenderableType] = {}

    @property
    def source(self) -> str:
        return self._source

    def update(self, markdown: str) -> None:
        self._source = markdown
        self._blocks = parse(markdown)
        self._rendered.clear()
        self.refresh(layout=True)

    def render(self) -> RenderableType:
        dark = self.app.current_theme.dark
        if dark not in self._rendered:
            self._rendered[dark] = render(self._blocks, dark=dark)
        return self._rendered[dark]
