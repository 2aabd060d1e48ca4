"""What ``validate --strict`` counts as a source a reader cannot follow."""

from __future__ import annotations

import datetime as dt

import pytest
from catalog_factory import make_entry

from gpudesk.catalog.sourcing import sourcing_issues, text_source_issues, url_issue


@pytest.mark.parametrize(
    "url",
    [
        "https://www.techpowerup.com/gpu-specs/",
        "https://techpowerup.com/gpu-specs",
        "https://pci-ids.ucw.cz/",
        "https://pci-ids.ucw.cz/read/PC/10de",
        "https://pci-ids.ucw.cz/v2.2/pci.ids",
        "https://www.nvidia.com/",
        "https://lambda.ai",
        "http://localhost:8000/notes.html",
        "https://192.168.1.10/datasheet.pdf",
    ],
)
def test_index_home_and_private_pages_are_flagged(url: str) -> None:
    assert url_issue(url) is not None


@pytest.mark.parametrize(
    "url",
    [
        "https://www.techpowerup.com/gpu-specs/geforce-rtx-4090.c3889",
        "https://pci-ids.ucw.cz/read/PC/10de/2684",
        "https://www.nvidia.com/en-us/data-center/h100/",
        "https://vast.ai/pricing?gpu=H100",
    ],
)
def test_specific_public_pages_pass(url: str) -> None:
    assert url_issue(url) is None


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("Seed article (shared/seed/gpu-guide-2025.txt)", "local file path"),
        ("TechPowerUp GPU Database (https://www.techpowerup.com/gpu-specs/)", "index"),
        ("launch announcement, 2022-09-20", "no URL"),
        ("my own measurements", "no URL"),
        ("notes in file:///home/me/gpu.pdf", "file://"),
    ],
)
def test_source_texts_a_reader_cannot_follow(text: str, fragment: str) -> None:
    issues = text_source_issues(text)
    assert any(fragment in issue for issue in issues), issues


def test_title_with_publisher_or_a_url_passes() -> None:
    assert text_source_issues("NVIDIA Ada GPU Architecture whitepaper v2.1 — NVIDIA") == []
    assert text_source_issues("AMD CDNA 3 whitepaper – AMD") == []
    assert text_source_issues("Apple Technical Specifications, support.apple.com") == []
    assert text_source_issues("NVIDIA GeForce RTX 40 Series launch announcement") == []
    assert text_source_issues("Datasheet https://www.amd.com/en/products/mi300x.html") == []


def test_entry_issues_name_the_field() -> None:
    entry = make_entry(
        sources=["https://www.nvidia.com/en-us/data-center/h100/", "launch blog post"],
        notes="ARTICLE DIFFERS: its FP16 is sparse (no schema field).",
        provenance="From shared/seed/gpu-guide-2025.txt",
        cloud_rates=[
            {"provider": "X", "usd_per_gpu_hour": 2.0, "kind": "spot"},
            {
                "provider": "Y",
                "usd_per_gpu_hour": 2.0,
                "kind": "on_demand",
                "date": dt.date(2026, 11, 1),
                "source": "https://runpod.io/",
            },
        ],
    )
    fields = sorted(issue.field for issue in sourcing_issues(entry))
    assert fields == [
        "cloud_rates.0.date",
        "cloud_rates.0.source",
        "cloud_rates.1.source",
        "notes",
        "price_usd",  # neither a price nor a dated statement that none exists
        "provenance",
        "sources.1",
    ]


def test_a_clean_entry_has_no_issues() -> None:
    entry = make_entry(
        sources=["https://www.nvidia.com/en-us/data-center/h100/"],
        price_usd=25_000,
        price_date=dt.date(2026, 11, 1),
        price_kind="estimate",
        notes="Plain words for a reader.",
        cloud_rates=[
            {
                "provider": "Lambda",
                "usd_per_gpu_hour": 2.99,
                "kind": "on_demand",
                "date": dt.date(2026, 11, 1),
                "source": "https://lambda.ai/pricing",
            }
        ],
    )
    assert sourcing_issues(entry) == []


def test_strict_wants_a_price_and_a_rate_or_a_dated_statement_for_each() -> None:
    bare = make_entry("zz-unknown-gpu", sources=["https://www.nvidia.com/en-us/data-center/h100/"])
    assert sorted(issue.field for issue in sourcing_issues(bare)) == ["cloud_rates", "price_usd"]
    stated = make_entry(
        "zz-unknown-gpu",
        sources=["https://www.nvidia.com/en-us/data-center/h100/"],
        price_unavailable={"date": dt.date(2026, 12, 2), "reason": "not sold on its own"},
        rates_unavailable={"date": dt.date(2026, 12, 2), "reason": "not rented by the hour"},
    )
    assert sourcing_issues(stated) == []
    # SkyPilot's bundled snapshot counts as a rate: no statement needed
    rented = make_entry(
        "h100-sxm5",
        sources=["https://www.nvidia.com/en-us/data-center/h100/"],
        price_unavailable={"date": dt.date(2026, 12, 2), "reason": "x"},
    )
    assert sourcing_issues(rented) == []
