"""``speed --verify --engine vllm``: measure the estimate's workload with vLLM's Python API.

Written against vLLM's offline API (``vllm.LLM``, ``vllm.SamplingParams``; vLLM 0.10/0.11
signatures) and tested with a stand-in module that has the same call signatures and
output objects. **It has never run against a real vLLM**: vLLM needs a CUDA GPU and none
was available where this was built.

What it does, all in one process:

1. ``vllm.LLM(model, skip_tokenizer_init=True, load_format="dummy", ...)``: the model's
   ``config.json`` from the folder or Hugging Face repository, random weights of its
   shape (vLLM's dummy loader: no weights are downloaded or read) unless the user gave
   a ``--safetensors`` folder, whose own weights are then loaded. No tokenizer: prompts
   are token ids (``{"prompt_token_ids": [...]}``), sampling keeps ``detokenize=False``.
2. A one-token warm-up, then prefill: ``generate`` with ``max_tokens=1`` over the prompt,
   timed; prefill tokens/s = prompt tokens / that time.
3. Decode: ``generate`` with ``max_tokens=n_gen, ignore_eos=True``, timed; decode tokens/s
   = (generated tokens - 1) / (time - prefill time). Where vLLM fills
   ``RequestOutput.metrics`` (V0 did; V1 leaves it ``None``), its ``first_token_time`` and
   ``finished_time`` are used instead of the wall clock.

``LLM.generate`` blocks and cannot be stopped half-way, so the time limit is checked
between the steps; Ctrl+C ends the run (``stopped="interrupted"``, nothing stored).
"""

from __future__ import annotations

import importlib
import importlib.util
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpudesk.bench.verify import VerifyError


@dataclass(frozen=True)
class VllmSettings:
    model: str  # a Hugging Face repository id or a local folder with config.json
    n_prompt: int
    n_gen: int
    vocab: int
    max_model_len: int
    tensor_parallel: int = 1
    utilisation: float = 0.9
    dtype: str = "auto"
    quantization: str | None = None
    dummy_weights: bool = True
    time_limit_s: float = 300.0


@dataclass(frozen=True)
class VllmMeasured:
    engine_version: str
    prefill_tokens_per_s: float | None
    decode_tokens_per_s: float | None
    n_gen_done: int
    seconds: float
    stopped: str | None  # None, "time limit" or "interrupted"
    timing: str  # "wall clock" or "RequestOutput.metrics"


def vllm_version() -> str | None:
    """vLLM's version where it can be imported, else None (nothing is imported to ask)."""
    if importlib.util.find_spec("vllm") is None:
        return None
    try:
        module = importlib.import_module("vllm")
    except Exception:  # a broken install is "not usable", whatever it raises
        return None
    return str(getattr(module, "__version__", "unknown"))


def _metrics_seconds(outputs: Sequence[Any]) -> float | None:
    """Decode seconds from RequestOutput.metrics (first token to finish), if every output has it."""
    spans = []
    for output in outputs:
        metrics = getattr(output, "metrics", None)
        first = getattr(metrics, "first_token_time", None)
        finished = getattr(metrics, "finished_time", None)
        if not isinstance(first, int | float) or not isinstance(finished, int | float):
            return None
        spans.append(finished - first)
    return max(spans) if spans and max(spans) > 0 else None


def run_vllm(
    settings: VllmSettings, *, clock: Callable[[], float] = time.perf_counter
) -> VllmMeasured:
    """Prefill, then decode, of ``settings``' lengths with vLLM (see the module)."""
    version = vllm_version()
    if version is None:
        raise VerifyError("vLLM is not installed here (it needs a CUDA GPU): pip install vllm")
    vllm = importlib.import_module("vllm")
    started = clock()
    ids = random.Random(0).choices(range(min(settings.vocab, 32_000)), k=settings.n_prompt)
    prompts = [{"prompt_token_ids": ids}]
    stopped: str | None = None
    prefill = decode = None
    generated = 0
    timing = "wall clock"
    try:
        try:
            llm = vllm.LLM(
                model=settings.model,
                skip_tokenizer_init=True,
                tensor_parallel_size=settings.tensor_parallel,
                gpu_memory_utilization=settings.utilisation,
                max_model_len=settings.max_model_len,
                dtype=settings.dtype,
                quantization=settings.quantization,
                load_format="dummy" if settings.dummy_weights else "auto",
                seed=0,
            )
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # vLLM raises many kinds at start-up
            raise VerifyError(f"vLLM could not start {settings.model}: {exc}") from exc
        one = vllm.SamplingParams(max_tokens=1, temperature=0.0, ignore_eos=True, detokenize=False)
        llm.generate(prompts, one, use_tqdm=False)  # warm-up: kernels, CUDA graphs
        begin = clock()
        llm.generate(prompts, one, use_tqdm=False)
        prefill_s = clock() - begin
        prefill = settings.n_prompt / prefill_s if prefill_s > 0 and settings.n_prompt else None
        if settings.n_gen and clock() - started > settings.time_limit_s:
            stopped = "time limit"
        elif settings.n_gen:
            params = vllm.SamplingParams(
                max_tokens=settings.n_gen, temperature=0.0, ignore_eos=True, detokenize=False
            )
            begin = clock()
            outputs = llm.generate(prompts, params, use_tqdm=False)
            total_s = clock() - begin
            generated = sum(len(output.outputs[0].token_ids) for output in outputs)
            measured = _metrics_seconds(outputs)
            if measured is not None:
                timing, decode_s = "RequestOutput.metrics", measured
            else:
                decode_s = total_s - prefill_s
            if generated > 1 and decode_s > 0:
                decode = (generated - 1) / decode_s
    except KeyboardInterrupt:
        stopped = "interrupted"
    return VllmMeasured(
        engine_version=version,
        prefill_tokens_per_s=prefill,
        decode_tokens_per_s=decode,
        n_gen_done=generated,
        seconds=clock() - started,
        stopped=stopped,
        timing=timing,
    )
