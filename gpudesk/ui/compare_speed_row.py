"""Compare's "tokens/s for ..." row: the How fast? page's workload estimated for the
compared GPUs. Plain Python (no Qt): :class:`~gpudesk.ui.compare_view.CompareView` runs
:func:`speed_rows` on a worker and shows :data:`SPEED_PENDING` until it ends.
"""

from __future__ import annotations

from gpudesk.catalog.metrics import MetricGroup
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.table import Row, RowKind

#: a "tokens/s for ..." cell while its estimate runs on the worker
SPEED_PENDING = "estimating…"


def speed_row(workload: object, values: list[str | None]) -> Row:
    """The "tokens/s for <workload>" row with ``values``, one per column."""
    label = f"tokens/s for {getattr(workload, 'label', '')}"
    return Row("speed", label, "", MetricGroup.COMPUTE, RowKind.TEXT, tuple(values))


def pending_rows(workload: object, columns: int, with_measured: bool) -> list[Row]:
    """The row while :func:`speed_rows` runs: :data:`SPEED_PENDING` in each GPU's cell."""
    values: list[str | None] = [SPEED_PENDING] * columns
    return [speed_row(workload, [*values, None] if with_measured else values)]


def speed_rows(workload: object, entries: list[CatalogEntry], with_measured: bool) -> list[Row]:
    """The "tokens/s for ..." row (and the user's measured row, where there are
    measurements of it) for ``entries``: plain Python, run on a worker."""
    from gpudesk.measurements.rows import cell_text, rows_across, stored_rows
    from gpudesk.speed.planner import (
        SpeedWorkload,
        speed_cell_text,
        speed_cells,
        split_supported,
    )

    assert isinstance(workload, SpeedWorkload)
    cells = speed_cells(workload, entries)
    # a GPU the engine cannot run the workload on is said so, with why: "does not fit"
    # would send the user to a bigger card that the engine cannot run it on either
    refused = dict(split_supported(entries, workload.request)[1])
    values: list[str | None] = [
        f"not supported: {refused[entry.id]}" if entry.id in refused else speed_cell_text(cell)
        for entry, cell in zip(entries, cells, strict=True)
    ]
    measured = [cell_text(found) for found in rows_across(workload, cells, stored_rows())]
    if with_measured:
        values.append(None)
        measured.append(None)
    rows = [speed_row(workload, values)]
    if any(measured):
        rows.append(
            Row(
                "speed_measured",
                "measured tokens/s (yours, same workload)",
                "",
                MetricGroup.COMPUTE,
                RowKind.TEXT,
                tuple(measured),
            )
        )
    return rows
