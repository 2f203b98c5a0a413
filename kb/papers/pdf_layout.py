"""What a journal article's PDF says about itself, read from its layout: the segments of its first page
(``pdf_page``: text runs with their font sizes, boxes and styles) and its full text.

- **Title**: the largest text in the top half of page 1 (``describe``).
- **Authors**: the lines between the title and the abstract set in the name font (``pdf_names``,
  ``pdf_authors``); an "Affiliation:" / "Address:" block at the end of the paper (JSS, R Journal) fills the
  gaps (``pdf_affiliations``); street addresses, e-mail and URLs are left out.
- **Abstract**: under its heading, or the paragraph under the authors set apart (``pdf_abstract``).
- **Publication** (venue, year, DOI): page 1's journal line or publication note (``pdf_publication``).

Per-journal differences are rows of the pattern tables, not branches of the code.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from kb.papers import identifiers, journals
from kb.papers.pdf_abstract import (
    SECTION,
    abstract_page,
    headed_abstract,
    is_abstract_head,
    is_cover,
    is_first_section,
    label_beside,
    letterspaced,
    structured_abstract,
    structured_head,
    styled_paragraph,
    unheaded_abstract,
)
from kb.papers.pdf_affiliations import fill_from_the_end
from kb.papers.pdf_authors import block_authors, name_marks, page_authors
from kb.papers.pdf_names import (
    ADDRESSES,
    ANONYMOUS,
    INSTITUTION,
    LEAD_SEPARATOR,
    NAME,
    is_name_list,
    is_prose,
    merge_spaced,
)
from kb.papers.pdf_page import (
    MARGIN,
    SYMBOL_MARKS,
    UNREADABLE,
    LearnedReaders,
    PdfArticle,
    Segment,
    body_text_size,
    margin_lines,
    read_pages,
    row_groups,
    unreadable,
)
from kb.papers.pdf_publication import MONTH, in_full, own_arxiv_id, read_publication
from kb.papers.pdf_roles import mend_abstract
from kb.papers.pdf_year import YearCandidate, fill_year, year_candidates


def read_article(path: Path, learned: LearnedReaders | None = None) -> PdfArticle:
    """Text and metadata of a PDF (see the module docstring); raises ``ValueError`` for an unreadable file.
    The ``learned`` readers (the settings of those names; none by default) add to the rules', each saying so
    in ``read_by``: the year ranker fills a year the rules left empty (``pdf_year``), the line labeller mends
    the abstract (``pdf_roles.mend_abstract``)."""
    learned = learned or LearnedReaders()
    read = read_by_rules(path, years=learned.year)  # the years printed, only when asked
    if learned.year:
        fill_year(read.article, read.candidates)
    if learned.abstract and read.segments:
        mend_abstract(read.article, read.segments, read.page)
    _say_why_empty(read.article)
    return read.article


@dataclass
class RulesRead:
    """What the rules read of a PDF, and what the learned readers read beside them: the years printed where
    the publication is read, and the segments and text of the page the title and abstract are read from."""

    article: PdfArticle
    candidates: list[YearCandidate]
    segments: list[Segment]  # [] where no page was read (an unreadable or empty first page)
    page: str


def read_by_rules(path: Path, this_year: int | None = None, years: bool = True) -> RulesRead:
    """What the rules read of a PDF (no field's reason for being empty said yet), and, with ``years``, the
    years printed where the publication is read (``pdf_year.year_candidates``, up to ``this_year`` + 1; none
    on an unreadable page)."""
    read = read_pages(path, is_cover)
    pages, layouts = read.pages, read.layouts
    article = PdfArticle(pages=pages)
    candidates: list[YearCandidate] = []
    segments: list[Segment] = []
    page = ""
    if pages and pages[0] and unreadable(pages[0]):
        article.reasons = {f: UNREADABLE for f in ("title", "authors", "abstract", "venue", "year")}
    elif pages and pages[0]:
        # a cover page (USENIX's) before the article's own first page, which is titled
        at = 1 if len(layouts) > 1 and opens_titled(layouts[1][0]) else 0
        segments, page = layouts[at][0], pages[at]
        describe(article, segments, at, height=layouts[at][1])
        article.title = punctuated_title(article.title, pages[:at])
        article.authors = cover_names(article.authors, pages[:at])
        read_publication(article, margin_lines(*layouts[0]), read=at + 1, stamps=read.stamps)
        article.venue = in_full(article.venue, read.metadata.get("Subject", ""))
        candidates = year_candidates(layouts[:at + 1], read.stamps, this_year) if years else []
    _from_metadata(article, read.metadata)
    if article.arxiv_id is None and pages:
        article.arxiv_id = own_arxiv_id(pages[0])
    if article.doi is None and pages and "doi" not in article.reasons:
        bare = re.finditer(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;])", pages[0])  # a bare DOI on page 1
        article.doi = next((d.group(1) for d in bare if not identifiers.archive_doi(d.group(1))), None)
    return RulesRead(article, candidates, segments, page)


def punctuated_title(title: str | None, covers: list[str]) -> str | None:
    """The title as a cover page prints it, where the article's own page set its parts on lines of their own
    without the punctuation between them (USENIX: the cover's 'Failures: An Analysis ...' over the page's
    'Failures' / 'An Analysis ...'): the same words in the same order, only the marks between them told."""
    words = re.findall(r"\w+", title or "")
    if not words or not covers:
        return title
    pattern = r"\b" + r"[^\w\n]*\s*[^\w\n]*".join(map(re.escape, words)) + r"\b"
    found = re.search(pattern, "\n".join(covers), re.IGNORECASE)
    return " ".join(found.group().split()) if found else title


# A cover sheet's line of the article's authors (JSTOR's 'Author(s): Albert S. Kyle', 'Author(s): Stephen A.
# Ross and Joseph E. Stiglitz').
_COVER_AUTHORS = re.compile(r"^\s*Author\(s\):\s*(.+)$", re.MULTILINE)
# What a scan's text layer glues to the last word of a name: its footnote mark, a raised '1' read as 'I', 'l'
# or '|', a digit or a symbol ('KYLEI', 'STIGLITZ2', 'ROSS*').
# (a name in capitals comes out in title case: 'Kylei')
_GLUED_MARK = re.compile(rf"[Iil|\d{SYMBOL_MARKS}]{{1,2}}")


def cover_names(authors: list[tuple[str, str | None]], covers: list[str]) -> list[tuple[str, str | None]]:
    """The article page's names as the cover sheet before it spells them (``_COVER_AUTHORS``), where the
    page's name is the cover's but for a footnote mark the text layer glued to its end ('BY ALBERT S.
    KYLEI', its mark '1' read as 'I', is the cover's 'Albert S. Kyle'); the page's names, untouched, where the
    cover names none or others. A page without a name read takes the cover's names."""
    found = next((m.group(1) for cover in covers for m in [_COVER_AUTHORS.search(cover)] if m), None)
    if found is None:
        return authors
    listed = [n.strip() for n in re.split(r",\s*(?:and\s+)?|\s+and\s+", found) if n.strip()]
    if not authors:
        return [(name, None) for name in listed if NAME.match(name)]

    def spelled(name: str) -> str:
        for cover in listed:
            if name.casefold() == cover.casefold() or (
                    name.casefold().startswith(cover.casefold())
                    and _GLUED_MARK.fullmatch(name[len(cover):])):
                return cover
        return name

    return [(spelled(name), affiliation) for name, affiliation in authors]


def opens_titled(segments: list[Segment]) -> bool:
    """Whether a page opens an article: a line above its abstract heading is set larger than its body text
    (the title). The page after a cover page does; a manuscript's abstract page, under a running head in
    the body's size or smaller, does not: its title page is page 1."""
    if not segments:
        return False
    body = body_text_size(segments)
    heading = next((s for s in segments if is_abstract_head(s)), None)
    floor = heading.y if heading is not None else float("-inf")
    return any(s.size > body + 0.5 and s.y > floor and len(s.text) > 1 for s in segments)


# A document-information title that names a file or a template, not the article.
_JUNK_TITLE = re.compile(
    r"^(?:Microsoft (?:Word|PowerPoint) - |Untitled\b)|\.(?:docx?|tex|dvi|pdf|rtf|ps|indd)$"
    r"|^[\w./\\-]+$|^(?:Title|Document\d*|untitled)$|^arXiv:",  # or an arXiv stamp
    re.IGNORECASE,
)


def _from_metadata(article: PdfArticle, metadata: dict[str, str]) -> None:
    """Without a layout to read them from, the document's own title and authors, unless they name a file or
    a template ('Microsoft Word - paper.docx', 'Untitled Document')."""
    title = metadata.get("Title", "").strip()
    if article.title is None and title and "title" not in article.reasons:
        if _JUNK_TITLE.search(title):
            article.reasons["title"] = (
                f"the layout shows no title and the document's title is a file's ({title!r})"
            )
        else:
            article.title = title
    if not article.authors and metadata.get("Author") and "authors" not in article.reasons:
        names = [name.strip() for name in re.split(r";|\band\b|,", metadata["Author"]) if name.strip()]
        # The account that made the file ('Administrator', 'jsmith', 'Owner') is no author: a name has two
        # words or more.
        # (nor is a double-blind submission's stand-in: 'Anonymous Submission')
        if all(NAME.match(name) and not ANONYMOUS.search(name) for name in names):
            article.authors = [(name, None) for name in names]
        else:
            article.reasons["authors"] = ("the layout shows no line of names and the document's author is "
                                          f"no name ({metadata['Author']!r})")


def _say_why_empty(article: PdfArticle) -> None:
    """A reason for each field left empty that no step has explained."""
    defaults = {
        "title": "no line on page 1 is set larger than its body text, and the document has no title",
        "authors": "no line of names between the title and the abstract",
        "venue": "page 1 states no publication (no journal line, no 'published in', no permission block)",
        "year": "page 1 states no year of publication",
        "abstract": "no 'Abstract' heading on the article's first page",
    }
    for name, reason in defaults.items():
        if not getattr(article, name) and name not in article.reasons:
            article.reasons[name] = reason
    for name in [n for n in article.reasons if getattr(article, n, None)]:
        del article.reasons[name]


# -- page 1: the title, and where the author block and the abstract stand ------------------------------

# Elsevier's letter-spaced heads of the boxes under the authors ('a r t i c l e  i n f o', 'a b s t r a c t'):
# they end the author block. The text gives them closed up in lower case, or spaced in lower case or capitals.
_BOX_HEAD = re.compile(rf"^(?:article(?: info)?|info|abstract|"
                       rf"{letterspaced('article')}(?: +{letterspaced('info')})?|"
                       rf"{letterspaced('info')}|{letterspaced('abstract')})$")
# footnote marks after a title (Elsevier marks a title's note with a star: '... in plants☆')
_TITLE_MARKS = re.compile(rf"[\s{SYMBOL_MARKS}☆★]+$")


_ARTICLE_TYPE = (r"(?:(?:Original|Research|Review|Brief|Short|Technical|Applications?|Methods?|Full|Regular|"
                 r"Invited|Special|Open)\s+)?(?:Articles?|Papers?|Reports?|Communications?|Letters?|Perspectives?|"
                 r"Reviews?|Viewpoints?|Commentary|Editorial|Methods?|Resources?|Essays?|Opinion|Protocols?|"
                 r"Notes?|Research|Access|Highlights?)|OPEN|Open")
_VOLUME_LINE = re.compile(r"\bVol(?:\.|ume) ?\d")  # a journal's volume, in its header
# A notice's word, and the words it goes on with ('Draft of ...', 'Preprint submitted to ...').
_NOTICE = r"\b(?:Preprint|Manuscript|Draft)\b"
_NOTICE_WORDS = r"(?:of|submitted|version|under|accepted|received|for)\b"
# Lines at the top of page 1 that are never the title: an arXiv stamp in the margin, a proceedings' or
# journal's header ('2015 IEEE Symposium on Security and Privacy'), a preprint notice.
_NOT_TITLE = re.compile(r"arXiv:(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})|"
                        r"^(?:19|20)\d\d\b.*\b(?:Symposium|Conference|Workshop|Congress)\b|"
                        r"\b(?:Proceedings|Journal|Transactions|Conference|Symposium)\b.*\b(?:19|20)\d\d\b|"
                        r"\bVol(?:\.|ume) ?\d|^(?:JSS|JMLR)$|^Journal of |"
                        # the article's type or access, which journals set above the title, larger at times
                        # (Nature's 'Article', PLOS's 'RESEARCH ARTICLE', BMC's 'Open Access', Springer's
                        # 'ORIGINAL PAPER', OUP's 'Applications Note')
                        rf"^(?i:{_ARTICLE_TYPE})$|"
                        # a notice that the text is a preprint, a manuscript or a draft ('*Manuscript',
                        # 'Draft: February 16, 2009', '(Draft of October 7, 2013)', 'Preprint submitted to'),
                        # never a title that names one ('Draft genome assembly of ...', 'A Draft Human ...')
                        rf"^\W*{_NOTICE}(?! +(?!{_NOTICE_WORDS})[A-Za-z])|(?i:{_NOTICE})\s*(?:[:.,;)]|$)|"
                        rf"(?i:{_NOTICE}) {_NOTICE_WORDS}|"
                        # a publication statement, in capitals too ('APPEARED IN BULLETIN OF THE')
                        r"^(?i:(?:to )?appear(?:s|ed)? in|published in|reprinted (?:with \w+ )?from)\b")


_TITLE_MOST_WORDS = 40  # longer than any title: the largest lines are a page's prose

# A draft's circulation notice, set among the title block's lines ('Preliminary and incomplete - please do not
# cite' under a working paper's date, 'PRELIMINARY DRAFT: DO NOT CIRCULATE', 'Comments welcome. Do not quote
# without permission.'): what readers may do with the text, never an author's name or address.
_CIRCULATION_NOTICE = re.compile(
    r"\b(?:do not|please don'?t|not to be) (?:cite|quote|circulate|distribute|copy)\b|"
    r"\bnot for (?:citation|quotation|circulation|distribution)\b|\bpreliminary (?:and incomplete|draft)\b|"
    r"\bcomments (?:are )?(?:very )?welcome\b", re.IGNORECASE)


# The lines of an Elsevier journal's masthead, above and under its name: 'Contents lists available at
# ScienceDirect' / JOURNAL / 'journal homepage: www.elsevier.com/locate/...'.
_MASTHEAD = re.compile(r"^Contents lists available at\b|^journal homepage\b", re.IGNORECASE)


def _masthead(segments: list[Segment]) -> Callable[[Segment], bool]:
    """Whether a line is between the two lines of a journal's masthead (``_MASTHEAD``), so the journal's name,
    however large it is set (Biochimica et Biophysica Acta, in a size with its article's title). The page's
    masthead lines are found once, not once per line asked about."""
    rows = sorted(s.y for s in segments if _MASTHEAD.match(s.text))

    def between(seg: Segment) -> bool:
        # (the masthead's lines below it are rows[:under], those over it rows[above:])
        under, above = bisect_left(rows, seg.y), bisect_right(rows, seg.y)
        return (under > 0 and above < len(rows) and rows[above] - seg.y < 4 * seg.size
                and seg.y - rows[under - 1] < 4 * seg.size)

    return between


def _footer_name(segments: list[Segment]) -> Callable[[Segment], bool]:
    """Whether a line's words open a line of the page's footer before a separator, so it is the journal's
    name, set in its banner however large (PLOS ONE's 'PLOS ONE' over its title, in the footer 'PLOS ONE |
    https://doi.org/...'); a footer is the bottom tenth of the page's text, found once per page."""
    top = max(s.y for s in segments)
    footer = [other for other in segments if other.y < 0.1 * top]

    # (or before its volume or year and a comma, a citation line: MDPI's masthead 'molecules' over its title,
    # the footer 'Molecules 2017, 22, 1763; doi:...'; Cell Press's 'Cell 168, 1–13, January 12, 2017'; a
    # short line only, a few words, as a journal's name is)
    def names_journal(seg: Segment) -> bool:
        name = re.escape(seg.text.strip())
        cited = re.compile(rf"{name}\s+\d{{1,4}},", re.IGNORECASE) if len(seg.text.split()) <= 3 else None
        return any(other is not seg and (re.match(rf"{name}\s*[|•·]", other.text)
                                         or cited is not None and cited.match(other.text) is not None)
                   for other in footer)

    return names_journal


def _banner(seg: Segment, segments: list[Segment]) -> bool:
    """One word level with a journal's volume line is the journal's banner, however large it is set (OUP's
    'BIOINFORMATICS' beside 'Vol. 00 no. 00 2012')."""
    return len(seg.text.split()) == 1 and any(
        abs(other.y - seg.y) < seg.size and _VOLUME_LINE.search(other.text) for other in segments)


_STACK_LEADING = 2.5  # a journal header's lines stand within this many of their sizes of the line under them


def _over_volume_line(segments: list[Segment]) -> set[int]:
    """The lines stacked directly over a journal's volume line (``_VOLUME_LINE``), each within
    ``_STACK_LEADING`` of its size of the line under it and across the same stretch of the page: the journal's
    header, its name however large it is set and on however many lines (JIPAM's 'Journal of Inequalities in
    Pure and' / 'Applied Mathematics' / 'http://jipam.vu.edu.au/' over 'Volume 6, Issue 4, Article 124, 2005',
    all larger than the title; the Electronic Journal of Statistics' name over 'Vol. 4 (2010) 1–20'). The
    ``id`` of each such line. Only a header over a title: some line under the volume line, in the page's top
    half, is set larger than the body. A title standing further above a volume line stays, and so does one
    directly over a volume line with no larger line under it (a note under a title: 'Appeared in Vol. 3')."""
    stacked: set[int] = set()
    if not segments:
        return stacked
    body, top = body_text_size(segments), max(s.y for s in segments)
    for volume in (s for s in segments if _VOLUME_LINE.search(s.text)):
        if not any(top / 2 <= s.y < volume.y - volume.size / 3 and s.size > body + 0.5 for s in segments):
            continue
        under = volume
        while True:
            over = [s for s in segments if id(s) not in stacked and s is not volume and s.x0 < under.x1
                    and under.x0 < s.x1 and 0 < s.y - under.y <= _STACK_LEADING * max(s.size, under.size)]
            if not over:
                break
            under = min(over, key=lambda s: s.y)
            stacked.update(id(s) for s in over if abs(s.y - under.y) < under.size / 3)
    return stacked


def describe(article: PdfArticle, segments: list[Segment], at: int = 0, height: float | None = None) -> None:
    """Fill in title, authors and abstract from the segments of the article's first page (``at``: its index,
    1 after a cover page; ``height``: the page's) and the full text. A running footer (the bottom tenth of
    the page: 'USENIX Association  2015 USENIX Annual Technical Conference') is never part of the author
    block, wherever the extractor puts it in its line order."""
    head = _head(segments)
    if not head:
        return
    body_size = body_text_size(segments)
    title_lines = _title_lines(article, head, segments, body_size)
    if not title_lines:  # no title told by its size or its place: the authors' gaps from the end alone
        fill_from_the_end(article)
        if article.title:  # amsart's 'Abstract.' run in, as on any page
            article.abstract = headed_abstract(article.pages[at])
        return
    _set_title(article, title_lines)
    floor = MARGIN * height if height else float("-inf")
    under_title = _below_title(segments, floor, min(s.y for s in title_lines) - 0.1)
    above_drop = _above_drop_capital(under_title, body_size)
    below = [s for s in _in_title_column(above_drop, title_lines, segments)
             if not _CIRCULATION_NOTICE.search(s.text)]  # no name or address, nor prose ending them
    end = _block_end(below)
    article.authors = page_authors(below[:end.cut], article.pages[at])
    fill_from_the_end(article, name_marks(below[:end.cut]), segments)
    # (a drop capital under the lines kept opens the body: they end above it)
    _read_abstract(article, at, below, end, body_size, before_body=len(above_drop) < len(under_title))


# A journal's ISSN or its publisher's web address ('ISSN 2073-4425', 'www.mdpi.com/journal/genes',
# 'Available online at www.sciencedirect.com', 'Journal homepage: ...'): the lines of a journal's logo block,
# never an article's. An address on a line of its own or after those words only: a project's ('Code:
# www.x.org') is not.
_JOURNAL_ADDRESS = re.compile(r"\bE?ISSN:?\s*\d{4}-?\d{3}[\dXx]\b|\bjournal homepage\b|"
                              r"^(?:Available online at\s+)?(?:https?://)?www\.[\w-]+\.\w+\S*$",
                              re.IGNORECASE)


def _logo(seg: Segment, addresses: list[Segment]) -> bool:
    """A line set directly over or under a journal's ISSN or its publisher's web address (``addresses``: the
    page's lines holding one, ``_JOURNAL_ADDRESS``),
    within two of its sizes and across the same stretch of the page, is the journal's logo or the platform's,
    however large it is set (MDPI's 'genes' over 'ISSN 2073-4425' and 'www.mdpi.com/journal/genes'; Elsevier's
    'ScienceDirect' under 'Available online at www.sciencedirect.com'; Taylor & Francis's and Hindawi's
    journal name by its ISSN): a title stands apart from the journal's address block."""
    return seg not in addresses and any(abs(other.y - seg.y) < 2 * seg.size and other.x0 < seg.x1
                                        and seg.x0 < other.x1 for other in addresses)


def _in_title_column(below: list[Segment], title_lines: list[Segment],
                     segments: list[Segment]) -> list[Segment]:
    """The lines under the title in its column, where the title stands in a page's first column with the
    body's prose beside it (TUGboat: 'The cals package: Multipage tables' over 'Oleg Parashchenko' in the left
    column, the right column's text level with them): the other column's lines are the body's, never the
    author block's, wherever the text order or a reading by rows puts them. A column beside the title holds a
    line of prose level with the title's lines, starting right of them; a line starting left of it stays.
    Likewise a side column left of the title (Frontiers: 'OPEN ACCESS', 'EDITED BY', the editors and
    reviewers with their institutions, level with the title set in the right column): a line ending left of
    the title's lines, where two or more such lines from one left edge stand level with them, is the side
    column's, never the author block's."""
    left, right = min(s.x0 for s in title_lines), max(s.x1 for s in title_lines)
    lowest, top = min(s.y for s in title_lines), max(s.y for s in title_lines)
    level = [s for s in segments if lowest - s.size < s.y <= top + s.size]
    # (a column: two lines of words or more from one left edge; a stamp set up the margin or a line's number
    # is none)
    side = [s for s in level if s.x1 < left and not vertical(s) and re.search(r"[^\W\d_]{2}", s.text)]
    if len(side) >= 2 and max(s.x0 for s in side) - min(s.x0 for s in side) < _SIDE_EDGE:
        below = [s for s in below if s.x1 >= left]
    beside = [s for s in level if s.x0 > right and is_prose(s.text)]
    if not beside:
        return below
    edge = min(s.x0 for s in beside)
    return [s for s in below if s.x0 < edge]


_SIDE_EDGE = 2.0  # a side column's lines start within this many points of one left edge


def _head(segments: list[Segment]) -> list[Segment]:
    """The lines of the page's top half that may be its title: no header, notice or journal's banner
    (``_NOT_TITLE``, ``_banner``)."""
    if not segments:
        return []
    top = max(s.y for s in segments)
    addresses = [s for s in segments if _JOURNAL_ADDRESS.search(s.text)]
    masthead, footer_name = _masthead(segments), _footer_name(segments)  # (each scans the page once)
    header = _over_volume_line(segments)
    # A single letter is never the title: a drop capital opening the first paragraph ('T' of 'THE recent
    # development ...') is set larger than any line of the page.
    # Nor is an 'Abstract' heading set in the title's size (PLoS's 2013 template): the author block is above
    # it.
    head = [s for s in segments if s.y >= top / 2 and not _NOT_TITLE.search(s.text) and len(s.text) > 1
            and not re.fullmatch(r"(?:Abstract|ABSTRACT|Summary|SUMMARY)[.:]?", s.text.strip())
            and not _banner(s, segments) and not masthead(s) and not footer_name(s)
            and not vertical(s) and not _logo(s, addresses) and id(s) not in header]
    return [s for s in head if not _journals_name_on_top(s, head)]


def _journals_name_on_top(seg: Segment, head: list[Segment]) -> bool:
    """A line that is a journal's whole name as the lexicon knows it, in two words or more, with no line of
    its size or larger above it: the journal's logo over the title (PLOS's 'PLOS COMPUTATIONAL BIOLOGY' set
    in the title's size, BMC's 'BMC Genomics' set larger under the small 'BioMed Central'), never the title's
    first line."""
    words = seg.text.split()
    return (len(words) >= 2 and not any(s.y > seg.y and s.size >= seg.size - 0.5 for s in head)
            and journals.full_name(" ".join(words)) is not None)


def vertical(seg: Segment) -> bool:
    """A line set vertically, its letters one above the other: a box narrower than its letters set side by
    side could be (a tenth of a size each, where the narrowest letters take a quarter). A margin's or a
    box's label (DANTE's reprint box: 'Die TeXnische Komödie' up its side, in the title's size), a stamp:
    never the title."""
    letters = len(seg.text.replace(" ", ""))
    return letters >= 4 and seg.x1 - seg.x0 < 0.1 * seg.size * letters


def _title_lines(article: PdfArticle, head: list[Segment], segments: list[Segment],
                 body_size: float) -> list[Segment]:
    """The title's lines: the head's lines in its largest size, with words in small capitals on their
    baselines and a subtitle under them. On a page set in the body's size throughout, the title and names
    in capitals (amsart: both filled in here, no lines returned) or the lines centred over the first centred
    line of names; [] when there are none."""
    title_size = max(s.size for s in head)
    if title_size <= body_size + 0.5:  # no larger type than the body's: no title to tell by its size ...
        _capitals_head(article, head)  # ... unless set in capitals over a line of names in capitals (amsart)
        return [] if article.title else _centred_title(head, segments)  # ... or centred over names
    lines = [s for s in head if abs(s.size - title_size) < 0.5]
    # Words in small capitals sit on a title line's baseline in a smaller size: they are the title's too.
    rows = {round(s.y) for s in lines}
    lines = _in_rows([s for s in head if s in lines or s.size >= 0.6 * title_size
                      and any(abs(s.y - y) < 1.0 for y in rows)], title_size)
    lines = _below_rubric(_above_byline(lines, title_size))
    going_on = _subtitle(lines, head, body_size)
    closed = None if going_on else _closed_subtitle(lines, head, body_size)
    if closed is None:
        return lines + going_on
    if ":" not in " ".join(s.text for s in lines):  # the colon a citation sets between title and subtitle
        lines = [*lines[:-1], replace(lines[-1], text=f"{lines[-1].text}:")]
    return [*lines, closed]


# Words of one title line stand on baselines this part of its size apart at the most: a scan's OCR layer boxes
# each word on its own baseline, and a skewed page sets them a few points apart (serial-histograms-vldb's
# 'Universality' 3 points under 'of Serial', in 16-point type); a title's lines stand a whole size apart.
_ROW_SPREAD = 0.3


def _in_rows(lines: list[Segment], size: float) -> list[Segment]:
    """Title segments in reading order: top to bottom by row, each row left to right, a row holding the
    segments whose baselines stand within ``_ROW_SPREAD`` of the size of its top one."""
    ordered: list[Segment] = []
    row: list[Segment] = []
    for seg in sorted(lines, key=lambda s: -s.y):
        if row and row[0].y - seg.y > _ROW_SPREAD * size:
            ordered += sorted(row, key=lambda s: s.x0)
            row = []
        row.append(seg)
    return ordered + sorted(row, key=lambda s: s.x0)


def _closed_subtitle(title_lines: list[Segment], head: list[Segment], body_size: float) -> Segment | None:
    """A subtitle under a title that ends closed (no colon or dash to say it goes on, nor a line in lower
    case: ``_subtitle``): the one line directly under the title (within two of its sizes), set smaller than
    the title and larger than the body, directly over the byline (a row of names). It is no name itself
    (EMBO Reports' 'The joys and perils of AlphaFold' over 'Anastassis Perrakis & Titia K Sixma', both 12 pt,
    in two fonts; LNCS's and acmart's \\subtitle over the authors) and is set apart from the byline in size,
    style or font; or, read as names as a line in capitals is ('Bootstrapping Reasoning With Reasoning'), it
    is set in the title's weight or slant and larger than the byline under it (the NeurIPS-style preprint's
    second title line over its bold names). Else None: a byline set larger than the body stays the byline."""
    if not title_lines:
        return None
    last = min(title_lines, key=lambda s: s.y)
    rows = row_groups([s for s in head if s.y < last.y - last.size / 3])
    if len(rows) < 2 or len(rows[0]) != 1:
        return None
    line, byline = rows[0][0], LEAD_SEPARATOR.sub("", " ".join(s.text for s in rows[1]))
    if (last.y - line.y > 2 * last.size or not body_size + 0.5 < line.size < last.size - 0.5
            or not re.search(r"[^\W\d_]{3}", line.text)  # a mark set apart ('1,*' by names): no subtitle
            or re.match(r"[A-Z][a-z]+(?: [a-z]+)?:", line.text)  # a labelled note: 'Running title:'
            or re.search(rf"\b{MONTH} (?:\d{{1,2}}, )?(?:19|20)\d\d\b", line.text)  # nor a date: 'March 2021'
            or INSTITUTION.search(line.text) or is_prose(line.text) or not is_name_list(byline)):
        return None
    if not is_name_list(LEAD_SEPARATOR.sub("", line.text)):
        # (set as the byline is, in its size, style and font, it may be the byline's own first line: R News's
        # 'The Interface to libsvm in package e1071' over 'by David Meyer', both in one bold 12-pt font)
        names = max(rows[1], key=lambda s: len(s.text))
        same = abs(line.size - names.size) < 0.5 and (line.style, line.font) == (names.style, names.font)
        return None if same else line
    styled = line.style != "" and line.style == _row_style(row_groups(title_lines)[0])
    return line if styled and line.size > max(s.size for s in rows[1]) + 0.5 else None


_TITLE_LEADING = 2.0  # a title's lines stand closer than this many of its sizes, even double-spaced ones


def _above_byline(lines: list[Segment], title_size: float) -> list[Segment]:
    """The title's lines above a byline set in the title's size: a row of names under the title's first row,
    set apart from the row above by a wider gap than a title's lines leave (``_TITLE_LEADING``) or in another
    style than the title's (the IEEE signal-processing template's italic names under its bold title in
    capitals, both 12 pt; an article class whose title and byline share one size, with the date and the first
    heading under them). The byline and every line under it are no part of the title. A title's own line in
    capitals reads as names too ('Under Functional Constraint'), but stands at the title's leading, in its
    style; and a line under an open end (a colon or a dash) goes on with the title in whatever style (the
    Journal of Cryptology's italic 'Unconditional Sender and Recipient Untraceability' under its bold
    'The Dining Cryptographers Problem:')."""
    grouped = row_groups(lines)
    for above, row in itertools.pairwise(grouped):
        text = LEAD_SEPARATOR.sub("", " ".join(s.text for s in row))
        wide = above[0].y - row[0].y > _TITLE_LEADING * title_size
        apart = wide or _row_style(row) != _row_style(grouped[0])
        open_end = above[-1].text.rstrip().endswith((":", "—", "–"))  # the title goes on under it
        if apart and not open_end and is_name_list(text):
            return [s for s in lines if s.y > row[0].y + title_size / 3]
    return lines


_RUBRIC_GAP = 1.3  # a rubric stands this many times the title's own leading above it, or more
_RUBRIC_MOST_WORDS = 6


def _below_rubric(lines: list[Segment]) -> list[Segment]:
    """The title's lines under a rubric set in the title's size: a short first row (a series' or a section's
    name: Science in Context's 'Classical Text in Translation', a 'Research Article' or 'Perspective' label in
    the title's type) standing further above the next row than the title's own rows stand apart. Only where
    the title has two rows or more under it, whose leading tells the title's own; a first row ending open (a
    colon or a dash) goes on with the title."""
    grouped = row_groups(lines)
    if len(grouped) < 3:
        return lines
    first, *title = grouped
    leading = max(above[0].y - row[0].y for above, row in itertools.pairwise(title))
    words = len(" ".join(s.text for s in first).split())
    open_end = first[-1].text.rstrip().endswith((":", "—", "–", "-"))
    if words <= _RUBRIC_MOST_WORDS and not open_end and first[0].y - title[0][0].y > _RUBRIC_GAP * leading:
        return [s for s in lines if s not in first]
    return lines


def _row_style(row: list[Segment]) -> str:
    """The style of a row's longest segment (a row of names split at its commas: ', S. He Yuxun')."""
    return max(row, key=lambda s: len(s.text)).style


def _set_title(article: PdfArticle, title_lines: list[Segment]) -> None:
    """The title from its lines, unless they run longer than any title."""
    article.title = join_title([s.text for s in title_lines])
    if len((article.title or "").split()) > _TITLE_MOST_WORDS:
        article.title = None  # the body's paragraphs taken for a title: none is sure
        article.reasons["title"] = (f"the lines set largest on page 1 run to more than {_TITLE_MOST_WORDS} "
                                    "words: prose, not a title")


@dataclass
class _BlockEnd:
    """Where the author block ends among the lines under the title, and what ends it."""

    heading: int | None  # the line of the abstract's heading or a structured abstract's first; None: no such
    structured: bool  # the heading is a structured abstract's first ('Background:')
    cut: int  # the first line after the block


def _block_end(below: list[Segment]) -> _BlockEnd:
    """Where the author block under the title ends: at the abstract's heading (or a structured abstract's
    first heading), or before, at a line of prose, a first section's heading, a caption or an abstract box's
    head; without a heading, also at a wide vertical gap, and after ``_BLOCK_LINES`` lines at the most."""
    heading = next((i for i, s in enumerate(below) if is_abstract_head(s)), None)
    most = _within_lines(below, _BLOCK_LINES)
    structured = structured_head(below[:most]) if heading is None else None
    heading = structured if structured is not None else heading
    # Without an abstract heading the block ends at the first section heading or line of prose.
    block = below[:heading] if heading is not None else below[:most]
    cut = next((i for i, s in enumerate(block) if is_prose(s.text) and not _names_mail_line(block, i)
                or is_first_section(s.text)
                or _CAPTION.match(s.text) or _BOX_HEAD.match(s.text) or _opens_paragraph(block, i)
                or heading is None and i
                and block[i - 1].y - s.y > _BLOCK_GAP * max(s.size, block[i - 1].size)),
               len(block))
    return _BlockEnd(heading, structured is not None, cut)


def _names_mail_line(block: list[Segment], i: int) -> bool:
    """A line of e-mail addresses alone between the line of names over it and an institution under it, as
    acmart sets them ('{bernhard.kerbl | michael.kenzel | ...}@icg.tugraz.at' between the names and 'Graz
    University of Technology'): contacts, not prose, so the institution under it stays in the author block."""
    return (0 < i < len(block) - 1 and not ADDRESSES.sub(" ", block[i].text).strip(" ,;|")
            and is_name_list(LEAD_SEPARATOR.sub("", block[i - 1].text))
            and INSTITUTION.search(block[i + 1].text) is not None)


def _opens_paragraph(block: list[Segment], i: int) -> bool:
    """A short line of running text (four words or more, most in lower case, no institution, no name) with a
    line of prose directly under it, in its size and from its left edge: the first line of a paragraph, which
    ends the author block even where it is too short to read as prose itself (PNAS: 'The eukaryotic
    chromosome is a conserved' under the address, the body's first line in a narrow column)."""
    if i + 1 >= len(block):
        return False
    line, under = block[i], block[i + 1]
    words = re.findall(r"[^\W\d_][\w'’-]*", line.text)
    return (len(words) >= 4 and sum(w[0].islower() for w in words) > len(words) / 2
            and not INSTITUTION.search(line.text) and not is_name_list(LEAD_SEPARATOR.sub("", line.text))
            and is_prose(under.text) and abs(under.size - line.size) < 0.3
            and abs(under.x0 - line.x0) < line.size and 0 < line.y - under.y < 3 * line.size)


def _read_abstract(article: PdfArticle, at: int, below: list[Segment], end: _BlockEnd,
                   body_size: float, before_body: bool = False) -> None:
    """The abstract, by what ends the author block (``end``): a structured abstract's first heading, an
    abstract's heading, or the paragraph under the block (unless a section opens there; ``before_body``: a
    drop capital under it opens the body); without a heading and none found, a manuscript's abstract page
    after the title page."""
    page = article.pages[at]
    if end.structured:
        article.abstract = structured_abstract(page)
    elif end.heading is not None:
        article.abstract = headed_abstract(page, beside=label_beside(below[end.heading], below))
    elif 0 < end.cut < len(below) and not SECTION.match(below[end.cut].text):
        prose = end.cut
        if _BOX_HEAD.match(below[prose].text):  # the abstract's box: its prose starts under the heads
            prose = next((i for i in range(prose, len(below)) if is_prose(below[i].text)), prose)
        article.abstract = unheaded_abstract(page, below[end.cut - 1], below[prose:], body_size, before_body)
        if article.abstract is None:
            article.reasons["abstract"] = (
                "no 'Abstract' heading, and the prose under the authors is neither "
                "closed by a keyword line nor set apart from the body in size, measure or style"
            )
    if end.heading is None and article.abstract is None and not end.structured:
        block = below[:end.cut]
        bottom = min((s.y for s in block), default=float("inf"))
        article.abstract = styled_paragraph([s for s in below if s.y < bottom])
        if article.abstract is not None:
            article.reasons.pop("abstract", None)
    if end.heading is None and article.abstract is None:
        article.abstract = abstract_page(article.pages, at)


def _above_drop_capital(below: list[Segment], body_size: float) -> list[Segment]:
    """The lines under the title above a drop capital's top: a drop capital (one letter set larger than
    1.5 body sizes) opens the body, and the short lines of the narrow measure beside it ('ast December, the
    artificial intelligence', under 'L', in EMBO Reports) are its first paragraph, never an affiliation."""
    cap = next((s for s in below if len(s.text) == 1 and s.text.isalpha() and s.size > 1.5 * body_size), None)
    if cap is None:
        return below
    top = cap.y + 0.7 * cap.size  # (a capital stands about 0.7 of its size above its baseline)
    return [s for s in below if s is not cap and s.y > top]


def _subtitle(title_lines: list[Segment], head: list[Segment], body_size: float) -> list[Segment]:
    """The lines that go on with a title in a smaller size, directly under it: after a title that ends open
    (a colon or a dash: 'ProtTrans:' over 'Toward Understanding ...'), or opening in lower case, which no
    line of its own does ('ProtGPT2 is a deep unsupervised language model' over 'for protein design'), and
    the subtitle's next lines in its size. Each is set larger than the body, stands within two of its sizes
    of the line above, and is no line of names, nor of a name's marks raised off its row onto a line of their
    own (Elsevier's 'a,∗' over 'Olga Lyashevska', a lower-case letter that would go on with the title)."""
    if not title_lines:
        return []
    last = min(title_lines, key=lambda s: s.y)
    open_end = join_title([s.text for s in title_lines]) or ""
    taken: list[Segment] = []
    for seg in sorted((s for s in head if s.y < last.y and s not in title_lines), key=lambda s: -s.y):
        next_line = bool(taken) and abs(seg.size - taken[-1].size) < 0.5  # the subtitle's, in its size
        if (last.y - seg.y > 2 * last.size or seg.size <= body_size + 0.5 or _marks_only(seg.text)
                or is_name_list(seg.text) and not next_line
                or not (open_end.endswith((":", "—", "–")) or seg.text[:1].islower() or next_line)):
            break
        taken.append(seg)
        last, open_end = seg, seg.text
    return taken


def _marks_only(text: str) -> bool:
    """A line of marks alone: letters one at a time between commas, digits and symbols ('a,∗', 'b', '1,2',
    'a,b,c'), no word of two letters ('in R' is a subtitle's)."""
    return not re.search(r"[^\W\d_]{2}", text)


def _centred_title(head: list[Segment], segments: list[Segment]) -> list[Segment]:
    """The title of a page set in one size throughout (a Word-made manuscript): the lines centred on the page
    (or set in bold) directly above its first centred line of names, up to a line that is neither (a running
    head or a notice set flush left), a name or prose; none unless they hold three words or more. A line of
    names set flush left or indented serves as well under a title told by its weight alone: upright, directly
    under a bold line (TUGboat's bold title at the head of its left column over the author's name, both in
    the body's size; a journal's instructions for a Word manuscript: title in bold, names in plain type)."""
    left, right = min(s.x0 for s in segments), max(s.x1 for s in segments)

    # A full-width line of prose is no centred line; one in capitals may be (the Annals' title in capitals
    # over its 'By' byline, as wide as the text block but for a few points).
    def centred(seg: Segment) -> bool:
        return abs(seg.center - (left + right) / 2) < 2 * seg.size and (
            seg.x0 > left + seg.size or _in_capitals(seg) and seg.x0 > left)

    # (a line of names a superscript mark split, 'Ada Lovelace¹' ', Alan Turing²', centred as one)
    ordered = sorted(merge_spaced(head), key=lambda s: -s.y)
    for i, seg in enumerate(ordered):
        above = ordered[:i]
        if not centred(seg):  # the lines of its column above it (another column's lines run beside them)
            above = [s for s in above if s.x0 < seg.x1 and seg.x0 < s.x1]
            bold_over = above and above[-1].style == "bold" and above[-1].y - seg.y < 3 * seg.size
            if not bold_over or seg.style:
                continue
        if is_name_list(LEAD_SEPARATOR.sub("", seg.text)):
            # flush left, a Word manuscript's title is set apart by its weight alone
            title = list(itertools.takewhile(
                # (a title in sentence case reads as prose, but is set bold or italic where prose is not)
                lambda s: (centred(s) or s.style == "bold") and not (is_prose(s.text) and not s.style)
                and not is_name_list(s.text), reversed(above)))[::-1]
            return title if len(" ".join(s.text for s in title).split()) >= 3 else []
    return []


def join_title(lines: list[str]) -> str | None:
    """A title's lines (or the pieces of one line a change of font split: 'Kelips' in typewriter type before
    ': Building ...') as one, without the footnote marks after it; punctuation closes up to the word before
    it, as it is printed."""
    joined = re.sub(r"\s+([:;,.?!])", r"\1", " ".join(lines))
    return _TITLE_MARKS.sub("", joined).strip() or None


def _below_title(segments: list[Segment], floor: float, under: float) -> list[Segment]:
    """The segments under the title, in the PDF's text order; top to bottom where that order draws lines
    above the abstract heading after it in its column (a Word-made PDF may draw its title block after the
    body)."""
    below = [s for s in segments if floor < s.y < under]
    end = next((i for i, s in enumerate(below) if is_abstract_head(s)), None)
    if end is None:
        return _rows(below) if _block_drawn_last(below) else below
    heading = below[end]
    # Lines drawn after the heading and above it wholly left of its column are a sidebar's or the margin's
    # (PLOS: its left column and the 'Check for updates' glyphs), never the author block's.
    beside = {id(s) for s in below[end + 1:] if s.y > heading.y + heading.size and s.x1 < heading.x0}
    below = [s for s in below if id(s) not in beside]
    if any(s.y > heading.y + heading.size for s in below[end + 1:]):
        return _rows(below)
    # A column beside the article's text (eLife's and MDPI's sidebar of dates, citation and licence) may come
    # first in the text order though it stands lower on the page than the abstract's heading: the heading
    # closes the author block, so no line under it is the block's, wherever the text order puts it.
    return [s for i, s in enumerate(below) if i >= end or s.y > heading.y - heading.size]


def _block_drawn_last(below: list[Segment]) -> bool:
    """Whether the PDF draws the lines under the title after the body (Fibre Diffraction Review:
    'Introduction' and the two columns first, the names and their address last): a line drawn later stands
    above the first line drawn and across the page's middle, as a block over both columns does. (A two-column
    page's right column, drawn after the names and starting higher, stays clear of the middle: the text order
    stands.)"""
    if not below:
        return False
    middle = (min(s.x0 for s in below) + max(s.x1 for s in below)) / 2
    first = below[0]
    return any(s.y > first.y + first.size and s.x0 < middle < s.x1 for s in below[1:])


def _rows(segments: list[Segment]) -> list[Segment]:
    """Segments top to bottom, row by row, each row left to right (``row_groups``)."""
    return [seg for row in row_groups(segments) for seg in row]


def _within_lines(segments: list[Segment], lines: int) -> int:
    """How many of ``segments`` (in the page's text order) lie on its first ``lines`` lines: a line is a row
    of ``row_groups``, however many segments the extractor cut it into (Elsevier's ScienceDirect bylines
    give each name and each raised letter after it a segment of its own: 'Zepeng Mu' / 'a' / ', Zhuoning Zou'
    / 'a', 44 segments over four lines of 22 names)."""
    row_of = {id(seg): at for at, row in enumerate(row_groups(segments)) for seg in row}
    seen: set[int] = set()
    for i, seg in enumerate(segments):
        seen.add(row_of[id(seg)])
        if len(seen) > lines:
            return i
    return len(segments)


_BLOCK_GAP = 4.0  # without an abstract heading, a vertical gap of this many type sizes ends the author block
_BLOCK_LINES = 30  # the most lines an author block without an abstract heading is read for


# A figure's or table's caption: a teaser figure between the authors and the abstract ends the author block.
_CAPTION = re.compile(r"^(?:Figure|Fig\.|Table)\s+\d+[.:]")


# Words of a title, never of a line of names, when both are set in capitals ('FROM DOMINOES TO HEXAGONS').
_TITLE_WORDS = re.compile(r"\b(?:TO|FROM|OF|THE|IN|ON|FOR|WITH|AN?|IS|ARE|VIA|INTO)\b")


def _capitals_head(article: PdfArticle, head: list[Segment]) -> None:
    """The title and authors of a page whose title is set in the body's size: (amsart) the lines in capitals
    at the top of the page ('ON MULTIVARIATE t AND GAUSS PROBABILITIES IN R'; a single small letter, a
    variable, may stand among them) directly over a line of names in capitals ('TORSTEN HOTHORN, FRANK
    BRETZ, AND ALAN GENZ')."""
    ordered = sorted(head, key=lambda s: -s.y)
    for i, seg in enumerate(ordered):
        names = LEAD_SEPARATOR.sub("", seg.text)
        if not (names.isupper() and is_name_list(names)) or _TITLE_WORDS.search(names):
            continue
        title = list(itertools.takewhile(_in_capitals, reversed(ordered[:i])))[::-1]
        if not title:  # no title above it: a header's name in capitals ('AMERICAN MATHEMATICAL SOCIETY')
            continue
        # Above the title only a header set smaller than it ('Volume 30, Number 2, April 1994').
        above = ordered[:i - len(title)]
        if all(s.size < title[0].size - 0.5 for s in above):
            article.title = join_title([s.text for s in title])
            article.authors = block_authors([seg])
        return


def _in_capitals(seg: Segment) -> bool:
    letters = [c for c in seg.text if c.isalpha()]
    words = seg.text.split()
    return len(words) >= 3 and sum(c.islower() for c in letters) <= max(1, len(words) // 4) and not (
        is_name_list(seg.text) and not _TITLE_WORDS.search(seg.text))
