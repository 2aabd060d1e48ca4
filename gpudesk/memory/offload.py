"""llama.cpp's partial offload: which weights stay in host memory when the GPU is too small.

llama.cpp can keep part of a model in host memory and run it on the CPU:

- ``-ngl N`` (``--n-gpu-layers``) puts N of the model's ``layers + 1`` offloadable layers
  on the GPU: the last repeating layers first, the output layer (LM head) only when all
  repeating layers are there. The other layers' weights *and their KV cache* stay in host
  memory.
- ``--n-cpu-moe N`` keeps the routed-expert tensors of the first N layers in host memory;
  attention, shared experts and the KV cache stay on the GPU. A token reads only its active
  experts, so far fewer bytes cross to the CPU per token than with ``-ngl``.

:func:`plan_offload` picks the most the GPU holds (or applies the user's ``--gpu-layers``
/ ``--cpu-moe``); decode then reads the host part at the host's bandwidth, one after the
other with the GPU part (:func:`gpudesk.speed.physics.decode_step`).

Host bandwidth: this machine's CPU benchmark (its measured copy) when the GPU in question
is this machine's, else :data:`DEFAULT_HOST`: a dual-channel DDR5-5600 desktop, 89.6 GB/s
peak (2 channels x 8 bytes x 5600 MT/s), of which llama.cpp's CPU decode reaches about
78% (53.3 of 68.2 GB/s on an M1, ggml-org/llama.cpp PR #1642).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, computed_field

from gpudesk.memory.breakdown import Engine, MemoryEstimate, PartKey, Workload
from gpudesk.workload.architecture import ModelShape
from gpudesk.workload.quant import QuantFormat, tensor_bits

#: 2 channels x 8 bytes x 5600 MT/s (JEDEC DDR5-5600), GB/s
DESKTOP_DDR5_PEAK_GBS = 2 * 8 * 5.6
#: llama.cpp's CPU decode read 53.3 GB/s of an M1's 68.2 GB/s (PR #1642)
CPU_DECODE_SHARE = 53.3 / 68.2
HOST_SOURCE = (
    "host memory: dual-channel DDR5-5600 = 2 × 8 bytes × 5600 MT/s = 89.6 GB/s peak; "
    "llama.cpp's CPU decode reaches ~78% of peak (53.3 of 68.2 GB/s on an Apple M1, "
    "https://github.com/ggml-org/llama.cpp/pull/1642)"
)
OFFLOAD_SOURCE = (
    "llama.cpp -ngl/--n-gpu-layers (the output layer is offloaded last) and --n-cpu-moe "
    "(expert tensors of the first N layers stay on the CPU), "
    "https://github.com/ggml-org/llama.cpp/tree/master/tools/main"
)


class HostMemory(BaseModel):
    """The host's effective bandwidth for llama.cpp's CPU layers, and where it came from."""

    model_config = ConfigDict(frozen=True)

    bandwidth_gbs: float
    basis: str


DEFAULT_HOST = HostMemory(
    bandwidth_gbs=DESKTOP_DDR5_PEAK_GBS * CPU_DECODE_SHARE,
    basis=f"a typical desktop, not this machine: {HOST_SOURCE}",
)


def measured_host(copy_gbs: float, when: str) -> HostMemory:
    """This machine's CPU memory copy (the built-in CPU benchmark) as the host bandwidth."""
    return HostMemory(
        bandwidth_gbs=copy_gbs,
        basis=f"this machine's CPU benchmark of {when}: memory copy {copy_gbs:,.1f} GB/s",
    )


class LayerBytes(BaseModel):
    """One model's weights per repeating layer in one format (bytes)."""

    model_config = ConfigDict(frozen=True)

    #: every weight of each layer, and the routed-expert tensors among them
    held: tuple[float, ...]
    experts_held: tuple[float, ...]
    #: bytes a decoded token reads of each layer, and of its routed experts
    streamed: tuple[float, ...]
    experts_streamed: tuple[float, ...]
    #: the output layer (LM head and final norm): held and read per token alike
    output: float


def layer_bytes(shape: ModelShape, fmt: QuantFormat) -> LayerBytes:
    """Per-layer bytes of ``shape`` stored in ``fmt`` as llama.cpp's GGUF (the tables
    ``fit`` uses)."""
    layers = shape.layers
    held = [0.0] * layers
    experts_held = [0.0] * layers
    streamed = [0.0] * layers
    experts_streamed = [0.0] * layers
    output = 0.0
    for group in shape.tensors():
        bits = tensor_bits(fmt, shape, group, gguf=True)
        size = group.params * bits / 8
        read = group.params_each * group.read_per_token * bits / 8
        if group.layer is None:
            if group.read_per_token > 0:  # the LM head and final norm, not the embedding
                output += size
            continue
        held[group.layer] += size
        streamed[group.layer] += read
        if group.routed_expert:
            experts_held[group.layer] += size
            experts_streamed[group.layer] += read
    return LayerBytes(
        held=tuple(held),
        experts_held=tuple(experts_held),
        streamed=tuple(streamed),
        experts_streamed=tuple(experts_streamed),
        output=output,
    )


