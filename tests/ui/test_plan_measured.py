"""Plan → How fast?: the user's measurements beside the estimates, Import measurements…
(through the same importer as the CLI) and Verify on this machine (a worker with
progress and Cancel, here with a fake engine that behaves like llama-cpp-python)."""

from __future__ import annotations

import json
import sys
import threading
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from pytestqt.qtbot import QtBot

from gpudesk.bench.verify import write_random_gguf
from gpudesk.catalog.loader import load_catalog
from gpudesk.measurements.file_import import ImportHints
from gpudesk.measurements.rows import import_files
from gpudesk.measurements.store import MeasurementStore
from gpudesk.measurements.verify_here import VerifyOutcome
from gpudesk.ui.plan.import_dialog import ImportDialog
from gpudesk.ui.plan.measured_panel import NO_MEASUREMENT, MeasuredPanel
from gpudesk.ui.plan.speed_page import SpeedPage
from gpudesk.ui.plan.view import PlanView
from gpudesk.ui.state import AppState
from gpudesk.workload.architecture import make_shape

FILES = Path(__file__).parent / "measurement_files"
PLANNING_FILES = Path(__file__).parents[1] / "planning" / "measurement_files"
README_JSON = FILES / "llama-bench-readme-rtx4080.json"

TINY = make_shape(
    {
        "layers": 2,
        "hidden": 64,
        "heads": 4,
        "kv_heads": 2,
        "head_dim": 16,
        "intermediate": 128,
        "vocab": 512,
        "context": 256,
    }
)


@pytest.fixture
def state() -> AppState:
    return AppState(catalog=load_catalog([], include_user=False))


@pytest.fixture
def store(tmp_path: Path) -> MeasurementStore:
    return MeasurementStore(tmp_path / "measurements.sqlite")


def _plan(qtbot: QtBot, state: AppState, store: MeasurementStore, model: str) -> PlanView:
    view = PlanView(state)
    qtbot.addWidget(view)
    page = view.speed_page
    page.store = store
    page.measured_panel.store = store
    form = view.fit_page.form
    form.model_combo.setCurrentIndex(form.model_combo.findData(model))
    page.reload_measurements()
    view.recompute_now()
    return view


@dataclass(frozen=True)
class Opened:
    """How fast? on qwen2.5-7b with its Import measurements… dialog open."""

    view: PlanView  # held: the page and the dialog die with it
    page: SpeedPage
    dialog: ImportDialog


@pytest.fixture
def opened(qtbot: QtBot, state: AppState, store: MeasurementStore) -> Opened:
    view = _plan(qtbot, state, store, "qwen2.5-7b")
    page = view.speed_page
    page.open_import_dialog()
    assert page.import_dialog is not None
    return Opened(view, page, page.import_dialog)


@pytest.fixture
def tiny_gguf(tmp_path: Path) -> Path:
    """A random-weight GGUF of the TINY shape (a few hundred kB)."""
    path = tmp_path / "tiny.gguf"
    write_random_gguf(TINY, path, max_bytes=10**8)
    return path


@pytest.fixture
def tiny_view(
    qtbot: QtBot, state: AppState, store: MeasurementStore, fake_llama: type[_FakeLlama]
) -> PlanView:
    """The Plan tab on tinyllama-1.1b, with the fake llama_cpp in place before it is built."""
    return _plan(qtbot, state, store, "tinyllama-1.1b")


def _verify(qtbot: QtBot, panel: MeasuredPanel) -> VerifyOutcome:
    """Press Verify and wait for the stored outcome and the panel to settle."""
    with qtbot.waitSignal(panel.verified, timeout=30_000) as signal:
        panel.verify_button.click()
    qtbot.waitUntil(lambda: not panel.busy, timeout=10_000)
    outcome = signal.args[0]
    assert isinstance(outcome, VerifyOutcome)
    return outcome


def _import(qtbot: QtBot, dialog: ImportDialog, paths: list[Path]) -> None:
    dialog.add_files(paths)
    dialog.start_import()
    assert dialog.busy  # the files are read on a worker, not on the window's thread
    qtbot.waitUntil(lambda: not dialog.busy, timeout=20_000)


