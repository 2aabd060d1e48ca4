"""The details pane: every field of one GPU, grouped, with derived metrics and sources."""

from __future__ import annotations

import datetime as dt
import html
import re
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QPalette
from PySide6.QtWidgets import QApplication, QTextBrowser, QWidget

from gpudesk.catalog.metrics import DERIVED_METRICS, METRICS
from gpudesk.catalog.names import (
    KIND_LABELS,
    STATUS_LABELS,
    identity_parts,
    interconnect_words,
)
from gpudesk.catalog.prices import entry_price_label, is_stale, price_kind_label, stale_note
from gpudesk.catalog.rate_book import (
    RATE_STALE_AFTER_DAYS,
    ProviderRate,
    RateSummary,
    distribution_words,
    format_usd,
    rate_summary,
)
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.markup import linkify
from gpudesk.ui import theme

#: Fields with their own section below the groups, not a row in one.
SECTION_FIELDS: frozenset[str] = frozenset({"notes", "sources", "provenance", "cloud_rates"})

#: Values whose text is longer than this are prose, shown under their label.
PROSE_LENGTH = 48
_TAG = re.compile(r"<[^>]*>")

#: The link that shows or hides the provenance section.
PROVENANCE_LINK = "gpudesk:provenance"
PROVENANCE_TITLE = "How these figures were sourced"

#: (group title, fields in the order shown). Every CatalogEntry field except
#: the :data:`SECTION_FIELDS` appears exactly once.
FIELD_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Identity",
        (
            "name",
            "vendor",
            "segment",
            "kind",
            "status",
            "status_date",
            "architecture",
            "release_year",
            "form_factor",
            "interface",
            "compute_capability",
            "id",
            "nvml_names",
            "pci_vendor_id",
            "pci_device_ids",
        ),
    ),
    (
        "Memory",
        (
            "memory_gb",
            "memory_type",
            "bandwidth_gbs",
            "memory_bus_bits",
            "l2_cache_mb",
            "l3_cache_mb",
        ),
    ),
    (
        "Compute",
        (
            "boost_clock_mhz",
            "shader_cores",
            "tensor_core_generation",
            "fp32_tflops",
            "fp16_tflops",
            "fp64_tflops",
            "tf32_tensor_tflops",
            "bf16_tensor_tflops",
            "fp16_tensor_tflops",
            "fp8_tensor_tflops",
            "int8_tensor_tops",
            "sparsity_speedup",
        ),
    ),
    ("Power", ("tdp_w",)),
    ("Features", ("ecc", "mig_max_instances", "nvlink", "interconnect")),
    (
        "Price",
        (
            "price_usd",
            "price_kind",
            "price_system",
            "price_system_memory_gb",
            "price_date",
            "price_note",
            "price_unavailable",
            "rates_unavailable",
        ),
    ),
)

_LABELS = {
    "name": "Name",
    "vendor": "Vendor",
    "segment": "Segment",
    "architecture": "Architecture",
    "form_factor": "Form factor",
    "interface": "Interface",
    "compute_capability": "CUDA capability",
    "id": "Catalog id",
    "nvml_names": "NVML names",
    "pci_vendor_id": "PCI vendor id",
    "pci_device_ids": "PCI device ids",
    "kind": "Kind",
    "status": "Status",
    "status_date": "Status as of",
    "interconnect": "Device-to-device link",
    "memory_type": "Memory type",
    "tensor_core_generation": "Tensor core generation",
    "sparsity_speedup": "2:4 sparsity speed-up (×)",
    "ecc": "ECC memory",
    "mig_max_instances": "MIG instances (max)",
    "nvlink": "NVLink",
    "price_kind": "Price kind",
    "price_system": "Computer priced",
    "price_system_memory_gb": "Memory of the computer priced",
    "price_date": "Price seen on",
    "price_note": "Price note",
    "price_unavailable": "No price",
    "rates_unavailable": "No cloud rate",
}

_RATE_KINDS = {"on_demand": "on-demand", "spot": "spot", "marketplace": "marketplace"}


def field_label(name: str) -> str:
    if name in METRICS:
        return METRICS[name].header
    return _LABELS.get(name, name.replace("_", " ").capitalize())


#: dated statements that stand in for a missing price or cloud rate
_STATEMENTS = ("price_unavailable", "rates_unavailable")
#: rows that only apply to some entries: left out, not shown as "n/a", where they don't
_ONLY_WHEN_SET = (*_STATEMENTS, "price_system", "price_system_memory_gb")


