"""The published measurements file: loads, cites, and bad files say where."""

from __future__ import annotations

import pytest
import reach
from hypothesis import given, settings, strategies as st

from gpudesk.catalog.loader import load_catalog
from gpudesk.speed.data import Workload, load_measurements, parse_measurements
from gpudesk.speed.shapes import shape_for


def test_every_measurement_cites_a_page_and_names_a_catalog_gpu() -> None:
    data = load_measurements()
    ids = {entry.id for entry in load_catalog([], include_user=False).entries}
    assert len(data.measurements) >= 250
    for row in data.measurements:
        assert row.source.startswith("https://")
        assert row.gpu in ids, row.label
        if row.model is not None:
            shape_for(row.model)  # every model resolves


def test_breadth_of_gpus_engines_and_workloads() -> None:
    rows = load_measurements().measurements
    assert len({row.gpu for row in rows}) >= 15
    assert {row.engine for row in rows} >= {"llama.cpp", "vllm", "tensorrt-llm"}
    assert {row.workload for row in rows} == set(Workload)
    held = [row for row in rows if row.held_out]
    assert len(held) >= 40
    assert {row.workload for row in held} >= {
        Workload.DECODE,
        Workload.PREFILL,
        Workload.SERVE,
        Workload.TRAIN,
    }


_TABLE = """
[[table]]
source = "https://example.org/table"
title = "t"
workload = "decode"
engine = "llama.cpp"
model = "llama-3.1-8b"
quant = "q4_k_m"
unit = "tokens/s"
rows = [{{ gpu = "rtx-4090", seq_out = 128, context = 64, value = {value} }}]
"""


def test_a_bad_row_names_table_row_and_field() -> None:
    assert parse_measurements(_TABLE.format(value="100.0")).measurements[0].value == 100.0
    with pytest.raises(ValueError, match=r"table #1 \(t\), row #1.*value"):
        parse_measurements(_TABLE.format(value="-1.0"))
    with pytest.raises(ValueError, match="value"):
        parse_measurements(_TABLE.format(value='"fast"'))
    with pytest.raises(ValueError, match="decode row needs seq_out and context"):
        parse_measurements(_TABLE.replace("seq_out = 128, ", "").format(value="1.0"))


#: a plausible value for each row field the property test sets (a row of hostile values
#: alone is always refused, so nothing would ever load)
_PLAUSIBLE_ROW_FIELDS: dict[str, st.SearchStrategy[object]] = {
    "value": st.floats(min_value=0.01, max_value=1e5),
    "count": st.integers(1, 16),
    "batch": st.integers(1, 64),
    "workload": st.sampled_from(["decode", "decode", "prefill", "matmul"]),
    "unit": st.sampled_from(["tokens/s", "tokens/s", "s", "TFLOPS"]),
}
_HOSTILE_ROW_VALUES = st.one_of(
    st.integers(-5, 5), st.text(max_size=5), st.booleans(), st.floats(allow_nan=True)
)


@st.composite
def _row_fields(draw: st.DrawFn) -> dict[str, object]:
    keys = draw(st.lists(st.sampled_from(sorted(_PLAUSIBLE_ROW_FIELDS)), unique=True))
    hostile = draw(st.sampled_from([0, 0, 1, 2]))  # how many fields get a hostile value
    return {
        key: draw(_HOSTILE_ROW_VALUES if index < hostile else _PLAUSIBLE_ROW_FIELDS[key])
        for index, key in enumerate(keys)
    }


@settings(max_examples=40, deadline=None)
@given(_row_fields())
@pytest.mark.reaches(loaded=8, refused=12)
def test_arbitrary_row_fields_load_or_raise_value_error(fields: dict[str, object]) -> None:
    def toml(value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return '"' + value.replace("\\", "").replace('"', "") + '"'
        if isinstance(value, float) and value != value:
            return "nan"
        return repr(value)

    cells = ", ".join(f"{key} = {toml(value)}" for key, value in fields.items())
    text = (
        '[[table]]\nsource = "https://example.org/x"\ntitle = "x"\nworkload = "decode"\n'
        'engine = "llama.cpp"\nmodel = "llama-3.1-8b"\nquant = "q4_k_m"\nunit = "tokens/s"\n'
        'gpu = "rtx-4090"\nseq_out = 8\ncontext = 4\nvalue = 1.0\n'
        f"rows = [{{ {cells} }}]\n"
    )
    try:
        parsed = parse_measurements(text)
    except ValueError as exc:
        reach.reached("refused")
        assert str(exc)
        return
    reach.reached("loaded")
    row = parsed.measurements[0]
    assert row.value > 0 and row.count >= 1 and row.batch >= 1
    for key in ("value", "count", "batch"):
        if key in fields:
            assert getattr(row, key) == fields[key]
