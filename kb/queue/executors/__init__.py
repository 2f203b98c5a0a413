"""The one registry of executors: where queued runs execute. The CLI, the app and the README list them from here.

Executors are plug-ins, registered like analyzers (``analyzers.registry``): the built-ins ``local``,
``ray`` and ``slurm`` register themselves with ``@register`` in this package; ``load_all()`` adds any
installed plugin that declares the ``kb.executors`` entry point and the modules named in
``KB_EXECUTOR_MODULES`` (comma-separated importable names: a lab's Kubernetes executor, the tests' own).
Each executor subclasses ``Executor`` and is handed one ``JobConfig`` built from the settings.
"""

from __future__ import annotations

import functools
import importlib
from importlib.metadata import entry_points
from typing import TypeVar

from analyzers.registry import load_guarded, named_modules
from kb.queue.executors.base import Executor, ExecutorUnavailable, JobConfig

__all__ = ["Executor", "ExecutorUnavailable", "JobConfig", "broken", "get", "load_all", "markdown_table",
           "register"]

MODULES_VARIABLE = "KB_EXECUTOR_MODULES"
BUILT_INS = ("kb.queue.executors.local", "kb.queue.executors.ray", "kb.queue.executors.slurm")
_REGISTRY: dict[str, type[Executor]] = {}
_BROKEN: dict[str, str] = {}
_loaded: set[str] = set()  # modules and plugins imported so far (each once per process)
E = TypeVar("E", bound=type[Executor])


def register(cls: E) -> E:
    """Class decorator: add an executor to the registry under its ``name``."""
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"two executors are registered as {cls.name!r}: {_REGISTRY[cls.name]} and {cls}")
    _REGISTRY[cls.name] = cls
    return cls


def load_all() -> dict[str, type[Executor]]:
    """Every registered executor by name: the built-ins first, then plugins and named modules."""
    for module in BUILT_INS:
        if module not in _loaded:
            _loaded.add(module)
            importlib.import_module(module)  # kb's own: a failure here is a bug, never hidden
    if "entry points" not in _loaded:
        _loaded.add("entry points")
        for entry in entry_points(group="kb.executors"):
            load_guarded(f"plugin {entry.name}", entry.load, _BROKEN, "executor")
    # Read at every call, not once: cheap, and a module named after the first lookup is still found.
    for name in named_modules(MODULES_VARIABLE):
        if name not in _loaded:
            _loaded.add(name)
            load_guarded(f"module {name}", functools.partial(importlib.import_module, name), _BROKEN, "executor")
    return dict(sorted(_REGISTRY.items(), key=lambda item: (item[1].__module__ not in BUILT_INS, item[0])))


def broken() -> dict[str, str]:
    """Executor plugins and modules that failed to import, with the error."""
    load_all()
    return dict(_BROKEN)


def get(name: str) -> type[Executor]:
    """The executor registered as ``name``; a ``KeyError`` naming the registered ones otherwise."""
    registry = load_all()
    if name not in registry:
        failed = "".join(f"; {label} failed to load ({error})" for label, error in _BROKEN.items())
        raise KeyError(f"executor {name!r} is unknown; use one of {', '.join(registry)}{failed}")
    return registry[name]


def markdown_table() -> str:
    """The README's table of executors, generated from the registry (``tests/test_executors_registry.py``
    checks that the README holds it as generated)."""
    lines = ["| executor | runs execute | shared index needed |", "|---|---|---|"]
    for name, cls in load_all().items():
        lines.append(f"| `{name}` | {cls.description} | {'yes' if cls.needs_shared_database else 'no'} |")
    return "\n".join(lines)


def reconciling() -> frozenset[str]:
    """Names of the executors that watch their own runs' jobs (workers leave those runs to them)."""
    return frozenset(name for name, cls in load_all().items() if cls.reconciles)
