"""A memory estimate whose weights are a model file's exact bytes (``--gguf``,
``--safetensors``): the file's tensors, not the parameter count times bits per weight."""

from __future__ import annotations

from gpudesk.memory.breakdown import Engine, MemoryEstimate, MemoryPart, PartKey, Workload
from gpudesk.workload.modelfile import ModelFile


def with_file_weights(estimate: MemoryEstimate, model_file: ModelFile) -> MemoryEstimate:
    """``estimate`` (a MemoryEstimate) with its weights part the file's exact bytes.

    Inference only (a GGUF or safetensors file is served, not trained here): the
    weights become the file's tensor bytes, less the input embedding table where
    llama.cpp keeps it in host memory, divided by the tensor-parallel degree. The other
    parts are the estimate's own.
    """
    spec = estimate.spec
    if spec.workload is not Workload.INFERENCE:
        return estimate
    host = 0
    formula = f"{model_file.tensor_bytes:,} bytes of tensors in {model_file.path} (exact)"
    if spec.engine is Engine.LLAMA_CPP and model_file.lm_head_bytes:
        host = model_file.embedding_bytes
        formula += (
            f"; the {host / 1e9:.3f} GB input embedding table stays in host memory (llama.cpp)"
        )
    total = (model_file.tensor_bytes - host) / spec.tensor_parallel
    if spec.tensor_parallel > 1:
        formula += f" / {spec.tensor_parallel} (tensor parallel)"
    part = MemoryPart(
        key=PartKey.WEIGHTS,
        gb=total / 1e9,
        formula=f"{formula} = {total / 1e9:.2f} GB",
        source=f"the file's header: every tensor's GGML/safetensors type and shape "
        f"({model_file.format})",
        host_gb=host / 1e9,
    )
    parts = tuple(part if item.key is PartKey.WEIGHTS else item for item in estimate.parts)
    streamed = estimate.decode_bytes_per_token
    if streamed is not None and estimate.weights is not None:
        kv_and_rest = streamed - estimate.weights.streamed_per_token_bytes * (
            estimate.model.params / estimate.weights.params
        )
        streamed = model_file.streamed_per_token_bytes + max(0.0, kv_and_rest)
    return estimate.model_copy(update={"parts": parts, "decode_bytes_per_token": streamed})
