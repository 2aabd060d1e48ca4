"""Crafted survey documents: nodes with GPUs, benchmark rows and faults, as the nodes send them."""

from __future__ import annotations

from typing import Any


def gpu(index: int, name: str = "NVIDIA H100 80GB HBM3", **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "kind": "gpu",
        "index": index,
        "name": name,
        "uuid": f"GPU-{index:08d}",
        "lost": False,
        "memory_total_mib": 81559,
        "pcie_gen_current": 5,
        "pcie_gen_max": 5,
        "pcie_width_current": 16,
        "pcie_width_max": 16,
        "clock_event_reasons": [],
        "catalog_id": "h100-sxm5",
    }
    base.update(fields)
    return base


def gemm_run(
    index: int, tflops: float, catalog_id: str | None = "h100-sxm5", **row: Any
) -> dict[str, Any]:
    measurement = {
        "test": "gemm",
        "dtype": "bf16",
        "value": tflops,
        "unit": "TFLOPS",
        "peak": 989.4,
    }
    measurement["fraction_of_peak"] = tflops / 989.4
    measurement.update(row)
    copy = {"test": "copy", "dtype": "uint8", "value": 2900.0, "unit": "GB/s"}
    return {
        "backend": "torch",
        "device": {"kind": "cuda", "index": index, "name": "NVIDIA H100 80GB HBM3"},
        "catalog_id": catalog_id,
        "results": [measurement, copy],
    }


def cpu_run(gflops: float, model: str = "AMD EPYC") -> dict[str, Any]:
    return {
        "backend": "numpy",
        "device": {"kind": "cpu", "index": 0, "name": model},
        "catalog_id": None,
        "results": [{"test": "gemm", "dtype": "fp64", "value": gflops / 1000, "unit": "TFLOPS"}],
    }


def node(
    node_id: str,
    gpus: list[dict[str, Any]] | None = None,
    benches: list[dict[str, Any]] | None = None,
    *,
    driver: str | None = "550.54.15",
    error: str | None = None,
    cpu_model: str = "AMD EPYC",
) -> dict[str, Any]:
    detection = None
    if error is None:
        detection = {
            "status": "ok" if gpus else "library_not_found",
            "driver_version": driver if gpus else None,
            "gpus": gpus or [],
            "cpu": {"model": cpu_model, "threads": 64},
            "ram_total_gib": 503.0,
        }
    benches = benches or []
    return {
        "node_id": node_id,
        "hostname": f"host-{node_id}",
        "ip": f"127.0.0.{len(node_id) % 200 + 1}",
        "detection": detection,
        "bench": benches[0] if benches else None,
        "benches": benches,
        "error": error,
        "duration_s": 1.0,
    }


def survey(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "survey_schema_version": 1,
        "cluster": {
            "address": "127.0.0.1:6379",
            "ray_version": "2.60.0",
            "nodes_alive": len(nodes),
            "surveyed_at": "2026-12-01T06:49:00+00:00",
        },
        "nodes": nodes,
        "summary": {"nodes": 0, "gpus": 0, "by_model": {}, "outliers": []},
    }
