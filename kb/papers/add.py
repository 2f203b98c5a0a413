"""Adding a paper: what a PDF, a BibTeX file or a Zotero (CSL-JSON) export says about it, and writing the
note.

Each reader returns a ``PaperRecord``: the metadata (title, authors with affiliations where known, year,
venue, ids, urls) and the source text (the abstract, or a PDF's full text with pages separated by a
form feed, ``\\f``, so grounding can tell which page a quote is on). ``add_paper`` writes the source
text under ``sources/`` beside the notes and a new note in the user's format that names it in
``source_file``. Online lookups (arXiv, Crossref) live in ``kb.papers.lookups``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzers.files import write_unique
from kb.core import KnowledgeBase
from kb.notes import files as notes_mod
from kb.notes.files import Note, NoteError

# between a PDF's pages in a stored source text (as pdftotext writes it)
from kb.notes.grounding import PAGE_BREAK
from kb.papers import identifiers
from kb.papers.bibtex import NameParts, decode_text, note_family, read_names
from kb.papers.cite import citekeys_in_use
from kb.papers.pdf_page import LearnedReaders
from schemas.note import CITEKEY_PATTERN, FieldSource, PaperNote

# C0 controls, DEL, C1 controls and the bidirectional overrides; a source text keeps its newlines, tabs and
# page breaks (form feeds).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_IN_TEXT = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _one_line(value: str) -> str:
    """A field of one line: control characters become spaces, runs of spaces one space."""
    return " ".join(_CONTROL.sub(" ", value).split())


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
    origin: tuple[Path, str] | None = None  # the file and the entry in it the record was read from
    # Fields kb left empty (or, for the title, filled with the file's name) because it was not sure, and why.
    unread: dict[str, str] = field(default_factory=dict)
    abstract: str | None = None  # written into a new note's body under its own heading
    # where the fields came from, unless field_sources says otherwise
    source: FieldSource = FieldSource.LAYOUT
    field_sources: dict[str, FieldSource] = field(default_factory=dict)  # per field, where it differs
    # how a field was read where no rule of its source read it ('layout (learned year ranker, p=0.97)')
    read_by: dict[str, str] = field(default_factory=dict)
    # one line each for the person adding (a dropped DOI, ...)
    notices: list[str] = field(default_factory=list)
    # Per author, the family name when the printed name alone does not tell it (kb.papers.bibtex.note_family).
    families: list[str | None] = field(default_factory=list)
    # the key the entry had in its file (BibTeX key, CSL id), kept when valid and free
    citekey: str | None = None
    # the entry's keywords (what kb export writes a note's tags as)
    tags: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # What a BibTeX entry, a Zotero export or a PDF's metadata holds is data from elsewhere: NUL and other
        # control characters (and bidirectional overrides) never reach a note or its source text.
        for name in ("title", "venue", "arxiv_id", "doi", "paper_url", "pdf_url", "abstract"):
            value = getattr(self, name)
            if isinstance(value, str):
                setattr(self, name, _one_line(value) if name == "title" else (_one_line(value) or None))
        self.authors = [(_one_line(n), _one_line(a) if a else a) for n, a in self.authors]
        self.families = [_one_line(f) if f else None for f in self.families]
        self.tags = list(dict.fromkeys(t for t in (_one_line(t) for t in self.tags) if t))
        if self.citekey is not None and not re.fullmatch(CITEKEY_PATTERN, self.citekey):
            self.citekey = None  # a Zotero item URL, a key with spaces: kb proposes one at export instead
        self.text = _CONTROL_IN_TEXT.sub("", self.text)
        if self.doi is not None:
            self.doi = identifiers.normalize_doi(self.doi)
            if (reason := identifiers.placeholder_doi(self.doi)) is not None:
                # A template's DOI names no paper: stored, it would give every such paper one paper_id.
                self.notices.append(f"DOI {self.doi} left out: {reason}")
                self.doi = None

    def sources(self) -> dict[str, FieldSource]:
        """Where each field that has a value came from (the note's ``field_sources``)."""
        values = {
            "title": self.title,
            "authors": self.authors,
            "affiliations": any(a for _, a in self.authors),
            "year": self.year,
            "venue": self.venue,
            "doi": self.doi,
            "arxiv_id": self.arxiv_id,
            "abstract": self.abstract,
        }
        return {name: self.field_sources.get(name, self.source) for name, value in values.items() if value}

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
            "authors": [
                {"name": n, "affiliation": a or "Unknown", **({"family": f} if f else {})}
                for (n, a), f in zip(
                    self.authors, [*self.families, *[None] * len(self.authors)], strict=False
                )
            ],
            "institutions": institutions,
            "publication": {
                "venue": self.venue,
                "year": self.year,
                "arxiv_id": self.arxiv_id,
                "doi": self.doi,
            },
            "urls": {"paper_url": self.paper_url, "pdf_url": self.pdf_url, "code_url": None},
            "tags": list(self.tags),
            "status": "inbox",
            "decision": "PENDING",
            "field_sources": {name: source.value for name, source in self.sources().items()},
            **({"citekey": self.citekey} if self.citekey else {}),
        }
        extra = dict(extra or {})
        meta["tags"] = list(dict.fromkeys([*self.tags, *extra.pop("tags", [])]))  # the entry's and the user's
        return {**meta, **extra}


