"""Measure an estimate here: prefill and decode with llama.cpp (``llama-cpp-python``).

``gpudesk speed ... --verify`` runs the same workload the estimate is for on this
machine: a prompt of ``n_prompt`` tokens in one evaluation (prefill tokens/s), then
``n_gen`` tokens decoded one at a time after it (decode tokens/s, at the context the
estimate assumes), after one warm-up evaluation, as llama-bench's ``pp`` and
``tg @ d`` tests do. Token ids are
random (speed does not depend on them); the weights are the user's GGUF file or a
random-weight GGUF of the model's exact shape written by :func:`write_random_gguf`
(no weights are ever downloaded). A time limit stops decoding between tokens and
Ctrl+C stops it cleanly; both report what was measured so far and say so.

``llama_cpp`` is imported only here and only when a run starts (the optional
``verify`` extra installs it: ``pip install '.[verify]'`` from the checkout).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from gpudesk.bench.errors import BenchError


class ModelShape(Protocol):
    """The shape fields the writer needs (a planning ModelShape has them all; bench
    sits below planning, so it names only what it reads)."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    context: int
    tied_embeddings: bool
    gated_mlp: bool
    attention_bias: bool

    @property
    def is_moe(self) -> bool: ...

    @property
    def is_mla(self) -> bool: ...


#: llama.cpp's SentencePiece vocabulary wants byte tokens for the bytes it cannot spell
_BYTE_TOKENS = 256


class VerifyError(BenchError):
    """The measurement cannot run (engine missing, model unusable); the message says why."""


@dataclasses.dataclass(frozen=True)
class VerifySettings:
    model_path: Path
    n_prompt: int
    n_gen: int
    n_gpu_layers: int = 0
    n_threads: int | None = None
    time_limit_s: float = 300.0


@dataclasses.dataclass(frozen=True)
class VerifyResult:
    prefill_tokens_per_s: float | None
    decode_tokens_per_s: float | None
    n_prompt: int
    n_gen_done: int
    seconds: float
    engine_version: str | None
    #: None when it ran to the end; else why it stopped ("time limit", "interrupted",
    #: "cancelled")
    stopped: str | None = None


def llama_cpp_version() -> str | None:
    """The installed llama-cpp-python's version, or None when it is not installed."""
    try:
        import llama_cpp
    except ImportError:
        return None
    return str(getattr(llama_cpp, "__version__", "unknown"))


