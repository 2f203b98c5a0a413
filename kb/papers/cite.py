"""Citations out: notes as BibTeX entries or CSL-JSON items, each under a stable citation key.

A note's key is its ``citekey`` field. A note without one gets one proposed at its first export (the first
author's family name and the year, ``siji2026``; the first title word when that is taken, ``siji2026words``;
then a letter, ``siji2026wordsa``), unique in the library whatever its case, and written into the note once,
through the note's lock and the byte-minimal edit (``KnowledgeBase.set_fields``); a key once set is never
rewritten. What an entry holds is what ``kb add FILE.bib`` / ``kb add FILE.json`` (``kb.papers.add``) reads
back into the same fields: title, authors (name parts, ``kb.papers.bibtex``), year, venue, arXiv id, DOI, URL,
tags (as keywords; a tag holding a comma or semicolon comes back split there), the abstract when the note's
source text is one, and the key itself.
"""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kb.core import KnowledgeBase
from kb.display import terminal_json, terminal_text
from kb.notes.files import Note, NoteChanged, NoteError, read_note
from kb.notes.grounding import PAGE_BREAK
from kb.notes.locks import creation_lock
from kb.notes.sources import SourceStatus
from kb.papers.bibtex import NameParts, bibtex_name, encode_text, split_name
from schemas.note import PaperNote

Format = Literal["bibtex", "csl-json"]
# A source text this short and of one page is an abstract (what 'kb add' stores from a .bib, Zotero, arXiv or
# Crossref); a PDF's full text is not exported as one.
MAX_ABSTRACT_CHARS = 5_000
_SMALL_WORDS = {
    "a", "an", "the", "on", "of", "in", "for", "and", "to", "from", "with", "is", "are", "do", "does",
}


class CiteError(ValueError):
    """Notes kb cannot export as they are (two notes with one key); the message names them and what to do."""


def _ascii_word(text: str) -> str:
    """Letters and digits of ``text`` without accents, lower case ('Höppe' -> 'hoppe')."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", folded.lower())


def author_parts(meta: PaperNote) -> list[NameParts]:
    """The note's authors in their name parts (the ``family`` field, where the note has one, decides)."""
    return [split_name(a.name, a.family) for a in meta.authors]


def propose_citekey(meta: PaperNote, taken: set[str]) -> str:
    """A key for the note not in ``taken`` (case-folded keys): family+year, +first title word, +a, b, ..."""
    authors = author_parts(meta)
    family = _ascii_word(authors[0].family) if authors else ""
    base = (family or "anon") + (str(meta.year) if meta.year else "nd")
    if base.casefold() not in taken:
        return base
    words = [_ascii_word(w) for w in meta.title.split()]
    first = next((w for w in words if w and w not in _SMALL_WORDS), next((w for w in words if w), ""))
    longer = base + first
    if first and longer.casefold() not in taken:
        return longer
    for n in range(1, 10_000):
        letters, k = "", n
        while k:  # a, b, ..., z, aa, ab, ...
            k, r = divmod(k - 1, 26)
            letters = chr(ord("a") + r) + letters
        if (longer + letters).casefold() not in taken:
            return longer + letters
    raise CiteError(f"no free citation key starting {longer!r}; set 'citekey' in the note by hand")


def citekeys_in_use(kb: KnowledgeBase) -> dict[str, str]:
    """Every indexed note's citation key (case-folded) -> the note's id; two notes with one key is an
    error."""
    keys: dict[str, str] = {}
    for paper in kb.list_papers():
        key = json.loads(paper.meta_json).get("citekey")
        if not key:
            continue
        if (other := keys.get(key.casefold())) is not None:
            raise CiteError(
                f"notes {other!r} and {paper.id!r} both have citekey {key!r}: citation keys are unique "
                "in the library; change one of them (kb set NOTE citekey=NEWKEY)"
            )
        keys[key.casefold()] = paper.id
    return keys


def assign_citekeys(kb: KnowledgeBase, note_ids: Sequence[str]) -> dict[str, Note]:
    """Each note, with its citation key; a note without one gets one proposed and written into it (only that
    line). The notes as read (or as written): an export parses each note once here, not again.

    Under the notes folder's creation lock, so two exports (or KB homes) never hand out one key twice.
    """
    notes: dict[str, Note] = {}
    with creation_lock(kb.papers_dir, timeout=kb.settings.note_lock_timeout):
        kb.index()
        taken = set(citekeys_in_use(kb))
        # One scan of the folder for every note's path (a scan per key written made the export quadratic).
        # Under the creation lock no note appears meanwhile; a note moved since is refused by its edit, never
        # misplaced.
        files = kb.note_files()
        for note_id in note_ids:
            note = _read(kb, note_id)
            # an edit that lands between the read and the write: read again, never overwrite
            for _ in range(3):
                if note.meta.citekey:
                    break
                key = propose_citekey(note.meta, taken)
                try:
                    note = kb.set_fields(note_id, {"citekey": key}, expected_hash=note.content_hash,
                                         reindex=False,  # once, below: an index pass per note is quadratic
                                         files=files)
                except NoteChanged:
                    note = _read(kb, note_id)
            if not note.meta.citekey:
                raise NoteError(
                    note.path, "changes too often to be given a citation key; try the export again"
                )
            notes[note_id] = note
            taken.add(note.meta.citekey.casefold())
        kb.index()  # under the lock still: the next export reads these keys from the index
    return notes


