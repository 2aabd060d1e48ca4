"""Cloud or buy: break-even months and cumulative cost, month by month.

Buying costs the purchase price up front plus electricity every month:
TDP x utilisation x hours per day x days x price per kWh. Renting costs the cloud
hourly price for the same hours. An optional resale value comes back when the card
is sold; the break-even uses the purchase net of it (as if sold at that point for
that value). GPU only: the host machine, cooling, space and admin time are not
counted, nor cloud storage and egress.
"""

from __future__ import annotations

import datetime as dt
import math

from pydantic import BaseModel, ConfigDict

from gpudesk.catalog.prices import default_cloud_rate, is_stale
from gpudesk.catalog.rate_book import (
    RATE_STALE_AFTER_DAYS,
    as_cloud_rate,
    distribution_words,
    rate_summary,
)
from gpudesk.catalog.schema import CatalogEntry, CloudRate, PriceKind, Status
from gpudesk.workload.errors import InputProblem, PlanningInputError

DAYS_PER_MONTH = 365.25 / 12
DEFAULT_HOURS_PER_DAY = 8.0
DEFAULT_UTILISATION = 0.8
#: USD per kWh; roughly the US residential average in 2024 (EIA Electric Power Monthly).
DEFAULT_KWH_PRICE_USD = 0.15
DEFAULT_YEARS = 3.0
#: The horizon is counted in whole months: less than one month cannot be shown.
MIN_YEARS = 1 / 12
MAX_YEARS = 20.0
MAX_COUNT = 64


class CostInputs(BaseModel):
    """What the user enters (or the catalog suggests) for one GPU model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gpu_id: str
    gpu_name: str
    purchase_usd: float  # per GPU
    tdp_w: float  # per GPU
    cloud_hourly_usd: float  # per GPU-hour
    count: int = 1
    hours_per_day: float = DEFAULT_HOURS_PER_DAY
    utilisation: float = DEFAULT_UTILISATION
    kwh_price_usd: float = DEFAULT_KWH_PRICE_USD
    years: float = DEFAULT_YEARS
    resale_usd: float = 0.0  # per GPU, when sold


class CostResult(BaseModel):
    """Monthly figures, the break-even, and the cumulative series for the chart."""

    model_config = ConfigDict(frozen=True)

    inputs: CostInputs
    power_monthly_usd: float
    cloud_monthly_usd: float
    upfront_usd: float
    resale_total_usd: float
    #: None when renting never costs more than the electricity alone
    break_even_months: float | None
    months: tuple[int, ...]
    buy_cumulative_usd: tuple[float, ...]
    buy_net_of_resale_cumulative_usd: tuple[float, ...]
    cloud_cumulative_usd: tuple[float, ...]

    @property
    def horizon_months(self) -> int:
        return self.months[-1]

    @property
    def break_even_within_horizon(self) -> bool:
        return self.break_even_months is not None and self.break_even_months <= self.horizon_months

    @property
    def buy_total_usd(self) -> float:
        """Over the whole horizon, net of the resale value."""
        return self.buy_net_of_resale_cumulative_usd[-1]

    @property
    def cloud_total_usd(self) -> float:
        return self.cloud_cumulative_usd[-1]

    def formulas(self) -> dict[str, str]:
        i = self.inputs
        n = f"{i.count} × " if i.count > 1 else ""
        return {
            "power": (
                f"{n}{i.tdp_w:g} W × {i.utilisation:g} utilisation × {i.hours_per_day:g} h/day × "
                f"{DAYS_PER_MONTH:.2f} days × ${i.kwh_price_usd:g}/kWh / 1000 = "
                f"${self.power_monthly_usd:,.2f}/month"
            ),
            "cloud": (
                f"{n}${i.cloud_hourly_usd:g}/h × {i.hours_per_day:g} h/day × {DAYS_PER_MONTH:.2f} "
                f"days = ${self.cloud_monthly_usd:,.2f}/month"
            ),
            "break_even": (
                f"(purchase {n}${i.purchase_usd:,.2f} - resale {n}${i.resale_usd:,.2f}) / "
                f"(cloud ${self.cloud_monthly_usd:,.2f} - power ${self.power_monthly_usd:,.2f} "
                "per month)"
                + (
                    f" = {self.break_even_months:.1f} months"
                    if self.break_even_months is not None
                    else ": never, the electricity alone costs at least as much as renting"
                )
            ),
        }


#: The inputs in the core's words, for the error message (edges use their own words).
_LABELS = {
    "purchase_usd": "purchase price",
    "tdp_w": "TDP",
    "cloud_hourly_usd": "cloud price",
    "count": "GPU count",
    "hours_per_day": "hours per day",
    "utilisation": "utilisation",
    "kwh_price_usd": "electricity price",
    "years": "years",
    "resale_usd": "resale value",
}


def _value_text(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _raise(problems: list[InputProblem]) -> None:
    """Raise the problems, worded in the core's words (the edges word them again)."""
    if problems:
        message = "; ".join(
            problem.reason
            if problem.missing
            else f"{_LABELS.get(problem.field, problem.field)} {_value_text(problem.value)} "
            f"{problem.reason}"
            for problem in problems
        )
        raise PlanningInputError(message, problems=problems)


