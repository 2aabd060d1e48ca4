"""CPU and RAM description from /proc text."""

from __future__ import annotations

from gpudesk.hardware.cpu import parse_cpuinfo, parse_meminfo_gib, read_cpu, read_ram_gib

_X86 = """processor\t: 0
model name\t: AMD Ryzen 9 7950X 16-Core Processor
physical id\t: 0
core id\t\t: 0

processor\t: 1
model name\t: AMD Ryzen 9 7950X 16-Core Processor
physical id\t: 0
core id\t\t: 0

processor\t: 2
model name\t: AMD Ryzen 9 7950X 16-Core Processor
physical id\t: 0
core id\t\t: 1

processor\t: 3
model name\t: AMD Ryzen 9 7950X 16-Core Processor
physical id\t: 0
core id\t\t: 1
"""

_ARM = """processor\t: 0
BogoMIPS\t: 50.00

processor\t: 1
BogoMIPS\t: 50.00

Hardware\t: BCM2835
"""


def test_parse_x86_cpuinfo_counts_cores_and_threads() -> None:
    assert parse_cpuinfo(_X86) == ("AMD Ryzen 9 7950X 16-Core Processor", 2, 4)


def test_parse_arm_cpuinfo_without_core_ids() -> None:
    assert parse_cpuinfo(_ARM) == ("BCM2835", None, 2)


def test_parse_empty_cpuinfo() -> None:
    assert parse_cpuinfo("") == (None, None, None)


def test_parse_meminfo() -> None:
    assert parse_meminfo_gib("MemTotal:       16777216 kB\nMemFree: 1 kB\n") == 16.0
    assert parse_meminfo_gib("garbage") is None


def test_this_machine() -> None:
    cpu = read_cpu()
    assert cpu.threads is not None and cpu.threads >= 1
    ram = read_ram_gib()
    assert ram is not None and ram > 0