def _surname(name: str) -> str:
    words = re.findall(
        r"\w+", unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().casefold()
    )
    return words[-1] if words else ""


def affiliations_by_author(names: list[str], other: list[tuple[str, str | None]]) -> list[str | None]:
    """For each of ``names``, the affiliation ``other`` (another reading's authors) gives the author of the
    same surname, else None: how one reading of a paper takes the affiliations another placed."""
    by_surname = {_surname(n): a for n, a in other if a}
    return [by_surname.get(_surname(name)) for name in names]


class AddError(ValueError):
    """An input kb cannot add a paper from; the message says which and what to do instead."""


# -- readers -----------------------------------------------------------------------------------------

def read_pdf(path: Path, learned: LearnedReaders | None = None) -> PaperRecord:
    """Full text of a PDF (pages separated by ``PAGE_BREAK``, ligatures resolved) and what its layout says:
    title, authors with affiliations, venue, year, DOI, arXiv id (``kb.papers.pdf_layout``), with the learned
    readers ``learned`` allows, none by default (the year ranker where the rules leave the year empty,
    ``kb.papers.pdf_year``; the line labeller's abstract, ``kb.papers.pdf_roles``).
    """
    from kb.papers.pdf_child import read_article_bounded

    try:
        # in a child process: a hostile PDF costs one line, not kb
        article = read_article_bounded(path, learned=learned)
    except (OSError, ValueError) as exc:
        raise AddError(
            f"{path}: not a readable PDF ({exc}); give the BibTeX entry or an arXiv id instead"
        ) from None
    if not any(article.pages):
        raise AddError(
            f"{path}: the PDF has no extractable text (a scan?); give the BibTeX entry or an arXiv id"
        )
    unread = dict(article.reasons)
    if article.title is None:  # a note needs a title: the file's name stands in, and says so
        unread["title"] = f"{unread.get('title', 'no title found')}; the file's name stands in"
    return PaperRecord(
        title=article.title or path.stem,
        authors=article.authors,
        year=article.year,
        venue=article.venue,
        arxiv_id=article.arxiv_id,
        doi=article.doi,
        abstract=article.abstract,
        text=PAGE_BREAK.join(article.pages) + "\n",
        unread=unread,
        source=FieldSource.LAYOUT,
        field_sources={name: FieldSource.LAYOUT_LEARNED for name in article.read_by},
        read_by=dict(article.read_by),
    )


