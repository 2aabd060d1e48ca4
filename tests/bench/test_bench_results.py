"""The JSON contract, validation of untrusted files, peaks and the measured series."""

from __future__ import annotations

import json

import pytest
from bench_fakes import FakeBackend, FixedProbe, catalog_entry

from gpudesk.bench.measured import measured_series
from gpudesk.bench.peaks import pcie_peak_gbs, peak_field, peak_for
from gpudesk.bench.plan import Capabilities, make_plan
from gpudesk.bench.result_file import parse_result
from gpudesk.bench.results import BenchResult, Measurement, ResultFileError
from gpudesk.bench.runner import run_benchmark
from gpudesk.progress import ProgressState

CONTRACT_TOP = ["backend", "device", "catalog_id", "results", "sweep", "environment"]
CONTRACT_ROW = ["test", "dtype", "size", "value", "unit", "min", "max", "peak", "fraction_of_peak"]


@pytest.fixture(scope="module")
def result() -> BenchResult:
    caps = Capabilities(
        kind="cuda",
        tests=("gemm", "copy", "h2d", "d2h", "sweep"),
        gemm_dtypes=("fp32", "fp16"),
        last_level_cache_bytes=None,
    )
    plan = make_plan(caps).model_copy(update={"sweep_sizes": (256, 512)})
    return run_benchmark(
        plan,
        FakeBackend(),
        ProgressState(),
        catalog=[catalog_entry()],
        probe=FixedProbe("fake-gpu"),
    )


def test_json_has_the_contract_keys_in_order(result: BenchResult) -> None:
    data = json.loads(result.to_json())
    assert list(data)[:6] == CONTRACT_TOP
    assert data["backend"] == "fake"
    assert data["catalog_id"] == "fake-gpu"
    assert data["device"]["name"] == "Fake GPU"
    assert isinstance(data["environment"], dict)
    tests = {row["test"] for row in data["results"]}
    assert tests == {"gemm", "copy", "h2d", "d2h"}
    for row in data["results"] + data["sweep"]:
        assert list(row)[:9] == CONTRACT_ROW
        assert row["unit"] == ("TFLOPS" if row["test"] == "gemm" else "GB/s")
    assert [row["size"] for row in data["sweep"]] == [256, 512, 256, 512]
    fp16 = next(row for row in data["results"] if row["dtype"] == "fp16")
    assert fp16["peak"] == 200.0
    assert 0 < fp16["fraction_of_peak"] < 1


def test_json_round_trips(result: BenchResult) -> None:
    assert parse_result(result.to_json(), "x.json") == result


def _valid() -> dict[str, object]:
    """What a headless `gpudesk bench --json` might print, contract keys only."""
    return {
        "backend": "torch",
        "device": {"kind": "cuda", "name": "NVIDIA H100 80GB HBM3"},
        "catalog_id": "h100-sxm",
        "results": [
            {
                "test": "gemm",
                "dtype": "bf16",
                "size": 8192,
                "value": 650.0,
                "unit": "TFLOPS",
                "min": 640.0,
                "max": 655.0,
                "peak": 989.4,
                "fraction_of_peak": 0.657,
            },
        ],
        "sweep": [],
        "environment": {"torch": "2.5.1", "cuda_runtime": "12.4"},
    }


def test_minimal_contract_file_is_accepted() -> None:
    parsed = parse_result(json.dumps(_valid()), "run.json")
    assert parsed.backend == "torch"
    assert parsed.results[0].value == 650.0
    assert parsed.started_at.year == 1970  # unknown time, but importable


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (lambda d: d.pop("backend"), "backend", "Field required"),
        (lambda d: d["results"][0].update(unit="GFLOPS"), "results.0.unit", "TFLOPS"),
        (lambda d: d["results"][0].update(value=-3), "results.0.value", "greater than or equal"),
        (lambda d: d["results"][0].update(test="fft"), "results.0.test", "Input should be"),
        (lambda d: d["results"][0].update(value=None), "results.0", "must say why"),
        (lambda d: d["results"][0].update(size="big"), "results.0.size", "integer"),
        (lambda d: d.update(results="none"), "results", "array"),
        (lambda d: d["device"].pop("name"), "device.name", "Field required"),
        (lambda d: d.update(schema_version=99), "schema_version", "newer gpudesk"),
        (lambda d: d.update(environment=[1, 2]), "environment", "object"),
    ],
)
def test_malformed_files_name_the_field(mutate, field: str, message: str) -> None:  # type: ignore[no-untyped-def]
    data = _valid()
    mutate(data)
    with pytest.raises(ResultFileError) as caught:
        parse_result(json.dumps(data), "/tmp/other.json")
    assert caught.value.field == field
    assert message in caught.value.message
    assert str(caught.value).startswith(f"/tmp/other.json: {field}: ")


