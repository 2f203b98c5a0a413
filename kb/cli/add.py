"""``kb add``: a new note from an arXiv id, a DOI, a PDF, a BibTeX file or a Zotero (CSL-JSON) export."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from kb.cli.common import (
    DbOpt,
    HomeOpt,
    JsonOpt,
    PapersOpt,
    app,
    console,
    err_console,
    fail,
    make_kb,
    print_json,
)

if TYPE_CHECKING:  # types only: the core loads when the command runs (start-up)
    from kb.core import KnowledgeBase
    from kb.notes.files import Note, NoteError
    from kb.papers.add import PaperRecord


@app.command()
def add(
    what: Annotated[str, typer.Argument(help="arxiv:ID, doi:DOI, or a .pdf, .bib or Zotero CSL .json file.")],
    tag: Annotated[list[str] | None, typer.Option(help="Tag (repeatable).")] = None,
    draft: Annotated[
        bool,
        typer.Option(
            "--draft/--no-draft",
            help="Draft claims from the stored source text for review (nothing is written into the note).",
        ),
    ] = False,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a paper: fill the note's frontmatter and store its source text beside it.

    arXiv and Crossref give the abstract; a PDF gives the full text with its pages (so quotes can cite
    pages). Online lookups fail fast offline: then give the PDF or the BibTeX entry. With KB_GROBID_URL set,
    a PDF is uploaded to that GROBID service, which reads its header. With --draft,
    claims drafted from the source are shown for review ('kb draft-claims NOTE --accept ID' keeps some).
    """
    kb = make_kb(papers, home, db)
    records = _read_records(kb, what)
    added, errors, unread = _add_records(kb, records, {"tags": list(tag)} if tag else None)
    if as_json:
        print_json(
            [
                {
                    "id": n.id,
                    "path": str(n.path),
                    "paper_id": n.meta.paper_id,
                    "source_file": n.meta.source_file,
                }
                for n in added
            ]
        )
    else:
        _show_added(added, unread)
    if draft:
        for note in added:
            _offer_claims(note.id, papers, home, db)
    if errors:
        fail(errors)


def _read_records(kb: KnowledgeBase, what: str) -> list[PaperRecord]:
    """The papers ``what`` names (an identifier looked up, else a file read); a failure is one line and exit
    1."""
    from kb.papers.add import AddError  # here: `kb add --help` needs neither the schemas nor the settings
    from kb.papers.lookups import look_up_identifier, read_paper_file

    try:
        with err_console.status(f"looking up {escape(what)}", spinner="dots"):
            # The app's add-a-note page goes through the same two functions (one home for both).
            record = look_up_identifier(what, kb.settings)
            return [record] if record is not None else read_paper_file(Path(what), kb.settings)
    except AddError as exc:
        err_console.print(f"[bold red]error[/]: {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from exc


def _add_records(
    kb: KnowledgeBase, records: list[PaperRecord], extra: dict[str, list[str]] | None
) -> tuple[list[Note], list[NoteError], list[dict[str, str]]]:
    """Each record added as a note (a .bib or Zotero export may hold many papers): the notes added, the
    failures (the others are still added) and, per note added, the fields left empty and why. Notices are
    printed as each record is added."""
    from kb.notes.files import NoteError
    from kb.papers.add import add_paper

    added, errors, unread = [], [], []
    for record in records:
        for notice in record.notices:
            err_console.print(f"[yellow]note[/]: {escape(notice)}", highlight=False, soft_wrap=True)
        try:
            note = add_paper(kb, record, extra)
        except NoteError as exc:
            errors.append(exc)
            continue
        added.append(note)
        unread.append(record.unread)
        if note.meta.paper_id != record.paper_id:
            err_console.print(f"[yellow]note[/]: paper_id {escape(record.paper_id)!r} is another paper's (a "
                              f"different title or DOI); this one is {escape(note.meta.paper_id)!r}",
                              highlight=False, soft_wrap=True)
    return added, errors, unread


def _show_added(added: list[Note], unread: list[dict[str, str]]) -> None:
    """Each note added with its source text, then each field kb left empty because it was not sure of it."""
    for note in added:
        source = (
            f" (source: {escape(note.meta.source_file)})"
            if note.meta.source_file
            else " (no source text)"
        )
        console.print(f"[green]added[/] {escape(str(note.path))}{source}", highlight=False)
    for reasons in unread:  # a field kb was not sure of is left empty: say which, and why
        for name, reason in reasons.items():
            err_console.print(f"[yellow]left empty[/] {escape(name)}: {escape(reason)}", highlight=False,
                              soft_wrap=True)


def _offer_claims(note_id: str, papers: Path | None, home: Path | None, db: str | None) -> None:
    """Show drafted claims for the new note, exactly as ``kb draft-claims NOTE`` does (nothing is written)."""
    from kb.cli.agents import draft_claims

    console.print(f"[bold]drafted claims for {escape(note_id)}[/] (accept with: kb draft-claims "
                  f"{escape(note_id)} --accept ID)", highlight=False)
    draft_claims(
        note_id,
        accept_ids=None,
        accept_all=False,
        into=None,
        fallback=False,
        papers=papers,
        home=home,
        db=db,
        as_json=False,
    )
