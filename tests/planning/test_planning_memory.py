"""Each memory rule against a hand-computed case, with the rule's source named.

GB = 10^9 bytes throughout (the estimate's ``gb`` fields); the formulas read in GiB.
"""

from __future__ import annotations

import re

import pytest

from gpudesk.memory.breakdown import (
    FRAGMENTATION_FRACTION,
    OVERHEAD_FIXED_GB,
    CrossEntropy,
    DType,
    Engine,
    KvDType,
    Optimizer,
    PartKey,
    Workload,
    WorkloadSpec,
    estimate_memory,
    kv_cache_bytes,
    lora_adapter_params,
    parse_param_count,
)
from gpudesk.workload.errors import PlanningInputError
from gpudesk.workload.presets import ModelArchitecture, find_preset, generic_architecture


def _bytes_per_param(estimate_gb: float, params: int) -> float:
    return estimate_gb * 1e9 / params


# --- parameter counts -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7B", 7_000_000_000),
        ("7b", 7_000_000_000),
        ("350M", 350_000_000),
        ("1.5T", 1_500_000_000_000),
        ("125k", 125_000),
        ("7e9", 7_000_000_000),
        ("70 B", 70_000_000_000),
        ("8,030,261,248", 8_030_261_248),
        (" 0.5B ", 500_000_000),
    ],
)
def test_parse_param_count(text: str, expected: int) -> None:
    assert parse_param_count(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("-7B", "negative"),
        ("0", "at least 1"),
        ("0B", "at least 1"),
        ("seven", "not a number"),
        ("7X", "not a number"),
        ("", "not a number"),
        ("11T", "absurd"),
        ("1e20", "absurd"),
    ],
)
def test_parse_param_count_rejects(text: str, fragment: str) -> None:
    with pytest.raises(PlanningInputError, match=fragment):
        parse_param_count(text)


# --- weights: parameters x bytes per parameter (Transformer Math 101) -------------------


def test_7b_bf16_weights_are_14_gb() -> None:
    """7e9 x 2 bytes = 14.0e9 bytes = 14.0 GB (EleutherAI, Transformer Math 101)."""
    estimate = estimate_memory(generic_architecture(7_000_000_000), WorkloadSpec(dtype=DType.BF16))
    assert estimate.part(PartKey.WEIGHTS).gb == pytest.approx(14.0, abs=1e-9)
    assert estimate.part(PartKey.WEIGHTS).formula.endswith("= 13.04 GiB")  # 14.0e9 / 2^30


@pytest.mark.parametrize(
    ("dtype", "gb"), [(DType.FP32, 28.0), (DType.FP16, 14.0), (DType.INT8, 7.0), (DType.INT4, 3.5)]
)
def test_weights_scale_with_dtype_for_a_bare_count(dtype: DType, gb: float) -> None:
    """4 / 2 / 1 / 0.5 bytes per parameter (Transformer Math 101)."""
    model = generic_architecture(7_000_000_000)
    estimate = estimate_memory(model, WorkloadSpec(dtype=dtype))
    if dtype.is_quantised:
        # Embeddings, head and norms stay 16-bit: they add (2 - bytes) per parameter.
        assert model.shape is not None
        kept = model.shape.total_params - sum(
            group.params
            for group in model.shape.tensors()
            if group.role.value.startswith(("attn", "ffn"))
        )
        gb += kept * (2 - dtype.bytes) / 1e9 * model.params / model.shape.total_params
    assert estimate.part(PartKey.WEIGHTS).gb == pytest.approx(gb)


def test_int4_llama_keeps_embeddings_in_16_bit() -> None:
    """Llama 3.1 8B int4: (8.03e9 - 2 x 128,256 x 4096) x 0.5 + 1.05e9 x 2 bytes = 5.59 GB."""
    model = find_preset("llama-3.1-8b")
    embeddings = 2 * 128_256 * 4096
    expected = ((8_030_261_248 - embeddings) * 0.5 + embeddings * 2) / 1e9
    estimate = estimate_memory(model, WorkloadSpec(dtype=DType.INT4))
    # norms (266,240 parameters) also stay 16-bit: < 0.01% more
    assert estimate.part(PartKey.WEIGHTS).gb == pytest.approx(expected, rel=1e-4)
    assert expected == pytest.approx(5.59, abs=0.01)


