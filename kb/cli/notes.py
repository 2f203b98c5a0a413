"""Commands over the notes: validate, index, show, search, set, new, import, check, schema (``kb list``:
``kb.cli.listing``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
)
from rich.table import Table

from kb.cli.common import (
    Col,
    DbOpt,
    HomeOpt,
    JsonOpt,
    Listing,
    PapersOpt,
    StrictOpt,
    app,
    console,
    err_console,
    esc,
    fail,
    make_kb,
    name_unreadable,
    print_json,
)
from kb.display import body_within, evidence_origin, markdown_text, terminal_text
from kb.notes import edits as note_edits
from kb.notes import field_names
from kb.notes.files import Note, NoteError, read_note
from kb.notes.grounding import check_note, disagreements
from kb.notes.links import body_first_line, find_links, unknown_links
from kb.notes.sources import SourceError, SourceText, read_text_file

if TYPE_CHECKING:  # types only: the core loads when a command runs (start-up)
    from kb.core import KnowledgeBase


@app.command()
def validate(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Notes or folders (default: the notes folder).")
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Exit 1 on warnings too (a missing source text, a "
            "link to a note or claim that does not exist).",
        ),
    ] = False,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Validate notes against the schemas; exit 1 when any is invalid (with --strict, when any has a
    warning)."""
    kb = make_kb(papers, home, db)
    valid, errors = kb.validate(list(paths) if paths else None)
    if as_json:
        print_json(
            [{"id": n.id, "path": str(n.path), "valid": True} for n in valid]
            + [
                {"id": Path(e.path).stem, "path": str(e.path), "valid": False, "error": str(e)}
                for e in errors
            ]
        )
    else:
        for note in valid:
            console.print(f"[green]ok[/]    {esc(note.path)}  ({len(note.meta.claims)} claims)",
                          highlight=False)
    warnings = 0
    # a missing source text is a warning here, an error in 'kb check' (refused ones: errors)
    for note in valid:
        if (problem := kb.read_source(note).problem) is not None:
            err_console.print(f"[yellow]warning[/]: {esc(note.path)}: {esc(problem)}",
                              highlight=False, soft_wrap=True)
        for miss in field_names.near_miss_fields(note.meta):  # kept as an extra field: only this says so
            err_console.print(
                f"[yellow]warning[/]: {esc(note.path)}: field {esc(miss.key)} is not one kb knows: "
                f"did you mean `{esc(miss.known)}`? (kept as written; rename it with a text editor)",
                highlight=False,
                soft_wrap=True,
            )
            warnings += 1
    for note, line, why in _unknown_links(kb, valid):
        err_console.print(
            f"[yellow]warning[/]: {esc(note.path)}:{line}: {esc(why)}", highlight=False, soft_wrap=True
        )
        warnings += 1
    if errors:
        fail(errors)
    if strict and warnings:
        err_console.print(f"[bold red]{warnings} warning(s)[/] (--strict)", highlight=False)
        raise typer.Exit(1)
    if not as_json:
        console.print(f"[bold green]{len(valid)} valid note(s)[/]")


class _AnyClaim(set[str]):
    """The claims of a note that exists but cannot be read: every claim id is taken as known (the note's own
    error is what to fix first)."""

    def __contains__(self, claim_id: object) -> bool:
        return True


def _unknown_links(kb: KnowledgeBase, notes: list[Note]) -> list[tuple[Note, int, str]]:
    """Links in these notes' bodies to a note or claim that does not exist: (note, file line, the warning)."""
    claims = {note.id: {c.id for c in note.meta.claims} for note in notes}

    def claims_of(note_id: str) -> set[str] | None:
        if note_id not in claims:  # a note outside the paths validated: read it from the notes folder
            try:
                kb.note_path(note_id)
            except NoteError:
                return None
            try:
                claims[note_id] = {c.id for c in kb.read(note_id).meta.claims}
            except NoteError:  # it exists but is invalid (reported on its own): its claims are not known
                claims[note_id] = _AnyClaim()
        return claims[note_id]

    return [
        (note, line, f"[[{link.target}]]: {why} (links are resolved by note id: the file name without .md)")
        for note in notes
        for link, line, why in unknown_links(note, claims_of)
    ]


