"""The user's own measurements: the store, importing result files, calibration of the
speed model, the rows that set measured against estimated, and measuring here.

It joins :mod:`gpudesk.bench` (the only package that runs ``bench.verify``) and
:mod:`gpudesk.speed`; nothing below it imports it.
"""
