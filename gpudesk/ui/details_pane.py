"""The details pane: every field of one GPU, grouped, with derived metrics and sources."""

from __future__ import annotations

import datetime as dt
import html
import re
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QPalette
from PySide6.QtWidgets import QTextBrowser, QWidget

from gpudesk.catalog.metrics import DERIVED_METRICS, METRICS
from gpudesk.catalog.prices import default_cloud_rate, is_stale, price_kind_label, stale_note
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
            "device_type",
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
    ("Features", ("ecc", "mig_max_instances", "nvlink")),
    (
        "Price",
        (
            "price_usd",
            "price_kind",
            "price_date",
            "price_note",
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
    "device_type": "Device type",
    "memory_type": "Memory type",
    "tensor_core_generation": "Tensor core generation",
    "sparsity_speedup": "2:4 sparsity speed-up (×)",
    "ecc": "ECC memory",
    "mig_max_instances": "MIG instances (max)",
    "nvlink": "NVLink",
    "price_kind": "Price kind",
    "price_date": "Price seen on",
    "price_note": "Price note",
}

_DEVICE_TYPES = {"gpu": "GPU", "accelerator": "ML accelerator (not a GPU)", "soc": "SoC"}
_RATE_KINDS = {"on_demand": "on-demand", "spot": "spot", "marketplace": "marketplace"}


def field_label(name: str) -> str:
    if name in METRICS:
        return METRICS[name].header
    return _LABELS.get(name, name.replace("_", " ").capitalize())


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
    if name == "device_type":
        return _DEVICE_TYPES.get(str(value.value), str(value.value))
    if name == "price_kind":
        return price_kind_label(value)
    if name == "sparsity_speedup":
        return f"{value:g}×"
    if isinstance(value, tuple):
        return ", ".join(str(item) for item in value)
    return str(value)


def _cloud_rates_html(entry: CatalogEntry, today: dt.date, muted: str) -> str:
    default = default_cloud_rate(entry)
    items = []
    for rate in entry.cloud_rates:
        seen = rate.date.isoformat() if rate.date else "undated"
        text = (
            f"<b>{html.escape(rate.provider)}</b>, {_RATE_KINDS[rate.kind.value]}: "
            f"{rate.usd_per_gpu_hour:,.2f} USD per GPU-hour, seen {seen}"
        )
        if rate is default:
            text += " <i>(used by default: lowest on-demand rate)</i>"
        if is_stale(rate.date, today):
            text += (
                f" <span style='color:{theme.STALE_COLOR}'>⚠ {stale_note('rate', rate.date)}</span>"
            )
        if rate.note:
            text += f"<br/><span style='color:{muted}'>{html.escape(rate.note)}</span>"
        if rate.source:
            text += f"<br/>{linkify(rate.source)}"
        items.append(f"<li>{text}</li>")
    return (
        "<h3 style='margin-bottom:2px'>Cloud rates</h3>"
        f"<ul style='margin-left:-20px'>{''.join(items)}</ul>"
    )


def entry_details_html(
    entry: CatalogEntry,
    origin: Path | None = None,
    *,
    muted: str = "#80858c",
    show_provenance: bool = False,
    today: dt.date | None = None,
) -> str:
    """The details pane's HTML for one entry.

    Args:
        entry: the GPU.
        origin: the file it came from, shown at the end.
        muted: colour of labels and secondary text.
        show_provenance: expand the "How these figures were sourced" section.
        today: the date prices are judged stale against (default: today).
    """
    today = today or dt.date.today()
    missing = f'<span style="color:{muted}">n/a</span>'
    out = [f"<h2 style='margin-bottom:2px'>{html.escape(entry.name)}</h2>"]
    out.append(
        f"<p style='margin-top:0; color:{muted}'>"
        f"{html.escape(entry.vendor)} · {html.escape(entry.architecture)} · "
        f"{entry.release_year} · {entry.segment.value}</p>"
    )

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

    for title, fields in FIELD_GROUPS:
        rows = []
        for name in fields:
            text = field_text(entry, name)
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
        if title == "Price" and entry.cloud_rates:
            out.append(_cloud_rates_html(entry, today, muted))

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
    if entry.provenance:
        arrow = "▾" if show_provenance else "▸"
        out.append(
            f"<p><a href='{PROVENANCE_LINK}'>{arrow} {html.escape(PROVENANCE_TITLE)}</a></p>"
        )
        if show_provenance:
            out.append(f"<p style='color:{muted}'>{linkify(entry.provenance)}</p>")
    if origin is not None:
        out.append(f"<p style='color:{muted}'>From {html.escape(str(origin))}</p>")
    return "".join(out)


class DetailsPane(QTextBrowser):
    """Shows one catalog entry; links open in the system browser.

    The provenance section stays folded behind its link until asked for, and
    stays as the user left it when another GPU is selected.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)  # our own link toggles provenance; others go out
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
        # A document's default style sheet does not follow palette changes.
        link = self.palette().color(QPalette.ColorRole.Link).name()
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
