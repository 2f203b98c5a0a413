"""Links between notes as the index sees them: which notes link to a note (backlinks), and what a link's
target is (a note's title, a claim's statement, or nothing: an unknown target).

The link syntax is read by ``kb.notes.links`` only; this module asks the index which notes' bodies hold a
link to a note and reads those bodies with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from kb.index.database import ClaimRow, Paper
from kb.notes.links import Link, find_links


@dataclass(frozen=True)
class Backlink:
    """A link to a note from another note's body: the linking note, and the claim the link names, if any."""

    note_id: str
    title: str
    claim_id: str | None
    label: str | None


def _like_escaped(text: str) -> str:
    """``text`` matched literally by SQL LIKE (with ESCAPE '\\'): a note id may hold '%' or '_'."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def backlinks(engine: Engine, note_id: str) -> list[Backlink]:
    """Every link to ``note_id`` (or one of its claims) from the body of another indexed note, by note id.

    The database narrows to bodies that hold '[[' and the id; ``find_links`` decides (a mention in code is not
    a link, and '[[note-idx]]' is not a link to 'note-id').
    """
    pattern = f"%[[{_like_escaped(note_id)}%"
    with Session(engine) as session:
        rows = session.exec(select(Paper.id, Paper.title, Paper.body)
                            .where(col(Paper.body).like(pattern, escape="\\"), col(Paper.id) != note_id)
                            .order_by(col(Paper.id))).all()
    return [Backlink(source, title, link.claim_id, link.label)
            for source, title, body in rows for link in find_links(body) if link.note_id == note_id]


def link_targets(engine: Engine, links: Sequence[Link]) -> dict[str, str | None]:
    """Each link's target ('note-id' or 'note-id#claim-id') -> the note's title or the claim's statement; None
    for a target the index does not hold."""
    note_ids = {link.note_id for link in links if link.claim_id is None}
    claim_keys = {link.target for link in links if link.claim_id is not None}
    found: dict[str, str | None] = {target: None for target in note_ids | claim_keys}
    with Session(engine) as session:
        if note_ids:
            for note_id, title in session.exec(
                select(Paper.id, Paper.title).where(col(Paper.id).in_(note_ids))
            ):
                found[note_id] = title
        if claim_keys:
            for key, statement in session.exec(select(ClaimRow.key, ClaimRow.statement)
                                               .where(col(ClaimRow.key).in_(claim_keys))):
                found[key] = statement
    return found