@app.command()
def index(
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
    rebuild: Annotated[
        bool,
        typer.Option(
            "--rebuild",
            help="Re-create the index from the notes and "
            "re-attach the evidence kept in the store (an index that fails its "
            "integrity check is moved aside, never deleted; a healthy one is "
            "kept).",
        ),
    ] = False,
) -> None:
    """Index the notes folder into the database (incremental)."""
    from kb.queue.records import StoreUnreadable
    kb = make_kb(papers, home, db)
    restore = None
    with Progress(TextColumn("indexing"), BarColumn(), MofNCompleteColumn(), console=err_console,
                  transient=True, disable=as_json) as bar:
        task = bar.add_task("index", total=None)
        step = lambda done, total: bar.update(task, completed=done, total=total)  # noqa: E731
        try:
            kept = rebuild and kb.index_health() is None  # a healthy SQLite index is never moved aside
            report, restore = kb.rebuild_index(progress=step) if rebuild else (kb.index(progress=step), None)
        except NoteError as exc:
            fail(exc)
            return
        except StoreUnreadable as exc:  # one line, not a traceback: the store may just be restarting
            err_console.print(f"[red]error[/]: {esc(exc)}", highlight=False, soft_wrap=True)
            raise typer.Exit(3) from None
    for line in restore.skipped if restore is not None else []:  # one line per refused store record
        err_console.print(f"[yellow]skipped[/] store record {esc(line)}", highlight=False, soft_wrap=True)
    if restore is not None and not as_json:
        console.print(
            (
                "the index passed its integrity check: kept it (nothing moved aside) and brought it up to "
                "date"
                if kept
                else "rebuilt the index"
            )
            + f"; re-attached the evidence of {restore.restored} "
            f"run(s), skipped {len(restore.skipped)} store record(s)",
            highlight=False,
        )
    if restore is not None and restore.untimed and not as_json:
        console.print(
            f"{restore.untimed} restored run(s) have no measured time in their store record (written "
            "before kb kept it): their time reads from started to finished, and estimates learn "
            "nothing from them",
            highlight=False,
        )
    counts = {k: len(getattr(report, k)) for k in ("added", "updated", "unchanged", "removed")}
    if as_json:
        print_json(
            [{"id": i, "change": k} for k in ("added", "updated", "removed") for i in getattr(report, k)]
            + [{"id": Path(e.path).stem, "change": "invalid", "error": str(e)} for e in report.errors]
        )
    else:
        console.print(", ".join(f"{v} {k}" for k, v in counts.items()) + f", {len(report.errors)} invalid")
    if report.errors:
        fail(report.errors)