def _check(inputs: CostInputs) -> None:
    # NaN compares false with every bound below, so it is refused first, by name.
    _raise(
        [
            InputProblem(name, value, "is not a finite number")
            for name, value in inputs.model_dump().items()
            if isinstance(value, float) and not math.isfinite(value)
        ]
    )
    problems: list[InputProblem] = []

    def need(ok: bool, name: str, reason: str) -> None:
        if not ok:
            problems.append(InputProblem(name, getattr(inputs, name), reason))

    need(0 < inputs.purchase_usd <= 10_000_000, "purchase_usd", "must be above 0")
    need(0 < inputs.tdp_w <= 5000, "tdp_w", "must be above 0 and at most 5,000 W")
    need(0 < inputs.cloud_hourly_usd <= 10_000, "cloud_hourly_usd", "must be above 0")
    need(1 <= inputs.count <= MAX_COUNT, "count", f"must be between 1 and {MAX_COUNT}")
    need(0 < inputs.hours_per_day <= 24, "hours_per_day", "must be above 0 and at most 24")
    need(0 < inputs.utilisation <= 1, "utilisation", "must be above 0 and at most 1")
    need(0 <= inputs.kwh_price_usd <= 10, "kwh_price_usd", "must be 0 to 10 per kWh")
    need(
        MIN_YEARS <= inputs.years <= MAX_YEARS,
        "years",
        f"must be at least one month (1/12 of a year) and at most {MAX_YEARS:g}",
    )
    need(inputs.resale_usd >= 0, "resale_usd", "cannot be negative")
    if inputs.resale_usd >= inputs.purchase_usd > 0:
        need(
            False,
            "resale_usd",
            f"must be below the purchase price ({inputs.purchase_usd:,.2f} USD)",
        )
    _raise(problems)


def compute_cost(inputs: CostInputs) -> CostResult:
    """Break-even and cumulative costs for ``inputs``.

    Raises:
        PlanningInputError: zero or negative hours, prices, years; resale above price.
    """
    _check(inputs)
    hours_per_month = inputs.hours_per_day * DAYS_PER_MONTH
    power_monthly = (
        inputs.count * inputs.tdp_w / 1000 * inputs.utilisation * hours_per_month
    ) * inputs.kwh_price_usd
    cloud_monthly = inputs.count * inputs.cloud_hourly_usd * hours_per_month
    upfront = inputs.count * inputs.purchase_usd
    resale = inputs.count * inputs.resale_usd
    saving_monthly = cloud_monthly - power_monthly
    break_even = (upfront - resale) / saving_monthly if saving_monthly > 0 else None
    horizon = max(1, round(inputs.years * 12))
    months = tuple(range(horizon + 1))
    return CostResult(
        inputs=inputs,
        power_monthly_usd=power_monthly,
        cloud_monthly_usd=cloud_monthly,
        upfront_usd=upfront,
        resale_total_usd=resale,
        break_even_months=break_even,
        months=months,
        buy_cumulative_usd=tuple(upfront + power_monthly * m for m in months),
        buy_net_of_resale_cumulative_usd=tuple(
            upfront - resale + power_monthly * m for m in months
        ),
        cloud_cumulative_usd=tuple(cloud_monthly * m for m in months),
    )


