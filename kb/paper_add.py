"""Adding a paper: what a PDF, a BibTeX file or a Zotero (CSL-JSON) export says about it, and writing the note.

Each reader returns a ``PaperRecord``: the metadata (title, authors with affiliations where known, year,
venue, ids, urls) and the source text (the abstract, or a PDF's full text with pages separated by a
form feed, ``\\f``, so grounding can tell which page a quote is on). ``add_paper`` writes the source
text under ``sources/`` beside the notes and a new note in the user's format that names it in
``source_file``. Online lookups (arXiv, Crossref) live in ``kb.paper_fetch``.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzers.files import write_unique
from kb import notes as notes_mod
from kb.core import KnowledgeBase
from kb.grounding import PAGE_BREAK  # between a PDF's pages in a stored source text (as pdftotext writes it)
from kb.notes import Note, NoteError


@dataclass
class PaperRecord:
    """What kb knows about a paper before its note exists."""

    title: str
    authors: list[tuple[str, str | None]] = field(default_factory=list)  # (name, affiliation)
    year: int | None = None
    venue: str | None = None
    arxiv_id: str | None = None
    doi: str | None = None
    paper_url: str | None = None
    pdf_url: str | None = None
    text: str = ""  # the source text stored beside the note (abstract, or full text with page breaks)

    @property
    def paper_id(self) -> str:
        """'arxiv:<id>' or 'doi:<doi>' when known, else a slug of the title."""
        if self.arxiv_id:
            return f"arxiv:{self.arxiv_id}"
        if self.doi:
            return f"doi:{self.doi}"
        return f"title:{notes_mod.slugify(self.title)}"

    def frontmatter(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The note's frontmatter in the user's field order (see the seed note)."""
        institutions = list(dict.fromkeys(a for _, a in self.authors if a))
        meta: dict[str, Any] = {
            "paper_id": self.paper_id,
            "title": self.title,
            "authors": [{"name": n, "affiliation": a or "Unknown"} for n, a in self.authors],
            "institutions": institutions,
            "publication": {"venue": self.venue, "year": self.year, "arxiv_id": self.arxiv_id, "doi": self.doi},
            "urls": {"paper_url": self.paper_url, "pdf_url": self.pdf_url, "code_url": None},
            "tags": [],
            "status": "inbox",
            "decision": "PENDING",
        }
        return {**meta, **(extra or {})}


class AddError(ValueError):
    """An input kb cannot add a paper from; the message says which and what to do instead."""


# -- readers -----------------------------------------------------------------------------------------