@app.command()
def show(note_id: Annotated[str, typer.Argument(help="Note id (file name without .md).")],
         papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Show one note: frontmatter, claims and body."""
    from kb.evidence.claim_states import label
    from kb.evidence.tensions import by_claim as tensions_by_claim
    from kb.evidence.verdicts import describe
    kb = make_kb(papers, home, db)
    try:
        note = kb.read(note_id)
    except NoteError as exc:
        fail(exc)
        return
    meta = note.meta.model_dump(mode="json", exclude={"claims"})
    kb.index()  # claim states come from the index and the evidence (kb.evidence.claim_states's rule)
    states = kb.claim_states(note_id)
    state_of = {c.id: states[key].state.value if (key := f"{note_id}#{c.id}") in states else None
                for c in note.meta.claims}
    # kb.evidence.tensions: the claims of other notes it cannot hold with
    in_tension = tensions_by_claim(kb.tensions())
    tension_ids = {c.id: [t.id for t in in_tension.get(f"{note_id}#{c.id}", [])] for c in note.meta.claims}
    # Evidence made elsewhere (`kb evidence import`) says where and on what, beside the state it gives.
    origin = {
        c.id: evidence_origin(found[0].provenance) if (found := kb.evidence(f"{note_id}#{c.id}")) else None
        for c in note.meta.claims
    }
    claims = [
        {
            **c.model_dump(mode="json", exclude_none=True),
            "state": state_of[c.id],
            "tensions": tension_ids[c.id],
            "made_elsewhere": origin[c.id],
        }
        for c in note.meta.claims
    ]
    links = find_links(note.body)
    targets = kb.link_targets(links)
    backlinks = kb.backlinks(note_id)
    if as_json:
        print_json([_note_json(note, meta, claims, links, targets, backlinks)])
        return
    console.print(_header_panel(note, meta))
    claim_table = Listing(f"{len(claims)} claim(s)", [
        Col("id", fold=True), Col("state"), Col("kind", min_width=120), Col("analyzer", min_width=100),
        Col("expect", ratio=2, min_width=120), Col("statement", ratio=3)])
    for claim in note.meta.claims:
        state = state_of[claim.id]
        marks = "".join(f"\n[magenta]tension {esc(t)}[/]" for t in tension_ids[claim.id])
        marks += f"\n[cyan]{esc(origin[claim.id])}[/]" if origin[claim.id] else ""
        claim_table.add(
            id=esc(claim.id),
            state=(esc(label(state)) if state else "not indexed") + marks,
            kind=claim.kind.value,
            analyzer=esc(claim.analyzer.name) if claim.analyzer else "",
            expect=esc(describe(claim.expect)) if claim.expect else "",
            statement=esc(claim.statement),
        )
    console.print(claim_table.table)
    shown, left_out = body_within(note.body, kb.settings.max_rendered_body, note.path)
    from rich.markdown import Markdown  # markdown-it loads only for the command that renders a body

    shown = _links_resolved(shown, targets)
    console.print(Markdown(terminal_text(shown, block=True)))  # Markdown is not rich markup: no esc()
    if left_out is not None:
        console.print(f"[dim]{esc(left_out)}[/]", highlight=False, soft_wrap=True)
    if backlinks:
        console.print(f"[bold]Linked from[/] ({len(backlinks)})", highlight=False)
        for back in backlinks:
            which = f" (claim {esc(back.claim_id)})" if back.claim_id else ""
            console.print(
                f"  {esc(back.title)} [dim]{esc(back.note_id)}[/]{which}", highlight=False, soft_wrap=True
            )


def _note_json(note: Note, meta: dict[str, Any], claims: list[dict[str, Any]], links: list[Any],
               targets: dict[str, str | None], backlinks: list[Any]) -> dict[str, Any]:
    """`kb show --json`'s object: the frontmatter, claims with their states, the body, links and backlinks."""
    first_line = body_first_line(note)  # a link's line in the file, as an editor shows it
    return {
        "id": note.id,
        "path": str(note.path),
        "frontmatter": meta,
        "claims": claims,
        "body": note.body,
        "links": [
            {
                "target": link.target,
                "note": link.note_id,
                "claim": link.claim_id,
                "label": link.label,
                "line": first_line + link.line - 1,
                "resolved": targets[link.target],
            }
            for link in links
        ],
        "backlinks": [
            {"note": b.note_id, "title": b.title, "claim": b.claim_id} for b in backlinks
        ],
    }


def _header_panel(note: Note, meta: dict[str, Any]) -> Panel:
    """The note's fields that say what it is, where 'kb add' took them from, and the user's own fields."""
    header = Table.grid(padding=(0, 2))
    for key in ("paper_id", "year", "decision", "status", "quality_score", "journal_tier", "tags"):
        value = note.meta.year if key == "year" else meta.get(key)
        header.add_row(
            f"[bold]{esc(key)}[/]", esc(", ".join(value) if isinstance(value, list) else str(value or ""))
        )
    # where 'kb add' took each field from (a record online, the PDF's layout, ...)
    if note.meta.field_sources:
        sources = ", ".join(f"{name}: {source.value}" for name, source in note.meta.field_sources.items())
        header.add_row("[bold]sources[/]", esc(sources))
    for key, value in note.meta.extra_fields.items():
        header.add_row(f"[dim]{esc(key)}[/]", esc(value))
    return Panel(header, title=esc(note.meta.title), subtitle=esc(note.path))


def _links_resolved(body: str, targets: dict[str, str | None]) -> str:
    """The body with each link ([[note-id#claim|label]]) as Markdown text: its label, the note's title or the
    claim's statement in quotes, then the target ('-> note-id#claim'); an unknown target says so."""
    for link in reversed(find_links(body)):  # from the end, so earlier offsets stay right
        resolved = targets.get(link.target)
        if resolved is None:
            unknown = "claim" if link.claim_id else "note"
            text = f"{markdown_text(body[link.start : link.end])} *(unknown {unknown})*"
        else:
            text = f"*{markdown_text(link.label or resolved)}* (→ {markdown_text(link.target)})"
        body = body[:link.start] + text + body[link.end:]
    return body


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="Words to search for.")],
    limit: Annotated[int, typer.Option(help="Maximum hits.")] = 20,
    strict: StrictOpt = False,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Full-text search over titles, tags, bodies, claim statements and source texts (with the page)."""
    from kb.index.search import QueryError
    kb = make_kb(papers, home, db)
    report = kb.index()
    try:
        hits = kb.search(query, limit=limit)
    except QueryError as exc:
        err_console.print(f"[bold red]error[/]: {esc(exc)}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    rows: list[dict[str, Any]] = []
    for hit in hits:
        paper = kb.get(hit.paper_id)
        rows.append({"id": hit.paper_id, "title": paper.title if paper else "", "score": hit.score,
                     "page": hit.page, "snippet": hit.snippet})  # page: of the source text, for a hit in it
    if as_json:
        print_json(rows)
    else:
        table = Table(title=f"{len(rows)} hit(s) for {esc(repr(query))}", header_style="bold cyan")
        for column in ("id", "title", "page", "snippet"):
            table.add_column(column, overflow="fold")
        for row in rows:
            page = f"p. {row['page']}" if row["page"] is not None else ""
            table.add_row(esc(row["id"]), esc(row["title"]), page, _highlight(str(row["snippet"])))
        console.print(table)
    name_unreadable(report.errors, strict=strict)


def _highlight(snippet: str) -> str:
    """A search snippet for the terminal: its text escaped, the hits it marks as [word] shown in bold."""
    return re.sub(r"\\\[([^\[\]]*)\]", r"[bold yellow]\1[/]", esc(snippet))


def _split_assignments(assignments: list[str]) -> list[tuple[str, str]]:
    """FIELD=VALUE pairs as typed; ``kb.notes.edits.coerce_value`` turns each VALUE into what the field
    holds."""
    pairs = []
    for item in assignments:
        field, sep, raw = item.partition("=")
        if not sep or not field.strip():
            err_console.print(
                f"[red]error[/]: expected FIELD=VALUE, got {esc(repr(item))} (e.g. status=reviewed)"
            )
            raise typer.Exit(2)
        pairs.append((field.strip(), raw))
    return pairs


@app.command("set")
def set_fields(
    note_id: Annotated[str, typer.Argument(help="Note id.")],
    assignments: Annotated[list[str], typer.Argument(help="FIELD=VALUE pairs, e.g. quality_score=5.")],
    new_field: Annotated[
        bool,
        typer.Option(
            "--new-field",
            help="Add a field the note does not have even where its name is one typo from a known one.",
        ),
    ] = False,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
) -> None:
    """Change frontmatter fields of a note; only those fields' lines change in the file."""
    kb = make_kb(papers, home, db)
    try:
        note = kb.read(note_id)
        changes = {
            field: note_edits.coerce_value(note, field, raw) for field, raw in _split_assignments(assignments)
        }
        note = kb.set_fields(note_id, changes, new_fields=new_field)
    except NoteError as exc:
        fail(exc)
        return
    console.print(f"[green]updated[/] {esc(note.path)}: " + esc(", ".join(changes)), highlight=False)


