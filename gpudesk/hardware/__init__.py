"""This machine: NVML detection, CPU and RAM, catalog matching, live sampling.

Only :mod:`gpudesk.hardware.nvml` imports ``pynvml``; everything else works on
the pydantic snapshots of :mod:`gpudesk.hardware.models`. No Qt here.
"""
