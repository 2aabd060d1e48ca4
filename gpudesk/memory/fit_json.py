"""``fit --json``: a :class:`~gpudesk.memory.fit.FitReport` as a JSON document.

The keys are a public contract (``tests/cli/test_cli_plan.py``): new ones are added,
none removed or renamed.
"""

from __future__ import annotations

from typing import Any

from gpudesk.memory.breakdown import MemoryEstimate
from gpudesk.memory.fit import DECODE_LABEL, DECODE_SOURCE, FitReport, GpuAnswer, GpuFit


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def fit_json(report: FitReport) -> dict[str, Any]:
    """The ``fit --json`` document: total_gb, breakdown, fits, and the working."""
    estimate = report.estimate
    return {
        "model": _model_json(estimate),
        "workload": estimate.spec.model_dump(mode="json"),
        "gb_definition": "1 GB = 10^9 bytes",
        "memory_unit_note": (
            "the catalog's memory_gb is the vendor's GB, which is GiB (2^30 bytes); "
            "usable_gb is what a workload may use of each GPU, in 10^9 bytes"
        ),
        "total_gb": round(estimate.total_gb, 4),
        "total_gib": round(estimate.total_gb * 1e9 / 2**30, 4),
        "allocated_gb": round(estimate.allocated_gb, 4),
        "host_memory_gb": round(estimate.host_gb, 4),
        "compares_with": estimate.compares_with,
        "per_gpu_for": estimate.fixed_gpus,
        "usable_memory_fraction": estimate.usable_fraction,
        "weights_format": _weights_json(estimate),
        "breakdown": {key: round(value, 4) for key, value in estimate.breakdown_gb().items()},
        "formulas": {part.key.value: part.formula for part in estimate.parts},
        "part_sources": {part.key.value: part.source for part in estimate.parts},
        "trainable_params": estimate.trainable_params,
        "overhead_per_gpu_gb": estimate.fixed_overhead_gb,
        "fragmentation_fraction": estimate.fragmentation_fraction,
        "notes": list(estimate.notes),
        "decode_bytes_per_token": _round(estimate.decode_bytes_per_token, 0),
        "decode_note": f"{DECODE_LABEL}; an upper bound, not a prediction. {DECODE_SOURCE}",
        "fits": [_gpu_fit_json(result) for result in report.fits],
        "excluded": [
            {"gpu_id": result.gpu_id, "reason": result.excluded_reason}
            for result in report.excluded
        ],
        "too_small": [result.gpu_id for result in report.too_small],
        "offloaded": [offload_json(result) for result in report.offloaded],
    }


def _model_json(estimate: MemoryEstimate) -> dict[str, Any]:
    model = estimate.model
    return {
        "id": model.id,
        "name": model.name,
        "params": model.params,
        "active_params": model.active_params,
        "kind": model.kind.value,
        "assumed_shape": model.assumed,
        "assumed_fields": list(model.assumed_fields),
        "architecture": model.summary(),
        "shape": model.shape.model_dump(mode="json") if model.shape else None,
        "sources": list(model.sources),
    }


def _weights_json(estimate: MemoryEstimate) -> dict[str, Any] | None:
    weights = estimate.weights
    if weights is None:
        return None
    params = estimate.model.params
    return {
        "format": weights.format.value,
        "label": weights.format.label,
        "bits_per_weight": round(weights.bits_per_weight, 4),
        "stored_gb": round(weights.in_memory_bytes * params / weights.params / 1e9, 4),
        "bulk_bits": weights.bulk_bits,
        "embedding_bits": weights.embedding_bits,
        "lm_head_bits": weights.lm_head_bits,
        "streamed_per_token_gb": round(
            weights.streamed_per_token_bytes * params / weights.params / 1e9, 4
        ),
    }


def _gpu_fit_json(result: GpuFit) -> dict[str, Any]:
    known = result.memory_gb is not None  # no memory size published: no usable figures
    return {
        "gpu_id": result.gpu_id,
        "count": result.count,
        "name": result.name,
        "memory_gb": result.memory_gb,
        "usable_gb": round(result.usable_gb, 4) if known else None,
        "usable_gib": round(result.usable_gib, 4) if known else None,
        "usable_basis": result.usable_basis,
        "max_devices": result.max_devices,
        "per_gpu_gb": round(result.per_gpu_gb, 4),
        "per_gpu_gib": round(result.per_gpu_gb * 1e9 / 2**30, 4),
        "headroom_gb": round(result.headroom_gb, 4) if known else None,
        "needs_parallelism": result.needs_parallelism,
        "decode_tokens_per_s_upper_bound": _round(result.decode_tokens_per_s_upper_bound, 1),
    }


def offload_json(result: Any) -> dict[str, Any]:
    """One ``offloaded`` item of ``fit --json``: a GPU and what stays in host memory."""
    offload = result.offload
    on_gpu = offload.gpu_bytes / 1e9
    return {
        "gpu_id": result.gpu_id,
        "count": 1,
        "usable_gb": round(result.usable_gb, 4),
        "per_gpu_gb": round(on_gpu, 4),
        "headroom_gb": round(result.usable_gb - on_gpu, 4),
        "gpu_layers": offload.gpu_layers,
        "layers": offload.layers,
        "cpu_moe": offload.cpu_moe,
        "llama_cpp_flag": offload.flag,
        "host_memory_gb": round(offload.host_gb, 4),
        "host_streamed_per_token_gb": round(offload.host_streamed_bytes / 1e9, 6),
        "host_bandwidth_gbs": round(offload.host.bandwidth_gbs, 2),
        "host_basis": offload.host.basis,
        "words": offload.words,
    }


def gpu_answer_json(answer: GpuAnswer) -> dict[str, Any]:
    """``fit --gpu NAME --json``'s ``gpu`` key: that GPU's fit, and the longest context.

    ``fits`` is true when whole GPUs hold it (``count`` of them); ``offload`` is
    llama.cpp's plan with part in host memory, or null; ``longest_context_tokens`` is
    the longest sequence ``longest_context_count`` of the GPUs hold (null: none).
    """
    fit = answer.fit
    longest = answer.longest
    return {
        **_gpu_fit_json(fit),
        "fits": fit.fits,
        "excluded_reason": fit.excluded_reason,
        "seq": answer.seq,
        "model_context_tokens": answer.max_context,
        "longest_context_tokens": longest.context if longest is not None else None,
        "longest_context_count": longest.count if longest is not None else None,
        "offload": offload_json(fit) if fit.offload is not None and not fit.fits else None,
    }
