"""Names from files shown by Qt exactly as written, never as markup.

Qt guesses whether a tooltip or an auto-format label is rich text from its
first line (``Qt.mightBeRichText``): a catalog or benchmark name such as
``<img src=/home/me/x.png>`` would be rendered, loading a local image. Labels
that show names use ``Qt.TextFormat.PlainText``; tooltips, which have no
format setting, go through :func:`plain_tooltip`.
"""

from __future__ import annotations

import html

from PySide6.QtGui import Qt


def plain_tooltip(text: str) -> str:
    """``text`` as tooltip markup that Qt shows literally.

    Text Qt would take as plain is returned unchanged; text it would take as
    rich is escaped and wrapped in ``<qt>`` so that every character shows.
    """
    if not Qt.mightBeRichText(text):
        return text
    return "<qt>" + html.escape(text).replace("\n", "<br>") + "</qt>"
