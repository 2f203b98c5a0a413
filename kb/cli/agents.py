"""The agent commands: draft-claims and ask (a chat model from KB_CHAT_MODEL, or the fallback drafter)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

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
from kb.notes.files import NoteError

if TYPE_CHECKING:  # types only: the core loads when a command runs (start-up)
    from kb.core import KnowledgeBase
    from schemas import Claim


@contextmanager
def _chat_model_failures(*known: type[Exception]) -> Iterator[None]:
    """Errors of an agent run as one clear line and exit 1: ``known`` ones as they are, any other as the
    provider's."""
    try:
        yield
    except known as exc:
        err_console.print(f"[bold red]error[/]: {escape(str(exc))}", highlight=False)
        raise typer.Exit(1) from exc
    except Exception as exc:  # the provider failed: network, authentication, quota, ...
        err_console.print(
            f"[bold red]error[/]: the chat model failed: {type(exc).__name__}: {escape(str(exc))} "
            "(check the network, the provider's API key and KB_CHAT_MODEL)",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1) from exc


# draft-claims' options, named once so its signature reads at a glance
AcceptOpt = Annotated[
    list[str] | None,
    typer.Option("--accept", help="Write this drafted claim id into the note (repeat for more)."),
]
AcceptAllOpt = Annotated[bool, typer.Option("--accept-all", help="Write every kept claim into the note.")]
IntoOpt = Annotated[
    str | None, typer.Option("--into", help="Note to write accepted claims into (FILE input).")
]
FallbackOpt = Annotated[
    bool, typer.Option("--fallback", help="Use the deterministic drafter even if a chat model is configured.")
]
ProposedScaleOpt = Annotated[bool, typer.Option(
    "--with-proposed-scale", help="Accepted claims that state no scale get the one proposed from the paper's "
    "text (shown in the notes column).")]


