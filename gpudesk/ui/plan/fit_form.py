"""The "Will it fit?" page's form: the model and the workload, read as planning inputs."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gpudesk.planning.fit import GPU_COUNTS
from gpudesk.planning.memory import (
    DEFAULT_LORA_RANK,
    MAX_BATCH,
    MAX_LORA_RANK,
    MAX_SEQ,
    DType,
    KvDType,
    Optimizer,
    Workload,
    WorkloadSpec,
    parse_param_count,
)
from gpudesk.planning.presets import (
    ModelArchitecture,
    find_preset,
    generic_architecture,
    load_presets,
)
from gpudesk.ui.plan import forms

_CUSTOM = "__custom__"

WORKLOAD_TEXT = {
    Workload.INFERENCE: "Inference",
    Workload.TRAIN: "Full fine-tuning (mixed precision)",
    Workload.LORA: "LoRA fine-tuning",
    Workload.QLORA: "QLoRA fine-tuning (4-bit base)",
}


class WorkloadForm(QWidget):
    """Model, workload, dtypes, batch and sequence, training options, GPUs per machine.

    Signals:
        edited(): any control changed (the page folds bursts into one update).
    """

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._build())

    def max_gpus(self) -> int:
        """The largest GPU count per machine to try."""
        return int(self.max_gpus_combo.currentData())

    def show_error(self, message: str) -> None:
        """Show a planning error under the form (and no model description)."""
        forms.show_error(self.fit_error_label, message)
        self.model_info.setText("")

    def show_model(self, model: ModelArchitecture) -> None:
        """Clear the error line and describe ``model`` with its sources."""
        self.fit_error_label.hide()
        sources = "".join(f"<li>{forms.linkify(source)}</li>" for source in model.sources)
        note = f"<p><i>{html.escape(model.notes)}</i></p>" if model.notes else ""
        self.model_info.setText(
            f"<p><b>{html.escape(model.name)}</b><br>{html.escape(model.summary())}</p>"
            f"{note}<p style='margin-bottom:0'>Sources:</p><ul style='margin-top:0'>{sources}</ul>"
        )

    def _on_edited(self, *_args: object) -> None:
        self.edited.emit()

    def _build(self) -> QWidget:
        box = QGroupBox("Model and workload")
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

        self.model_combo = forms.combo()
        for preset in load_presets():
            self.model_combo.addItem(preset.name, preset.id)
        self.model_combo.insertSeparator(self.model_combo.count())
        self.model_combo.addItem("Parameter count…", _CUSTOM)
        self.model_combo.setCurrentIndex(self.model_combo.findData(_CUSTOM))
        self.model_combo.currentIndexChanged.connect(self._on_model_changed)
        form.addRow("Model", self.model_combo)

        self.params_edit = QLineEdit("7B")
        self.params_edit.setPlaceholderText("e.g. 7B, 350M, 1.5T")
        self.params_edit.setToolTip("Parameter count: 7B, 350M, 1.5T, 7e9")
        self.params_edit.textChanged.connect(self._on_edited)
        form.addRow("Parameters", self.params_edit)

        self.mode_combo = forms.combo()
        for workload, text in WORKLOAD_TEXT.items():
            self.mode_combo.addItem(text, workload.value)
        self.mode_combo.currentIndexChanged.connect(self._on_mode_changed)
        form.addRow("Workload", self.mode_combo)

        self.dtype_combo = forms.combo()
        for dtype in DType:
            self.dtype_combo.addItem(dtype.value, dtype.value)
        self.dtype_combo.setCurrentIndex(self.dtype_combo.findData(DType.BF16.value))
        self.dtype_combo.currentIndexChanged.connect(self._on_edited)
        self.dtype_label = QLabel("Weights dtype")
        form.addRow(self.dtype_label, self.dtype_combo)

        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(1, MAX_BATCH)
        self.batch_spin.valueChanged.connect(self._on_edited)
        form.addRow("Batch size", self.batch_spin)

        self.seq_spin = QSpinBox()
        self.seq_spin.setRange(0, MAX_SEQ)
        self.seq_spin.setSingleStep(512)
        self.seq_spin.setSpecialValueText("model default")
        self.seq_spin.setSuffix(" tokens")
        self.seq_spin.setValue(0)
        self.seq_spin.valueChanged.connect(self._on_edited)
        form.addRow("Sequence length", self.seq_spin)

        self.kv_combo = forms.combo()
        self.kv_combo.addItem("as computed", None)
        for kv_dtype in KvDType:
            self.kv_combo.addItem(kv_dtype.value, kv_dtype.value)
        self.kv_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("KV cache dtype", self.kv_combo)

        self.checkpoint_check = QCheckBox("Gradient checkpointing")
        self.checkpoint_check.toggled.connect(self._on_edited)
        form.addRow("", self.checkpoint_check)

        self.optimizer_combo = forms.combo()
        for optimizer in Optimizer:
            self.optimizer_combo.addItem(optimizer.label, optimizer.value)
        self.optimizer_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("Optimizer", self.optimizer_combo)

        self.rank_spin = QSpinBox()
        self.rank_spin.setRange(1, MAX_LORA_RANK)
        self.rank_spin.setValue(DEFAULT_LORA_RANK)
        self.rank_spin.valueChanged.connect(self._on_edited)
        form.addRow("LoRA rank", self.rank_spin)

        self.flash_check = QCheckBox("FlashAttention / SDPA")
        self.flash_check.setChecked(True)
        self.flash_check.setToolTip("Off: count the attention score matrices (a·s² per layer)")
        self.flash_check.toggled.connect(self._on_edited)
        form.addRow("", self.flash_check)

        self.max_gpus_combo = forms.combo()
        for count in GPU_COUNTS:
            self.max_gpus_combo.addItem(f"up to {count}", count)
        self.max_gpus_combo.setCurrentIndex(len(GPU_COUNTS) - 1)
        self.max_gpus_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("GPUs per machine", self.max_gpus_combo)

        self.fit_error_label = forms.error_label()
        form.addRow(self.fit_error_label)

        self.model_info = QLabel()
        self.model_info.setWordWrap(True)
        self.model_info.setTextFormat(Qt.TextFormat.RichText)
        self.model_info.setOpenExternalLinks(True)
        self.model_info.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.model_info.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        form.addRow(self.model_info)

        scroll = forms.form_scroll(box)
        self._sync_form_enabled()
        return scroll

    def _on_model_changed(self) -> None:
        self._sync_form_enabled()
        self.edited.emit()

    def _on_mode_changed(self) -> None:
        self._sync_form_enabled()
        self.edited.emit()

    def _sync_form_enabled(self) -> None:
        custom = self.model_combo.currentData() == _CUSTOM
        self.params_edit.setEnabled(custom)
        workload = Workload(self.mode_combo.currentData())
        training = workload is not Workload.INFERENCE
        self.checkpoint_check.setEnabled(training)
        self.optimizer_combo.setEnabled(training)
        self.rank_spin.setEnabled(workload in (Workload.LORA, Workload.QLORA))
        self.kv_combo.setEnabled(not training)
        self.dtype_label.setText("Compute dtype" if workload is Workload.QLORA else "Weights dtype")

    def current_model(self) -> ModelArchitecture:
        """The chosen preset, or a generic model of the typed parameter count.

        Raises:
            PlanningInputError: the parameter count cannot be read.
        """
        data = self.model_combo.currentData()
        if data == _CUSTOM:
            return generic_architecture(parse_param_count(self.params_edit.text()))
        return find_preset(str(data))

    def current_spec(self) -> WorkloadSpec:
        """The workload the controls describe (validated by the planning core)."""
        kv = self.kv_combo.currentData()
        return WorkloadSpec(
            workload=Workload(self.mode_combo.currentData()),
            dtype=DType(self.dtype_combo.currentData()),
            batch=self.batch_spin.value(),
            seq=self.seq_spin.value() or None,
            kv_dtype=KvDType(kv) if kv else None,
            checkpointing=self.checkpoint_check.isChecked(),
            optimizer=Optimizer(self.optimizer_combo.currentData()),
            lora_rank=self.rank_spin.value(),
            flash_attention=self.flash_check.isChecked(),
        )