def field_text(entry: CatalogEntry, name: str) -> str | None:
    """The field as shown, None when the catalog has no value."""
    value = getattr(entry, name)
    if value is None or value == ():
        return None
    if name in METRICS:
        return METRICS[name].format(METRICS[name].value(entry))
    if isinstance(value, bool):
        return "yes" if value else "no"
    if name == "segment":
        return str(value.value).capitalize()
    if name == "kind":
        return KIND_LABELS[value]
    if name == "status":
        return STATUS_LABELS[value]
    if name == "interconnect":
        return interconnect_words(value)
    if name == "price_kind":
        return price_kind_label(value)  # the machine has its own row, "Computer priced"
    if name in ("price_unavailable", "rates_unavailable"):
        return f"{value.reason} (as of {value.date.isoformat()})"
    if name == "sparsity_speedup":
        return f"{value:g}×"
    if name == "price_system_memory_gb":  # as sold ("24 GB" unified memory is 24 GiB)
        return f"{value:g} GiB"
    if isinstance(value, tuple):
        return ", ".join(str(item) for item in value)
    return str(value)


def _rate_date_text(rate: ProviderRate, today: dt.date) -> str:
    seen = rate.date.isoformat() if rate.date else "undated"
    if rate.is_stale(today):
        # Stale is said with an icon and words, never by colour alone.
        days = "" if rate.date is None else f", over {RATE_STALE_AFTER_DAYS} days old"
        warning = html.escape(stale_note("rate", rate.date) + days)
        return f"{seen} <span style='color:{theme.STALE_COLOR}'>⚠ {warning}</span>"
    return seen


def _cloud_rates_html(summary: RateSummary, today: dt.date, muted: str) -> str:
    """One line per rate: provider · kind · $/GPU-h (or /chip-h) · region · date · page."""
    default = summary.lowest
    lines = []
    for rate in summary.rates:
        parts = [
            f"<b>{html.escape(rate.provider)}</b>",
            _RATE_KINDS.get(rate.kind, html.escape(rate.kind)),
            f"{html.escape(format_usd(rate.usd_per_gpu_hour))}/{rate.unit}-h",
        ]
        if rate.region:
            parts.append(html.escape(rate.region))
        parts.append(_rate_date_text(rate, today))
        if rate.link:
            parts.append(f'<a href="{html.escape(rate.link)}">page</a>')
        text = " · ".join(parts)
        if rate is default:
            text += " <i>(used by default: lowest on-demand rate)</i>"
        lines.append(f"<li>{text}</li>")
    head = distribution_words(summary)
    intro = (
        f"<p style='margin:0; color:{muted}'>On demand: {html.escape(head)}. "
        f"Per {summary.unit}: {html.escape(summary.basis)}.</p>"
        if head
        else ""
    )
    return (
        "<h3 style='margin-bottom:2px'>Cloud rates</h3>"
        f"{intro}<ul style='margin-left:-20px'>{''.join(lines)}</ul>"
    )


def _summary_html(entry: CatalogEntry, summary: RateSummary, today: dt.date, muted: str) -> str:
    """The figures a buyer looks for first: memory, bandwidth, dense BF16, price, rent."""
    # an announced part may state no size or bandwidth: said so, never 0
    memory_type = html.escape(entry.memory_type or "")
    if entry.memory_gb is None:
        facts = [
            f"{memory_type}, size not published" if memory_type else "memory size not published"
        ]
    else:
        # as sold, in the unit the catalog's Memory column and every screen use
        facts = [f"{entry.memory_gb:g} GiB {memory_type}".rstrip()]
    bandwidth = entry.bandwidth_gbs
    facts.append("bandwidth not published" if bandwidth is None else f"{bandwidth:,.0f} GB/s")
    tensor = entry.bf16_tensor_tflops or entry.fp16_tensor_tflops
    if tensor is not None:
        kind = "BF16" if entry.bf16_tensor_tflops else "FP16"
        facts.append(f"{tensor:,.0f} TFLOPS {kind} tensor (dense)")
    money = []
    if entry.price_usd is not None:
        price = f"${entry.price_usd:,.0f} {html.escape(entry_price_label(entry))}"
        if is_stale(entry.price_date, today):
            warning = html.escape(stale_note("price", entry.price_date))
            price += f" <span style='color:{theme.STALE_COLOR}'>⚠ {warning}</span>"
        money.append(price)
    low = summary.lowest
    if low is not None:
        rent = (
            f"rent from {html.escape(format_usd(low.usd_per_gpu_hour))}/{low.unit}-h on demand "
            f"({html.escape(low.provider)})"
        )
        if summary.median_usd is not None and len(summary.on_demand) > 1:
            rent += f", median {html.escape(format_usd(summary.median_usd))}"
        money.append(rent)
    elif summary.lowest_any is not None:
        any_rate = summary.lowest_any
        money.append(
            f"rent from {html.escape(format_usd(any_rate.usd_per_gpu_hour))}/{any_rate.unit}-h "
            f"({html.escape(_RATE_KINDS.get(any_rate.kind, any_rate.kind))}, "
            f"{html.escape(any_rate.provider)})"
        )
    rows = " · ".join(facts)
    if money:
        rows += "<br/>" + " · ".join(money)
    return f"<p style='margin-top:2px'>{rows}</p>"