# --- full fine-tuning: 16 bytes per parameter (Transformer Math 101) -------------------


def test_mixed_precision_adamw_is_16_bytes_per_param_before_activations() -> None:
    """2 (bf16 weights) + 2 (bf16 grads) + 4 (fp32 master) + 4 + 4 (Adam m, v) = 16 bytes.

    EleutherAI, Transformer Math 101: "memory_optimizer = 12 bytes/param" for AdamW
    (master copy + momentum + variance), plus weights and gradients.
    """
    model = generic_architecture(7_000_000_000)
    estimate = estimate_memory(model, WorkloadSpec(workload=Workload.TRAIN, dtype=DType.BF16))
    states = sum(
        estimate.part(key).gb for key in (PartKey.WEIGHTS, PartKey.GRADIENTS, PartKey.OPTIMIZER)
    )
    assert _bytes_per_param(states, model.params) == pytest.approx(16.0)
    assert _bytes_per_param(estimate.part(PartKey.OPTIMIZER).gb, model.params) == pytest.approx(
        12.0
    )
    assert _bytes_per_param(estimate.part(PartKey.GRADIENTS).gb, model.params) == pytest.approx(2.0)
    assert "16 bytes per parameter" in estimate.part(PartKey.OPTIMIZER).formula


@pytest.mark.parametrize(
    ("optimizer", "dtype", "bytes_per_param"),
    [
        # Transformer Math 101: 8-bit AdamW = 4 (master) + 2 (two 8-bit moments).
        (Optimizer.ADAMW_8BIT, DType.BF16, 2 + 2 + 6),
        # SGD with momentum = 4 (master) + 4 (momentum).
        (Optimizer.SGD, DType.BF16, 2 + 2 + 8),
        # Pure fp32: 4 weights + 4 grads + 8 Adam moments, no master copy.
        (Optimizer.ADAMW, DType.FP32, 4 + 4 + 8),
        (Optimizer.SGD, DType.FP32, 4 + 4 + 4),
    ],
)
def test_optimizer_variants(optimizer: Optimizer, dtype: DType, bytes_per_param: float) -> None:
    model = generic_architecture(1_000_000_000)
    spec = WorkloadSpec(workload=Workload.TRAIN, dtype=dtype, optimizer=optimizer)
    estimate = estimate_memory(model, spec)
    states = sum(
        estimate.part(key).gb for key in (PartKey.WEIGHTS, PartKey.GRADIENTS, PartKey.OPTIMIZER)
    )
    assert _bytes_per_param(states, model.params) == pytest.approx(bytes_per_param)


# --- KV cache: 2 x layers x KV heads x head dim x bytes x tokens (GQA) -------------------


def test_llama_3_1_8b_kv_cache_at_8192_tokens_bf16() -> None:
    """2 x 32 layers x 8 KV heads x 128 x 2 bytes x 8,192 = 1,073,741,824 bytes = 1.07 GB.

    Grouped-query attention: Llama 3.1 8B has 32 query heads but 8 KV heads
    (config.json), so the cache is 4x smaller than from hidden size alone.
    """
    model = find_preset("llama-3.1-8b")
    estimate = estimate_memory(model, WorkloadSpec(seq=8192, dtype=DType.BF16))
    kv = estimate.part(PartKey.KV_CACHE)
    assert kv.gb * 1e9 == pytest.approx(2 * 32 * 8 * 128 * 2 * 8192)
    assert round(kv.gb, 2) == 1.07
    assert "8 KV heads" in kv.formula
    hidden_only = 2 * 32 * 4096 * 2 * 8192 / 1e9
    assert kv.gb == pytest.approx(hidden_only / 4)


