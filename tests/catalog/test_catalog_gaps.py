"""An announced part's unpublished memory size, bandwidth or link rate is a gap (issue 43).

The schema lets an announced part leave ``memory_gb`` and ``bandwidth_gbs`` empty and
any ``[interconnect]`` leave ``gbs_per_direction`` out; every other status still needs
the two figures, refused by field and file. Each consumer shows the gap as a gap: null
in JSON, n/a in a table, no point on a chart, "not estimable" with a reason in fit and
speed; never 0 and never a crash.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import entry_data, to_toml
from hypothesis import given, settings, strategies as st
from reach import reached

from gpudesk.catalog.loader import load_catalog, load_directory, read_entry
from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.query import entries_without, sort_entries
from gpudesk.catalog.records import entry_record
from gpudesk.catalog.schema import CatalogEntry, Status
from gpudesk.cli import main
from gpudesk.compare.pareto import ScatterPoint, pareto_frontier
from gpudesk.compare.radar import entry_values
from gpudesk.compare.table import build_comparison
from gpudesk.memory.breakdown import DType, WorkloadSpec, estimate_memory
from gpudesk.memory.fit import fit_across
from gpudesk.speed.estimate import Engine, KvFormat, Mode, SpeedRequest, model_costs
from gpudesk.speed.hardware import link_for
from gpudesk.speed.planner import missing_figures, rank_catalog
from gpudesk.speed.shapes import shape_for
from gpudesk.workload.presets import generic_architecture
from gpudesk.workload.quant import QuantFormat

#: The four announced parts that landed with these gaps, and what each lacks.
GAP_PARTS: dict[str, tuple[str, ...]] = {
    "crescent-island": ("bandwidth_gbs",),
    "rubin-cpx": ("bandwidth_gbs",),
    "qualcomm-ai200": ("bandwidth_gbs",),
    "qualcomm-ai250": ("memory_gb", "bandwidth_gbs"),
}


@functools.cache
def _bundled() -> dict[str, CatalogEntry]:
    return {entry.id: entry for entry in load_catalog([], include_user=False).entries}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _write(folder: Path, data: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{data['id']}.toml"
    path.write_text(to_toml(data), encoding="utf-8")
    return path


# the schema -----------------------------------------------------------------------------


def test_an_announced_entry_without_bandwidth_or_memory_loads(tmp_path: Path) -> None:
    data = entry_data(
        "next-chip", status="announced", status_date=dt.date(2026, 3, 16), bandwidth_gbs=None
    )
    data.pop("memory_gb")
    entry, problems, _ = read_entry(_write(tmp_path, data))
    assert problems == []
    assert entry is not None and entry.memory_gb is None and entry.bandwidth_gbs is None


@pytest.mark.parametrize("status", ["shipping", "cloud-only", "end-of-life"])
@pytest.mark.parametrize("field", ["memory_gb", "bandwidth_gbs"])
def test_any_other_status_without_the_figure_is_refused_naming_field_and_entry(
    tmp_path: Path, status: str, field: str
) -> None:
    data = entry_data("shipping-chip", status=status, status_date=dt.date(2026, 1, 5))
    data.pop(field)
    path = _write(tmp_path / "catalog" / "nvidia", data)
    entry, problems, _ = read_entry(path)
    assert entry is None
    assert [(problem.field, problem.message) for problem in problems] == [
        (field, "required field is missing")
    ]
    # the whole catalog loads without it, and the problem names file (entry) and field
    catalog = load_directory(tmp_path / "catalog")
    assert catalog.entries == []
    assert [str(problem) for problem in catalog.problems] == [
        f"{path}: {field}: required field is missing"
    ]


def test_validate_names_the_entry_and_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = entry_data("shipping-chip")
    data.pop("bandwidth_gbs")
    _write(tmp_path, data)
    code, out, err = _run(capsys, "validate", str(tmp_path))
    assert code == 1
    text = " ".join((out + err).split())
    assert "shipping-chip.toml" in text and "bandwidth_gbs" in text
    assert "required field is missing" in text


def test_the_bundled_gap_parts_are_announced_and_lack_only_what_is_unpublished() -> None:
    entries = _bundled()
    for entry_id, missing in GAP_PARTS.items():
        entry = entries[entry_id]
        assert entry.status is Status.ANNOUNCED, entry_id
        for field in ("memory_gb", "bandwidth_gbs"):
            assert (getattr(entry, field) is None) == (field in missing), (entry_id, field)
    link = entries["qualcomm-ai200"].interconnect
    assert link is not None and link.gbs_per_direction is None
    assert link_for(entries["qualcomm-ai200"]).rate_published is False


# show, list ------------------------------------------------------------------------


def test_show_json_has_null_bandwidth(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "show", "rubin-cpx", "--json")
    assert code == 0
    record = json.loads(out)
    assert record["id"] == "rubin-cpx" and record["status"] == "announced"
    assert record["bandwidth_gbs"] is None and record["memory_gb"] == 128
    code, out, _ = _run(capsys, "show", "qualcomm-ai250", "--json")
    assert code == 0
    record = json.loads(out)
    assert record["memory_gb"] is None and record["bandwidth_gbs"] is None
    assert record["interconnect"]["gbs_per_direction"] is None


def test_list_hides_announced_parts_unless_asked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = _run(capsys, "list", "--json")
    assert code == 0
    assert not set(GAP_PARTS) & {record["id"] for record in json.loads(out)}
    code, out, _ = _run(capsys, "list")
    assert code == 0 and "announced parts (not on sale yet) hidden" in out
    code, out, _ = _run(capsys, "list", "--include-announced", "--json")
    records = {record["id"]: record for record in json.loads(out)}
    assert set(GAP_PARTS) <= set(records)
    assert records["qualcomm-ai250"]["memory_gb"] is None
    assert records["crescent-island"]["bandwidth_gbs"] is None


def test_sorting_on_a_gap_ranks_on_nothing_and_says_how_many(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = list(_bundled().values())
    ranked = sort_entries(entries, "bandwidth_gbs", descending=True)
    unranked = entries_without(entries, "bandwidth_gbs")
    assert {entry.id for entry in unranked} == set(GAP_PARTS)
    assert ranked[-len(unranked) :] == [e for e in ranked if e.bandwidth_gbs is None]
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = _run(capsys, "list", "--include-announced", "--sort", "bandwidth_gbs:desc")
    assert code == 0
    assert f"{len(GAP_PARTS)} without bandwidth_gbs in the catalog" in " ".join(out.split())


# compare, radar, scatter --------------------------------------------------------------


def test_compare_shows_gaps_not_zeros(capsys: pytest.CaptureFixture[str]) -> None:
    entries = _bundled()
    chosen = [entries["rubin-cpx"], entries["qualcomm-ai250"], entries["h100-sxm5"]]
    comparison = build_comparison(chosen)
    assert comparison.row("bandwidth_gbs").values[:2] == (None, None)
    assert comparison.row("memory_gb").values[1] is None
    document = json.loads(json.dumps(comparison.to_json(), allow_nan=False))
    assert [gpu["metrics"]["bandwidth_gbs"] for gpu in document["gpus"]] == [None, None, 3350]
    # the text table: printed, with n/a where the vendor published nothing
    code, out, _ = _run(capsys, "compare", "rubin-cpx", "qualcomm-ai250", "h100-sxm5", "--text")
    assert code == 0
    bandwidth = next(line for line in out.splitlines() if "Bandwidth" in line)
    assert bandwidth.split()[-3:-1] == ["n/a", "n/a"] or bandwidth.count("n/a") == 2
    # the radar: gaps (None), never 0; the scatter leaves the point out
    assert entry_values(entries["qualcomm-ai250"], ["memory_gb", "bandwidth_gbs"]) == [None, None]
    points = [
        ScatterPoint(entry.id, METRICS["bandwidth_gbs"].value(entry), entry.bf16_tensor_tflops)
        for entry in chosen
    ]
    assert pareto_frontier(points, x_lower_is_better=False) == ["h100-sxm5"]


# fit and speed --------------------------------------------------------------------------


def test_fit_lists_a_part_without_memory_as_not_checkable() -> None:
    entries = _bundled()
    estimate = estimate_memory(generic_architecture(8_000_000_000), WorkloadSpec(dtype=DType.BF16))
    report = fit_across([entries[entry_id] for entry_id in GAP_PARTS], estimate)
    excluded = {fit.gpu_id: fit.excluded_reason for fit in report.excluded}
    assert list(excluded) == ["qualcomm-ai250"]
    assert "no memory size" in (excluded["qualcomm-ai250"] or "")
    # the ones with a memory size fit; with no bandwidth, no decode bound (not 0)
    fitting = {fit.gpu_id: fit for fit in report.fits}
    assert set(fitting) == {"crescent-island", "rubin-cpx", "qualcomm-ai200"}
    assert all(fit.decode_tokens_per_s_upper_bound is None for fit in fitting.values())


def test_fit_gpu_json_gives_nulls_for_a_part_without_memory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(
        capsys, "fit", "--model", "llama-3.1-8b", "--gpu", "qualcomm-ai250", "--json"
    )
    assert code == 0
    gpu = json.loads(out)["gpu"]
    assert gpu["fits"] is False and "no memory size" in gpu["excluded_reason"]
    assert gpu["memory_gb"] is None and gpu["usable_gb"] is None and gpu["headroom_gb"] is None


@pytest.mark.parametrize("engine", [Engine.VLLM, Engine.LLAMA_CPP])
def test_speed_lists_each_gap_part_as_not_estimable_with_the_reason(engine: Engine) -> None:
    entries = _bundled()
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat("bf16"), KvFormat.BF16)
    ranked = rank_catalog(
        [entries[entry_id] for entry_id in GAP_PARTS] + [entries["h100-sxm5"]],
        costs,
        SpeedRequest(mode=Mode.DECODE, engine=engine),
    )
    assert [result.gpu_id for result in ranked.results] == ["h100-sxm5"]
    reasons = dict(ranked.not_supported)
    assert set(reasons) == set(GAP_PARTS)
    for entry_id, missing in GAP_PARTS.items():
        assert "no speed can be estimated" in reasons[entry_id]
        assert ("memory size" in reasons[entry_id]) == ("memory_gb" in missing)
        assert reasons[entry_id] == missing_figures(entries[entry_id])


def test_speed_cli_names_the_missing_figure(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "speed", "--model", "llama-3.1-8b", "--gpu", "rubin-cpx")
    assert code == 2
    assert "no memory bandwidth" in " ".join(err.split())


# a link with no published rate ----------------------------------------------------------


def test_several_devices_over_a_link_without_a_rate_are_not_estimated() -> None:
    h100 = _bundled()["h100-sxm5"]
    assert h100.interconnect is not None
    link = h100.interconnect.model_dump(exclude={"gbs_per_direction"})
    rateless = CatalogEntry.model_validate(
        {**h100.model_dump(exclude={"device_type"}), "id": "h100-rateless", "interconnect": link}
    )
    costs = model_costs(shape_for("llama-3.1-70b"), QuantFormat("bf16"), KvFormat.BF16)
    ranked = rank_catalog(
        [rateless, h100], costs, SpeedRequest(mode=Mode.DECODE, engine=Engine.VLLM)
    )
    # 70B in bf16 needs two H100s: with a rated link it is estimated on two, without
    # one it cannot be, and says why
    assert [(result.gpu_id, result.count) for result in ranked.results] == [("h100-sxm5", 2)]
    (reason,) = [why for entry_id, why in ranked.not_supported if entry_id == "h100-rateless"]
    assert "no published rate" in reason


# property: the optional figures with any status ----------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    # announced half the time: the status where a gap loads
    status=st.sampled_from(["announced"] * 3 + [status.value for status in Status]),
    memory_gb=st.one_of(st.none(), st.floats(0.1, 2048), st.floats(allow_nan=True)),
    bandwidth_gbs=st.one_of(st.none(), st.floats(0.5, 100_000), st.integers(-10, 10)),
    link_rate=st.one_of(st.none(), st.floats(0.5, 5000), st.just(0.0)),
)
@pytest.mark.reaches(read=30, refused=40, gap=14)
def test_memory_and_bandwidth_are_required_unless_announced(
    tmp_path_factory: pytest.TempPathFactory,
    status: str,
    memory_gb: float | None,
    bandwidth_gbs: float | None,
    link_rate: float | None,
) -> None:
    # entry_data leaves out a None: the figure is absent from the file
    data = entry_data("any-chip", status=status, memory_gb=memory_gb, bandwidth_gbs=bandwidth_gbs)
    if status != "shipping":
        data["status_date"] = dt.date(2026, 1, 5)
    if status in ("announced", "cloud-only"):
        data.pop("fp32_tflops")
    link: dict[str, Any] = {"kind": "pcie", "topology": "switch", "source": "vendor page"}
    if link_rate is not None:
        link["gbs_per_direction"] = link_rate
    data["interconnect"] = link
    path = _write(tmp_path_factory.mktemp("gaps"), data)
    entry, problems, _ = read_entry(path)
    missing = {name for name, value in (("memory_gb", memory_gb), ("bandwidth_gbs", bandwidth_gbs))
               if value is None}  # fmt: skip
    if problems:
        reached("refused")
        assert entry is None
        fields = {problem.field for problem in problems}
        # a missing figure is refused only where the part is not announced, at its name
        # (a bad link rate is refused first, before the status is checked)
        other = fields - missing
        assert other or (missing and status != "announced")
        if not other:
            assert fields == missing
        return
    reached("read")
    assert entry is not None and entry.interconnect is not None
    assert status == "announced" or not missing  # only an announced part has a gap
    for name in ("memory_gb", "bandwidth_gbs"):
        value = getattr(entry, name)
        assert (value is None) == (name in missing)
        assert value is None or (math.isfinite(value) and value > 0)
    record = json.loads(json.dumps(entry_record(entry), allow_nan=False))
    if missing:
        reached("gap")
        # a gap is null in JSON, no point on the radar, no speed estimate; never 0
        assert all(record[name] is None for name in missing)
        assert None in entry_values(entry, sorted(missing))
        assert missing_figures(entry) is not None
    assert (record["interconnect"]["gbs_per_direction"] is None) == (link_rate is None)
    assert link_for(entry).rate_published is (link_rate is not None)
