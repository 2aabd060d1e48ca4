"""How fast a workload runs on a GPU (or N of them), with a range, a limit and a basis.

:func:`estimate_speed` turns a :class:`SpeedRequest`, a model's :class:`ModelCosts` and a
GPU's :class:`DeviceRates` into a :class:`SpeedEstimate`, using the efficiencies fitted to
the published measurements (:mod:`gpudesk.speed.fitting`). Every figure says
what limits it (memory bandwidth, compute, fixed overhead, the KV pool) and the numbers
behind it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from gpudesk.memory.breakdown import OVERHEAD_FIXED_GB
from gpudesk.memory.offload import Offload
from gpudesk.speed.data import Checkpointing
from gpudesk.speed.hardware import DeviceRates, Precision
from gpudesk.speed.physics import (
    ALLREDUCES_PER_LAYER,
    Efficiency,
    Gpus,
    HostPart,
    ModelCosts,
    decode_bound_bytes,
    decode_bound_tokens_per_s,
    decode_step,
    kv_read_factor,
    moe_dispatch_s,
    prefill_bound_s,
    prefill_time,
    serve_bound_tokens_per_s,
    train_flops_per_token,
    train_tokens_per_s_per_gpu,
    with_dispatch,
)
from gpudesk.workload.architecture import ModelShape
from gpudesk.workload.errors import PlanningInputError
from gpudesk.workload.quant import GGML_BITS, QuantFormat, weight_bytes

MAX_COUNT = 100_000
MAX_BATCH = 65_536
MAX_SEQ = 10_000_000
MAX_TRAIN_TOKENS = 1e16

#: Share of each GPU's memory a serving engine gives to weights + KV cache (vLLM's
#: gpu_memory_utilization default is 0.9; TensorRT-LLM's kv_cache_free_gpu_mem_fraction
#: is 0.9 of what the weights leave free).
KV_POOL_MEMORY_FRACTION = 0.9


class Engine(StrEnum):
    LLAMA_CPP = "llama.cpp"
    VLLM = "vllm"
    SGLANG = "sglang"
    TENSORRT_LLM = "tensorrt-llm"
    TRANSFORMERS = "transformers"

    @property
    def splits_layers(self) -> bool:
        """llama.cpp puts whole layers on each GPU and runs them in turn; the others
        split every matrix (tensor parallelism) and run the GPUs together."""
        return self is Engine.LLAMA_CPP

    def weights_in_gguf(self, mode: Mode) -> bool:
        """Whether ``mode`` runs the model's GGUF file (llama.cpp inference), whose
        tensor types are not the safetensors release's (``model_costs(gguf=...)``)."""
        return self is Engine.LLAMA_CPP and mode is not Mode.TRAIN

    @property
    def max_sequences(self) -> int | None:
        """The engine's default cap on sequences decoding together (None: no cap)."""
        return _MAX_SEQS[self]


#: vLLM EngineArgs max_num_seqs default 256; TensorRT-LLM LlmArgs max_batch_size 2048.
#: SGLang has no fixed default: with --max-running-requests unset the scheduler takes
#: min(clamp(pool tokens / context_len x 512, 2048, 4096), pool tokens // 2)
#: (sgl-project/sglang python/sglang/srt/model_executor/model_runner.py init_memory_pool
#: and managers/scheduler.py, v0.5.x); 2048 whenever the pool holds fewer than four
#: contexts, which is the usual case (:func:`gpudesk.speed.under_load.engine_limits`
#: computes it from the pool).
_MAX_SEQS: dict[Engine, int | None] = {
    Engine.LLAMA_CPP: None,
    Engine.VLLM: 256,
    Engine.SGLANG: 2048,
    Engine.TENSORRT_LLM: 2048,
    Engine.TRANSFORMERS: None,
}


class Backend(StrEnum):
    """llama.cpp's compute backends (``GGML_CUDA``, ``GGML_HIP``, ``GGML_VULKAN``, ...)."""

    CUDA = "cuda"
    ROCM = "rocm"
    VULKAN = "vulkan"
    METAL = "metal"
    SYCL = "sycl"
    CPU = "cpu"


#: The backend llama.cpp builds for each vendor's GPUs by default.
DEFAULT_BACKEND = {
    "nvidia": Backend.CUDA,
    "amd": Backend.ROCM,
    "apple": Backend.METAL,
    "intel": Backend.SYCL,
}


def backend_for(vendor: str, backend: Backend | None) -> Backend:
    """``backend``, or the vendor's default (Vulkan for a vendor without one)."""
    return backend if backend is not None else DEFAULT_BACKEND.get(vendor, Backend.VULKAN)


#: llama.cpp computes a prompt ``n_ubatch`` tokens at a time (its default, 512).
LLAMA_CPP_UBATCH = 512


class Mode(StrEnum):
    DECODE = "decode"
    PREFILL = "prefill"
    SERVE = "serve"
    TRAIN = "train"


class TrainMethod(StrEnum):
    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


class KvFormat(StrEnum):
    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"
    Q8_0 = "q8_0"
    Q4_0 = "q4_0"

    @property
    def bytes_per_value(self) -> float:
        if self is KvFormat.Q8_0:
            return GGML_BITS["Q8_0"] / 8
        if self is KvFormat.Q4_0:
            return GGML_BITS["Q4_0"] / 8
        return {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0}[self.value]


