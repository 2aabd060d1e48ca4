"""Fake ``nvidia-smi`` executables for the doctor tests.

Each is a small Python script that behaves like the real tool for the one
query GPUDesk makes: it rejects a field it does not know the way nvidia-smi
does (exit 2, ``Field "x" is not a valid field to query.``), insists on
``--format=csv,noheader,nounits``, and prints the rows it was given.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

#: What nvidia-smi prints for the fake NVML library's two GPUs (tests/hardware/fake_nvml.c).
H100_ROW = (
    "0, NVIDIA H100 80GB HBM3, GPU-h100aaaa-1111-2222-3333-444455556666, 00000000:1B:00.0, "
    "0x233010DE, 81559, 535.288.01, 700.00, 1980, 2619, Disabled"
)
RTX_4090_ROW = (
    "1, NVIDIA GeForce RTX 4090, GPU-4090bbbb-1111-2222-3333-444455556666, 00000000:41:00.0, "
    "0x268410DE, 24564, 535.288.01, 450.00, 3120, 10501, [N/A]"
)
AGREEING = (H100_ROW, RTX_4090_ROW)
#: The second H100 of the fake NVML library's "two_h100" scenario.
H100_SECOND_ROW = (
    "1, NVIDIA H100 80GB HBM3, GPU-h100eeee-1111-2222-3333-444455556666, 00000000:2A:00.0, "
    "0x233010DE, 81559, 535.288.01, 700.00, 1980, 2619, Disabled"
)

_VALID_FIELDS = [
    "index",
    "name",
    "uuid",
    "pci.bus_id",
    "pci.device_id",
    "memory.total",
    "memory.used",
    "driver_version",
    "power.limit",
    "enforced.power.limit",
    "clocks.max.sm",
    "clocks.max.memory",
    "mig.mode.current",
    "temperature.gpu",
]

_SCRIPT = """#!{python}
import json, sys
rows, code, stderr = json.loads({payload!r})
args = sys.argv[1:]
query = [a for a in args if a.startswith("--query-gpu=")]
if not query or "--format=csv,noheader,nounits" not in args:
    print("usage: --query-gpu=... --format=csv,noheader,nounits", file=sys.stderr)
    sys.exit(2)
for field in query[0].split("=", 1)[1].split(","):
    if field not in {valid!r}:
        print(f'Field "{{field}}" is not a valid field to query.', file=sys.stderr)
        sys.exit(2)
if stderr:
    print(stderr, file=sys.stderr)
for row in rows:
    print(row)
sys.exit(code)
"""


def write_fake_nvidia_smi(
    folder: Path, rows: Sequence[str] = AGREEING, exit_code: int = 0, stderr: str = ""
) -> Path:
    """An executable ``folder/nvidia-smi`` printing ``rows``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "nvidia-smi"
    payload = json.dumps([list(rows), exit_code, stderr])
    path.write_text(
        _SCRIPT.format(python=sys.executable, payload=payload, valid=_VALID_FIELDS),
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path