def _sourcing_html(
    entry: CatalogEntry, summary: RateSummary, origin: Path | None, muted: str
) -> str:
    """What sits behind "How these figures were sourced": derivations, rate origins, the file."""
    out = []
    if entry.provenance:
        out.append(f"<p style='color:{muted}'>{linkify(entry.provenance)}</p>")
    rate_lines = []
    for rate in summary.rates:
        text = html.escape(
            f"{rate.provider} ({_RATE_KINDS.get(rate.kind, rate.kind)}): {rate.provenance}"
        )
        rate_lines.append(f"<li>{text}</li>")
    if rate_lines:
        out.append(
            f"<p style='margin-bottom:0; color:{muted}'>Cloud rates:</p>"
            f"<ul style='margin-left:-20px; color:{muted}'>{''.join(rate_lines)}</ul>"
        )
    if origin is not None:
        out.append(f"<p style='color:{muted}'>Entry file: {html.escape(str(origin))}</p>")
    return "".join(out)


def entry_details_html(
    entry: CatalogEntry,
    origin: Path | None = None,
    *,
    muted: str = "#80858c",
    show_provenance: bool = False,
    today: dt.date | None = None,
    rates: RateSummary | None = None,
) -> str:
    """The details pane's HTML for one entry.

    Args:
        entry: the GPU.
        origin: the file it came from, shown at the end.
        muted: colour of labels and secondary text.
        show_provenance: expand the "How these figures were sourced" section.
        today: the date prices are judged stale against (default: today).
        rates: the entry's cloud rates (default: SkyPilot's snapshots and the entry's own).
    """
    today = today or dt.date.today()
    summary = rates if rates is not None else rate_summary(entry)
    missing = f'<span style="color:{muted}">n/a</span>'
    out = [f"<h2 style='margin-bottom:2px'>{html.escape(entry.name)}</h2>"]
    out.append(
        f"<p style='margin-top:0; color:{muted}'>"
        + " · ".join(html.escape(part) for part in identity_parts(entry))
        + "</p>"
    )
    out.append(_summary_html(entry, summary, today, muted))

    def table(rows: list[tuple[str, str]]) -> str:
        cells = []
        for label, value in rows:
            if not label:  # a remark on the row above, such as a stale price
                cells.append(f"<tr><td colspan='2' align='right'>{value}</td></tr>")
            elif len(html.unescape(_TAG.sub("", value))) > PROSE_LENGTH:
                # A sentence squeezed into the right-aligned value column wrapped
                # into ragged right-aligned lines; it gets the row's full width.
                cells.append(
                    f"<tr><td colspan='2' style='color:{muted}'>{label}</td></tr>"
                    f"<tr><td colspan='2' style='padding-bottom:3px'>{value}</td></tr>"
                )
            else:
                cells.append(
                    f"<tr><td style='color:{muted}; padding-right:10px'>{label}</td>"
                    f"<td align='right'>{value}</td></tr>"
                )
        return f"<table cellspacing='0' cellpadding='1' width='100%'>{''.join(cells)}</table>"

    # Price and rent first: what a buyer looks for after the headline figures.
    ordered = sorted(FIELD_GROUPS, key=lambda group: group[0] != "Price")
    for title, fields in ordered:
        rows = []
        for name in fields:
            text = field_text(entry, name)
            if text is None and name in _ONLY_WHEN_SET:
                # "No price: n/a" said nothing, nor did "Computer priced: n/a" on a
                # card priced alone: such a row shows only when it has something to say.
                continue
            rows.append(
                (html.escape(field_label(name)), missing if text is None else html.escape(text))
            )
        if title == "Compute":
            sparse = entry.fp16_tensor_sparse_tflops
            label = "FP16 tensor with 2:4 sparsity (TFLOPS), derived: dense × speed-up"
            shown = missing if sparse is None else html.escape(f"{sparse:,.1f}")
            rows.append((html.escape(label), f"<i>{shown}</i>"))
        if title == "Features":
            rows.append(("Tensor cores", "yes" if entry.has_tensor_cores else "no"))
        if title == "Price" and entry.price_usd is not None and is_stale(entry.price_date, today):
            warning = html.escape(stale_note("price", entry.price_date))
            rows.append(("", f"<span style='color:{theme.STALE_COLOR}'>⚠ {warning}</span>"))
        out.append(f"<h3 style='margin-bottom:2px'>{title}</h3>{table(rows)}")
        if title == "Price" and summary.rates:
            out.append(_cloud_rates_html(summary, today, muted))

    derived_rows = []
    for key in DERIVED_METRICS:
        metric = METRICS[key]
        figure = metric.value(entry)
        shown = missing if figure is None else html.escape(metric.format(figure))
        derived_rows.append((html.escape(metric.header), shown))
    out.append(
        "<h3 style='margin-bottom:2px'>Derived metrics</h3>"
        f"<p style='margin:0; color:{muted}'>Computed from the figures above.</p>"
        f"{table(derived_rows)}"
    )
    if entry.notes:
        out.append(f"<h3 style='margin-bottom:2px'>Notes</h3><p>{linkify(entry.notes)}</p>")
    sources = "".join(f"<li>{linkify(source)}</li>" for source in entry.sources)
    out.append(
        f"<h3 style='margin-bottom:2px'>Sources</h3><ol style='margin-left:-20px'>{sources}</ol>"
    )
    if entry.provenance or summary.rates or origin is not None:
        arrow = "▾" if show_provenance else "▸"
        out.append(
            f"<p><a href='{PROVENANCE_LINK}'>{arrow} {html.escape(PROVENANCE_TITLE)}</a></p>"
        )
        if show_provenance:
            out.append(_sourcing_html(entry, summary, origin, muted))
    return "".join(out)


