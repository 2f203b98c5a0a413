"""``kb tensions``: claims of different notes that cannot both hold, with both quotes, each side's evidence
and how the evidence stands (``kb.evidence.tensions``); ``--propose`` asks the agents for candidate tensions
between qualitative claims, listed apart and marked as proposed by the model."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

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
    print_json,
)

if TYPE_CHECKING:
    from kb.evidence.tensions import Tension

#: Colours of the outcomes in the listing.
OUTCOME_COLOURS = {"settled_a": "green", "settled_b": "green", "both_wrong": "red", "open": "yellow"}


def _side(row: dict[str, Any]) -> str:
    """One side of a tension: its key, what it expects and its state, then its quote and where it is from
    (each piece escaped for the terminal; the line breaks are the listing's own)."""
    from kb.evidence.claim_states import label
    where = ", ".join(str(x) for x in (row["section"], f"p. {row['page']}" if row["page"] else None) if x)
    evidence = row["evidence"]
    seen = f" · {label(evidence['state'])}" if evidence and evidence.get("state") else ""
    head = esc(f"{row['key']}: {row['expects'] or row['statement']}{seen}")
    if not row["quote"]:
        return head
    return head + "\n    " + esc(f"“{row['quote']}”" + (f" ({where})" if where else ""))


def print_tensions(found: Sequence[Tension], limit: int = 0) -> None:
    """How many tensions there are in each state, then the first ``limit`` (0: all) as blocks
    (``kb.evidence.tensions.record``): id and state, quantity and why, then both sides. A large library has
    tens of thousands, which no one reads in a terminal, and drawing them takes rich a minute."""
    from kb.evidence.tensions import record
    states = Counter(tension.state.outcome.value for tension in found)
    counts = ", ".join(f"[{OUTCOME_COLOURS.get(state, 'white')}]{n:,} {esc(state.replace('_', ' '))}[/]"
                       for state, n in sorted(states.items()))
    console.print(f"[bold]{len(found):,} tension(s) between notes[/]" + (f": {counts}" if found else ""),
                  highlight=False)
    shown = [record(tension) for tension in (found[:limit] if limit else found)]
    for row in shown:
        colour = OUTCOME_COLOURS.get(row["state"], "white")
        console.print(f"\n[bold]{esc(row['id'])}[/] · [{colour}]{esc(row['state_text'])}[/]\n"
                      f"  {esc(row['quantity'])} ({esc(row['kind'])}: {esc(row['why'])})\n"
                      f"  A {_side(row['a'])}\n  B {_side(row['b'])}", highlight=False, soft_wrap=True)
    if len(shown) < len(found):
        console.print(f"\n[dim]the first {len(shown):,} shown; --limit 0: all of them[/]", highlight=False)
    if found:
        console.print("\n[dim]kb verify --tension ID: queue the runs that decide one; --json: everything[/]")


@app.command()
def tensions(
    propose: Annotated[
        bool,
        typer.Option(
            "--propose",
            help="Also ask the chat model (KB_CHAT_MODEL) for candidate "
            "tensions between qualitative claims; listed apart, marked 'proposed by "
            "the model'. Without a model none are proposed.",
        ),
    ] = False,
    limit: Annotated[
        int,
        typer.Option("--limit", min=0, help="Tensions listed in full (0: all); the count of each state "
                     "covers every one, and --json lists every one."),
    ] = 50,
    strict: StrictOpt = False,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Claims of different notes that cannot both hold, with both quotes, the evidence on each side and the
    state."""
    from kb.evidence import tensions as tensions_mod
    kb = make_kb(papers, home, db)
    report = kb.index()
    found = kb.tensions()
    if (capped := found.message()) is not None:
        err_console.print(f"[yellow]warning[/]: {esc(capped)}", highlight=False, soft_wrap=True)
    proposals = None
    if propose:
        from kb.agents.config import NoChatModel, chat_model
        from kb.agents.tension_finder import propose_tensions

        try:
            model = chat_model(kb.settings.chat_model)
        except NoChatModel:
            model = None
        proposals = propose_tensions(kb, model)
    if as_json:
        out = [tensions_mod.record(t) for t in found]
        if proposals is not None:
            out += [{**p.model_dump(mode="json"), "id": p.id} for p in proposals.proposals]
        print_json(out)
    else:
        print_tensions(found, limit)
        if proposals is not None:
            _print_proposals(proposals)
    name_unreadable(report.errors, strict=strict)


def _print_proposals(proposals: Any) -> None:
    """The chat model's candidate tensions, apart from kb's own (not checked by kb)."""
    console.print(
        f"\n[bold]Proposed by the model[/] ({proposals.method}): {len(proposals.proposals)} "
        "candidate(s), not checked by kb" + (f" · {esc(proposals.message)}" if proposals.message else "")
    )
    for proposal in proposals.proposals:
        console.print(f"- {esc(proposal.a)} ↔ {esc(proposal.b)}: {esc(proposal.why)}\n"
                      f"  A “{esc(proposal.a_quote)}”\n  B “{esc(proposal.b_quote)}”", highlight=False)
