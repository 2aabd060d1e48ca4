"""Google Cloud's vms.csv: GPUs priced apart from their machine, joined by zone.

``GCP_V9`` holds verbatim rows of skypilot-org/skypilot-catalog catalogs/v9/gcp/vms.csv
at commit 2c3d7ea7d76b (as read 2026-12-02). The expected rates are computed here
from those rows' own figures, not typed in.
"""

from __future__ import annotations

import csv
import io
import math

import pytest
import reach
from hypothesis import HealthCheck, given, settings, strategies as st
from skypilot_excerpts import GCP_V9

from gpudesk.catalog import skypilot
from gpudesk.catalog.skypilot import Offer, parse_vms_csv, rate_basis

HEADER = GCP_V9.splitlines()[0]


def _rows() -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(GCP_V9)))


def _row(instance: str, accelerator: str, count: str, zone: str) -> dict[str, str]:
    (row,) = [
        r
        for r in _rows()
        if r["InstanceType"] == instance
        and r["AcceleratorName"] == accelerator
        and r["AcceleratorCount"] == count
        and r["AvailabilityZone"] == zone
    ]
    return row


def _offers() -> dict[tuple[str, str, str], Offer]:
    result = parse_vms_csv(GCP_V9.encode(), "gcp")
    return {(o.gpu_id, o.instance_type, o.region): o for o in result.offers}


@pytest.mark.parametrize(
    ("gpu_id", "host", "accelerator", "count", "zone"),
    [
        ("a100-40gb-sxm4", "a2-highgpu-1g", "A100", 1, "us-central1-a"),
        ("a100-40gb-sxm4", "a2-highgpu-8g", "A100", 8, "us-central1-a"),
        ("h100-sxm5", "a3-highgpu-8g", "H100", 8, "us-central1-a"),
        ("h100-sxm5", "a3-highgpu-8g", "H100", 8, "us-east4-a"),
        # 1x L4 comes on five G2 machines; the cheapest in the zone is taken
        ("l4", "g2-standard-4", "L4", 1, "us-central1-a"),
    ],
)
def test_the_rate_is_host_plus_gpus_in_one_zone_per_gpu(
    gpu_id: str, host: str, accelerator: str, count: int, zone: str
) -> None:
    host_row = _row(host, "", "", zone)
    gpu_row = _row("", accelerator, str(count), zone)
    # the file's own layout: the machine row names no GPU, the GPU row no machine
    assert host_row["AcceleratorName"] == "" and gpu_row["InstanceType"] == ""
    offer = _offers()[(gpu_id, host, gpu_row["Region"])]
    price = float(host_row["Price"]) + float(gpu_row["Price"])
    spot = float(host_row["SpotPrice"]) + float(gpu_row["SpotPrice"])
    assert offer.gpu_count == count and offer.accelerator == accelerator
    assert offer.usd_per_gpu_hour == pytest.approx(price / count)
    assert offer.spot_per_gpu_hour == pytest.approx(spot / count)
    # the GPU row alone is not the rate: the host's CPUs and memory are added
    assert offer.usd_per_gpu_hour > float(gpu_row["Price"]) / count
    basis = rate_basis(offer)
    assert host in basis and f"{count}x {accelerator}" in basis


def test_a_gpu_on_several_machines_takes_the_cheapest_one_in_the_zone() -> None:
    hosts = [r for r in _rows() if r["InstanceType"].startswith("g2-standard-")]
    assert len(hosts) >= 2  # g2-standard-4 and g2-standard-12 both carry 1x L4
    cheapest = min(hosts, key=lambda r: float(r["Price"]))
    offers = [o for o in _offers().values() if o.gpu_id == "l4"]
    assert [o.instance_type for o in offers] == [cheapest["InstanceType"]]


def test_unjoinable_rows_are_problems_or_listed_never_rates() -> None:
    result = parse_vms_csv(GCP_V9.encode(), "gcp")
    messages = {p.line: p.message for p in result.problems}
    b200_line = 1 + next(i for i, r in enumerate(_rows(), 1) if r["AcceleratorName"] == "B200")
    # A4's machine row lists Price 0.0: no B200 rate is made from the GPU row alone
    assert "a4-highgpu-8g has no positive price" in messages[b200_line]
    assert not any(o.gpu_id == "b200" for o in result.offers)
    # a TPU slice of a generation the catalog lacks: listed with the generation, not priced
    assert result.unmapped["tpu-v6e-*"] == 1
    assert result.unmapped_reasons["tpu-v6e-*"] == "no catalog entry for TPU v6e (Trillium)"
    assert len(result.problems) == 1


def test_the_n1_host_is_the_cheapest_big_enough_one_in_the_zone_and_said() -> None:
    # Synthetic figures (the layout is GCP's): 1x T4 needs 4+ vCPUs and 16+ GiB.
    text = (
        HEADER + "\n"
        "n1-standard-2,2.0,7.5,,,,r1,r1-a,0.09,0.02\n"
        "n1-standard-4,4.0,15.0,,,,r1,r1-a,0.19,0.04\n"
        "n1-highmem-4,4.0,26.0,,,,r1,r1-a,0.24,0.05\n"
        "n1-standard-8,8.0,30.0,,,,r1,r1-a,0.38,0.08\n"
        "n1-highmem-4,4.0,26.0,,,,r1,r1-b,0.20,0.04\n"
        ",,,T4,1,{},r1,r1-a,0.35,0.14\n"
    )
    result = parse_vms_csv(text.encode(), "gcp")
    (offer,) = result.offers
    # n1-standard-4 has 15 GiB < 16; n1-highmem-4 in r1-a is the cheapest that fits
    # (the cheaper one in r1-b is another zone)
    assert offer.instance_type == "n1-highmem-4"
    assert offer.price_usd == pytest.approx(0.24 + 0.35)
    basis = rate_basis(offer)
    assert "host assumed: n1-highmem-4" in basis and "4 vCPUs and 16 GiB" in basis