def test_not_json_not_object_nan_and_huge() -> None:
    with pytest.raises(ResultFileError, match=r"run.json: \(json\): not valid JSON"):
        parse_result("{nope", "run.json")
    with pytest.raises(ResultFileError, match="expected a JSON object"):
        parse_result("[1, 2]", "run.json")
    text = json.dumps(_valid()).replace("650.0", "NaN")
    with pytest.raises(ResultFileError, match="NaN is not a number JSON allows"):
        parse_result(text, "run.json")
    with pytest.raises(ResultFileError, match="larger than 16 MiB"):
        parse_result(b" " * (16 * 2**20 + 1), "run.json")
    with pytest.raises(ResultFileError, match=r"\(json\)"):
        parse_result(b"\xff\xfe\x00garbage", "run.json")


def test_peak_mapping() -> None:
    entry = catalog_entry()
    assert peak_field("gemm", "fp16") == "fp16_tensor_tflops"
    assert peak_field("gemm", "bf16") == "bf16_tensor_tflops"
    assert peak_field("gemm", "tf32") == "tf32_tensor_tflops"
    assert peak_field("gemm", "fp32") == "fp32_tflops"
    assert peak_field("gemm", "fp64") == "fp64_tflops"
    assert peak_field("copy", "bytes") == "bandwidth_gbs"
    assert peak_for(entry, "gemm", "fp64") == 20.0
    assert peak_for(None, "gemm", "fp64") is None, "a CPU has no catalog entry"
    assert peak_for(catalog_entry(fp64_tflops=None), "gemm", "fp64") is None
    assert peak_for(entry, "d2h", "bytes") == pytest.approx(63.008)
    assert peak_for(catalog_entry(interface="SXM5"), "h2d", "bytes") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PCIe 4.0 x16", 31.504),
        ("PCI Express 3.0 x8", 7.88),
        ("pcie 5.0", 63.008),
        ("SXM4", None),
        (None, None),
        ("PCIe 9.0 x16", None),
    ],
)
def test_pcie_peak(text: str | None, expected: float | None) -> None:
    assert pcie_peak_gbs(text) == (pytest.approx(expected) if expected else None)


def test_measured_series(result: BenchResult) -> None:
    series = measured_series(result)
    assert series is not None
    assert series.catalog_id == "fake-gpu"
    assert set(series.values) == {"fp32_tflops", "fp16_tensor_tflops", "bandwidth_gbs"}
    copy = result.find("copy")
    assert copy is not None and series.values["bandwidth_gbs"] == copy.value
    assert series.label == "Fake GPU (measured, fake)"
    assert series.measured_at == result.started_at


def test_measured_series_of_a_failed_run_is_none() -> None:
    failed = BenchResult.model_validate(
        {"backend": "torch", "device": None, "started_at": "2026-01-01T00:00:00Z", "error": "x"}
    )
    assert measured_series(failed) is None


def test_measurement_label() -> None:
    row = Measurement(
        test="h2d", dtype="bytes", size=1, value=1.0, unit="GB/s", host_memory="pinned"
    )
    assert row.label == "H2D pinned"


def test_peaks_of_the_bundled_catalog_are_dense_figures() -> None:
    from gpudesk.catalog.loader import load_catalog

    entries = [
        entry
        for entry in load_catalog().entries
        if entry.fp16_tensor_tflops is not None and entry.sparsity_speedup is not None
    ]
    assert entries, "the bundled catalog has tensor-core GPUs"
    for entry in entries:
        assert peak_for(entry, "gemm", "fp16") == entry.fp16_tensor_tflops
        assert peak_for(entry, "gemm", "fp16") != entry.fp16_tensor_sparse_tflops
        assert peak_for(entry, "gemm", "fp32") == entry.fp32_tflops  # non-tensor
        assert peak_for(entry, "copy", "bytes") == entry.bandwidth_gbs


@pytest.mark.parametrize(
    "document",
    [
        {"survey_schema_version": 1, "cluster": {"address": "x"}, "nodes": [], "summary": {}},
        {"cluster": {}, "nodes": []},
    ],
)
def test_a_fleet_survey_is_named_not_reported_as_missing_fields(
    document: dict[str, object],
) -> None:
    with pytest.raises(ResultFileError) as caught:
        parse_result(json.dumps(document), "survey.json")
    assert caught.value.field == "(file)"
    assert "is a fleet survey" in caught.value.message
    assert "Open fleet survey" in caught.value.message and "fleet show" in caught.value.message
    assert "Field required" not in str(caught.value)
