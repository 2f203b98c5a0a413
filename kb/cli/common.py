"""What every ``kb`` command shares: the typer app, the consoles, the common options, and how errors,
JSON, listings and the notes table are printed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kb.cli.catalog import app  # noqa: F401 - where the command modules find it (catalog: the commands)
from kb.display import terminal_json, terminal_text

if TYPE_CHECKING:  # the facade (SQLAlchemy, Alembic, the analyzers), the notes' reader and the settings
    # (pydantic, pydantic-settings) load when a command uses them, so that 'kb --help' and 'kb list' on a
    # current index start without them (benchmarks/bench_startup.py)
    from analyzers.base import RunContext
    from kb.core import KnowledgeBase
    from kb.notes.files import NoteError

console = Console()
err_console = Console(stderr=True)

PapersOpt = Annotated[Path | None, typer.Option("--papers", envvar="KB_PAPERS", help="Notes folder.")]
HomeOpt = Annotated[Path | None, typer.Option("--home", envvar="KB_HOME", help="KB home (index, evidence).")]
DbOpt = Annotated[str | None, typer.Option("--db", envvar="KB_DATABASE_URL", help="SQLAlchemy database URL.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def setting_option(field: str, *flags: str) -> Any:
    """A typer option for one ``Settings`` field: its flags, its environment variable (``KB_<FIELD>``) and the
    field's own description as help, so the flag, the variable and the setting cannot drift apart."""
    from kb.settings import Settings

    return typer.Option(*flags, envvar=f"KB_{field.upper()}", show_envvar=True,
                        # rich markup: keep [brackets]
                        help=escape(Settings.model_fields[field].description or ""))


# What a worker on another machine needs besides --papers, --home and --db (`kb worker`, `kb verify`): built
# when a command module imports one (``__getattr__``), since reading the settings' descriptions loads
# pydantic-settings, which `kb list` does not need.
_SETTING_OPTIONS: dict[str, Callable[[], Any]] = {
    "ArtifactStoreOpt": lambda: Annotated[str | None, setting_option("artifact_store", "--artifact-store")],
    "OfflineOpt": lambda: Annotated[bool | None, setting_option("offline", "--offline/--online")],
    "CacheDirOpt": lambda: Annotated[Path | None, setting_option("cache_dir", "--cache-dir")],
}
if TYPE_CHECKING:
    ArtifactStoreOpt = Annotated[str | None, typer.Option()]
    OfflineOpt = Annotated[bool | None, typer.Option()]
    CacheDirOpt = Annotated[Path | None, typer.Option()]


def __getattr__(name: str) -> Any:
    if name not in _SETTING_OPTIONS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    option = _SETTING_OPTIONS[name]()
    globals()[name] = option  # built once
    return option


def make_kb(papers: Path | None, home: Path | None, db: str | None, **settings: Any) -> KnowledgeBase:
    """The knowledge base the common options name (unset options fall back to the environment and defaults).

    ``settings``: more ``Settings`` fields from options (``artifact_store``, ``offline``); None leaves one
    unset.
    """
    from kb.core import KnowledgeBase
    from kb.settings import Settings

    overrides: dict[str, Any] = {key: value for key, value in settings.items() if value is not None}
    if papers is not None:
        overrides["papers"] = papers
    if home is not None:
        overrides["home"] = home
    if db is not None:
        overrides["database_url"] = db
    return KnowledgeBase(Settings(**overrides))


class AnalyzerCommandHost:
    """What kb hands the commands of analyzer packages (``analyzers.registry.CommandHost``): run contexts
    built from the one ``JobConfig`` of the settings, as the worker's runs get them."""

    def run_context(self, out_dir: Path, progress: Callable[[float, str], None] | None = None, *,
                    home: Path | None = None) -> RunContext:
        """The context of a run under the settings (``home``: the command's ``--home``, else the
        environment's)."""
        return make_kb(None, home, None).job_config.run_context(out_dir, progress)


