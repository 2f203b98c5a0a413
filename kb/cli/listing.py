"""``kb list``: the indexed notes, filtered and sorted, after bringing the index up to date.

On a current SQLite index (no note new, edited, moved or gone: ``kb.index.listing``'s rule) the plain listing
is read with the standard library's ``sqlite3`` and none of the facade's libraries (SQLAlchemy, Alembic, the
schemas, the settings model) load: its start-up is that of ``kb --help`` (``benchmarks/bench_startup.py``).
Anything else (a note changed, ``--where``, ``--json`` with its claim states, a PostgreSQL index, locations
only the settings model can resolve) takes the full path through ``kb.core.KnowledgeBase``, which indexes
first and names the notes it could not read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kb.cli.common import (
    DbOpt,
    HomeOpt,
    JsonOpt,
    PapersOpt,
    StrictOpt,
    app,
    console,
    err_console,
    esc,
    make_kb,
    name_unreadable,
    papers_table,
    print_json,
)
from kb.index.listing import SORT_COLUMNS, current_listing
from kb.locations import plain_locations


@app.command("list")
def list_notes(
    tag: Annotated[str | None, typer.Option(help="Only notes with this tag.")] = None,
    decision: Annotated[str | None, typer.Option(help="ACCEPT, REJECT, MAYBE or PENDING.")] = None,
    status: Annotated[str | None, typer.Option(help="Workflow status, e.g. analyzed.")] = None,
    min_quality: Annotated[int | None, typer.Option(help="Minimum quality_score.")] = None,
    year: Annotated[int | None, typer.Option(help="Publication year.")] = None,
    sort: Annotated[str, typer.Option(help="id, title, year or quality.")] = "id",
    desc: Annotated[bool, typer.Option("--desc", help="Sort descending.")] = False,
    where: Annotated[
        list[str] | None,
        typer.Option(
            "--where",
            help="FIELD OP VALUE (repeatable, all must hold): "
            "any frontmatter field, dotted for nested ones, tags, state (a "
            "claim's) or a claim state's count; OP one of = != > >= < <= ~ "
            '(contains), e.g. "quality_score>=4".',
        ),
    ] = None,
    strict: StrictOpt = False,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List indexed notes, filtered and sorted (indexes first, so the list is current); notes that could not
    be read are named after it."""
    if sort not in SORT_COLUMNS:
        err_console.print(f"[red]error[/]: --sort must be one of id, title, year, quality (got {sort!r})")
        raise typer.Exit(2)
    filters: dict[str, Any] = {"tag": tag, "decision": decision, "status": status, "min_quality": min_quality,
                               "year": year, "sort": sort, "descending": desc}
    rows = None if where or as_json else _rows_if_current(papers, home, db, filters)
    if rows is not None:  # nothing to index, and so no note that could not be read (each would lack its row)
        console.print(papers_table(rows, f"{len(rows)} note(s)"))
        return
    _list_indexed(papers, home, db, filters, where=where, as_json=as_json, strict=strict)


def _rows_if_current(papers: Path | None, home: Path | None, db: str | None,
                     filters: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The listing from the SQLite index the options name when it is current (None: take the full path)."""
    locations = plain_locations(papers, home, db)
    return current_listing(locations[1], locations[0], **filters) if locations is not None else None


def _list_indexed(papers: Path | None, home: Path | None, db: str | None, filters: dict[str, Any], *,
                  where: list[str] | None, as_json: bool, strict: bool) -> None:
    """The full path: index first, then list, ``--where`` and ``--json`` (claim states) included."""
    from kb.core import paper_summary

    kb = make_kb(papers, home, db)
    report = kb.index()
    rows = [paper_summary(p) for p in kb.list_papers(**filters)]
    if where:
        from kb.evidence import where as where_mod

        try:
            kept = {row.id for row in kb.library(where=where_mod.parse_all(where))}
        except where_mod.WhereError as exc:
            err_console.print(f"[bold red]error[/]: --where {esc(exc)}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        rows = [row for row in rows if row["id"] in kept]
    if as_json:
        # Each note's claims counted by state (kb.evidence.claim_states's rule), the states no claim is in
        # left out.
        states = {row.id: {k: v for k, v in row.states.items() if v} for row in kb.library()}
        print_json([{**row, "claim_states": states.get(row["id"], {})} for row in rows])
    else:
        console.print(papers_table(rows, f"{len(rows)} note(s)"))
    name_unreadable(report.errors, strict=strict)
