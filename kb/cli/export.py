"""``kb export``: notes as BibTeX or CSL-JSON, each under its stable citation key (``kb.papers.cite``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from kb.cli.common import DbOpt, HomeOpt, PapersOpt, app, console, err_console, esc, fail, make_kb
from kb.notes.files import NoteError


@app.command()
def export(
    ids: Annotated[
        list[str] | None, typer.Argument(help="Note ids (default: every note, or those with --tag).")
    ] = None,
    bibtex: Annotated[bool, typer.Option("--bibtex", help="Write BibTeX (.bib).")] = False,
    csl_json: Annotated[
        bool, typer.Option("--csl-json", help="Write CSL-JSON (Zotero, pandoc, citeproc).")
    ] = False,
    tag: Annotated[str | None, typer.Option(help="Only notes with this tag.")] = None,
    out: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (default: stdout).")
    ] = None,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
) -> None:
    """Export notes as citations with stable keys; 'kb add FILE.bib' reads them back into the same fields.

    A note without a 'citekey' gets one (first author's family name and year, e.g. siji2026), unique in the
    library and written into the note once; a key once set is never rewritten.
    """
    from kb.papers.cite import CiteError, selected_ids
    from kb.papers.cite import export as export_notes

    if bibtex == csl_json:
        err_console.print("[bold red]error[/]: give exactly one of --bibtex or --csl-json", highlight=False)
        raise typer.Exit(2)
    if ids and tag:
        err_console.print("[bold red]error[/]: give note ids or --tag, not both", highlight=False)
        raise typer.Exit(2)
    kb = make_kb(papers, home, db)
    try:
        chosen, unreadable = selected_ids(kb, ids or [], tag)
        for error in unreadable:  # after the export's own errors would be too late: say it first, then export
            err_console.print(
                f"[yellow]warning[/]: not exported: {esc(error)}", highlight=False, soft_wrap=True
            )
        text = export_notes(kb, chosen, "bibtex" if bibtex else "csl-json")
    except NoteError as exc:
        fail(exc)
        return
    except CiteError as exc:
        err_console.print(f"[bold red]error[/]: {esc(exc)}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        err_console.print(
            f"[bold red]error[/]: cannot write {esc(out)} ({esc(exc.strerror or exc)}); give another "
            "--output path",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1) from None
    console.print(
        f"wrote {len(chosen)} entr{'y' if len(chosen) == 1 else 'ies'} to {esc(out)}", highlight=False
    )