def run_llama_cpp(
    settings: VerifySettings,
    *,
    clock: Callable[[], float] = time.perf_counter,
    should_stop: Callable[[], bool] | None = None,
    on_step: Callable[[float, str], None] | None = None,
) -> VerifyResult:
    """Prefill and decode ``settings.model_path`` with llama.cpp; see the module.

    ``should_stop`` (the app's Cancel) is asked before the prompt and between decoded
    tokens; once it says so the run stops as Ctrl+C does (``stopped`` "cancelled").
    ``on_step`` hears the fraction done (0..1) and the step, for a progress bar.

    Raises:
        VerifyError: llama-cpp-python is not installed or cannot load the model.
    """
    try:
        import llama_cpp
    except ImportError:
        raise VerifyError(
            "llama-cpp-python is not installed; pip install '.[verify]' from the GPUDesk "
            "checkout (it builds "
            "llama.cpp from source where no wheel fits: minutes)"
        ) from None
    version = str(getattr(llama_cpp, "__version__", "unknown"))
    # A CPU-only build (pip's default source build) ignores n_gpu_layers, so a GPU run
    # would time the CPU and store it under the GPU's name.
    supports_offload = getattr(llama_cpp, "llama_supports_gpu_offload", None)
    if settings.n_gpu_layers > 0 and callable(supports_offload) and not supports_offload():
        raise VerifyError(
            f"llama-cpp-python {version} was built without GPU offload, so llama.cpp "
            "would run every layer on the CPU; rebuild it for the GPU, e.g. "
            'CMAKE_ARGS="-DGGML_CUDA=on" pip install --no-cache-dir --force-reinstall '
            "llama-cpp-python"
        )
    start = clock()
    try:
        llm: Any = llama_cpp.Llama(
            model_path=str(settings.model_path),
            n_ctx=max(64, settings.n_prompt + settings.n_gen + 16),
            n_batch=max(1, min(512, settings.n_prompt)),
            n_gpu_layers=settings.n_gpu_layers,
            n_threads=settings.n_threads,
            seed=0,
            verbose=False,
        )
    except (ValueError, RuntimeError, OSError) as exc:
        raise VerifyError(f"llama.cpp cannot load {settings.model_path}: {exc}") from None
    vocab = int(llm.n_vocab())
    rng = random.Random(0)

    def tokens(count: int) -> list[int]:
        return [
            rng.randrange(_BYTE_TOKENS if vocab > _BYTE_TOKENS else 0, vocab) for _ in range(count)
        ]

    prefill: float | None = None
    decode: float | None = None
    done = 0
    stopped: str | None = None

    def stop_asked() -> bool:
        return should_stop is not None and should_stop()

    def step(fraction: float, message: str) -> None:
        if on_step is not None:
            on_step(fraction, message)

    began = clock()
    try:
        step(0.0, "warming up")
        llm.eval(tokens(min(8, settings.n_prompt) or 1))  # warm-up, as llama-bench does
        llm.reset()
        if settings.n_prompt and not stop_asked():
            step(0.05, f"prompt of {settings.n_prompt} tokens")
            began = clock()
            llm.eval(tokens(settings.n_prompt))
            prefill = settings.n_prompt / max(clock() - began, 1e-9)
        began = clock()
        for index in range(settings.n_gen):
            if stop_asked():
                stopped = "cancelled"
                break
            if clock() - start > settings.time_limit_s:
                stopped = "time limit"
                break
            llm.eval(tokens(1))
            done += 1
            if index % 8 == 0:
                step(0.1 + 0.9 * done / settings.n_gen, f"decoding {done}/{settings.n_gen}")
        if stopped is None and stop_asked():
            stopped = "cancelled"  # asked during the prompt: its figure may be cut short
        if done:
            decode = done / max(clock() - began, 1e-9)
    except KeyboardInterrupt:
        stopped = "interrupted"
        if done:
            decode = done / max(clock() - began, 1e-9)
    finally:
        close = getattr(llm, "close", None)
        if callable(close):
            close()
    return VerifyResult(
        prefill_tokens_per_s=prefill,
        decode_tokens_per_s=decode,
        n_prompt=settings.n_prompt,
        n_gen_done=done,
        seconds=clock() - start,
        engine_version=version,
        stopped=stopped,
    )


# -- a random-weight GGUF of a model's exact shape -------------------------------------


class TooLargeError(VerifyError):
    """The file would be larger than the limit the user set."""


def _llama_tensors(shape: ModelShape) -> list[tuple[str, tuple[int, ...]]]:
    kv = shape.kv_heads * shape.head_dim
    q = shape.heads * shape.head_dim
    names: list[tuple[str, tuple[int, ...]]] = [("token_embd.weight", (shape.vocab, shape.hidden))]
    for i in range(shape.layers):
        names += [
            (f"blk.{i}.attn_norm.weight", (shape.hidden,)),
            (f"blk.{i}.attn_q.weight", (q, shape.hidden)),
            (f"blk.{i}.attn_k.weight", (kv, shape.hidden)),
            (f"blk.{i}.attn_v.weight", (kv, shape.hidden)),
            (f"blk.{i}.attn_output.weight", (shape.hidden, q)),
            (f"blk.{i}.ffn_norm.weight", (shape.hidden,)),
            (f"blk.{i}.ffn_gate.weight", (shape.intermediate, shape.hidden)),
            (f"blk.{i}.ffn_up.weight", (shape.intermediate, shape.hidden)),
            (f"blk.{i}.ffn_down.weight", (shape.hidden, shape.intermediate)),
        ]
    names.append(("output_norm.weight", (shape.hidden,)))
    if not shape.tied_embeddings:
        names.append(("output.weight", (shape.vocab, shape.hidden)))
    return names


