"""The one registry of analyzers. The CLI, the app and the agents discover analyzers only here.

Adding an analyzer means adding one package under ``analyzers/`` whose ``__init__`` registers its
classes with ``@register``; ``load_all()`` imports every such package, any installed plugin that
declares the ``kb.analyzers`` entry point, and the modules the person running kb names in
``KB_ANALYZER_MODULES`` (comma-separated importable names: a lab's private analyzers, the tests' own).
A package that wants commands of its own in the ``kb`` CLI (``kb probe``, ``kb langevin run``)
registers a hook with ``@register_commands``: the CLI calls every hook with its typer app and a
``CommandHost``, whose ``run_context`` gives the commands the same cache, offline flag and progress interval
kb's own runs get (built from the operator's settings), so no analyzer-specific code lives in ``kb/`` and
no analyzer command reads kb's settings itself.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import pkgutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:  # types only: `kb --help` reads declared_commands without pydantic (analyzers.base)
    import typer

    from analyzers.base import Analyzer, RunContext


class CommandHost(Protocol):
    """What kb hands an analyzer package's commands (``kb probe``, ``kb langevin run``)."""

    def run_context(self, out_dir: Path, progress: Callable[[float, str], None] | None = None, *,
                    home: Path | None = None) -> RunContext:
        """The context a run gets under the operator's settings (``home``: the command's ``--home``)."""
        ...


CommandHook = Callable[["typer.Typer", CommandHost], None]

MODULES_VARIABLE = "KB_ANALYZER_MODULES"
#: An analyzer package's list of the commands its hook adds (name: the first paragraph of its help), so that
#: `kb --help` lists them without importing the package (tests/test_startup.py checks each against the hook).
COMMANDS_FILE = "commands.json"
_REGISTRY: dict[str, type[Analyzer]] = {}  # type: ignore[type-arg]
_COMMAND_HOOKS: list[CommandHook] = []
_discovered = False  # packages and plugins are imported once per process; lookups after that are cheap
_BROKEN: dict[str, str] = {}  # package or plugin -> the error that stopped it from loading
A = TypeVar("A", bound="type[Analyzer]")  # type: ignore[type-arg]
H = TypeVar("H", bound=CommandHook)


def register(cls: A) -> A:
    """Class decorator: add an analyzer to the registry under its ``name``."""
    name = cls.name
    if name in _REGISTRY and _REGISTRY[name] is not cls:
        raise ValueError(f"two analyzers are registered as {name!r}: {_REGISTRY[name]} and {cls}")
    _REGISTRY[name] = cls
    return cls


def register_commands(hook: H) -> H:
    """Decorator: ``hook(app, host)`` adds an analyzer package's own commands to the ``kb`` typer app."""
    if hook not in _COMMAND_HOOKS:
        _COMMAND_HOOKS.append(hook)
    return hook


def command_hooks() -> list[CommandHook]:
    """Every registered CLI hook (after importing all analyzer packages), in registration order."""
    load_all()
    return list(_COMMAND_HOOKS)


def load_all() -> dict[str, type[Analyzer]]:  # type: ignore[type-arg]
    """Import every analyzer package and plugin, and return the registry by name."""
    global _discovered
    if not _discovered:
        import analyzers

        for module in pkgutil.iter_modules(analyzers.__path__):
            if module.ispkg:
                package = f"analyzers.{module.name}"
                _load(package, functools.partial(importlib.import_module, package))
        from importlib.metadata import entry_points  # ~50 ms: not for `kb --help`

        for entry in entry_points(group="kb.analyzers"):
            _load(f"plugin {entry.name}", entry.load)
        # Set by whoever starts kb (an environment variable, never a note): it decides which code runs.
        for name in named_modules(MODULES_VARIABLE):
            _load(f"module {name}", functools.partial(importlib.import_module, name))
        _discovered = True
    return dict(sorted(_REGISTRY.items()))


def declared_commands() -> dict[str, str] | None:
    """The commands the analyzer packages add to ``kb`` (name: first paragraph of its help), read from each
    package's ``commands.json`` without importing any package; None when that cannot tell them all (a package
    without the file, an installed plug-in, a module named in ``KB_ANALYZER_MODULES``): then import them
    (``command_hooks``). A package that adds no command may ship ``{}``."""
    import analyzers

    if _has_plugins() or named_modules(MODULES_VARIABLE):
        return None
    declared: dict[str, str] = {}
    for module in pkgutil.iter_modules(analyzers.__path__):
        if module.ispkg:
            listing = Path(getattr(module.module_finder, "path", ""), module.name, COMMANDS_FILE)
            try:
                commands = json.loads(listing.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # no list (or a broken one): the package must be imported to know
                return None
            if not isinstance(commands, dict) or not all(isinstance(v, str) for v in commands.values()):
                return None
            declared.update(commands)
    return declared


# every installed distribution's metadata is read (~30 ms): once per process, as load_all does
@functools.cache
def _has_plugins() -> bool:
    """Whether an installed distribution declares a ``kb.analyzers`` entry point (read without importing
    it)."""
    from importlib.metadata import entry_points

    return bool(entry_points(group="kb.analyzers"))


def named_modules(variable: str) -> list[str]:
    """The importable module names listed, comma-separated, in the environment variable ``variable``.

    The one way kb loads code that the person running it names (``KB_ANALYZER_MODULES``,
    ``KB_EXECUTOR_MODULES``): an environment variable, never a note, since it decides which code runs.
    """
    return [part.strip() for part in os.environ.get(variable, "").split(",") if part.strip()]


def load_guarded(label: str, load: Callable[[], object], broken: dict[str, str], kind: str) -> None:
    """``load()`` a plug-in; an import-time failure is recorded in ``broken`` and warned about, not raised.

    One broken plug-in must not take the notes, the index and the other plug-ins down with it.
    """
    try:
        load()
    except Exception as exc:  # noqa: BLE001 - any import-time failure of third-party code
        broken[label] = f"{type(exc).__name__}: {exc}"
        warnings.warn(f"{kind} {label} failed to load: {broken[label]}", RuntimeWarning, stacklevel=3)


def _load(label: str, load: Callable[[], object]) -> None:
    # A broken analyzer package is shown by `kb analyzers`, and its claims report it when verified.
    load_guarded(label, load, _BROKEN, "analyzer package")


def broken() -> dict[str, str]:
    """Analyzer packages and plugins that failed to import, with the error."""
    load_all()
    return dict(_BROKEN)


def get(name: str) -> Analyzer:  # type: ignore[type-arg]
    """An instance of the analyzer registered under ``name``, with a clear error for unknown names."""
    registry = load_all()
    if name not in registry:
        failed = "".join(f"; {label} failed to load ({error})" for label, error in _BROKEN.items())
        raise KeyError(f"no analyzer named {name!r}; registered: {', '.join(registry) or 'none'}{failed}")
    return registry[name]()
