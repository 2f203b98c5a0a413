"""Curse-of-depth probes for protein language models: ``depth.probe`` (probes of one model) and
``depth.sweep`` (train masked PLMs of several depths at a fixed parameter budget, then probe them), and
the ``kb probe`` / ``kb models`` commands. Importing the package registers them."""

# registration: the analyzers and the kb probe / kb models commands
from analyzers.depth import cli, spec  # noqa: F401
