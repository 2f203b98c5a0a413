"""Links between notes, as the user writes them in a note's body: ``[[note-id]]``, ``[[note-id#claim-id]]``,
``[[note-id|label]]`` and ``[[note-id#claim-id|label]]``.

The one reader of that syntax: ``kb show`` and the app resolve what it finds (a note's title, a claim's
statement), ``kb validate`` warns about a target that does not exist, and the index finds backlinks with it
(``kb.index.links``). Links are read, never written: the body stays the user's bytes. What is inside a code
span (`` `[[x]]` ``) or a fenced code block is code, not a link.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kb.notes.files import Note

# Inside the brackets: a note id (no '#', '|' or brackets), then an optional '#claim-id' and '|label'.
_LINK = re.compile(r"\[\[([^\[\]|#\n]+)(?:#([^\[\]|#\n]+))?(?:\|([^\[\]\n]*))?\]\]")
# A fence opens a code block: up to three spaces, then three or more backticks or tildes.
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Link:
    """One link in a body: its target, optional label, where it is (offsets into the body, 1-based body
    line)."""

    note_id: str
    claim_id: str | None
    label: str | None
    start: int
    end: int
    line: int

    @property
    def target(self) -> str:
        """'note-id' or 'note-id#claim-id' (a claim's key in the index)."""
        return f"{self.note_id}#{self.claim_id}" if self.claim_id else self.note_id


def _fenced_blocks(body: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(fenced code blocks, the stretches of text between them) as offset ranges; an unclosed fence runs to
    the end, as CommonMark reads it."""
    blocks: list[tuple[int, int]] = []
    texts: list[tuple[int, int]] = []
    offset = text_start = block_start = 0
    fence: str | None = None
    for line in body.splitlines(keepends=True):
        match = _FENCE.match(line)
        if fence is None and match and not (match.group(1)[0] == "`" and "`" in line[match.end():]):
            texts.append((text_start, offset))
            fence, block_start = match.group(1), offset
        elif (
            fence is not None
            and match
            and match.group(1)[0] == fence[0]
            and len(match.group(1)) >= len(fence)
            and not line[match.end() :].strip()
        ):
            blocks.append((block_start, offset + len(line)))
            fence, text_start = None, offset + len(line)
        offset += len(line)
    if fence is not None:
        blocks.append((block_start, offset))
    else:
        texts.append((text_start, offset))
    return blocks, texts


def _code_spans(body: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Code spans between ``start`` and ``end``: a run of n backticks up to the next run of exactly n, within
    one paragraph (a run without its match is literal backticks)."""
    for paragraph in re.finditer(r"(?:(?!\n[ \t]*\n)[\s\S])+", body[start:end]):
        runs = list(re.finditer(r"`+", paragraph.group()))
        i = 0
        while i < len(runs):
            closing = next(
                (j for j in range(i + 1, len(runs)) if len(runs[j].group()) == len(runs[i].group())), None
            )
            if closing is None:
                i += 1
                continue
            base = start + paragraph.start()
            yield base + runs[i].start(), base + runs[closing].end()
            i = closing + 1


def code_ranges(body: str) -> list[tuple[int, int, bool]]:
    """Where the body is code, as sorted (start, end, fenced) offset ranges: fenced blocks (True) and code
    spans (False)."""
    blocks, texts = _fenced_blocks(body)
    spans = [(*span, False) for start, end in texts for span in _code_spans(body, start, end)]
    return sorted([(*block, True) for block in blocks] + spans)


def find_links(body: str) -> list[Link]:
    """Every link in a Markdown body, in order, those inside code left out."""
    code = code_ranges(body)
    links = []
    for match in _LINK.finditer(body):
        if any(start <= match.start() < end for start, end, _ in code):
            continue
        note_id, claim_id, label = (g.strip() if g is not None else None for g in match.groups())
        if not note_id:
            continue
        links.append(Link(note_id, claim_id or None, label or None, match.start(), match.end(),
                          body.count("\n", 0, match.start()) + 1))
    return links


def body_first_line(note: Note) -> int:
    """The file's line number of the body's first line (after the frontmatter)."""
    head = note.raw[: len(note.raw) - len(note.body.encode("utf-8"))]
    return head.count(b"\n") + 1


def unknown_links(note: Note, claims_of: Callable[[str], set[str] | None]) -> list[tuple[Link, int, str]]:
    """The note's links whose target does not exist: (link, file line, why). ``claims_of(note_id)`` gives a
    note's claim ids, None when there is no such note."""
    found = []
    first = body_first_line(note)
    for link in find_links(note.body):
        claims = claims_of(link.note_id)
        if claims is None:
            found.append((link, first + link.line - 1, f"no note with id {link.note_id!r}"))
        elif link.claim_id is not None and link.claim_id not in claims:
            found.append(
                (link, first + link.line - 1, f"note {link.note_id!r} has no claim {link.claim_id!r}")
            )
    return found
