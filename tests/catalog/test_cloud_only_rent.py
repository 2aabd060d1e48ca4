"""Cloud-only parts (issue 43): rent per chip from imported cloud rates, no purchase."""

from __future__ import annotations

import datetime as dt

import pytest
from catalog_factory import make_entry

from gpudesk.catalog.skypilot import map_accelerator, parse_vms_csv
from gpudesk.cost import cost_inputs_for
from gpudesk.workload.errors import PlanningInputError

# The AWS file's own header (resources/prices/skypilot/2026-12-02/aws/vms.csv); the
# row is constructed: a 16-chip trn2.48xlarge at a round hourly price.
_AWS = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
    "Region,AvailabilityZone,Arch,LocalDiskType,NVMeSupported,LocalDiskSize,LocalDiskCount\n"
    "trn2.48xlarge,Trainium2,16,192,2048,,48.0,,us-east-2,us-east-2a,x86_64,,,,\n"
)


@pytest.mark.parametrize(
    ("name", "instance", "expected"),
    [
        ("Trainium2", "trn2.48xlarge", "trainium2"),
        ("Trainium3", "trn3.48xlarge", "trainium3"),
        ("Trainium2", "p5.48xlarge", None),  # the instance family must say Trn
    ],
)
def test_trainium_rows_map_on_aws_only(name: str, instance: str, expected: str | None) -> None:
    assert map_accelerator("aws", name, instance, None)[0] == expected
    assert map_accelerator("gcp", name, instance, None)[0] is None


def test_a_trn2_instance_is_priced_per_chip() -> None:
    result = parse_vms_csv(_AWS.encode(), "aws")
    (offer,) = result.offers
    assert offer.gpu_id == "trainium2"
    assert offer.gpu_count == 16
    assert offer.usd_per_gpu_hour == pytest.approx(3.0)  # 48 USD / 16 chips


def _cloud_only(**overrides: object) -> object:
    return make_entry(
        "trn-x",
        name="Trn X",
        vendor="AWS",
        kind="asic",
        status="cloud-only",
        status_date=dt.date(2026, 12, 1),
        tdp_w=500,
        price_unavailable={"date": dt.date(2026, 12, 1), "reason": "rented only"},
        **overrides,
    )


def test_cost_says_a_cloud_only_part_is_not_sold() -> None:
    entry = _cloud_only(
        cloud_rates=[
            {
                "provider": "AWS",
                "usd_per_gpu_hour": 3.0,
                "kind": "on_demand",
                "date": dt.date(2026, 12, 1),
                "source": "https://aws.amazon.com/ec2/pricing/on-demand/",
            }
        ]
    )
    with pytest.raises(PlanningInputError) as raised:
        cost_inputs_for(entry)  # type: ignore[arg-type]
    words = str(raised.value)
    assert "cloud-only" in words and "never sold" in words
    assert "3.00 USD per chip-hour" in words
    # a price of the user's own still compares
    inputs = cost_inputs_for(entry, purchase_usd=20_000.0)  # type: ignore[arg-type]
    assert inputs.cloud_hourly_usd == 3.0 and inputs.purchase_usd == 20_000.0


def test_cost_of_a_cloud_only_part_without_a_rate_says_so() -> None:
    with pytest.raises(PlanningInputError, match="no public hourly rate for it is held"):
        cost_inputs_for(_cloud_only())  # type: ignore[arg-type]
