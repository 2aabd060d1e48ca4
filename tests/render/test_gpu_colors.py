"""Each GPU keeps its color for the session: removing one never recolours the others."""

from __future__ import annotations

from gpudesk.render.colors import ColorSlots, gpu_colors, palette_size, series_color


def test_removing_a_gpu_keeps_the_others_colors() -> None:
    slots = ColorSlots(6)
    assert slots.assign(["a", "b", "c"]) == [0, 1, 2]
    assert slots.assign(["a", "c"]) == [0, 2]  # c keeps its color when b goes
    # a new GPU takes the free slot; b coming back later gets its own again if free
    assert slots.assign(["a", "c", "d"]) == [0, 2, 1]
    assert slots.assign(["c", "d", "b"]) == [2, 1, 0]


def test_six_gpus_have_six_distinct_colors_after_any_churn() -> None:
    slots = ColorSlots(6)
    slots.assign(list("abcdef"))
    slots.assign(list("bdf"))
    assert sorted(slots.assign(list("bdfxyz"))) == list(range(6))


def test_session_colors_follow_the_gpu_not_its_position() -> None:
    first = gpu_colors(["rtx-4090", "a100", "h100"])
    later = gpu_colors(["rtx-4090", "h100"])
    assert later[1] == first[2]
    assert later[0] == first[0]
    assert palette_size() == 6
    assert first[0] == series_color(0)
