"""Planning: will a model fit in GPU memory, how fast could it decode, cloud or buy.

Pure functions over pydantic models; no Qt. ``memory`` estimates a workload's memory
breakdown, ``presets`` holds sourced model architectures, ``fit`` checks the
breakdown against every catalog GPU, ``cost`` compares buying with renting.
"""