@app.command("draft-claims")
def draft_claims(
    note_or_file: Annotated[
        str, typer.Argument(help="Note id (drafts from its source_file), or a text file.")
    ],
    accept_ids: AcceptOpt = None,
    accept_all: AcceptAllOpt = False,
    into: IntoOpt = None,
    fallback: FallbackOpt = False,
    with_proposed_scale: ProposedScaleOpt = False,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Draft claims from a paper's text for review; with --accept, write chosen ones into the note.

    The agent (chat model from KB_CHAT_MODEL) drafts statements, verbatim quotes, analyzers and
    expectations; without a model a deterministic drafter proposes claims from explicit numbers and
    tables. Quotes not in the text are rejected; unknown analyzers, bad parameters and undeclared
    metrics are stripped, with the reason shown. Without --accept nothing is written.
    """
    from kb.agents.accept import draft_or_recall, draft_source
    from kb.agents.drafter import DraftError

    kb = make_kb(papers, home, db)
    if accept_ids and accept_all:
        err_console.print("[bold red]error[/]: give either --accept ID ... or --accept-all, not both")
        raise typer.Exit(2)
    try:
        source = draft_source(kb, note_or_file)
    except NoteError as exc:
        fail(exc)
        return
    accepting = bool(accept_ids) or accept_all
    target = _draft_target(source.note_id, into, accepting)
    existing = _claims_in(kb, target)
    for notice in source.notices:
        err_console.print(f"[yellow]note[/]: {escape(notice)}", highlight=False)
    model = None if fallback else _configured_chat_model(kb.settings.chat_model)
    with _chat_model_failures(DraftError), err_console.status(
            "drafting claims" + (" with the chat model" if model else ""), spinner="dots"):
        result, recalled = draft_or_recall(kb, source, model, existing, recall=accepting)
    if recalled:
        err_console.print("accepting from the draft printed earlier for this text", highlight=False)
    if result.message:
        err_console.print(f"[yellow]note[/]: {escape(result.message)}", highlight=False, soft_wrap=True)
    written: dict[str, str] = {}
    if accepting:
        assert target is not None
        written = _accept(
            kb, target, result, None if accept_all else list(accept_ids or []), with_proposed_scale
        )
    if as_json:
        print_json(_draft_rows(result, written, target))
        return
    _print_drafts(result, written)
    _print_written(written, target, bool(result.claims),
                   f"kb draft-claims {note_or_file} --accept ID ... " + (f"--into {target} " if into else ""))


def _print_written(written: dict[str, str], target: str | None, drafted: bool, accept_command: str) -> None:
    """What was written into the note, or, where drafts could be, how to accept them (``accept_command``)."""
    if written:
        console.print(f"wrote {len(written)} claim(s) into note {target}: {', '.join(written.values())}")
    elif target is not None and drafted:
        console.print(f"nothing written; accept with: {accept_command}(or --accept-all)", highlight=False)


def _draft_target(note_id: str | None, into: str | None, accepting: bool) -> str | None:
    """The note accepted claims go into: the drafted note's own, or ``--into`` when drafting from a file;
    ``--into`` with a note, or accepting with no note to write into, is exit 2."""
    if into is not None and note_id is not None:
        err_console.print(
            "[bold red]error[/]: --into is for drafting from a file; a note's claims go into it"
        )
        raise typer.Exit(2)
    target = into or note_id
    if accepting and target is None:
        err_console.print("[bold red]error[/]: accepted claims are written into a note: pass a note id, "
                          "or --into NOTE when drafting from a file")
        raise typer.Exit(2)
    return target


def _claims_in(kb: KnowledgeBase, target: str | None) -> list[Claim]:
    """The claims note ``target`` holds already (none without a target); an unreadable note fails."""
    try:
        return list(kb.read(target).meta.claims) if target is not None else []
    except NoteError as exc:
        fail(exc)


def _configured_chat_model(name: str | None) -> Any:
    """The chat model the settings name (None when they name none); one that cannot be made is exit 2."""
    from kb.agents.config import NoChatModel, chat_model

    if not name:
        return None
    try:
        return chat_model(name)
    except NoChatModel as exc:
        err_console.print(f"[bold red]error[/]: {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc


def _accept(
    kb: Any, target: str, result: Any, ids: list[str] | None, with_proposed_scale: bool
) -> dict[str, str]:
    """Write the chosen drafts (``ids``; None: all kept) into note ``target``: all of them or, naming each
    refused draft and why, none."""
    from kb.agents.accept import NotAccepted, accept

    try:
        return accept(kb, target, result, ids, with_proposed_scale)
    except NotAccepted as exc:
        for ident, why in exc.reasons.items():
            err_console.print(
                f"[bold red]error[/]: claim {ident!r} {escape(why)}", highlight=False, soft_wrap=True
            )
        err_console.print("Nothing was written.")
        raise typer.Exit(1) from exc
    except NoteError as exc:
        fail(exc)


def _draft_rows(result: Any, written: dict[str, str], target: str | None) -> list[dict[str, Any]]:
    """The drafts as JSON rows: drafted or accepted (with the id written), then the rejected with their
    reason."""
    rows: list[dict[str, Any]] = []
    for c in result.claims:
        row = {**c.model_dump(mode="json", exclude_none=True), "status": "drafted", "method": result.method}
        if c.id in written:
            row.update(status="accepted", note=target, written_id=written[c.id])
        rows.append(row)
    rows += [{**r.claim.model_dump(mode="json", exclude_none=True), "status": "rejected", "reason": r.reason,
              "method": result.method} for r in result.rejected]
    return rows


def _print_drafts(result: Any, written: dict[str, str]) -> None:
    """The drafts as a table (user text escaped), then each rejected draft with its reason."""
    from kb.notes.grounding import normalize_text

    table = Table(
        title=f"{len(result.claims)} claim(s) drafted ({result.method}), {len(result.rejected)} rejected",
        header_style="bold cyan",
        show_lines=True,
    )
    for column in ("id", "kind", "statement / quote", "analyzer / expectation", "notes"):
        table.add_column(column, overflow="fold")
    for c in result.claims:
        binding = "-" if c.analyzer is None else f"{c.analyzer.name} ({c.analyzer.scale or 'default'})"
        binding += f"\nparams {c.analyzer.params}" if c.analyzer is not None and c.analyzer.params else ""
        if c.expect is not None:
            binding += f"\n{c.expect.metric} {c.expect.op.value} {c.expect.value}"
        ident = c.id + (f"\n[green]accepted as {written[c.id]}[/]" if c.id in written else "")
        page = "" if c.page is None else f" (p. {c.page})"  # the PDF page the quote starts on
        said = escape(c.statement) + page if normalize_text(c.statement) == normalize_text(c.quote) else \
            f"{escape(c.statement)}\n[dim]“{escape(c.quote)}”{page}[/]"
        table.add_row(ident, c.kind.value, said, escape(binding), escape("\n".join(c.notes)))
    console.print(table)
    for r in result.rejected:
        console.print(
            f"[red]rejected[/] {r.claim.id}: {escape(r.reason)}\n  [dim]“{escape(r.claim.quote)}”[/]",
            highlight=False,
        )


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="A question about the notes, their claims and evidence.")],
    no_queue: Annotated[bool, typer.Option("--no-queue", help="Do not let the agent queue runs.")] = False,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer from the library and its evidence only, citing the notes, claims and runs the agent used.

    Needs a chat model (KB_CHAT_MODEL, e.g. openai:gpt-4o-mini); exits 2 with setup help without one.
    The agent may queue verification runs (not with --no-queue); a worker executes them.
    """
    from kb.agents.ask import AskError
    from kb.agents.ask import ask as ask_kb
    from kb.agents.config import NoChatModel, chat_model

    kb = make_kb(papers, home, db)
    try:
        model = chat_model(kb.settings.chat_model)
    except NoChatModel as exc:
        err_console.print(f"[bold red]error[/]: {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc
    with err_console.status("asking the library", spinner="dots") as status:
        def show(name: str, args: dict[str, Any]) -> None:
            shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
            status.update(escape(f"{name}({shown})"))
            err_console.print(f"[dim]→ {escape(name)}({escape(shown)})[/]", highlight=False)

        with _chat_model_failures(AskError):
            answer = ask_kb(question, kb, model, allow_queue=not no_queue, on_call=show)
    if as_json:
        print_json(answer.model_dump(mode="json"))
        return
    from rich.markdown import Markdown  # markdown-it loads only for the command that renders an answer

    console.print(Markdown(answer.text or "(no answer)"))
    if answer.citations:
        console.print("[bold]sources[/]")
    for c in answer.citations:
        console.print(
            f"  [dim]{c.kind}[/] {escape(c.id)}" + (f"  [dim]{escape(c.label)}[/]" if c.label else ""),
            highlight=False,
        )