class Offload(BaseModel):
    """What llama.cpp keeps in host memory for one GPU, and what a token reads there."""

    model_config = ConfigDict(frozen=True)

    layers: int
    #: -ngl: of ``layers + 1`` (the repeating layers and the output layer)
    gpu_layers: int
    #: --n-cpu-moe: layers whose routed experts stay in host memory (0: none)
    cpu_moe: int
    #: bytes held in host memory: weights and KV cache
    host_weight_bytes: float
    host_kv_bytes: float
    #: share of the KV cache in host memory (the CPU layers')
    host_kv_share: float
    #: weight bytes a decoded token reads from host memory
    host_streamed_bytes: float
    #: what the GPU still needs (bytes)
    gpu_bytes: float
    host: HostMemory

    @computed_field  # type: ignore[prop-decorator]
    @property
    def host_gb(self) -> float:
        return (self.host_weight_bytes + self.host_kv_bytes) / 1e9

    @computed_field  # type: ignore[prop-decorator]
    @property
    def words(self) -> str:
        """ "-ngl 24: 24 of 33 layers on the GPU, ..." for the basis and the tables."""
        if self.cpu_moe:
            return (
                f"--n-cpu-moe {self.cpu_moe}: the expert tensors of {self.cpu_moe} of "
                f"{self.layers} layers ({self.host_gb:,.2f} GB) stay in host memory"
            )
        return (
            f"-ngl {self.gpu_layers}: {self.gpu_layers} of {self.layers + 1} layers on the GPU, "
            f"{self.layers + 1 - self.gpu_layers} ({self.host_gb:,.2f} GB) in host memory"
        )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def flag(self) -> str:
        return f"--n-cpu-moe {self.cpu_moe}" if self.cpu_moe else f"-ngl {self.gpu_layers}"


def offloadable(estimate: MemoryEstimate) -> bool:
    """llama.cpp inference of a transformer: the only case that offloads layers."""
    spec = estimate.spec
    return (
        spec.workload is Workload.INFERENCE
        and spec.engine is Engine.LLAMA_CPP
        and estimate.model.shape is not None
        and spec.quant is not None
    )


def _with(
    estimate: MemoryEstimate, table: LayerBytes, gpu_layers: int, cpu_moe: int, host: HostMemory
) -> Offload:
    shape = estimate.model.shape
    assert shape is not None
    layers = shape.layers
    cpu_layers = max(0, layers - gpu_layers)  # the first layers stay on the CPU
    host_held = sum(table.held[:cpu_layers])
    host_read = sum(table.streamed[:cpu_layers])
    if gpu_layers <= layers:  # the output layer is offloaded only with all the others
        host_held += table.output
        host_read += table.output
    moe = min(cpu_moe, layers)
    for layer in range(cpu_layers, moe):  # experts of GPU layers kept on the CPU
        host_held += table.experts_held[layer]
        host_read += table.experts_streamed[layer]
    kv = estimate.part(PartKey.KV_CACHE).gb * 1e9
    share = cpu_layers / layers if layers else 0.0
    gpu = estimate.total_gb * 1e9 - host_held - kv * share
    return Offload(
        layers=layers,
        gpu_layers=min(gpu_layers, layers + 1),
        cpu_moe=moe,
        host_weight_bytes=host_held,
        host_kv_bytes=kv * share,
        host_kv_share=share,
        host_streamed_bytes=host_read,
        gpu_bytes=gpu,
        host=host,
    )


def plan_offload(
    estimate: MemoryEstimate,
    usable_bytes: float,
    *,
    gpu_layers: int | None = None,
    cpu_moe: int | None = None,
    host: HostMemory = DEFAULT_HOST,
) -> Offload | None:
    """What llama.cpp keeps in host memory so one GPU holds the rest; None when even then
    it does not fit (or the workload cannot offload).

    ``gpu_layers`` / ``cpu_moe``: the user's ``-ngl`` / ``--n-cpu-moe``, applied as given
    (None when they leave the GPU short). Otherwise a mixture of experts keeps the experts
    of the fewest layers on the CPU, a dense model the most layers on the GPU.
    """
    if not offloadable(estimate):
        return None
    shape = estimate.model.shape
    assert shape is not None and estimate.spec.quant is not None
    table = layer_bytes(shape, estimate.spec.quant)
    layers = shape.layers
    if gpu_layers is not None or cpu_moe is not None:
        given = _with(
            estimate,
            table,
            layers + 1 if gpu_layers is None else gpu_layers,
            cpu_moe or 0,
            host,
        )
        return given if given.gpu_bytes <= usable_bytes else None
    if shape.is_moe:
        for moe in range(1, layers + 1):
            found = _with(estimate, table, layers + 1, moe, host)
            if found.gpu_bytes <= usable_bytes:
                return found
    for ngl in range(layers, -1, -1):
        found = _with(estimate, table, ngl, 0, host)
        if found.gpu_bytes <= usable_bytes:
            return found
    return None


__all__ = [
    "DEFAULT_HOST",
    "HOST_SOURCE",
    "OFFLOAD_SOURCE",
    "HostMemory",
    "LayerBytes",
    "Offload",
    "layer_bytes",
    "measured_host",
    "offloadable",
    "plan_offload",
]
