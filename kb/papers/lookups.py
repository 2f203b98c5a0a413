"""Looking a paper up online: arXiv's Atom API for ``arxiv:ID``, Crossref's REST API for ``doi:DOI``, and,
for a PDF, the identifiers it prints (``complete_from_identifiers``): the record's title, authors, year, venue
and DOI, with OpenAlex for the authors' institutions and the PDF's layout for what no record holds.

The endpoints are settings (``arxiv_api_url``, ``crossref_api_url``, ``openalex_api_url``) so a mirror or a
test server can stand in. Requests are polite: a ``User-Agent`` naming kb and the ``contact_email`` setting
(Crossref's and OpenAlex's 'polite pool'), one more try after a 429/503 whose ``Retry-After`` is within
``lookup_max_wait``, answers cached under ``<KB home>/cache/lookups`` (a paper's record is asked for once),
and a short deadline per request (``lookup_timeout``), all in ``kb.papers.online``: offline, kb says so in
one line and how to go on without the network (give the PDF or a BibTeX entry).
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from kb.papers import grobid, identifiers
from kb.papers.add import AddError, PaperRecord, affiliations_by_author, read_file, unruled_notices
from kb.papers.online import OFFLINE_HINT, LookupUnreachable, fetch
from kb.papers.pdf_page import LearnedReaders
from kb.settings import Settings
from schemas.note import FieldSource

_ATOM = {"atom": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}
_ARXIV_ID = identifiers.ARXIV_SHAPE


def _clean(text: str | None) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def parse_arxiv_atom(data: bytes, arxiv_id: str) -> PaperRecord:
    """The record of the one entry of an arXiv API answer (title, authors, affiliations, abstract, DOI)."""
    try:
        feed = ET.fromstring(data)
    except ET.ParseError as exc:
        raise AddError(
            f"arXiv answered something that is not an Atom feed ({exc}); {OFFLINE_HINT}"
        ) from None
    entry = feed.find("atom:entry", _ATOM)
    title = _clean(entry.findtext("atom:title", "", _ATOM)) if entry is not None else ""
    if entry is None or title == "Error" or not entry.findtext("atom:id", "", _ATOM):
        raise AddError(f"arXiv has no paper {arxiv_id!r}; check the id (e.g. arxiv:2602.21750)")
    authors = [
        (
            _clean(a.findtext("atom:name", "", _ATOM)),
            _clean(a.findtext("arxiv:affiliation", "", _ATOM)) or None,
        )
        for a in entry.findall("atom:author", _ATOM)
    ]
    published = entry.findtext("atom:published", "", _ATOM)
    pdf = next(
        (link.get("href") for link in entry.findall("atom:link", _ATOM) if link.get("title") == "pdf"), None
    )
    abstract = _clean(entry.findtext("atom:summary", "", _ATOM))
    doi = _clean(entry.findtext("arxiv:doi", "", _ATOM)) or None
    journal = _clean(entry.findtext("arxiv:journal_ref", "", _ATOM)) or None
    header = f"{title}\n\narXiv:{arxiv_id}\n\nAbstract\n"
    return PaperRecord(
        title=title,
        authors=[(n, a) for n, a in authors if n],
        year=int(published[:4]) if published[:4].isdigit() else None,
        venue=journal or "arXiv",
        arxiv_id=arxiv_id,
        doi=doi,
        paper_url=f"https://arxiv.org/abs/{arxiv_id}",
        pdf_url=pdf.replace("http://", "https://") if pdf else None,
        text=f"{header}{abstract}\n",
        abstract=abstract or None,
        source=FieldSource.ARXIV,
    )


def fetch_arxiv(arxiv_id: str, settings: Settings) -> PaperRecord:
    """Look an arXiv paper up by id (``2602.21750``, with or without a version suffix)."""
    arxiv_id = arxiv_id.strip().removeprefix("arXiv:").removeprefix("arxiv:")
    match = _ARXIV_ID.match(arxiv_id)
    if match is None:
        raise AddError(f"{arxiv_id!r} is not an arXiv id (expected e.g. arxiv:2602.21750)")
    query = urllib.parse.urlencode({"id_list": match.group(1), "max_results": 1})
    data = fetch(f"{settings.arxiv_api_url}?{query}", "arXiv", settings, "application/atom+xml")
    return parse_arxiv_atom(data, match.group(1))


def _jats_text(abstract: str) -> str:
    """Crossref abstracts are JATS XML ('<jats:p>...</jats:p>'): keep the text, one paragraph a line."""
    # the word 'Abstract' itself
    text = re.sub(r"<jats:title>.*?</jats:title>", "", abstract, flags=re.DOTALL)
    text = re.sub(r"</jats:p>\s*", "\n", text)
    text = re.sub(r"<[^>]+>", "", text)
    return "\n".join(_clean(html.unescape(line)) for line in text.splitlines() if line.strip())


def parse_crossref(data: bytes, doi: str) -> PaperRecord:
    """The record of a Crossref ``/works/<doi>`` answer (title, authors, affiliations, venue, year,
    abstract)."""
    try:
        message: dict[str, Any] = json.loads(data)["message"]
    except (ValueError, KeyError, TypeError) as exc:
        raise AddError(
            f"Crossref answered something that is not a work record ({exc}); {OFFLINE_HINT}"
        ) from None
    title = _clean((message.get("title") or [""])[0])
    if not title:
        raise AddError(f"Crossref has no title for DOI {doi!r}; {OFFLINE_HINT}")
    authors = []
    for a in message.get("author") or []:
        name = " ".join(filter(None, [a.get("given"), a.get("family")])) or a.get("name")
        affiliation = "; ".join(x["name"] for x in a.get("affiliation") or [] if x.get("name")) or None
        if name:
            authors.append((_clean(name), affiliation))
    parts = ((message.get("issued") or message.get("published") or {}).get("date-parts") or [[None]])[0]
    # The journal or proceedings; a preprint server names itself as the 'institution' of posted content.
    # The publisher ('Wiley', 'Association for Computing Machinery') is not a venue: no venue rather than it.
    venue = _clean((message.get("container-title") or [""])[0]) or _clean(
        ((message.get("institution") or [{}])[0] or {}).get("name") if message.get("type") == "posted-content"
        else "") or None
    abstract = _jats_text(message.get("abstract") or "")
    text = f"{title}\n\nAbstract\n{abstract}\n" if abstract else ""
    return PaperRecord(
        title=title,
        authors=authors,
        year=parts[0] if parts and parts[0] else None,
        venue=venue,
        doi=message.get("DOI") or doi,
        paper_url=message.get("URL") or f"https://doi.org/{doi}",
        text=text,
        abstract=" ".join(abstract.splitlines()) or None,
        source=FieldSource.CROSSREF,
    )


def fetch_crossref(doi: str, settings: Settings) -> PaperRecord:
    """Look a paper up on Crossref by DOI (``10.1101/2022.07.20.500902``)."""
    doi = identifiers.normalize_doi(doi)
    if not identifiers.DOI_SHAPE.match(doi):
        raise AddError(f"{doi!r} is not a DOI (expected e.g. doi:10.1126/science.ade2574)")
    if (reason := identifiers.placeholder_doi(doi)) is not None:
        raise AddError(f"{doi!r} is not a paper's DOI: {reason}; give the paper's own DOI or its PDF")
    url = f"{settings.crossref_api_url.rstrip('/')}/works/{urllib.parse.quote(doi, safe='/')}"
    return parse_crossref(fetch(url, "Crossref", settings, "application/json"), doi)


def parse_openalex_authors(data: bytes) -> list[tuple[str, str | None]]:
    """Each author of an OpenAlex work with the institutions OpenAlex links them to (else the affiliation
    strings it read from the paper), in the paper's author order."""
    try:
        work: dict[str, Any] = json.loads(data)
    except ValueError as exc:
        raise AddError(f"OpenAlex answered something that is not a work record ({exc})") from None
    authors: list[tuple[str, str | None]] = []
    for authorship in work.get("authorships") or []:
        name = _clean((authorship.get("author") or {}).get("display_name"))
        places = [
            _clean(i.get("display_name"))
            for i in authorship.get("institutions") or []
            if i.get("display_name")
        ]
        places = places or [_clean(raw) for raw in authorship.get("raw_affiliation_strings") or [] if raw]
        if name:
            authors.append((name, "; ".join(dict.fromkeys(places)) or None))
    return authors