def test_a_real_llama_bench_json_imported_in_the_dialog_shows_beside_the_estimate(
    qtbot: QtBot, opened: Opened
) -> None:
    page, dialog = opened.page, opened.dialog
    assert page.select_gpu("rtx-4080")
    assert NO_MEASUREMENT in page.measured_panel.title_label.text()
    assert "rtx-4080" not in page.measured_points

    dialog.model_combo.setCurrentIndex(dialog.model_combo.findData("qwen2.5-7b"))
    _import(qtbot, dialog, [README_JSON])
    report = dialog.report
    assert report is not None and report.added == 2
    assert "llama-bench json, 2 measurement(s)" in dialog.report_view.toPlainText()

    # the page read the new rows: tg128 118.9 tokens/s on the RTX 4080 (GPU from the file)
    assert page.select_gpu("rtx-4080")
    panel = page.measured_panel
    title = panel.title_label.text()
    assert "<b>119</b> tokens/s" in title and "measured 2025-04-24, llama-bench" in title
    assert panel.tree.topLevelItemCount() == 1  # decode only: the pp512 row is prefill
    item = panel.tree.topLevelItem(0)
    assert item.text(0) == "119"
    assert item.text(2) == "2025-04-24"
    assert "llama-bench-readme-rtx4080.json" in item.text(4)
    estimate = page.uncalibrated["rtx-4080"]
    assert item.text(1) == f"×{118.881588 / estimate.tokens_per_s:.2f}"
    # a star on the roofline at the measured share of the estimate's TFLOPS
    (point,) = page.measured_points["rtx-4080"]
    assert point > 0
    # and the estimate is calibrated with it (the row carries its estimate: a preset)
    shown = next(item for item in page.results if item.gpu_id == "rtx-4080")
    assert "calibrated with 1 of your measurements" in shown.basis
    assert "calibrated with 1 of your measurements" in page.basis_view.toPlainText()

    # prefill: the pp512 row
    page.form.mode_combo.setCurrentIndex(page.form.mode_combo.findData("prefill"))
    page.recompute_now()
    assert page.select_gpu("rtx-4080")
    assert "<b>7,100</b> tokens/s" in panel.title_label.text()
    # another GPU has none
    assert page.select_gpu("h100-sxm5")
    assert NO_MEASUREMENT in panel.title_label.text()
    assert not panel.tree.isVisibleTo(panel)


def test_a_file_without_a_model_hint_is_placed_by_its_name_and_calibrates(
    qtbot: QtBot, opened: Opened
) -> None:
    page = opened.page
    _import(qtbot, opened.dialog, [README_JSON])
    assert page.select_gpu("rtx-4080")
    # "Qwen2.5-7B-Instruct-Q4_K_M" names the preset qwen2.5-7b: this workload
    assert page.measured_panel.tree.topLevelItem(0).text(1).startswith("×")
    shown = next(item for item in page.results if item.gpu_id == "rtx-4080")
    # placed by its file name, so it was stored with an estimate to learn from
    assert "calibrated with 1 of your measurements" in shown.basis


def _hostile_files(folder: Path) -> dict[str, Path]:
    files = {
        "empty.json": b"",
        "binary.json": bytes(range(256)) * 4,
        "latin1.csv": "build_commit,avg_ts\n\xe9t\xe9,1\n".encode("latin-1"),
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "nan.json": b'[{"avg_ts": NaN, "n_gen": 128}]',
        "notes.md": b"# my results\n\nthe 4090 was fast\n",
        "negative.jsonl": b'{"avg_ts": -5, "n_gen": 128, "gpu_info": "NVIDIA GeForce RTX 4090"}\n'
        b'{"avg_ts": 1e300, "n_gen": 128, "gpu_info": "NVIDIA GeForce RTX 4090"}\n',
    }
    paths = {}
    for name, data in files.items():
        path = folder / name
        path.write_bytes(data)
        paths[name] = path
    huge = folder / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(17 * 1024 * 1024)
    paths["huge.json"] = huge
    paths["missing.json"] = folder / "missing.json"
    return paths


