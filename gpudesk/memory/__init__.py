"""Bytes per device: the memory breakdown of a workload (``breakdown.estimate_memory``),
the memory a GPU really offers (``usable``), CPU offload (``offload``) and will it fit on
each catalog GPU (``fit``).

Builds on :mod:`gpudesk.workload` and the catalog; never imports the speed model,
measurements or engines.
"""
