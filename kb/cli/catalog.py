"""The ``kb`` typer app and the catalogue of its commands: which module defines each command, and the line
``kb --help`` shows for it, so that a command imports only its own module and ``kb --help`` imports none.

Each command module adds its commands to ``app`` when it is imported (``@app.command()``); the app's group
(``LazyGroup``) imports a module the first time one of its commands is asked for by name. ``kb --help``
lists the catalogue's lines instead of importing the modules (pydantic, the schemas, the settings and the
analyzer packages are ~70 % of a start-up: ``benchmarks/bench_startup.py``); ``tests/test_startup.py``
checks that every line is the first paragraph of its command's own help, and that the catalogue names
every command the modules define. The commands analyzer packages add (``kb probe``, ``kb langevin``) are
declared by the packages (``analyzers.registry.declared_commands``) and added by ``kb.cli.plugins``.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

# name: (the kb.cli modules that define it, the first paragraph of its help), in the order `kb --help` lists
# them.
COMMANDS: dict[str, tuple[tuple[str, ...], str]] = {
    "validate": (
        ("notes",),
        "Validate notes against the schemas; exit 1 when any is invalid (with --strict, "
        "when any has a warning).",
    ),
    "index": (("notes",), "Index the notes folder into the database (incremental)."),
    "list": (
        ("listing",),
        "List indexed notes, filtered and sorted (indexes first, so the list is current); notes "
        "that could not be read are named after it.",
    ),
    "show": (("notes",), "Show one note: frontmatter, claims and body."),
    "search": (
        ("notes",),
        "Full-text search over titles, tags, bodies, claim statements and source texts (with the page).",
    ),
    "set": (("notes",), "Change frontmatter fields of a note; only those fields' lines change in the file."),
    "new": (
        ("notes",),
        "Create a note from flags (or a template); it is validated before anything is written.",
    ),
    "import": (("notes",), "Validate a note and copy it unchanged into the notes folder (never overwrites)."),
    "schema": (
        ("notes",),
        "Write the JSON Schema of every model (notes, claims, runs, evidence) for editors.",
    ),
    "check": (
        ("notes",),
        "Check claims' quotes and numbers, and the note's title, id and year, against its source text.",
    ),
    "add": (("add",), "Add a paper: fill the note's frontmatter and store its source text beside it."),
    "export": (
        ("export",),
        "Export notes as citations with stable keys; 'kb add FILE.bib' reads them back into the same fields.",
    ),
    "analyzers": (
        ("runs",),
        "List registered analyzers (scales, GPU need, how many metrics); name one for its metrics.",
    ),
    "executors": (
        ("runs",),
        "List the registered executors (where runs execute: `kb verify --executor NAME`) "
        "and what each needs.",
    ),
    "verify": (
        ("runs",),
        "Queue re-verification of claims (and, by default, run the queue here, with progress).",
    ),
    "worker": (
        ("runs",),
        "Run queued runs (re-queues runs abandoned by dead workers first); logs each run to stderr.",
    ),
    "runs": (
        ("runs",),
        "List runs, newest first, with progress (``--watch``: follow active runs live until they end).",
    ),
    "cancel": (("runs",), "Cancel a queued or running run."),
    # `kb evidence export|import` are added to runs' evidence group by bundles
    "evidence": (
        ("runs", "bundles"),
        "kb evidence CLAIM: a claim's evidence. kb evidence export|import: "
        "evidence bundles between KB homes.",
    ),
    "tensions": (
        ("tensions",),
        "Claims of different notes that cannot both hold, with both quotes, the evidence "
        "on each side and the state.",
    ),
    "run": (
        ("analyze",),
        "Run one analyzer here on a scale preset and overrides; write its files and metrics.json to --out.",
    ),
    "draft-claims": (
        ("agents",),
        "Draft claims from a paper's text for review; with --accept, write chosen ones into the note.",
    ),
    "ask": (
        ("agents",),
        "Answer from the library and its evidence only, citing the notes, claims and runs the agent used.",
    ),
    "demo": (
        ("serve",),
        "The main job on embedded defaults: index the bundled notes, re-verify their claims, print it all.",
    ),
    "app": (("serve",), "Start the Streamlit app (streamlit run app/main.py) over this knowledge base."),
}
PLUGINS = "plugins"  # the module whose import adds the analyzer packages' commands (kb.cli.plugins)


def load(*modules: str) -> None:
    """Import these ``kb.cli`` modules (``notes``, ``plugins``, ...): each adds its commands to ``app``."""
    for module in modules:
        importlib.import_module(f"kb.cli.{module}")


def load_everything() -> None:
    """Import every command module and the analyzer packages' commands (``app`` then has every command)."""
    load(*dict.fromkeys(module for modules, _ in COMMANDS.values() for module in modules), PLUGINS)