def test_hostile_files_get_a_clear_message_and_lose_nothing(
    qtbot: QtBot, opened: Opened, store: MeasurementStore, tmp_path: Path
) -> None:
    dialog = opened.dialog
    hostile = _hostile_files(tmp_path)
    ascend = PLANNING_FILES / "llama-bench-cann-ascend.json"
    mixed = PLANNING_FILES / "llama-bench-geerlingguy-rtx4090-vulkan.md"
    _import(qtbot, dialog, [*hostile.values(), ascend, mixed, README_JSON])
    report = dialog.report
    assert report is not None
    text = dialog.report_view.toPlainText()
    by_name = {item.path.name: item for item in report.files}
    for name in ("empty.json", "binary.json", "latin1.csv", "huge.json", "missing.json"):
        assert by_name[name].error, name
        assert f"{name}: not imported" in text
    assert "is empty" in by_name["empty.json"].error
    assert "larger than" in by_name["huge.json"].error
    assert "UTF-8" in by_name["latin1.csv"].error
    assert by_name["deep.json"].error or by_name["deep.json"].refused
    assert by_name["nan.json"].error and "NaN" in by_name["nan.json"].error
    assert len(by_name["negative.jsonl"].refused) == 2
    # a GPU the catalog does not have, and a test that mixes prefill and decode: refused
    # with their reasons, in the app's words (the dialog's GPU, not the CLI's --gpu)
    assert "Ascend910B3" in text and "choose its GPU above" in text and "--gpu" not in text
    assert "pp4096+tg128 mixes prefill and decode" in text
    # the good file came in all the same
    assert by_name["llama-bench-readme-rtx4080.json"].rows == 2
    assert report.added == 2 and len(store.rows()) == 2
    assert "Added 2" in dialog.status_label.text()
    # a second import adds nothing and says so
    dialog.clear_files()
    _import(qtbot, dialog, [README_JSON])
    assert dialog.report is not None and dialog.report.already_stored == 2
    assert len(store.rows()) == 2


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=2000) | st.text(max_size=2000).map(str.encode))
def test_any_file_is_reported_never_raised(data: bytes, tmp_path_factory: Any) -> None:
    folder = tmp_path_factory.mktemp("any")
    path = folder / "any.json"
    path.write_bytes(data)
    store = MeasurementStore(folder / "m.sqlite")
    report = import_files([path], ImportHints(), [], store)
    (item,) = report.files
    assert item.error is not None or item.rows + len(item.refused) >= 0
    assert report.added == len(store.rows())
    assert report.text_lines()


# -- Verify on this machine -----------------------------------------------------------


class _FakeLlama:
    """Behaves like llama_cpp.Llama for the runner: load, n_vocab, eval, reset, close;
    each eval takes real time, so a run lasts long enough to cancel."""

    eval_seconds: ClassVar[float] = 0.0
    evals: ClassVar[int] = 0
    loaded: ClassVar[list[dict[str, Any]]] = []
    closed: ClassVar[int] = 0
    lock = threading.Lock()

    def __init__(self, **kwargs: Any) -> None:
        if not Path(kwargs["model_path"]).is_file():
            raise ValueError(f"Failed to load model from file: {kwargs['model_path']}")
        type(self).loaded.append(kwargs)

    def n_vocab(self) -> int:
        return 512

    def eval(self, tokens: list[int]) -> None:
        assert all(0 <= token < 512 for token in tokens)
        with self.lock:
            type(self).evals += 1
        time.sleep(self.eval_seconds)

    def reset(self) -> None:
        pass

    def close(self) -> None:
        type(self).closed += 1


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch) -> type[_FakeLlama]:
    module = types.ModuleType("llama_cpp")
    module.Llama = _FakeLlama  # type: ignore[attr-defined]
    module.__version__ = "0.3.fake"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    monkeypatch.setattr("gpudesk.bench.verify.measure_cpu", lambda seconds=0.6: (40.0, 0.8))
    _FakeLlama.eval_seconds = 0.0
    _FakeLlama.evals = 0
    _FakeLlama.loaded = []
    _FakeLlama.closed = 0
    return _FakeLlama


