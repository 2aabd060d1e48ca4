"""The "Will it fit?" page's form: the model and the workload, read as planning inputs."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gpudesk.markup import linkify
from gpudesk.memory.breakdown import (
    DEFAULT_LORA_RANK,
    DEFAULT_SEQ,
    MAX_BATCH,
    MAX_GPUS,
    MAX_LORA_RANK,
    MAX_SEQ,
    CrossEntropy,
    DType,
    Engine,
    KvDType,
    Optimizer,
    Sharding,
    Workload,
    WorkloadSpec,
    parse_param_count,
)
from gpudesk.memory.fit import GPU_COUNTS
from gpudesk.ui.plan import forms
from gpudesk.workload.architecture import (
    ConfigFileError,
    ModelShape,
    ShapeError,
    load_hf_config,
)
from gpudesk.workload.errors import PlanningInputError
from gpudesk.workload.presets import (
    ModelArchitecture,
    architecture_from_shape,
    find_preset,
    format_param_count,
    generic_architecture,
    load_presets,
)
from gpudesk.workload.quant import QuantFormat

_CUSTOM = "__custom__"
_CONFIG = "__config__"

#: The shape fields a person may give with a parameter count, and their labels.
SHAPE_CONTROLS = {
    "layers": "Layers",
    "hidden": "Hidden size",
    "heads": "Attention heads",
    "kv_heads": "KV heads",
}

CROSS_ENTROPY_TEXT = {
    CrossEntropy.FULL: "full fp32 logits",
    CrossEntropy.CHUNKED: "chunked (torchtune)",
    CrossEntropy.FUSED: "fused (Liger / Cut CE)",
}
SHARDING_TEXT = {
    Sharding.NONE: "none (replicas)",
    Sharding.ZERO1: "ZeRO-1 (optimizer states)",
    Sharding.ZERO2: "ZeRO-2 (+ gradients)",
    Sharding.ZERO3: "ZeRO-3 / FSDP (+ weights)",
}

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
        checkpoint_quant_loaded(object): a config.json was loaded; its declared
            quantization_config.quant_method (str) or None (the "How fast?" form follows it).
    """

    edited = Signal()
    checkpoint_quant_loaded = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._config_shape: ModelShape | None = None
        self._config_path: Path | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._build())

    def max_gpus(self) -> int:
        """The largest GPU count per machine to try."""
        return int(self.max_gpus_combo.currentData())

    def words(self, exc: Exception) -> str:
        """A planning error in this form's words (its controls, not the core's fields)."""
        if isinstance(exc, ShapeError) and exc.field in SHAPE_CONTROLS:
            return f"{SHAPE_CONTROLS[exc.field]} {exc.value}: {exc.reason}"
        if isinstance(exc, ConfigFileError):
            where = f"field {exc.field!r} " if exc.field else ""
            return f"cannot use {exc.path}: {where}{exc.reason}"
        if isinstance(exc, PlanningInputError) and exc.problems:
            return self._control_words(exc)
        return str(exc)

    def _control_words(self, exc: PlanningInputError) -> str:
        return forms.control_words(
            exc,
            {
                "workload": ("Workload", self.mode_combo),
                "dtype": (self.dtype_label.text(), self.dtype_combo),
                "quant": ("Weights stored as", self.quant_combo),
                "batch": ("Batch size", self.batch_spin),
                "seq": ("Sequence length", self.seq_spin),
                "lora_rank": ("LoRA rank", self.rank_spin),
                "concurrency": ("Concurrent sequences", self.concurrency_spin),
                "gpus": ("Training GPUs", self.train_gpus_spin),
            },
        )

    def load_config(self, path: Path) -> bool:
        """Read a config.json (or a folder with one) and select it as the model.

        Returns False, with the reason shown, when the file cannot be used.
        """
        try:
            shape = load_hf_config(path)
        except (ConfigFileError, ShapeError) as exc:
            # Its own line: a later recompute of the fit must not hide why the file failed.
            forms.show_error(self.config_error_label, self.words(exc))
            return False
        self.config_error_label.hide()
        self._config_shape = shape
        self._config_path = path
        index = self.model_combo.findData(_CONFIG)
        label = f"config.json: {path.name if path.name != 'config.json' else path.parent.name}"
        if index < 0:
            self.model_combo.addItem(label, _CONFIG)
            index = self.model_combo.findData(_CONFIG)
        else:
            self.model_combo.setItemText(index, label)
        self.model_combo.setCurrentIndex(index)
        self._use_checkpoint_quant(shape.checkpoint_quant)
        self.checkpoint_quant_loaded.emit(shape.checkpoint_quant)
        self._sync_form_enabled()
        self.edited.emit()
        return True

    def _use_checkpoint_quant(self, method: str | None) -> None:
        """A config.json that declares its weights' format (quantization_config) sets
        "Weights stored as" to it, and says so; one GPUDesk has no format for is named."""
        forms.use_checkpoint_quant(self.quant_combo, self.config_note, method, "Weights stored as")

    def _on_load_config(self) -> None:
        name, _filter = QFileDialog.getOpenFileName(
            self, "Load config.json", "", "Hugging Face config (*.json);;All files (*)"
        )
        if name:
            self.load_config(Path(name))

    def show_error(self, message: str) -> None:
        """Show a planning error under the form (and no model description)."""
        forms.show_error(self.fit_error_label, message)
        self.model_info.setText("")

    def show_model(self, model: ModelArchitecture) -> None:
        """Clear the error line and describe ``model`` with its sources."""
        self.fit_error_label.hide()
        sources = "".join(f"<li>{linkify(source)}</li>" for source in model.sources)
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
        self.config_button = QPushButton("Load config.json…")
        self.config_button.setToolTip(
            "A Hugging Face config.json (read from disk only): layers, heads, KV heads, "
            "experts, sliding window and MLA as the model has them"
        )
        self.config_button.clicked.connect(self._on_load_config)
        form.addRow("", self.config_button)
        self.config_error_label = forms.error_label()
        form.addRow(self.config_error_label)
        # What a loaded config.json set beyond the shape (its declared weight format).
        self.config_note = forms.note_label()
        self.config_note.hide()
        form.addRow(self.config_note)

        self.params_edit = QLineEdit("7B")
        self.params_edit.setPlaceholderText("e.g. 7B, 350M, 1.5T")
        self.params_edit.setToolTip("Parameter count: 7B, 350M, 1.5T, 7e9")
        self.params_edit.textChanged.connect(self._on_edited)
        form.addRow("Parameters", self.params_edit)

        self.shape_spins: dict[str, QSpinBox] = {}
        for field, label in SHAPE_CONTROLS.items():
            spin = QSpinBox()
            spin.setRange(0, 1_000_000)
            spin.setSpecialValueText("assumed")
            spin.setToolTip(f"{label} of the model; 'assumed' derives it from the count")
            spin.valueChanged.connect(self._on_edited)
            self.shape_spins[field] = spin
            form.addRow(label, spin)

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

        self.quant_combo = forms.combo()
        self.quant_combo.addItem("as the dtype", None)
        for fmt in QuantFormat:
            self.quant_combo.addItem(fmt.label, fmt.value)
        self.quant_combo.setToolTip(
            "How the weights are stored: GGUF with llama.cpp's per-tensor mix, AWQ/GPTQ "
            "4-bit group 128, FP8, NF4, MXFP4; the breakdown shows the bits per weight"
        )
        self.quant_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("Weights stored as", self.quant_combo)

        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(1, MAX_BATCH)
        self.batch_spin.valueChanged.connect(self._on_edited)
        form.addRow("Batch size", self.batch_spin)

        self.seq_spin = QSpinBox()
        self.seq_spin.setRange(0, MAX_SEQ)
        self.seq_spin.setSingleStep(512)
        self.seq_spin.setSpecialValueText(f"{DEFAULT_SEQ:,} (default)")
        self.seq_spin.setSuffix(" tokens")
        self.seq_spin.setValue(0)
        self.seq_spin.valueChanged.connect(self._on_edited)
        form.addRow("Sequence length", self.seq_spin)

        self.kv_combo = forms.combo()
        # Short, so the combo shows it whole at 1366 px; the rule is in the tooltip.
        self.kv_combo.addItem("automatic", None)
        self.kv_combo.setToolTip(
            "automatic: the compute dtype, or FP16 when the weights are quantised"
        )
        for kv_dtype in KvDType:
            self.kv_combo.addItem(kv_dtype.value, kv_dtype.value)
        self.kv_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("KV cache dtype", self.kv_combo)

        self.engine_combo = forms.combo()
        self.engine_combo.addItem("default", None)
        for engine in Engine:
            self.engine_combo.addItem(engine.value, engine.value)
        self.engine_combo.setToolTip(
            "Default: transformers (llama.cpp for GGUF). The engine bounds the prefill "
            "working set: the whole prompt (transformers), "
            "a chunk (vLLM, TensorRT-LLM) or a micro-batch (llama.cpp)"
        )
        self.engine_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("Inference engine", self.engine_combo)

        self.concurrency_spin = QSpinBox()
        self.concurrency_spin.setRange(0, MAX_BATCH)
        self.concurrency_spin.setSpecialValueText("the batch")
        self.concurrency_spin.setToolTip("Sequences sharing the KV cache")
        self.concurrency_spin.valueChanged.connect(self._on_edited)
        form.addRow("Concurrent sequences", self.concurrency_spin)

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

        self.training_checks: dict[str, QCheckBox] = {}
        for key, text, tip in (
            ("pure_bf16", "Pure bf16", "bf16 weights and moments, no fp32 master copy"),
            ("fused_optimizer", "Step fused into backward", "no full gradient buffer"),
            ("lora_bf16", "LoRA adapters in bf16", "default fp32, as PEFT keeps them"),
            ("offload_optimizer", "Optimizer in CPU memory", "states + master (ZeRO-Offload)"),
            ("offload_activations", "Activations in CPU memory", "checkpointed inputs offloaded"),
        ):
            check = QCheckBox(text)
            check.setToolTip(tip)
            check.toggled.connect(self._on_edited)
            self.training_checks[key] = check
            form.addRow("", check)

        self.ce_combo = forms.combo()
        for loss, text in CROSS_ENTROPY_TEXT.items():
            self.ce_combo.addItem(text, loss.value)
        self.ce_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("Cross-entropy", self.ce_combo)

        self.sharding_combo = forms.combo()
        for sharding, text in SHARDING_TEXT.items():
            self.sharding_combo.addItem(text, sharding.value)
        self.sharding_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("Sharding", self.sharding_combo)

        self.train_gpus_spin = QSpinBox()
        self.train_gpus_spin.setRange(1, MAX_GPUS)
        self.train_gpus_spin.setSpecialValueText("try 1-8")
        self.train_gpus_spin.setToolTip("Per-GPU figures for this many data-parallel GPUs")
        self.train_gpus_spin.valueChanged.connect(self._on_edited)
        form.addRow("Training GPUs", self.train_gpus_spin)

        self.flash_check = QCheckBox("FlashAttention / SDPA")
        self.flash_check.setChecked(True)
        self.flash_check.setToolTip("Off: count the attention score matrices (a×s² per layer)")
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
        self._show_model_defaults()
        self.edited.emit()

    def _show_model_defaults(self) -> None:
        """Show the chosen model's own figures instead of stale ones or vague words."""
        custom = self.model_combo.currentData() == _CUSTOM
        try:
            model = None if custom else self.current_model()
        except (KeyError, ValueError):  # PlanningInputError is a ValueError
            model = None
        if model is not None and model.params:
            # The count of the preset, not what was typed for another model.
            self.params_edit.blockSignals(True)
            self.params_edit.setText(format_param_count(model.params))
            self.params_edit.blockSignals(False)
        context = model.shape.context if model is not None and model.shape is not None else None
        if context:
            default = min(DEFAULT_SEQ, context)
            # Short: a long text scrolled the number out of the box at 1366 px.
            self.seq_spin.setSpecialValueText(f"{default:,} (default)")
            self.seq_spin.setToolTip(
                f"Tokens per sequence; the default is {default:,}, the model's context is "
                f"{context:,}"
            )
        else:
            self.seq_spin.setSpecialValueText(f"{DEFAULT_SEQ:,} (default)")
            self.seq_spin.setToolTip(f"Tokens per sequence; the default is {DEFAULT_SEQ:,}")

    def _on_mode_changed(self) -> None:
        self._sync_form_enabled()
        self.edited.emit()

    def _sync_form_enabled(self) -> None:
        custom = self.model_combo.currentData() == _CUSTOM
        self.params_edit.setEnabled(custom)
        for spin in self.shape_spins.values():
            spin.setEnabled(custom)
        workload = Workload(self.mode_combo.currentData())
        training = workload is not Workload.INFERENCE
        lora = workload in (Workload.LORA, Workload.QLORA)
        self.checkpoint_check.setEnabled(training)
        self.optimizer_combo.setEnabled(training)
        self.rank_spin.setEnabled(lora)
        for key, check in self.training_checks.items():
            check.setEnabled(training and (key != "lora_bf16" or lora))
        self.training_checks["pure_bf16"].setEnabled(workload is Workload.TRAIN)
        self.training_checks["fused_optimizer"].setEnabled(workload is Workload.TRAIN)
        self.ce_combo.setEnabled(training)
        self.sharding_combo.setEnabled(training)
        self.train_gpus_spin.setEnabled(training)
        self.kv_combo.setEnabled(not training)
        self.engine_combo.setEnabled(not training)
        self.concurrency_spin.setEnabled(not training)
        self.dtype_label.setText("Compute dtype" if workload is Workload.QLORA else "Weights dtype")

    def current_model(self) -> ModelArchitecture:
        """The chosen preset, or a generic model of the typed parameter count.

        Raises:
            PlanningInputError: the parameter count cannot be read.
        """
        data = self.model_combo.currentData()
        if data == _CUSTOM:
            given = {field: spin.value() or None for field, spin in self.shape_spins.items()}
            return generic_architecture(parse_param_count(self.params_edit.text()), given)
        if data == _CONFIG and self._config_shape is not None and self._config_path is not None:
            return architecture_from_shape(
                self._config_shape, f"config.json ({self._config_path})", str(self._config_path)
            )
        return find_preset(str(data))

    def current_spec(self) -> WorkloadSpec:
        """The workload the controls describe (validated by the planning core)."""
        kv = self.kv_combo.currentData()
        training = Workload(self.mode_combo.currentData()) is not Workload.INFERENCE
        checks = self.training_checks.items()
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
            quant=QuantFormat(quant) if (quant := self.quant_combo.currentData()) else None,
            engine=Engine(engine) if (engine := self.engine_combo.currentData()) else None,
            concurrency=self.concurrency_spin.value() or None,
            cross_entropy=CrossEntropy(self.ce_combo.currentData()),
            sharding=Sharding(self.sharding_combo.currentData()),
            gpus=self.train_gpus_spin.value() if training else 1,
            **{key: check.isChecked() and check.isEnabled() for key, check in checks},
        )