def test_kv_cache_scales_with_batch_and_dtype() -> None:
    model = find_preset("llama-3.1-8b")
    base = kv_cache_bytes(model, 8192, 1, 2.0)
    assert kv_cache_bytes(model, 8192, 4, 2.0) == pytest.approx(4 * base)
    fp8 = estimate_memory(model, WorkloadSpec(seq=8192, batch=4, kv_dtype=KvDType.FP8))
    assert fp8.part(PartKey.KV_CACHE).gb * 1e9 == pytest.approx(2 * base)


def test_no_kv_cache_for_training_encoders_and_cnns() -> None:
    llama = find_preset("llama-3.1-8b")
    train = estimate_memory(llama, WorkloadSpec(workload=Workload.LORA))
    assert train.part(PartKey.KV_CACHE).gb == 0.0
    bert = estimate_memory(find_preset("bert-base"), WorkloadSpec())
    assert bert.part(PartKey.KV_CACHE).gb == 0.0
    assert "encoder" in bert.part(PartKey.KV_CACHE).formula
    assert bert.decode_bytes_per_token is None
    resnet = estimate_memory(find_preset("resnet-50"), WorkloadSpec(batch=64))
    assert resnet.part(PartKey.KV_CACHE).gb == 0.0
    assert resnet.spec.seq is None


# --- activations: Korthikanti et al. 2022 ---------------------------------------------


def test_gpt_style_activations_follow_korthikanti_without_flash_attention() -> None:
    """Per layer s·b·h·(34 + 5·a·s/h) bytes in 16-bit (Korthikanti et al. 2022, eq. 1),
    for a GPT-style block (4h MLP, dropout), plus the loss phase: fp32 log-probabilities
    and their gradient, 8·s·b·V."""
    model = generic_architecture(7_000_000_000)
    shape = model.shape
    assert shape is not None and not shape.gated_mlp
    spec = WorkloadSpec(workload=Workload.TRAIN, seq=2048, batch=1, flash_attention=False)
    activations = estimate_memory(model, spec).part(PartKey.ACTIVATIONS)
    h, a, s_ = shape.hidden, shape.heads, 2048
    per_layer = s_ * h * (34 + 5 * a * s_ / h)
    expected = shape.layers * per_layer + 8 * s_ * shape.vocab
    assert activations.gb * 1e9 == pytest.approx(expected)
    assert "Korthikanti" in activations.source
    assert "approximation" in activations.formula


def test_gated_mlp_activations_counted_tensor_by_tensor() -> None:
    """Llama 3.1 8B, s=2048: per token and layer 8·h + 4·q + 4·kv + 8·i bytes =
    8·4096 + 4·4096 + 4·1024 + 8·14336 = 167,936 (no dropout, SwiGLU)."""
    model = find_preset("llama-3.1-8b")
    spec = WorkloadSpec(workload=Workload.TRAIN, seq=2048)
    activations = estimate_memory(model, spec).part(PartKey.ACTIVATIONS)
    kept = 32 * 2048 * 167_936
    logits = 8 * 2048 * 128_256
    assert activations.gb * 1e9 == pytest.approx(kept + logits)


def test_flash_attention_drops_the_score_term() -> None:
    model = find_preset("llama-3.1-8b")
    with_flash = estimate_memory(model, WorkloadSpec(workload=Workload.TRAIN, seq=2048))
    without = estimate_memory(
        model, WorkloadSpec(workload=Workload.TRAIN, seq=2048, flash_attention=False)
    )
    scores = 32 * 2048 * 6 * 32 * 2048  # fp32 softmax + 16-bit copy, 6·a·s per token
    assert (
        without.part(PartKey.ACTIVATIONS).gb - with_flash.part(PartKey.ACTIVATIONS).gb
    ) * 1e9 == (pytest.approx(scores))


def test_full_checkpointing_keeps_2_sbh_per_layer_plus_the_larger_phase() -> None:
    """Full recomputation stores each layer's 16-bit input, 2·s·b·h (Korthikanti §4.2);
    backward then peaks at the loss (logits) or at one recomputed layer, not both."""
    model = find_preset("llama-3.1-8b")
    spec = WorkloadSpec(workload=Workload.TRAIN, seq=2048, checkpointing=True)
    activations = estimate_memory(model, spec).part(PartKey.ACTIVATIONS)
    kept = 2 * 2048 * 4096 * 32
    logits = 8 * 2048 * 128_256
    layer = 2048 * 167_936 + 2 * (2 * 14336 + 2 * 4096) * 2048
    assert activations.gb * 1e9 == pytest.approx(kept + max(logits, layer))