@app.command()
def new(
    title: Annotated[str | None, typer.Option(help="Paper title.")] = None,
    paper_id: Annotated[str | None, typer.Option(help="Paper id, e.g. arxiv:2602.21750.")] = None,
    tag: Annotated[list[str] | None, typer.Option(help="Tag (repeatable).")] = None,
    year: Annotated[int | None, typer.Option(help="Publication year.")] = None,
    venue: Annotated[str | None, typer.Option(help="Venue.")] = None,
    decision: Annotated[str | None, typer.Option(help="ACCEPT, REJECT, MAYBE or PENDING.")] = None,
    status: Annotated[str | None, typer.Option(help="Workflow status.")] = "inbox",
    quality: Annotated[int | None, typer.Option(help="quality_score, 1 to 5.")] = None,
    template: Annotated[Path | None, typer.Option(help="A note to start from (frontmatter + body).")] = None,
    body: Annotated[str, typer.Option(help="Markdown body.")] = "",
    papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None, as_json: JsonOpt = False,
) -> None:
    """Create a note from flags (or a template); it is validated before anything is written."""
    kb = make_kb(papers, home, db)
    meta: dict[str, Any] = {}
    if template is not None:
        try:
            base = read_note(template)
        except NoteError as exc:
            fail(exc)
            return
        meta = base.meta.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
        body = body or base.body
    flags = {"title": title, "paper_id": paper_id, "tags": list(tag) if tag else None, "decision": decision,
             "status": status, "quality_score": quality}
    meta.update({k: v for k, v in flags.items() if v is not None})
    if year is not None or venue is not None:
        meta["publication"] = {**meta.get("publication", {}),
                               **{k: v for k, v in {"year": year, "venue": venue}.items() if v is not None}}
    try:
        note = kb.new_note(meta, body or f"# {meta.get('title', '')}\n")
    except NoteError as exc:
        fail(exc)
        return
    if as_json:
        print_json([{"id": note.id, "path": str(note.path)}])
    else:
        console.print(f"[green]created[/] {esc(note.path)}", highlight=False)