class CatalogCostFigures(BaseModel):
    """What the catalog says about one GPU's cost inputs, and how old it is.

    The one reading of the catalog for cost: ``gpudesk cost`` takes its defaults
    from it, the Plan tab fills its (editable) fields from it.
    """

    model_config = ConfigDict(frozen=True)

    gpu_id: str
    gpu_name: str
    purchase_usd: float | None
    price_kind: PriceKind | None
    price_date: dt.date | None
    #: True when the price is older than ``catalog.prices.STALE_AFTER_MONTHS``
    price_stale: bool
    tdp_w: float | None
    #: The lowest on-demand rate across providers (SkyPilot's catalog and the entry's
    #: hand-entered rates, :mod:`gpudesk.catalog.rate_book`), or None
    cloud_rate: CloudRate | None
    cloud_rate_stale: bool
    #: The median of the providers' lowest on-demand rates, and how many providers
    cloud_median_usd: float | None = None
    cloud_provider_count: int = 0
    #: the computer a ``system`` price is for (Apple silicon, DGX Spark), else None
    price_system: str | None = None
    #: e.g. "lowest $1.82 (Cudo Compute no-kristiansand-1, 2026-12-02), median $2.40
    #: across 5 providers"
    cloud_distribution: str = ""
    #: for a chip rented in a bigger unit, what the default rate was divided from:
    #: "from tpu-v6e-8 at $21.60/hour, 8 chips" ("" otherwise)
    cloud_rate_divided_from: str = ""

    @property
    def cloud_hourly_usd(self) -> float | None:
        return None if self.cloud_rate is None else self.cloud_rate.usd_per_gpu_hour


def catalog_cost_figures(entry: CatalogEntry, today: dt.date | None = None) -> CatalogCostFigures:
    """The catalog's price, TDP and default cloud rate for ``entry`` (None where it has none).

    Args:
        entry: the GPU.
        today: the date staleness is judged against (default: today).
    """
    day = today if today is not None else dt.date.today()
    summary = rate_summary(entry)
    rate = default_cloud_rate(entry) if summary.lowest is None else as_cloud_rate(summary.lowest)
    return CatalogCostFigures(
        gpu_id=entry.id,
        gpu_name=entry.name,
        purchase_usd=None if entry.price_usd is None else float(entry.price_usd),
        price_kind=entry.price_kind,
        price_system=entry.price_system,
        price_date=entry.price_date,
        price_stale=entry.price_usd is not None and is_stale(entry.price_date, day),
        tdp_w=None if entry.tdp_w is None else float(entry.tdp_w),
        cloud_rate=rate,
        cloud_rate_stale=rate is not None
        and (rate.date is None or (day - rate.date).days > RATE_STALE_AFTER_DAYS),
        cloud_median_usd=summary.median_usd,
        cloud_provider_count=len(summary.on_demand),
        cloud_distribution=distribution_words(summary),
        cloud_rate_divided_from="" if summary.lowest is None else summary.lowest.divided_from(),
    )


def cost_inputs_for(
    entry: CatalogEntry,
    *,
    cloud_hourly_usd: float | None = None,
    purchase_usd: float | None = None,
    tdp_w: float | None = None,
    count: int = 1,
    hours_per_day: float = DEFAULT_HOURS_PER_DAY,
    utilisation: float = DEFAULT_UTILISATION,
    kwh_price_usd: float = DEFAULT_KWH_PRICE_USD,
    years: float = DEFAULT_YEARS,
    resale_usd: float = 0.0,
) -> CostInputs:
    """Inputs for a catalog GPU, the catalog filling in what the user did not give.

    Raises:
        PlanningInputError: no price, TDP or cloud price in the catalog or the arguments.
    """
    figures = catalog_cost_figures(entry)
    what = f"{entry.name} ({entry.id})"
    if entry.status is Status.CLOUD_ONLY and purchase_usd is None:
        if figures.cloud_hourly_usd is not None:
            rent = f"its rent is {figures.cloud_hourly_usd:,.2f} USD per chip-hour"
            if figures.cloud_rate_divided_from:
                rent += f", {figures.cloud_rate_divided_from}"
        else:
            rent = "no public hourly rate for it is held"
        _raise(
            [
                InputProblem(
                    "purchase_usd",
                    None,
                    f"{what} is cloud-only: it is rented, never sold, so there is no purchase "
                    f"to compare ({rent})",
                )
            ]
        )
    price = purchase_usd if purchase_usd is not None else figures.purchase_usd
    power = tdp_w if tdp_w is not None else figures.tdp_w
    hourly = cloud_hourly_usd if cloud_hourly_usd is not None else figures.cloud_hourly_usd
    for name, value, words in (
        ("purchase_usd", price, "price"),
        ("tdp_w", power, "TDP"),
        ("cloud_hourly_usd", hourly, "example cloud price"),
    ):
        if value is None:
            _raise([InputProblem(name, None, f"the catalog has no {words} for {what}")])
    assert price is not None and power is not None and hourly is not None  # raised above
    return CostInputs(
        gpu_id=entry.id,
        gpu_name=entry.name,
        purchase_usd=float(price),
        tdp_w=float(power),
        cloud_hourly_usd=float(hourly),
        count=count,
        hours_per_day=hours_per_day,
        utilisation=utilisation,
        kwh_price_usd=kwh_price_usd,
        years=years,
        resale_usd=resale_usd,
    )