@pytest.mark.parametrize(
    ("loss", "logits"),
    [
        (CrossEntropy.FULL, 8 * 4096 * 128_256),
        (CrossEntropy.CHUNKED, 2 * 4096 * 128_256 + 4096 * 128_256),
        (CrossEntropy.FUSED, 8 * 4096 * 4096),
    ],
)
def test_cross_entropy_variants(loss: CrossEntropy, logits: int) -> None:
    """Full: fp32 log-probs + gradient; chunked (torchtune): 16-bit logits + one fp32
    chunk of 8; fused (Liger/CCE): one chunk of logits the size of the hidden states."""
    model = find_preset("llama-3.1-8b")
    spec = WorkloadSpec(
        workload=Workload.LORA, seq=2048, batch=2, checkpointing=True, cross_entropy=loss
    )
    activations = estimate_memory(model, spec).part(PartKey.ACTIVATIONS)
    kept = 2 * 4096 * 4096 * 32
    layer = 4096 * 167_936 + 2 * (2 * 14336 + 2 * 4096) * 4096
    assert activations.gb * 1e9 == pytest.approx(kept + max(logits, layer))


def test_offloaded_activations_keep_two_layers_on_the_gpu() -> None:
    model = find_preset("llama-3.1-8b")
    base = {"workload": Workload.LORA, "seq": 2048, "checkpointing": True}
    kept_all = estimate_memory(model, WorkloadSpec(**base)).part(PartKey.ACTIVATIONS).gb
    offloaded = estimate_memory(model, WorkloadSpec(**base, offload_activations=True))
    saved = (kept_all - offloaded.part(PartKey.ACTIVATIONS).gb) * 1e9
    assert saved == pytest.approx(2 * 2048 * 4096 * 30)


def test_fp32_doubles_activations() -> None:
    """Every stored value is 4 bytes instead of 2 (the backward transient outweighs the
    fused loss chunk here, so everything scales)."""
    model = find_preset("llama-3.1-8b")
    spec = {"workload": Workload.TRAIN, "seq": 1024, "cross_entropy": CrossEntropy.FUSED}
    half = estimate_memory(model, WorkloadSpec(**spec, dtype=DType.BF16))
    full = estimate_memory(model, WorkloadSpec(**spec, dtype=DType.FP32))
    assert full.part(PartKey.ACTIVATIONS).gb == pytest.approx(2 * half.part(PartKey.ACTIVATIONS).gb)


def test_cnn_activations_from_element_counts() -> None:
    """ResNet-50: 32,190,952 stored values per 224x224 image x 2 bytes x batch 32."""
    model = find_preset("resnet-50")
    estimate = estimate_memory(model, WorkloadSpec(workload=Workload.TRAIN, batch=32))
    assert estimate.part(PartKey.ACTIVATIONS).gb * 1e9 == pytest.approx(32_190_952 * 2 * 32)
    assert "approximation" in estimate.part(PartKey.ACTIVATIONS).formula


# --- LoRA / QLoRA --------------------------------------------------------------------


def test_lora_adapter_count_from_llama_shapes() -> None:
    """r x (d_in + d_out) per matrix (Hu et al. 2021) on q,k,v,o,gate,up,down.

    Llama 3.1 8B, rank 16: per layer 16 x [(4096+4096) + 2 x (4096+1024) + (4096+4096)
    + 3 x (4096+14336)] = 16 x 81,920; x 32 layers = 41,943,040.
    """
    count, how = lora_adapter_params(find_preset("llama-3.1-8b"), 16)
    assert count == 41_943_040
    assert "rank 16" in how


