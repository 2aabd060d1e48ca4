"""Which GPUDesk preset a benchmark file's model is, from the words the file uses.

A stored measurement calibrates later estimates only with GPUDesk's estimate for the
run itself, which needs the model's shape. The files name their model in their own
words, so each is tried in turn:

1. a name: ``--model``, llama-bench's ``model_filename`` or a ``*.gguf`` heading above
   a markdown table, vLLM's ``model_id`` (``meta-llama/Llama-3.1-8B-Instruct``). A
   preset's id or name, letters and digits only, inside it names that preset
   (``Meta-Llama-3.1-8B-Instruct-Q4_K_M`` is ``llama-3.1-8b``; ``Llama-3.1-80B`` is not:
   a digit may not follow straight after); the longest such preset wins.
2. llama-bench's ``model_type``, "<architecture> <size> <weight format>" as llama.cpp
   prints it ("qwen3moe 30B.A3B Q8_0", "gpt-oss 20B MXFP4 MoE"): architecture and size
   read as a preset id (``qwen3`` + ``30B.A3B`` is ``qwen3-30b-a3b``); where the file
   gives a parameter count, the preset's must be within 5% of it. llama.cpp's size is
   a label, not a count ("qwen2 1B" is Qwen2.5 0.5B), so this alone is not trusted
   against a count.
3. the parameter count (``model_n_params``, or the markdown's "1.10 B"): the one preset
   of the same architecture family (``llama`` inside ``tinyllama-1.1b``, ``qwen`` inside
   ``qwen2.5-0.5b``) within the count's precision (at least 0.5%). Presets of one shape
   (Llama 3.1 70B and 3.3 70B) count as one.

Anything else is not placed: the importer refuses the row and asks for ``--model``,
``--gguf`` or ``--config``. :func:`quant_from_type` reads the weight format.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from gpudesk.workload.presets import ModelArchitecture, load_presets

#: llama.cpp's weight-format names (``llama_model_ftype_name``) GPUDesk estimates
_LLAMA_QUANTS = {
    "Q4_0": "q4_0",
    "Q8_0": "q8_0",
    "Q6_K": "q6_k",
    "Q4_K - Medium": "q4_k_m",
    "Q5_K - Medium": "q5_k_m",
    "F16": "fp16",
    "BF16": "bf16",
    "all F32": "fp32",
    "MXFP4 MoE": "mxfp4",
}
_SIZE = re.compile(r"^(?:\d+(?:\.\d+)?|\?)[KMBT](?:\.A\d+(?:\.\d+)?[KMBT])?$", re.IGNORECASE)
_COUNT = re.compile(r"^(\d+(?:\.(\d+))?)\s*([KMBT])$", re.IGNORECASE)
_UNIT = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def _letters(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@dataclass(frozen=True)
class PlacedModel:
    """The preset a file's model is, and how that was decided (for the row's note)."""

    preset_id: str
    how: str


@dataclass(frozen=True)
class ModelType:
    """llama-bench's ``model_type`` split: "llama 1B Q4_K - Medium"."""

    architecture: str
    size: str | None
    weights: str

    @classmethod
    def parse(cls, text: str) -> ModelType:
        words = text.strip().split(" ", 2)
        if len(words) >= 2 and _SIZE.match(words[1]):
            return cls(words[0], words[1], words[2] if len(words) > 2 else "")
        first, _, rest = text.strip().partition(" ")
        return cls(first, None, rest)


@cache
def _keys() -> tuple[tuple[str, ModelArchitecture], ...]:
    """(letters of an id or name, preset), longest first."""
    pairs = {
        (_letters(text), preset)
        for preset in load_presets()
        if preset.shape is not None
        for text in (preset.id, preset.name)
        if _letters(text)
    }
    return tuple(sorted(pairs, key=lambda pair: (-len(pair[0]), pair[1].id)))


def _named_in(name: str) -> ModelArchitecture | None:
    text = name.lower()
    where = [index for index, char in enumerate(text) if char.isalnum()]
    found = "".join(text[index] for index in where)
    for key, preset in _keys():
        at = found.find(key)
        while at >= 0:
            # the name's next character, separators kept: "llama-3.1-8b" is not in
            # "llama-3.1-80b", but "tinyllama-1.1b" is in "tinyllama-1.1b-1t-openorca"
            after = text[where[at + len(key) - 1] + 1 : where[at + len(key) - 1] + 2]
            if not after.isdigit():
                return preset
            at = found.find(key, at + 1)
    return None


def parameter_count(text: str) -> tuple[float, float] | None:
    """llama-bench markdown's params cell ("1.10 B") as (count, its precision)."""
    match = _COUNT.match(text.strip())
    if match is None:
        return None
    unit = _UNIT[match.group(3).lower()]
    decimals = len(match.group(2) or "")
    return float(match.group(1)) * unit, 0.5 * unit / 10**decimals


def _family(architecture: str) -> str:
    """``qwen3moe`` -> ``qwen``, ``gpt-oss`` -> ``gptoss``, ``gemma3`` -> ``gemma``."""
    letters = _letters(architecture)
    letters = letters.removesuffix("moe")
    return letters.rstrip("0123456789")


def _one_shape(found: Sequence[ModelArchitecture]) -> ModelArchitecture | None:
    shapes = {preset.shape for preset in found}
    return found[0] if len(shapes) == 1 else None


def place_model(
    names: Sequence[str | None],
    model_type: str | None = None,
    params: tuple[float, float] | None = None,
) -> PlacedModel | None:
    """The preset the file's words name (see the module), or None.

    ``params`` is (count, precision): llama-bench JSON's exact ``model_n_params`` has
    precision 0.
    """
    for name in names:
        if name:
            preset = _named_in(name)
            if preset is not None:
                return PlacedModel(preset.id, f"{name[:120]!r} names {preset.id}")
    if not model_type:
        return None
    kind = ModelType.parse(model_type)
    said = f"llama-bench model {model_type[:80]!r}" + (
        f" ({params[0] / 1e9:.2f} B params)" if params else ""
    )
    if kind.size and "?" not in kind.size:
        wanted = _letters(kind.architecture).removesuffix("moe") + _letters(kind.size)
        for key, preset in _keys():
            if key != wanted:
                continue
            if params is None or abs(preset.params - params[0]) <= 0.05 * params[0]:
                return PlacedModel(preset.id, f"{said} is {preset.id} by its name")
    family = _family(kind.architecture)
    if params is None or not family:
        return None
    count, precision = params
    allowed = max(0.005 * count, precision)
    found = [
        preset
        for preset in load_presets()
        if preset.shape is not None
        and family in _letters(preset.id)
        and abs(preset.params - count) <= allowed
    ]
    preset = _one_shape(found) if found else None
    if preset is None:
        return None
    return PlacedModel(preset.id, f"{said} is {preset.id} by its parameter count")


def quant_from_type(model_type: str) -> str | None:
    """GPUDesk's weight format for llama.cpp's name of it, or None when it has none."""
    weights = ModelType.parse(model_type).weights.strip() if model_type else ""
    weights = re.sub(r"\s*\([^)]*\)$", "", weights)  # a parenthesised note after it
    for label, quant in _LLAMA_QUANTS.items():
        if weights == label or model_type.strip() == label:
            return quant
    return None