def random_gguf_bytes(shape: ModelShape, ggml_type: str = "Q8_0") -> int:
    """The tensor bytes :func:`write_random_gguf` would write."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    total = 0
    for _, dims in _llama_tensors(shape):
        kind = GGMLQuantizationType.F32 if len(dims) == 1 else GGMLQuantizationType[ggml_type]
        block, size = GGML_QUANT_SIZES[kind]
        elements = 1
        for dim in dims:
            elements *= dim
        total += elements // block * size
    return total


def write_random_gguf(
    shape: ModelShape, path: Path, *, ggml_type: str = "Q8_0", max_bytes: int, seed: int = 0
) -> int:
    """A llama-architecture GGUF of ``shape`` with random weights; returns its tensor bytes.

    Dense decoders only (llama.cpp's ``llama`` graph: gated MLP, grouped-query
    attention). Norms are F32, 2-D weights ``ggml_type`` (Q8_0 or F16).

    Raises:
        TooLargeError: the file would exceed ``max_bytes``.
        VerifyError: a shape this writer cannot express (mixture of experts, MLA, a
            plain MLP, rows that are not whole Q8_0 blocks).
    """
    import numpy as np
    from gguf import GGMLQuantizationType, GGUFWriter
    from gguf.quants import quantize

    if shape.is_moe or shape.is_mla or not shape.gated_mlp or shape.attention_bias:
        raise VerifyError(
            "a random-weight GGUF is written for dense llama-style decoders only; give the "
            "model's own file with --gguf"
        )
    if ggml_type not in ("Q8_0", "F16"):
        raise VerifyError(f"ggml type {ggml_type} is not written (Q8_0 or F16)")
    if ggml_type == "Q8_0" and (shape.hidden % 32 or shape.intermediate % 32):
        raise VerifyError("Q8_0 needs row lengths that are multiples of 32; use F16")
    needed = random_gguf_bytes(shape, ggml_type)
    if needed > max_bytes:
        raise TooLargeError(
            f"a random-weight GGUF of this shape is {needed / 1e9:.2f} GB, over the "
            f"{max_bytes / 1e9:.2f} GB limit (raise --max-file-gb, or give --gguf FILE)"
        )
    rng = np.random.default_rng(seed)
    writer = GGUFWriter(str(path), "llama")
    writer.add_name("gpudesk random weights")
    writer.add_block_count(shape.layers)
    writer.add_embedding_length(shape.hidden)
    writer.add_feed_forward_length(shape.intermediate)
    writer.add_head_count(shape.heads)
    writer.add_head_count_kv(shape.kv_heads)
    writer.add_key_length(shape.head_dim)
    writer.add_value_length(shape.head_dim)
    writer.add_context_length(shape.context)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(shape.head_dim)
    writer.add_vocab_size(shape.vocab)
    writer.add_file_type(7 if ggml_type == "Q8_0" else 1)
    writer.add_tokenizer_model("llama")
    byte_tokens = [f"<0x{i:02X}>" for i in range(min(_BYTE_TOKENS, shape.vocab))]
    words = [f"w{i}" for i in range(shape.vocab - len(byte_tokens))]
    writer.add_token_list(byte_tokens + words)
    writer.add_token_scores([0.0] * shape.vocab)
    writer.add_token_types([6] * len(byte_tokens) + [1] * len(words))  # BYTE, NORMAL
    writer.add_bos_token_id(min(1, shape.vocab - 1))
    writer.add_eos_token_id(min(2, shape.vocab - 1))
    for name, dims in _llama_tensors(shape):
        values = (rng.standard_normal(dims, dtype=np.float32) * 0.02).astype(np.float32)
        if len(dims) == 1:
            writer.add_tensor(name, np.ones(dims, dtype=np.float32))
        elif ggml_type == "F16":
            writer.add_tensor(name, values.astype(np.float16))
        else:
            data = quantize(values, GGMLQuantizationType.Q8_0)
            writer.add_tensor(name, data, raw_shape=data.shape, raw_dtype=GGMLQuantizationType.Q8_0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return needed


# -- this machine's CPU as a device the speed model can estimate -------------------------


def measure_cpu(seconds: float = 0.6) -> tuple[float, float]:
    """This machine's memory copy bandwidth (GB/s, read + write) and FP32 GEMM TFLOPS,
    best of a few short NumPy runs (the same kinds of figure the catalog holds)."""
    import numpy as np

    size = 64 * 2**20
    a = np.ones(size // 8, dtype=np.float64)
    b = np.zeros_like(a)  # touched: page faults stay out of the timing
    best_copy = 0.0
    runs = 0
    end = time.perf_counter() + seconds / 2
    while time.perf_counter() < end or runs < 3:
        runs += 1
        began = time.perf_counter()
        np.copyto(b, a)
        best_copy = max(best_copy, 2 * size / (time.perf_counter() - began) / 1e9)
    n = 1024
    x = np.ones((n, n), dtype=np.float32)
    y = np.ones((n, n), dtype=np.float32)
    out = np.empty((n, n), dtype=np.float32)
    best_gemm = 0.0
    runs = 0
    end = time.perf_counter() + seconds / 2
    while time.perf_counter() < end or runs < 3:
        runs += 1
        began = time.perf_counter()
        np.matmul(x, y, out=out)
        best_gemm = max(best_gemm, 2 * n**3 / (time.perf_counter() - began) / 1e12)
    return best_copy, best_gemm