def unruled_notices(record: PaperRecord) -> list[str]:
    """One line per field no rule read (the learned year ranker's year) that the record still takes from the
    learned model, to be checked; a field an online record replaced is not told."""
    sources = record.sources()
    return [f"{name} {getattr(record, name)} read by the {how}: no rule read it; check it"
            for name, how in record.read_by.items() if sources.get(name) == FieldSource.LAYOUT_LEARNED]


def _names(parts: list[NameParts]) -> tuple[list[tuple[str, str | None]], list[str | None]]:
    """Names in their parts -> the record's (printed name, no affiliation) and family names where needed."""
    return [(p.printed, None) for p in parts], [note_family(p) for p in parts]


# After @string macros are expanded: a field is at most an abstract (a few thousand characters), and a file at
# most a few times its own length (journal names, months). A file of doubling macros expands past both at
# once.
MAX_BIB_FIELD_CHARS = 100_000
MAX_BIB_EXPANSION = 16  # times the file's length, and at least MAX_BIB_FIELD_CHARS * 10 in all


def _expanded_fields(path: Path, text: str) -> list[dict[str, str]]:
    """Each entry's fields with their ``@string`` macros expanded, after checking what the expansion would
    cost without doing it: a field over ``MAX_BIB_FIELD_CHARS``, a file over ``MAX_BIB_EXPANSION`` times its
    length, a macro that refers to itself or one never defined is refused with one line naming the entry."""
    from bibtexparser.bibdatabase import as_text

    database = _bibtex_database(path, text)
    _check_expanded_lengths(path, text, database)
    return [{key: as_text(value) for key, value in entry.items()} for entry in database.entries]


def _bibtex_database(path: Path, text: str) -> Any:
    """The parsed file, its ``@string`` macros kept as references; unreadable BibTeX is one line."""
    import bibtexparser
    from bibtexparser.bparser import BibTexParser

    try:  # macros kept as references (interpolate_strings=False): expanding them here could exhaust memory
        return bibtexparser.loads(text, BibTexParser(interpolate_strings=False, common_strings=True))
    except Exception as exc:  # noqa: BLE001 - the parser's errors on malformed input have no common base
        raise AddError(f"{path}: not a readable BibTeX file ({type(exc).__name__}: {exc}); check the entry "
                       "syntax, e.g. '@article{key, title = {...}}'") from None


def _check_expanded_lengths(path: Path, text: str, database: Any) -> None:
    """Refuse a field whose macros expand it past ``MAX_BIB_FIELD_CHARS``, or a file they expand past
    ``MAX_BIB_EXPANSION`` times its length, naming the first entry and field that does."""
    length_of = _expanded_length(path, database)
    file_cap = max(MAX_BIB_EXPANSION * len(text), 10 * MAX_BIB_FIELD_CHARS)
    total = 0
    for entry in database.entries:
        for key, value in entry.items():
            where = f"entry {entry.get('ID', '?')!r}, field {key!r}"
            try:
                length = length_of(value, where)
            except RecursionError:
                raise AddError(
                    f"{path}: {where}: its @string macros nest too deeply; write the value out"
                ) from None
            total += length
            if length > MAX_BIB_FIELD_CHARS:
                raise AddError(
                    f"{path}: {where}: its @string macros expand it to {length:,} characters, over "
                    f"the {MAX_BIB_FIELD_CHARS:,} kb accepts; write the value out"
                )
            if total > file_cap:
                raise AddError(
                    f"{path}: {where}: @string macros expand the file past {file_cap:,} characters "
                    f"({MAX_BIB_EXPANSION} times its length); write the values out"
                )


