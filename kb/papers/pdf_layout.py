"""What a journal article's PDF says about itself, read from its layout (pypdfium2: characters with their
boxes and font sizes), and its full text with ligatures resolved.

- **Text**: every page's text, pages separated by ``PAGE_BREAK``; ligature code points (U+FB00-FB06) folded
  by NFKC, and the control codes TeX's T1 and OT1 fonts use for ligatures and quotes when the font has no
  Unicode map (where other extractors drop them: 'modied', 'uctuation') mapped back (``_FONT_CODES``).
- **Title**: the largest text in the top half of page 1.
- **Authors**: the lines between the title and the abstract set in the name font, split into columns by
  the gaps between their characters; each affiliation line belongs to the nearest name above it (same
  column first). An "Affiliation:" / "Address:" block at the end of the paper (JSS, R Journal) replaces
  them with its fuller lines; street addresses, e-mail and URLs are left out.
- **Publication** (venue, year, DOI): page 1's journal line or publication note, matched against
  ``PUBLICATION_PATTERNS`` (one row per way journals print it); a note that points at a citation
  ("a modified version of Zeileis (2004)") is resolved through the paper's own reference list, which gives
  the venue, year and DOI of the published version.

Per-journal differences are rows of the pattern tables, not branches of the code.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from kb.notes.grounding import PAGE_BREAK

# Control codes a TeX font without a Unicode map leaves in the text (T1 encoding at 0x1b-0x1f and its
# quotes at 0x10/0x11; OT1 at 0x0b-0x0f). pdfium hands them through; they are ligatures and quote marks.
_FONT_CODES = str.maketrans({"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl",
                             "\x0b": "ff", "\x0c": "fi", "\x0e": "ffi", "\x0f": "ffl",
                             "\x10": "“", "\x11": "”", "\x02": "-", "\r": "",
                             # pdfium joins a word hyphenated across lines, marking the join with U+FFFE
                             "\ufffe": ""})
_LIGATURES = re.compile("[\ufb00-\ufb06]")


# TeX's spacing diaeresis, set as a character of its own before its vowel ('Universit¨at'). Where the
# extractor orders it by position instead ('Munchen ¨' at the end of a line), its vowel cannot be told.
_DIAERESIS = re.compile(r"¨([aouAOUei])")


def clean_text(text: str) -> str:
    """Ligatures resolved (NFKC for U+FB00-FB06, font control codes mapped), TeX's spacing diaeresis put
    on its vowel, line ends as ``\\n``."""
    text = text.replace("\r\n", "\n").translate(_FONT_CODES)
    text = _LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    if "¨" in text:
        text = _DIAERESIS.sub(lambda m: unicodedata.normalize("NFC", m.group(1) + "\u0308"), text)
    return text


@dataclass
class Segment:
    """A run of text on one line of a page, in one font size, with no wide gap inside."""

    text: str
    size: float  # font size in points
    x0: float
    x1: float
    y: float  # baseline height from the bottom of the page

    @property
    def center(self) -> float:
        return (self.x0 + self.x1) / 2


@dataclass
class PdfArticle:
    """What a PDF says about the article it holds."""

    pages: list[str]
    title: str | None = None
    authors: list[tuple[str, str | None]] = field(default_factory=list)
    venue: str | None = None
    year: int | None = None
    volume: str | None = None
    issue: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    abstract: str | None = None


# -- reading the PDF ------------------------------------------------------------------------------

_GAP = 1.0  # a horizontal gap wider than this many font sizes starts a new segment (a new column)


def _page_segments(textpage: object, text: str) -> list[Segment]:
    """Page 1's text as segments, top to bottom (pdfium's own line order), columns split at wide gaps."""
    import pypdfium2.raw as pdfium_c

    segments: list[Segment] = []
    chars: list[tuple[str, float, float, float, float]] = []  # (char, x0, x1, y, size)

    def flush() -> None:
        run: list[tuple[str, float, float, float, float]] = []
        for char in chars:
            visible = [c for c in run if c[0] != " "]
            if char[0] != " " and visible and (
                    char[1] - visible[-1][2] > _GAP * max(char[4], 1.0)  # a wide gap: another column
                    or (run[-1][0] == " " and abs(char[4] - visible[0][4]) > 0.5)):  # another size, at a word
                add(run)
                run = []
            run.append(char)
        add(run)
        chars.clear()

    def add(run: list[tuple[str, float, float, float, float]]) -> None:
        visible = [c for c in run if c[0] != " "]
        if visible:
            segments.append(Segment(clean_text("".join(c[0] for c in run)).strip(), max(c[4] for c in visible),
                                    visible[0][1], max(c[2] for c in visible), min(c[3] for c in visible)))

    raw = textpage.raw  # type: ignore[attr-defined]
    for i, ch in enumerate(text):
        if ch in "\r\n":
            flush()
            continue
        left, bottom, right, _top = textpage.get_charbox(i)  # type: ignore[attr-defined]
        if ch == " " and chars and chars[-1][0] == " ":
            continue
        chars.append((ch, left, right, bottom, float(pdfium_c.FPDFText_GetFontSize(raw, i))))
    flush()
    return segments


def read_article(path: Path) -> PdfArticle:
    """Text and metadata of a PDF (see the module docstring); raises ``ValueError`` for an unreadable file."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        raise ValueError(str(exc)) from None
    try:
        pages: list[str] = []
        segments: list[Segment] = []
        for number, page in enumerate(document):
            textpage = page.get_textpage()
            raw_text = textpage.get_text_range(0, textpage.count_chars())
            pages.append(clean_text(raw_text).strip())
            if number == 0:
                segments = _page_segments(textpage, raw_text)
        metadata = document.get_metadata_dict(skip_empty=True)
    finally:
        document.close()
    article = PdfArticle(pages=pages)
    if pages and pages[0]:
        describe(article, segments)
    # Without a layout to read them from (one font size throughout), the document's own metadata.
    article.title = article.title or metadata.get("Title", "").strip() or None
    if not article.authors and metadata.get("Author"):
        article.authors = [(name.strip(), None) for name in re.split(r";|\band\b|,", metadata["Author"])
                           if name.strip()]
    if article.arxiv_id is None and pages:
        arxiv = _ARXIV.search(pages[0])
        article.arxiv_id = arxiv.group(1) if arxiv else None
    if article.doi is None and pages:
        doi = re.search(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;])", pages[0])  # a bare DOI on page 1
        article.doi = doi.group(1) if doi else None
    return article


