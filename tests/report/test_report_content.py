"""The report's content as plain data: best-for lines, table, notes, this machine."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest
from report_factory import CATALOG_DATE, catalog, entry

from gpudesk import __version__
from gpudesk.bench.devices import DeviceInfo
from gpudesk.bench.results import BenchResult, Measurement
from gpudesk.catalog.loader import load_directory
from gpudesk.catalog.metrics import cloud_hourly_usd
from gpudesk.hardware.models import (
    CpuInfo,
    DetectionResult,
    GpuSnapshot,
    NvmlStatus,
    hint_for,
)
from gpudesk.paths import bundled_catalog_dir
from gpudesk.report.content import (
    BestFor,
    LocalData,
    ReportContent,
    best_for_lines,
    build_local_section,
    build_report,
    collect_local_data,
)

CREATED = dt.datetime(2026, 4, 1, 9, 30, tzinfo=dt.UTC)


def _report(*ids: str, **kwargs: Any) -> ReportContent:
    cat = catalog()
    entries = [cat.by_id(entry_id) for entry_id in ids]
    return build_report([e for e in entries if e is not None], cat, created_at=CREATED, **kwargs)


def _line(lines: Sequence[BestFor], key: str) -> BestFor:
    return next(line for line in lines if line.metric_key == key)


def test_best_for_is_computed_from_the_figures() -> None:
    lines = best_for_lines([entry("alpha-100"), entry("beta-200"), entry("gamma-300")])
    memory = _line(lines, "memory_gb")
    assert memory.winner_names == ("Gamma 300",)
    assert memory.value_text == "94 GiB"
    assert memory.runner_up_name == "Beta 200"
    assert memory.runner_up_value == "80 GiB"
    fp64 = _line(lines, "fp64_tflops")
    assert fp64.winner_ids == ("gamma-300",)
    assert fp64.value_text == "30.00 TFLOPS"
    # 165.2 / 1.599 = 103.31 TFLOPS per 1k USD beats 835.5 / 28 = 29.84
    per_dollar = _line(lines, "fp16_tensor_tflops_per_kusd")
    assert per_dollar.winner_ids == ("alpha-100",)
    assert per_dollar.value_text == "103.31 TFLOPS per 1k USD"
    # MSRP against an estimate: the line says the prices are of different kinds
    assert "different kinds" in per_dollar.caveat
    lowest = _line(lines, "price_usd")
    assert lowest.winner_names == ("Alpha 100",)
    per_watt = _line(lines, "fp16_tensor_tflops_per_w")
    assert per_watt.winner_ids == ("gamma-300",)


def test_best_for_needs_two_values_and_names_every_tied_gpu() -> None:
    # Only Alpha has FP64 and a price here: no FP64, price or per-dollar line.
    a = entry("alpha-100")
    b = entry("beta-200", fp64_tflops=None, memory_gb=24)
    lines = best_for_lines([a, b])
    keys = {line.metric_key for line in lines}
    assert "fp64_tflops" not in keys
    assert "price_usd" not in keys
    assert "fp16_tensor_tflops_per_kusd" not in keys
    memory = _line(lines, "memory_gb")
    assert memory.winner_names == ("Alpha 100", "Beta 200")
    assert memory.runner_up_name == ""
    assert "Alpha 100 and Beta 200 (24 GiB)" in memory.text


def test_same_kind_prices_have_no_caveat() -> None:
    lines = best_for_lines([entry("alpha-100"), entry("delta-400")])
    assert _line(lines, "price_usd").caveat == ""
    assert _line(lines, "price_usd").winner_names == ("Delta 400",)


def test_summary_lists_each_gpu_with_what_it_is_best_for() -> None:
    report = _report("alpha-100", "beta-200", "gamma-300")
    gpus = {gpu.name: gpu for gpu in report.gpus}
    assert [gpu.index for gpu in report.gpus] == [0, 1, 2]
    assert "most memory" in gpus["Gamma 300"].best_for
    assert "lowest price" in gpus["Alpha 100"].best_for
    assert gpus["Beta 200"].best_for == ()
    assert "80 GiB" in gpus["Beta 200"].description


def test_header_facts_name_version_and_catalog_date() -> None:
    report = _report("alpha-100", "beta-200")
    assert report.header_facts == (
        "Created 2026-04-01 09:30",
        f"GPUDesk {__version__}",
        f"Catalog of {CATALOG_DATE.isoformat()}",
    )
    assert report.subtitle == "Alpha 100 and Beta 200"


def test_spec_table_has_units_best_marks_and_na() -> None:
    report = _report("alpha-100", "beta-200", "gamma-300")
    assert report.spec_columns == ("Alpha 100", "Beta 200", "Gamma 300")
    rows = {row.label: row for group in report.spec_groups for row in group.rows}
    memory = rows["Memory (GiB)"]
    assert [cell.text for cell in memory.cells] == ["24", "80", "94"]
    assert [cell.best for cell in memory.cells] == [False, False, True]
    assert memory.numeric
    price = rows["Price (USD)"]
    assert [cell.text for cell in price.cells] == ["1,599", "n/a", "28,000"]
    assert [cell.best for cell in price.cells] == [True, False, False]
    assert [cell.text for cell in rows["Price kind"].cells] == ["launch MSRP", "n/a", "estimate"]
    assert not rows["Price kind"].numeric
    assert not any(cell.best for cell in rows["TDP (W)"].cells)  # no "best" TDP
    groups = [group.title for group in report.spec_groups]
    assert groups[:3] == ["Identity", "Memory", "Compute"]
    # No GPU here has a cloud price: the row is left out and listed in the notes.
    assert "Cloud price (USD/h)" in report.omitted_rows
    assert "Cloud price (USD/h)" not in rows
    figures = report.notes[0]
    assert any("Cloud price (USD/h)" in item for item in figures.items)


def test_notes_explain_figures_and_list_prices_and_every_source() -> None:
    report = _report("alpha-100", "beta-200", "gamma-300")
    sections = {section.title: section.items for section in report.notes}
    meaning = " ".join(sections["What the figures mean"])
    assert "dense" in meaning and "sparsity" in meaning and "Shader" in meaning
    sparse = " ".join(sections["Dense and with-sparsity tensor figures"])
    assert "Gamma 300: FP16 tensor 835.5 TFLOPS dense; 1,671.0 TFLOPS with 2:4 sparsity" in sparse
    prices = sections["Prices"]
    assert (
        "Alpha 100: 1,599 USD, launch list price (MSRP), seen 2022-10-12 "
        "(price from 2022-10, may be out of date)." in prices
    )
    assert "Beta 200: no price in the catalog." in prices
    assert (
        "Gamma 300: 28,000 USD, estimate, seen 2025-01-01 "
        "(price from 2025-01, may be out of date)." in prices
    )
    assert sections["Sources: Alpha 100"] == (
        "https://example.com/alpha-whitepaper",
        "Alpha launch announcement",
    )
    assert "Catalog note: Beta has no public price." in sections["Sources: Beta 200"]
    assert sections["Sources: Gamma 300"] == ("https://example.com/gamma-datasheet",)


def test_cloud_price_note_carries_source_and_date() -> None:
    cat = catalog()
    beta = entry(
        "beta-200",
        cloud_hourly_usd=1.89,
        cloud_hourly_source="Example Cloud",
        cloud_hourly_date=dt.date(2026, 2, 1),
    )
    report = build_report([cat.by_id("alpha-100"), beta], cat, created_at=CREATED)
    prices = next(section for section in report.notes if section.title == "Prices")
    assert (
        "Beta 200: no price in the catalog; cloud rental 1.89 USD/h, the lowest on-demand rate "
        "(Example Cloud, 2026-02-01)." in prices.items
    )


def test_price_notes_name_the_default_rate_and_flag_stale_ones() -> None:
    cat = catalog()
    rates = [
        {
            "provider": "BigCloud",
            "usd_per_gpu_hour": 4.0,
            "kind": "on_demand",
            "date": dt.date(2024, 3, 5),
            "source": "https://bigcloud.example/gpu",
        },
        {
            "provider": "Market",
            "usd_per_gpu_hour": 0.9,
            "kind": "marketplace",
            "date": dt.date(2025, 12, 1),
            "source": "https://market.example/gpu",
        },
    ]
    beta = entry(
        "beta-200",
        price_usd=20000,
        price_kind="estimate",
        price_date=dt.date(2024, 3, 1),
        price_note="range $15k-$25k reported; midpoint",
        cloud_rates=rates,
    )
    only_market = entry("gamma-300", cloud_rates=rates[1:])
    report = build_report([beta, only_market], cat, created_at=CREATED)
    prices = next(section for section in report.notes if section.title == "Prices").items
    assert prices[0] == (
        "Beta 200: 20,000 USD, estimate, seen 2024-03-01 (price from 2024-03, may be out of "
        "date). range $15k-$25k reported; midpoint; cloud rental 4.00 USD/h, the lowest "
        "on-demand rate (BigCloud, 2024-03-05), rate from 2024-03, may be out of date (over 90 "
        "days old); 1 more rate held (gpudesk prices beta-200)."
    )
    assert "no on-demand cloud rate, marketplace from 0.90 USD/h (Market)" in prices[1]


def test_the_price_note_gives_the_tables_cloud_rate() -> None:
    """The Notes named a hand-entered rate (A100 80GB PCIe 3.67 USD/h, 'the lowest')
    while the table's Cloud price row showed the rate book's lowest (1.35)."""
    cat = load_directory(bundled_catalog_dir())
    gpus = [cat.by_id(gpu) for gpu in ("rtx-4090", "a100-80gb-pcie", "h100-sxm5")]
    at_catalog_date = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)
    report = build_report(gpus, cat, created_at=at_catalog_date)
    prices = next(section for section in report.notes if section.title == "Prices").items
    for gpu, note in zip(gpus, prices, strict=True):
        hourly = cloud_hourly_usd(gpu)
        assert hourly is not None
        assert f"cloud rental {hourly:,.2f} USD/h, the lowest" in note, note
    assert "median" in prices[2]  # several providers rent the H100
    # RunPod's RTX 4090 rate of 2026-05-27 is over 90 days older than the catalog
    assert "(over 90 days old)" in prices[0]


@pytest.mark.parametrize("count", [1, 7])
def test_report_needs_two_to_six_gpus(count: int) -> None:
    entries = [entry("alpha-100", name=f"GPU {i}", sources=["x"]) for i in range(count)]
    entries = [e.model_copy(update={"id": f"gpu-{i}"}) for i, e in enumerate(entries)]
    with pytest.raises(ValueError, match="2 to 6 GPUs"):
        build_report(entries, catalog())


def test_local_section_is_absent_unless_asked() -> None:
    assert _report("alpha-100", "beta-200").local is None


def test_local_section_says_plainly_when_nothing_is_known() -> None:
    report = _report(
        "alpha-100",
        "beta-200",
        include_local=True,
        local=LocalData(problems=("Detection failed: boom.",)),
    )
    local = report.local
    assert not local.available
    assert local.message.startswith("Nothing is known about this machine yet")
    assert "gpudesk detect" in local.message
    assert "Detection failed: boom." in local.message


def _detection() -> DetectionResult:
    return DetectionResult(
        timestamp=dt.datetime(2026, 4, 1, 8, 0, tzinfo=dt.UTC),
        status=NvmlStatus.OK,
        hint=hint_for(NvmlStatus.OK),
        driver_version="550.54",
        cuda_driver_version="12.4",
        gpus=(GpuSnapshot(index=0, name="NVIDIA Beta 200", uuid="GPU-1", memory_total_mib=81920),),
        cpu=CpuInfo(model="Test CPU 9000", cores=8, threads=16),
        ram_total_gib=62.7,
    )


def _run(kind: str, catalog_id: str | None, results: tuple[Measurement, ...]) -> BenchResult:
    return BenchResult(
        backend="numpy" if kind == "cpu" else "torch",
        device=DeviceInfo(kind=kind, name="Test CPU 9000" if kind == "cpu" else "Beta 200"),
        catalog_id=catalog_id,
        results=results,
        started_at=dt.datetime(2026, 4, 1, 8, 5, tzinfo=dt.UTC),
    )


def test_local_section_shows_detection_benchmark_percent_of_peak_and_cpu_baseline() -> None:
    gpu_run = _run(
        "cuda",
        "beta-200",
        (
            Measurement(test="gemm", dtype="fp16", size=8192, value=265.2, unit="TFLOPS"),
            Measurement(test="copy", dtype="byte", size=2**30, value=1650.0, unit="GB/s"),
            Measurement(test="gemm", dtype="fp64", size=0, value=None, unit="TFLOPS", error="oom"),
        ),
    )
    cpu_run = _run(
        "cpu",
        None,
        (Measurement(test="gemm", dtype="fp32", size=2048, value=1.234, unit="TFLOPS"),),
    )
    local = build_local_section(LocalData(_detection(), gpu_run, cpu_run), catalog())
    assert local.available
    assert "NVIDIA driver 550.54, CUDA 12.4." in local.detection
    assert "CPU: Test CPU 9000, 8 cores / 16 threads, 63 GiB RAM." in local.detection
    label, memory, match = local.gpus[0]
    assert (label, memory) == ("GPU 0: NVIDIA Beta 200", "80.0 GiB")
    assert match.startswith("beta-200")
    gpu_table, cpu_table = local.benchmarks
    assert gpu_table.title == "Latest GPU benchmark"
    rows = {row.label: row for row in gpu_table.rows}
    # 265.2 of the catalog's dense 312 TFLOPS = 85 %; 1650 of 1935 GB/s = 85 %
    assert (rows["GEMM FP16"].measured, rows["GEMM FP16"].peak) == ("265 TFLOPS", "312 TFLOPS")
    assert rows["GEMM FP16"].percent == "85%"
    assert rows["memory copy"].percent == "85%"
    assert rows["GEMM FP64"].measured == "failed: oom"
    assert "peaks from catalog entry Beta 200" in gpu_table.details
    assert cpu_table.title == "CPU baseline"
    assert cpu_table.rows[0].measured == "1.23 TFLOPS"
    assert cpu_table.rows[0].percent == "n/a"
    assert "a CPU has no catalog peak" in cpu_table.details


def test_local_section_without_nvml_says_why() -> None:
    detection = DetectionResult(
        timestamp=dt.datetime(2026, 4, 1, tzinfo=dt.UTC),
        status=NvmlStatus.LIBRARY_NOT_FOUND,
        hint=hint_for(NvmlStatus.LIBRARY_NOT_FOUND),
    )
    local = build_local_section(LocalData(detection=detection), catalog())
    assert local.available
    assert any(
        line.startswith("NVIDIA driver not installed (NVML library not found). Install")
        and "Install the NVIDIA driver" in line
        for line in local.detection
    )
    assert "No GPU benchmark has been run on this machine." in local.notes
    assert "No CPU benchmark has been run on this machine." in local.notes


def _paren_depths(text: str) -> list[int]:
    depth, depths = 0, []
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        depths.append(depth)
    return depths


@pytest.mark.parametrize("status", [s for s in NvmlStatus if s is not NvmlStatus.OK])
def test_the_no_nvml_line_reads_as_one_plain_sentence_for_every_status(
    status: NvmlStatus,
) -> None:
    detection = DetectionResult(
        timestamp=dt.datetime(2026, 4, 1, tzinfo=dt.UTC), status=status, hint=hint_for(status)
    )
    local = build_local_section(LocalData(detection=detection), catalog())
    line = next(line for line in local.detection if hint_for(status) in line)
    depths = _paren_depths(line)
    assert max(depths) <= 1, line  # no "(... (...))"
    assert depths[-1] == 0, line
    assert "could be read (" not in line


def test_collect_local_data_reads_the_history_and_skips_imported_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gpudesk.bench import history
    from gpudesk.hardware import detect as detect_module

    monkeypatch.setattr(detect_module, "detect", lambda: _detection())
    old_cpu = _run(
        "cpu", None, (Measurement(test="gemm", dtype="fp32", size=64, value=1.0, unit="TFLOPS"),)
    )
    new_cpu = old_cpu.model_copy(update={"started_at": old_cpu.started_at + dt.timedelta(hours=1)})
    imported_gpu = _run("cuda", "beta-200", ()).model_copy(
        update={"imported_from": "/elsewhere/run.json"}
    )
    for run in (old_cpu, new_cpu, imported_gpu):
        history.save_run(run)
    local = collect_local_data()
    assert local.detection is not None
    assert local.cpu_benchmark == new_cpu
    assert local.gpu_benchmark is None  # a run imported from another machine is not this machine
    assert local.problems == ()


def test_collect_local_data_turns_failures_into_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpudesk.bench import history
    from gpudesk.hardware import detect as detect_module

    def broken() -> None:
        raise RuntimeError("driver exploded")

    monkeypatch.setattr(detect_module, "detect", broken)
    monkeypatch.setattr(history, "list_runs", broken)
    local = collect_local_data()
    assert local.detection is None
    assert any("driver exploded" in problem for problem in local.problems)
    assert len(local.problems) == 2


def test_report_content_imports_no_qt() -> None:
    script = (
        "import sys, gpudesk.report.content\n"
        "qt = ('PySide6', 'shiboken6', 'pyqtgraph')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in qt))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_an_imported_run_with_an_absurd_fraction_of_peak_reads_as_a_bound() -> None:
    # A report from another machine may carry any finite fraction; 1e308 printed "inf %".
    absurd = Measurement(
        test="gemm",
        dtype="fp16",
        size=8192,
        value=265.2,
        unit="TFLOPS",
        peak=1.0,
        fraction_of_peak=1e308,
    )
    run = _run("cuda", "beta-200", (absurd,))
    local = build_local_section(LocalData(_detection(), run, None), catalog())
    (row,) = local.benchmarks[0].rows
    assert row.percent == "over 1,000%"
