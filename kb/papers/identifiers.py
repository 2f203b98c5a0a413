"""A paper's identifiers as rules: what a DOI or an arXiv id looks like, where a text or a URL holds one, and
which DOIs are a journal template's placeholders (never stored, never a ``paper_id``).

Every reader (a PDF's text, links and metadata; BibTeX; Crossref; arXiv) asks this module, so a template DOI
such as JSS's ``10.18637/jss.v000.i00`` is refused the same way wherever it turns up.
"""

from __future__ import annotations

import re

# A DOI: '10.' + a registrant code of digits + '/' + a suffix of anything printable but space and quotes.
DOI_SHAPE = re.compile(r"^10\.\d{4,9}/\S+$")
# In running text or a URL: 'doi:10...', 'https://doi.org/10...', or a bare '10.1234/...' (trailing
# punctuation is the sentence's, not the DOI's).
DOI_IN_TEXT = re.compile(r"\b(10\.\d{4,9}/[^\s\"'<>]+[^\s\"'<>.,;:)\]])")
# arXiv ids: new style '2602.21750' (optionally 'v2'), old style 'hep-th/9901001'.
ARXIV_SHAPE = re.compile(r"^(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?$")
# (an id of zeros is a template's placeholder, as imsart's 'arXiv: arXiv:0000.0000' and 'math.PR/0000000')
ARXIV_IN_TEXT = re.compile(
    r"(?:arXiv:\s*|arxiv\.org/(?:abs|pdf)/)(?!(?:[a-z-]+(?:\.[A-Z]{2})?/)?[0.]+\b)"
    r"(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})"
    r"(?:v\d+)?",
    re.IGNORECASE,
)

# How a template's DOI gives itself away; each row names the sign, which is the reason kb reports.
_PLACEHOLDER_SIGNS: list[tuple[str, re.Pattern[str]]] = [
    (reason, re.compile(pattern))
    for reason, pattern in [
        ("its numbers are all zeros (a journal template's)", r"^10\.\d+/(?=.*\d)[^1-9]*$"),
        ("it has X's where numbers go (a template's)", r"(?i)^10\.\S*?(?:^|[^a-z])x{2,}(?:[^a-z]|$)"),
        ("it is under Crossref's test prefix 10.5555", r"^10\.5555/"),
        ("it is the DOI handbook's example", r"(?i)^10\.1000/(?:xyz|182$)"),
        # the DOIs LaTeX classes print on their sample article, left on manuscripts built with them
        ("it is the LIPIcs/OASIcs class's sample article's (the 'CVIT 2016' meeting)",
         r"^10\.4230/[A-Za-z]+\.CVIT\.2016\.\d+$"),
        ("it is the acmart class's sample DOI", r"^10\.1145/(?:1122445\.1122456|nnnnnnn\.nnnnnnn)$"),
    ]
]


# Registrants of data and software archives (Zenodo, figshare, Dryad, PANGAEA, OSF, Mendeley Data, Harvard
# Dataverse, Code Ocean): a DOI under one that a page prints or links names a data set or code the paper
# points to ('Data are available at https://doi.org/10.5281/zenodo.123'), not the paper.
_ARCHIVE_PREFIXES = ("10.5281/", "10.6084/", "10.5061/", "10.1594/", "10.17605/", "10.17632/", "10.7910/",
                     "10.24433/")


def archive_doi(doi: str) -> bool:
    """Whether ``doi`` is a data or software archive's (``_ARCHIVE_PREFIXES``)."""
    return normalize_doi(doi).startswith(_ARCHIVE_PREFIXES)


def normalize_doi(value: str) -> str:
    """A DOI without its URL or 'doi:' prefix and without trailing punctuation ('https://doi.org/10.1/x.' ->
    '10.1/x'); the case is kept (DOIs compare case-insensitively, see ``same_doi``)."""
    doi = value.strip()
    doi = re.sub(r"(?i)^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", doi)
    return doi.rstrip(".,;:")


def same_doi(first: str | None, second: str | None) -> bool:
    """Whether two DOIs name one work (DOIs are case-insensitive)."""
    return bool(first and second and normalize_doi(first).casefold() == normalize_doi(second).casefold())


def placeholder_doi(doi: str) -> str | None:
    """Why ``doi`` is a template's placeholder or not a DOI at all (a reason to report), or None for a real
    one."""
    doi = normalize_doi(doi)
    if not DOI_SHAPE.match(doi):
        return "it is not shaped as a DOI (10.<digits>/<suffix>)"
    return next((reason for reason, sign in _PLACEHOLDER_SIGNS if sign.search(doi)), None)


def dois_in(text: str) -> list[str]:
    """The real DOIs ``text`` names, in order, each once; placeholders left out."""
    found = (normalize_doi(m.group(1)) for m in DOI_IN_TEXT.finditer(text))
    return [d for d in dict.fromkeys(found) if placeholder_doi(d) is None]


def arxiv_ids_in(text: str) -> list[str]:
    """The arXiv ids ``text`` names ('arXiv:2602.21750v1', 'arxiv.org/abs/...'), without version, each
    once."""
    return list(dict.fromkeys(m.group(1) for m in ARXIV_IN_TEXT.finditer(text)))