def read_pdf(path: Path) -> PaperRecord:
    """Full text of a PDF (pages separated by ``PAGE_BREAK``) and the title from its metadata or first line."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(path)
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
        info = reader.metadata
    except (PyPdfError, OSError, ValueError) as exc:
        raise AddError(f"{path}: not a readable PDF ({exc}); give the BibTeX entry or an arXiv id instead") from None
    if not any(pages):
        raise AddError(f"{path}: the PDF has no extractable text (a scan?); give the BibTeX entry or an arXiv id")
    first_line = next((line.strip() for line in pages[0].splitlines() if line.strip()), path.stem)
    title = str(info.title).strip() if info is not None and info.title else first_line
    listed = str(info.author) if info is not None and info.author else ""
    authors: list[tuple[str, str | None]] = [(a.strip(), None) for a in re.split(r";|\band\b|,", listed) if a.strip()]
    text = PAGE_BREAK.join(pages) + "\n"
    # Ids only from the first page (arXiv stamps it there): later pages cite other papers' ids.
    arxiv = re.search(r"arXiv:(\d{4}\.\d{4,5})", pages[0])
    doi = re.search(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;])", pages[0])
    return PaperRecord(title=title, authors=authors, arxiv_id=arxiv.group(1) if arxiv else None,
                       doi=doi.group(1) if doi else None, text=text)


def _bib_authors(value: str) -> list[tuple[str, str | None]]:
    """BibTeX 'Last, First and First Last' -> ['First Last', ...]."""
    names: list[tuple[str, str | None]] = []
    for part in re.split(r"\s+and\s+", value.replace("\n", " ")):
        part = part.strip().strip("{}")
        if "," in part:
            last, first = (p.strip() for p in part.split(",", 1))
            part = f"{first} {last}".strip()
        if part:
            names.append((part, None))
    return names


def read_bibtex(path: Path) -> list[PaperRecord]:
    """One record per BibTeX entry (title, authors, year, venue, DOI, arXiv eprint, URL, abstract)."""
    import bibtexparser

    try:
        database = bibtexparser.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise AddError(f"{path}: cannot read the BibTeX file ({exc}); save it as UTF-8") from None
    records = []
    for entry in database.entries:
        def get(key: str, e: dict[str, str] = entry) -> str | None:
            value = re.sub(r"[{}]", "", e.get(key, "")).strip()
            return re.sub(r"\s+", " ", value) or None

        title = get("title")
        if title is None:
            raise AddError(f"{path}: entry {entry.get('ID', '?')!r} has no title; add 'title = {{...}}'")
        eprint = get("eprint") if (get("archiveprefix") or "").lower() == "arxiv" or get("eprint") else None
        year = get("year")
        records.append(PaperRecord(
            title=title, authors=_bib_authors(entry.get("author", "")),
            year=int(year) if year and year.isdigit() else None,
            venue=get("journal") or get("booktitle") or ("arXiv" if eprint else None),
            arxiv_id=eprint, doi=get("doi"), paper_url=get("url"), text=(get("abstract") or "") + "\n"))
    if not records:
        raise AddError(f"{path}: no BibTeX entries found (expected '@article{{key, title = {{...}}, ...}}')")
    return records


def read_csl_json(path: Path) -> list[PaperRecord]:
    """One record per item of a CSL-JSON export (Zotero: File > Export Library > CSL JSON)."""
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise AddError(f"{path}: not a CSL-JSON export ({exc}); export from Zotero as 'CSL JSON'") from None
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        raise AddError(f"{path}: expected a list of CSL-JSON items")
    records = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not str(item.get("title") or "").strip():
            raise AddError(f"{path}: item {i} has no 'title'; expected CSL-JSON items with title and author")
        authors = []
        for a in item.get("author") or []:
            name = " ".join(filter(None, [a.get("given"), a.get("family")])) or a.get("literal")
            if name:
                affiliation = a.get("affiliation")
                if isinstance(affiliation, list):  # Crossref style: [{"name": ...}]
                    affiliation = "; ".join(x.get("name", "") for x in affiliation if isinstance(x, dict)) or None
                authors.append((str(name), affiliation))
        parts = (item.get("issued") or {}).get("date-parts") or [[None]]
        year = parts[0][0] if parts and parts[0] else None
        url = item.get("URL")
        arxiv = re.search(r"arxiv\.org/abs/(\d{4}\.\d{4,5})", url or "")
        records.append(PaperRecord(
            title=str(item["title"]).strip(), authors=authors, year=int(year) if year else None,
            venue=item.get("container-title") or ("arXiv" if arxiv else None),
            arxiv_id=arxiv.group(1) if arxiv else None, doi=item.get("DOI"), paper_url=url,
            text=str(item.get("abstract") or "") + "\n"))
    return records


def read_file(path: Path) -> list[PaperRecord]:
    """Records from a PDF, BibTeX or CSL-JSON file, by extension."""
    suffix = path.suffix.lower()
    if not path.is_file():
        raise AddError(f"{path}: no such file; give a PDF, a .bib file, a Zotero CSL-JSON export, "
                       "arxiv:ID or doi:DOI")
    if suffix == ".pdf":
        return [read_pdf(path)]
    if suffix in (".bib", ".bibtex"):
        return read_bibtex(path)
    if suffix == ".json":
        return read_csl_json(path)
    raise AddError(f"{path}: unknown kind of file {suffix!r}; give a .pdf, .bib or Zotero .json (CSL JSON)")


# -- writing the note --------------------------------------------------------------------------------

def _write_source(folder: Path, stem: str, text: str) -> Path:
    """Write the source text under a free name ``<stem>.txt`` (or ``<stem>-2.txt``, ...); never overwrites."""
    return write_unique(folder, stem, ".txt", text.encode("utf-8"))


def store_source_text(papers_dir: Path, title: str, text: str) -> str:
    """Write a source text (pasted or uploaded) under ``sources/`` beside the notes; its ``source_file`` value."""
    written = _write_source(papers_dir / "sources", notes_mod.slugify(title or "source"), text)
    return written.relative_to(papers_dir).as_posix()


def body_for(record: PaperRecord) -> str:
    """The new note's body, in the seed's layout (title, Metadata list, an empty summary to fill in)."""
    authors = ", ".join(n for n, _ in record.authors[:3]) + (" et al." if len(record.authors) > 3 else "")
    venue = " ".join(str(v) for v in (record.venue, record.year) if v)
    return (f"# {record.title}\n\n## Metadata\n- **Paper ID**: {record.paper_id}\n- **Authors**: {authors}\n"
            f"- **Venue**: {venue}\n\n## 一句话总结\n\n")


def add_paper(kb: KnowledgeBase, record: PaperRecord, extra: dict[str, Any] | None = None) -> Note:
    """Write the record's source text under ``sources/`` and a new note naming it; validated first.

    Nothing is left behind when the note is refused (e.g. its paper_id is already used).
    """
    meta = record.frontmatter(extra)
    stem = notes_mod.slugify(record.title)
    source = _write_source(kb.papers_dir / "sources", stem, record.text) if record.text.strip() else None
    if source is not None:
        meta["source_file"] = source.relative_to(kb.papers_dir).as_posix()
    try:
        return kb.new_note(meta, body_for(record))
    except (NoteError, OSError):
        if source is not None:
            with contextlib.suppress(OSError):
                source.unlink()
        raise
