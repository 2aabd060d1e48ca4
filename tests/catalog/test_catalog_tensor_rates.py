"""Dense tensor figures checked the way a buyer checks them: per SM (CU) per clock.

A dense FP16 tensor figure is ``units x clock x rate``, where ``rate`` is fixed by the
architecture and, on NVIDIA's Turing, Ampere GA10x, Ada and Blackwell GB20x chips, by
the product class: GeForce cards run FP16 with FP32 accumulate (the schema's meaning of
``fp16_tensor_tflops``) at half the professional and data-center rate. A sparse figure
stored as dense, an FP16-accumulate figure, a GeForce rate on a workstation card or a
typo in the clock all move the implied rate by 2x or more, which these tests flag.

Units: NVIDIA SMs are ``shader_cores`` / FP32 lanes per SM of the compute capability;
AMD CUs are ``shader_cores`` / 64 stream processors. The clock is ``boost_clock_mhz``,
or where an entry has none, the clock its own FP32 figure implies (NVIDIA only).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

import pytest

from gpudesk.catalog.loader import load_directory
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.paths import bundled_catalog_dir

#: How far an entry's implied rate may sit from its rule or its group: vendors round
#: figures and clocks (NVIDIA's L40S datasheet prints 362.05, 1.2% under 142 SMs x
#: 1,024 x 2,520 MHz), but a wrong convention is off by 2x.
TOLERANCE = 0.04

#: FP32 lanes ("CUDA cores") per SM by compute capability: NVIDIA CUDA C++ Programming
#: Guide, "Arithmetic Instructions" throughput table (64 FP32 results per clock per SM
#: on 7.0, 7.5 and 8.0; 128 on 8.6, 8.9, 9.0, 10.x, 12.x) --
#: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions
#: (retrieved 2026-12-02).
NVIDIA_CORES_PER_SM: dict[str, int] = {
    "7.0": 64,
    "7.5": 64,
    "8.0": 64,
    "8.6": 128,
    "8.9": 128,
    "9.0": 128,
    "12.0": 128,
}
#: Compute capabilities whose GeForce parts run FP16 with FP32 accumulate at half rate.
HALF_RATE_ON_GEFORCE = frozenset({"7.5", "8.6", "8.9", "12.0"})
#: Stream processors per CU on every AMD CDNA and RDNA part.
AMD_SP_PER_CU = 64


@dataclass(frozen=True)
class Rule:
    """Dense FP16 (FP32 accumulate) FLOP per clock per SM or CU, and where it is stated."""

    flop_per_clock: int
    source: str


#: The per-unit rate each architecture's own whitepaper implies. Hopper has none here:
#: NVIDIA's H100/H200 tensor figures are computed at a lower clock than their FP32
#: figures (989.4 = 132 SMs x 4,096 x 1,830 MHz, FP32 67 at 1,980 MHz), so Hopper is
#: checked only for agreement between its entries.
_RTX_PRO_WP = "RTX Blackwell PRO whitepaper"
RULES: dict[tuple[str, str, str], Rule] = {
    ("NVIDIA", "7.0", "all"): Rule(1024, "Volta whitepaper: V100 SXM2 125, 80 SMs, 1,530 MHz"),
    ("NVIDIA", "7.5", "pro"): Rule(
        1024, "Turing whitepaper appendix: Quadro RTX 6000 130.5, 72 SMs, 1,770 MHz"
    ),
    ("NVIDIA", "7.5", "geforce"): Rule(
        512, "Turing whitepaper appendix: RTX 2080 Ti 53.8, 68 SMs, 1,545 MHz"
    ),
    ("NVIDIA", "8.0", "all"): Rule(2048, "A100 whitepaper: 312, 108 SMs, 1,410 MHz"),
    ("NVIDIA", "8.6", "pro"): Rule(
        1024, "GA102 whitepaper appendix: RTX A6000 154.8, 84 SMs, 1,800 MHz"
    ),
    ("NVIDIA", "8.6", "geforce"): Rule(
        512, "GA102 whitepaper appendix: RTX 3090 71, 82 SMs, 1,695 MHz"
    ),
    ("NVIDIA", "8.9", "pro"): Rule(
        1024, f"{_RTX_PRO_WP} Table 4: RTX 6000 Ada 364.2, 142 SMs, 2,505 MHz"
    ),
    ("NVIDIA", "8.9", "geforce"): Rule(
        512, "Ada whitepaper Appendix A: RTX 4090 165.2, 128 SMs, 2,520 MHz"
    ),
    ("NVIDIA", "12.0", "pro"): Rule(
        1024, f"{_RTX_PRO_WP} appendix: RTX PRO 6000 503.8, 188 SMs, 2,617 MHz"
    ),
    ("NVIDIA", "12.0", "geforce"): Rule(
        512, "RTX Blackwell whitepaper appendix: RTX 5090 209.5, 170 SMs, 2,407 MHz"
    ),
    ("AMD", "CDNA 2", "all"): Rule(
        1024, "AMD GPUOpen matrix-cores table: MI250X FP16 1,024 FLOPS/clock/CU"
    ),
    ("AMD", "CDNA 3", "all"): Rule(
        2048, "AMD CDNA 3 whitepaper / ROCm MI300 page: FP16 matrix 2,048 FLOPS/clock/CU"
    ),
    ("AMD", "CDNA 4", "all"): Rule(
        4096, "AMD CDNA 4 whitepaper Table 1: MI355X FP16 matrix 4,096 FLOPS/clock/CU"
    ),
    ("AMD", "RDNA 3", "all"): Rule(512, "AMD GPUOpen 'WMMA on RDNA 3': FP16 512 FLOPS/clock/CU"),
}

#: Entries whose vendor figures break their group's rule on purpose, with the rate those
#: figures imply and why. Each is NVIDIA's own published figure; the entry says so too.
EXCEPTIONS: dict[str, tuple[int, str]] = {
    "l40": (512, "NVIDIA's L40 datasheet prints half-rate figures (BF16 181.05), unlike L40S"),
    "rtx-5090-d": (363, "NVIDIA caps the China-market 5090 D at 2,375 AI TOPS (5090: 3,352)"),
    "h100-nvl": (3565, "NVIDIA's NVL datasheet: tensor figures at a lower clock than FP32's"),
}

#: The professional Blackwell line: one convention (full-rate FP32 accumulate) for all.
PRO_BLACKWELL = frozenset(
    {
        "rtx-pro-4500-blackwell",
        "rtx-pro-5000-blackwell",
        "rtx-pro-6000-blackwell",
        "rtx-pro-6000-blackwell-max-q",
        "rtx-pro-6000-blackwell-server",
    }
)


@dataclass(frozen=True)
class Implied:
    entry_id: str
    key: tuple[str, str, str]
    rate: float


def rate_class(entry: CatalogEntry) -> tuple[str, str, str] | None:
    """(vendor, architecture key, product class), or None where no rule can apply."""
    if entry.vendor == "NVIDIA":
        cc = entry.compute_capability
        if cc not in NVIDIA_CORES_PER_SM:
            return None
        if cc not in HALF_RATE_ON_GEFORCE:
            return ("NVIDIA", cc, "all")
        return ("NVIDIA", cc, "geforce" if "GeForce" in entry.name else "pro")
    if entry.vendor == "AMD":
        return ("AMD", entry.architecture, "all")
    return None


def implied_rate(entry: CatalogEntry) -> Implied | None:
    """The dense FP16 tensor FLOP per clock per SM (CU) the entry's figures imply."""
    key = rate_class(entry)
    if key is None or entry.fp16_tensor_tflops is None or entry.shader_cores is None:
        return None
    if key[0] == "NVIDIA":
        units = entry.shader_cores / NVIDIA_CORES_PER_SM[key[1]]
        # No boost clock stored: the clock the FP32 figure implies (2 FLOP per lane).
        clock_hz = (
            entry.boost_clock_mhz * 1e6
            if entry.boost_clock_mhz is not None
            else entry.fp32_tflops * 1e12 / (2 * entry.shader_cores)
        )
    else:
        if entry.boost_clock_mhz is None:
            return None
        units = entry.shader_cores / AMD_SP_PER_CU
        clock_hz = entry.boost_clock_mhz * 1e6
    return Implied(entry.id, key, entry.fp16_tensor_tflops * 1e12 / (units * clock_hz))


