"""SkyPilot's vms.csv importer: real excerpts, hostile files, the accelerator table.

The excerpts are verbatim rows of skypilot-org/skypilot-catalog:
- ``LAMBDA_V9``: catalogs/v9/lambda/vms.csv at commit 2c3d7ea7d76b (as read 2026-12-02);
- ``NEBIUS_V9``: catalogs/v9/nebius/vms.csv at commit d9bf3aa4d21f (as read 2026-12-02);
- ``AZURE_2023``: catalogs/v5/azure/vms.csv at commit c2f2f01ce2f0 (2023-12-08,
  "Update Azure catalog (azure/vms.csv) to add H100"), whose H100 rows list a 0.0 price.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from skypilot_excerpts import LAMBDA_V9, NEBIUS_V9

from gpudesk.catalog import skypilot
from gpudesk.catalog.loader import load_directory
from gpudesk.catalog.skypilot import MAPPING_RULES, map_accelerator, parse_vms_csv
from gpudesk.paths import bundled_catalog_dir

AZURE_2023 = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
    "Generation\n"
    "Standard_NC40ads_H100_v5,H100,1,40.0,320,H100,0.0,0.0,eastus,V2\n"
)


def test_lambda_rows_become_per_gpu_rates_by_instance_type() -> None:
    result = parse_vms_csv(LAMBDA_V9.encode(), "lambda")
    assert result.problems == []
    rates = {(o.gpu_id, o.instance_type): o.usd_per_gpu_hour for o in result.offers}
    # Lambda's "H100" is two parts; the instance type says which.
    assert rates == {
        ("h100-pcie", "gpu_1x_h100_pcie"): 3.29,
        ("h100-sxm5", "gpu_8x_h100_sxm5"): 3.99,
    }
    # the 40 GB PCIe A100 has no catalog entry: listed, not guessed
    assert result.unmapped == {"A100": 1}
    assert "PCIe" in result.unmapped_reasons["A100"]


def test_spot_price_is_per_gpu_and_columns_are_found_by_name() -> None:
    result = parse_vms_csv(NEBIUS_V9.encode(), "nebius")
    by_id = {o.gpu_id: o for o in result.offers}
    assert by_id["h100-sxm5"].spot_per_gpu_hour == pytest.approx(1.25)
    assert by_id["h200-sxm"].usd_per_gpu_hour == pytest.approx(3.5)
    assert by_id["h200-sxm"].spot_per_gpu_hour == pytest.approx(1.45)
    # Azure's file has another column order and a 0.0 price: a problem, not a $0 rate
    azure = parse_vms_csv(AZURE_2023.encode(), "azure")
    assert azure.offers == []
    assert [p.line for p in azure.problems] == [2]
    assert "not a positive hourly price" in azure.problems[0].message


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ("gpu_1x_h100_sxm5,H100,1,26,225,nan,us-east-1,,", "Price 'nan'"),
        ("gpu_1x_h100_sxm5,H100,1,26,225,-4.29,us-east-1,,", "Price '-4.29'"),
        ("gpu_1x_h100_sxm5,H100,1,26,225,inf,us-east-1,,", "Price 'inf'"),
        ("gpu_1x_h100_sxm5,H100,0,26,225,4.29,us-east-1,,", "not a GPU count"),
        ("gpu_1x_h100_sxm5,H100,1.5,26,225,4.29,us-east-1,,", "not a GPU count"),
        ("gpu_1x_h100_sxm5,H100,1,26,225,4.29,us-east-1,,-1", "SpotPrice '-1'"),
        ("gpu_1x_h100_sxm5,H100,1,26,225,99999,us-east-1,,", "Price '99999'"),
        ("gpu_1x_h100_sxm5,H100,1,26,225,4.29,us-east-1," + "x" * 9000 + ",", "longer than"),
    ],
)
def test_a_bad_row_is_a_problem_with_its_line_and_the_rest_load(row: str, words: str) -> None:
    text = LAMBDA_V9 + row + "\n"
    result = parse_vms_csv(text.encode(), "lambda")
    # the good rows still load; a bad spot price drops the spot price only
    assert len(result.offers) == (3 if "SpotPrice" in words else 2)
    assert [p.line for p in result.problems] == [6]
    assert words in result.problems[0].message
    assert str(result.problems[0]).startswith("lambda/vms.csv line 6: ")


def test_non_utf8_rows_unknown_names_and_wrong_columns() -> None:
    data = LAMBDA_V9.encode() + b"gpu_1x_\xff\xfe,H100,1,26,225,4.29,us-east-1,,\n"
    data += b"gpu_1x_mystery,Z9000,1,26,225,4.29,us-east-1,,\n"
    result = parse_vms_csv(data, "lambda")
    assert [p.message for p in result.problems] == ["not UTF-8 text"]
    assert result.unmapped["Z9000"] == 1 and "Z9000" not in result.unmapped_reasons
    wrong = parse_vms_csv(b"Name,Cost\nH100,2\n", "lambda")
    assert not wrong.readable and wrong.offers == []
    assert "missing column(s) InstanceType" in wrong.problems[0].message
    assert not parse_vms_csv(b"", "lambda").readable


def test_a_file_over_the_size_cap_is_refused_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skypilot, "MAX_FILE_BYTES", 100)
    result = parse_vms_csv(LAMBDA_V9.encode(), "lambda")
    assert not result.readable and result.offers == []
    assert "larger than" in result.problems[0].message


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=st.lists(
        st.lists(
            st.one_of(
                st.sampled_from(["H100", "A10", "8", "nan", "-1", "1e308", "", "us-east-1", '"']),
                st.text(max_size=12),
            ),
            min_size=0,
            max_size=11,
        ),
        max_size=12,
    ),
    tail=st.binary(max_size=40),
)
def test_any_rows_give_offers_or_problems_never_an_exception(
    body: list[list[str]], tail: bytes
) -> None:
    text = LAMBDA_V9 + "\n".join(",".join(cells) for cells in body)
    result = parse_vms_csv(text.encode("utf-8", "surrogatepass") + tail, "lambda")
    for offer in result.offers:
        assert 0 < offer.usd_per_gpu_hour <= skypilot.MAX_USD_PER_GPU_HOUR
        assert offer.gpu_count >= 1


def test_every_id_in_the_accelerator_table_is_a_bundled_catalog_gpu() -> None:
    ids = {entry.id for entry in load_directory(bundled_catalog_dir()).entries}
    mapped = {rule.catalog_id for rule in MAPPING_RULES if rule.catalog_id is not None}
    assert mapped <= ids, sorted(mapped - ids)
    # a rule that maps nothing says why
    assert all(rule.reason for rule in MAPPING_RULES if rule.catalog_id is None)


@pytest.mark.parametrize(
    ("cloud", "name", "instance", "gib", "expected"),
    [
        ("lambda", "H100", "gpu_1x_h100_sxm5", None, "h100-sxm5"),
        ("lambda", "H100", "gpu_1x_h100_pcie", None, "h100-pcie"),
        ("vast", "H100", "1x-H100_NVL-32-65536", 93.6, "h100-nvl"),
        ("vast", "A100", "1x-A100_SXM4-32-65536", 80.0, "a100-80gb-sxm4"),
        ("vast", "A100", "2x-A100_SXM4-32-65536", 40.0, "a100-40gb-sxm4"),
        ("aws", "H100", "p5.48xlarge", 80.0, "h100-sxm5"),
        # GCP: the host the GPU row was joined with says the form
        ("gcp", "H100", "a3-highgpu-8g", None, "h100-sxm5"),
        ("gcp", "A100-80GB", "a2-ultragpu-8g", None, "a100-80gb-sxm4"),
        ("gcp", "V100", "n1-highmem-8", None, None),
        ("vast", "V100", "1x-Tesla_V100-32-65536", 16.0, None),
        ("aws", "V100-32GB", "p3dn.24xlarge", 32.0, "v100-sxm2-32gb"),
        # IBM's gx2 profiles are V100 PCIe 16 GB; the name alone stays unmapped elsewhere
        ("ibm", "V100", "gx2-8x64x1v100", None, "v100-pcie-16gb"),
        ("ibm", "V100", "bx2-8x32", None, None),
        ("runpod", "RTXPRO4500-SE", "1x_RTXPRO4500-SE_SECURE", 32.0, None),
        ("runpod", "RTXPRO5000", "1x_RTXPRO5000_SECURE", None, "rtx-pro-5000-blackwell"),
        ("vast", "RTXPRO5000", "1x-RTX_PRO_5000-32-65536", None, None),
        ("runpod", "RTXPRO6000-WK", "1x_RTXPRO6000-WK_SECURE", None, "rtx-pro-6000-blackwell"),
        ("runpod", "RTXPRO6000", "1x_RTXPRO6000_SECURE", None, "rtx-pro-6000-blackwell-server"),
        (
            "runpod",
            "RTXPRO6000-MaxQ",
            "1x_RTXPRO6000-MaxQ_SECURE",
            None,
            "rtx-pro-6000-blackwell-max-q",
        ),
        ("verda", "RTX-PRO-6000", "1RTXPRO6000.30V", None, None),
        ("runpod", "RTX5000-Ada", "1x_RTX5000-Ada_SECURE", None, "rtx-5000-ada"),
        ("runpod", "RTXPRO4500", "1x_RTXPRO4500_SECURE", None, "rtx-pro-4500-blackwell"),
        # Paperspace (via Shadeform) does not say SXM2 or PCIe for its 32 GB V100
        ("shadeform", "V100-32GB", "paperspace_V100-32GB", None, None),
        ("any", "L40S", "whatever", None, "l40s"),
        ("any", "l40s", "whatever", None, None),  # names are exact
    ],
)
def test_the_table_maps_by_name_cloud_instance_and_memory(
    cloud: str, name: str, instance: str, gib: float | None, expected: str | None
) -> None:
    assert map_accelerator(cloud, name, instance, gib)[0] == expected


def test_the_bundled_excerpts_import_cleanly() -> None:
    from gpudesk.catalog.price_snapshots import bundled_snapshot_dir, read_folder

    report = read_folder(bundled_snapshot_dir(), today=dt.date(2026, 12, 2))
    assert report.problems == [] and report.failed_clouds == []
    assert {s.taken for s in report.snapshots} >= {dt.date(2023, 8, 1), dt.date(2026, 12, 2)}
    for snapshot in report.snapshots:
        for source in snapshot.sources.values():
            assert len(source.commit) == 40 and source.path.endswith("/vms.csv")
    assert Path(bundled_snapshot_dir()).is_dir()


def test_no_bundled_entry_says_it_has_no_rate_while_a_rate_is_shown() -> None:
    from gpudesk.catalog.rate_book import RateBook

    book = RateBook.load(include_user=False)
    both = [
        entry.id
        for entry in load_directory(bundled_catalog_dir()).entries
        if entry.rates_unavailable is not None and book.summary(entry.id, entry).rates
    ]
    assert both == []


def test_cloud_price_reads_the_rate_books_lowest_on_demand_rate() -> None:
    # Compare's "Cloud price" row, records' cloud_hourly_usd and the catalog's
    # "From" column must agree: all read the rate book, not only hand entries.
    from gpudesk.catalog.metrics import METRICS, cloud_hourly_usd
    from gpudesk.catalog.prices import default_cloud_rate
    from gpudesk.catalog.rate_book import lowest_on_demand_rate, rate_summary

    entries = {entry.id: entry for entry in load_directory(bundled_catalog_dir()).entries}
    h100 = entries["h100-sxm5"]
    lowest = rate_summary(h100).lowest
    assert lowest is not None and lowest.origin == "skypilot"
    assert cloud_hourly_usd(h100) == pytest.approx(lowest.usd_per_gpu_hour)
    rate = lowest_on_demand_rate(h100)
    assert rate is not None and rate.date == lowest.date
    assert METRICS["cloud_hourly_usd"].value(h100) == pytest.approx(lowest.usd_per_gpu_hour)
    # a GPU with no hand-entered rate still gets one from SkyPilot's snapshot
    a4500 = entries["rtx-a4500"]
    assert default_cloud_rate(a4500) is None
    assert cloud_hourly_usd(a4500) == pytest.approx(0.25)
