"""The built-in throughput test: GEMM, memory bandwidth and host/device transfers.

No Qt here. :func:`gpudesk.bench.runner.run_benchmark` is a pure function of a
:class:`~gpudesk.bench.plan.BenchPlan`, a backend and a progress object; the
CLI and the GUI panel only build the plan, call it and show the result.
"""
