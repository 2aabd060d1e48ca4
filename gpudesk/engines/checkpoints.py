"""Which checkpoint a launch command names for a weight format.

A preset's repository holds its bf16 weights. vLLM and SGLang load AWQ, GPTQ and
MXFP4 weights only from a checkpoint stored in that format, so ``--emit vllm --quant
awq`` must name such a checkpoint: one GPUDesk knows (below, each with where it was
seen), or a placeholder the user replaces, with a note saying so. FP8 (and, in vLLM,
bitsandbytes NF4) are made from the bf16 weights while the engine loads them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownCheckpoint:
    """A published checkpoint of a preset in one format."""

    repo: str
    #: what it is beside the preset (another tuning of the same architecture, ...)
    what: str
    source: str


#: (preset id, format) -> a checkpoint in that format; only ones seen published
KNOWN_CHECKPOINTS: dict[tuple[str, str], KnownCheckpoint] = {
    ("qwen2.5-32b", "awq"): KnownCheckpoint(
        "Qwen/Qwen2.5-32B-Instruct-AWQ",
        "Qwen's AWQ 4-bit checkpoint of the Instruct model (the same architecture)",
        "https://huggingface.co/Qwen/Qwen2.5-32B-Instruct-AWQ",
    ),
    ("qwen2.5-3b", "awq"): KnownCheckpoint(
        "Qwen/Qwen2.5-3B-Instruct-AWQ",
        "Qwen's AWQ 4-bit checkpoint of the Instruct model (the same architecture)",
        "https://huggingface.co/Qwen/Qwen2.5-3B-Instruct-AWQ",
    ),
    ("llama-3.1-8b", "awq"): KnownCheckpoint(
        "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4",
        "Hugging Face's AWQ INT4 checkpoint of the Instruct model (the same architecture)",
        "https://huggingface.co/hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4",
    ),
    ("gpt-oss-20b", "mxfp4"): KnownCheckpoint(
        "openai/gpt-oss-20b",
        "OpenAI's release, whose expert weights are stored in MXFP4",
        "https://huggingface.co/openai/gpt-oss-20b",
    ),
}

#: formats an engine makes from bf16 weights as it loads them, and the page saying so
ONLINE_FORMATS: dict[str, dict[str, str]] = {
    "vllm": {
        "fp8": "https://docs.vllm.ai/en/latest/features/quantization/fp8/",
        "nf4": "https://docs.vllm.ai/en/latest/features/quantization/bnb/",
    },
    "sglang": {
        "fp8": "https://docs.sglang.io/advanced_features/quantization.html",
    },
}

#: the engines' names as their projects write them
_ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang"}

#: formats whose weights are what the preset's repository holds
_UNQUANTIZED = frozenset({"bf16", "fp16", "fp32"})


@dataclass(frozen=True)
class CheckpointChoice:
    """The model reference a command names, and why (None: nothing to say)."""

    model_ref: str
    #: the format's checkpoint is a placeholder the user must replace
    needs_checkpoint: bool
    note: str | None


def placeholder(quant: str) -> str:
    """The word a command holds where the user's ``quant`` checkpoint goes."""
    return f"YOUR-{quant.upper()}-CHECKPOINT"


def checkpoint_for(
    engine: str, preset_id: str | None, quant: str | None, model_ref: str
) -> CheckpointChoice:
    """The checkpoint ``engine`` loads for a preset's weights in ``quant``.

    ``model_ref`` is the preset's (bf16) repository; a user's own file or folder
    (``preset_id`` None) is named as given. llama.cpp and Ollama load GGUF files, which
    hold their format: nothing changes.
    """
    if engine in ("llama.cpp", "ollama") or quant is None or quant in _UNQUANTIZED:
        return CheckpointChoice(model_ref, needs_checkpoint=False, note=None)
    if preset_id is None:
        return CheckpointChoice(model_ref, needs_checkpoint=False, note=None)
    known = KNOWN_CHECKPOINTS.get((preset_id, quant))
    if known is not None:
        return CheckpointChoice(
            known.repo,
            needs_checkpoint=False,
            note=f"{known.repo} is {known.what} ({known.source})",
        )
    name = _ENGINE_NAMES.get(engine, engine)
    online = ONLINE_FORMATS.get(engine, {}).get(quant)
    if online is not None:
        return CheckpointChoice(
            model_ref,
            needs_checkpoint=False,
            note=f"{name} makes {quant.upper()} weights from {model_ref}'s bf16 ones as "
            f"it loads them ({online}); a checkpoint stored in {quant.upper()} loads faster",
        )
    word = placeholder(quant)
    return CheckpointChoice(
        word,
        needs_checkpoint=True,
        note=f"GPUDesk knows no {quant.upper()} checkpoint of {preset_id}: put the path or "
        f"Hugging Face repository of one in place of {word} ({model_ref} holds bf16 "
        f"weights, which {name} would load unquantized, in more memory than this fit)",
    )
