"""How fast a model runs on a GPU, and what a token costs: a calibrated speed model.

- :mod:`~gpudesk.speed.physics`: bytes and FLOPs per token and the time they take
  (decode, prefill, serving, training), plain arithmetic shared by estimate and fit.
- :mod:`~gpudesk.speed.hardware`: a GPU's datasheet rates (dense peaks only), and
  the same rates calibrated with this machine's benchmark.
- :mod:`~gpudesk.speed.data`: the published measurements (``measurements.toml``).
- :mod:`~gpudesk.speed.fitting`: engine efficiencies fitted to them
  (``fitted.json``).
- :mod:`~gpudesk.speed.estimate`: one estimate with its range, limit and basis.
- :mod:`~gpudesk.speed.planner`: the catalog ranked, costs, calibration.
- :mod:`~gpudesk.speed.validation`: the model against every measurement.

Weight bytes come from :mod:`gpudesk.workload.quant` and shapes from
:mod:`gpudesk.workload.architecture`; nothing here keeps its own bits per weight.
"""
