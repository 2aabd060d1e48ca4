"""Issue 42 item 14: ``speed`` puts the purchase price and tokens/s per $1k beside each
GPU, sorts by them (``--sort usd_per_tokens_s|price``) and keeps a budget
(``--max-price-usd``); entries without a catalog price say so and come last."""

from __future__ import annotations

import argparse
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any, cast

import pytest
from hypothesis import given, settings, strategies as st

from gpudesk.cli import main
from gpudesk.cli.speed_cmd import RESULT_KEYS
from gpudesk.cli.speed_prices import (
    MAX_PRICE_USD,
    SORT_KEYS,
    PurchasePrice,
    max_price_argument,
    sorted_results,
    within_price,
)

DECODE = ["speed", "--model", "llama-3.1-8b", "--quant", "q4_k_m", "--engine", "llama.cpp"]
PRICE_KEYS = (
    "purchase_usd",
    "purchase_usd_per_gpu",
    "purchase_price_kind",
    "purchase_price_date",
    "purchase_price_missing",
    "tokens_per_s_per_kusd",
    "usd_per_tokens_s",
)


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main([*argv, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_each_result_has_its_purchase_price_and_tokens_per_kusd(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = _json(capsys, *DECODE, "--gpu", "rtx-4090", "--gpu", "h100-sxm5", "--count", "2")
    for result in data["results"]:
        assert list(result)[: len(RESULT_KEYS)] == list(RESULT_KEYS), "the contract keys lead"
        assert set(PRICE_KEYS) <= set(result)
    rtx = next(r for r in data["results"] if r["gpu_id"] == "rtx-4090")
    # the catalog's RTX 4090 entry: 1,599 USD launch MSRP (2022-10-12)
    assert rtx["purchase_usd_per_gpu"] == 1599
    assert rtx["purchase_usd"] == 2 * 1599 and rtx["count"] == 2
    assert rtx["purchase_price_kind"] == "launch_msrp"
    assert rtx["purchase_price_date"] == "2022-10-12"
    assert rtx["tokens_per_s_per_kusd"] == pytest.approx(
        rtx["tokens_per_s"] / (2 * 1599 / 1000), rel=1e-5
    )
    assert rtx["usd_per_tokens_s"] == pytest.approx(2 * 1599 / rtx["tokens_per_s"], rel=1e-5)


def test_the_text_table_shows_the_price_beside_each_gpu(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*DECODE, "--gpu", "rtx-4090"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[out.splitlines().index("") + 1]
    assert "buy $" in header and "tok/s" in header
    row = next(line for line in out.splitlines() if line.startswith("rtx-4090"))
    assert "$1,599" in row
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize("key", ["price", "usd_per_tokens_s"])
def test_sort_puts_the_cheapest_first_and_the_unpriced_last(
    key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _json(capsys, *DECODE, "--sort", key)["results"]
    field = "purchase_usd" if key == "price" else "usd_per_tokens_s"
    figures = [r[field] for r in results]
    priced = [f for f in figures if f is not None]
    assert len(priced) > 20 and priced == sorted(priced)
    assert figures == priced + [None] * (len(figures) - len(priced)), "unpriced last"
    unpriced = [r for r in results if r[field] is None]
    assert unpriced and all(r["purchase_price_missing"] for r in unpriced), "each says why"
    ranking = _json(capsys, *DECODE)["results"]
    assert sorted(r["gpu_id"] for r in ranking) == sorted(r["gpu_id"] for r in results)


def test_max_price_keeps_the_budget_and_names_what_it_left_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = _json(capsys, *DECODE, "--max-price-usd", "2,000")
    assert data["results"], "some GPUs cost at most $2,000"
    assert all(r["purchase_usd"] is not None for r in data["results"])
    assert all(r["purchase_usd"] <= 2000 for r in data["results"])
    assert "rtx-4090" in {r["gpu_id"] for r in data["results"]}  # $1,599
    assert "h100-sxm5" in data["over_max_price"]
    assert data["no_price"], "the catalog has entries without a price"
    assert main([*DECODE, "--max-price-usd", "2000"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Over --max-price-usd 2,000" in out and "no catalog price to compare" in out


def test_a_budget_nothing_meets_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["speed", "--model", "llama-3.1-70b", "--max-price-usd", "300"]) == 0
    out = capsys.readouterr().out
    assert "No GPU that holds the workload costs at most $300" in " ".join(out.split())
    assert "No catalog GPU holds this workload" not in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_train_with_tokens_at_80_columns_gives_the_prices_a_table_of_their_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["speed", "--model", "llama-3.1-8b", "--mode", "train", "--tokens", "1e9"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "To buy (the catalog's price × the GPU count):" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--max-price-usd", "-5"],
        ["--max-price-usd", "0"],
        ["--max-price-usd", "nan"],
        ["--max-price-usd", "inf"],
        ["--max-price-usd", "cheap"],
        ["--sort", "prize"],
    ],
)
def test_bad_values_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main([*DECODE, *argv])
    assert raised.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert argv[0] in err
    if argv[1] == "prize":
        assert "did you mean 'price'?" in err


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=20) | st.floats(allow_nan=True).map(str))
def test_max_price_takes_a_positive_finite_price_or_says_why(text: str) -> None:
    try:
        value = max_price_argument(text)
    except argparse.ArgumentTypeError as exc:
        assert repr(text) in str(exc)
        return
    assert math.isfinite(value) and 0 < value <= MAX_PRICE_USD


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=0.01, max_value=MAX_PRICE_USD))
def test_max_price_reads_back_what_python_writes(value: float) -> None:
    assert max_price_argument(repr(value)) == value
    assert max_price_argument(f"{value:,.2f}") == pytest.approx(value, abs=0.006)


@dataclass(frozen=True)
class _Result:
    gpu_id: str


def _price(usd: float | None) -> PurchasePrice:
    per = None if usd is None else 1000.0 / usd
    return PurchasePrice(usd, usd, None, None, per, usd, None if usd else "no catalog price")


_prices = st.lists(st.none() | st.floats(min_value=1, max_value=1e6), max_size=30)


@settings(max_examples=100, deadline=None)
@given(figures=_prices, key=st.sampled_from(SORT_KEYS))
def test_sorting_is_a_stable_permutation_priced_first(
    figures: list[float | None], key: str
) -> None:
    results = [_Result(f"gpu-{i}") for i in range(len(figures))]
    prices = {r.gpu_id: _price(f) for r, f in zip(results, figures, strict=True)}
    ordered = cast(list[_Result], sorted_results(cast(Any, results), prices, key))
    assert sorted(r.gpu_id for r in ordered) == sorted(r.gpu_id for r in results)
    if key == "tokens_s":
        assert ordered == results
        return
    values = [prices[r.gpu_id].usd for r in ordered]
    priced = [v for v in values if v is not None]
    assert values == priced + [None] * (len(values) - len(priced))
    assert priced == sorted(priced)
    for first, second in itertools.pairwise(ordered):  # ties keep the ranking
        if prices[first.gpu_id].usd == prices[second.gpu_id].usd:
            assert results.index(first) < results.index(second)


@settings(max_examples=100, deadline=None)
@given(figures=_prices, budget=st.none() | st.floats(min_value=1, max_value=1e6))
def test_the_budget_splits_every_result_three_ways(
    figures: list[float | None], budget: float | None
) -> None:
    results = [_Result(f"gpu-{i}") for i in range(len(figures))]
    prices = {r.gpu_id: _price(f) for r, f in zip(results, figures, strict=True)}
    kept, over, unpriced = within_price(cast(Any, results), prices, budget)
    kept_ids = [r.gpu_id for r in cast(list[_Result], kept)]
    if budget is None:
        assert kept_ids == [r.gpu_id for r in results] and over == unpriced == []
        return
    assert sorted(kept_ids + over + unpriced) == sorted(r.gpu_id for r in results)
    assert all((prices[i].usd or math.inf) <= budget for i in kept_ids)
    assert all((prices[i].usd or 0) > budget for i in over)
    assert all(prices[i].usd is None for i in unpriced)
