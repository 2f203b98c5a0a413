"""Curse-of-depth probes for protein language models (``depth.probe``); importing registers them."""

from analyzers.depth import analyzer  # noqa: F401  (registers depth.probe)
