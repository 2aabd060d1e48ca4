"""A stand-in for the ``vllm`` package with the real offline API's call signatures and
output objects (vLLM 0.10/0.11: ``vllm/entrypoints/llm.py`` ``LLM.__init__`` and
``LLM.generate``, ``vllm/sampling_params.py`` ``SamplingParams``, ``vllm/outputs.py``
``RequestOutput`` / ``CompletionOutput``, ``vllm/sequence.py`` ``RequestMetrics``).

It runs no model: ``generate`` returns ``max_tokens`` token ids per prompt (as with
``ignore_eos=True``) and spends simulated time, on :data:`clock` when a test sets one,
else by sleeping. Like the real engine it refuses unknown engine arguments (``LLM``
passes ``**kwargs`` to ``EngineArgs``, a dataclass: an unknown name is a TypeError),
text prompts without a tokenizer, and ``detokenize=True`` without one. Loaded by tests
under the module name ``vllm``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

__version__ = "0.11.0"

#: set by a test: an object with a float ``t`` that generate advances instead of sleeping
clock: Any = None
#: V0 filled RequestOutput.metrics; V1 leaves it None (the default here)
fill_metrics = False
#: every LLM(...) made, with its arguments, for tests to read
created: list[dict[str, Any]] = []
PREFILL_S_PER_TOKEN = 1e-5
DECODE_S_PER_TOKEN = 2e-3

_ENGINE_ARGS = {
    "max_model_len", "load_format", "max_num_seqs", "max_num_batched_tokens",
    "kv_cache_dtype", "enable_prefix_caching", "block_size", "download_dir",
    "pipeline_parallel_size", "enable_chunked_prefill",
}  # fmt: skip


def _spend(seconds: float) -> None:
    if clock is not None:
        clock.t += seconds
    else:
        time.sleep(seconds)


def _now() -> float:
    return float(clock.t) if clock is not None else time.time()


class SamplingParams:
    def __init__(
        self,
        n: int = 1,
        best_of: int | None = None,
        presence_penalty: float = 0.0,
        frequency_penalty: float = 0.0,
        repetition_penalty: float = 1.0,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        min_p: float = 0.0,
        seed: int | None = None,
        stop: str | list[str] | None = None,
        stop_token_ids: list[int] | None = None,
        ignore_eos: bool = False,
        max_tokens: int | None = 16,
        min_tokens: int = 0,
        logprobs: int | None = None,
        prompt_logprobs: int | None = None,
        detokenize: bool = True,
        skip_special_tokens: bool = True,
        spaces_between_special_tokens: bool = True,
    ) -> None:
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}.")
        self.n = n
        self.temperature = temperature
        self.ignore_eos = ignore_eos
        self.max_tokens = max_tokens
        self.detokenize = detokenize
        self.seed = seed


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: Any
    finish_reason: str | None = None
    stop_reason: int | str | None = None


@dataclass
class RequestMetrics:
    arrival_time: float
    last_token_time: float
    first_scheduled_time: float | None
    first_token_time: float | None
    time_in_queue: float | None
    finished_time: float | None = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int] | None
    prompt_logprobs: Any
    outputs: list[CompletionOutput]
    finished: bool
    metrics: RequestMetrics | None = None
    num_cached_tokens: int | None = None
    kv_transfer_params: dict[str, Any] | None = field(default=None)


class LLM:
    def __init__(
        self,
        model: str,
        *,
        runner: str = "auto",
        tokenizer: str | None = None,
        tokenizer_mode: str = "auto",
        skip_tokenizer_init: bool = False,
        trust_remote_code: bool = False,
        allowed_local_media_path: str = "",
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        quantization: str | None = None,
        revision: str | None = None,
        tokenizer_revision: str | None = None,
        seed: int | None = None,
        gpu_memory_utilization: float = 0.9,
        swap_space: float = 4,
        cpu_offload_gb: float = 0,
        enforce_eager: bool = False,
        disable_custom_all_reduce: bool = False,
        hf_token: bool | str | None = None,
        hf_overrides: Any = None,
        mm_processor_kwargs: dict[str, Any] | None = None,
        compilation_config: Any = None,
        **kwargs: Any,
    ) -> None:
        unknown = set(kwargs) - _ENGINE_ARGS
        if unknown:
            raise TypeError(f"EngineArgs.__init__() got an unexpected keyword argument {unknown}")
        if not 0 < gpu_memory_utilization <= 1:
            raise ValueError("GPU memory utilization must be within (0, 1].")
        self.skip_tokenizer_init = skip_tokenizer_init
        self._requests = 0
        created.append(
            {
                "model": model,
                "skip_tokenizer_init": skip_tokenizer_init,
                "tensor_parallel_size": tensor_parallel_size,
                "dtype": dtype,
                "quantization": quantization,
                "gpu_memory_utilization": gpu_memory_utilization,
                "seed": seed,
                **kwargs,
            }
        )

    def generate(
        self,
        prompts: Any,
        sampling_params: SamplingParams | list[SamplingParams] | None = None,
        use_tqdm: bool = True,
        lora_request: Any = None,
        priority: list[int] | None = None,
    ) -> list[RequestOutput]:
        params = sampling_params or SamplingParams()
        assert isinstance(params, SamplingParams)
        if isinstance(prompts, str | dict):
            prompts = [prompts]
        outputs = []
        for prompt in prompts:
            if not isinstance(prompt, dict) or "prompt_token_ids" not in prompt:
                if self.skip_tokenizer_init:
                    raise ValueError(
                        "You cannot pass text prompts when `skip_tokenizer_init` is True"
                    )
                raise NotImplementedError("the stand-in takes token-id prompts only")
            if self.skip_tokenizer_init and params.detokenize:
                raise ValueError("Cannot detokenize when `skip_tokenizer_init` is True")
            ids = list(prompt["prompt_token_ids"])
            arrival = _now()
            _spend(PREFILL_S_PER_TOKEN * len(ids))
            first = _now()
            count = params.max_tokens or 16
            _spend(DECODE_S_PER_TOKEN * (count - 1))
            finished = _now()
            self._requests += 1
            outputs.append(
                RequestOutput(
                    request_id=str(self._requests),
                    prompt=None,
                    prompt_token_ids=ids,
                    prompt_logprobs=None,
                    outputs=[
                        CompletionOutput(0, "", [7] * count, None, None, finish_reason="length")
                    ],
                    finished=True,
                    metrics=RequestMetrics(arrival, finished, arrival, first, 0.0, finished)
                    if fill_metrics
                    else None,
                )
            )
        return outputs