def _expanded_length(path: Path, database: Any) -> Callable[[Any, str], int]:
    """A function giving the length a field value expands to, without expanding it: each macro's length is
    computed once; a macro that refers to itself, or one the file never defines, is refused naming
    ``where``."""
    from bibtexparser.bibdatabase import BibDataString, BibDataStringExpression

    sizes: dict[str, int] = {}

    def size(value: Any, where: str, open_names: tuple[str, ...] = ()) -> int:
        if isinstance(value, BibDataStringExpression):
            return sum(size(part, where, open_names) for part in value.expr)
        if not isinstance(value, BibDataString):
            return len(str(value))
        if value.name not in sizes:
            if value.name in open_names:
                raise AddError(f"{path}: {where}: the @string macro {value.name!r} refers to itself; "
                               "write the value out")
            if value.name not in database.strings:
                raise AddError(
                    f"{path}: {where}: uses the @string macro {value.name!r}, which the file never "
                    "defines; define it or write the value in braces"
                )
            sizes[value.name] = size(database.strings[value.name], where, (*open_names, value.name))
        return sizes[value.name]

    return size


def read_bibtex(path: Path) -> list[PaperRecord]:
    """One record per BibTeX entry (title, authors, year, venue, DOI, arXiv eprint, URL, abstract)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AddError(f"{path}: cannot read the BibTeX file ({exc}); save it as UTF-8") from None
    records = []
    for entry in _expanded_fields(path, text):
        def get(key: str, e: dict[str, str] = entry) -> str | None:
            return decode_text(e.get(key, "")) or None

        # an identifier or URL: braces only go
        def verbatim(key: str, e: dict[str, str] = entry) -> str | None:
            return re.sub(r"[{}\s]", "", e.get(key, "")) or None

        title = get("title")
        if title is None:
            raise AddError(f"{path}: entry {entry.get('ID', '?')!r} has no title; add 'title = {{...}}'")
        eprint = (
            verbatim("eprint") if (get("archiveprefix") or "").lower() == "arxiv" or get("eprint") else None
        )
        year = get("year")
        authors, families = _names(read_names(entry.get("author", "")))
        records.append(
            PaperRecord(
                title=title,
                authors=authors,
                families=families,
                year=int(year) if year and re.fullmatch(r"[0-9]{1,9}", year) else None,
                venue=get("journal") or get("booktitle") or ("arXiv" if eprint else None),
                arxiv_id=eprint,
                doi=verbatim("doi"),
                paper_url=verbatim("url"),
                text=(get("abstract") or "") + "\n",
                abstract=get("abstract"),
                origin=(path, f"entry {entry.get('ID', '?')!r}"),
                source=FieldSource.BIBTEX,
                citekey=entry.get("ID"),
                tags=re.split(r"\s*[,;]\s*", get("keywords") or ""),
            )
        )
    if not records:
        raise AddError(f"{path}: no BibTeX entries found (expected '@article{{key, title = {{...}}, ...}}')")
    return records


def _csl_text(value: Any) -> str | None:
    """A CSL-JSON text value (a string, or a number such as a year), stripped; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    return str(value).strip() or None


def _csl_year(issued: Any) -> int | None:
    """The year of a CSL date ({"date-parts": [[2023, 3, 17]]}); None when it gives none kb can read."""
    parts = issued.get("date-parts") if isinstance(issued, dict) else None
    first = (
        parts[0] if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0] else [None]
    )
    year = _csl_text(first[0])
    return int(year) if year and re.fullmatch(r"[0-9]{1,9}", year) else None


