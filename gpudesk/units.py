"""Byte units, defined once: what a memory size is counted in and how it is shown.

The memory model counts in GB = 10^9 bytes (parameters x bytes per parameter reads
straight off: 7B in bf16 is 14.0 GB). People read memory in GiB = 2^30 bytes: a GPU
sold as "24 GB" holds 24 GiB (nvidia-smi totals an A100 80GB at 81,920 MiB), and
PyTorch and the engines' logs count in GiB. So every size GPUDesk shows, on screen
and in text, is GiB and says so; GB appears only where a decimal figure is quoted
and labelled as such (a bandwidth in GB/s, a model download's size).
"""

from __future__ import annotations

#: 10^9 bytes: the memory model's unit (``*_gb`` fields, ``MemoryPart.gb``)
GB = 1e9
#: 2^30 bytes: the unit sizes are shown in, and what a GPU vendor's "GB" means
GIB = 2**30
#: 2^20 bytes: nvidia-smi's unit
MIB = 2**20
#: how many GB one GiB is, as text for a note that sets the two side by side
GB_PER_GIB_TEXT = f"{GIB / GB:.3f}"
#: Said where a size as sold, in GiB, stands beside a product name's "80GB".
VENDOR_GB_IS_GIB = "a vendor's '80 GB' is 80 GiB (nvidia-smi totals an A100 80GB at 81,920 MiB)"


def gib(value_gb: float) -> float:
    """A size given in GB (10^9 bytes, the memory model's unit) in GiB."""
    return value_gb * GB / GIB


def gib_text(value_gb: float, decimals: int = 1, *, sign: bool = False) -> str:
    """ "19.2 GiB" (or "+4.8 GiB" with ``sign``) for a size given in GB (10^9 bytes)."""
    return f"{gib(value_gb):{'+' if sign else ''},.{decimals}f} GiB"