class DetailsPane(QTextBrowser):
    """Shows one catalog entry; links open in the system browser.

    The provenance section stays folded behind its link until asked for, and
    stays as the user left it when another GPU is selected.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)  # our own link toggles provenance; others go out
        self.setAccessibleName("Details of the selected GPU")
        self.anchorClicked.connect(self._open_link)
        self.setMinimumWidth(260)
        self.entry: CatalogEntry | None = None
        self.provenance_shown = False
        self._origin: Path | None = None
        self._placeholder = "Select a GPU to see every figure, its notes and its sources."
        self.show_entry(None)
        theme.notifier().changed.connect(self._rerender)

    def show_entry(self, entry: CatalogEntry | None, origin: Path | None = None) -> None:
        self.entry = entry
        self._origin = origin
        self._rerender()
        self.verticalScrollBar().setValue(0)

    def _rerender(self, *_args: object) -> None:
        muted = theme.muted_color().name()
        # A document's default style sheet does not follow palette changes. The
        # application's palette, not the pane's: a pane built before the theme was
        # applied kept Qt's default #0000ff (1.5:1 on the dark base) in both themes.
        link = QApplication.palette().color(QPalette.ColorRole.Link).name()
        self.document().setDefaultStyleSheet(f"a {{ color: {link}; }}")
        scroll = self.verticalScrollBar().value()
        if self.entry is None:
            self.setHtml(f"<p style='color:{muted}'>{html.escape(self._placeholder)}</p>")
        else:
            self.setHtml(
                entry_details_html(
                    self.entry, self._origin, muted=muted, show_provenance=self.provenance_shown
                )
            )
        self.verticalScrollBar().setValue(scroll)

    def set_provenance_shown(self, shown: bool) -> None:
        self.provenance_shown = shown
        self._rerender()

    def _open_link(self, url: QUrl) -> None:
        if url.toString() == PROVENANCE_LINK:
            self.set_provenance_shown(not self.provenance_shown)
        elif url.scheme() in ("http", "https"):
            QDesktopServices.openUrl(url)

    def plain_text(self) -> str:
        return self.toPlainText()
