"""Analyzers that reproduce claims (registered by name, e.g. depth.probe, langevin.sweep)."""