def _read(kb: KnowledgeBase, note_id: str) -> Note:
    """The note, read from where the index found it (``kb.read`` looks through the whole folder for each id:
    quadratic over a library); a note the index does not hold, or no longer there, is looked up as usual."""
    paper = kb.get(note_id)
    if paper is not None:
        with contextlib.suppress(NoteError):
            return read_note(Path(paper.path), max_bytes=kb.settings.max_note_bytes,
                             limits=kb.settings.note_limits)
    return kb.read(note_id)


def _abstract(kb: KnowledgeBase, note: Note) -> str | None:
    """The note's source text when it is an abstract (one page, short), else None."""
    source = kb.read_source(note)
    text = (source.text or "").strip() if source.status is SourceStatus.ok else ""
    return text if text and PAGE_BREAK not in text and len(text) <= MAX_ABSTRACT_CHARS else None


@dataclass(frozen=True)
class Citation:
    """What one entry says, read once from the note."""

    key: str
    meta: PaperNote
    abstract: str | None

    @property
    def venue(self) -> str | None:
        return self.meta.publication.venue if self.meta.publication else None

    @property
    def arxiv_id(self) -> str | None:
        return self.meta.publication.arxiv_id if self.meta.publication else None

    @property
    def doi(self) -> str | None:
        return self.meta.publication.doi if self.meta.publication else None

    @property
    def url(self) -> str | None:
        return self.meta.urls.paper_url if self.meta.urls else None


def _verbatim(value: str) -> str:
    """An identifier or URL as a BibTeX field reads it back unchanged: braces cannot be escaped there."""
    return value.replace("{", "%7B").replace("}", "%7D")


def bibtex_entry(cite: Citation) -> str:
    """One BibTeX entry: @article with the venue as journal, @misc for a preprint (eprint, archivePrefix)."""
    journal = cite.venue if cite.venue and cite.venue.lower() != "arxiv" else None
    # {{...}} keeps its case
    fields: list[tuple[str, str]] = [("title", "{" + encode_text(cite.meta.title) + "}")]
    if cite.meta.authors:
        fields.append(("author", " and ".join(bibtex_name(p) for p in author_parts(cite.meta))))
    fields += [("year", str(cite.meta.year))] if cite.meta.year else []
    fields += [("journal", encode_text(journal))] if journal else []
    if cite.arxiv_id:
        fields += [("eprint", _verbatim(cite.arxiv_id)), ("archivePrefix", "arXiv")]
    fields += [("doi", _verbatim(cite.doi))] if cite.doi else []
    fields += [("url", _verbatim(cite.url))] if cite.url else []
    fields += [("keywords", encode_text(", ".join(cite.meta.tags)))] if cite.meta.tags else []
    fields += [("abstract", encode_text(cite.abstract))] if cite.abstract else []
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{'article' if journal else 'misc'}{{{cite.key},\n{body}\n}}\n"


def csl_item(cite: Citation) -> dict[str, Any]:
    """One CSL-JSON item (CSL 1.0.2 schema): id and citation-key are the key."""
    journal = cite.venue if cite.venue and cite.venue.lower() != "arxiv" else None
    item: dict[str, Any] = {"id": cite.key, "citation-key": cite.key,
                            "type": "article-journal" if journal else "article", "title": cite.meta.title}
    names = []
    for parts in author_parts(cite.meta):
        name = {"family": parts.family, "given": parts.given, "non-dropping-particle": parts.particle,
                "suffix": parts.suffix}
        names.append({k: v for k, v in name.items() if v})
    if names:
        item["author"] = names
    if cite.meta.year:
        item["issued"] = {"date-parts": [[cite.meta.year]]}
    if journal:
        item["container-title"] = journal
    if cite.arxiv_id:
        item |= {"number": f"arXiv:{cite.arxiv_id}", "publisher": "arXiv"}
    item |= {k: v for k, v in (("DOI", cite.doi), ("URL", cite.url), ("abstract", cite.abstract),
                                ("keyword", ", ".join(cite.meta.tags))) if v}
    return item


def export(kb: KnowledgeBase, note_ids: Sequence[str], fmt: Format) -> str:
    """The notes as one BibTeX file or one CSL-JSON array, in the order given; keys assigned where missing."""
    notes = assign_citekeys(kb, note_ids)
    cites = []
    for note_id in note_ids:
        note = notes[note_id]
        cites.append(Citation(note.meta.citekey or "", note.meta, _abstract(kb, note)))
    # Escaped for a terminal (kb.display): a control character a note holds is written out, never acted on.
    if fmt == "bibtex":
        return terminal_text("\n".join(bibtex_entry(c) for c in cites), block=True)
    return terminal_json([csl_item(c) for c in cites]) + "\n"


def selected_ids(kb: KnowledgeBase, ids: Sequence[str], tag: str | None) -> tuple[list[str], list[NoteError]]:
    """The notes an export names (the ids given, each checked; those with ``tag``; or every indexed note), and
    the notes that could not be read, which no export holds (the caller names them)."""
    report = kb.index()
    if ids:
        files = kb.note_files()
        for note_id in ids:
            kb.note_path(note_id, files=files)  # a NoteError naming the id and 'kb list' when there is none
        return list(dict.fromkeys(ids)), report.errors
    return [paper.id for paper in kb.list_papers(tag=tag)], report.errors