def _csl_record(path: Path, i: int, item: Any) -> PaperRecord:
    """One CSL-JSON item as a record; an item that is not shaped as Zotero writes them is one line naming
    it."""
    redo = "export from Zotero as 'CSL JSON' (File > Export Library)"
    if not isinstance(item, dict) or not _csl_text(item.get("title")):
        raise AddError(
            f"{path}: item {i} has no 'title'; expected CSL-JSON items with title and author: {redo}"
        )
    names = item.get("author") or []
    if not isinstance(names, list) or not all(isinstance(a, dict) for a in names):
        raise AddError(
            f'{path}: item {i}: \'author\' is not a list of names ({{"family": ..., "given": ...}}); {redo}'
        )
    authors, families = [], []
    for a in names:
        parts = NameParts(
            *(_csl_text(a.get(key)) or "" for key in ("given", "non-dropping-particle", "family", "suffix"))
        )
        # 'de' in 'Jean de La Fontaine', as CSL splits it
        if particle := _csl_text(a.get("dropping-particle")):
            parts = NameParts(parts.given, f"{particle} {parts.particle}".strip(), parts.family, parts.suffix)
        name = parts.printed if parts.family else _csl_text(a.get("literal")) or parts.given
        affiliation = a.get("affiliation")
        if isinstance(affiliation, list):  # Crossref style: [{"name": ...}]
            affiliation = "; ".join(filter(None, (_csl_text(x.get("name")) for x in affiliation
                                                  if isinstance(x, dict)))) or None
        if name:
            authors.append((name, _csl_text(affiliation)))
            families.append(note_family(parts) if parts.family else None)
    url = _csl_text(item.get("URL"))
    arxiv = re.search(r"arxiv\.org/abs/(\d{4}\.\d{4,5})", url or "") or \
        re.fullmatch(r"arXiv:(\d{4}\.\d{4,5}(?:v\d+)?)", _csl_text(item.get("number")) or "")
    key = _csl_text(item.get("citation-key")) or _csl_text(item.get("id"))
    return PaperRecord(
        title=str(_csl_text(item["title"])),
        authors=authors,
        families=families,
        year=_csl_year(item.get("issued")),
        venue=_csl_text(item.get("container-title")) or ("arXiv" if arxiv else None),
        arxiv_id=arxiv.group(1) if arxiv else None,
        doi=_csl_text(item.get("DOI")),
        paper_url=url,
        text=(_csl_text(item.get("abstract")) or "") + "\n",
        abstract=_csl_text(item.get("abstract")),
        origin=(path, f"item {i}"),
        source=FieldSource.ZOTERO,
        citekey=key,
        tags=re.split(r"\s*[,;]\s*", _csl_text(item.get("keyword")) or ""),
    )


def read_csl_json(path: Path) -> list[PaperRecord]:
    """One record per item of a CSL-JSON export (Zotero: File > Export Library > CSL JSON)."""
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise AddError(f"{path}: not a CSL-JSON export ({exc}); export from Zotero as 'CSL JSON'") from None
    except RecursionError:
        raise AddError(f"{path}: the JSON nests too deeply to be a CSL-JSON export; export from Zotero as "
                       "'CSL JSON'") from None
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        raise AddError(f"{path}: expected a list of CSL-JSON items; export from Zotero as 'CSL JSON'")
    return [_csl_record(path, i, item) for i, item in enumerate(items)]


def read_file(path: Path, learned: LearnedReaders | None = None) -> list[PaperRecord]:
    """Records from a PDF, BibTeX or CSL-JSON file, by extension (``learned``: see ``read_pdf``)."""
    suffix = path.suffix.lower()
    if not path.is_file():
        raise AddError(f"{path}: no such file; give a PDF, a .bib file, a Zotero CSL-JSON export, "
                       "arxiv:ID or doi:DOI")
    if suffix == ".pdf":
        return [read_pdf(path, learned)]
    if suffix in (".bib", ".bibtex"):
        return read_bibtex(path)
    if suffix == ".json":
        return read_csl_json(path)
    raise AddError(f"{path}: unknown kind of file {suffix!r}; give a .pdf, .bib or Zotero .json (CSL JSON)")


# -- writing the note --------------------------------------------------------------------------------

