"""The "How fast?" page serving under load: the ranking and the latency curve on workers.

Serving simulates each GPU's engine scheduler (seconds for the catalog), so in serve mode
the ranking runs on a worker (:mod:`gpudesk.ui.plan.speed_load`) with progress and
Cancel, and the selected GPU's latency against request rate is drawn from a sweep of
rates, also on a worker. Each run is numbered, so a late result of an older request is
dropped.
"""

from __future__ import annotations

from collections.abc import Callable

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.progress import Progress
from gpudesk.speed.estimate import SpeedEstimate, SpeedRequest
from gpudesk.speed.physics import ModelCosts
from gpudesk.speed.planner import CostSettings
from gpudesk.ui.plan.speed_load import Curve, Ranked, Refused, curve_for, rank_under_load
from gpudesk.ui.plan.speed_results import SpeedResults
from gpudesk.ui.worker import TaskWorker, wired_worker


class SpeedServing(SpeedResults):
    """The ranking under load and the selected row's latency curve, each on a worker."""

    @property
    def busy(self) -> bool:
        """A ranking or latency curve is being simulated."""
        return self._rank_worker is not None or self._curve_worker is not None

    def _start_ranking(
        self,
        entries: list[CatalogEntry],
        costs: ModelCosts,
        request: SpeedRequest,
        settings: CostSettings,
    ) -> None:
        serial, max_count = self._serial, self.form.max_count()
        self._clear_results()
        self.summary_label.setText(
            f"<b>{request.label}</b> — simulating the engine's scheduler on "
            f"{len(entries)} GPU types…"
        )
        self.latency_chart.set_curve(None, "The latency curve follows the ranking.")

        def work(progress: Progress) -> Ranked:
            return Ranked(
                serial,
                rank_under_load(
                    entries, costs, request, progress, max_count=max_count, settings=settings
                ),
            )

        worker = self._worker_with_progress(
            work,
            "simulating under load",
            finished=self._on_ranked,
            cancelled=self._on_rank_cancelled,
            failed=self._on_rank_failed,
            done=self._on_rank_done,
        )
        self._rank_worker = worker
        worker.start()

    def _worker_with_progress(
        self,
        work: Callable[[Progress], object],
        what: str,
        *,
        finished: Callable[[object], None],
        cancelled: Callable[[], None],
        failed: Callable[[str], None],
        done: Callable[[], None],
    ) -> TaskWorker:
        """A worker for ``work`` reporting to the progress bar, the bar begun on ``what``
        and Cancel shown; the caller keeps it as its handle, then starts it."""
        worker = wired_worker(
            work,
            owner=self,
            progressed=self.progress_bar.advance,
            finished=finished,
            cancelled=cancelled,
            failed=failed,
            done=done,
        )
        self.progress_bar.begin(what)
        self.cancel_button.show()
        return worker

    def _on_ranked(self, outcome: object) -> None:
        if not isinstance(outcome, Ranked) or outcome.serial != self._serial:
            return  # an older request's ranking
        if isinstance(outcome.ranked, Refused):
            self._show_error(outcome.ranked.message)
            return
        self._apply_ranking(outcome.ranked)

    def _on_rank_cancelled(self) -> None:
        if self.sender() is not self._rank_worker:
            return  # an older request's ranking, cancelled for this one
        self.summary_label.setText(
            "Cancelled: the simulation under load was stopped. Change a control to run it again."
        )

    def _on_rank_failed(self, message: str) -> None:
        if self.sender() is not self._rank_worker:
            return
        self._show_error(f"the simulation under load failed: {message}")

    def _on_rank_done(self) -> None:
        # a worker cancelled for a newer request ends after that one started
        if self.sender() is self._rank_worker:
            self._rank_worker = None
        self._sync_busy()

    def _sync_busy(self) -> None:
        if not self.busy:
            self.progress_bar.finish()
            self.cancel_button.hide()

    def cancel_work(self) -> None:
        """Stop the ranking and the latency curve in flight (the Cancel button)."""
        for worker in (self._rank_worker, self._curve_worker):
            if worker is not None:
                worker.cancel()

    def _stop_workers(self) -> None:
        """Cancel what is in flight for an older request; its results are dropped."""
        self.cancel_work()

    def _start_curve(self, result: SpeedEstimate) -> None:
        request, costs = self._request, self._costs
        entry = next((item for item in self._entries() if item.id == result.gpu_id), None)
        if request is None or costs is None or entry is None or result.latency is None:
            self.latency_chart.set_curve(None, "No latency curve for this row.")
            return
        if self._curve_worker is not None:
            self._curve_worker.cancel()
        serial = self._serial

        def work(progress: Progress) -> Curve:
            return Curve(serial, result.gpu_id, curve_for(entry, costs, request, result, progress))

        self.latency_chart.set_curve(None, f"Simulating {result.name} at a sweep of request rates…")
        worker = self._worker_with_progress(
            work,
            f"latency curve of {result.name}",
            finished=self._on_curve,
            cancelled=self._on_curve_cancelled,
            failed=self._on_curve_failed,
            done=self._on_curve_done,
        )
        self._curve_worker = worker
        worker.start()

    def _on_curve(self, outcome: object) -> None:
        if not isinstance(outcome, Curve) or outcome.serial != self._serial:
            return
        selected = self._selected()
        if selected is None or selected.gpu_id != outcome.gpu_id:
            return  # the selection moved on; its own curve is on the way
        self.latency_chart.set_curve(
            outcome.curve, None if outcome.curve is not None else "No latency curve for this row."
        )
        # the chart's highest rate is searched over every request; the ranking may search
        # a shorter run, so the table's figure can differ: say which is which
        curve = outcome.curve
        differs = (
            curve is not None
            and selected.max_rate_at_slo is not None
            and curve.max_rate_at_slo is not None
            and abs(curve.max_rate_at_slo - selected.max_rate_at_slo)
            > 0.01 * selected.max_rate_at_slo
        )
        self.latency_chart.setToolTip(
            "The highest rate meeting the SLO here is searched over every request, as the "
            f"lines are drawn; the table's {selected.max_rate_at_slo:.3g}/s comes from the "
            "ranking's shorter search."
            if differs and selected.max_rate_at_slo is not None
            else ""
        )

    def _on_curve_cancelled(self) -> None:
        if self.sender() is not self._curve_worker:
            return
        self.latency_chart.set_curve(None, "Cancelled: select a row to simulate its curve.")

    def _on_curve_failed(self, message: str) -> None:
        if self.sender() is not self._curve_worker:
            return
        self.latency_chart.set_curve(None, f"The latency curve failed: {message}")

    def _on_curve_done(self) -> None:
        if self.sender() is self._curve_worker:
            self._curve_worker = None
        self._sync_busy()