class SpeedInputError(PlanningInputError):
    """A request value that cannot be used; ``field`` names the :class:`SpeedRequest` field."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


class SpeedRequest(BaseModel):
    """What to estimate. Lengths left None take the mode's defaults (see :meth:`resolved`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode
    engine: Engine = Engine.VLLM
    #: llama.cpp only: the compute backend; None = the GPU vendor's default
    backend: Backend | None = None
    quant: QuantFormat = QuantFormat.BF16
    kv_quant: KvFormat = KvFormat.FP16
    count: int = 1
    batch: int = 1
    #: serve: at most this many requests in flight (``vllm bench serve
    #: --max-concurrency``); None = no cap
    concurrency: int | None = None
    #: serve: requests per second (Poisson arrivals); None = all sent at once
    rate: float | None = None
    #: serve: requests in the simulated benchmark
    num_prompts: int = 1000
    #: serve: each prompt and output length drawn uniformly within this share of
    #: ``seq_in`` and ``seq_out`` either side (``vllm bench serve --random-range-ratio``)
    random_range_ratio: float = 0.0
    #: serve: how prompt and output lengths are drawn around ``seq_in`` and ``seq_out``
    #: (``vllm bench serve --dataset-name``): "random" (``random_range_ratio``) or
    #: "sharegpt" (ShareGPT's heavy-tailed shape averaging them,
    #: :mod:`gpudesk.speed.sharegpt_lengths`)
    dataset: str = "random"
    #: serve: SLO bounds in ms (None: no bound) and the share of requests to meet them
    slo_ttft_ms: float | None = None
    slo_tpot_ms: float | None = None
    slo_e2e_ms: float | None = None
    slo_share: float = 0.9
    #: serve with an SLO: requests per rate in the highest-rate search (None: num_prompts)
    slo_search_prompts: int | None = None
    #: serve with an SLO: search the highest rate meeting it (False: the share meeting it
    #: at the requested rate only, the ranking's cheap comparison of layouts and counts)
    slo_rate_search: bool = True
    #: serve: the engine's scheduler limits (None: the engine's defaults for the GPU)
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    #: serve: longest request the engine accepts, and its share of each GPU's memory
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    seq_in: int | None = None
    seq_out: int | None = None
    #: decode: KV-cache length while decoding; None = seq_in + seq_out / 2
    context: int | None = None
    #: train: tokens to train on (time and cost of the run)
    tokens: float | None = None
    train_method: TrainMethod = TrainMethod.FULL
    checkpointing: Checkpointing = Checkpointing.NONE
    #: train: hardware FLOPs utilisation to use instead of the fitted one
    mfu: float | None = None
    #: llama.cpp partial offload as the user set it: -ngl and --n-cpu-moe (None: auto)
    gpu_layers: int | None = None
    cpu_moe: int | None = None
    #: parallel layout (tensor, pipeline, context, expert, data); None = the default.
    #: serve and decode: tp x pp x dp is the GPU count; train: each divides it
    tp: int | None = None
    pp: int | None = None
    cp: int | None = None
    ep: int | None = None
    dp: int | None = None

    def resolved(self) -> SpeedRequest:
        """Defaults filled in and every value checked.

        Raises:
            SpeedInputError: a value out of range; ``field`` names it.
        """
        defaults = {
            Mode.DECODE: (512, 256),
            Mode.PREFILL: (2048, 1),
            Mode.SERVE: (1024, 256),
            Mode.TRAIN: (4096, 1),
        }[self.mode]
        seq_in = self.seq_in if self.seq_in is not None else defaults[0]
        seq_out = self.seq_out if self.seq_out is not None else defaults[1]
        _check_int("count", self.count, 1, MAX_COUNT)
        _check_int("batch", self.batch, 1, MAX_BATCH)
        _check_int("seq_in", seq_in, 1, MAX_SEQ)
        _check_int("seq_out", seq_out, 1, MAX_SEQ)
        if self.concurrency is not None:
            _check_int("concurrency", self.concurrency, 1, MAX_BATCH)
        if (
            self.max_model_len is not None
            and self.mode is Mode.SERVE
            and seq_in + seq_out > self.max_model_len
        ):
            raise SpeedInputError(
                "max_model_len",
                f"a request of {seq_in:,} + {seq_out:,} tokens is longer than max_model_len "
                f"{self.max_model_len:,}: the engine would refuse it",
            )
        context = self.context
        if context is None:
            context = seq_in + seq_out // 2
        _check_int("context", context, 0, MAX_SEQ)
        if self.tokens is not None and not (
            math.isfinite(self.tokens) and 1 <= self.tokens <= MAX_TRAIN_TOKENS
        ):
            raise SpeedInputError(
                "tokens", f"tokens {self.tokens:g} must be 1 to {MAX_TRAIN_TOKENS:g}"
            )
        if self.mfu is not None and not (math.isfinite(self.mfu) and 0 < self.mfu <= 1):
            raise SpeedInputError("mfu", f"utilisation {self.mfu:g} must be above 0 and at most 1")
        if self.backend is not None and self.engine is not Engine.LLAMA_CPP:
            raise SpeedInputError(
                "backend", f"a backend is llama.cpp's choice; {self.engine.value} has none"
            )
        for name in ("tp", "pp", "cp", "ep", "dp"):
            value = getattr(self, name)
            if value is not None:
                _check_int(name, value, 1, MAX_COUNT)
                if self.count % value:
                    raise SpeedInputError(
                        name, f"{name} {value} must divide the GPU count {self.count:,}"
                    )
        if self.mode is Mode.TRAIN:
            model_parallel = (self.tp or 1) * (self.pp or 1) * (self.cp or 1)
            if self.count % model_parallel:
                raise SpeedInputError(
                    "tp",
                    f"tp × pp × cp = {model_parallel:,} must divide the GPU count {self.count:,}",
                )
        else:
            self._check_inference_layout()
        self._check_serving()
        if self.mode is Mode.TRAIN and self.train_method is TrainMethod.QLORA:
            quant = QuantFormat.NF4
        else:
            quant = self.quant
        return self.model_copy(
            update={"seq_in": seq_in, "seq_out": seq_out, "context": context, "quant": quant}
        )

    def _check_inference_layout(self) -> None:
        """Serve and decode: tp x pp x dp GPUs in all; experts over a divisor of tp x dp."""
        if self.cp is not None:
            raise SpeedInputError("cp", "context parallelism is a training layout")
        given = [name for name in ("tp", "pp", "dp") if getattr(self, name) is not None]
        if given:
            product = (self.tp or 1) * (self.pp or 1) * (self.dp or 1)
            if self.tp is None or self.dp is None:
                if self.count % product:
                    raise SpeedInputError(
                        given[0], f"tp × pp × dp = {product:,} must divide the GPU count"
                    )
            elif product != self.count:
                raise SpeedInputError(
                    "tp", f"tp × pp × dp = {product:,} must equal the GPU count {self.count:,}"
                )
        if self.ep is not None:
            tp, dp = self.inference_layout()[0], self.inference_layout()[2]
            if (tp * dp) % self.ep:
                raise SpeedInputError(
                    "ep", f"ep {self.ep} must divide tp × dp = {tp * dp:,} (vLLM's rule)"
                )

    def inference_layout(self) -> tuple[int, int, int, int]:
        """(tp, pp, dp, ep) of serve or decode: what is not given fills the GPU count, one
        tensor-parallel instance first."""
        pp = self.pp or 1
        if self.tp is not None:
            tp = self.tp
            dp = self.dp or max(1, self.count // (tp * pp))
        else:
            dp = self.dp or 1
            tp = max(1, self.count // (pp * dp))
        return tp, pp, dp, self.ep or 1

    def _check_serving(self) -> None:
        _check_int("num_prompts", self.num_prompts, 1, 100_000)
        if not (
            isinstance(self.random_range_ratio, float | int) and 0 <= self.random_range_ratio < 1
        ):
            raise SpeedInputError(
                "random_range_ratio",
                f"random range ratio {self.random_range_ratio!r} must be from 0 to below 1",
            )
        self._check_dataset()
        if self.rate is not None and not (
            (math.isfinite(self.rate) and 0 < self.rate <= 1e6) or math.isinf(self.rate)
        ):
            raise SpeedInputError("rate", f"rate {self.rate:g} must be requests/s above 0 or inf")
        for name in ("slo_ttft_ms", "slo_tpot_ms", "slo_e2e_ms"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and 0 < value <= 1e9):
                raise SpeedInputError("slo", f"{name[4:]} {value:g} must be milliseconds above 0")
        if not (math.isfinite(self.slo_share) and 0 < self.slo_share <= 1):
            raise SpeedInputError("slo", f"p {self.slo_share * 100:g} must be above 0 and ≤ 100")
        if self.max_num_seqs is not None:
            _check_int("max_num_seqs", self.max_num_seqs, 1, MAX_BATCH)
        if self.max_num_batched_tokens is not None:
            _check_int("max_num_batched_tokens", self.max_num_batched_tokens, 1, MAX_SEQ)
            seqs = self.max_num_seqs
            if seqs is not None and self.max_num_batched_tokens < seqs:
                raise SpeedInputError(
                    "max_num_batched_tokens",
                    f"max_num_batched_tokens {self.max_num_batched_tokens:,} must be at least "
                    f"max_num_seqs {seqs:,} (vLLM refuses it too)",
                )
        if self.max_model_len is not None:
            _check_int("max_model_len", self.max_model_len, 1, MAX_SEQ)
        if self.gpu_memory_utilization is not None and not (
            math.isfinite(self.gpu_memory_utilization) and 0 < self.gpu_memory_utilization <= 1
        ):
            raise SpeedInputError(
                "gpu_memory_utilization",
                f"gpu_memory_utilization {self.gpu_memory_utilization:g} must be above 0 and ≤ 1",
            )

    def _check_dataset(self) -> None:
        from gpudesk.speed import sharegpt_lengths
        from gpudesk.speed.serving import DATASETS

        if self.dataset not in DATASETS:
            raise SpeedInputError(
                "dataset", f"dataset {self.dataset!r} is not one of {', '.join(DATASETS)}"
            )
        if self.dataset != "sharegpt":
            return
        if self.random_range_ratio:
            raise SpeedInputError(
                "random_range_ratio",
                "--random-range-ratio applies to the random dataset; ShareGPT lengths have "
                "their own spread",
            )
        low = sharegpt_lengths.MIN_MEAN_TOKENS
        for name, value, high in (
            ("seq_in", self.seq_in, sharegpt_lengths.MAX_MEAN_PROMPT_TOKENS),
            ("seq_out", self.seq_out, sharegpt_lengths.MAX_MEAN_OUTPUT_TOKENS),
        ):
            if value is not None and not low <= value <= high:
                raise SpeedInputError(
                    name,
                    f"ShareGPT requests average {low} to {high:,} tokens ({name} {value:,}): "
                    "its client keeps prompts up to 1,024 and prompt + output up to 2,048",
                )

    @property
    def has_slo(self) -> bool:
        return any(
            value is not None for value in (self.slo_ttft_ms, self.slo_tpot_ms, self.slo_e2e_ms)
        )

    @property
    def label(self) -> str:
        """ "decode, llama.cpp, GGUF Q4_K_M, context 768" and the like."""
        bits = [self.mode.value]
        if self.mode is Mode.TRAIN:
            bits.append(self.train_method.value)
            bits.append(f"sequence {self.seq_in}")
            if self.checkpointing is Checkpointing.FULL:
                bits.append("full recomputation")
        else:
            bits += [self.engine.value, self.quant.label]
            if self.mode is Mode.DECODE:
                bits.append(f"batch {self.batch}, context {self.context}")
            elif self.mode is Mode.PREFILL:
                bits.append(f"{self.seq_in} prompt tokens")
            else:
                rate = (
                    "all at once"
                    if self.rate is None or math.isinf(self.rate)
                    else (f"{self.rate:g} requests/s")
                )
                bits.append(f"{self.seq_in} in / {self.seq_out} out, {rate}")
                if self.concurrency is not None:
                    bits.append(f"at most {self.concurrency} in flight")
        if self.count > 1:
            bits.append(f"{self.count} GPUs")
        return ", ".join(bits)


def _check_int(field: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SpeedInputError(
            field, f"{field} {value!r} must be a whole number from {low} to {high:,}"
        )


# -- model costs ------------------------------------------------------------------------


def model_costs(
    shape: ModelShape, quant: QuantFormat, kv_quant: KvFormat, *, gguf: bool = False
) -> ModelCosts:
    """Bytes and FLOPs per token of ``shape`` stored in ``quant`` (weights from quant.py;
    ``gguf``: as llama.cpp's GGUF file of the format)."""
    weights = weight_bytes(shape, quant, gguf=gguf)
    # The input embedding is a lookup, not a matmul; a tied table is also the LM head.
    matmul_active = shape.active_params - (0 if shape.tied_embeddings else shape.embedding_params)
    per_layer = shape.kv_values_per_token_per_layer() * kv_quant.bytes_per_value
    return ModelCosts(
        layers=shape.layers,
        hidden=shape.hidden,
        matmul_params_active=float(matmul_active),
        params_total=float(shape.total_params),
        attention_width=_attention_width(shape),
        decode_attention_width=_decode_attention_width(shape),
        full_layers=shape.layers - shape.sliding_layers,
        sliding_layers=shape.sliding_layers,
        sliding_window=shape.sliding_window,
        kv_bytes_per_token=per_layer * shape.layers,
        streamed_bytes=weights.streamed_per_token_bytes,
        in_memory_bytes=weights.in_memory_bytes,
        input_embedding_bytes=weights.input_embedding_bytes,
        experts=shape.experts,
        active_experts=shape.active_experts,
        kv_replicated=shape.is_mla,
        shape=shape,
    )


def _attention_width(shape: ModelShape) -> int:
    """Width whose 4 x per query-key pair is the attention FLOPs of a prompt token.

    Multi-head latent attention (DeepSeek-V2/V3) computes a prompt with the full heads:
    QK over ``qk_nope + qk_rope`` dims, PV over ``v_head_dim`` (DeepSeek-V3 report,
    arXiv:2412.19437, section 2.1.1), so 2 x heads x (qk + v) per pair."""
    if shape.is_mla:
        assert shape.qk_nope_head_dim and shape.qk_rope_head_dim and shape.v_head_dim
        qk = shape.qk_nope_head_dim + shape.qk_rope_head_dim
        return shape.heads * (qk + shape.v_head_dim) // 2
    return shape.heads * shape.head_dim


def _decode_attention_width(shape: ModelShape) -> int:
    """MLA decode as engines run it, the up-projections absorbed: each head's QK over the
    latent and the rope part (``kv_lora_rank + qk_rope``), PV over the latent
    (``kv_lora_rank``); 0 (the prompt's width) for other attention."""
    if not shape.is_mla:
        return 0
    assert shape.kv_lora_rank and shape.qk_rope_head_dim
    return shape.heads * (2 * shape.kv_lora_rank + shape.qk_rope_head_dim) // 2


def compute_precision(quant: QuantFormat, rates: DeviceRates, engine: Engine | None) -> Precision:
    """The matmul rate a format runs at on an engine.

    llama.cpp multiplies GGUF weights with int8 tensor-core kernels (MMQ) and 16-bit ones
    through cuBLAS with FP16 accumulation; the other engines (and training) use FP8
    tensor cores for FP8 weights where the GPU has them, and the dense 16-bit (FP32
    accumulate) rate for 16-bit and weight-only formats, which they dequantise.
    """
    if quant is QuantFormat.FP32:
        return Precision.FP32
    if engine is Engine.LLAMA_CPP:
        return Precision.INT8 if quant.is_gguf else Precision.FP16_ACC16
    if quant is QuantFormat.FP8 and rates.has_fp8:
        return Precision.FP8
    return Precision.FP16


def dtype_class(quant: QuantFormat, rates: DeviceRates, engine: Engine | None) -> str:
    """What a fitted efficiency curve is keyed by besides engine and vendor: "16-bit"
    (plain floating point), "fp8" (FP8 tensor cores: an engine other than llama.cpp on a
    GPU with them) or "quantized" (weights expanded on the fly: GGUF, AWQ, GPTQ, ...)."""
    if quant.is_plain:
        return "16-bit"
    if quant is QuantFormat.FP8 and rates.has_fp8 and engine is not Engine.LLAMA_CPP:
        return "fp8"
    return "quantized"


# -- the estimate -----------------------------------------------------------------------


class Roofline(BaseModel):
    """Where a workload sits: its FLOPs per byte against the GPU's ridge point."""

    model_config = ConfigDict(frozen=True)

    flops_per_byte: float
    ridge_flops_per_byte: float
    memory_s: float
    compute_s: float
    overhead_s: float
    bandwidth_gbs: float
    peak_tflops: float


class SpeedEstimate(BaseModel):
    """One GPU's (or N GPUs') answer. Fields that do not apply to the mode are None."""

    model_config = ConfigDict(frozen=True)

    gpu_id: str
    name: str
    count: int
    mode: Mode
    #: decode/serve: output tokens/s; prefill: prompt tokens/s; train: tokens/s, all GPUs
    tokens_per_s: float
    low: float
    high: float
    bound_tokens_per_s: float
    limited_by: str
    #: tokens_per_s / bound_tokens_per_s
    efficiency: float
    basis: str
    time_to_first_token_s: float | None = None
    time_s: float | None = None
    concurrency: int | None = None
    tokens_per_s_per_gpu: float | None = None
    roofline: Roofline
    calibrated: str | None = None
    #: filled by :func:`gpudesk.speed.costs.with_costs`
    usd_per_million_tokens: float | None = None
    usd_total: float | None = None
    usd_per_million_tokens_rent: float | None = None
    usd_per_million_tokens_own: float | None = None
    usd_total_rent: float | None = None
    usd_total_own: float | None = None
    cost_basis: str | None = None
    #: llama.cpp on one GPU with part of the model in host memory (decode)
    offload: Offload | None = None
    #: fit's memory model: what each GPU needs (on the GPU, with an offload) and may use
    memory_per_gpu_gb: float | None = None
    usable_per_gpu_gb: float | None = None
    #: serve: copies of the model, each on ``count / replicas`` GPUs splitting tensors
    #: (data parallel); None: one copy on all ``count``
    replicas: int | None = None
    #: serve and decode: {"tp", "pp", "dp", "ep"}
    layout: dict[str, int] | None = None
    #: serve: the simulated benchmark's latencies, {"ttft_ms", "tpot_ms", "itl_ms",
    #: "e2e_ms"}, each {"p50", "p90", "p99", "mean"}
    latency: dict[str, dict[str, float]] | None = None
    requests_per_s: float | None = None
    #: serve with an SLO: requests/s meeting every bound, and the highest Poisson rate at
    #: which the SLO's share of requests meets them (None: no rate does)
    goodput_rps: float | None = None
    max_rate_at_slo: float | None = None
    slo: dict[str, float | None] | None = None
    #: serve with an SLO: the rates simulated on the way, (rate, share met, TTFT p50,
    #: TTFT p90, TPOT p50, TPOT p90), for the latency-throughput chart
    rate_curve: tuple[tuple[float, float, float, float, float, float], ...] | None = None
    #: serve: the scheduler simulated (limits, KV blocks, requests, preemptions, source)
    scheduler: dict[str, object] | None = None


class NotRunnable(PlanningInputError):
    """The workload cannot run on this GPU set (no room for even one sequence)."""


class Spread(BaseModel):
    """Measured / estimated ratios of the fitted measurements: the range they support."""

    model_config = ConfigDict(frozen=True)

    low_ratio: float = Field(gt=0)
    high_ratio: float = Field(gt=0)
    rows: int
    basis: str


def _gpus(rates: DeviceRates, request: SpeedRequest, precision: Precision) -> Gpus:
    """The GPUs at the datasheet peak of ``precision``: what bounds are computed at."""
    return Gpus(
        bandwidth_gbs=rates.bandwidth_gbs,
        peak_tflops=rates.peak_tflops(precision),
        count=request.count,
        layer_split=request.engine.splits_layers,
        link_gbs=rates.link.allreduce_gbs(request.count),
    )


def kernel_precision(rates: DeviceRates, request: SpeedRequest) -> Precision:
    """The dense tensor rate the engine's matrix kernels run at: what fitted compute
    shares are shares of.

    llama.cpp's CUDA backend multiplies F16 weights through cuBLAS with
    ``CUBLAS_COMPUTE_16F`` unless the op asks for F32 precision (BF16 weights with
    ``CUBLAS_COMPUTE_32F``; ggml-org/llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu at
    00108827, ``ggml_cuda_mul_mat_cublas``). GeForce cards run FP16-accumulate tensor math
    at twice the FP32-accumulate rate the catalog's 16-bit figure is (RTX 4090: 330.3 vs
    165.2 TFLOPS dense, NVIDIA Ada whitepaper); professional and data-centre cards at the
    same rate (:attr:`DeviceRates.fp16_acc16_tflops`). Quantised GGUF weights in a
    prompt-sized batch are shares of that peak too: on Volta, and in builds before June
    2024, llama.cpp dequantises them and multiplies in cuBLAS FP16; where a current
    build's MMQ kernels multiply them on int8 tensor cores the share may pass it
    (:func:`int8_mmq`, :func:`share_cap`). FP8 weights on FP8 tensor cores (the other
    engines, :func:`compute_precision`) are shares of the dense FP8 peak: a share is what
    a kernel reaches of the rate its instructions run at, so one curve's figure carries
    from FP8 rows to 16-bit ones of the same engine and never passes 1. Everything else
    is a share of the dense 16-bit (FP32-accumulate) peak.
    """
    if (
        request.engine is Engine.LLAMA_CPP
        and (request.quant is QuantFormat.FP16 or request.quant.is_gguf)
        and rates.vendor == "nvidia"
        and backend_for(rates.vendor, request.backend) is Backend.CUDA
    ):
        return Precision.FP16_ACC16
    engine = None if request.mode is Mode.TRAIN else request.engine
    if compute_precision(request.quant, rates, engine) is Precision.FP8:
        return Precision.FP8
    return Precision.FP16


def int8_mmq(rates: DeviceRates, request: SpeedRequest, *, older_build: bool = False) -> bool:
    """Whether llama.cpp multiplies ``request``'s prompt on int8 tensor cores.

    Its CUDA backend's quantised matmul (MMQ) runs on int8 tensor cores from Turing on
    (:data:`~gpudesk.speed.hardware.INT8_MMA_FAMILIES`); since PR #8075 (2024-06-23) it is
    the default there, while Volta (FP16 tensor cores, no int8 MMA) dequantises a batch of
    64 or more into cuBLAS FP16 (``ggml_cuda_should_use_mmq``, ggml-org/llama.cpp
    ggml/src/ggml-cuda/mmq.cu at 027ef876). ``older_build``: a build before
    :data:`~gpudesk.speed.data.CURRENT_BUILDS_FROM`; the data's are all from before that PR
    (XiongjieDai's May 2024 tables, PR #4766's January 2024 ones), so they ran cuBLAS
    FP16. PR #24127's llama-bench table (one 2026 build, Llama 3 8B, pp512) shows both
    paths: an RTX 4090 at 12,394 tokens/s with Q4_K_S at a micro-batch of 512, where the
    May 2024 build measured 7,139 with Q4_K_M; a V100-PCIE-32GB at 3,331 with Q5_0, its
    micro-batch-64 row below its micro-batch-32 one (822 vs 1,062 tokens/s with Q5_1)
    where cuBLAS takes over from MMQ.
    """
    return (
        request.engine is Engine.LLAMA_CPP
        and request.quant.is_gguf
        and rates.has_int8_mma
        and backend_for(rates.vendor, request.backend) is Backend.CUDA
        and not older_build
    )


def fitted_gpus(rates: DeviceRates, request: SpeedRequest) -> Gpus:
    """The GPUs as the fitted efficiencies see them: every efficiency is a share of the
    dense peak the engine's kernels run at (:func:`kernel_precision`), the same rule for
    every GPU, so a GPU with a lower such peak and lower bandwidth is never faster."""
    return Gpus(
        bandwidth_gbs=rates.bandwidth_gbs,
        peak_tflops=rates.peak_tflops(kernel_precision(rates, request)),
        count=request.count,
        layer_split=request.engine.splits_layers,
        hbm=rates.memory_class == "hbm",
        link_gbs=rates.link.allreduce_gbs(request.count),
    )


def compute_cap(rates: DeviceRates, precision: Precision) -> float:
    """The most a fitted compute share (of the 16-bit peak) may be for ``precision``."""
    if precision is Precision.FP8 and rates.fp16_tflops > 0:
        return max(1.0, rates.fp8_tflops / rates.fp16_tflops)
    return 1.0


def share_cap(rates: DeviceRates, request: SpeedRequest, *, older_build: bool = False) -> float:
    """The most a fitted compute share of the kernels' peak (:func:`kernel_precision`)
    may be: the int8 peak over it where MMQ runs on int8 tensor cores (:func:`int8_mmq`:
    2 on every such GPU, GeForce's int8 being twice its FP16-accumulate rate as elsewhere),
    else :func:`compute_cap` of the format's precision."""
    if int8_mmq(rates, request, older_build=older_build):
        peak = rates.peak_tflops(kernel_precision(rates, request))
        return max(1.0, rates.int8_tops / peak) if peak > 0 else 1.0
    if kernel_precision(rates, request) is Precision.FP8:
        return 1.0
    engine = None if request.mode is Mode.TRAIN else request.engine
    return compute_cap(rates, compute_precision(request.quant, rates, engine))


def within_peak(
    eff: Efficiency, rates: DeviceRates, precision: Precision, *, cap: float | None = None
) -> Efficiency:
    """``eff`` with its compute share of the peak the kernels run at
    (:func:`kernel_precision`) at most 1, or for FP8 tensor cores the FP8 peak over the
    16-bit one (``cap``: :func:`share_cap`'s, where the request is known): no curve
    makes a GPU beat its datasheet, and the cap is the same share for every GPU of a
    format."""
    cap = compute_cap(rates, precision) if cap is None else cap
    if eff.compute <= cap:
        return eff
    return replace(eff, compute=cap)


def prefill_chunk(engine: Engine) -> int | None:
    """Tokens an engine computes at a time in a prompt (None: the whole prompt)."""
    return LLAMA_CPP_UBATCH if engine is Engine.LLAMA_CPP else None


def kv_pool_bytes(rates: DeviceRates, costs: ModelCosts, count: int) -> float:
    """What is left for KV cache beside the weights and each GPU's workspace."""
    total = count * rates.memory_gb * 1e9 * KV_POOL_MEMORY_FRACTION
    return total - costs.in_memory_bytes - count * OVERHEAD_FIXED_GB * 1e9


def _roofline(
    flops: float, bytes_read: float, gpus: Gpus, memory_s: float, compute_s: float, over: float
) -> Roofline:
    return Roofline(
        flops_per_byte=flops / bytes_read if bytes_read > 0 else 0.0,
        ridge_flops_per_byte=gpus.flops_s / gpus.bandwidth_bytes_s,
        memory_s=memory_s,
        compute_s=compute_s,
        overhead_s=over,
        bandwidth_gbs=gpus.bandwidth_bytes_s / 1e9,
        peak_tflops=gpus.flops_s / 1e12,
    )


def _range(value: float, spread: Spread, cap: float | None) -> tuple[float, float]:
    low, high = value * spread.low_ratio, value * spread.high_ratio
    if cap is not None:
        high = min(high, cap)
        low = min(low, cap)
    return low, max(high, value if cap is None else min(value, cap))


def _check_link(rates: DeviceRates, gpus: Gpus) -> None:
    """Tensors split over a link whose vendor published no rate: not estimated (an
    all-reduce over an unknown link has no time; never PCIe's or 0 GB/s)."""
    if gpus.tensor_parallel and not rates.link.rate_published:
        raise NotRunnable(
            f"{rates.name} × {gpus.count}: {rates.link.words(gpus.count)}, so tensors split "
            "over it cannot be estimated"
        )


def estimate_speed(
    rates: DeviceRates,
    costs: ModelCosts,
    request: SpeedRequest,
    eff: Efficiency,
    spread: Spread,
    eff_basis: str,
    *,
    kv_pool: float | None = None,
    offload: Offload | None = None,
) -> SpeedEstimate:
    """The estimate for one GPU type at ``request.count`` GPUs.

    ``eff`` and ``eff_basis`` come from the fit for this engine and GPU generation (for
    training ``eff.compute`` is the utilisation), ``spread`` from its residuals.
    ``kv_pool``: serving's KV pool in bytes, all GPUs together, when the caller has
    sized it from the memory model (:func:`gpudesk.speed.holding.kv_pool_bytes`);
    None: :func:`kv_pool_bytes` here. ``offload``: decode with llama.cpp's partial
    offload (:func:`gpudesk.memory.offload.plan_offload`), the host part read at the
    host's bandwidth.

    Raises:
        NotRunnable: serving with no room for one sequence's KV cache.
    """
    request = request.resolved()
    engine = None if request.mode is Mode.TRAIN else request.engine
    precision = compute_precision(request.quant, rates, engine)
    gpus = _gpus(rates, request, precision)
    fit = fitted_gpus(rates, request)
    if request.mode is not Mode.TRAIN:
        eff = with_dispatch(
            within_peak(eff, rates, precision, cap=share_cap(rates, request)), rates.vendor
        )
        if request.mode is not Mode.SERVE:
            _check_link(rates, fit)
    assert request.seq_in is not None and request.seq_out is not None
    assert request.context is not None
    calibrated = rates.calibration_note
    common = {"gpu_id": rates.gpu_id, "name": rates.name, "count": request.count}
    peak_text = f"{rates.peak_tflops(precision):,.0f} TFLOPS dense {precision.value}"
    if precision is Precision.FP16:
        peak_text = f"{rates.fp16_tflops:,.0f} TFLOPS dense ({rates.fp16_kind})"
    elif precision is Precision.INT8:
        peak_text = f"{rates.int8_tops:,.0f} TOPS dense int8"
    if request.mode is Mode.DECODE and any(
        getattr(request, name) is not None for name in ("tp", "pp", "dp", "ep")
    ):
        return _decode_layout(rates, costs, request, eff, spread, eff_basis, offload)
    if request.mode is Mode.DECODE:
        return _decode(
            rates, costs, request, eff, spread, eff_basis, gpus, fit, common, calibrated, offload
        )
    if request.mode is Mode.PREFILL:
        chunk = prefill_chunk(request.engine)
        times = prefill_time(
            costs, fit, eff, tokens=request.seq_in, batch=request.batch, chunk=chunk
        )
        tokens = request.batch * request.seq_in
        value = tokens / times.total_s
        bound = tokens / prefill_bound_s(costs, gpus, tokens=request.seq_in, batch=request.batch)
        low, high = _range(value, spread, bound)
        flops = request.batch * costs.prefill_flops(request.seq_in)
        in_flight = tokens if chunk is None else min(tokens, chunk)
        share = eff.matmul_share(in_flight, costs.hidden, fit.peak_tflops)
        basis = (
            f"{flops / 1e12:,.2f} TFLOP for {tokens:,} prompt tokens (2 × "
            f"{costs.matmul_params_active / 1e9:.2f}B active parameters × tokens + attention) at "
            f"{_share_words(share, rates, fit.peak_tflops, kernel_precision(rates, request))} "
            f"({in_flight:,} "
            f"tokens × {costs.hidden:,} wide in flight; bound at {peak_text}) × "
            f"{_gpu_words(gpus)} + {costs.layers} layers × {eff.layer_s * 1e6:.0f} us"
            + _comm_words(times.comm_s, rates, fit)
            + f"; {eff_basis}"
        )
        return SpeedEstimate(
            **common,
            mode=request.mode,
            tokens_per_s=value,
            low=low,
            high=high,
            bound_tokens_per_s=bound,
            limited_by=times.limited_by,
            efficiency=value / bound,
            basis=basis,
            time_to_first_token_s=times.total_s,
            roofline=_roofline(
                flops,
                costs.in_memory_bytes,
                gpus,
                times.memory_s,
                times.compute_s,
                times.overhead_s,
            ),
            calibrated=calibrated,
        )
    if request.mode is Mode.SERVE:
        return _serve(
            rates, costs, request, eff, spread, eff_basis, gpus, fit, common, calibrated, kv_pool
        )
    return _train(rates, costs, request, eff, spread, eff_basis, precision, common, calibrated)


def _layout_words(request: SpeedRequest) -> str:
    parts = [
        f"{name} {getattr(request, name)}"
        for name in ("tp", "pp", "cp", "ep")
        if getattr(request, name) is not None
    ]
    return f"; layout {', '.join(parts)} as given" if parts else ""


def _comm_words(comm_s: float, rates: DeviceRates, fit: Gpus) -> str:
    if not fit.tensor_parallel:
        return ""
    return (
        f" + {ALLREDUCES_PER_LAYER} all-reduces per layer over {rates.link.words(fit.count)}"
        f" ({comm_s * 1e3:.2f} ms)"
    )


def _share_words(
    share: float,
    rates: DeviceRates,
    peak_tflops: float | None = None,
    kind: Precision = Precision.FP16,
) -> str:
    """A compute share of the dense peak the kernels run at (``kind``: 16-bit, FP16 with
    FP16 accumulation, or FP8) in words; above 100% (int8 MMQ outruns cuBLAS FP16, an FP8
    training share of the 16-bit peak) also as a share of the int8 or FP8 peak, so that
    it does not read as a slip."""
    peak = rates.fp16_tflops if peak_tflops is None else peak_tflops
    what = {Precision.FP16_ACC16: "FP16 with FP16 accumulation", Precision.FP8: "FP8"}.get(
        kind, "16-bit"
    )
    words = f"{share:.0%} of {peak:,.0f} TFLOPS dense {what}"
    if kind is Precision.FP8:
        return words
    if kind is Precision.FP16_ACC16 and share > 1 and rates.int8_tops > peak:
        int8 = rates.int8_tops
        return words + f" ({share * peak / int8:.0%} of the {int8:,.0f} TOPS dense int8 peak)"
    if share > 1 and rates.fp16_tflops > 0 and rates.fp8_tflops > rates.fp16_tflops:
        ratio = rates.fp8_tflops / rates.fp16_tflops
        words += f" ({share / ratio:.0%} of the {peak * ratio:,.0f} TFLOPS dense FP8 peak)"
    return words


def _gpu_words(gpus: Gpus) -> str:
    if gpus.count == 1:
        return "1 GPU"
    how = "layers split, one GPU at a time" if gpus.layer_split else "tensor parallel"
    return f"{gpus.count} GPUs ({how})"


def _decode(
    rates: DeviceRates,
    costs: ModelCosts,
    request: SpeedRequest,
    eff: Efficiency,
    spread: Spread,
    eff_basis: str,
    gpus: Gpus,
    fit: Gpus,
    common: dict[str, object],
    calibrated: str | None,
    offload: Offload | None = None,
) -> SpeedEstimate:
    assert request.context is not None and request.seq_in is not None
    batch, context = request.batch, request.context
    host = None
    if offload is not None:
        host = HostPart(
            weight_bytes=offload.host_streamed_bytes,
            kv_share=offload.host_kv_share,
            bandwidth_gbs=offload.host.bandwidth_gbs,
        )
    step = decode_step(costs, fit, eff, batch=batch, context=context, host=host)
    value = batch / step.total_s
    bound = decode_bound_tokens_per_s(costs, gpus, batch=batch, context=context)
    if host is not None:
        perfect = Efficiency(bandwidth=1.0, compute=1.0, layer_s=0.0)
        bound = (
            batch
            / decode_step(costs, gpus, perfect, batch=batch, context=context, host=host).total_s
        )
    low, high = _range(value, spread, bound)
    read = decode_bound_bytes(costs, batch=batch, context=context)
    basis = (
        f"{read / 1e9:.2f} GB read per step ({costs.weights_read(batch) / 1e9:.2f} GB of weights "
        f"streamed, no input-embedding table; {batch * costs.kv_bytes(context) / 1e9:.3f} GB KV "
        f"cache at {context:,} tokens × {batch}) at {eff.bandwidth_share(fit):.0%} of "
        f"{gpus.bandwidth_bytes_s / 1e9:,.0f} GB/s ({_gpu_words(gpus)}) + {costs.layers} layers "
        f"× {eff.layer_s * 1e6:.0f} us per token"
        + _comm_words(step.comm_s, rates, fit)
        + (
            f" + {gpus.count - 1} GPU hand-overs × {eff.hop_s * 1e3:.2f} ms"
            if gpus.layer_split and gpus.count > 1
            else ""
        )
        + (
            f"; partial offload, {offload.words}: {offload.host_streamed_bytes / 1e9:.2f} GB "
            f"per token read from host memory at {offload.host.bandwidth_gbs:,.0f} GB/s "
            f"({offload.host.basis}) after the GPU's part"
            if offload is not None
            else ""
        )
        + f"; {eff_basis}"
    )
    prefill = prefill_time(
        costs, fit, eff, tokens=request.seq_in, batch=batch, chunk=prefill_chunk(request.engine)
    )
    flops = batch * costs.decode_flops(context)
    return SpeedEstimate(
        **common,
        mode=request.mode,
        tokens_per_s=value,
        low=low,
        high=high,
        bound_tokens_per_s=bound,
        limited_by=step.limited_by,
        efficiency=value / bound,
        basis=basis,
        time_to_first_token_s=prefill.total_s,
        roofline=_roofline(flops, read, gpus, step.memory_s, step.compute_s, step.overhead_s),
        calibrated=calibrated,
        offload=offload,
    )


def _decode_layout(
    rates: DeviceRates,
    costs: ModelCosts,
    request: SpeedRequest,
    eff: Efficiency,
    spread: Spread,
    eff_basis: str,
    offload: Offload | None,
) -> SpeedEstimate:
    """Decode on a stated layout: one instance (tp GPUs splitting tensors, its pipeline
    stages in turn, each hand-over :data:`PIPELINE_HOP_S`), and ``dp`` copies each
    decoding ``batch`` sequences."""
    tp, pp, dp, ep = request.inference_layout()
    per_instance = tp * pp if request.engine.splits_layers else tp
    inner = request.model_copy(
        update={"count": per_instance, "tp": None, "pp": None, "dp": None, "ep": None}
    )
    one = estimate_speed(rates, costs, inner, eff, spread, eff_basis, offload=offload)
    hops = 0.0 if request.engine.splits_layers else (pp - 1) * PIPELINE_HOP_S
    scale = 1.0
    if hops:
        step = request.batch / one.tokens_per_s
        scale = step / (step + hops)
    words = f"layers split over {per_instance} GPUs" if request.engine.splits_layers else f"TP-{tp}"
    if pp > 1 and not request.engine.splits_layers:
        words += f", {pp} pipeline stages in turn ({PIPELINE_HOP_S * 1e6:.0f} us per hand-over)"
    if dp > 1:
        words += f", {dp} copies each decoding {request.batch}"
    layout = {"tp": tp, "pp": pp, "dp": dp, "ep": ep}
    if request.engine.splits_layers:
        layout = {"tp": 1, "pp": tp * pp, "dp": dp, "ep": ep}
    return one.model_copy(
        update={
            "count": tp * pp * dp,
            "tokens_per_s": one.tokens_per_s * scale * dp,
            "low": one.low * scale * dp,
            "high": one.high * scale * dp,
            "bound_tokens_per_s": one.bound_tokens_per_s * dp,
            "replicas": dp if dp > 1 else None,
            "layout": layout,
            "basis": f"{words}: {one.basis}",
        }
    )


#: Seconds a pipeline stage hands a step's activations to the next (a peer-to-peer send
#: of tokens x hidden 16-bit values is small; its latency is what counts): assumed, as
#: for NCCL's send/recv latency on one node (nccl-tests report ~10-20 us).
PIPELINE_HOP_S = 20e-6


def _serve(
    rates: DeviceRates,
    costs: ModelCosts,
    request: SpeedRequest,
    eff: Efficiency,
    spread: Spread,
    eff_basis: str,
    gpus: Gpus,
    fit: Gpus,
    common: dict[str, object],
    calibrated: str | None,
    kv_pool: float | None = None,
) -> SpeedEstimate:
    """Serving: the engine's scheduler simulated on the layout (``under_load``)."""
    from gpudesk.speed.serving import SimulationError
    from gpudesk.speed.under_load import (
        Layout,
        LoadSpec,
        Slo,
        engine_limits,
        instance_step,
        kv_blocks_for,
        serve_under_load,
    )

    assert request.seq_in is not None and request.seq_out is not None
    seq_in, seq_out = request.seq_in, request.seq_out
    tp, pp, dp, ep = request.inference_layout()
    reported = Layout(tp=tp, pp=pp, dp=dp, ep=ep)
    if request.engine.splits_layers:
        # llama.cpp runs its layers one GPU after another, without pipelining batches
        layout = Layout(tp=tp * pp, dp=dp)
        reported = Layout(tp=1, pp=tp * pp, dp=dp)
    else:
        layout = reported
    instance = request.model_copy(
        update={"count": layout.tp, "tp": None, "pp": None, "dp": None, "ep": None}
    )
    fit = fitted_gpus(rates, instance)
    _check_link(rates, fit)
    bound_gpus = _gpus(rates, instance, compute_precision(request.quant, rates, request.engine))
    pool = kv_pool if kv_pool is not None else kv_pool_bytes(rates, costs, layout.per_instance)
    blocks = kv_blocks_for(pool, costs, seq_in=seq_in, seq_out=seq_out) if pool > 0 else 0
    if blocks * 16 < seq_in + seq_out:
        raise NotRunnable(
            f"{rates.name} × {tp * pp}: no room for the KV cache of one "
            f"{seq_in + seq_out:,}-token sequence beside "
            f"{costs.in_memory_bytes / 1e9:.1f} GB of weights"
        )
    # SGLang derives its running cap from the pool and the model's context length
    context_len = request.max_model_len or (
        costs.shape.context if costs.shape is not None else seq_in + seq_out
    )
    limits = engine_limits(
        request.engine.value,
        gpu_name=rates.name,
        memory_gb=rates.memory_gb,
        max_num_seqs=request.max_num_seqs,
        max_num_batched_tokens=request.max_num_batched_tokens,
        kv_tokens=blocks * 16,
        context_len=context_len,
    )
    slo = (
        Slo(request.slo_ttft_ms, request.slo_tpot_ms, request.slo_e2e_ms, request.slo_share)
        if request.has_slo
        else None
    )
    load = LoadSpec(
        seq_in=seq_in,
        seq_out=seq_out,
        num_prompts=request.num_prompts,
        rate=request.rate if request.rate is not None else math.inf,
        concurrency=request.concurrency,
        slo=slo,
        length_spread=float(request.random_range_ratio),
        dataset="sharegpt" if request.dataset == "sharegpt" else "random",
        search_prompts=request.slo_search_prompts,
    )
    step = instance_step(costs, fit, eff, layout, hop_s=PIPELINE_HOP_S)
    try:
        result = serve_under_load(
            step, layout, limits, blocks, load, find_max_rate=request.slo_rate_search
        )
    except SimulationError as error:
        raise NotRunnable(f"{rates.name} × {layout.gpus}: {error}") from error
    run = result.run
    copies = layout.dp * layout.pp
    value = result.output_tokens_per_s
    running = max(1, round(run.mean_running))
    context = seq_in + seq_out / 2
    bound = copies * serve_bound_tokens_per_s(
        costs, bound_gpus, concurrency=running, seq_in=seq_in, seq_out=seq_out
    )
    bound = max(bound, value)
    low, high = _range(value, spread, bound)
    offered = math.inf
    if not math.isinf(load.rate):
        # a deployment outputs no more than the requests sent ask for
        offered = load.rate * seq_out
        high = max(value, min(high, offered))
    steady = decode_step(costs, fit, eff, batch=running, context=context)
    limited = "kv_pool" if run.preemptions else steady.limited_by
    kv_read = running * costs.kv_bytes(context) * kv_read_factor(costs, fit)
    read = costs.weights_read(running) + kv_read
    flops = running * costs.decode_flops(context)
    rate_words = (
        "all sent at once"
        if math.isinf(load.rate)
        else f"Poisson arrivals at {load.rate:g} requests/s"
    )
    cap_words = f", at most {load.concurrency:,} in flight" if load.concurrency else ""
    comm_words = ""
    if fit.tensor_parallel:
        comm_words = (
            f"; {ALLREDUCES_PER_LAYER} all-reduces per layer over "
            f"{rates.link.words(fit.count)} take {steady.comm_s / steady.total_s:.0%} of a "
            "decode step"
        )
    if kv_read_factor(costs, fit) > 1:
        comm_words += (
            f"; the latent KV cache ({running * costs.kv_bytes(context) / 1e9:.1f} GB) is read "
            f"whole by each of the {fit.count} GPUs (multi-head latent attention)"
        )
    dispatch = moe_dispatch_s(costs, running, eff, expert_parallel=layout.ep)
    if dispatch > 0:
        comm_words += (
            f"; routing tokens to experts adds {dispatch * 1e3:.1f} ms a decode step "
            f"({eff.moe_layer_s * 1e6:.0f} us per MoE layer + {eff.expert_s * 1e6:.2f} us per "
            f"expert touched, chosen on published MoE serving runs for {rates.vendor} GPUs)"
        )
    basis = (
        f"{reported.words if not request.engine.splits_layers else _gpu_words(fit)}; "
        "the engine's scheduler simulated step by step over "
        f"{request.num_prompts:,} requests of {seq_in:,} + {seq_out:,} tokens"
        f"{' on average, ShareGPT-shaped' if request.dataset == 'sharegpt' else ''} ({rate_words}"
        f"{cap_words}): max_num_seqs {limits.max_num_seqs:,}, max_num_batched_tokens "
        f"{limits.max_num_batched_tokens:,} ({limits.source}), a KV pool of "
        f"{pool / 1e9:,.1f} GB = {blocks:,} blocks of 16 tokens per copy; "
        f"{run.mean_running:,.0f} requests running on average (at most {run.peak_running:,}), "
        f"{run.preemptions:,} preemptions. A decode step of {running:,} sequences reads "
        f"{read / 1e9:.1f} GB at {eff.bandwidth_share(fit):.0%} of "
        f"{fit.bandwidth_bytes_s / 1e9:,.0f} GB/s and computes {flops / 1e12:.2f} TFLOP at "
        f"{_share_words(eff.compute, rates, fit.flops_s / 1e12, kernel_precision(rates, request))}"
        f"; prompts are batched into the same steps{comm_words}; {eff_basis}"
    )
    if request.engine is Engine.SGLANG:
        basis += (
            "; SGLang is priced with vLLM's fitted step efficiencies (no published SGLang "
            "measurement in the fit) and scheduled by vLLM V1's rules with SGLang's limits "
            "and KV pool"
        )
    scheduler: dict[str, object] = {
        "max_num_seqs": limits.max_num_seqs,
        "max_num_batched_tokens": limits.max_num_batched_tokens,
        "kv_blocks": blocks,
        "block_size": 16,
        "kv_pool_gb": round(pool / 1e9, 3),
        "num_prompts": request.num_prompts,
        "random_range_ratio": request.random_range_ratio,
        "dataset": request.dataset,
        "slo_search_prompts": request.slo_search_prompts or request.num_prompts,
        "preemptions": run.preemptions,
        "mean_running": round(run.mean_running, 2),
        "peak_running": run.peak_running,
        "keeps_up": run.keeps_up,
        "steps": run.steps,
        "source": limits.source,
    }
    return SpeedEstimate(
        **{**common, "count": reported.gpus},
        mode=request.mode,
        tokens_per_s=value,
        low=low,
        high=high,
        bound_tokens_per_s=bound,
        limited_by=limited,
        efficiency=value / bound,
        basis=basis,
        time_to_first_token_s=run.ttft_ms.p50 / 1e3,
        concurrency=run.peak_running * copies,
        roofline=_roofline(
            flops, read, bound_gpus, steady.memory_s, steady.compute_s, steady.overhead_s
        ),
        calibrated=calibrated,
        replicas=dp if dp > 1 else None,
        layout=reported.as_dict(),
        latency=result.latency_dict(),
        requests_per_s=result.requests_per_s,
        goodput_rps=result.goodput_rps,
        max_rate_at_slo=result.max_rate_at_slo,
        slo=slo.as_dict() if slo is not None else None,
        rate_curve=result.rate_curve or None,
        scheduler=scheduler,
    )


def _train(
    rates: DeviceRates,
    costs: ModelCosts,
    request: SpeedRequest,
    eff: Efficiency,
    spread: Spread,
    eff_basis: str,
    precision: Precision,
    common: dict[str, object],
    calibrated: str | None,
) -> SpeedEstimate:
    assert request.seq_in is not None
    frozen = request.train_method is not TrainMethod.FULL
    recompute = request.checkpointing is Checkpointing.FULL
    # The fitted utilisation is a share of the dense 16-bit peak with the format's gain in
    # it (FP8 trains about x1.3-1.5 faster, not x2: NeMo, llm-foundry); --mfu is a share
    # of the format's own peak, as MFU is usually quoted.
    if request.mfu is not None:
        utilisation, used_peak = request.mfu, rates.peak_tflops(precision)
    else:
        utilisation, used_peak = eff.compute, rates.fp16_tflops
    peak = rates.peak_tflops(precision)
    per_gpu = train_tokens_per_s_per_gpu(
        costs,
        used_peak,
        utilisation,
        seq=request.seq_in,
        frozen_base=frozen,
        full_recompute=recompute,
    )
    bound_per_gpu = train_tokens_per_s_per_gpu(
        costs, peak, 1.0, seq=request.seq_in, frozen_base=frozen, full_recompute=recompute
    )
    value = per_gpu * request.count
    bound = bound_per_gpu * request.count
    if request.mfu is not None:
        low, high = value, value
        where = f"utilisation {utilisation:.0%} as given"
    else:
        low, high = _range(value, spread, bound)
        where = f"{utilisation:.0%} of the {used_peak:,.0f} TFLOPS dense 16-bit peak; {eff_basis}"
    flops = train_flops_per_token(
        costs, seq=request.seq_in, frozen_base=frozen, full_recompute=recompute
    )
    factor = flops / costs.matmul_params_active
    method = {
        TrainMethod.FULL: "",
        TrainMethod.LORA: " (LoRA: frozen base, no weight gradients; adapters not counted)",
        TrainMethod.QLORA: (
            " (QLoRA: as LoRA, computing in 16-bit; the NF4 dequantisation cost is not in "
            "the published data and not counted, so this is optimistic)"
        ),
    }[request.train_method]
    basis = (
        f"{factor:.1f} × {costs.matmul_params_active / 1e9:.2f}B parameters FLOPs per token"
        + (
            f" (active of {costs.params_total / 1e9:.0f}B: the experts a token is routed to)"
            if costs.experts is not None
            else ""
        )
        + f"{' with full recomputation' if recompute else ''}{method} over "
        f"{request.count:,} GPUs × {where}" + _layout_words(request)
    )
    time_s = request.tokens / value if request.tokens is not None else None
    return SpeedEstimate(
        **common,
        mode=request.mode,
        tokens_per_s=value,
        low=low,
        high=high,
        bound_tokens_per_s=bound,
        limited_by="compute",
        efficiency=value / bound,
        basis=basis,
        time_s=time_s,
        tokens_per_s_per_gpu=per_gpu,
        roofline=Roofline(
            flops_per_byte=0.0,
            ridge_flops_per_byte=peak * 1e12 / (rates.bandwidth_gbs * 1e9),
            memory_s=0.0,
            compute_s=1.0 / per_gpu,
            overhead_s=0.0,
            bandwidth_gbs=rates.bandwidth_gbs,
            peak_tflops=peak,
        ),
        calibrated=calibrated,
    )
