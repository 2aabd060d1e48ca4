"""Untrusted text as rich text: escaped, addresses linked, nothing else."""

from __future__ import annotations

import html
import re

from hypothesis import given, strategies as st

from gpudesk.markup import linkify

_TAGS = re.compile(r'<a href="[^"]*">|</a>')


def test_source_urls_become_links_without_trailing_punctuation() -> None:
    text = linkify("TechPowerUp (https://www.techpowerup.com/gpu-specs/). <b>")
    assert '<a href="https://www.techpowerup.com/gpu-specs/">' in text
    assert text.endswith("</a>). &lt;b&gt;")
    assert linkify("Whitepaper v2.0") == "Whitepaper v2.0"


def test_a_quote_in_an_address_cannot_leave_the_attribute() -> None:
    text = linkify('see http://x.example/a"onmouseover="alert(1)')
    assert '<a href="http://x.example/a">' in text
    assert 'onmouseover="' not in text.replace("&quot;", "")


def test_only_http_addresses_link() -> None:
    assert "<a" not in linkify("javascript:alert(1) file:///etc/passwd ftp://host/x")


@given(
    st.lists(
        st.sampled_from(["word", " ", "<b>", "&", '"', "(", ")", ".", "https://a.example/p?q=1"])
        | st.text(max_size=8),
        max_size=12,
    ).map("".join)
)
def test_the_text_survives_escaping_and_linking(text: str) -> None:
    """Removing the links' tags and unescaping gives back exactly the input."""
    marked = linkify(text)
    assert html.unescape(_TAGS.sub("", marked)) == text
    assert "<" not in _TAGS.sub("", marked)
