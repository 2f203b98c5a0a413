"""Curse-of-depth probes for protein language models: ``depth.probe`` (probes of one model) and
``depth.sweep`` (train masked PLMs of several depths at a fixed parameter budget, then probe them), and
the ``kb probe`` / ``kb models`` commands. Importing the package registers them."""

from analyzers.depth import (
    analyzer,  # noqa: F401  (registers depth.probe)
    cli,  # noqa: F401,E402  (registers kb models / kb probe)
    sweep,  # noqa: F401,E402  (registers depth.sweep)
)
