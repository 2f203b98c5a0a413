"""What every ``kb`` command shares: the typer app, the consoles, the common options, and how errors,
JSON and the notes table are printed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kb.core import KnowledgeBase
from kb.notes import NoteError
from kb.settings import Settings

app = typer.Typer(help="kb: a knowledge base of PLM paper notes whose claims re-verify themselves.",
                  no_args_is_help=True, add_completion=False)
console = Console()
err_console = Console(stderr=True)

PapersOpt = Annotated[Path | None, typer.Option("--papers", envvar="KB_PAPERS", help="Notes folder.")]
HomeOpt = Annotated[Path | None, typer.Option("--home", envvar="KB_HOME", help="KB home (index, evidence).")]
DbOpt = Annotated[str | None, typer.Option("--db", envvar="KB_DATABASE_URL", help="SQLAlchemy database URL.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def make_kb(papers: Path | None, home: Path | None, db: str | None) -> KnowledgeBase:
    """The knowledge base the common options name (unset options fall back to the environment and defaults)."""
    overrides: dict[str, Any] = {}
    if papers is not None:
        overrides["papers"] = papers
    if home is not None:
        overrides["home"] = home
    if db is not None:
        overrides["database_url"] = db
    return KnowledgeBase(Settings(**overrides))


def esc(value: object) -> str:
    """User text (titles, ids, tags, snippets, errors quoting them) made safe for rich markup: ``[mask]``
    stays visible and ``[/]`` cannot end our own styles."""
    return escape(str(value))


def fail(errors: list[NoteError] | NoteError, code: int = 1) -> None:
    """Print each error (file, line, field, what to do) to stderr and exit with ``code``."""
    for error in errors if isinstance(errors, list) else [errors]:
        err_console.print(f"[bold red]error[/]: {esc(error)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout (what ``--json`` promises)."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def papers_table(rows: list[dict[str, Any]], title: str) -> Table:
    """A rich table of note summaries (``kb.core.paper_summary`` rows)."""
    table = Table(title=title, show_lines=False, header_style="bold cyan")
    for column in ("id", "year", "decision", "status", "Q", "title", "tags"):
        table.add_column(column, overflow="fold", max_width=48 if column == "title" else None)
    for row in rows:
        table.add_row(esc(row["id"]), str(row["year"] or ""), row["decision"] or "", row["status"] or "",
                      str(row["quality_score"] or ""), esc(row["title"]), esc(", ".join(row["tags"])))
    return table
