"""Whether an entry's sources are ones a reader can follow (``validate --strict``).

A source is a URL of a specific page, or a document title with its publisher
(``"... whitepaper — NVIDIA"``, a site such as ``support.apple.com``, or a
vendor that publishes its own datasheets named in the title). What
a reader cannot follow is flagged: a database's home page instead of the
card's own page, no URL and no publisher, a path that only exists in someone's
checkout, a cloud rate without its date or pricing page. Maintainer wording in
``notes`` is flagged too: it belongs in ``provenance``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from gpudesk.catalog.schema import CatalogEntry

_URL = re.compile(r"https?://[^\s<>\"')\]]+")
_FILE_URL = re.compile(r"\bfile://", re.IGNORECASE)
# A relative or absolute file path such as "shared/seed/guide.txt" or "/home/x/a.pdf".
_LOCAL_PATH = re.compile(
    r"(?<![\w/.:])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.(?:txt|md|pdf|csv|json|toml)\b"
)
_PUBLISHER_SUFFIX = re.compile(r"\s[—–-]\s*([A-Z][\w&.,' -]{1,60})\s*$")
# A publisher named in a title without a URL: a site ("support.apple.com") or a
# vendor that publishes its own datasheets and whitepapers.
_PUBLISHER_DOMAIN = re.compile(r"\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|ai|gov|edu|de)\b")
KNOWN_PUBLISHERS: tuple[str, ...] = (
    "NVIDIA", "AMD", "Intel", "Apple", "Habana", "Google", "Microsoft", "AWS", "TechPowerUp",
    "Huawei", "Qualcomm",
)  # fmt: skip

#: Pages that list every card rather than one: citing them says "look it up yourself".
_INDEX_PAGES: dict[str, tuple[re.Pattern[str], ...]] = {
    "techpowerup.com": (re.compile(r"^/gpu-specs/?$"),),
    "pci-ids.ucw.cz": (
        re.compile(r"^/?$"),
        re.compile(r"^/read/PC/?$"),
        re.compile(r"^/read/PC/[0-9a-fA-F]{4}/?$"),  # a vendor's list, not the device
        re.compile(r"^/v2\.2/pci\.ids$"),  # the whole database file
    ),
}
_PRIVATE_HOSTS = re.compile(
    r"^(localhost|127\.\d+\.\d+\.\d+|10\.\d+\.\d+\.\d+|192\.168\.\d+\.\d+|"
    r"172\.(1[6-9]|2\d|3[01])\.\d+\.\d+|[\w-]+\.(local|internal|lan))$"
)
#: Wording no reader should meet anywhere, provenance included (it can be unfolded).
INTERNAL_MARKERS: tuple[str, ...] = ("ARTICLE DIFFERS", "schema field", "shared/seed")
#: Maintainer wording that belongs in ``provenance``, not in a reader's ``notes``.
MAINTAINER_MARKERS: tuple[str, ...] = (*INTERNAL_MARKERS, "ARTICLE PRICE", "(stored")


@dataclass(frozen=True, slots=True)
class SourcingIssue:
    """One thing a reader could not follow, at ``field`` (``sources.2``, ``notes``)."""

    field: str
    message: str


def url_issue(url: str) -> str | None:
    """Why one URL is not a specific public page, or None when it is."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host:
        return f"{url!r} has no host"
    if _PRIVATE_HOSTS.match(host):
        return f"{url} is not a public address"
    bare_host = host.removeprefix("www.")
    for pattern in _INDEX_PAGES.get(bare_host, ()):
        if pattern.match(parts.path):
            return f"{url} is the database's index, not this card's own page"
    if parts.path in ("", "/") and not parts.query:
        return f"{url} is a home page; link the specific page"
    return None


def text_source_issues(text: str) -> list[str]:
    """Problems of one source text (a URL, or a title with its publisher)."""
    issues: list[str] = []
    if _FILE_URL.search(text):
        issues.append("a file:// link is not public")
    without_urls = _URL.sub(" ", text)
    local = _LOCAL_PATH.search(without_urls)
    if local:
        issues.append(f"{local.group(0)!r} is a local file path, not a public source")
    urls = [match.group(0).rstrip(".,;:") for match in _URL.finditer(text)]
    issues.extend(problem for url in urls if (problem := url_issue(url)) is not None)
    if not urls and not _names_a_publisher(without_urls):
        issues.append("no URL: give the page's URL, or the document title ending in ' — Publisher'")
    return issues


def _names_a_publisher(text: str) -> bool:
    if _PUBLISHER_SUFFIX.search(text) or _PUBLISHER_DOMAIN.search(text):
        return True
    return any(re.search(rf"\b{re.escape(name)}\b", text) for name in KNOWN_PUBLISHERS)


def sourcing_issues(entry: CatalogEntry) -> list[SourcingIssue]:
    """Everything ``validate --strict`` reports for one entry."""
    found: list[SourcingIssue] = []
    for index, source in enumerate(entry.sources):
        found.extend(SourcingIssue(f"sources.{index}", msg) for msg in text_source_issues(source))
    if entry.interconnect is not None:
        found.extend(
            SourcingIssue("interconnect.source", msg)
            for msg in text_source_issues(entry.interconnect.source)
        )
    for index, rate in enumerate(entry.cloud_rates):
        where = f"cloud_rates.{index}"
        if rate.date is None:
            found.append(SourcingIssue(f"{where}.date", "a cloud rate needs the date it was seen"))
        if rate.source is None:
            found.append(SourcingIssue(f"{where}.source", "a cloud rate needs its pricing page"))
        else:
            urls = [match.group(0).rstrip(".,;:") for match in _URL.finditer(rate.source)]
            if not urls:
                found.append(SourcingIssue(f"{where}.source", "give the pricing page's URL"))
            found.extend(
                SourcingIssue(f"{where}.source", problem)
                for url in urls
                if (problem := url_issue(url)) is not None
            )
    if entry.price_usd is None and entry.price_unavailable is None:
        found.append(
            SourcingIssue(
                "price_usd",
                "give a price (price_usd, price_date, price_kind) or a dated statement "
                'that none exists (price_unavailable = { date = ..., reason = "..." })',
            )
        )
    if not entry.cloud_rates and entry.rates_unavailable is None and not _skypilot_rates(entry):
        found.append(
            SourcingIssue(
                "cloud_rates",
                "give a dated cloud rate ([[cloud_rates]]) or a dated statement that none "
                'exists (rates_unavailable = { date = ..., reason = "..." })',
            )
        )
    if entry.notes:
        markers = [marker for marker in MAINTAINER_MARKERS if marker in entry.notes]
        if markers:
            found.append(
                SourcingIssue(
                    "notes",
                    f"maintainer wording ({', '.join(repr(m) for m in markers)}) belongs in "
                    "provenance; notes are plain sentences for a reader",
                )
            )
    if entry.provenance:
        markers = [marker for marker in INTERNAL_MARKERS if marker in entry.provenance]
        if markers:
            found.append(
                SourcingIssue(
                    "provenance",
                    f"internal wording ({', '.join(repr(m) for m in markers)}): the details "
                    "pane shows provenance to readers; say it in plain words",
                )
            )
    return found


def _skypilot_rates(entry: CatalogEntry) -> bool:
    """True when SkyPilot's snapshots (bundled or imported) list the GPU."""
    from gpudesk.catalog.rate_book import default_rate_book  # rate_book imports schema

    return bool(default_rate_book().summary(entry.id).rates)
