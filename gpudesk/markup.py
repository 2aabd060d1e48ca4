"""Plain text as Qt rich text: escaped, with its web addresses as links.

Catalog notes, sources and model descriptions are untrusted text: everything
is escaped, and only ``http(s)://`` addresses become links. One rule for every
view, so a source reads the same in the details pane and in the Plan tab.
"""

from __future__ import annotations

import html
import re

#: An address runs to the first space, quote, angle bracket or closing bracket.
_URL = re.compile(r"https?://[^\s<>\"')\]]+")


def linkify(text: str) -> str:
    """Escape ``text`` for HTML and turn every http(s) URL in it into a link.

    Punctuation that ends a sentence (``.,;:``) after an address is not part of it.
    """
    parts: list[str] = []
    position = 0
    for match in _URL.finditer(text):
        url = match.group(0).rstrip(".,;:")
        end = match.start() + len(url)
        parts.append(html.escape(text[position : match.start()]))
        parts.append(f'<a href="{html.escape(url, quote=True)}">{html.escape(url)}</a>')
        position = end
    parts.append(html.escape(text[position:]))
    return "".join(parts)