def _off(rate: float, expected: float) -> bool:
    return abs(rate / expected - 1) > TOLERANCE


def rule_problems(entries: list[CatalogEntry]) -> list[str]:
    """Entries whose implied rate is not their architecture's whitepaper rate."""
    problems = []
    for entry in entries:
        implied = implied_rate(entry)
        if implied is None:
            continue
        if entry.id in EXCEPTIONS:
            expected: float = EXCEPTIONS[entry.id][0]
        elif implied.key in RULES:
            expected = RULES[implied.key].flop_per_clock
        else:
            continue
        if _off(implied.rate, expected):
            problems.append(f"{entry.id}: {implied.rate:.0f} FLOP/clk/unit, expected {expected}")
    return problems


def group_problems(entries: list[CatalogEntry]) -> list[str]:
    """Entries that disagree with the others of their architecture and product class."""
    groups: dict[tuple[str, str, str], list[Implied]] = defaultdict(list)
    for entry in entries:
        implied = implied_rate(entry)
        if implied is not None and entry.id not in EXCEPTIONS:
            groups[implied.key].append(implied)
    problems = []
    for key, members in groups.items():
        if len(members) < 2:
            continue
        median = statistics.median(member.rate for member in members)
        problems += [
            f"{m.entry_id}: {m.rate:.0f} FLOP/clk/unit, its group {key} has {median:.0f}"
            for m in members
            if _off(m.rate, median)
        ]
    return problems


