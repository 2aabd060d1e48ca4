"""A Mac's GPU: identity from system_profiler, utilisation and memory in use from ioreg, no root.

The ioreg text below is written in the shape GPU monitors for macOS parse (the
``PerformanceStatistics`` dictionary of the IOAccelerator entry, as printed by
``ioreg -r -d 1 -w 0 -c IOAccelerator``): not a capture from a Mac.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from reach import reached
from telemetry.exporter_process import running_exporter, values

from gpudesk.hardware import apple
from gpudesk.telemetry.apple import ROOT_NOTE, AppleSource, parse_ioreg

PROFILER = Path(__file__).resolve().parents[1] / "hardware" / "fixtures" / "system_profiler"
IOREG = (
    "+-o AGXAcceleratorG15X  <class AGXAcceleratorG15X, id 0x1000005ec, registered, matched>\n"
    "    {\n"
    '      "IOClass" = "AGXAcceleratorG15X"\n'
    '      "PerformanceStatistics" = {"In use system memory"=1717567488,'
    '"Device Utilization %"=23,"Renderer Utilization %"=21,"Tiler Utilization %"=23,'
    '"Alloc system memory"=30198988800}\n'
    "    }\n"
)


def _mac() -> apple.AppleReading:
    text = (PROFILER / "m3-max.json").read_text(encoding="utf-8")
    return apple.read_apple(profiler_json=text)


def test_utilisation_and_memory_in_use_without_root() -> None:
    source = AppleSource(_mac, read_live=lambda: IOREG)
    assert source.discover(first_index=0)
    (reading,) = source.read()
    assert reading.up and reading.identity.name == "Apple M3 Max"
    assert reading.utilization_ratio == 0.23
    assert reading.memory_used_bytes == 1717567488
    assert reading.memory_total_bytes is not None and reading.memory_total_bytes > 0
    # The rest needs powermetrics, that is root: absent, and said so.
    assert reading.power_watts is None and reading.temperatures_celsius == {}
    assert reading.clocks_hertz == {}
    assert reading.note == ROOT_NOTE


def test_no_ioreg_answer_leaves_only_the_identity() -> None:
    source = AppleSource(_mac, read_live=lambda: None)
    source.discover()
    (reading,) = source.read()
    assert reading.up and reading.utilization_ratio is None and reading.memory_used_bytes is None


def test_not_a_mac_has_no_apple_device() -> None:
    source = AppleSource(lambda: None)
    assert not source.discover()
    assert source.read() == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (IOREG, (0.23, 1717567488)),
        ('"Device Utilization %"=101', (None, None)),
        ('"Device Utilization %" = 0', (0.0, None)),
        ('"In use system memory"=99999999999999999999', (None, None)),
        ("", (None, None)),
    ],
)
def test_ioreg_examples(text: str, expected: tuple[float | None, int | None]) -> None:
    assert parse_ioreg(text) == expected


@given(
    st.one_of(
        st.text(max_size=200),
        st.builds(
            '"Device Utilization %"={}, "In use system memory"={}'.format,
            st.integers(-5, 500),
            st.integers(-5, 2**60),
        ),
    )
)
@pytest.mark.reaches(read=25)
def test_any_ioreg_text_gives_sane_figures_or_none(text: str) -> None:
    utilization, memory = parse_ioreg(text)
    if utilization is not None or memory is not None:
        reached("read")
    assert utilization is None or 0.0 <= utilization <= 1.0
    assert memory is None or 0 <= memory <= 16 * 1024**4


def test_the_exporter_serves_a_mac_gpu(pids: Path, tmp_path: Path) -> None:
    captured = tmp_path / "ioreg.txt"
    captured.write_text(IOREG, encoding="utf-8")
    settings = {
        "GPUDESK_SYSTEM_PROFILER_JSON": str(PROFILER / "m3-max.json"),
        "GPUDESK_IOREG_OUTPUT": str(captured),
    }
    with running_exporter(pids, scenario="zero", settings=settings) as exporter:
        samples = exporter.samples()
    mac = {"vendor": "Apple", "name": "Apple M3 Max", "index": "0"}
    assert values(samples, "gpudesk_gpu_up", **mac) == [1.0]
    assert values(samples, "gpudesk_gpu_utilization_ratio", **mac) == [0.23]
    assert values(samples, "gpudesk_gpu_memory_used_bytes", **mac) == [1717567488.0]
    assert values(samples, "gpudesk_gpu_power_watts", **mac) == []
    assert values(samples, "gpudesk_exporter_source_available", source="apple") == [1.0]
