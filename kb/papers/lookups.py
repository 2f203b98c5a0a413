"""Looking a paper up online: arXiv's Atom API for ``arxiv:ID``, Crossref's REST API for ``doi:DOI``.

Both endpoints are settings (``arxiv_api_url``, ``crossref_api_url``) so a mirror or a test server can
stand in, and every request has a short deadline (``lookup_timeout``): offline, kb says so in one line
and how to go on without the network (give the PDF or a BibTeX entry).
"""

from __future__ import annotations

import html
import json
import re
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from typing import Any

from kb import __version__
from kb.papers.add import AddError, PaperRecord
from kb.settings import Settings

_ATOM = {"atom": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}
_ARXIV_ID = re.compile(r"^(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?$")
_OFFLINE_HINT = "give the PDF (`kb add paper.pdf`) or a BibTeX entry (`kb add refs.bib`)"


def _get(url: str, service: str, timeout: float, accept: str) -> bytes:
    """The body at ``url``; ``AddError`` naming the service and what to do when it cannot be had."""
    # The arXiv/Crossref endpoints are settings of the person running kb (https by default), never a note's.
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": f"kb/{__version__}"})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310  # noqa: S310 (http(s) from settings)
            return bytes(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise AddError(f"{service} does not know this paper (HTTP 404 from {url}); check the id") from None
        raise AddError(f"{service} answered HTTP {exc.code} ({url}): try again later, or {_OFFLINE_HINT}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise AddError(f"{service} is unreachable ({reason}): {_OFFLINE_HINT}") from None


def _clean(text: str | None) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def parse_arxiv_atom(data: bytes, arxiv_id: str) -> PaperRecord:
    """The record of the one entry of an arXiv API answer (title, authors, affiliations, abstract, DOI)."""
    try:
        feed = ET.fromstring(data)
    except ET.ParseError as exc:
        raise AddError(f"arXiv answered something that is not an Atom feed ({exc}); {_OFFLINE_HINT}") from None
    entry = feed.find("atom:entry", _ATOM)
    title = _clean(entry.findtext("atom:title", "", _ATOM)) if entry is not None else ""
    if entry is None or title == "Error" or not entry.findtext("atom:id", "", _ATOM):
        raise AddError(f"arXiv has no paper {arxiv_id!r}; check the id (e.g. arxiv:2602.21750)")
    authors = [(_clean(a.findtext("atom:name", "", _ATOM)), _clean(a.findtext("arxiv:affiliation", "", _ATOM)) or None)
               for a in entry.findall("atom:author", _ATOM)]
    published = entry.findtext("atom:published", "", _ATOM)
    pdf = next((link.get("href") for link in entry.findall("atom:link", _ATOM) if link.get("title") == "pdf"), None)
    abstract = _clean(entry.findtext("atom:summary", "", _ATOM))
    doi = _clean(entry.findtext("arxiv:doi", "", _ATOM)) or None
    journal = _clean(entry.findtext("arxiv:journal_ref", "", _ATOM)) or None
    header = f"{title}\n\narXiv:{arxiv_id}\n\nAbstract\n"
    return PaperRecord(title=title, authors=[(n, a) for n, a in authors if n],
                       year=int(published[:4]) if published[:4].isdigit() else None, venue=journal or "arXiv",
                       arxiv_id=arxiv_id, doi=doi, paper_url=f"https://arxiv.org/abs/{arxiv_id}",
                       pdf_url=pdf.replace("http://", "https://") if pdf else None, text=f"{header}{abstract}\n")


def fetch_arxiv(arxiv_id: str, settings: Settings) -> PaperRecord:
    """Look an arXiv paper up by id (``2602.21750``, with or without a version suffix)."""
    arxiv_id = arxiv_id.strip().removeprefix("arXiv:").removeprefix("arxiv:")
    match = _ARXIV_ID.match(arxiv_id)
    if match is None:
        raise AddError(f"{arxiv_id!r} is not an arXiv id (expected e.g. arxiv:2602.21750)")
    query = urllib.parse.urlencode({"id_list": match.group(1), "max_results": 1})
    data = _get(f"{settings.arxiv_api_url}?{query}", "arXiv", settings.lookup_timeout, "application/atom+xml")
    return parse_arxiv_atom(data, match.group(1))


def _jats_text(abstract: str) -> str:
    """Crossref abstracts are JATS XML ('<jats:p>...</jats:p>'): keep the text, one paragraph a line."""
    text = re.sub(r"</jats:p>\s*", "\n", abstract)
    text = re.sub(r"<[^>]+>", "", text)
    return "\n".join(_clean(html.unescape(line)) for line in text.splitlines() if line.strip())


def parse_crossref(data: bytes, doi: str) -> PaperRecord:
    """The record of a Crossref ``/works/<doi>`` answer (title, authors, affiliations, venue, year, abstract)."""
    try:
        message: dict[str, Any] = json.loads(data)["message"]
    except (ValueError, KeyError, TypeError) as exc:
        raise AddError(f"Crossref answered something that is not a work record ({exc}); {_OFFLINE_HINT}") from None
    title = _clean((message.get("title") or [""])[0])
    if not title:
        raise AddError(f"Crossref has no title for DOI {doi!r}; {_OFFLINE_HINT}")
    authors = []
    for a in message.get("author") or []:
        name = " ".join(filter(None, [a.get("given"), a.get("family")])) or a.get("name")
        affiliation = "; ".join(x["name"] for x in a.get("affiliation") or [] if x.get("name")) or None
        if name:
            authors.append((_clean(name), affiliation))
    parts = ((message.get("issued") or message.get("published") or {}).get("date-parts") or [[None]])[0]
    venue = _clean((message.get("container-title") or [""])[0]) or message.get("publisher")
    abstract = _jats_text(message.get("abstract") or "")
    text = f"{title}\n\nAbstract\n{abstract}\n" if abstract else ""
    return PaperRecord(title=title, authors=authors, year=parts[0] if parts and parts[0] else None, venue=venue,
                       doi=message.get("DOI") or doi, paper_url=message.get("URL") or f"https://doi.org/{doi}",
                       text=text)


def fetch_crossref(doi: str, settings: Settings) -> PaperRecord:
    """Look a paper up on Crossref by DOI (``10.1101/2022.07.20.500902``)."""
    doi = doi.strip().removeprefix("https://doi.org/").removeprefix("doi:")
    if not re.match(r"^10\.\d{4,9}/\S+$", doi):
        raise AddError(f"{doi!r} is not a DOI (expected e.g. doi:10.1126/science.ade2574)")
    url = f"{settings.crossref_api_url.rstrip('/')}/works/{urllib.parse.quote(doi, safe='/')}"
    return parse_crossref(_get(url, "Crossref", settings.lookup_timeout, "application/json"), doi)
