"""TF32 rows in the GUI: their own label, their own peak, their own radar axis."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gpudesk.bench.results import Measurement
from gpudesk.ui.bench_results import ResultsModel
from gpudesk.ui.compare_view import AxisPicker


def _row(dtype: str, peak: float) -> Measurement:
    return Measurement(
        test="gemm", dtype=dtype, size=4096, value=140.0, unit="TFLOPS", peak=peak,
        fraction_of_peak=140.0 / peak, tf32_enabled=dtype == "tf32",
    )  # fmt: skip


def test_tf32_row_is_labelled_and_set_against_the_tf32_peak(qtbot: QtBot) -> None:
    model = ResultsModel()
    model.set_rows([_row("fp32", 19.5), _row("tf32", 156.0)])
    fp32, tf32 = (model.index(row, 0) for row in range(2))
    assert model.data(fp32, Qt.ItemDataRole.DisplayRole) == "GEMM FP32"
    assert model.data(tf32, Qt.ItemDataRole.DisplayRole) == "GEMM TF32"
    tip = model.data(tf32, Qt.ItemDataRole.ToolTipRole)
    assert "compared with the catalog's TF32 tensor, dense peak" in tip
    assert "TF32 enabled" in tip
    assert "compared with the catalog's FP32 peak" in model.data(fp32, Qt.ItemDataRole.ToolTipRole)
    percent = model.index(1, 6)
    assert model.data(percent, Qt.ItemDataRole.DisplayRole) == "90%"


def test_the_compare_radar_offers_a_tf32_axis_apart_from_fp32(qtbot: QtBot) -> None:
    picker = AxisPicker()
    qtbot.addWidget(picker)
    keys = [picker.item(i).data(Qt.ItemDataRole.UserRole) for i in range(picker.count())]
    assert "tf32_tensor_tflops" in keys and "fp32_tflops" in keys
    labels = [picker.item(i).text() for i in range(picker.count())]
    assert any("TF32" in label for label in labels)