def _decode(view: PlanView, seq_in: int, seq_out: int) -> None:
    page = view.speed_page
    page.form.mode_combo.setCurrentIndex(page.form.mode_combo.findData("decode"))
    page.form.seq_in_spin.setValue(seq_in)
    page.form.seq_out_spin.setValue(seq_out)
    page.recompute_now()


def test_cancel_stops_a_verify_run_and_stores_nothing(
    qtbot: QtBot,
    tiny_view: PlanView,
    store: MeasurementStore,
    fake_llama: type[_FakeLlama],
    tiny_gguf: Path,
) -> None:
    fake_llama.eval_seconds = 0.02
    _decode(tiny_view, 32, 100_000)  # would take half an hour
    panel = tiny_view.speed_page.measured_panel
    panel.set_gguf(tiny_gguf)
    assert panel.verify_button.isEnabled()
    panel.verify_button.click()
    assert panel.busy and panel.cancel_button.isEnabled()
    assert not panel.verify_button.isEnabled()
    qtbot.waitUntil(lambda: "decoding" in panel.progress_bar.format(), timeout=20_000)
    panel.cancel_button.click()
    qtbot.waitUntil(lambda: not panel.busy, timeout=20_000)
    assert panel.status_label.text() == "Cancelled: nothing was stored."
    assert not panel.progress_bar.isVisible()
    assert store.rows() == []
    assert fake_llama.evals < 1000
    assert fake_llama.closed == 1  # the model was let go
    assert fake_llama.loaded[0]["model_path"] == str(tiny_gguf)
    assert fake_llama.loaded[0]["n_gpu_layers"] == 0  # this machine's CPU
    assert panel.verify_button.isEnabled()