def fetch_openalex_authors(doi: str, settings: Settings) -> list[tuple[str, str | None]]:
    """The authors and institutions OpenAlex holds for the work with ``doi``."""
    url = f"{settings.openalex_api_url.rstrip('/')}/works/doi:{urllib.parse.quote(doi, safe='/')}"
    return parse_openalex_authors(fetch(url, "OpenAlex", settings, "application/json"))


def _on_the_page(title: str, text: str) -> bool:
    """Whether a record's title is printed in the PDF's opening pages (most of its words, in any layout): a
    DOI read from a link or a reference can be another work's, and then its record is not this paper's."""
    words = set(re.findall(r"\w{3,}", title.casefold()))
    printed = set(re.findall(r"\w{3,}", text.casefold()))
    return not words or len(words & printed) >= 0.7 * len(words)


def _record_for(layout: PaperRecord, settings: Settings) -> tuple[PaperRecord | None, str | None]:
    """The online record of the identifiers the PDF prints (Crossref for a DOI, else arXiv), or why none."""
    tries = ([("doi", layout.doi, fetch_crossref)] if layout.doi else []) + (
        [("arXiv", layout.arxiv_id, fetch_arxiv)] if layout.arxiv_id else [])
    reasons: list[str] = []
    opening = "\f".join(layout.text.split("\f")[:2])
    for label, ident, look_up in tries:
        try:
            record = look_up(str(ident), settings)
        except LookupUnreachable as exc:
            return None, f"{label} {ident}: {str(exc).split(':')[0]}"
        except AddError as exc:
            reasons.append(f"{label} {ident}: {str(exc).split(';')[0]}")
            continue
        if _on_the_page(record.title, opening):
            return record, None
        reasons.append(
            f"{label} {ident} is another work's (its title {record.title!r} is not on the first pages)"
        )
    return None, "; ".join(reasons)


