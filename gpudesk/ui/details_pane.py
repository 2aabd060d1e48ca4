"""The details pane: every field of one GPU, grouped, with derived metrics and sources."""

from __future__ import annotations

import html
import re
from pathlib import Path

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QTextBrowser, QWidget

from gpudesk.catalog.metrics import DERIVED_METRICS, METRICS
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.ui import theme

#: (group title, fields in the order shown). Every CatalogEntry field except
#: ``notes`` and ``sources`` (their own sections) appears exactly once.
FIELD_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Identity",
        (
            "name",
            "vendor",
            "segment",
            "architecture",
            "release_year",
            "form_factor",
            "interface",
            "compute_capability",
            "id",
            "nvml_names",
            "pci_device_ids",
        ),
    ),
    ("Memory", ("memory_gb", "memory_type", "bandwidth_gbs", "memory_bus_bits", "l2_cache_mb")),
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
            "cloud_hourly_usd",
            "cloud_hourly_source",
            "cloud_hourly_date",
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
    "pci_device_ids": "PCI device ids",
    "memory_type": "Memory type",
    "tensor_core_generation": "Tensor core generation",
    "sparsity_speedup": "2:4 sparsity speed-up (×)",
    "ecc": "ECC memory",
    "mig_max_instances": "MIG instances (max)",
    "nvlink": "NVLink",
    "price_kind": "Price kind",
    "price_date": "Price seen on",
    "cloud_hourly_source": "Cloud price source",
    "cloud_hourly_date": "Cloud price seen on",
}

_PRICE_KINDS = {
    "launch_msrp": "launch MSRP",
    "street": "street price",
    "used": "used market",
    "estimate": "estimate",
}

_URL = re.compile(r"https?://[^\s<>\"')\]]+")


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
    if name == "price_kind":
        return _PRICE_KINDS.get(str(value.value), str(value.value))
    if name == "sparsity_speedup":
        return f"{value:g}×"
    if isinstance(value, tuple):
        return ", ".join(str(item) for item in value)
    return str(value)


def linkify(text: str) -> str:
    """Escape ``text`` for HTML and turn every http(s) URL in it into a link."""
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


def entry_details_html(
    entry: CatalogEntry, origin: Path | None = None, *, muted: str = "#80858c"
) -> str:
    """The details pane's HTML for one entry."""
    missing = f'<span style="color:{muted}">n/a</span>'
    out = [f"<h2 style='margin-bottom:2px'>{html.escape(entry.name)}</h2>"]
    out.append(
        f"<p style='margin-top:0; color:{muted}'>"
        f"{html.escape(entry.vendor)} · {html.escape(entry.architecture)} · "
        f"{entry.release_year} · {entry.segment.value}</p>"
    )

    def table(rows: list[tuple[str, str]]) -> str:
        cells = "".join(
            f"<tr><td style='color:{muted}; padding-right:10px'>{label}</td>"
            f"<td align='right'>{value}</td></tr>"
            for label, value in rows
        )
        return f"<table cellspacing='0' cellpadding='1' width='100%'>{cells}</table>"

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
        out.append(f"<h3 style='margin-bottom:2px'>{title}</h3>{table(rows)}")

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
    if origin is not None:
        out.append(f"<p style='color:{muted}'>From {html.escape(str(origin))}</p>")
    return "".join(out)


class DetailsPane(QTextBrowser):
    """Shows one catalog entry; links open in the system browser."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenExternalLinks(True)
        self.setMinimumWidth(260)
        self.entry: CatalogEntry | None = None
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
            self.setHtml(entry_details_html(self.entry, self._origin, muted=muted))
        self.verticalScrollBar().setValue(scroll)

    def plain_text(self) -> str:
        return self.toPlainText()
