"""The "How fast?" page's results: the ranked table, the GPUs never ranked, the basis text
of the selected row and the roofline.

The table's rows and words are :mod:`gpudesk.ui.plan.speed_table`, the roofline
:mod:`gpudesk.ui.plan.speed_roofline`; this layer fills them from a ranking, or empties
them with the workload's problem.
"""

from __future__ import annotations

import html

import pyqtgraph as pg

from gpudesk.measurements.calibration import calibrate_all
from gpudesk.render.style import chart_style
from gpudesk.speed.estimate import SpeedEstimate, SpeedRequest
from gpudesk.speed.planner import RankedEstimates, SpeedWorkload
from gpudesk.speed.text import figure_text
from gpudesk.ui import theme
from gpudesk.ui.plan import forms
from gpudesk.ui.plan.speed_measured import SpeedMeasured
from gpudesk.ui.plan.speed_roofline import no_roofline_text, training_per_gpu
from gpudesk.ui.plan.speed_table import (
    clear_tree,
    current_index,
    fill_tree,
    measured_html,
    not_supported_text,
    summary_html,
)


def training_basis_html(result: SpeedEstimate) -> str:
    """The detail line under the training chart, on the chart's basis: tokens/s per GPU
    and MFU (the same figures as the selected bar), then the table's figure for all the
    GPUs and its range, then the estimate's basis.

    It said "221,317 tokens/s …; bound 436,349 tokens/s; this is 51% of it" under bars of
    27,665 tokens/s per GPU at 51% MFU: the same estimate on another basis and in other
    words, which read as a contradiction."""
    count = max(1, result.count)
    per_gpu = training_per_gpu(result)
    bound_per_gpu = result.bound_tokens_per_s / count
    peak = result.roofline.peak_tflops
    name = html.escape(result.name)
    head = (
        f"<p><b>{name}</b> × {count}: <b>{figure_text(per_gpu)} tokens/s per GPU</b> at "
        f"<b>{result.efficiency:.0%} MFU</b> (share of the dense peak, "
        f"{figure_text(peak)} TFLOPS per GPU, at which one GPU would train "
        f"{figure_text(bound_per_gpu)} tokens/s)"
    )
    if count > 1:
        head += (
            f"; all {count} GPUs: {figure_text(result.tokens_per_s)} tokens/s "
            f"({figure_text(result.low)}–{figure_text(result.high)})"
        )
    else:
        head += f"; range {figure_text(result.low)}–{figure_text(result.high)} tokens/s"
    parts = [head + ".</p>", f"<p>{html.escape(result.basis)}.</p>"]
    if result.calibrated:
        parts.append(f"<p>Calibrated: {html.escape(result.calibrated)}.</p>")
    if result.cost_basis:
        parts.append(f"<p>Cost: {html.escape(result.cost_basis)}.</p>")
    return "".join(parts)


class SpeedResults(SpeedMeasured):
    """The table, the not-supported list, the measured row's text and the roofline."""

    @property
    def measured_points(self) -> dict[str, list[float]]:
        """The TFLOPS of the measured stars on the roofline, by GPU id."""
        return self.roofline_stack.measured_points

    @property
    def workload_line(self) -> pg.InfiniteLine | None:
        """The roofline's dashed "this workload" line, when one is drawn."""
        return self.roofline_stack.workload_line

    def _restyle_latency(self, *_args: object) -> None:
        self.latency_chart.set_style(chart_style(theme.is_dark()))

    def _clear_results(self) -> None:
        self.results = []
        self.uncalibrated = {}
        self.measured_result = None
        self.not_supported = []
        self._clear_tree()
        self._fill_not_supported()
        self.basis_view.setHtml("")
        self._draw_roofline()

    def _fill_not_supported(self) -> None:
        count = len(self.not_supported)
        self.not_supported_label.setVisible(bool(count))
        self.not_supported_view.setVisible(bool(count))
        if not count:
            self.not_supported_view.clear()
            return
        names = {entry.id: entry.name for entry in self._entries()}
        self.not_supported_label.setText(
            f"<b>Not supported ({count})</b>, never ranked: the engine cannot run this "
            "request on them."
        )
        self.not_supported_view.setPlainText(not_supported_text(self.not_supported, names))

    # -- results -------------------------------------------------------------------

    def _apply_ranking(self, ranked: RankedEstimates) -> None:
        """Show a ranking of the current request (``_request``, ``_costs``)."""
        request, costs = self._request, self._costs
        if request is None or costs is None or self.model_name is None:
            return
        settings = self._settings
        self.not_supported = list(ranked.not_supported)
        self.uncalibrated = {item.gpu_id: item for item in ranked.results}
        # the user's measurements of the same GPU, engine and mode calibrate its estimate
        self.results = calibrate_all(
            list(ranked.results), self.stored_rows, engine=request.engine.value, backend=None
        )
        self.measured_result = self._measured(costs, request, settings)
        workload = SpeedWorkload(model_name=self.model_name, costs=costs, request=request)
        if self.workload_chosen:
            self.state.set_speed_workload(workload)
        self.workload_changed.emit(workload)
        self._fill(request, len(ranked.not_holding))
        self._fill_not_supported()

    def _show_error(self, message: str) -> None:
        self.error = message
        self.measured_label.hide()
        forms.show_error(self.form.error_label, message)
        self.results = []
        self.uncalibrated = {}
        self.measured_result = None
        self.not_supported = []
        self._clear_tree()
        self._fill_not_supported()
        self.latency_chart.set_curve(None, "No latency curve: the workload has a problem.")
        self.measured_panel.show_rows(None, [], self.store_problem)
        self.summary_label.setText("")
        self.basis_view.setHtml("")
        self.state.set_speed_workload(None)
        self.workload_changed.emit(None)
        self._draw_roofline()

    # -- showing -------------------------------------------------------------------

    def _clear_tree(self) -> None:
        clear_tree(self.tree)

    def _fill(self, request: SpeedRequest, not_holding: int) -> None:
        fill_tree(self.tree, self.results, request)
        self.summary_label.setText(summary_html(request, len(self.results), not_holding))
        measured = self.measured_result
        if measured is None:
            self.measured_label.hide()
        else:
            self.measured_label.setText(measured_html(measured))
            self.measured_label.show()
        self._draw_roofline()

    def _selected(self) -> SpeedEstimate | None:
        index = current_index(self.tree)
        if index is not None and 0 <= index < len(self.results):
            return self.results[index]
        return None

    def _draw_roofline(self, *_args: object) -> None:
        self.roofline_stack.draw(
            self.results,
            self.measured_result,
            self._selected(),
            self.measured_rows,
            no_roofline_text(self.results, self.error),
        )
