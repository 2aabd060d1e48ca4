"""One rule for what every chart draws (issue 42 items 6 and 7): the BF16 stand-in on
the FP16 tensor axes, and a used module's bare price kept out of catalog maxima."""

from __future__ import annotations

import datetime as dt

from catalog_factory import make_entry

from gpudesk.compare.chart_values import (
    bare_module_price,
    bare_module_words,
    chart_value,
    sets_catalog_scale,
    stand_in,
)
from gpudesk.compare.radar import NormalisationChoice, Reference, choose_normalisation

_USED = {"price_date": dt.date(2026, 2, 1), "price_kind": "used"}
_STREET = {"price_date": dt.date(2026, 2, 1), "price_kind": "street"}


def _module() -> object:
    """A V100 SXM2 at $75: 125 TFLOPS, 1,667 TFLOPS per $1k (issue 42 item 6)."""
    return make_entry(
        "v100-module", form_factor="SXM2", fp16_tensor_tflops=125.0, price_usd=75, **_USED
    )


def test_bf16_stands_in_for_fp16_tensor_on_every_chart_alike() -> None:
    gaudi = make_entry("gaudi", bf16_tensor_tflops=1835.0, price_usd=15000, **_STREET)
    both = make_entry("both", fp16_tensor_tflops=989.4, bf16_tensor_tflops=989.4)
    assert chart_value(gaudi, "fp16_tensor_tflops") == 1835.0
    assert stand_in(gaudi, "fp16_tensor_tflops") == "BF16"
    assert chart_value(gaudi, "fp16_tensor_tflops_per_kusd") == 1835.0 / 15
    assert stand_in(both, "fp16_tensor_tflops") is None
    # no BF16 units is a real gap: nothing stands in on the BF16 axis
    v100 = make_entry("v100", fp16_tensor_tflops=125.0)
    assert chart_value(v100, "bf16_tensor_tflops") is None
    assert stand_in(v100, "bf16_tensor_tflops") is None


def test_a_used_modules_bare_price_sets_no_catalog_maximum_unless_compared() -> None:
    module = _module()
    card = make_entry("card", fp16_tensor_tflops=165.0, price_usd=1600, **_STREET)
    used_card = make_entry(
        "used-card", form_factor="PCIe dual-slot", fp16_tensor_tflops=35.0, price_usd=700, **_USED
    )
    assert bare_module_price(module) and not bare_module_price(used_card)
    assert bare_module_words(module) == "used SXM2 module, no baseboard"
    assert not sets_catalog_scale(module, "fp16_tensor_tflops_per_kusd")
    assert sets_catalog_scale(module, "fp16_tensor_tflops")  # its speed is a fact
    axes = [
        "memory_gb",
        "bandwidth_gbs",
        "fp32_tflops",
        "fp16_tensor_tflops",
        "fp16_tensor_tflops_per_kusd",
    ]
    choice = NormalisationChoice(Reference.CATALOG)
    catalog = [module, card, used_card]
    ranges = choose_normalisation(choice, axes, catalog=catalog, selection=[card]).ranges
    assert ranges[4] is not None and ranges[4].max_value == 165.0 / 1.6  # not 1,666.7
    assert ranges[3] is not None and ranges[3].max_value == 165.0
    # compared, the module is drawn as it is and may set the ring
    ranges = choose_normalisation(choice, axes, catalog=catalog, selection=[card, module]).ranges
    assert ranges[4] is not None and round(ranges[4].max_value) == 1667


def test_the_table_marks_a_bare_module_price() -> None:
    from gpudesk.compare.table import build_comparison

    card = make_entry("card", fp16_tensor_tflops=165.0, price_usd=1600, **_STREET)
    comparison = build_comparison([card, _module()])
    text = comparison.to_text({})
    assert "used SXM2 module, no baseboard" in text
