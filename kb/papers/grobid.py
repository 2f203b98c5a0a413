"""GROBID as the reader of a PDF's header, where the person running kb points it at one (``grobid_url``).

kb's layout rules read a PDF's title, authors, affiliations, year, venue and abstract from how page 1 is set;
GROBID (https://github.com/kermitt2/grobid, Apache-2.0; the ``lfoppiano/grobid`` Docker image) reads them with
a layout model trained across publishers. With ``grobid_url`` set, ``read_header`` uploads the PDF to
``{grobid_url}/api/processHeaderDocument`` (multipart, field ``input``; ``consolidateHeader=0``: GROBID does
not ask Crossref itself, kb's identifier lookups do) and takes GROBID's fields over the layout's, the layout
filling what GROBID leaves empty; the identifier lookups (``kb.papers.lookups``) then come first over both.
Each field says where it came from (``grobid``, ``layout``). The request goes through kb's one HTTP client
(``kb.papers.online``: User-Agent, deadline, the wait after GROBID's 503 'all threads busy', the cache); the
answer is bounded (``MAX_ANSWER_BYTES``) and parsed without a DOCTYPE (no entities, no external anything).
Offline, with lookups off, or when GROBID is down or answers something that is not its TEI: one line saying
so, and the layout alone: ``kb add`` never fails because GROBID does.

The PDF is uploaded to that service: it is a setting of the person running kb (``KB_GROBID_URL``), never a
note's.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from kb.papers import identifiers
from kb.papers.add import AddError, PaperRecord, affiliations_by_author
from kb.papers.bibtex import NameParts, note_family
from kb.papers.online import LookupUnreachable, Upload, fetch
from kb.settings import Settings
from schemas.note import FieldSource

TEI = {"tei": "http://www.tei-c.org/ns/1.0"}
#: Largest answer kb reads: a header's TEI is a few kilobytes, a full text's a few hundred.
MAX_ANSWER_BYTES = 5_000_000
#: Seconds to wait after a 503 without 'Retry-After' (GROBID's documentation suggests 2 for this service).
BUSY_WAIT = 2.0
_HINT = "unset KB_GROBID_URL to read headers with kb's layout rules alone"
_FIELDS = ("title", "authors", "affiliations", "year", "venue", "doi", "arxiv_id", "abstract")


def _text(element: ET.Element | None) -> str:
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def _paragraph(paragraph: ET.Element) -> str:
    """A paragraph's text; its sentences (``<s>``, where GROBID segments them) one space apart."""
    sentences = paragraph.findall("tei:s", TEI)
    return " ".join(_text(s) for s in sentences) if sentences else _text(paragraph)


def _affiliation(author: ET.Element) -> str | None:
    """The author's first affiliation as kb's notes hold one, the institution ('Eberhard Karls University'),
    else its laboratory or department; no address (as the layout rules and the user's own notes)."""
    affiliation = author.find("tei:affiliation", TEI)
    if affiliation is None:
        return None
    orgs = [(org.get("type"), _text(org)) for org in affiliation.findall("tei:orgName", TEI)]
    for kind in ("institution", "laboratory", "department", None):
        names = [name for k, name in orgs if name and (kind is None or k == kind)]
        if names:
            return ", ".join(dict.fromkeys(names))
    return None


def _authors(analytic: ET.Element | None) -> tuple[list[tuple[str, str | None]], list[str | None]]:
    """Each author with a name (forenames, surname), in order, with their first affiliation, and the family
    name where the printed name alone would not tell it ('De Marchis'); an 'author' without a name is left
    out (GROBID sets some affiliations as authors of their own)."""
    authors: list[tuple[str, str | None]] = []
    families: list[str | None] = []
    for author in analytic.findall("tei:author", TEI) if analytic is not None else []:
        person = author.find("tei:persName", TEI)
        if person is None:
            continue
        given = " ".join(n for n in (_text(f) for f in person.findall("tei:forename", TEI)) if n)
        surname, suffix = (_text(person.find(f"tei:{part}", TEI)) for part in ("surname", "genName"))
        parts = NameParts(given, "", surname, suffix)
        if parts.printed:
            authors.append((parts.printed, _affiliation(author)))
            families.append(note_family(parts) if parts.family else None)
    return authors, families


def _year(header: ET.Element, bibl: ET.Element) -> int | None:
    """The year of the publication date GROBID read (the imprint's, else the publication statement's)."""
    for date in (bibl.find("tei:monogr/tei:imprint/tei:date[@type='published']", TEI),
                 header.find("tei:fileDesc/tei:publicationStmt/tei:date[@type='published']", TEI)):
        found = re.match(r"(\d{4})", (date.get("when") or "") if date is not None else "")
        if found and 1900 <= int(found.group(1)) <= 2100:
            return int(found.group(1))
    return None


def _ids(bibl: ET.Element, notices: list[str]) -> tuple[str | None, str | None]:
    """The DOI (not a data archive's) and the arXiv id (without version) GROBID read."""
    doi = identifiers.normalize_doi(_text(bibl.find("tei:idno[@type='DOI']", TEI))) or None
    if doi and identifiers.archive_doi(doi):
        notices.append(f"DOI {doi} GROBID read left out: it names a data or software archive's record")
        doi = None
    printed = _text(bibl.find("tei:idno[@type='arXiv']", TEI))  # 'arXiv:1912.10667v1[cs.CV]'
    shaped = identifiers.ARXIV_SHAPE.match(printed)
    found = identifiers.arxiv_ids_in(printed) or ([shaped.group(1)] if shaped else [])
    return doi, found[0] if found else None