def test_qlora_base_is_nf4_with_constants() -> None:
    """NF4 4 bits + 0.127 bits of double-quantised constants per parameter (QLoRA §3)."""
    model = find_preset("llama-3.1-8b")
    estimate = estimate_memory(model, WorkloadSpec(workload=Workload.QLORA))
    embeddings = 2 * 128_256 * 4096
    adapters = 41_943_040
    expected = (8_030_261_248 - embeddings) * 4.127 / 8 + embeddings * 2 + adapters * 4
    assert estimate.part(PartKey.WEIGHTS).gb * 1e9 == pytest.approx(expected, rel=1e-4)
    # Adapters train in fp32 with AdamW: 4 (grad) + 8 (moments) bytes each.
    assert estimate.part(PartKey.GRADIENTS).gb * 1e9 == pytest.approx(adapters * 4)
    assert estimate.part(PartKey.OPTIMIZER).gb * 1e9 == pytest.approx(adapters * 8)
    assert estimate.trainable_params == adapters


def test_lora_is_far_below_full_fine_tuning() -> None:
    model = find_preset("mistral-7b")
    full = estimate_memory(model, WorkloadSpec(workload=Workload.TRAIN, checkpointing=True))
    lora = estimate_memory(model, WorkloadSpec(workload=Workload.LORA, checkpointing=True))
    qlora = estimate_memory(model, WorkloadSpec(workload=Workload.QLORA, checkpointing=True))
    assert qlora.total_gb < lora.total_gb < full.total_gb / 4


def test_unet_lora_uses_its_stated_per_rank_count() -> None:
    count, _ = lora_adapter_params(find_preset("sdxl-unet"), 16)
    assert count == 1_451_520 * 16


# --- overhead and totals --------------------------------------------------------------


def test_overhead_is_fixed_plus_fragmentation_and_the_total_adds_up() -> None:
    estimate = estimate_memory(find_preset("llama-3.1-8b"), WorkloadSpec(seq=8192))
    tensors = sum(part.gb for part in estimate.parts if part.key is not PartKey.OVERHEAD)
    overhead = estimate.part(PartKey.OVERHEAD).gb
    assert overhead == pytest.approx(OVERHEAD_FIXED_GB + FRAGMENTATION_FRACTION * tensors)
    assert estimate.total_gb == pytest.approx(tensors + overhead)
    assert set(estimate.breakdown_gb()) == {
        "weights",
        "gradients",
        "optimizer",
        "activations",
        "kv_cache",
        "overhead",
    }
    assert "GPUDesk's choice" in estimate.part(PartKey.OVERHEAD).formula


def test_per_gpu_split_counts_the_fixed_overhead_on_every_gpu() -> None:
    estimate = estimate_memory(generic_architecture(70_000_000_000), WorkloadSpec())
    one = estimate.per_gpu_gb(1)
    assert one == pytest.approx(estimate.total_gb)
    eight = estimate.per_gpu_gb(8)
    assert eight == pytest.approx((one - OVERHEAD_FIXED_GB) / 8 + OVERHEAD_FIXED_GB)


def test_every_part_has_formula_and_source() -> None:
    for workload in Workload:
        estimate = estimate_memory(find_preset("qwen2.5-7b"), WorkloadSpec(workload=workload))
        for part in estimate.parts:
            assert part.formula and part.source, (workload, part.key)


#: a figure with a decimal unit: "14.00 GB", not "GB/s"
_DECIMAL_FIGURE = re.compile(r"\d GB(?![/\w])")


