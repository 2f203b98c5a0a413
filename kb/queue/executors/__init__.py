"""The one registry of executors: where queued runs execute. The CLI, the app and the README list them from
here.

Executors are plug-ins, registered like analyzers (``analyzers.registry``): the built-ins ``local``,
``ray`` and ``slurm`` register themselves with ``@register`` in this package; ``load_all()`` adds any
installed plugin that declares the ``kb.executors`` entry point and the modules named in
``KB_EXECUTOR_MODULES`` (comma-separated importable names: a lab's Kubernetes executor, the tests' own).
Each executor subclasses ``Executor`` and is handed one ``JobConfig`` built from the settings.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TypeVar

from analyzers.registry import load_guarded, named_modules
from kb.queue.executors.base import Executor, ExecutorUnavailable, JobConfig
from kb.settings import Settings

__all__ = ["Executor", "ExecutorUnavailable", "JobConfig", "NeededSetting", "broken", "get", "load_all",
           "markdown_table", "needed_settings", "register"]

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
    unknown = [name for name in cls.settings if name not in Settings.model_fields]
    if unknown:
        raise ValueError(f"executor {cls.name!r} names settings kb does not have: {', '.join(unknown)} (see "
                         "kb.settings.Settings)")
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
            load_guarded(
                f"module {name}", functools.partial(importlib.import_module, name), _BROKEN, "executor"
            )
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


@dataclass(frozen=True)
class NeededSetting:
    """A setting an executor needs: its name (dotted inside a section), environment variable, description."""

    name: str
    env: str
    description: str


def needed_settings(cls: type[Executor]) -> list[NeededSetting]:
    """The settings ``cls`` needs: the shared index and artifact store where its runs execute on other
    machines, then its own ``settings`` (each field of a nested section), with the environment variable of
    each as ``Settings`` reads it."""
    prefix = Settings.model_config.get("env_prefix", "")
    nested = Settings.model_config.get("env_nested_delimiter")
    names = (("database_url", "artifact_store") if cls.needs_shared_database else ()) + cls.settings
    found: list[NeededSetting] = []
    for name in dict.fromkeys(names):
        field = Settings.model_fields[name]
        section = getattr(field.annotation, "model_fields", None)  # a nested model: each of its fields
        if section and nested:
            found += [NeededSetting(f"{name}.{key}", f"{prefix}{name}{nested}{key}".upper(),
                                    sub.description or "") for key, sub in section.items()]
        else:
            found.append(NeededSetting(name, f"{prefix}{name}".upper(), field.description or ""))
    return found


def reconciling() -> frozenset[str]:
    """Names of the executors that watch their own runs' jobs (workers leave those runs to them)."""
    return frozenset(name for name, cls in load_all().items() if cls.reconciles)
