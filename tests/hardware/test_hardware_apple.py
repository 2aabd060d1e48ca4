"""Apple Silicon from captured system_profiler output, matched to the catalog's Apple chips."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
import reach
from hardware import fake_pynvml as fakes
from hypothesis import given, settings, strategies as st

from gpudesk.catalog.loader import load_catalog
from gpudesk.hardware import apple
from gpudesk.hardware.detect import detect
from gpudesk.hardware.match import MatchMethod, match_device
from gpudesk.hardware.models import DeviceSource
from gpudesk.hardware.nvml import Nvml

FIXTURES = Path(__file__).parent / "fixtures" / "system_profiler"
GIB = 1024


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("fixture", "chip", "cores", "memory_gib", "catalog_id"),
    [
        ("m1.json", "Apple M1", 8, 16, None),  # the base M1 is sold with at most 16 GB
        ("m2-pro.json", "Apple M2 Pro", 19, 32, "apple-m2-pro-19c"),
        ("m3-max.json", "Apple M3 Max", 40, 64, "apple-m3-max-40c"),
        ("m4-max.json", "Apple M4 Max", 40, 128, "apple-m4-max-40c"),
    ],
)
def test_fixtures_parse_and_match(
    fixture: str, chip: str, cores: int, memory_gib: int, catalog_id: str | None
) -> None:
    gpu = apple.parse_profiler(_text(fixture))
    assert gpu is not None
    assert (gpu.name, gpu.gpu_core_count, gpu.memory_total_mib) == (chip, cores, memory_gib * GIB)
    assert (gpu.vendor, gpu.source) == ("Apple", DeviceSource.SYSTEM_PROFILER)
    match = match_device(gpu, load_catalog().entries)
    assert match.catalog_id == catalog_id
    if catalog_id is not None:
        assert match.method is MatchMethod.CHIP_AND_GPU_CORES


@pytest.mark.parametrize(
    ("total_gib", "wired_mib", "expected_mib"),
    [
        (16, None, 16 * GIB * 2 // 3),  # 10.67 GiB, as Metal reports on a 16 GB M4
        (32, None, 32 * GIB * 2 // 3),  # 21.3 GiB: llama.cpp logs 22,906.5 MB (decimal)
        (36, None, 36 * GIB * 2 // 3),
        (64, None, 48 * GIB),
        (128, None, 96 * GIB),
        (64, 57_344, 57_344),  # iogpu.wired_limit_mb set by the user
        (64, 0, 48 * GIB),  # 0 is "the default"
    ],
)
def test_memory_for_models(total_gib: int, wired_mib: int | None, expected_mib: int) -> None:
    assert apple.memory_for_models_mib(total_gib * GIB, wired_mib) == expected_mib


def test_sysctl_gives_the_exact_memory_version_and_wired_limit() -> None:
    version, memsize, wired = apple.parse_sysctl("15.1\n68719476736\n0\n")
    assert (version, memsize, wired) == ("15.1", 64 * 1024**3, 0)
    gpu = apple.parse_profiler(_text("m3-max.json"), memsize_bytes=memsize, wired_limit_mib=wired)
    assert gpu is not None and gpu.memory_for_models_mib == 48 * GIB


def _runner(outputs: dict[str, str | None]) -> apple.Runner:
    def run(command: Sequence[str]) -> str | None:
        return outputs[command[0]]

    return run


def test_read_apple_runs_both_commands() -> None:
    reading = apple.read_apple(
        _runner({"sysctl": "14.6.1\n137438953472\n", "system_profiler": _text("m4-max.json")})
    )
    assert reading.os_version == "macOS 14.6.1"
    assert reading.gpu is not None and reading.gpu.memory_total_mib == 128 * GIB


def test_a_failing_or_garbled_profiler_is_a_reason_not_a_crash() -> None:
    failed = apple.read_apple(_runner({"sysctl": None, "system_profiler": None}))
    assert failed.gpu is None and failed.detail == "system_profiler failed"
    garbled = apple.read_apple(_runner({"sysctl": "x", "system_profiler": "{not json"}))
    assert garbled.gpu is None and garbled.detail is not None
    assert garbled.detail.startswith("output: not JSON")


def test_an_intel_mac_or_a_virtual_machine_has_no_apple_gpu() -> None:
    intel = {"SPDisplaysDataType": [{"sppci_model": "Intel Iris Plus Graphics"}]}
    assert apple.parse_profiler(json.dumps(intel)) is None
    vm = {"SPHardwareDataType": [{"chip_type": "Apple M4 Max (Virtual)"}]}
    assert apple.parse_profiler(json.dumps(vm)) is None


def test_detect_adds_the_mac_gpu_from_a_captured_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(apple.PROFILER_JSON_ENV, str(FIXTURES / "m3-max.json"))
    result = detect(Nvml(module=fakes.FakePynvml([])), sysfs_root=tmp_path)
    (gpu,) = result.gpus
    assert gpu.name == "Apple M3 Max" and gpu.index == 0
    assert result.status_text.startswith("1 Apple GPU via system_profiler")
    assert not gpu.has_live_figures


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "SPDisplaysDataType",
                    "SPHardwareDataType",
                    "chip_type",
                    "sppci_model",
                    "sppci_cores",
                    "physical_memory",
                    "_name",
                ]
            )
            | st.text(max_size=8),
            children,
            max_size=5,
        )
    ),
    max_leaves=30,
)


def _places(node: object) -> list[tuple[dict[str, object] | list[object], object]]:
    """Every (container, key or index) in a JSON document, depth first."""
    found: list[tuple[dict[str, object] | list[object], object]] = []
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in items:
        found.append((node, key))  # type: ignore[arg-type]
        found.extend(_places(child))
    return found


@st.composite
def _profiler_documents(draw: st.DrawFn) -> object:
    """A real system_profiler document with one value replaced by any JSON or removed,
    or any JSON at all: random JSON alone names an Apple chip in no example."""
    if draw(st.integers(0, 3)) == 0:
        return draw(_JSON)
    name = draw(st.sampled_from(["m1.json", "m2-pro.json", "m3-max.json", "m4-max.json"]))
    document = json.loads(_text(name))
    kind = draw(st.sampled_from(["whole", "chip", "any", "any"]))
    if kind == "whole":
        return document
    if kind == "chip":  # what names the chip, in both places it is read from
        chip = st.sampled_from(
            ["Apple M4 Max (Virtual)", "Intel Iris Plus Graphics", "Apple", " Apple M2 ", "M3"]
        ) | st.text(max_size=12)
        document["SPHardwareDataType"][0]["chip_type"] = draw(chip)
        document["SPDisplaysDataType"][0]["sppci_model"] = draw(chip)
        return document
    container, key = draw(st.sampled_from(_places(document)))
    if isinstance(container, dict) and draw(st.booleans()):
        del container[key]  # type: ignore[arg-type]
    else:
        container[key] = draw(_JSON)  # type: ignore[index]
    return document


@settings(max_examples=200, deadline=None)
@given(data=_profiler_documents())
@pytest.mark.reaches(gpu=44, no_gpu=25, refused=30)
def test_any_json_shape_never_crashes(data: object) -> None:
    try:
        text = json.dumps(data)
    except ValueError:
        return
    try:
        gpu = apple.parse_profiler(text)
    except apple.AppleParseError as exc:
        reach.reached("refused")
        assert str(exc)
        return
    if gpu is None:
        reach.reached("no_gpu")  # an Intel Mac, a virtual machine, or no chip we trust
        return
    reach.reached("gpu")
    assert (gpu.vendor, gpu.source, gpu.index) == ("Apple", DeviceSource.SYSTEM_PROFILER, 0)
    assert gpu.name.startswith("Apple ") and gpu.name == gpu.name.strip()
    assert gpu.gpu_core_count is None or 0 < gpu.gpu_core_count <= 1024
    assert gpu.memory_total_mib is None or gpu.memory_total_mib > 0
    assert (gpu.memory_for_models_mib is None) == (gpu.memory_total_mib is None)
    assert json.loads(gpu.model_dump_json())["name"] == gpu.name


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=200))
def test_any_text_never_crashes(text: str) -> None:
    reading = apple.read_apple(profiler_json=text)
    assert reading.gpu is None or reading.gpu.vendor == "Apple"
