"""GPUDesk: choose, compare and check GPUs for machine learning."""

__version__ = "0.1.0"