def test_a_verify_run_stores_its_measurement_and_calibrates_the_estimate(
    qtbot: QtBot,
    tiny_view: PlanView,
    store: MeasurementStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written: list[Path] = []

    def tiny_instead(shape: Any, path: Path, **kwargs: Any) -> int:
        # the preset's random-weight GGUF would be a gigabyte: the tiny one stands in
        written.append(path)
        assert shape.layers == 22  # TinyLlama's own shape was asked for
        return write_random_gguf(TINY, path, max_bytes=10**8)

    monkeypatch.setattr("gpudesk.measurements.verify_here.write_random_gguf", tiny_instead)
    _decode(tiny_view, 16, 24)
    page = tiny_view.speed_page
    panel = page.measured_panel
    assert not any(item.gpu_id == "cpu" for item in page.results)
    outcome = _verify(qtbot, panel)
    assert written and not written[0].exists()  # the temporary file is gone
    (row,) = store.rows()
    m = row.measurement
    assert (m.gpu_id, m.engine, m.mode, m.model, m.seq_in, m.seq_out) == (
        "cpu", "llama.cpp", "decode", "tinyllama-1.1b", 16, 24,
    )  # fmt: skip
    assert m.estimate_tokens_per_s == pytest.approx(outcome.estimate.tokens_per_s)
    assert "Stored as measurement 1" in panel.status_label.text()
    assert f"ratio {outcome.ratio:.2f}" in panel.status_label.text()
    # this machine's CPU joined the table, selected, calibrated with the run
    selected = page._selected()
    assert selected is not None and selected.gpu_id == "cpu"
    assert "calibrated with 1 of your measurements" in selected.basis
    assert "calibrated with 1 of your measurements" in page.basis_view.toPlainText()
    assert panel.tree.topLevelItemCount() == 1
    assert "GPUDesk verify, llama-cpp-python 0.3.fake" in panel.tree.topLevelItem(0).text(4)
    assert "measured" in panel.title_label.text() and NO_MEASUREMENT not in panel.title_label.text()


def test_without_llama_cpp_verify_says_what_to_install(
    qtbot: QtBot, state: AppState, store: MeasurementStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails
    view = _plan(qtbot, state, store, "tinyllama-1.1b")
    panel = view.speed_page.measured_panel
    assert not panel.verify_button.isEnabled()
    assert "pip install '.[verify]'" in panel.verify_button.toolTip()
    assert "pip install '.[verify]'" in panel.status_label.text()


def test_verify_asks_for_llama_cpp_and_a_decode_or_prefill_workload(tiny_view: PlanView) -> None:
    page = tiny_view.speed_page
    panel = page.measured_panel
    assert panel.verify_button.isEnabled()
    page.form.engine_combo.setCurrentIndex(page.form.engine_combo.findData("vllm"))
    page.recompute_now()
    assert not panel.verify_button.isEnabled()
    assert "llama.cpp" in panel.status_label.text()
    page.form.engine_combo.setCurrentIndex(page.form.engine_combo.findData("llama.cpp"))
    page.form.mode_combo.setCurrentIndex(page.form.mode_combo.findData("serve"))
    page.recompute_now()
    assert not panel.verify_button.isEnabled()
    assert "decode or prefill" in panel.status_label.text()


def test_a_random_weight_file_over_the_limit_is_refused_in_words(
    qtbot: QtBot, state: AppState, store: MeasurementStore, fake_llama: type[_FakeLlama]
) -> None:
    view = _plan(qtbot, state, store, "llama-3.1-8b")
    _decode(view, 16, 16)
    panel = view.speed_page.measured_panel
    # a file's size, in GB of 10^9 bytes like --max-file-gb, and said so beside GiB memory
    assert panel.limit_spin.suffix() == " GB" and "10⁹ bytes" in panel.limit_spin.toolTip()
    panel.limit_spin.setValue(0.5)
    panel.verify_button.click()
    qtbot.waitUntil(lambda: not panel.busy, timeout=20_000)
    assert "over the 0.50 GB limit" in panel.status_label.text()
    assert store.rows() == []
    assert fake_llama.loaded == []


def test_an_export_file_of_the_store_round_trips(
    qtbot: QtBot, opened: Opened, store: MeasurementStore, tmp_path: Path
) -> None:
    """A GPUDesk export imports through the dialog too (what others share)."""
    from gpudesk.measurements.store import export_document

    first = MeasurementStore(tmp_path / "other.sqlite")
    import_files([README_JSON], ImportHints(resolve_gpu=lambda name: "rtx-4080"), [], first)
    exported = tmp_path / "shared.json"
    exported.write_text(json.dumps(export_document(first.rows())), encoding="utf-8")
    dialog = opened.dialog
    _import(qtbot, dialog, [exported])
    assert "gpudesk export, 2 measurement(s)" in dialog.report_view.toPlainText()
    assert len(store.rows()) == 2


def test_compare_gains_a_measured_row_where_measurements_exist(
    qtbot: QtBot, state: AppState
) -> None:
    from gpudesk.ui.compare_view import CompareView

    store = MeasurementStore()  # the user's (this test's own data folder)
    view = _plan(qtbot, state, store, "qwen2.5-7b")
    compare = CompareView(state)
    qtbot.addWidget(compare)
    state.set_compare(["rtx-4080", "h100-sxm5"])
    assert compare.comparison is not None
    with pytest.raises(KeyError):
        compare.comparison.row("speed_measured")  # none stored yet: no row
    import_files(
        [README_JSON], ImportHints(resolve_gpu=lambda name: "rtx-4080"), state.entries(), store
    )
    view.recompute_now()  # the page sets the workload again, Compare rebuilds
    # the rows come from Compare's worker
    qtbot.waitUntil(lambda: "speed_measured" in {row.key for row in compare.comparison.rows})
    row = compare.comparison.row("speed_measured")
    assert row.label == "measured tokens/s (yours, same workload)"
    first, second = row.values
    assert isinstance(first, str) and first.startswith("119 (llama-bench, 2025-04-24; ×")
    assert second is None
    assert "measured tokens/s" in compare.comparison.to_text()


def test_verify_on_a_detected_gpu_offloads_every_layer_and_stores_that_gpu(
    qtbot: QtBot,
    tiny_view: PlanView,
    state: AppState,
    store: MeasurementStore,
    fake_llama: type[_FakeLlama],
    tiny_gguf: Path,
) -> None:
    _decode(tiny_view, 8, 8)
    page = tiny_view.speed_page
    panel = page.measured_panel
    state.set_detected(["rtx-4090"])
    assert panel.device_combo.count() == 2
    panel.device_combo.setCurrentIndex(1)
    panel.set_gguf(tiny_gguf)
    _verify(qtbot, panel)
    assert fake_llama.loaded[0]["n_gpu_layers"] == TINY.layers + 1
    (row,) = store.rows()
    assert (row.measurement.gpu_id, row.measurement.backend) == ("rtx-4090", None)
    selected = page._selected()
    assert selected is not None and selected.gpu_id == "rtx-4090"


def test_a_later_session_puts_the_measured_cpu_back_in_the_table(
    qtbot: QtBot, tiny_view: PlanView, state: AppState, store: MeasurementStore, tiny_gguf: Path
) -> None:
    _decode(tiny_view, 8, 8)
    panel = tiny_view.speed_page.measured_panel
    panel.set_gguf(tiny_gguf)
    _verify(qtbot, panel)
    # the app again, later: the CPU's rates are measured on a worker, its row returns
    again = _plan(qtbot, state, store, "tinyllama-1.1b")
    page = again.speed_page
    qtbot.waitUntil(lambda: page.cpu_entry is not None, timeout=20_000)
    cpu = next(item for item in page.results if item.gpu_id == "cpu")
    assert "calibrated with 1 of your measurements" in cpu.basis
    assert page.select_gpu("cpu")
    assert page.measured_panel.tree.topLevelItemCount() == 1


def test_a_file_that_is_not_a_gguf_is_refused_before_anything_runs(
    tiny_view: PlanView, store: MeasurementStore, fake_llama: type[_FakeLlama], tmp_path: Path
) -> None:
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"GGUF" + b"\xff" * 64)
    panel = tiny_view.speed_page.measured_panel
    panel.set_gguf(bad)
    panel.verify_button.click()
    assert not panel.busy
    assert panel.status_label.text().startswith("The GGUF file:")
    assert str(bad) in panel.status_label.text() or "model.gguf" in panel.status_label.text()
    assert fake_llama.loaded == [] and store.rows() == []


def test_the_page_holds_no_reference_cycle(qtbot: QtBot, state: AppState) -> None:
    """A cycle left a closed page to the garbage collector, which then deleted its
    widgets at any moment, once inside QApplication.allWidgets() (a crash)."""
    import gc
    import weakref

    gc.collect()
    gc.disable()
    try:
        view = PlanView(state)
        page = weakref.ref(view.speed_page)
        panel = weakref.ref(view.speed_page.measured_panel)
        view.speed_page.open_import_dialog()
        view.close()
        view.deleteLater()
        del view
        qtbot.wait(50)
        assert page() is None and panel() is None
    finally:
        gc.enable()


def test_how_fast_reads_llama_cpp_weights_as_its_gguf_file_as_speed_does(
    qtbot: QtBot, state: AppState, store: MeasurementStore
) -> None:
    # gpt-oss's GGUF keeps non-expert matrices at Q8_0, its safetensors release at bf16:
    # the page must stream what `gpudesk speed --engine llama.cpp` streams.
    from gpudesk.speed.estimate import KvFormat, model_costs
    from gpudesk.speed.shapes import shape_for
    from gpudesk.workload.quant import QuantFormat

    view = _plan(qtbot, state, store, "gpt-oss-20b")
    page = view.speed_page
    form = page.form
    form.quant_combo.setCurrentIndex(form.quant_combo.findData(QuantFormat.MXFP4.value))
    form.mode_combo.setCurrentIndex(form.mode_combo.findData("decode"))
    view.recompute_now()
    shape = shape_for("gpt-oss-20b")
    as_gguf = model_costs(shape, QuantFormat.MXFP4, KvFormat.FP16, gguf=True)
    as_release = model_costs(shape, QuantFormat.MXFP4, KvFormat.FP16)
    assert as_gguf.streamed_bytes < as_release.streamed_bytes
    assert page._costs.streamed_bytes == pytest.approx(as_gguf.streamed_bytes)

    form.engine_combo.setCurrentIndex(form.engine_combo.findData("vllm"))
    view.recompute_now()
    assert page._costs.streamed_bytes == pytest.approx(as_release.streamed_bytes)
