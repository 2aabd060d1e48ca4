"""The figure a chart draws for a GPU: one rule for the radar, the bars and the scatter.

Two rules, each once here:

* **Stand-ins.** A GPU without the dense FP16 tensor figure but with the BF16 one
  (Gaudi 3 lists BF16 only; the two are equal on every catalog GPU that lists both)
  is drawn with its BF16 figure on the FP16 tensor axis (and the per-watt and
  per-price figures made from it), and every chart says so. Before, the radar did
  and said so while Bars and the scatter called the same GPU "n/a" / "not plotted".
  A GPU without BF16 (V100, T4, Turing) gets no stand-in on a BF16 axis: it has no
  BF16 units, so that gap is real.
* **Bare-module prices.** A used SXM or OAM module's price leaves out the baseboard it
  cannot run without (a $75 V100 SXM2 set the catalog's per-price maximum at 1,666
  TFLOPS per $1k and the whole Pareto frontier). Such a price is marked, and on a
  price axis (the price, or a figure per $1k) it is left out of the catalog maximum
  and the frontier unless the user compares that GPU.
"""

from __future__ import annotations

from collections.abc import Callable

from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.schema import CatalogEntry, PriceKind


def _per_kusd(value: float | None, price_usd: float | None) -> float | None:
    if value is None or price_usd is None or price_usd <= 0:
        return None
    return value / (price_usd / 1000.0)


def _per_w(value: float | None, tdp_w: int | None) -> float | None:
    if value is None or tdp_w is None or tdp_w <= 0:
        return None
    return value / tdp_w


#: Figure key -> (the stand-in's name, its value).
STAND_INS: dict[str, tuple[str, Callable[[CatalogEntry], float | None]]] = {
    "fp16_tensor_tflops": ("BF16", lambda entry: entry.bf16_tensor_tflops),
    "fp16_tensor_tflops_per_kusd": (
        "BF16",
        lambda entry: _per_kusd(entry.bf16_tensor_tflops, entry.price_usd),
    ),
    "fp16_tensor_tflops_per_w": (
        "BF16",
        lambda entry: _per_w(entry.bf16_tensor_tflops, entry.tdp_w),
    ),
}

#: Form factors sold as a module for a baseboard (their price leaves the board out).
_MODULE_PREFIXES = ("SXM", "OAM")


def stand_in(entry: CatalogEntry, key: str) -> str | None:
    """The name of the figure drawn for ``key`` in its place ("BF16"), or None when the
    entry has the figure itself or no stand-in either."""
    if METRICS[key].value(entry) is not None or key not in STAND_INS:
        return None
    name, value = STAND_INS[key]
    return name if value(entry) is not None else None


def chart_value(entry: CatalogEntry, key: str) -> float | None:
    """The figure every chart draws for ``entry`` on ``key``: its own, else its stand-in."""
    value = METRICS[key].value(entry)
    if value is None and key in STAND_INS:
        value = STAND_INS[key][1](entry)
    return value


def is_price_key(key: str) -> bool:
    """Whether ``key`` is the price or a figure per $1k."""
    return key == "price_usd" or key.endswith("_per_kusd")


def bare_module_price(entry: CatalogEntry) -> bool:
    """Whether ``entry``'s price is a used module's, without the baseboard it needs."""
    form = (entry.form_factor or "").strip().upper()
    return entry.price_kind is PriceKind.USED and form.startswith(_MODULE_PREFIXES)


def bare_module_words(entry: CatalogEntry) -> str:
    """How the mark reads: "used SXM2 module, no baseboard"."""
    form = (entry.form_factor or "module").split(" (")[0].strip()
    return f"used {form} module, no baseboard"


def sets_catalog_scale(entry: CatalogEntry, key: str) -> bool:
    """Whether ``entry``'s figure on ``key`` may set a catalog maximum or the frontier."""
    return not (is_price_key(key) and bare_module_price(entry))


__all__ = [
    "STAND_INS",
    "bare_module_price",
    "bare_module_words",
    "chart_value",
    "is_price_key",
    "sets_catalog_scale",
    "stand_in",
]
