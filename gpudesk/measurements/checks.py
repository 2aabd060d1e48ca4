"""Physics and text checks on a measurement read from a file (issue 39 item 5).

A row that lacks what it needs (no GPU, no model, a mode GPUDesk does not
know) is refused alone, with the reason; these checks find what no real run
writes: a tokens/s figure that is not finite, not positive or above
:data:`MAX_TOKENS_PER_S_PER_GPU` per GPU, or text with control characters or
longer than a name can be. A file holding one is refused whole
(:class:`~gpudesk.measurements.file_import.ImportFileError`): it is
corrupt or crafted, and none of its rows is trusted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from gpudesk.measurements.errors import MeasurementError
from gpudesk.terminal_text import UNSAFE

#: The fastest tokens/s one GPU can give: a token costs at least 2 FLOPs per
#: parameter, so a 15M-parameter toy model (3e7 FLOPs a token) on the fastest
#: catalogued GPU (B200, 2,500 dense BF16 TFLOPS) peaks at 8.3e7 tokens/s, and
#: llama.cpp and vLLM reach a fraction of peak on a model that small. Real runs
#: of the smallest preset models are under 1e6.
MAX_TOKENS_PER_S_PER_GPU = 1e8
#: Names, versions, ids, labels: one printable line of at most this many characters.
MAX_NAME_CHARS = 256
#: Paths and the note keep the store's 1,000-character limit; the note may have lines.
MAX_PATH_CHARS = 1000

#: The one-line text fields of a row.
_NAMES = (
    "gpu_id", "gpu_name", "engine", "engine_version", "backend", "model", "quant", "mode",
    "measured_at", "driver", "source_format",
)  # fmt: skip
#: Each text field of a row: (most characters, may hold line breaks).
TEXT_FIELDS: dict[str, tuple[int, bool]] = {
    **dict.fromkeys(_NAMES, (MAX_NAME_CHARS, False)),
    "model_file": (MAX_PATH_CHARS, False),
    "source": (MAX_PATH_CHARS, False),
    "note": (MAX_PATH_CHARS, True),
}
#: Figures held to the tokens/s ceiling (GPUDesk's own estimate included: one above
#: the ceiling was not made by GPUDesk).
FIGURE_FIELDS = ("tokens_per_s", "estimate_tokens_per_s")
#: Whole numbers and their bounds (the store's own): GPUs in one run, tokens, requests.
WHOLE_FIELDS: dict[str, tuple[int, int]] = {
    "count": (1, 100_000),
    "seq_in": (0, 100_000_000),
    "seq_out": (0, 100_000_000),
    "concurrency": (1, 1_000_000),
}
_ONE_LINE_BREAKS = "\n\t\u2028\u2029"


class ImpossibleValue(MeasurementError, ValueError):
    """A value that no real run writes; ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def text_problem(text: str, limit: int, *, multiline: bool) -> str | None:
    """Why ``text`` cannot be stored and shown as it is, or None."""
    if len(text) > limit:
        return f"{len(text):,} characters, more than {limit:,}"
    unsafe = UNSAFE.search(text)
    if unsafe is not None:
        return f"a control character (U+{ord(unsafe.group()):04X}); text must be printable"
    if not multiline:
        brk = next((char for char in text if char in _ONE_LINE_BREAKS), None)
        if brk is not None:
            return f"a control character (U+{ord(brk):04X}) in one-line text"
    return None


def check_fields(fields: Mapping[str, object]) -> None:
    """Refuse a row's fields, as the importer gathered them, that no real run writes.

    Only values of the right type are judged (a wrong type is the row's own
    refusal, by the model); ``count`` defaults to 1 GPU.

    Raises:
        ImpossibleValue: the first impossible figure or text, by field.
    """
    for name, (low, high) in WHOLE_FIELDS.items():
        value = fields.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and not low <= value <= high:
            digits = len(str(abs(value)))
            shown = f"{value:,}" if digits <= 30 else f"a {digits}-digit number"
            raise ImpossibleValue(name, f"{shown} is outside {low:,} to {high:,}")
    count = fields.get("count")
    gpus = count if isinstance(count, int) and not isinstance(count, bool) else 1
    ceiling = MAX_TOKENS_PER_S_PER_GPU * gpus
    for name in FIGURE_FIELDS:
        value = fields.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        number = float(value) if not isinstance(value, int) or abs(value) < 2**1000 else math.inf
        if not math.isfinite(number):
            shown = f"{value!r:.40}" if isinstance(value, float) else f"{len(str(value))} digits"
            raise ImpossibleValue(name, f"{shown} is not a finite number")
        if number <= 0:
            raise ImpossibleValue(name, f"{number:g} tokens/s is not a positive figure")
        if number > ceiling:
            raise ImpossibleValue(
                name,
                f"{number:.6g} tokens/s is more than any {gpus:,} GPU(s) can give "
                f"({MAX_TOKENS_PER_S_PER_GPU:.0e} a GPU): not a possible measurement",
            )
    for name, (limit, multiline) in TEXT_FIELDS.items():
        value = fields.get(name)
        if isinstance(value, str) and (problem := text_problem(value, limit, multiline=multiline)):
            raise ImpossibleValue(name, problem)
