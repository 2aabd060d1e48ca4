"""How fast a model runs on a GPU, and what a token costs: a calibrated speed model.

- :mod:`~gpudesk.planning.speed.physics`: bytes and FLOPs per token and the time they take
  (decode, prefill, serving, training), plain arithmetic shared by estimate and fit.
- :mod:`~gpudesk.planning.speed.hardware`: a GPU's datasheet rates (dense peaks only), and
  the same rates calibrated with this machine's benchmark.
- :mod:`~gpudesk.planning.speed.data`: the published measurements (``measurements.toml``).
- :mod:`~gpudesk.planning.speed.fitting`: engine efficiencies fitted to them
  (``fitted.json``).
- :mod:`~gpudesk.planning.speed.estimate`: one estimate with its range, limit and basis.
- :mod:`~gpudesk.planning.speed.planner`: the catalog ranked, costs, calibration.
- :mod:`~gpudesk.planning.speed.validation`: the model against every measurement.

Weight bytes come from :mod:`gpudesk.planning.quant` and shapes from
:mod:`gpudesk.planning.architecture`; nothing here keeps its own bits per weight.
"""
