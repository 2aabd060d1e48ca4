"""A synthetic catalog of N valid entries, generated (never committed) for scale tests."""

from __future__ import annotations

import random
from pathlib import Path

from gpudesk.catalog.loader import load_catalog

_SEGMENTS = ("consumer", "workstation", "datacenter")
_VENDORS = ("NVIDIA", "AMD", "Intel")
_ARCHITECTURES = ("Ampere", "Ada Lovelace", "Hopper", "Blackwell", "CDNA 3", "RDNA 3", "Xe2")


def _entry_toml(index: int, rng: random.Random) -> str:
    memory_gb = rng.choice((8, 12, 16, 24, 32, 48, 80, 96, 141, 192))
    lines = [
        f'id = "synthetic-{index:05d}"',
        f'name = "Synthetic GPU {index:05d} {rng.choice(("Pro", "Max", "Lite", "X"))}"',
        f'vendor = "{rng.choice(_VENDORS)}"',
        f'segment = "{rng.choice(_SEGMENTS)}"',
        f'architecture = "{rng.choice(_ARCHITECTURES)}"',
        f"release_year = {rng.randint(2016, 2026)}",
        f"memory_gb = {memory_gb}",
        'memory_type = "GDDR6"',
        f"bandwidth_gbs = {rng.uniform(200, 8000):.1f}",
        f"fp32_tflops = {rng.uniform(5, 120):.2f}",
        f"tdp_w = {rng.randint(70, 1200)}",
        f"ecc = {rng.choice(('true', 'false'))}",
        f"nvlink = {rng.choice(('true', 'false'))}",
        'sources = ["synthetic benchmark data"]',
        'notes = "generated for the performance harness"',
    ]
    if rng.random() < 0.8:
        lines.append(f"fp16_tensor_tflops = {rng.uniform(20, 2500):.1f}")
        lines.append(f"bf16_tensor_tflops = {rng.uniform(20, 2500):.1f}")
    if rng.random() < 0.5:
        lines.append(f"fp64_tflops = {rng.uniform(0.1, 80):.2f}")
    if rng.random() < 0.3:
        lines.append(f"mig_max_instances = {rng.choice((4, 7))}")
    if rng.random() < 0.85:
        lines.append(f"price_usd = {rng.randint(200, 40000)}")
        lines.append("price_date = 2025-06-01")
        lines.append('price_kind = "estimate"')
    return "\n".join(lines) + "\n"


def write_synthetic_catalog(directory: Path, count: int = 10_000, seed: int = 7) -> Path:
    """Write ``count`` valid entry files under ``directory`` (100 per folder)."""
    rng = random.Random(seed)
    for index in range(count):
        folder = directory / f"batch-{index // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"synthetic-{index:05d}.toml").write_text(_entry_toml(index, rng), "utf-8")
    return directory


if __name__ == "__main__":
    import sys
    import tempfile
    import time

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    write_synthetic_catalog(target)
    started = time.perf_counter()
    catalog = load_catalog([target], include_bundled=False, include_user=False)
    elapsed = time.perf_counter() - started
    print(f"{len(catalog.entries)} entries, {len(catalog.problems)} problems, {elapsed:.3f} s")
