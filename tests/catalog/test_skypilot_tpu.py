"""Cloud TPU slices in Google Cloud's vms.csv: rent per chip, divided from the slice.

``GCP_V9_TPU`` holds verbatim rows of skypilot-org/skypilot-catalog catalogs/v9/gcp/
vms.csv at commit 2c3d7ea7d76b. The catalog holds only TPU7x (Ironwood), which that file
does not list yet, so the tests that divide real v5e, v5p and v6e rows give those
generations a catalog id for the test (``_with_entries``); what the suffix counts is the
module's own table, cited there to Google's Cloud TPU pages. Expected figures are
computed from the rows' own prices, not typed in.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
from collections.abc import Iterator

import pytest
import reach
from catalog_factory import make_entry
from hypothesis import given, settings, strategies as st
from skypilot_excerpts import GCP_V9_TPU

from gpudesk import cost
from gpudesk.catalog import skypilot
from gpudesk.catalog.price_snapshots import Snapshot, SnapshotSource
from gpudesk.catalog.rate_book import RateBook
from gpudesk.catalog.skypilot import (
    TPU_RATE_BASIS,
    TpuGeneration,
    parse_vms_csv,
    rate_basis,
    tpu_slice,
)
from gpudesk.workload.errors import PlanningInputError

HEADER = GCP_V9_TPU.splitlines()[0]


def _rows(name: str) -> list[dict[str, str]]:
    return [r for r in csv.DictReader(io.StringIO(GCP_V9_TPU)) if r["AcceleratorName"] == name]


@pytest.fixture
def _with_entries(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """v5e, v5p and v6e as if the catalog had entries for them (ids made up for the test)."""
    for version, catalog_id in (("v5litepod", "t-v5e"), ("v5p", "t-v5p"), ("v6e", "t-v6e")):
        held = skypilot.TPU_GENERATIONS[version]
        monkeypatch.setitem(
            skypilot.TPU_GENERATIONS,
            version,
            TpuGeneration(held.label, held.tensorcores_per_chip, catalog_id),
        )
    yield


@pytest.mark.parametrize(
    ("name", "chips"),
    [
        # the suffix counts chips (v5e: "v$VERSION_NUMBER-$CHIP_COUNT"; v6e likewise)
        ("tpu-v5litepod-8", 8),
        ("tpu-v6e-1", 1),
        ("tpu-v6e-256", 256),
        # the suffix counts TensorCores, two per chip
        ("tpu-v2-8", 4),
        ("tpu-v5p-8", 4),
        ("tpu-v5p-12288", 6144),  # Google's largest v5p shape: 6,144 chips
        ("tpu-tpu7x-8", 4),  # one 4-chip TPU7x VM
        # a TensorCore count that is no whole chip
        ("tpu-v5p-3", None),
    ],
)
def test_the_suffix_counts_chips_or_tensorcores_by_generation(name: str, chips: int | None) -> None:
    tpu = tpu_slice(name)
    assert tpu is not None and tpu.generation is not None
    assert tpu.chips == chips


@pytest.mark.usefixtures("_with_entries")
@pytest.mark.parametrize(
    ("name", "zone", "chips"),
    [
        ("tpu-v5litepod-8", "us-central1-a", 8),  # chip suffix
        ("tpu-v6e-8", "us-central1-a", 8),  # chip suffix
        ("tpu-v5p-8", "us-central1-a", 4),  # TensorCore suffix: 8 cores, 4 chips
        ("tpu-v5p-12288", "us-central1-a", 6144),
    ],
)
def test_a_slice_is_rented_per_chip_from_its_price(name: str, zone: str, chips: int) -> None:
    (row,) = [r for r in _rows(name) if r["AvailabilityZone"] == zone]
    result = parse_vms_csv(GCP_V9_TPU.encode(), "gcp")
    (offer,) = [o for o in result.offers if o.accelerator == name and o.region == row["Region"]]
    assert offer.gpu_count == chips and offer.unit == "chip"
    assert offer.price_usd == float(row["Price"])  # the slice's price, as listed
    assert offer.usd_per_gpu_hour == pytest.approx(float(row["Price"]) / chips)
    assert offer.spot_per_gpu_hour == pytest.approx(float(row["SpotPrice"]) / chips)
    basis = rate_basis(offer)
    assert f"{name} at ${float(row['Price']):g}/hour" in basis
    assert f"divided by its {chips} chips" in basis


@pytest.mark.usefixtures("_with_entries")
def test_slices_of_every_size_give_the_same_rent_per_chip() -> None:
    # Google prices v5p per chip: the 4-chip and the 6,144-chip slice agree per chip.
    result = parse_vms_csv(GCP_V9_TPU.encode(), "gcp")
    per_chip = {
        o.accelerator: o.usd_per_gpu_hour for o in result.offers if o.region == "us-central1"
    }
    assert per_chip["tpu-v5p-8"] == pytest.approx(per_chip["tpu-v5p-12288"])
    # ... and twice what dividing by the suffix (TensorCores) would have said
    assert per_chip["tpu-v5p-8"] == pytest.approx(2 * 16.8 / 8)


@pytest.mark.usefixtures("_with_entries")
def test_skypilots_700_placeholder_is_no_price() -> None:
    result = parse_vms_csv(GCP_V9_TPU.encode(), "gcp")
    v6e = {o.region: o for o in result.offers if o.accelerator == "tpu-v6e-8"}
    # asia-east1-c lists 700.0 for both: refused with the reason, no offer
    assert "asia-east1" not in v6e
    placeholder_line = 1 + next(
        i
        for i, r in enumerate(csv.DictReader(io.StringIO(GCP_V9_TPU)), 1)
        if r["AvailabilityZone"] == "asia-east1-c"
    )
    messages = {p.line: p.message for p in result.problems}
    assert "placeholder" in messages[placeholder_line]
    # southamerica-west1-a has a real price and a 700.0 spot price: spot dropped only
    assert v6e["southamerica-west1"].usd_per_gpu_hour == pytest.approx(21.6 / 8)
    assert v6e["southamerica-west1"].spot_usd is None


def test_a_generation_without_a_catalog_entry_stays_unmapped_and_says_which() -> None:
    result = parse_vms_csv(GCP_V9_TPU.encode(), "gcp")
    assert result.offers == []
    assert result.unmapped["tpu-v5p-*"] == 3  # one line per generation, all its rows
    assert result.unmapped_reasons["tpu-v5p-*"] == "no catalog entry for TPU v5p"
    assert result.unmapped_reasons["tpu-v5litepod-*"] == "no catalog entry for TPU v5e"
    assert result.unmapped_reasons["tpu-v2-*"] == "no catalog entry for TPU v2"
    assert result.problems == []  # the placeholder rows are not even read as prices


def test_an_unknown_generation_is_named_and_a_malformed_name_is_a_problem() -> None:
    # The file's own layout; the names are constructed.
    text = (
        HEADER + "\n"
        ",,,tpu-v9z-16,1,tpu-v9z-16,us-central1,us-central1-a,40.0,10.0\n"
        ",,,tpu-v6e,1,tpu-v6e,us-central1,us-central1-a,2.7,0.5\n"
    )
    result = parse_vms_csv(text.encode(), "gcp")
    assert result.unmapped_reasons["tpu-v9z-*"] == (
        "TPU v9z: a Cloud TPU generation GPUDesk does not know"
    )
    (problem,) = result.problems
    assert problem.line == 3 and "not a Cloud TPU accelerator type" in problem.message


def test_tpu7x_maps_to_the_ironwood_entry_per_chip() -> None:
    # SkyPilot lists no TPU7x row yet; this one is constructed in the file's layout, named
    # as SkyPilot names TPU rows (tpu-<accelerator type>), at a round price.
    text = HEADER + "\n,,,tpu-tpu7x-8,1,tpu-tpu7x-8,us-central1,us-central1-c,40.0,\n"
    result = parse_vms_csv(text.encode(), "gcp")
    (offer,) = result.offers
    assert offer.gpu_id == "tpu-v7-ironwood"
    assert offer.gpu_count == 4 and offer.usd_per_gpu_hour == pytest.approx(10.0)
    assert "8 TensorCores, 2 per chip" in rate_basis(offer)


@pytest.mark.usefixtures("_with_entries")
def test_the_rate_book_says_per_chip_and_what_it_was_divided_from() -> None:
    result = parse_vms_csv(GCP_V9_TPU.encode(), "gcp")
    source = SnapshotSource("gcp", "catalogs/v9/gcp/vms.csv", "2c3d7ea7d76b" + "0" * 28)
    snapshot = Snapshot(dt.date(2026, 12, 2), "retrieved", "test", {"gcp": source}, result.offers)
    summary = RateBook([snapshot]).summary("t-v6e")
    low = summary.lowest
    assert low is not None and low.unit == "chip" and summary.unit == "chip"
    assert low.words() == "$2.70/chip-hour from tpu-v6e-8 at $21.60/hour, 8 chips"
    assert "a slice of 8 chips" in low.provenance and "divided by its 8 chips" in low.provenance
    as_json = summary.as_json()
    assert as_json["unit"] == "chip" and as_json["rate_basis"] == TPU_RATE_BASIS


_NAME_PARTS = st.sampled_from(
    ["tpu-", "TPU-", "tpu", "-", "v5p", "v6e", "v5litepod", "tpu7x", "v2", "v9", "0", "8",
     "12288", "99999999", "-1", " ", "x", "é", "\x00", "1e3"]
)  # fmt: skip
_WELL_FORMED = st.builds(
    "{}{}-{}".format,
    st.sampled_from(["tpu-", "tpu-", "tpu-", "TPU-", "tpu"]),
    st.sampled_from(["v2", "v5p", "v5litepod", "v6e", "tpu7x", "v9z", "V6E"]),
    st.sampled_from(["8", "16", "4", "1", "3", "12288", "0", "999999", "08"]),
)
_NAMES = st.one_of(
    _WELL_FORMED,
    st.lists(_NAME_PARTS, max_size=6).map("".join),
    st.text(max_size=24),
)
_BAD_PRICES = st.sampled_from(["700.0", "0", "-3", "nan", "inf", "1e308", "", "x", "-0"])
_PRICES = st.sampled_from(["21.6", "0.001", "9.6"]) | _BAD_PRICES


@pytest.fixture(scope="module")
def _all_generations_mapped() -> Iterator[None]:
    saved = dict(skypilot.TPU_GENERATIONS)
    for version, held in saved.items():
        skypilot.TPU_GENERATIONS[version] = TpuGeneration(
            held.label, held.tensorcores_per_chip, f"t-{version}"
        )
    yield
    skypilot.TPU_GENERATIONS.clear()
    skypilot.TPU_GENERATIONS.update(saved)


@pytest.mark.usefixtures("_all_generations_mapped")
@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(_NAMES, st.sampled_from(["1", "1", "1", "1.0", "2", "0", ""]), _PRICES, _PRICES),
        min_size=1,
        max_size=6,
    )
)
@pytest.mark.reaches(offers=12, refused=90)
def test_any_tpu_name_never_crashes_nor_gives_a_free_or_negative_chip(
    rows: list[tuple[str, str, str, str]],
) -> None:
    text = (
        HEADER
        + "\n"
        + "".join(
            f",,,{name},{count},{name},us-central1,us-central1-a,{price},{spot}\n"
            for name, count, price, spot in rows
        )
    )
    result = parse_vms_csv(text.encode("utf-8", "surrogatepass"), "gcp")
    if result.offers:
        reach.reached("offers")
    if result.problems or result.unmapped:
        reach.reached("refused")
    for offer in result.offers:
        tpu = tpu_slice(offer.accelerator)
        assert tpu is not None and tpu.chips == offer.gpu_count >= 1
        assert 0 < offer.usd_per_gpu_hour <= skypilot.MAX_USD_PER_GPU_HOUR
        assert math.isfinite(offer.usd_per_gpu_hour)
        spot = offer.spot_per_gpu_hour
        assert spot is None or 0 < spot <= skypilot.MAX_USD_PER_GPU_HOUR
        assert offer.price_usd != skypilot.TPU_PLACEHOLDER_PRICES.get(tpu.version)
    for problem in result.problems:
        assert problem.message and str(problem).startswith("gcp/vms.csv")


@pytest.mark.usefixtures("_with_entries")
def test_cost_of_a_cloud_only_tpu_says_its_rent_per_chip_and_the_slice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = parse_vms_csv(GCP_V9_TPU.encode(), "gcp")
    source = SnapshotSource("gcp", "catalogs/v9/gcp/vms.csv", "2c3d7ea7d76b" + "0" * 28)
    snapshot = Snapshot(dt.date(2026, 12, 2), "retrieved", "test", {"gcp": source}, result.offers)
    book = RateBook([snapshot])
    monkeypatch.setattr(cost, "rate_summary", lambda entry: book.summary(entry.id, entry))
    entry = make_entry(
        "t-v6e",
        name="TPU v6e test entry",
        vendor="Google",
        kind="tpu",
        status="cloud-only",
        status_date=dt.date(2026, 12, 1),
        tdp_w=300,
        price_unavailable={"date": dt.date(2026, 12, 1), "reason": "rented only"},
    )
    with pytest.raises(PlanningInputError) as raised:
        cost.cost_inputs_for(entry)
    words = str(raised.value)
    assert "cloud-only" in words and "never sold" in words
    assert "2.70 USD per chip-hour, from tpu-v6e-8 at $21.60/hour, 8 chips" in words


@pytest.mark.usefixtures("_with_entries")
def test_prices_prints_a_tpu_rate_per_chip_hour(capsys: pytest.CaptureFixture[str]) -> None:
    """`gpudesk prices` for a TPU says chip-hours, in its heading, its column and the
    basis (it said "per GPU-hour" and "$/GPU-h")."""
    from gpudesk.cli.prices_cmd import _print_one

    result = parse_vms_csv(GCP_V9_TPU.encode(), "gcp")
    source = SnapshotSource("gcp", "catalogs/v9/gcp/vms.csv", "2c3d7ea7d76b" + "0" * 28)
    snapshot = Snapshot(dt.date(2026, 12, 2), "retrieved", "test", {"gcp": source}, result.offers)
    summary = RateBook([snapshot]).summary("t-v6e")
    _print_one(make_entry("t-v6e"), summary, dt.date(2026, 12, 3), spot=False)
    out = capsys.readouterr().out
    assert "cloud rates per chip-hour" in out and "$/chip-h" in out
    assert "GPU-h" not in out
    assert "A rate per chip-hour is the" in out