def complete_from_identifiers(layout: PaperRecord, settings: Settings) -> PaperRecord:
    """A PDF's record with title, authors, year, venue and DOI from the record of the identifier it prints,
    affiliations from that record, OpenAlex or the layout (whichever gives most authors one), and the rest
    from the layout; ``field_sources`` says which. Offline, or when no lookup succeeds, the layout as it is
    with one line in ``notices`` saying the lookup was not made and why."""
    if not (layout.doi or layout.arxiv_id):
        return layout
    ident = f"doi:{layout.doi}" if layout.doi else f"arXiv:{layout.arxiv_id}"
    read_by = "GROBID's and the PDF layout's" if FieldSource.GROBID in layout.sources().values() else (
        "the PDF layout's")
    if settings.offline or not settings.lookups:
        why = "offline (KB_OFFLINE=1)" if settings.offline else "lookups are off (KB_LOOKUPS=false)"
        layout.notices.append(f"{ident} not looked up online: {why}; the fields are {read_by}")
        return layout
    online, why_not = _record_for(layout, settings)
    if online is None:
        layout.notices.append(f"{ident} not looked up online ({why_not}); the fields are {read_by}")
        return layout
    return _merged(layout, online, settings)


def _merged(layout: PaperRecord, online: PaperRecord, settings: Settings) -> PaperRecord:
    """The record's fields over the PDF's (see ``complete_from_identifiers``); a field the record lacks keeps
    the PDF's value and its source (the layout's, or GROBID's: ``kb.papers.grobid``)."""
    sources: dict[str, FieldSource] = {}
    prior = layout.sources()

    def pick(name: str, mine: Any, theirs: Any) -> Any:
        sources[name] = online.source if theirs else prior.get(name, FieldSource.LAYOUT)
        return theirs or mine

    names = [n for n, _ in online.authors] or [n for n, _ in layout.authors]
    sources["authors"] = online.source if online.authors else prior.get("authors", FieldSource.LAYOUT)
    candidates: list[tuple[FieldSource, list[str | None]]] = [
        (online.source, [a for _, a in online.authors] if online.authors else [None] * len(names))]
    doi = online.doi or layout.doi
    notices = list(layout.notices)
    if doi and not all(candidates[0][1]):
        try:
            candidates.append((FieldSource.OPENALEX,
                               affiliations_by_author(names, fetch_openalex_authors(doi, settings))))
        except AddError as exc:
            notices.append(f"author institutions not looked up on OpenAlex ({str(exc).split(':')[0]})")
    candidates.append((prior.get("affiliations", FieldSource.LAYOUT),
                       affiliations_by_author(names, layout.authors)))
    # One source for all affiliations, the one that places most authors (ties: the record, OpenAlex, the PDF).
    place_source, places = max(candidates, key=lambda c: sum(1 for a in c[1] if a))
    if any(places):
        sources["affiliations"] = place_source
    abstract = pick("abstract", layout.abstract, online.abstract)
    merged = PaperRecord(
        title=pick("title", layout.title, online.title), authors=list(zip(names, places, strict=True)),
        year=pick("year", layout.year, online.year), venue=pick("venue", layout.venue, online.venue),
        doi=pick("doi", layout.doi, online.doi), arxiv_id=pick("arxiv_id", layout.arxiv_id, online.arxiv_id),
        paper_url=online.paper_url or layout.paper_url, pdf_url=online.pdf_url or layout.pdf_url,
        text=layout.text, origin=layout.origin, abstract=abstract, source=FieldSource.LAYOUT,
        field_sources=sources, notices=notices, families=[] if online.authors else list(layout.families))
    return merged


# -- the one way in: what `kb add` and the app's add-a-note page both call -------------------------------

def look_up_identifier(what: str, settings: Settings) -> PaperRecord | None:
    """The record of ``arxiv:ID`` (arXiv) or ``doi:DOI`` (Crossref) online; None when ``what`` is neither."""
    scheme, _, rest = what.strip().partition(":")
    if scheme.lower() == "arxiv" and rest:
        return fetch_arxiv(rest, settings)
    if scheme.lower() == "doi" and rest:
        return fetch_crossref(rest, settings)
    return None


def read_paper_file(path: Path, settings: Settings) -> list[PaperRecord]:
    """The papers of a PDF, BibTeX or CSL-JSON file; a PDF's identifiers first: its record is looked up
    online (``complete_from_identifiers``) over its header as GROBID reads it where ``grobid_url`` is set
    (``kb.papers.grobid``) and as the layout rules read it, each field saying where it came from, the
    notices why a service was not asked."""
    records = read_file(path, LearnedReaders(year=settings.learned_year, abstract=settings.learned_abstract))
    if path.suffix.lower() == ".pdf":
        records = [complete_from_identifiers(grobid.read_header(record, path, settings), settings)
                   for record in records]
        for record in records:  # told after the lookups: a field they replaced is no longer the layout's
            record.notices += unruled_notices(record)
    return records
