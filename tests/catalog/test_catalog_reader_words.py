"""The bundled catalog's user-facing notes read for a buyer, not for a maintainer.

``notes`` and ``price_note`` are shown in the details pane, the CLI and the PDF; how a
figure was derived (PCI ids, which field holds what) belongs in ``provenance``.
"""

from __future__ import annotations

import re

import pytest

from gpudesk.catalog.loader import load_directory
from gpudesk.paths import bundled_catalog_dir

#: Words that talk about the data file instead of the GPU (issue 28's audit).
MAINTAINER_WORDS = re.compile(
    r"\bthis entry\b|\bstored\b|not yet in the catalog|\bPCI id 0x[0-9a-f]{4}\b", re.IGNORECASE
)


def maintainer_words(text: str) -> list[str]:
    return MAINTAINER_WORDS.findall(text)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("The 144 GB version (PCI id 0x2348) is a different entry not yet in the catalog.", 2),
        ("NVIDIA publishes no list price; the stored price is an estimate.", 1),
        ("No dated public price was found, so this entry has none.", 1),
        ("NVIDIA publishes no list price; the price shown is an estimate.", 0),
    ],
)
def test_the_check_finds_maintainer_words(text: str, found: int) -> None:
    assert len(maintainer_words(text)) == found


def test_bundled_notes_and_price_notes_use_no_maintainer_words() -> None:
    catalog = load_directory(bundled_catalog_dir())
    offenders = {
        f"{entry.id}.{field}": maintainer_words(text)
        for entry in catalog.entries
        for field, text in (("notes", entry.notes), ("price_note", entry.price_note))
        if text and maintainer_words(text)
    }
    assert offenders == {}