@app.command("import")
def import_(src: Annotated[Path, typer.Argument(help="A note written elsewhere.")],
            papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None) -> None:
    """Validate a note and copy it unchanged into the notes folder (never overwrites)."""
    kb = make_kb(papers, home, db)
    try:
        note = kb.import_note(src)
    except NoteError as exc:
        fail(exc)
        return
    console.print(f"[green]imported[/] {esc(src)} -> {esc(note.path)}", highlight=False)


@app.command()
def schema(
    out: Annotated[Path, typer.Option(help="Folder for the JSON Schema files.")] = Path("schemas/json"),
    as_json: JsonOpt = False,
) -> None:
    """Write the JSON Schema of every model (notes, claims, runs, evidence) for editors."""
    from kb.core import KnowledgeBase
    written = KnowledgeBase.export_schemas(out)
    if as_json:
        print_json([{"id": p.name.split(".")[0], "path": str(p)} for p in written])
    else:
        for path in written:
            console.print(f"[green]wrote[/] {path}", highlight=False)


@app.command()
def check(
    targets: Annotated[
        list[str], typer.Argument(help="Note ids or note files (e.g. a note written elsewhere).")
    ],
    source: Annotated[
        Path | None, typer.Option(help="Source text (default: the note's source_file).")
    ] = None,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check claims' quotes and numbers, and the note's title, id and year, against its source text.

    Exit 1 when the source does not back a claim or the note disagrees with its source.
    """
    kb = make_kb(papers, home, db)
    rows: list[dict[str, Any]] = []
    missing_source: list[str] = []
    try:  # the operator's own file: no vault, but bounded and regular files only like any source text
        text = read_text_file(source, max_bytes=kb.settings.max_source_bytes) if source else None
    except SourceError as exc:
        fail(NoteError(source or "", f"--source {exc.reason}"))
        return
    for target in targets:
        try:
            note = read_note(Path(target)) if Path(target).is_file() else kb.read(target)
        except NoteError as exc:
            fail(exc)
            return
        given: str | SourceText = text if text is not None else kb.read_source(note)
        if isinstance(given, SourceText) and given.problem is not None:
            missing_source.append(f"{note.path}: {given.problem}")
        found = disagreements(note, given)
        differ = {d.where: d.reason for d in found}
        rows += [{"id": f"{note.id}:{d.where}", "note": note.id, "claim": None,
                  "grounding": "disagrees" if d.severity == "error" else "warning", "reason": d.reason,
                  "disagreement": d.reason if d.severity == "error" else None}
                 for d in found if d.where in ("title", "paper_id", "year")]
        rows += [{"id": f"{note.id}#{r.claim_id}", "note": note.id, "claim": r.claim_id,
                  "grounding": r.status.value, "reason": r.reason, "disagreement": differ.get(r.claim_id)}
                 for r in check_note(note, given)]
    if as_json:
        print_json(rows)
    else:
        colour = {"grounded": "green", "not_found": "red", "no_source": "yellow", "no_quote": "yellow",
                  "disagrees": "red", "warning": "yellow"}
        table = Table(title="grounding", header_style="bold cyan")
        for column in ("claim", "grounding", "reason", "disagreement"):
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(
                esc(row["id"]),
                f"[{colour[row['grounding']]}]{row['grounding']}[/]",
                esc(row["reason"]),
                f"[red]{esc(row['disagreement'])}[/]" if row["disagreement"] and row["claim"] else "",
            )
        console.print(table)
    for problem in missing_source:
        err_console.print(f"[bold red]error[/]: {esc(problem)}", highlight=False, soft_wrap=True)
    if missing_source or any(r["grounding"] in ("not_found", "disagrees") or r["disagreement"] for r in rows):
        raise typer.Exit(1)
