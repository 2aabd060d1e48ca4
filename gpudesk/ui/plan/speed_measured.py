"""The "How fast?" page's measured row and the user's measurements beside the estimates.

This machine's benchmark in place of the datasheet (the row above the table), the stored
measurements read from the database, Import measurements… and Verify on this machine
(:mod:`gpudesk.ui.plan.measured_panel`). Once a Verify run measured this machine's CPU,
it is ranked with the GPUs.
"""

from __future__ import annotations

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.measurements.rows import MeasuredRow, rows_for
from gpudesk.measurements.store import StoreError
from gpudesk.measurements.verify_here import CPU_ID, VerifyJob, VerifyOutcome, why_not
from gpudesk.speed.estimate import NotRunnable, SpeedEstimate, SpeedRequest
from gpudesk.speed.hardware import rates_for
from gpudesk.speed.physics import ModelCosts
from gpudesk.speed.planner import CostSettings, calibrate, estimate_for, with_costs
from gpudesk.ui.plan.import_dialog import ImportDialog
from gpudesk.ui.plan.speed_page_base import SpeedPageBase
from gpudesk.ui.plan.speed_table import select_gpu as select_row
from gpudesk.ui.worker import TaskWorker
from gpudesk.workload.errors import PlanningInputError


class SpeedMeasured(SpeedPageBase):
    """The measured row, the stored measurements, importing them and Verify."""

    def _measured(
        self, costs: ModelCosts, request: SpeedRequest, settings: CostSettings
    ) -> SpeedEstimate | None:
        """The estimate with this machine's benchmark in place of the datasheet."""
        series = self.state.measured
        if series is None or series.catalog_id is None:
            return None
        entry = self.state.catalog.by_id(series.catalog_id)
        if entry is None:
            return None
        copy = series.values.get("bandwidth_gbs")
        gemm = series.values.get("bf16_tensor_tflops") or series.values.get("fp16_tensor_tflops")
        if copy is None and gemm is None:
            return None
        rates = calibrate(
            rates_for(entry), copy_gbs=copy, gemm_tflops=gemm, measured_at=series.measured_at
        )
        # The same number of cards the ranked table uses for that GPU.
        count = next((item.count for item in self.results if item.gpu_id == entry.id), 1)
        chosen = request.model_copy(update={"count": count})
        try:
            return with_costs(estimate_for(rates, costs, chosen), entry, settings)
        except (NotRunnable, PlanningInputError):
            return None

    # -- the user's measurements ---------------------------------------------------

    def reload_measurements(self) -> None:
        """Read the measurement database again (after an import or a measurement)."""
        try:
            self.stored_rows = self.store.rows()
            self.store_problem = None
        except (StoreError, OSError) as exc:
            self.stored_rows = []
            self.store_problem = f"your measurements cannot be read: {exc}"
        self._measure_cpu_if_stored()

    def _measure_cpu_if_stored(self) -> None:
        """With rows measured on this machine's CPU (an earlier Verify), put the CPU back
        in the table: its rates are measured again (NumPy, about 0.6 s) on a worker."""
        if self.cpu_entry is not None or self._cpu_worker is not None:
            return
        if not any(row.measurement.gpu_id == CPU_ID for row in self.stored_rows):
            return
        from gpudesk.measurements.verify_here import this_cpu_entry

        worker = TaskWorker(lambda _progress: this_cpu_entry(), owner=self)
        worker.finished.connect(self._on_cpu_measured)
        worker.done.connect(self._on_cpu_worker_done)
        self._cpu_worker = worker
        worker.start()

    def _on_cpu_measured(self, entry: object) -> None:
        if isinstance(entry, CatalogEntry) and self.cpu_entry is None:
            self.cpu_entry = entry
            self.recompute_now()

    def _on_cpu_worker_done(self) -> None:
        self._cpu_worker = None

    def measured_rows(self, estimate: SpeedEstimate) -> list[MeasuredRow]:
        """The stored rows of ``estimate``'s GPU, engine and mode, its own workload first."""
        request = self._request
        if request is None or not self.results:
            return []
        plain = self.uncalibrated.get(estimate.gpu_id, estimate)
        return rows_for(
            self.stored_rows,
            gpu_id=estimate.gpu_id,
            engine=request.engine.value,
            mode=request.mode.value,
            count=estimate.count,
            model_id=self.model_id,
            model_name=self.model_name,
            quant=request.quant.value,
            estimate_tokens_per_s=plain.tokens_per_s,
        )

    def open_import_dialog(self) -> None:
        if self.import_dialog is None:
            dialog = ImportDialog(
                self.state.entries(), self.store, model_id=self.model_id, parent=self
            )
            dialog.imported.connect(self._on_imported)
            self.import_dialog = dialog
        self.import_dialog.show()
        self.import_dialog.raise_()

    def _on_imported(self, _report: object) -> None:
        self.reload_measurements()
        self.recompute_now()

    def verify_job(self) -> VerifyJob | str:
        """The selected workload as a measurement to run here, or why it cannot be."""
        if self.error or not self.results:
            return "Nothing to measure: the workload above has a problem to fix first."
        request, costs, shape = self._request, self._costs, self._shape
        if request is None or costs is None or shape is None:
            return "Nothing to measure yet."
        problem = why_not(request)
        if problem is not None:
            return problem
        panel = self.measured_panel
        entry = panel.device_entry()
        model = self.model_id or "model"
        if panel.gguf_path is not None:
            from gpudesk.measurements.verify_here import file_costs
            from gpudesk.workload.modelfile import ModelFileError, read_gguf

            try:
                model_file = read_gguf(panel.gguf_path)
            except ModelFileError as exc:
                return f"The GGUF file: {exc}"
            if model_file.shape is None:
                return f"The GGUF file: cannot tell the model's shape ({model_file.shape_problem})"
            shape = model_file.shape
            quant = model_file.quant or request.quant
            request = request.model_copy(update={"quant": quant})
            costs = file_costs(model_file, quant, request.kv_quant)
            model = model_file.name or panel.gguf_path.stem
        return VerifyJob(
            model=model,
            shape=shape,
            costs=costs,
            request=request,
            entry=entry if isinstance(entry, CatalogEntry) else None,
            model_file=panel.gguf_path,
            max_file_bytes=int(panel.limit_spin.value() * 1e9),
        )

    def _on_verify_requested(self) -> None:
        job = self.verify_job()
        if isinstance(job, str):
            self.measured_panel.say(job)
        else:
            self.measured_panel.run_job(job)

    def _on_verified(self, outcome: object) -> None:
        if not isinstance(outcome, VerifyOutcome):
            return
        if outcome.entry.id == CPU_ID:
            self.cpu_entry = outcome.entry
        self.reload_measurements()
        self.recompute_now()
        self.select_gpu(outcome.entry.id)

    def select_gpu(self, gpu_id: str) -> bool:
        """Select ``gpu_id``'s row of the table; False when it has none."""
        return select_row(self.tree, self.results, gpu_id)

    def _on_detected(self) -> None:
        by_id = {entry.id: entry for entry in self.state.entries()}
        devices = [
            (f"{by_id[gpu_id].name} (all layers on it)", by_id[gpu_id])
            for gpu_id in dict.fromkeys(self.state.detected_catalog_ids)
            if gpu_id in by_id
        ]
        self.measured_panel.set_devices(devices)