@pytest.mark.parametrize(
    ("preset", "spec"),
    [
        ("qwen2.5-7b", WorkloadSpec(workload=Workload.INFERENCE)),
        ("qwen2.5-7b", WorkloadSpec(workload=Workload.INFERENCE, engine=Engine.VLLM)),
        # llama.cpp keeps Llama's untied input embeddings in host memory
        ("llama-3.1-8b", WorkloadSpec(workload=Workload.INFERENCE, engine=Engine.LLAMA_CPP)),
        ("qwen2.5-7b", WorkloadSpec(workload=Workload.TRAIN)),
        ("qwen2.5-7b", WorkloadSpec(workload=Workload.TRAIN, offload_optimizer=True)),
        ("qwen2.5-7b", WorkloadSpec(workload=Workload.QLORA, optimizer=Optimizer.PAGED_ADAMW)),
        ("resnet-50", WorkloadSpec(workload=Workload.TRAIN, batch=32)),
    ],
)
def test_formulas_and_notes_end_in_gib(preset: str, spec: WorkloadSpec) -> None:
    """Issue 42 item 9: the formulas' amounts read in GiB, the unit beside them on every
    screen; GB appears only as GPUDesk's own overhead figure, quoted as chosen."""
    estimate = estimate_memory(find_preset(preset), spec)
    amounts = 0
    for part in estimate.parts:
        if part.gb:
            assert re.search(r" = [\d,]+\.\d\d GiB", part.formula), (part.key, part.formula)
            amounts += 1
        text = part.formula.replace("GB (10^9 bytes)", "")
        assert not _DECIMAL_FIGURE.search(text), (part.key, part.formula)
    assert amounts >= 3
    assert "GB (10^9 bytes) = " in estimate.part(PartKey.OVERHEAD).formula
    for note in estimate.notes:
        assert not _DECIMAL_FIGURE.search(note), note
    if estimate.host_gb:
        assert any(re.search(r"[\d.]+ GiB live in host memory", n) for n in estimate.notes)


def test_decode_bytes_read_active_experts_only_for_moe() -> None:
    """Mixtral keeps 46.7B parameters but a token reads 12.9B (Jiang et al. 2024)."""
    model = find_preset("mixtral-8x7b")
    estimate = estimate_memory(model, WorkloadSpec(seq=1))
    assert estimate.decode_bytes_per_token is not None
    weights_read = estimate.decode_bytes_per_token - 2 * 32 * 8 * 128 * 2
    # the input embedding table is not read, only the token's row of it
    assert weights_read == pytest.approx((12_879_925_248 - 32_000 * 4096 + 4096) * 2)


# --- bad input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        (WorkloadSpec(batch=0), "batch size"),
        (WorkloadSpec(batch=-4), "batch size"),
        (WorkloadSpec(seq=0), "sequence length"),
        (WorkloadSpec(seq=100_000_000), "sequence length"),
        (WorkloadSpec(workload=Workload.LORA, lora_rank=0), "LoRA rank"),
        (WorkloadSpec(workload=Workload.TRAIN, dtype=DType.INT4), "full fine-tuning"),
        (WorkloadSpec(workload=Workload.QLORA, dtype=DType.INT8), "NF4"),
    ],
)
def test_bad_workloads_raise_clear_errors(spec: WorkloadSpec, fragment: str) -> None:
    with pytest.raises(PlanningInputError, match=fragment):
        estimate_memory(find_preset("llama-3.1-8b"), spec)


def test_seq_beyond_context_is_a_note_not_an_error() -> None:
    estimate = estimate_memory(find_preset("bert-base"), WorkloadSpec(seq=1024))
    assert any("exceeds" in note for note in estimate.notes)


def test_default_seq_is_capped_by_context() -> None:
    assert estimate_memory(find_preset("bert-base"), WorkloadSpec()).spec.seq == 512
    assert estimate_memory(find_preset("llama-3.1-8b"), WorkloadSpec()).spec.seq == 2048


def test_estimate_is_frozen() -> None:
    estimate = estimate_memory(find_preset("phi-3-mini"), WorkloadSpec())
    with pytest.raises(Exception, match="frozen"):
        estimate.trainable_params = 3  # type: ignore[misc]
    assert isinstance(estimate.model, ModelArchitecture)


def test_llama_cpp_overhead_names_no_cuda_context_alone() -> None:
    # llama.cpp's workload is sized before a GPU is chosen (Apple and AMD rows read it too)
    spec = WorkloadSpec(workload=Workload.INFERENCE, engine=Engine.LLAMA_CPP)
    estimate = estimate_memory(find_preset("llama-3.1-8b"), spec)
    formula = estimate.part(PartKey.OVERHEAD).formula
    assert "the CUDA context" not in formula
    assert "Metal" in formula and "ROCm" in formula
    assert "CUDA context" not in estimate.compares_with
