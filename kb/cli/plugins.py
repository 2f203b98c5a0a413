"""The commands analyzer packages add to ``kb`` (``kb probe``, ``kb models``, ``kb langevin``, ...): importing
this module imports every analyzer package and plug-in and calls their hooks (``analyzers.registry``) once
with the app and a host. ``kb.cli.catalog`` imports it when such a command is asked for."""

from analyzers import registry
from kb.cli.common import AnalyzerCommandHost, app

_host = AnalyzerCommandHost()
for _hook in registry.command_hooks():
    _hook(app, _host)