def esc(value: object, *, block: bool = False) -> str:
    """User text (titles, ids, tags, snippets, errors quoting them) made safe for the terminal and for rich
    markup: control and escape characters are shown escaped (``kb.display.terminal_text``; ``block`` keeps
    a body's newlines), ``[mask]`` stays visible and ``[/]`` cannot end our own styles."""
    return escape(terminal_text(value, block=block))


def fail(errors: list[NoteError] | NoteError, code: int = 1) -> NoReturn:
    """Print each error (file, line, field, what to do) to stderr and exit with ``code``."""
    for error in errors if isinstance(errors, list) else [errors]:
        err_console.print(f"[bold red]error[/]: {esc(error)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


StrictOpt = Annotated[
    bool,
    typer.Option(
        "--strict", help="Exit 1 when a note could not be read (each is named after the list either way)."
    ),
]


def name_unreadable(errors: list[NoteError], *, strict: bool) -> None:
    """After a listing: each note the index could not read (and so left out), one line each on stderr; the
    listing itself worked (exit 0) unless ``strict``, which exits 1 when there is any."""
    for error in errors:
        first = (str(error).splitlines() or [""])[0]
        err_console.print(f"[yellow]could not read[/] {esc(first)}", highlight=False, soft_wrap=True)
    if errors:
        err_console.print(f"{len(errors)} note(s) left out of the list: fix them, then `kb validate` says ok",
                          highlight=False)
    if strict and errors:
        raise typer.Exit(1)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout (what ``--json`` promises)."""
    sys.stdout.write(terminal_json(data) + "\n")


def print_json_line(data: Any) -> None:
    """Print ``data`` as one line of JSON on stdout, at once (a JSON Lines stream a script reads as it
    comes)."""
    sys.stdout.write(terminal_json(data, indent=None) + "\n")
    sys.stdout.flush()


@dataclass(frozen=True)
class Col:
    """A column of a listing.

    ``ratio``: a flexible column's share of the width left by the others (None: as wide as its content);
    ``fold``: the column folds onto a second line where it must (ids, which must stay whole to be copied
    into the next command) instead of being cut with an ellipsis (titles, statements, reasons);
    ``min_width``: the console width below which the column is left out (detail a narrow terminal
    cannot fit; ``--json`` has it all).
    """

    name: str
    ratio: int | None = None
    fold: bool = False
    min_width: int = 0


class Listing:
    """A table that fits the console: one line per row, two where an id must fold (readable at 80 columns)."""

    def __init__(self, title: str | None, columns: list[Col], width: int | None = None) -> None:
        width = width or console.width
        self.columns = [c for c in columns if width >= c.min_width]
        self.table = Table(
            title=title,
            header_style="bold cyan",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            show_edge=False,
            expand=any(c.ratio for c in self.columns),
            title_justify="left",
            collapse_padding=True,
        )
        for col in self.columns:
            if col.ratio is None:  # as wide as its content; an id folds only where the console is narrower
                self.table.add_column(
                    col.name, no_wrap=not col.fold, overflow="fold" if col.fold else "ellipsis"
                )
            else:
                self.table.add_column(col.name, ratio=col.ratio, overflow="fold" if col.fold else "ellipsis",
                                      no_wrap=not col.fold)

    def add(self, **cells: str) -> None:
        """One row; cells of left-out columns are dropped (a cell's text is rich markup: escape user text)."""
        self.table.add_row(*(cells.get(c.name, "") for c in self.columns))


def papers_table(rows: list[dict[str, Any]], title: str) -> Table:
    """A listing of note summaries (``kb.core.paper_summary`` rows)."""
    listing = Listing(title, [Col("id", fold=True), Col("year"), Col("decision", min_width=96),
                              Col("status", min_width=110), Col("Q"), Col("title", ratio=4),
                              Col("tags", ratio=2, min_width=130)])
    for row in rows:
        listing.add(id=esc(row["id"]), year=str(row["year"] or ""), decision=row["decision"] or "",
                    status=row["status"] or "", Q=str(row["quality_score"] or ""), title=esc(row["title"]),
                    tags=esc(", ".join(row["tags"])))
    return listing.table