def _ratio_class(entry: CatalogEntry) -> tuple[str, str, str] | None:
    """The ratio checks need no unit count: data-center Blackwell (no published SM count)
    and Intel's Xe parts are checked here though no per-unit rule covers them."""
    key = rate_class(entry)
    if key is not None:
        return key
    if entry.vendor == "NVIDIA" and entry.compute_capability in {"9.0", "10.0", "10.3"}:
        return ("NVIDIA", entry.compute_capability, "all")
    if entry.vendor == "Intel" and entry.architecture.startswith("Xe"):
        return ("Intel", entry.architecture, "all")
    return None


def ratio_problems(entries: list[CatalogEntry]) -> list[str]:
    """Dependent figures that left the fixed ratios to FP16 (TF32 1/2, FP8 2x, INT8 2x or 4x)."""
    problems = []
    for entry in entries:
        key = _ratio_class(entry)
        fp16 = entry.fp16_tensor_tflops
        if key is None or fp16 is None:
            continue
        vendor, arch, product = key
        expected: dict[str, float] = {}
        if vendor == "NVIDIA" and arch not in {"7.0", "7.5"}:
            expected["tf32_tensor_tflops"] = 0.5
        if vendor == "NVIDIA" and arch in {"8.9", "9.0", "10.0", "10.3", "12.0"}:
            expected["fp8_tensor_tflops"] = 2.0
        if vendor == "Intel":
            # Xe XMX: TF32 at half, INT8 at twice the FP16 rate (no FP8 on these parts).
            expected |= {"tf32_tensor_tflops": 0.5, "int8_tensor_tops": 2.0}
        if vendor == "NVIDIA" and arch != "7.0":
            # INT8 is never halved on GeForce, so it is 4x the halved FP16 figure there.
            expected["int8_tensor_tops"] = 4.0 if product == "geforce" else 2.0
        if vendor == "AMD" and arch in {"CDNA 3", "CDNA 4", "RDNA 4"}:
            expected |= {"fp8_tensor_tflops": 2.0, "int8_tensor_tops": 2.0}
        for field, ratio in expected.items():
            value = getattr(entry, field)
            if value is not None and _off(value / fp16, ratio):
                problems.append(f"{entry.id}: {field} {value} is not {ratio} x FP16 {fp16}")
    return problems


@pytest.fixture(scope="module")
def entries() -> list[CatalogEntry]:
    catalog = load_directory(bundled_catalog_dir())
    assert catalog.problems == []
    return list(catalog.entries)


