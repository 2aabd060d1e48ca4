"""Colors that mean the same GPU in every view."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QColor

# Okabe-Ito palette: distinguishable for common color-vision deficiencies and
# legible on both light and dark backgrounds.
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9")

#: The "this machine (measured)" series.
MEASURED_COLOR = QColor("#8E44AD")
#: Catalog points that are not selected (scatter background).
CONTEXT_COLOR = QColor(150, 150, 150, 110)


def series_color(index: int) -> QColor:
    """The palette's ``index``-th color (a slot from :func:`gpu_color_slots`)."""
    return QColor(_PALETTE[index % len(_PALETTE)])


class ColorSlots:
    """Which palette slot each GPU holds, so a GPU keeps its color for the session.

    Removing a GPU from the comparison frees its slot without moving the
    others; a GPU added later takes the slot it had before if that is free,
    else the lowest free one. Beyond the palette's size slots repeat.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._current: dict[str, int] = {}
        self._history: dict[str, int] = {}

    def assign(self, gpu_ids: Sequence[str]) -> list[int]:
        """The slot of each id in ``gpu_ids`` (the GPUs shown now, in their order)."""
        wanted = list(dict.fromkeys(gpu_ids))
        current = {gpu_id: self._current[gpu_id] for gpu_id in wanted if gpu_id in self._current}
        used = set(current.values())
        for gpu_id in wanted:
            if gpu_id in current:
                continue
            previous = self._history.get(gpu_id)
            if previous is not None and previous not in used:
                slot = previous
            else:
                free = [slot for slot in range(self._size) if slot not in used]
                slot = free[0] if free else len(current) % self._size
            current[gpu_id] = slot
            used.add(slot)
        self._current = current
        self._history.update(current)
        return [current[gpu_id] for gpu_id in gpu_ids]

    def reset(self) -> None:
        """Forget every assignment (a new session; tests)."""
        self._current.clear()
        self._history.clear()


#: The session's slots: every view and the PDF ask this one.
SESSION_SLOTS = ColorSlots(len(_PALETTE))


def gpu_color_slots(gpu_ids: Sequence[str]) -> list[int]:
    """The session's palette slot for each GPU shown now (see :class:`ColorSlots`)."""
    return SESSION_SLOTS.assign(gpu_ids)


def gpu_colors(gpu_ids: Sequence[str]) -> list[QColor]:
    """The session's color for each GPU shown now."""
    return [series_color(slot) for slot in gpu_color_slots(gpu_ids)]


def palette_size() -> int:
    return len(_PALETTE)