# -- page 1: title, authors, affiliations ------------------------------------------------------------

_ABSTRACT = re.compile(r"^(?:Abstract|ABSTRACT|Summary|SUMMARY)\b")
# Lines of an author block that are an address, a date or contact details, not an institution.
_ADDRESS = re.compile(r"\d{3,}|^\d+ |\w\d*\s+\d+[a-z]?$|str\.\s*\d|@|\bE-?mail\b|\bURL\b|https?://|\bTel(?:ephone)?\b|\bFax\b|\b(?:Str\.|Straße|Street|"
                      r"Ave\.|Avenue|Road|P\.?O\.? Box)\b|^(?:January|February|March|April|May|June|July|August|"
                      r"September|October|November|December)\b", re.IGNORECASE)
_INSTITUTION = re.compile(r"Universit|Institut|College|School|Department|Dept\.|Laborator|Center|Centre|"
                          r"Project|Inc\b|Ltd\b|GmbH|\bAG\b|Corporation|Foundation|Hospital|Academy|Faculty|"
                          r"Enthusiasts|Research|\bETH\b|\bEPFL\b|\bMIT\b|Statistics|Seminar|Sciences?\b|Methodology|Pharma|"
                          r"Division|Group\b|Unit\b|Lab\b", re.IGNORECASE)
