"""``gpudesk bench``: the contract of flags, JSON output, exit codes and history."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from bench_fakes import FakeBackend, FakeConfig

from gpudesk.bench.history import list_runs
from gpudesk.cli import main
from gpudesk.cli.bench_cmd import render_text

FAST = ["--backend", "numpy", "--tests", "gemm,copy", "--dtypes", "fp64"]


@pytest.fixture
def tiny_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep real numpy runs small: the CLI's plan is shrunk after it is made."""
    import gpudesk.bench.plan as plan_module

    original = plan_module.make_plan

    def small_plan(*args, **kwargs):  # type: ignore[no-untyped-def]
        return original(*args, **kwargs).model_copy(
            update={"gemm_size": 128, "copy_bytes": 16 * 2**20, "sweep_sizes": (64,)}
        )

    monkeypatch.setattr(plan_module, "make_plan", small_plan)


def test_json_output_is_the_contract_and_saved(
    tiny_numpy: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", *FAST, "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert list(data)[:6] == ["backend", "device", "catalog_id", "results", "sweep", "environment"]
    assert data["backend"] == "numpy"
    assert [(r["test"], r["dtype"]) for r in data["results"]] == [
        ("gemm", "fp64"),
        ("copy", "bytes"),
    ]
    assert data["results"][0]["unit"] == "TFLOPS"
    assert data["results"][0]["size"] == 128
    items, problems = list_runs()
    assert problems == []
    assert len(items) == 1
    assert items[0].result.model_dump(mode="json") == data


def test_human_output_and_out_file(
    tiny_numpy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "run.json"
    assert main(["bench", *FAST, "--out", str(target), "--no-save"]) == 0
    captured = capsys.readouterr()
    assert "GEMM FP64" in captured.out
    assert "% of peak" in captured.out
    assert "a CPU has no catalog peak" in captured.out
    assert json.loads(target.read_text())["backend"] == "numpy"
    assert list_runs()[0] == [], "--no-save saves nothing"


def test_list_backends(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["bench", "--list-backends", "--json"]) == 0
    listed = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert listed["numpy"]["available"] is True
    assert listed["torch"]["available"] is False
    assert "PyTorch" in listed["torch"]["reason"]
    assert main(["bench", "--list-backends"]) == 0
    assert "Why not" in capsys.readouterr().out


def test_unavailable_backend_exits_2_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["bench", "--backend", "torch"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpudesk: backend torch is not available: PyTorch is not importable")


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--backend", "numpy", "--tests", "fft"]) == 2
    assert "unknown test(s): fft" in capsys.readouterr().err
    assert main(["bench", "--backend", "numpy", "--device", "2"]) == 2
    assert "one device" in capsys.readouterr().err
    assert main(["bench", "--backend", "numpy", "--tests", "h2d"]) == 2
    assert "nothing to run" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["bench", "--backend", "jax"])
    assert exited.value.code == 2


def _use_fake(monkeypatch: pytest.MonkeyPatch, backend: FakeBackend) -> None:
    import gpudesk.bench.backends as backends

    monkeypatch.setattr(backends, "choose_backend", lambda name: backend)


def test_failing_backend_is_an_error_result_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use_fake(monkeypatch, FakeBackend(FakeConfig(open_error="device fell off the bus")))
    assert main(["bench", "--json"]) == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert "device fell off the bus" in data["error"]
    assert data["results"] == []
    assert "Traceback" not in captured.err
    assert "device fell off the bus" in captured.err
    assert len(list_runs()[0]) == 1, "failed runs are kept too"


def test_one_failing_test_exits_1_with_the_rest_shown(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use_fake(monkeypatch, FakeBackend(FakeConfig(failing={("gemm", "bf16")})))
    assert main(["bench", "--tests", "gemm", "--no-save"]) == 1
    out = capsys.readouterr().out
    assert "GEMM BF16" in out and "failed" in out
    assert "GEMM FP16" in out


def test_render_text_shows_percent_of_peak() -> None:
    from bench_fakes import FixedProbe, catalog_entry

    from gpudesk.bench.plan import make_plan
    from gpudesk.bench.runner import run_benchmark
    from gpudesk.progress import ProgressState

    backend = FakeBackend()
    plan = make_plan(backend.capabilities(0), tests=["gemm", "copy"], dtypes=["fp16"])
    result = run_benchmark(
        plan, backend, ProgressState(), catalog=[catalog_entry()], probe=FixedProbe("fake-gpu")
    )
    text = render_text(result)
    assert "Catalog:  peaks from catalog entry fake-gpu" in text
    fp16 = result.find("gemm", "fp16")
    assert fp16 is not None and fp16.fraction_of_peak is not None
    assert f"{fp16.fraction_of_peak:5.0%}" in text
    assert "memory copy" in text and " 50% #####....." in text
    reps = {row.repetitions for row in result.results if row.value is not None}
    assert f"median of {'/'.join(str(n) for n in sorted(reps))} timed repetitions" in text
    assert "GEMM FLOPs = 2n^3" in text


@pytest.mark.parametrize(
    ("fraction", "bar"),
    [(1e308, "#" * 10), (-3.0, "." * 10), (0.5, "#" * 5 + "." * 5), (2.0, "#" * 10)],
)
def test_percent_bar_clamps_any_finite_fraction(fraction: float, bar: str) -> None:
    # An imported report may hold any finite fraction: 1e308 x 10 is inf, and round(inf) raises.
    from gpudesk.cli.bench_cmd import _percent_bar

    assert _percent_bar(fraction).endswith(" " + bar)
