"""The DOI and arXiv id a PDF names outside its printed text: its XMP metadata packet, its document info
(Subject, Keywords, ...) and the link annotations of its first page; and which of them, with the one the
layout read from the text, is the paper's own.

Publishers write the article's DOI into XMP (``prism:doi``, ``dc:identifier``) and the document info; page 1's
links point at doi.org or arxiv.org. The metadata names the paper itself and is trusted first; the printed
DOI (``kb.papers.pdf_layout``) next; a page-1 link last, as it may point at a cited work (and the lookup
checks the record's title is on the page before using it). Template DOIs are never taken
(``kb.papers.identifiers``). Runs inside the bounded PDF child (``kb.papers.pdf_child``).
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from pathlib import Path

from kb.papers import identifiers

# An XMP packet is stored uncompressed by convention (so that any tool can find it without parsing the PDF).
_XMP = re.compile(rb"<x:xmpmeta\b.*?</x:xmpmeta>", re.DOTALL)
_XMP_BYTES = 64_000_000  # the part of a file searched for the packet: publishers put it in the first few MB
_LINK_BUFFER = 4096


@dataclass
class PdfIdentifiers:
    """Identifiers a PDF names, each list in the order found, placeholders left out."""

    metadata_dois: list[str] = field(default_factory=list)  # XMP and document info
    link_dois: list[str] = field(default_factory=list)  # page 1's link annotations
    arxiv_ids: list[str] = field(default_factory=list)  # XMP, document info, links

    def doi(self, printed: str | None) -> str | None:
        """The paper's DOI: the metadata's, else the one printed (``printed``, when real), else a link's. Of
        several DOIs in the metadata, the one the page prints or links to: a figure placed from another
        article's PDF brings that article's XMP packet along (an Elsevier review's file holds a 2015 article's
        packet before its own), and so may a cover or a merged supplement."""
        if printed is not None and identifiers.placeholder_doi(printed) is not None:
            printed = None
        shown = {identifiers.normalize_doi(d).casefold() for d in [printed, *self.link_dois] if d}
        corroborated = (d for d in self.metadata_dois if identifiers.normalize_doi(d).casefold() in shown)
        return (next(corroborated, None) or next(iter(self.metadata_dois), None) or printed
                or next(iter(self.link_dois), None))


def _xmp_text(path: Path) -> str:
    with path.open("rb") as handle:
        data = handle.read(_XMP_BYTES)
    packets = [m.group().decode("utf-8", "replace") for m in _XMP.finditer(data)]
    return "\n".join(re.sub(r"<[^>]+>", " ", packet) for packet in packets)


def _page_links(document: object) -> list[str]:
    """The URIs of the first page's link annotations."""
    import pypdfium2.raw as pdfium_c

    if len(document) == 0:  # type: ignore[arg-type]
        return []
    page = document[0]  # type: ignore[index]
    raw_page, raw_doc = page.raw, document.raw  # type: ignore[attr-defined]
    uris: list[str] = []
    position, link = ctypes.c_int(0), pdfium_c.FPDF_LINK()
    buffer = ctypes.create_string_buffer(_LINK_BUFFER)
    while pdfium_c.FPDFLink_Enumerate(raw_page, ctypes.byref(position), ctypes.byref(link)):
        action = pdfium_c.FPDFLink_GetAction(link)
        if not action or pdfium_c.FPDFAction_GetType(action) != pdfium_c.PDFACTION_URI:
            continue
        length = pdfium_c.FPDFAction_GetURIPath(raw_doc, action, buffer, _LINK_BUFFER)
        if 0 < length <= _LINK_BUFFER:
            uris.append(buffer.raw[:length].rstrip(b"\0").decode("utf-8", "replace"))
    page.close()
    return uris


def read_identifiers(path: Path, document: object) -> PdfIdentifiers:
    """What ``document`` (an open ``pypdfium2.PdfDocument`` of ``path``) names besides its printed text."""
    info = document.get_metadata_dict(skip_empty=True)  # type: ignore[attr-defined]
    metadata = _xmp_text(path) + "\n" + "\n".join(str(v) for v in info.values())
    links = "\n".join(_page_links(document))
    # A link to a data or code archive names what the paper points to; the metadata names the paper itself.
    linked = [doi for doi in identifiers.dois_in(links) if not identifiers.archive_doi(doi)]
    return PdfIdentifiers(metadata_dois=identifiers.dois_in(metadata), link_dois=linked,
                          arxiv_ids=identifiers.arxiv_ids_in(metadata + "\n" + links))