def test_the_cheapest_zone_of_a_region_is_kept_once() -> None:
    text = (
        HEADER + "\n"
        "a2-highgpu-1g,12.0,85.0,,,,r1,r1-a,0.8,0.3\n"
        "a2-highgpu-1g,12.0,85.0,,,,r1,r1-b,0.7,0.3\n"
        ",,,A100,1,{},r1,r1-a,3.0,1.0\n"
        ",,,A100,1,{},r1,r1-b,3.0,1.0\n"
    )
    (offer,) = parse_vms_csv(text.encode(), "gcp").offers
    assert offer.price_usd == pytest.approx(3.7)


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        # no host in the GPU row's zone
        (",,,A100,1,{},r1,r1-a,3.0,1.0\n", "no host (a2-highgpu-1g) listed in zone r1-a"),
        # host and GPU in one zone name but different regions
        (
            "a2-highgpu-1g,12.0,85.0,,,,r2,r1-a,0.7,0.3\n,,,A100,1,{},r1,r1-a,3.0,1.0\n",
            "is listed in region r2",
        ),
        (",,,A100,0,{},r1,r1-a,3.0,1.0\n", "not a GPU count"),
        (",,,A100,3,{},r1,r1-a,3.0,1.0\n", "no Google Cloud machine carries 3x A100"),
        (",,,T4,3,{},r1,r1-a,3.0,1.0\n", "no N1 host is known for 3x T4"),
        (
            "a2-highgpu-1g,12.0,85.0,,,,r1,r1-a,0.7,0.3\n,,,A100,1,{},r1,r1-a,1e308,1.0\n",
            "not an hourly price",
        ),
        (
            "a2-highgpu-1g,12.0,85.0,,,,r1,r1-a,1e308,0.3\n,,,A100,1,{},r1,r1-a,1e308,1.0\n",
            "not an hourly price",
        ),
        (
            "a2-highgpu-1g,12.0,85.0,,,,r1,r1-a,0.7,0.3\n,,,A100,1,{},r1,r1-a,nan,1.0\n",
            "not a positive hourly price",
        ),
        ("a2-highgpu-1g,12.0,85.0,A100,1,,r1,r1-a,3.7,1.0\n", "a GPU row with an InstanceType"),
    ],
)
def test_hostile_rows_get_a_reason(rows: str, words: str) -> None:
    result = parse_vms_csv((HEADER + "\n" + rows).encode(), "gcp")
    assert result.offers == []
    assert any(words in p.message for p in result.problems), result.problems


def test_names_without_a_rule_are_listed_not_guessed() -> None:
    text = HEADER + "\n" + ",,,V100,1,{},r1,r1-a,2.48,0.99\n,,,P4,1,{},r1,r1-a,0.6,0.2\n"
    result = parse_vms_csv(text.encode(), "gcp")
    assert result.offers == [] and result.problems == []
    assert result.unmapped == {"V100": 1, "P4": 1}
    assert "SXM" in result.unmapped_reasons["V100"]


_CELL = st.one_of(
    st.sampled_from(
        [
            "",
            "A100",
            "H100",
            "T4",
            "L4",
            "B200",
            "a2-highgpu-1g",
            "a3-highgpu-8g",
            "n1-highmem-8",
            "g2-standard-4",
            "1",
            "8",
            "0",
            "-1",
            "nan",
            "inf",
            "1e308",
            "0.0",
            "r1",
            "r1-a",
            "r2",
            '"',
        ]
    ),
    st.text(max_size=10),
)


@st.composite
def _gcp_bodies(draw: st.DrawFn) -> list[list[str]]:
    """Rows of cells: the real file's rows (GCP_V9) with some left out, a few cells
    changed and random rows put in, or random rows alone. Random rows alone never join a
    machine and a GPU in one zone, so no offer was ever checked."""
    random_rows = st.lists(st.lists(_CELL, min_size=0, max_size=11), max_size=14)
    if draw(st.integers(0, 3)) == 0:
        return draw(random_rows)
    rows = [
        line.split(",")
        for line in GCP_V9.splitlines()[1:]
        if draw(st.integers(0, 4))  # each real row kept 4 times in 5
    ]
    for _ in range(draw(st.integers(0, 3))):
        if rows:
            cells = draw(st.sampled_from(rows))
            cells[draw(st.integers(0, len(cells) - 1))] = draw(_CELL)
    for extra in draw(st.lists(st.lists(_CELL, max_size=11), max_size=3)):
        rows.insert(draw(st.integers(0, len(rows))), extra)
    return rows


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=_gcp_bodies(),
    tail=st.just(b"") | st.binary(max_size=30),
)
@pytest.mark.reaches(offers=29, problems=32)
def test_any_gcp_rows_give_offers_or_reasons_never_an_exception(
    body: list[list[str]], tail: bytes
) -> None:
    text = HEADER + "\n" + "\n".join(",".join(cells) for cells in body)
    result = parse_vms_csv(text.encode("utf-8", "surrogatepass") + tail, "gcp")
    if result.offers:
        reach.reached("offers")
    if result.problems:
        reach.reached("problems")
    for offer in result.offers:
        assert 0 < offer.usd_per_gpu_hour <= skypilot.MAX_USD_PER_GPU_HOUR
        assert math.isfinite(offer.price_usd)
        assert offer.gpu_count >= 1
        assert offer.instance_type  # always the host the rate includes
        assert rate_basis(offer).startswith("Google Cloud lists GPUs apart")
    for problem in result.problems:
        assert problem.message and str(problem).startswith("gcp/vms.csv")