def analyzer_commands() -> dict[str, str] | None:
    """The analyzer packages' commands and their help lines, known without importing the packages; None when
    some package or plug-in can say only by being imported (``analyzers.registry.declared_commands``)."""
    from analyzers import registry

    return registry.declared_commands()


class LazyGroup(TyperGroup):
    """The ``kb`` group: a command's module is imported when the command is first asked for by name; the help
    page lists the catalogue (and the analyzer packages' declared commands) without importing anything."""

    listing = False  # True while the help page is written: a command not imported yet is shown by its line

    def list_commands(self, ctx: Any) -> list[str]:  # Any: typer carries its own click
        declared = analyzer_commands()
        if declared is None:  # a plug-in that cannot say without being imported
            load(PLUGINS)
            self._take(None)
            declared = {}
        return list(dict.fromkeys([*COMMANDS, *declared, *self.commands]))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in COMMANDS:
            modules, line = COMMANDS[cmd_name]
            if self.listing and cmd_name not in self.commands:
                return TyperCommand(name=cmd_name, help=line)
            if any(f"kb.cli.{module}" not in sys.modules for module in modules):
                load(*modules)
                # built before all its modules were in (`kb evidence` by kb.cli.runs, its `export` by bundles)
                self.commands.pop(cmd_name, None)
            self._take(cmd_name)
            return self.commands.get(cmd_name)
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        declared = analyzer_commands()
        if self.listing and declared is not None and cmd_name in declared:
            return TyperCommand(name=cmd_name, help=declared[cmd_name])
        # an analyzer package's command, or no command at all: load them all, then click says which
        if self.listing:
            load(PLUGINS)
        else:
            load_everything()
        self._take(None)
        return self.commands.get(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False

    def _take(self, name: str | None) -> None:
        """Build the command ``name`` (None: every command) from what the modules added to ``app``: typer
        reads each command's signature (~10 ms a command), so only the one that runs is built."""
        short, markup = app.pretty_exceptions_short, app.rich_markup_mode
        for info in app.registered_commands:
            command_name = info.name or typer.main.get_command_name(getattr(info.callback, "__name__", ""))
            if name in (None, command_name) and command_name not in self.commands:
                self.commands[command_name] = typer.main.get_command_from_info(
                    info, pretty_exceptions_short=short, rich_markup_mode=markup)
        for group in app.registered_groups:
            if name in (None, group.name) and isinstance(group.name, str) and group.name not in self.commands:
                self.commands[group.name] = typer.main.get_group_from_info(
                    group, pretty_exceptions_short=short, rich_markup_mode=markup,
                    suggest_commands=app.suggest_commands)


app = typer.Typer(
    cls=LazyGroup,
    help="kb: a knowledge base of PLM paper notes whose claims re-verify themselves.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def _root() -> None:
    # A callback keeps `app` a group (typer makes an app of one command that command itself) before any
    # command module is imported, when it holds no command yet. It does nothing.
    pass
