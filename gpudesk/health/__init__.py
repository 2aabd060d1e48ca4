"""Health: one set of rules for ``doctor``, the fleet survey and the GUI's "Check health".

It sits above :mod:`gpudesk.bench` and :mod:`gpudesk.hardware` (the doctor
runs the benchmark on what detection found) and below the fleet, the UI and
the CLI.
"""
