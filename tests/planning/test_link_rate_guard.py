"""An estimate across GPUs whose link has no published rate is refused by
``estimate_speed`` itself, not only by the planner: never PCIe's rate, never 0 GB/s."""

from __future__ import annotations

import pytest

from gpudesk.catalog.loader import load_catalog
from gpudesk.speed.estimate import (
    Engine,
    KvFormat,
    Mode,
    NotRunnable,
    SpeedRequest,
    model_costs,
)
from gpudesk.speed.hardware import DeviceRates, rates_for
from gpudesk.speed.planner import estimate_for
from gpudesk.speed.shapes import shape_for
from gpudesk.workload.quant import QuantFormat


def _h100_rates(*, published: bool) -> DeviceRates:
    (entry,) = [e for e in load_catalog([], include_user=False).entries if e.id == "h100-sxm5"]
    rates = rates_for(entry)
    link = rates.link.model_copy(update={"rate_published": published})
    return rates.model_copy(update={"link": link})


@pytest.mark.parametrize("mode", [Mode.DECODE, Mode.SERVE])
def test_tensors_split_over_a_rateless_link_are_not_estimated(mode: Mode) -> None:
    costs = model_costs(shape_for("llama-3.1-70b"), QuantFormat.FP8, KvFormat.FP16)
    request = SpeedRequest(
        mode=mode, engine=Engine.VLLM, quant=QuantFormat.FP8, count=4, tp=4,
        seq_in=512, seq_out=128, num_prompts=16,
    )  # fmt: skip
    rated = estimate_for(_h100_rates(published=True), costs, request)
    assert rated.tokens_per_s > 0
    with pytest.raises(NotRunnable, match="no published rate"):
        estimate_for(_h100_rates(published=False), costs, request)
    one = request.model_copy(update={"count": 1, "tp": 1})
    small = model_costs(shape_for("llama-3.1-8b"), QuantFormat.FP8, KvFormat.FP16)
    assert estimate_for(_h100_rates(published=False), small, one).tokens_per_s > 0
