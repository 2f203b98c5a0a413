"""The one registry of analyzers. The CLI, the app and the agents discover analyzers only here.

Adding an analyzer means adding one package under ``analyzers/`` whose ``__init__`` registers its
classes with ``@register``; ``load_all()`` imports every such package (and any installed plugin that
declares the ``kb.analyzers`` entry point).
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import entry_points
from typing import TypeVar

from analyzers.base import Analyzer

_REGISTRY: dict[str, type[Analyzer]] = {}  # type: ignore[type-arg]
A = TypeVar("A", bound=type[Analyzer])  # type: ignore[type-arg]


def register(cls: A) -> A:
    """Class decorator: add an analyzer to the registry under its ``name``."""
    name = cls.name
    if name in _REGISTRY and _REGISTRY[name] is not cls:
        raise ValueError(f"two analyzers are registered as {name!r}: {_REGISTRY[name]} and {cls}")
    _REGISTRY[name] = cls
    return cls


def load_all() -> dict[str, type[Analyzer]]:  # type: ignore[type-arg]
    """Import every analyzer package and plugin, and return the registry by name."""
    import analyzers

    for module in pkgutil.iter_modules(analyzers.__path__):
        if module.ispkg:
            importlib.import_module(f"analyzers.{module.name}")
    for entry in entry_points(group="kb.analyzers"):
        entry.load()
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Analyzer:  # type: ignore[type-arg]
    """An instance of the analyzer registered under ``name``, with a clear error for unknown names."""
    registry = load_all()
    if name not in registry:
        raise KeyError(f"no analyzer named {name!r}; registered: {', '.join(registry) or 'none'}")
    return registry[name]()
