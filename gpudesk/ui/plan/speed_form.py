"""The form of the Plan tab's "How fast?" page: mode, engine, formats, lengths, GPUs, price.

The model itself comes from the "Will it fit?" page's form; :class:`SpeedForm` shows
its name and adds what speed depends on, and turns its controls into a
:class:`~gpudesk.speed.estimate.SpeedRequest`.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gpudesk.speed.data import Checkpointing, load_measurements
from gpudesk.speed.estimate import (
    Engine,
    KvFormat,
    Mode,
    SpeedInputError,
    SpeedRequest,
    TrainMethod,
)
from gpudesk.ui.plan import forms
from gpudesk.workload.errors import PlanningInputError
from gpudesk.workload.quant import QuantFormat

MODE_TEXT = {
    Mode.DECODE: "Decode (one chat, token by token)",
    Mode.PREFILL: "Prefill (reading the prompt)",
    Mode.SERVE: "Serve (many users at once)",
    Mode.TRAIN: "Train",
}
METHOD_TEXT = {
    TrainMethod.FULL: "Full fine-tuning / pre-training",
    TrainMethod.LORA: "LoRA",
    TrainMethod.QLORA: "QLoRA (4-bit base)",
}


class SpeedForm(QWidget):
    """Mode, engine, weight and KV formats, batch, lengths, serving under load (rate, max
    concurrency, requests, SLO, layout, scheduler limits), training, GPUs, rent price.

    Like the rest of this form, the serving controls live for the session (the Plan
    tab keeps no settings between runs).

    Signals:
        edited(): any control changed (the page folds bursts into one update).
    """

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._build())
        self._sync_enabled()

    def _on_edited(self, *_args: object) -> None:
        self.edited.emit()

    def show_model(self, text: str) -> None:
        """Name the model the estimates are for (chosen on the "Will it fit?" page)."""
        self.model_label.setText(text)

    def use_checkpoint_quant(self, method: str | None) -> None:
        """Follow a loaded config.json's declared weight format (quant_method), as the
        "Will it fit?" form does; FP8/AWQ/GPTQ/MXFP4 checkpoints are not llama.cpp's, so
        the engine moves from llama.cpp to vLLM with them."""
        fmt = forms.checkpoint_format(method)
        extra = ""
        engine = Engine(self.engine_combo.currentData())
        if fmt is not None and not fmt.is_gguf and engine is Engine.LLAMA_CPP:
            self.engine_combo.blockSignals(True)
            self.engine_combo.setCurrentIndex(self.engine_combo.findData(Engine.VLLM.value))
            self.engine_combo.blockSignals(False)
            extra = f" and the engine to {Engine.VLLM.value}"
        forms.use_checkpoint_quant(
            self.quant_combo, self.config_note, method, "Weights", extra=extra
        )
        self.edited.emit()

    def cloud_hourly_usd(self) -> float | None:
        """The rent price typed in, or None for each GPU's catalog rate."""
        return self.cloud_spin.value() or None

    def _build(self) -> QWidget:
        box = QGroupBox("How fast?")
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.model_label = QLabel()
        self.model_label.setWordWrap(True)
        self.model_label.setToolTip("Choose the model on the “Will it fit?” page")
        form.addRow("Model", self.model_label)

        self.mode_combo = forms.combo()
        for mode, text in MODE_TEXT.items():
            self.mode_combo.addItem(text, mode.value)
        self.mode_combo.currentIndexChanged.connect(self._on_mode_changed)
        form.addRow("Workload", self.mode_combo)

        self.engine_combo = forms.combo()
        for engine in Engine:
            self.engine_combo.addItem(engine.value, engine.value)
        self.engine_combo.setCurrentIndex(self.engine_combo.findData(Engine.LLAMA_CPP.value))
        self.engine_combo.currentIndexChanged.connect(self._on_engine_changed)
        self.engine_label = QLabel("Engine")
        form.addRow(self.engine_label, self.engine_combo)

        self.quant_combo = forms.combo()
        for quant in QuantFormat:
            self.quant_combo.addItem(quant.label, quant.value)
        self.quant_combo.setCurrentIndex(self.quant_combo.findData(QuantFormat.Q4_K_M.value))
        self.quant_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("Weights", self.quant_combo)
        # What a loaded config.json set (its declared weight format), as on "Will it fit?".
        self.config_note = forms.note_label()
        self.config_note.hide()
        form.addRow(self.config_note)

        self.kv_combo = forms.combo()
        for kv in KvFormat:
            self.kv_combo.addItem(kv.value, kv.value)
        self.kv_combo.setCurrentIndex(self.kv_combo.findData(KvFormat.FP16.value))
        self.kv_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("KV cache", self.kv_combo)

        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(1, 4096)
        self.batch_spin.valueChanged.connect(self._on_edited)
        form.addRow("Batch", self.batch_spin)

        self.seq_in_spin = QSpinBox()
        self.seq_in_spin.setRange(1, 1_000_000)
        self.seq_in_spin.setSingleStep(256)
        self.seq_in_spin.setValue(512)
        self.seq_in_spin.setSuffix(" tokens")
        self.seq_in_spin.valueChanged.connect(self._on_edited)
        self.seq_in_label = QLabel("Prompt")
        form.addRow(self.seq_in_label, self.seq_in_spin)

        self.seq_out_spin = QSpinBox()
        self.seq_out_spin.setRange(1, 1_000_000)
        self.seq_out_spin.setSingleStep(128)
        self.seq_out_spin.setValue(256)
        self.seq_out_spin.setSuffix(" tokens")
        self.seq_out_spin.valueChanged.connect(self._on_edited)
        form.addRow("Output", self.seq_out_spin)

        self.tokens_edit = QLineEdit("1e9")
        self.tokens_edit.setToolTip("Tokens to train on: 1e9, 2.5e10, 300000000")
        self.tokens_edit.textChanged.connect(self._on_edited)
        form.addRow("Training tokens", self.tokens_edit)

        self.method_combo = forms.combo()
        for method, text in METHOD_TEXT.items():
            self.method_combo.addItem(text, method.value)
        self.method_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("Method", self.method_combo)

        self.recompute_combo = forms.combo()
        self.recompute_combo.addItem("none (or selective)", Checkpointing.NONE.value)
        self.recompute_combo.addItem("full (8 × N FLOPs)", Checkpointing.FULL.value)
        self.recompute_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("Recomputation", self.recompute_combo)

        self.load_box = self._build_load()
        form.addRow(self.load_box)

        self.count_combo = forms.combo()
        for count in (1, 2, 4, 8):
            self.count_combo.addItem(f"up to {count}", count)
        self.count_combo.setCurrentIndex(3)
        self.count_combo.currentIndexChanged.connect(self._on_edited)
        self.count_label = QLabel("GPUs per machine")
        form.addRow(self.count_label, self.count_combo)

        self.cloud_spin = forms.money_spin(0, 1000, 2, 0.1, "/GPU-hour", 0)
        self.cloud_spin.setSpecialValueText("catalog rate")
        self.cloud_spin.valueChanged.connect(self._on_edited)
        form.addRow("Rent price", self.cloud_spin)

        self.error_label = forms.error_label()
        form.addRow(self.error_label)
        self.note_label = forms.note_label()
        count = len(load_measurements().measurements)
        self.note_label.setText(
            "Estimates come from a model of bytes and FLOPs per token whose efficiencies "
            f"are fitted to {count} published measurements (llama.cpp, vLLM, TensorRT-LLM, "
            "training tables); each row says its basis."
        )
        form.addRow(self.note_label)
        return forms.form_scroll(box)

    def _build_load(self) -> QGroupBox:
        """Serving under load, as ``vllm bench serve`` is told: the traffic, the SLO, the
        layout and the engine's scheduler limits (shown in serve mode only)."""
        box = QGroupBox("Serving under load")
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

        self.rate_spin = forms.number_spin(0, 1e6, 2, 1, " requests/s", 0)
        self.rate_spin.setSpecialValueText("all at once")
        self.rate_spin.setToolTip(
            "Requests per second, arriving as a Poisson process (vllm bench serve "
            "--request-rate); 0 sends every request at once"
        )
        self.rate_spin.valueChanged.connect(self._on_edited)
        form.addRow("Request rate", self.rate_spin)

        # The client's cap (vllm bench serve --max-concurrency): it was "Users at once",
        # which read as the engine's batch; that is max_num_seqs below.
        self.concurrency_spin = QSpinBox()
        self.concurrency_spin.setRange(0, 65_536)
        self.concurrency_spin.setSpecialValueText("no cap")
        self.concurrency_spin.setToolTip(
            "The client's cap: at most this many requests in flight "
            "(vllm bench serve --max-concurrency); the engine's own cap is max_num_seqs"
        )
        self.concurrency_spin.valueChanged.connect(self._on_edited)
        form.addRow("Max concurrency", self.concurrency_spin)

        self.prompts_spin = QSpinBox()
        self.prompts_spin.setRange(1, 100_000)
        self.prompts_spin.setValue(1000)
        self.prompts_spin.setSingleStep(100)
        self.prompts_spin.setGroupSeparatorShown(True)
        self.prompts_spin.setToolTip("Requests in the simulated benchmark (--num-prompts)")
        self.prompts_spin.valueChanged.connect(self._on_edited)
        form.addRow("Requests", self.prompts_spin)

        self.lengths_combo = QComboBox()
        self.lengths_combo.addItem("Fixed at prompt / output", "random")
        self.lengths_combo.addItem("ShareGPT-shaped, averaging them", "sharegpt")
        self.lengths_combo.setToolTip(
            "How request lengths are drawn (speed --dataset, vllm bench serve "
            "--dataset-name): every request at the prompt and output lengths above, or "
            "ShareGPT's heavy-tailed lengths averaging them (5 to 1,000 tokens each), as "
            "a ShareGPT benchmark sends them"
        )
        self.lengths_combo.currentIndexChanged.connect(self._on_edited)
        form.addRow("Lengths", self.lengths_combo)

        self.slo_ttft_spin = self._ms_spin("TTFT bound: time to first token")
        form.addRow("SLO TTFT", self.slo_ttft_spin)
        self.slo_tpot_spin = self._ms_spin("TPOT bound: time per output token after the first")
        form.addRow("SLO TPOT", self.slo_tpot_spin)
        self.slo_e2e_spin = self._ms_spin("End-to-end bound: the whole request")
        form.addRow("SLO E2E", self.slo_e2e_spin)
        self.slo_share_spin = forms.number_spin(1, 100, 0, 5, " % of requests", 90)
        self.slo_share_spin.setToolTip(
            "Share of requests that must meet every bound for a rate to meet the SLO"
        )
        self.slo_share_spin.valueChanged.connect(self._on_edited)
        form.addRow("SLO share", self.slo_share_spin)

        self.layout_combos: dict[str, QComboBox] = {}
        for name, words in (
            ("tp", "tensor parallel: GPUs splitting each layer"),
            ("pp", "pipeline parallel: GPUs holding a share of the layers"),
            ("dp", "data parallel: copies of the model"),
            ("ep", "expert parallel: GPUs sharing each MoE layer's experts"),
        ):
            box_combo = forms.combo()
            box_combo.addItem("automatic", 0)
            for value in (1, 2, 4, 8):
                box_combo.addItem(str(value), value)
            box_combo.setToolTip(
                f"{name.upper()}, {words}. Automatic: the layouts the engine runs on the "
                "GPU count are tried and the table names the one used. TP × PP × DP is "
                "the GPU count"
            )
            box_combo.currentIndexChanged.connect(self._on_layout_changed)
            self.layout_combos[name] = box_combo
            form.addRow(f"Layout {name.upper()}", box_combo)

        self.max_seqs_spin = QSpinBox()
        self.max_seqs_spin.setRange(0, 4096)
        self.max_seqs_spin.setSpecialValueText("engine's default")
        self.max_seqs_spin.setToolTip(
            "The engine's cap on sequences running at once (SGLang: --max-running-requests)"
        )
        self.max_seqs_spin.valueChanged.connect(self._on_edited)
        form.addRow("max_num_seqs", self.max_seqs_spin)

        self.max_tokens_spin = QSpinBox()
        self.max_tokens_spin.setRange(0, 1_000_000)
        self.max_tokens_spin.setSingleStep(1024)
        self.max_tokens_spin.setSpecialValueText("engine's default")
        self.max_tokens_spin.setToolTip(
            "The engine's per-step token budget, shared by decodes and prompt chunks "
            "(SGLang: --chunked-prefill-size)"
        )
        self.max_tokens_spin.valueChanged.connect(self._on_edited)
        form.addRow("max_num_batched_tokens", self.max_tokens_spin)
        return box

    def _on_layout_changed(self) -> None:
        self._sync_enabled()
        self.edited.emit()

    def _ms_spin(self, words: str) -> QDoubleSpinBox:
        spin = forms.number_spin(0, 1e6, 0, 10, " ms", 0)
        spin.setSpecialValueText("none")
        spin.setToolTip(f"{words}, in ms; none: no bound")
        spin.valueChanged.connect(self._on_edited)
        return spin

    # -- inputs --------------------------------------------------------------------

    def mode(self) -> Mode:
        return Mode(self.mode_combo.currentData())

    def _on_mode_changed(self) -> None:
        self._sync_enabled()
        self.edited.emit()

    def _on_engine_changed(self) -> None:
        engine = Engine(self.engine_combo.currentData())
        quant = QuantFormat(self.quant_combo.currentData())
        # GGUF formats are llama.cpp's; the other engines load 16-bit, FP8, AWQ/GPTQ.
        if engine is not Engine.LLAMA_CPP and quant.is_gguf:
            self.quant_combo.setCurrentIndex(self.quant_combo.findData(QuantFormat.BF16.value))
        elif engine is Engine.LLAMA_CPP and not quant.is_gguf and not quant.is_plain:
            self.quant_combo.setCurrentIndex(self.quant_combo.findData(QuantFormat.Q4_K_M.value))
        self.edited.emit()

    def _sync_enabled(self) -> None:
        mode = self.mode()
        train = mode is Mode.TRAIN
        self.engine_combo.setEnabled(not train)
        self.kv_combo.setEnabled(not train)
        self.batch_spin.setEnabled(mode in (Mode.DECODE, Mode.PREFILL))
        self.load_box.setVisible(mode is Mode.SERVE)
        # a serving layout given is the deployment: TP x PP x DP GPUs, not "up to N"
        given = self.layout_given()
        self.count_combo.setEnabled(not given)
        self.count_combo.setToolTip(
            "Set by the layout: TP × PP × DP GPUs" if given else "The most GPUs of one kind tried"
        )
        self.seq_out_spin.setEnabled(mode in (Mode.DECODE, Mode.SERVE))
        self.tokens_edit.setEnabled(train)
        self.method_combo.setEnabled(train)
        self.recompute_combo.setEnabled(train)
        self.quant_combo.setEnabled(not train)
        self.seq_in_label.setText("Sequence" if train else "Prompt")
        self.count_label.setText("GPUs" if train else "GPUs per machine")

    def current_request(self) -> SpeedRequest:
        """The request the controls describe.

        Raises:
            PlanningInputError: the training token count cannot be read.
        """
        mode = self.mode()
        tokens: float | None = None
        if mode is Mode.TRAIN:
            text = self.tokens_edit.text().strip().replace(",", "").replace("_", "")
            try:
                tokens = float(text)
            except ValueError:
                raise PlanningInputError(
                    f"training tokens {text!r} is not a number like 1e9"
                ) from None
        serve = self._serve_fields() if mode is Mode.SERVE else {}
        return SpeedRequest(
            mode=mode,
            engine=Engine(self.engine_combo.currentData()),
            quant=QuantFormat(self.quant_combo.currentData())
            if mode is not Mode.TRAIN
            else QuantFormat.BF16,
            kv_quant=KvFormat(self.kv_combo.currentData()),
            batch=self.batch_spin.value(),
            seq_in=self.seq_in_spin.value(),
            seq_out=self.seq_out_spin.value(),
            tokens=tokens,
            train_method=TrainMethod(self.method_combo.currentData()),
            checkpointing=Checkpointing(self.recompute_combo.currentData()),
            **serve,
        ).resolved()

    def _serve_fields(self) -> dict[str, object]:
        """The serving controls as :class:`SpeedRequest` fields. A layout given sets the
        GPU count (TP × PP × DP, as ``--tp 8`` alone means 8 GPUs).

        Raises:
            SpeedInputError: EP given without TP or DP to divide.
        """
        layout = {
            name: int(combo.currentData()) or None for name, combo in self.layout_combos.items()
        }
        fields: dict[str, object] = {
            "rate": self.rate_spin.value() or None,
            "concurrency": self.concurrency_spin.value() or None,
            "num_prompts": self.prompts_spin.value(),
            "dataset": self.lengths_combo.currentData(),
            "slo_ttft_ms": self.slo_ttft_spin.value() or None,
            "slo_tpot_ms": self.slo_tpot_spin.value() or None,
            "slo_e2e_ms": self.slo_e2e_spin.value() or None,
            "slo_share": self.slo_share_spin.value() / 100,
            "max_num_seqs": self.max_seqs_spin.value() or None,
            "max_num_batched_tokens": self.max_tokens_spin.value() or None,
            **layout,
        }
        if any(layout[name] is not None for name in ("tp", "pp", "dp")):
            fields["count"] = (layout["tp"] or 1) * (layout["pp"] or 1) * (layout["dp"] or 1)
        elif layout["ep"] is not None:
            raise SpeedInputError(
                "ep", "Layout EP needs TP or DP set too: the experts are split over TP × DP GPUs"
            )
        return fields

    def max_count(self) -> int:
        return int(self.count_combo.currentData())

    def layout_given(self) -> bool:
        """A serving layout is set: the GPU count is TP × PP × DP, not "up to N"."""
        return self.mode() is Mode.SERVE and any(
            self.layout_combos[name].currentData() for name in ("tp", "pp", "dp")
        )
