"""Serving engines: what each runs on, the launch lines GPUDesk prints for vLLM, SGLang,
llama.cpp and Ollama, and the KV pools they will log.

Builds on :mod:`gpudesk.workload`; never imports the speed model or measurements.
"""