def _write_source(folder: Path, stem: str, text: str) -> Path:
    """Write the source text under a free name ``<stem>.txt`` (or ``<stem>-2.txt``, ...); never overwrites.

    ``sources/`` must be a real folder: a shared vault can carry it as a symlink to anywhere, and kb writes
    nothing outside the notes folder (the file itself is created by a hard link, which follows no link).
    """
    with contextlib.suppress(FileExistsError):
        folder.mkdir(parents=True)
    if not stat.S_ISDIR(mode := os.lstat(folder).st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a folder"
        raise NoteError(folder, f"is {kind}; kb writes source texts only into a real folder inside the notes "
                        "folder: replace it with a folder and add again (nothing was written)")
    return write_unique(folder, stem, ".txt", text.encode("utf-8"))


def store_source_text(papers_dir: Path, title: str, text: str) -> str:
    """Write a source text (pasted or uploaded) under ``sources/`` beside the notes; its ``source_file``
    value."""
    written = _write_source(papers_dir / "sources", notes_mod.slugify(title or "source"), text)
    return written.relative_to(papers_dir).as_posix()


def body_for(record: PaperRecord, paper_id: str | None = None) -> str:
    """The new note's body, in the seed's layout: title, Metadata list, the abstract under its own heading
    (when kb knows it), and an empty summary to fill in. Written only when kb creates the note."""
    authors = ", ".join(n for n, _ in record.authors[:3]) + (" et al." if len(record.authors) > 3 else "")
    venue = " ".join(str(v) for v in (record.venue, record.year) if v)
    abstract = f"## Abstract\n\n{record.abstract}\n\n" if record.abstract else ""
    return (f"# {record.title}\n\n## Metadata\n- **Paper ID**: {paper_id or record.paper_id}\n"
            f"- **Authors**: {authors}\n- **Venue**: {venue}\n\n{abstract}## 一句话总结\n\n")


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", unicodedata.normalize("NFKD", text).casefold())


def same_paper(record: PaperRecord, existing: PaperNote) -> bool:
    """Whether the note ``existing`` (which has the record's ``paper_id``) holds the record's paper.

    Identifiers decide where both have them (a DOI, an arXiv id); without, the title's words and the first
    author's surname must agree: two papers whose template DOI was dropped share a title slug only by chance.
    """
    publication = existing.publication
    doi, arxiv_id = (publication.doi, publication.arxiv_id) if publication else (None, None)
    if record.doi and doi:
        return identifiers.same_doi(record.doi, doi)
    if record.arxiv_id and arxiv_id:
        return re.sub(r"v\d+$", "", record.arxiv_id) == re.sub(r"v\d+$", "", arxiv_id)
    if _words(record.title) != _words(existing.title):
        return False
    first = [_words(name)[-1:] for name, _ in record.authors[:1]]
    theirs = [_words(author.name)[-1:] for author in existing.authors[:1]]
    return not first or not theirs or first == theirs


def add_paper(kb: KnowledgeBase, record: PaperRecord, extra: dict[str, Any] | None = None) -> Note:
    """Write the record's source text under ``sources/`` and a new note naming it; validated first.

    A paper whose ``paper_id`` another note uses for a different paper gets a distinct id ('<id>-2'); the
    same paper again is refused. Nothing is left behind when the note is refused.
    """
    meta = record.frontmatter(extra)
    if record.citekey and record.citekey.casefold() in citekeys_in_use(kb):
        del meta["citekey"]  # the file's key is another note's: this note gets its own at its first export
    stem = notes_mod.slugify(record.title)
    source = _write_source(kb.papers_dir / "sources", stem, record.text) if record.text.strip() else None
    if source is not None:
        meta["source_file"] = source.relative_to(kb.papers_dir).as_posix()
    try:
        return kb.new_note(meta, lambda paper_id: body_for(record, paper_id),
                           same_paper=lambda existing: same_paper(record, existing))
    except (NoteError, OSError) as exc:
        if source is not None:
            with contextlib.suppress(OSError):
                source.unlink()
        if isinstance(exc, NoteError) and record.origin is not None and not exc.path.exists():
            # Refused before it had a file: name where the data came from, which is where to fix it.
            file, entry = record.origin
            raise NoteError(
                file, f"{entry}: {exc.message}; fix it there and add again", field=exc.field
            ) from None
        raise