_NAME_WORD = r"[A-Z][\w'’\-]*\.?"
_NAME = re.compile(rf"^{_NAME_WORD}(?: (?:{_NAME_WORD}|van|von|de|der|den|da|di|du|le|la)){{1,4}}$")
_NAME_SPLIT = re.compile(r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*")
_TITLE_MARKS = re.compile(r"[\s∗*†‡§¶]+$")  # footnote marks after a title
_MARKS = re.compile(r"[\s∗*†‡§¶]+$|(?<=[a-z])\d(?:,\d)*$")  # and after a name (or numbers: 'Hothorn1')


def _is_name_list(text: str) -> bool:
    parts = [p for p in _NAME_SPLIT.split(_MARKS.sub("", text)) if p]
    return bool(parts) and not _INSTITUTION.search(text) and all(_NAME.match(p.strip()) for p in parts)


def describe(article: PdfArticle, segments: list[Segment]) -> None:
    """Fill in title, authors, publication and abstract from page 1's segments and the full text."""
    if not segments:
        return
    top = max(s.y for s in segments)
    head = [s for s in segments if s.y >= top / 2]
    title_size = max(s.size for s in head)
    body_size = sorted(s.size for s in segments)[len(segments) // 2]
    if title_size <= body_size + 0.5:  # no larger type than the body's: no title to tell by its size
        return
    title_lines = [s for s in head if abs(s.size - title_size) < 0.5]
    article.title = _TITLE_MARKS.sub("", " ".join(s.text for s in title_lines)).strip() or None
    below = [s for s in segments if s.y < min(s.y for s in title_lines) - 0.1]
    end = next((i for i, s in enumerate(below) if _ABSTRACT.match(s.text)), None)
    block = below[:end] if end is not None else below[:12]
    article.authors = _authors(block)
    full = "\n".join(article.pages)
    ends = _end_affiliations(full, [n for n, _ in article.authors])
    # Page 1 names the institution; the end block adds department and address lines, so it fills gaps only.
    article.authors = [(name, affiliation or ends.get(name)) for name, affiliation in article.authors]
    _publication(article)
    if end is not None:
        article.abstract = _abstract(article.pages[0])


def _authors(block: list[Segment]) -> list[tuple[str, str | None]]:
    """Names (the block's name-like segments) with the affiliation lines under each."""
    names: list[tuple[Segment, str]] = []
    others: list[Segment] = []
    name_size: float | None = None
    for seg in block:
        if _is_name_list(seg.text) and (name_size is None or abs(seg.size - name_size) < 0.5):
            name_size = seg.size
            names += [(seg, _MARKS.sub("", p).strip()) for p in _NAME_SPLIT.split(_MARKS.sub("", seg.text)) if p]
        elif not _ADDRESS.search(seg.text) and names:
            others.append(seg)
    lines: dict[str, list[str]] = {name: [] for _, name in names}
    for seg in others:
        above = [(s, n) for s, n in names if s.y > seg.y]
        if not above:
            continue
        row = min(s.y for s, _ in above)  # the nearest row of names above, then the nearest column in it
        in_row = [(s, n) for s, n in above if abs(s.y - row) < s.size / 2]
        shared = len({id(s) for s, _ in in_row}) == 1  # one line 'A, B and C': its affiliation is theirs
        targets = [n for _, n in in_row] if shared else [min(in_row, key=lambda sn: abs(sn[0].center - seg.center))[1]]
        for name in targets:
            lines[name].append(_MARKS.sub("", seg.text).strip())
    return [(name, ", ".join(lines[name]) or None) for name in dict.fromkeys(n for _, n in names)]


_END_BLOCK = re.compile(r"^(?:Affiliations?|Addresses?|Authors?['’]? addresses?)\s*:\s*$", re.MULTILINE | re.IGNORECASE)


def _end_affiliations(text: str, names: list[str]) -> dict[str, str]:
    """Each author's institution lines from an "Affiliation:" block at the end of the paper."""
    found = list(_END_BLOCK.finditer(text))
    if not found or not names:
        return {}
    lines = [line.strip() for line in text[found[-1].end():].splitlines()]
    surnames = {name.split()[-1].casefold(): name for name in names}
    result: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines:
        if not line or line == PAGE_BREAK:
            continue
        words = line.split()
        owner = surnames.get(words[-1].casefold()) if len(words) <= 5 and _NAME.match(line) else None
        if owner is not None:
            current = owner
            result[current] = []
        elif current is not None and not _ADDRESS.search(line) and not _is_running_head(line, names):
            result[current].append(line)
    return {name: ", ".join(parts) for name, parts in result.items() if parts}


def _is_running_head(line: str, names: list[str]) -> bool:
    """A page's running head ('Douglas Bates, Martin Mächler 51'): author names with a page number."""
    return sum(name.split()[-1] in line for name in names) >= 1 and bool(re.search(r"\d+$", line))


def _abstract(first_page: str) -> str | None:
    match = re.search(r"^\s*(?:Abstract|ABSTRACT|Summary)\s*\n(.+?)(?:\n\s*(?:Keywords?|Key words)\s*:|\n\s*1\.? "
                      r"+Introduction|\Z)", first_page, re.DOTALL | re.MULTILINE)
    return " ".join(match.group(1).split()) if match else None


# -- the publication: journal line of page 1, or the reference it points at ----------------------------

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
_VENUE = r"(?P<venue>(?:[A-Z][\w&-]*|of|and|in|for|the)(?: (?:[A-Z][\w&-]*|of|and|in|for|the))*)"
# How journals state on page 1 where an article appeared; each row names its groups (venue, year, volume,
# issue, doi, cite: a citation such as 'Zeileis (2004)' to resolve in the reference list).
PUBLICATION_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(name, re.compile(pattern)) for name, pattern in [
    ("JSS header", rf"(?P<venue>Journal of Statistical Software),? (?:{_MONTH} )?(?P<year>\d{{4}}), "
                   r"Volume (?P<volume>\d+), Issue (?P<issue>\d+)"),
    ("JMLR header", r"(?P<venue>Journal of Machine Learning Research) (?P<volume>\d+) \((?P<year>\d{4})\)"),
    ("published in ..., on MONTH YEAR", rf"published (?:online )?in the {_VENUE}, on {_MONTH} (?P<year>\d{{4}})"),
    ("preprint of an article published in",
     rf"article published in {_VENUE}, Volume (?P<volume>\d+), Number (?P<issue>\d+)"
     r".{0,80}?(?:©|\(c\)) ?(?P<year>\d{4})"),
    ("version of CITE, published in",
     r"(?:version of|published as) (?P<cite>[A-Z][^()]{0,90}?) \((?P<year>\d{4})[a-z]?\)"
     rf"(?:,? (?:published )?in the {_VENUE})?"),
    ("corresponds to a paper published in", rf"corresponds to (?:a|the) paper published in the {_VENUE}"),
    ("Copyright line", rf"©\s*(?P<year>\d{{4}}) {_VENUE}"),
]]
# Journal names as references abbreviate them, and their full names.
VENUE_NAMES = {"j. of statistical software": "Journal of Statistical Software",
               "j. stat. softw.": "Journal of Statistical Software",
               "jss": "Journal of Statistical Software"}
_DOI = re.compile(r"(?:doi:\s*|doi\.\s*org/\s*|DOI:?\s+|URL\s+)(10\.\d{4,9}/[^\s\"<>,]*(?:\n\s*[^\s\"<>,]+)?)", re.I)
_ARXIV = re.compile(r"arXiv:(\d{4}\.\d{4,5})")


def _flat(text: str) -> str:
    """Text on one line: words hyphenated across a line joined, whitespace collapsed."""
    return " ".join(re.sub(r"(\w)-\n\s*(\w)", r"\1\2", text).split())


def _venue(name: str | None) -> str | None:
    if not name:
        return None
    name = name.strip(" .,")
    return VENUE_NAMES.get(name.casefold(), name)


def _publication(article: PdfArticle) -> None:
    first = _flat(article.pages[0])
    full = "\n".join(article.pages)
    references = _references(full)
    for _, pattern in PUBLICATION_PATTERNS:
        match = pattern.search(first)
        if match is None:
            continue
        groups = {k: v for k, v in match.groupdict().items() if v}
        article.venue = article.venue or _venue(groups.get("venue"))
        article.year = article.year or (int(groups["year"]) if "year" in groups else None)
        article.volume = article.volume or groups.get("volume")
        article.issue = article.issue or groups.get("issue")
        if "cite" in groups and "year" in groups:
            cited = _cited(references, groups["cite"], groups["year"], match.group())
            _from_reference(article, cited or (_titled(references, article.title) if article.title else None))
    if article.venue and (article.year is None or article.doi is None) and article.title:
        _from_reference(article, _titled(references, article.title))  # the paper citing its published self
    doi = _DOI.search(first)
    if doi and article.doi is None:
        article.doi = _doi_text(doi.group(1))
    arxiv = _ARXIV.search(first)
    article.arxiv_id = arxiv.group(1) if arxiv else None


def _doi_text(raw: str) -> str:
    return re.sub(r"\s+", "", raw).rstrip(".,;)/")


def _references(full: str) -> str:
    heads = list(re.finditer(r"^\s*(?:References|REFERENCES|Bibliography)\s*$", full, re.MULTILINE))
    return full[heads[-1].end():] if heads else ""


_ENTRY_START = re.compile(r"\n(?=[A-Z][^\n]{0,120}?\((?:19|20)\d\d[a-z]?\)\.)")


def _entry_at(references: str, at: int) -> str:
    """The reference entry around offset ``at``: from its start to the next entry's start."""
    starts = [0] + [m.start() for m in _ENTRY_START.finditer(references)] + [len(references)]
    begin = max(s for s in starts if s <= at)
    return references[begin:min(s for s in starts if s > at)]


def _cited(references: str, cite: str, year: str, note: str) -> str | None:
    """The entry a citation ('Zeileis, Leisch, Hornik, and Kleiber (2002)') names: first author and year."""
    surname = re.split(r"[ ,]", cite.strip())[0]
    suffix = re.search(rf"\({year}([a-z]?)\)", note)
    key = re.compile(rf"^{re.escape(surname)}\b[^\n]{{0,120}}?\({year}{suffix.group(1) if suffix else ''}\)",
                     re.MULTILINE)
    match = key.search(references)
    return _entry_at(references, match.start()) if match else None


def _titled(references: str, title: str) -> str | None:
    """The reference entry that cites this very title (how a vignette points at its published version):
    the entry's opening up to the title, and what follows the title up to the next entry."""
    flat = _flat(references)
    match = re.search(r"\W+".join(map(re.escape, re.findall(r"\w+", title)[:8])), flat, re.IGNORECASE)
    if match is None:
        return None
    before = flat[max(0, match.start() - 60):match.start()]
    after = flat[match.end():match.end() + 300]
    following = re.search(r"\. (?=[A-Z][\w'’\-]+,? (?:[A-Z]{1,3}[,( ]|[A-Z]\.))|(?<=\d\.) (?=[A-Z]\. [A-Z])", after)
    year = re.search(r"\((\d{4})[a-z]?\)\.\W*$", before)
    return (f"({year.group(1)}). " if year else "") + "“" + match.group() + after[:following.start() + 1
                                                                                    if following else None]


def _from_reference(article: PdfArticle, entry: str | None) -> None:
    """Venue, year and DOI of a reference entry, where the article lacks them."""
    if not entry:
        return
    flat = _flat(entry)
    venue = re.search(r"[.”\"]\s*”?\s*((?:J\.|Journal|[A-Z][a-z]+ Journal)[^,.”]*)[,.]", flat)
    if venue and article.venue is None:
        article.venue = _venue(venue.group(1))
    year = re.search(r"\((\d{4})[a-z]?\)|, (\d{4})\.", flat)
    if year and article.year is None:
        article.year = int(year.group(1) or year.group(2))
    doi = _DOI.search(entry)
    if doi and article.doi is None:
        article.doi = _doi_text(doi.group(1))
