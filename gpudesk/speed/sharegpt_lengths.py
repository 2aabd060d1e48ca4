"""ShareGPT's prompt and output lengths as ``vllm bench serve --dataset-name sharegpt`` draws them.

The client (vLLM ``ShareGPTDataset.sample`` in ``vllm/benchmarks/datasets.py``, commit
0056b87fc1fda2642f39dda4392824c425dd1638) takes the first human turn of each
conversation as the prompt and the first answer's length as the output, and keeps a
pair only if ``is_valid_sequence`` (``vllm/benchmarks/dataset_utils.py``, commit
5c92be2491896f931cb83f518402741421c871dc) passes: both at least 4 tokens, the prompt at
most 1,024 and prompt + output at most 2,048 (:data:`MIN_TOKENS`,
:data:`MAX_PROMPT_TOKENS`, :data:`MAX_TOTAL_TOKENS`).

The shape comes from the per-request lengths the vLLM paper's authors published with
their SOSP'23 artifact: github.com/sosp-ae-39/sosp-ae-astra, commit
3180d2f8c2a2aa1729245f9b0cb75a854746e6a8, ``datasets/sharegpt_opt_text_completion_length.pkl``
(its README: ShareGPT of March 2023, the first user input and first ChatGPT response of
each conversation, tokenized with OPT's tokenizer, lengths only): 84,226 (prompt, output)
pairs. Derived here: the 74,704 pairs that pass vLLM's filter above, and of those the
prompt and the output lengths at the percentiles in :data:`PERCENTILES` (numpy's default
linear interpolation, rounded to whole tokens): :data:`PROMPT_TOKENS`,
:data:`OUTPUT_TOKENS`. Over those pairs the prompt averages 119.6 tokens (median 34,
p90 382, p99 919) and the output 348.4 (median 280, p90 764, p99 1,292); the two are
nearly independent (Pearson correlation 0.12), so they are drawn independently.

A run prints only its totals, so its means (``seq_in``, ``seq_out``) are the figures to
match: each length is the shape scaled by one factor (as a tokenizer that counts more or
fewer tokens, or answers that end earlier, would scale it) and then kept within vLLM's
filter as the client keeps it, the factor chosen so the mean of what is kept is the
run's. The table is of a 2023 copy of ShareGPT and OPT's tokenizer, not of
``ShareGPT_V3_unfiltered_cleaned_split.json`` and the run's tokenizer: the scaling
carries the run's means, the table only the shape around them.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable
from functools import lru_cache

#: vLLM's ``is_valid_sequence`` defaults: shortest prompt and output, longest prompt, and
#: longest prompt + output a ShareGPT request may have.
MIN_TOKENS = 4
MAX_PROMPT_TOKENS = 1024
MAX_TOTAL_TOKENS = 2048
#: The means a ShareGPT shape can be scaled to within that filter (with some room from
#: the extremes, where every draw would sit at one bound).
MIN_MEAN_TOKENS = 5
MAX_MEAN_PROMPT_TOKENS = 1000
MAX_MEAN_OUTPUT_TOKENS = 1000

#: Cumulative shares of the table: every percentile, then 99.5, 99.9 and the largest.
PERCENTILES = (*(i / 100 for i in range(100)), 0.995, 0.999, 1.0)
# fmt: off
#: Prompt tokens at each of :data:`PERCENTILES` (see the module docstring).
PROMPT_TOKENS = (
    4, 5, 6, 6, 7, 8, 8, 8, 9, 9, 10, 10, 10, 11, 11, 12, 12, 12, 13, 13,
    13, 14, 14, 15, 15, 16, 16, 16, 17, 18, 18, 19, 19, 20, 20, 21, 22, 22, 23, 24,
    24, 25, 26, 27, 27, 28, 29, 31, 32, 33, 34, 35, 37, 38, 40, 41, 43, 45, 47, 49,
    51, 54, 56, 59, 62, 65, 68, 72, 75, 80, 84, 89, 94, 99, 105, 112, 120, 129, 139, 150,
    162, 175, 190, 208, 226, 245, 268, 296, 324, 354, 382, 414, 449, 494, 540, 596, 663,
    735, 819, 919, 975, 1015, 1024,
)
#: Output tokens at each of :data:`PERCENTILES` (see the module docstring).
OUTPUT_TOKENS = (
    4, 11, 17, 22, 27, 32, 36, 41, 47, 53, 59, 66, 71, 76, 82, 87, 92, 97, 102, 107,
    112, 117, 123, 128, 134, 140, 146, 151, 158, 164, 170, 176, 182, 188, 194, 199, 205,
    211, 216, 221, 226, 232, 238, 243, 248, 253, 258, 263, 269, 274, 280, 285, 290, 296,
    302, 308, 313, 319, 325, 332, 338, 344, 351, 357, 364, 372, 379, 387, 394, 403, 412,
    422, 432, 443, 454, 468, 479, 491, 506, 520, 534, 552, 569, 589, 609, 630, 653, 680,
    708, 739, 764, 772, 796, 823, 862, 919, 981, 1058, 1153, 1292, 1450, 1710, 2009,
)
# fmt: on
#: Prompts the output scale is solved over (quantile midpoints of the prompt's draw).
_PROMPT_NODES = 64


class _Shape:
    """One length distribution as a piecewise-linear quantile function."""

    def __init__(self, tokens: tuple[int, ...]) -> None:
        self.tokens = tokens
        # the integral of the quantile function up to each knot, for truncated means
        self.area = [0.0]
        for k in range(len(PERCENTILES) - 1):
            width = PERCENTILES[k + 1] - PERCENTILES[k]
            self.area.append(self.area[-1] + width * (tokens[k] + tokens[k + 1]) / 2)

    def quantile(self, share: float) -> float:
        k = min(bisect.bisect_right(PERCENTILES, share) - 1, len(PERCENTILES) - 2)
        low, high = PERCENTILES[k], PERCENTILES[k + 1]
        return self.tokens[k] + (self.tokens[k + 1] - self.tokens[k]) * (share - low) / (high - low)

    def share_below(self, tokens: float) -> float:
        """The cumulative share at ``tokens`` (right-continuous: ties count as below)."""
        k = bisect.bisect_right(self.tokens, tokens) - 1
        if k < 0:
            return 0.0
        if k >= len(self.tokens) - 1:
            return 1.0
        low, high = self.tokens[k], self.tokens[k + 1]
        return PERCENTILES[k] + (PERCENTILES[k + 1] - PERCENTILES[k]) * (tokens - low) / (
            high - low
        )

    def _integral(self, share: float) -> float:
        k = min(bisect.bisect_right(PERCENTILES, share) - 1, len(PERCENTILES) - 2)
        return self.area[k] + (share - PERCENTILES[k]) * (self.tokens[k] + self.quantile(share)) / 2

    def window(self, scale: float, low: float, high: float) -> tuple[float, float]:
        """The cumulative shares between which ``scale`` x a draw lies in [low, high]."""
        return self.share_below(low / scale), self.share_below(high / scale)

    def kept_mean(self, scale: float, low: float, high: float) -> float:
        """Mean of ``scale`` x a draw, keeping only draws in [low, high] (nan: none kept)."""
        start, end = self.window(scale, low, high)
        if end <= start:
            return math.nan
        return scale * (self._integral(end) - self._integral(start)) / (end - start)

    def draw(self, scale: float, low: int, high: int, share: float) -> int:
        """The length at ``share`` (0 to 1) of ``scale`` x a draw kept in [low, high]."""
        start, end = self.window(scale, low, high)
        tokens = round(scale * self.quantile(start + (end - start) * share))
        return min(max(tokens, low), high)


_PROMPT = _Shape(PROMPT_TOKENS)
_OUTPUT = _Shape(OUTPUT_TOKENS)


def _solve(
    mean_at: Callable[[float], float], target: float, low_scale: float, high_scale: float
) -> float:
    """The scale at which ``mean_at(scale)`` (increasing) is ``target``: bisection on
    log scale between two scales that bracket it."""
    low, high = math.log(low_scale), math.log(high_scale)
    for _ in range(60):
        middle = (low + high) / 2
        if mean_at(math.exp(middle)) < target:
            low = middle
        else:
            high = middle
    return math.exp((low + high) / 2)


@lru_cache(maxsize=256)
def scales(mean_prompt: int, mean_output: int) -> tuple[float, float]:
    """(prompt scale, output scale) at which the kept draws average the means given.

    The means must lie within :data:`MIN_MEAN_TOKENS` and the largest means (the caller
    checks): both scales are then bracketed, from the scale at which only the longest
    table entry is kept up to the one at which only the shortest is.
    """
    prompt_scale = _solve(
        lambda scale: _PROMPT.kept_mean(scale, MIN_TOKENS, MAX_PROMPT_TOKENS),
        mean_prompt,
        MIN_TOKENS / PROMPT_TOKENS[-1] * 1.001,
        MAX_PROMPT_TOKENS / PROMPT_TOKENS[0] / 1.001,
    )
    # the output's room depends on its prompt: average over the prompt's draw
    start, end = _PROMPT.window(prompt_scale, MIN_TOKENS, MAX_PROMPT_TOKENS)
    prompts = [
        prompt_scale * _PROMPT.quantile(start + (end - start) * (i + 0.5) / _PROMPT_NODES)
        for i in range(_PROMPT_NODES)
    ]
    rooms = [MAX_TOTAL_TOKENS - min(prompt, MAX_PROMPT_TOKENS) for prompt in prompts]

    def output_mean(scale: float) -> float:
        return sum(_OUTPUT.kept_mean(scale, MIN_TOKENS, room) for room in rooms) / len(rooms)

    output_scale = _solve(
        output_mean,
        mean_output,
        MIN_TOKENS / OUTPUT_TOKENS[-1] * 1.001,
        (MAX_TOTAL_TOKENS - MAX_PROMPT_TOKENS) / OUTPUT_TOKENS[0] / 1.001,
    )
    return prompt_scale, output_scale


def draw_lengths(
    mean_prompt: int, mean_output: int, count: int, draw: random.Random
) -> list[tuple[int, int]]:
    """``count`` (prompt, output) pairs of ShareGPT's shape averaging the means given.

    Each marginal is drawn stratified (one draw in each 1/count of its shares, in random
    order), so 1,000 requests average within 0.2% of the means (measured over 20 seeds
    and six pairs of means); prompts and outputs are paired at random (independent).
    """
    prompt_scale, output_scale = scales(mean_prompt, mean_output)

    def strata() -> list[float]:
        order = list(range(count))
        draw.shuffle(order)
        return [(slot + draw.random()) / count for slot in order]

    prompt_shares, output_shares = strata(), strata()
    pairs = []
    for prompt_share, output_share in zip(prompt_shares, output_shares, strict=True):
        prompt = _PROMPT.draw(prompt_scale, MIN_TOKENS, MAX_PROMPT_TOKENS, prompt_share)
        output = _OUTPUT.draw(output_scale, MIN_TOKENS, MAX_TOTAL_TOKENS - prompt, output_share)
        pairs.append((prompt, output))
    return pairs
