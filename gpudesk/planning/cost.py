"""Cloud or buy: break-even months and cumulative cost, month by month.

Buying costs the purchase price up front plus electricity every month:
TDP x utilisation x hours per day x days x price per kWh. Renting costs the cloud
hourly price for the same hours. An optional resale value comes back when the card
is sold; the break-even uses the purchase net of it (as if sold at that point for
that value). GPU only: the host machine, cooling, space and admin time are not
counted, nor cloud storage and egress.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.planning.errors import PlanningInputError

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


_LABELS = {
    "purchase_usd": "purchase price",
    "tdp_w": "TDP",
    "cloud_hourly_usd": "cloud price",
    "hours_per_day": "hours per day",
    "kwh_price_usd": "electricity price",
    "resale_usd": "resale value",
}


def _check(inputs: CostInputs) -> None:
    # NaN compares false with every bound below, so it is refused first, by name.
    problems = [
        f"{_LABELS.get(name, name)} {value!r} is not a finite number"
        for name, value in inputs.model_dump().items()
        if isinstance(value, float) and not math.isfinite(value)
    ]
    if problems:
        raise PlanningInputError("; ".join(problems))
    if not 0 < inputs.purchase_usd <= 10_000_000:
        problems.append(f"purchase price ${inputs.purchase_usd:g} must be above 0")
    if not 0 < inputs.tdp_w <= 5000:
        problems.append(f"TDP {inputs.tdp_w:g} W must be between 0 and 5,000 W")
    if not 0 < inputs.cloud_hourly_usd <= 10_000:
        problems.append(f"cloud price ${inputs.cloud_hourly_usd:g}/h must be above 0")
    if not 1 <= inputs.count <= MAX_COUNT:
        problems.append(f"GPU count {inputs.count} must be between 1 and {MAX_COUNT}")
    if not 0 < inputs.hours_per_day <= 24:
        problems.append(f"hours per day {inputs.hours_per_day:g} must be above 0 and at most 24")
    if not 0 < inputs.utilisation <= 1:
        problems.append(f"utilisation {inputs.utilisation:g} must be above 0 and at most 1")
    if not 0 <= inputs.kwh_price_usd <= 10:
        problems.append(f"electricity price ${inputs.kwh_price_usd:g}/kWh must be 0 to 10")
    if not MIN_YEARS <= inputs.years <= MAX_YEARS:
        problems.append(
            f"years {inputs.years:g} must be at least one month (1/12 of a year) "
            f"and at most {MAX_YEARS:g}"
        )
    if inputs.resale_usd < 0:
        problems.append(f"resale value ${inputs.resale_usd:g} cannot be negative")
    elif inputs.resale_usd >= inputs.purchase_usd > 0:
        problems.append(
            f"resale value ${inputs.resale_usd:,.2f} must be below the purchase price "
            f"${inputs.purchase_usd:,.2f}"
        )
    if problems:
        raise PlanningInputError("; ".join(problems))


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
    price = purchase_usd if purchase_usd is not None else entry.price_usd
    if price is None:
        raise PlanningInputError(
            f"the catalog has no price for {entry.name} ({entry.id})", missing="purchase_usd"
        )
    power = tdp_w if tdp_w is not None else entry.tdp_w
    if power is None:
        raise PlanningInputError(
            f"the catalog has no TDP for {entry.name} ({entry.id})", missing="tdp_w"
        )
    hourly = cloud_hourly_usd if cloud_hourly_usd is not None else entry.cloud_hourly_usd
    if hourly is None:
        raise PlanningInputError(
            f"the catalog has no example cloud price for {entry.name} ({entry.id})",
            missing="cloud_hourly_usd",
        )
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