def parse_tei(data: bytes) -> PaperRecord:
    """The header GROBID read, from its TEI (a ``processHeaderDocument`` answer, or the header of a full
    text's): title, authors with affiliations, year, venue, DOI, arXiv id, abstract; ``AddError`` of one line
    for an answer that is not GROBID's TEI."""
    if not data.strip():
        raise AddError("GROBID found no header in the PDF (an empty answer)")
    if re.search(rb"<!(?:DOCTYPE|ENTITY)", data[:4096]):
        raise AddError("GROBID's answer declares a DOCTYPE (GROBID's TEI has none); kb does not read it")
    try:
        root = ET.fromstring(data)  # no DOCTYPE (above): no entities to expand, nothing to fetch
    except ET.ParseError as exc:
        raise AddError(f"GROBID answered something that is not XML ({exc})") from None
    header = root.find("tei:teiHeader", TEI)
    bibl = header.find("tei:fileDesc/tei:sourceDesc/tei:biblStruct", TEI) if header is not None else None
    if root.tag != f"{{{TEI['tei']}}}TEI" or header is None or bibl is None:
        raise AddError(f"GROBID answered XML that is not its TEI header (root {root.tag!r})")
    titles = [header.find("tei:fileDesc/tei:titleStmt/tei:title", TEI),
              bibl.find("tei:analytic/tei:title", TEI)]
    venues = [t for t in bibl.findall("tei:monogr/tei:title", TEI) if t.get("type") != "abbrev"]
    abstract = header.find("tei:profileDesc/tei:abstract", TEI)
    paragraphs = [_paragraph(p) for p in abstract.iter(f"{{{TEI['tei']}}}p")] if abstract is not None else []
    authors, families = _authors(bibl.find("tei:analytic", TEI))
    notices: list[str] = []
    doi, arxiv_id = _ids(bibl, notices)
    return PaperRecord(
        title=next((t for t in map(_text, titles) if t), ""), authors=authors, families=families,
        year=_year(header, bibl), venue=next((v for v in map(_text, venues) if v), None), doi=doi,
        arxiv_id=arxiv_id, abstract=" ".join(p for p in paragraphs if p) or _text(abstract) or None,
        source=FieldSource.GROBID, notices=notices)


def ask_grobid(pdf: Path, settings: Settings) -> PaperRecord:
    """The header of ``pdf`` as the GROBID service at ``settings.grobid_url`` reads it."""
    url = f"{str(settings.grobid_url).rstrip('/')}/api/processHeaderDocument"
    upload = Upload("input", pdf.name, pdf.read_bytes(), form=(("consolidateHeader", "0"),))
    return parse_tei(fetch(url, "GROBID", settings, "application/xml", upload=upload, hint=_HINT,
                           max_bytes=MAX_ANSWER_BYTES, busy_wait=BUSY_WAIT, check=parse_tei))


def _why(exc: Exception) -> str:
    """The failure without its advice: the text before the first ': ' or '; ' outside parentheses."""
    if isinstance(exc, OSError):
        return f"the PDF could not be read again ({exc.strerror or exc})"
    text, depth = str(exc), 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and text[i:i + 2] in (": ", "; "):
            return text[:i]
    return text


def read_header(layout: PaperRecord, pdf: Path, settings: Settings) -> PaperRecord:
    """The PDF's record with GROBID's header fields over the layout's where ``grobid_url`` is set (see the
    module's docstring); else, or when GROBID is not asked or fails, ``layout`` as it is, with one line in
    its notices saying why."""
    if not settings.grobid_url:
        return layout
    if settings.offline or not settings.lookups:
        why = "offline (KB_OFFLINE=1)" if settings.offline else "lookups are off (KB_LOOKUPS=false)"
        layout.notices.append(f"GROBID not asked: {why}; the header is the PDF layout's")
        return layout
    try:
        header = ask_grobid(pdf, settings)
    except (LookupUnreachable, AddError, OSError) as exc:
        layout.notices.append(f"GROBID did not read the header ({_why(exc)}); the fields are the PDF "
                              "layout's")
        return layout
    return merged(layout, header)


def merged(layout: PaperRecord, header: PaperRecord) -> PaperRecord:
    """GROBID's ``header`` over the ``layout`` record: each field GROBID read is GROBID's, the rest the
    layout's; affiliations from whichever of the two places more authors (ties: GROBID's), by surname."""
    names = [n for n, _ in header.authors] or [n for n, _ in layout.authors]
    grobid_places = [a for _, a in header.authors] if header.authors else [None] * len(names)
    candidates = [(FieldSource.GROBID, grobid_places),
                  (FieldSource.LAYOUT, affiliations_by_author(names, layout.authors))]
    place_source, places = max(candidates, key=lambda c: sum(1 for a in c[1] if a))
    ours = {name: bool(value) for name, value in {
        "title": header.title, "authors": header.authors, "affiliations": place_source is FieldSource.GROBID
        and any(places), "year": header.year, "venue": header.venue, "doi": header.doi,
        "arxiv_id": header.arxiv_id, "abstract": header.abstract}.items()}
    before = layout.sources()
    sources = {name: FieldSource.GROBID if ours[name] else before.get(name, layout.source)
               for name in _FIELDS}
    return PaperRecord(
        title=header.title or layout.title, authors=list(zip(names, places, strict=True)),
        families=header.families if header.authors else list(layout.families),
        year=header.year or layout.year,
        venue=header.venue or layout.venue, doi=header.doi or layout.doi,
        arxiv_id=header.arxiv_id or layout.arxiv_id, abstract=header.abstract or layout.abstract,
        paper_url=layout.paper_url, pdf_url=layout.pdf_url, text=layout.text, origin=layout.origin,
        unread={k: v for k, v in layout.unread.items() if not ours.get(k)}, source=layout.source,
        field_sources=sources, notices=[*layout.notices, *header.notices], citekey=layout.citekey,
        tags=list(layout.tags))
