"""Compare with accelerators beyond GPUs (issue 43): kind, status and the link as rows;
an announced part's unpublished figures are gaps, never zero."""

from __future__ import annotations

import datetime as dt
import json

from catalog_factory import make_entry

from gpudesk.compare.radar import entry_values
from gpudesk.compare.table import build_comparison


def _entries() -> list:  # type: ignore[type-arg]
    gpu = make_entry(
        "gpu-a",
        fp16_tensor_tflops=500.0,
        interconnect={
            "kind": "nvlink",
            "generation": "NVLink 5",
            "gbs_per_direction": 900.0,
            "topology": "switch",
            "max_devices": 8,
            "source": "https://www.nvidia.com/en-us/data-center/hgx/ (NVLink 5)",
        },
    )
    tpu = make_entry("tpu-b", kind="tpu", status="cloud-only", status_date=dt.date(2026, 11, 6))
    announced = make_entry(
        "next-c",
        status="announced",
        status_date=dt.date(2026, 3, 16),
        segment=None,
        architecture=None,
        release_year=None,
        memory_type=None,
        fp32_tflops=None,
        bf16_tensor_tflops=4000.0,
    )
    return [gpu, tpu, announced]


def test_kind_status_and_link_rows() -> None:
    comparison = build_comparison(_entries())
    assert comparison.row("kind").values == ("GPU", "TPU", "GPU")
    assert comparison.row("status").values == (
        "Shipping",
        "Cloud only 2026-11-06",
        "Announced 2026-03-16",
    )
    assert comparison.row("interconnect").values[0] == (
        "NVLink 5: 900 GB/s each way through a switch, up to 8 devices"
    )
    assert comparison.row("interconnect").values[1:] == (None, None)


def test_an_announced_part_has_gaps_not_zeros() -> None:
    entries = _entries()
    comparison = build_comparison(entries)
    assert comparison.row("fp32_tflops").values[2] is None
    assert comparison.row("architecture").values[2] is None
    document = json.loads(json.dumps(comparison.to_json(), allow_nan=False))
    announced = next(gpu for gpu in document["gpus"] if gpu["id"] == "next-c")
    assert announced["metrics"]["fp32_tflops"] is None
    assert announced["metrics"]["release_year"] is None
    # the radar: no value on the FP32 axis is a gap (None), never 0
    assert entry_values(entries[2], ["fp32_tflops", "memory_gb"]) == [None, 16.0]