def test_every_rate_matches_its_architecture_rule(entries: list[CatalogEntry]) -> None:
    assert rule_problems(entries) == []


def test_rates_agree_within_architecture_and_product_class(entries: list[CatalogEntry]) -> None:
    assert group_problems(entries) == []


def test_dependent_tensor_figures_keep_their_ratios(entries: list[CatalogEntry]) -> None:
    assert ratio_problems(entries) == []


def test_the_check_reaches_the_entries_it_is_for(entries: list[CatalogEntry]) -> None:
    checked = {i.entry_id: i for e in entries if (i := implied_rate(e)) is not None}
    # Every NVIDIA entry with a tensor figure, SM count and compute capability of a
    # known architecture, and every AMD entry with a tensor figure and clock.
    assert set(checked) >= PRO_BLACKWELL
    assert {"rtx-4090", "rtx-6000-ada", "a100-80gb-sxm4", "h100-sxm5", "mi300x"} <= set(checked)
    assert len([i for i in checked.values() if i.key[0] == "NVIDIA"]) >= 55
    assert len([i for i in checked.values() if i.key[0] == "AMD"]) >= 9
    for entry_id in PRO_BLACKWELL:
        assert checked[entry_id].key == ("NVIDIA", "12.0", "pro"), entry_id
    for entry_id in EXCEPTIONS:
        assert entry_id in checked, f"exception {entry_id} is no longer checked: drop it"
    ratio_checked = {e.id for e in entries if _ratio_class(e) and e.fp16_tensor_tflops}
    assert {"b200", "b300", "gb200", "gh200", "h20", "h200-nvl", "arc-pro-b60"} <= ratio_checked


@pytest.mark.parametrize(
    ("entry_id", "factor"),
    [
        ("rtx-6000-ada", 0.5),  # a GeForce rate on a workstation card
        ("rtx-4090", 2.0),  # the FP16-accumulate (or sparse) figure on a GeForce card
        ("rtx-pro-4500-blackwell", 0.5),
        ("mi300x", 2.0),  # the with-sparsity figure stored as dense
    ],
)
def test_a_wrong_convention_is_caught(
    entries: list[CatalogEntry], entry_id: str, factor: float
) -> None:
    by_id = {entry.id: entry for entry in entries}
    entry = by_id[entry_id]
    assert entry.fp16_tensor_tflops is not None
    wrong = entry.model_copy(update={"fp16_tensor_tflops": entry.fp16_tensor_tflops * factor})
    assert any(p.startswith(f"{entry_id}:") for p in rule_problems([wrong]))
    doctored = [wrong if e.id == entry_id else e for e in entries]
    flagged = group_problems(doctored) + rule_problems(doctored)
    assert any(p.startswith(f"{entry_id}:") for p in flagged)
    assert any(p.startswith(f"{entry_id}:") for p in ratio_problems([wrong]))


def test_a_wrong_clock_is_caught(entries: list[CatalogEntry]) -> None:
    entry = next(e for e in entries if e.id == "rtx-5080")
    assert entry.boost_clock_mhz is not None
    wrong = entry.model_copy(update={"boost_clock_mhz": entry.boost_clock_mhz // 2})
    assert rule_problems([wrong]) != []


def test_every_rule_and_exception_says_where_it_comes_from() -> None:
    assert all(rule.source.strip() and rule.flop_per_clock > 0 for rule in RULES.values())
    assert all(reason.strip() for _, reason in EXCEPTIONS.values())


@pytest.mark.parametrize(
    ("entry_id", "field"),
    [
        ("b200", "fp8_tensor_tflops"),
        ("h20", "int8_tensor_tops"),
        ("arc-pro-b60", "int8_tensor_tops"),
    ],
)
def test_a_sparse_dependent_figure_is_caught_without_a_unit_count(
    entries: list[CatalogEntry], entry_id: str, field: str
) -> None:
    entry = next(e for e in entries if e.id == entry_id)
    value = getattr(entry, field)
    assert value is not None
    assert ratio_problems([entry]) == []
    assert ratio_problems([entry.model_copy(update={field: value * 2})]) != []
