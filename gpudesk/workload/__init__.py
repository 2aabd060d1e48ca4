"""What is being run: model shapes, presets, quantisation formats and the readers of
config.json, GGUF and safetensors headers.

Plain data and parsing; it imports only the shared modules below it (never memory,
speed, measurements or engines, which build on it).
"""
