"""An article's abstract, read from its first page's text and segments (``pdf_page``): under an 'Abstract'
heading, a structured abstract from its first heading ('Background:'), the paragraph under the author block
set apart from the body (in size, measure or style, or closed by a keyword line), or a manuscript's abstract
page. Which of them a page holds is decided in ``pdf_layout.describe``."""

from __future__ import annotations

import itertools
import re

from kb.papers.pdf_names import INSTITUTION, is_prose
from kb.papers.pdf_page import MARK_CLOSE, MARK_OPEN, NO_SIZE, Segment, row_groups


def is_cover(pages: list[str]) -> bool:
    """A cover page: page 1 has no abstract, and page 2 opens with the article (an abstract near its top), or
    page 1 is a digital archive's cover sheet (``_COVER_SHEET``), whatever page 2's abstract looks like."""
    if len(pages) < 2 or _ABSTRACT_TEXT.search(pages[0]):
        return False
    return bool(
        re.search(r"^\s*(?:Abstract|ABSTRACT)\b", "\n".join(pages[1].splitlines()[:25]), re.MULTILINE)
    ) or len(set(_COVER_SHEET.findall(pages[0]))) >= 2


# The labelled lines of a digital archive's or a publisher's cover sheet put before an article it serves:
# JSTOR's ('Author(s): ...', 'Stable URL: ...', with 'Source:' and 'Published by:'), Taylor & Francis's ('To
# cite this article: ...', 'To link to this article: ...', 'Article views: ...'). Two different ones make page
# 1 a cover sheet, even where the article's page 2 has no 'Abstract' heading (a 1980s journal's unheaded
# abstract). Labels an article's own page 1 may print ('Source:' under a table, 'Published online:') are none.
# ResearchGate's cover page says so in two sentences of its own ('See discussions, stats, and author profiles
# for this publication at: https://www.researchgate.net/...', 'All content following this page was uploaded
# by ...').
_COVER_SHEET = re.compile(r"^\s*(?:(Author\(s\)|Stable URL|To cite this article|To link to this article|"
                          r"Article views)\s*:|(See discussions, stats, and author profiles for this "
                          r"publication|All content following this page was uploaded by)\b)", re.MULTILINE)


# An abstract's heading, opening a line of page 1; in small capitals, which the text gives in lower case, a
# run-in heading ends with its stop or colon ('abstract. DCpic is ...'): a line of the body may open with the
# word ('abstract syntax trees are ...').
_SMALL_CAPITALS_HEAD = r"(?:abstract|summary)[.:—]"


def letterspaced(word: str) -> str:
    """A pattern for a word whose letters are set apart by single spaces, as Elsevier sets its boxes' heads
    ('a b s t r a c t', 'A R T I C L E  I N F O'), in either case."""
    return " ".join(f"[{c.lower()}{c.upper()}]" for c in word)


# A heading in letter-spaced small capitals or capitals, the line's whole text ('a b s t r a c t',
# 'A B S T R A C T', 'S U M M A R Y'): Elsevier's journals, and others' in their style.
_SPACED_HEAD = rf"(?:{letterspaced('abstract')}|{letterspaced('summary')})"
ABSTRACT_HEAD = re.compile(
    rf"^(?:Abstract|ABSTRACT|Summary|SUMMARY)\b|^{_SMALL_CAPITALS_HEAD}|^{_SPACED_HEAD}$")
# A heading in small capitals whose smaller capitals the extractor took for a raised mark (``Segment.marked``:
# 'A⟨BSTRACT⟩. Let A be ...', JIPAM's and amsart-like journals' run-in 'ABSTRACT.'): the capitals closed up.
_SMALL_CAPITALS_MARKED = re.compile(rf"(?<=[A-Z]){MARK_OPEN}([A-Z]+){MARK_CLOSE}")


def is_abstract_head(seg: Segment) -> bool:
    """Whether a line of page 1 opens with an abstract's heading (``ABSTRACT_HEAD``), its small capitals read
    as a mark or not."""
    closed_up = _SMALL_CAPITALS_MARKED.sub(r"\1", seg.marked)
    return bool(ABSTRACT_HEAD.match(seg.text) or ABSTRACT_HEAD.match(closed_up))
# The headings of the lines that close an abstract: keywords, the classification lines of ACM and IEEE.
# (in small capitals, lower case before a colon: 'keywords: ...')
_KEYWORD_HEADS = (r"Keywords?|Key\s?words|KEY\s?WORDS|keywords?(?=:)|Index Terms|"
                  r"Categories and Subject Descriptors|"
                  r"General Terms|Key Words and Phrases|CR Categories|JEL|CCS Concepts|ACM Reference Format|"
                  r"Additional Key Words")


# The first heading of a structured abstract set without an 'Abstract' heading over it (BMC's and medical
# journals' 'Background', OUP's 'Motivation'), alone on its line or run in with a colon.
_STRUCTURED_HEADINGS = (r"(?:Background|BACKGROUND|Motivation|MOTIVATION|Objectives?|OBJECTIVES?|"
                        r"Purpose|PURPOSE)")
_STRUCTURED_HEAD = re.compile(rf"^{_STRUCTURED_HEADINGS}(?:\s*:|$)")


def structured_head(lines: list[Segment]) -> int | None:
    """Where a structured abstract's first heading stands among the lines under the title, when no line of
    prose or section heading comes before it (after those, 'Background' heads a section of the body); else
    None. The author block ends there: the heading is no part of the last affiliation ('..., Country
    Background')."""
    for i, seg in enumerate(lines):
        if is_prose(seg.text) or is_first_section(seg.text):
            return None
        if _STRUCTURED_HEAD.match(seg.text):
            return i
    return None


def abstract_page(pages: list[str], at: int) -> str | None:
    """A manuscript's abstract page: the page after the title page opening (under its running head) with
    an 'Abstract' heading, when the body has not begun on the title page (an abstract comes before the
    introduction: after one, 'SUMMARY' atop page 2 is a running head)."""
    if len(pages) <= at + 1 or re.search(r"^\s*(?:(?:1|I)\.?\s+)?(?:Introduction|INTRODUCTION)\b", pages[at],
                                         re.MULTILINE):
        return None
    opening = "\n".join(pages[at + 1].splitlines()[:3])
    headed = re.search(r"^\s*(?:Abstract|ABSTRACT|Summary|SUMMARY)\b", opening, re.MULTILINE)
    return headed_abstract(pages[at + 1]) if headed else None


_KEYWORD_LINE = re.compile(rf"^\s*(?:{_KEYWORD_HEADS})\b|^[^|\n]+(?: \| [^|\n]+){{2,}}$", re.MULTILINE)


def unheaded_abstract(page: str, last: Segment, prose: list[Segment], body_size: float,
                      before_body: bool = False) -> str | None:
    """The abstract of a page without an 'Abstract' heading: the paragraph under the author block (``last``:
    its last line; ``prose``: the segments from the paragraph's first line on), when a keyword line closes it
    ('Keywords: ...', 'Key Words and Phrases', terms between bars: 'statistical computing | simulation'), or
    when it is set in a size other than the body's and a section heading closes it, or, with no section on
    the page, the end of its lines in that size; or when it is set apart from the body in measure or style
    (``_set_apart``), to the end of its lines set so; or when a drop capital opens the body under it
    (``before_body``: ``prose`` ends above the capital), to the end of its lines in its size, three or more:
    the body begins with the capital, so the paragraph above it is not the body's (Science's bold summary
    across the page over its columns, PNAS's abstract over the body's drop capital, Scientific American's
    standfirst). Anything else may be the article's first paragraph, and so is a paragraph whose lines in
    its size flow on into another column with no keyword or section heading closing them
    (``_spans_columns``)."""
    if re.match(r"[A-Z][a-z]+:", prose[0].text):  # a labelled note ('Advisers: ...'), not an abstract
        return None
    after = page.find(last.text)
    start = page.find(prose[0].text[:40], after + len(last.text) if after >= 0 else 0)
    if start < 0:
        return None
    rest = page[start:]
    section = re.search(r"^\s*(?:(?:1|I)\.?\s+)?(?:Introduction|INTRODUCTION)\b", rest, re.MULTILINE)
    keywords = _KEYWORD_LINE.search(rest)
    # Lines in the paragraph's size that run on into another column before a heading closes them are the
    # body flowing through the page's columns (a PNAS commentary's three under its address, whose size a
    # figure's labels and caption outnumber), which a journal's footer between bars does not close.
    run = list(itertools.takewhile(lambda s: abs(s.size - prose[0].size) < 0.3, prose))
    flowing = _spans_columns(run)
    if keywords and (section is None or keywords.start() < section.start()):
        headed = re.match(rf"\s*(?:{_KEYWORD_HEADS})\b", keywords.group()) is not None
        stop: int | None = keywords.start() if headed or not flowing else None
    elif before_body:  # (a column beside the paragraph, running up by it, is the body's: not its lines)
        stop = _end_of_run(rest, [s for s in run if s.x0 < prose[0].x1 and prose[0].x0 < s.x1])
    elif prose[0].size < NO_SIZE:  # a bitmap font's glyphs without a size: nothing sets the paragraph apart
        stop = None
    elif abs(prose[0].size - body_size) > 0.5:
        stop = section.start() if section else None if flowing else _end_of_run(rest, run)
    else:
        stop = _end_of_run(rest, _set_apart(prose, body_size))
    return " ".join(rest[:stop].split()) or None if stop is not None else None


# The journal's line crediting the article's editor, between the author block and the abstract (PNAS: 'Edited
# by Erminio Costa, University of Illinois, Chicago, IL, and approved June 28, 2002').
_EDITED_BY = re.compile(r"^(?:Edited|Communicated|Contributed|Reviewed|Approved) by\b")


def styled_paragraph(under: list[Segment]) -> str | None:
    """The abstract of a page without an 'Abstract' heading whose text order does not put it under the author
    block: the topmost paragraph under the block (``under``: the page's lines below it, in any order) set in
    bold or italic where the body is upright, three lines or more in one size and column, read top to bottom
    (Nature's bold summary across the page, drawn after the body's columns; PNAS's bold abstract under its
    'Edited by' line). A paragraph of the body, a caption or a line of names is none: the body's lines in its
    size must be mostly upright, and the paragraph's lines must be prose."""
    lines = sorted((s for s in under if s.size >= NO_SIZE), key=lambda s: -s.y)
    first = next((s for s in lines if s.style and is_prose(s.text)), None)
    above = [s for s in lines if first is not None and s.y > first.y and is_prose(s.text)]
    if first is None or any(not _EDITED_BY.match(s.text) for s in above):
        return None  # (the topmost prose under the block is the paragraph, or there is none)
    # The paragraph's rows in its column, top to bottom, each read left to right: a glyph the font set in
    # another size splits a line into pieces on baselines a little apart (PNAS: 'Salvinorin A, is' 'a'
    # 'hallucinogenic plant'), which are one row; a glyph of no size is the row's too ('a' is a word).
    rows = row_groups([s for s in under if s.y < first.y + first.size / 2 and s.x0 < first.x1
                       and first.x0 < s.x1])
    paragraph = list(itertools.takewhile(lambda row: all(
        s.style == first.style and abs(s.size - first.size) < 0.3 or len(s.text) <= 2 for s in row), rows))
    # the body: the other lines of prose in the paragraph's size or larger, mostly upright
    inside = {id(s) for row in paragraph for s in row}
    body = [s for s in lines if id(s) not in inside and s.size > first.size - 0.5 and is_prose(s.text)]
    upright = sum(not s.style for s in body)
    if len(paragraph) < _BODY_LINES or len(body) < _BODY_LINES or upright < 2 * len(body) / 3:
        return None
    text = " ".join(s.text for row in paragraph for s in row)
    return re.sub(r"(?<=[a-z])- (?=[a-z])", "", text)


_BODY_LINES = 3  # the fewest body lines after a paragraph that tell the body's measure and style


def _spans_columns(run: list[Segment]) -> bool:
    """Whether lines of one paragraph's size run on into a column of their own: three lines or more starting
    at one left edge ten type sizes or more from the first line's (an indent is a few sizes at most)."""
    first, size = run[0].x0, run[0].size
    shifted = [s for s in run if abs(s.x0 - first) > 10 * size]
    return any(sum(abs(t.x0 - s.x0) < size for t in shifted) >= _BODY_LINES for s in shifted)


def _set_apart(prose: list[Segment], body_size: float) -> list[Segment]:
    """The lines opening ``prose`` (in the body's size) set apart from the body lines after them: in measure
    (each line inset from both of the body's margins by a type size or more: an abstract narrower than the
    text, as 1980s journals and LNCS set it) or in style (italic or bold where the body is upright: USENIX's
    italic abstract, a bold summary); [] when they are not."""
    first = prose[0]
    run = list(itertools.takewhile(
        lambda s: abs(s.size - first.size) < 0.3 and not SECTION.match(s.text), prose))
    body = [s for s in prose[len(run):] if abs(s.size - body_size) < 0.5]
    if first.style:
        styled = list(itertools.takewhile(lambda s: s.style == first.style, run))  # to a heading in its style
        after = [s for s in prose[len(styled):] if abs(s.size - body_size) < 0.5][:10]
        plain = sum(not s.style for s in after)
        return styled if len(after) >= _BODY_LINES and plain > len(after) / 2 else []
    if len(body) < _BODY_LINES:
        return []
    left, right = min(s.x0 for s in body), max(s.x1 for s in body)
    return list(itertools.takewhile(lambda s: s.x0 >= left + s.size and s.x1 <= right - s.size, run))


def _end_of_run(rest: str, run: list[Segment]) -> int | None:
    """Where a paragraph set apart (``run``: its lines) ends without a section heading after it (a journal's
    page 1 whose body begins on page 2): at the end of its last line, when three lines or more are set so
    and the text holds that line; else None."""
    if len(run) < 3:
        return None
    at = 0
    for seg in run:  # each line's end after the one before it
        found = rest.find(seg.text[-30:], at)
        if found < 0:
            return None
        at = found + len(seg.text[-30:])
    return at
# A first section's heading ('1 Introduction', '1. Motivation', 'I. INTRODUCTION'), never an initial ('I.
# Newton').
SECTION = re.compile(r"^(?:1\.?\s+[A-Z][a-z]+|(?:I\.\s+)?(?:Introduction|INTRODUCTION)|Contents)\b")


def is_first_section(line: str) -> bool:
    """A first section's heading (``SECTION``), never an affiliation a word processor numbered in the text's
    size ('1 University of Alpha, ...', its name's mark '1' typed after it)."""
    return bool(SECTION.match(line)) and not INSTITUTION.search(line)


# Where an abstract ends: the keywords, the classification lines of ACM and IEEE, or the first section.
# (PLoS's 'Author summary' and a 'Significance Statement' follow the abstract as boxes of their own.)
_ABSTRACT_END = (rf"\n\s*(?:{_KEYWORD_HEADS})\b|\n\s*(?:1\.?|I\.)?\s*(?:Introduction|INTRODUCTION)\b|"
                 r"\n\s*(?:Author summary|AUTHOR SUMMARY|Significance Statement)\b|\Z")
# 'Abstract' on a line of its own, or before the text on its line ('Abstract. ...', 'Abstract—...', or after a
# space alone as Springer's journals set it: 'Abstract Protein language models ...').
_ABSTRACT_TEXT = re.compile(
    rf"^\s*(?:(?:Abstract|ABSTRACT|Summary|SUMMARY)\s*(?:[.:—–-]\s*|\n|[ \t]+(?=[A-Z]))"
    rf"|{_SMALL_CAPITALS_HEAD}\s*|{_SPACED_HEAD}[ \t]*\n)"
    rf"(.+?)(?:{_ABSTRACT_END})",
    re.DOTALL | re.MULTILINE,
)
def headed_abstract(first_page: str, beside: str | None = None) -> str | None:
    """The abstract under its heading ('Abstract', 'Summary': on its own line or run in), to the keywords,
    the introduction or an author summary (``_ABSTRACT_END``). Run in after a space, the text opens with a
    capital ('Abstract Protein language models ...'; 'Abstract interpretation is ...' opens a paragraph),
    unless the layout shows the heading is a label of its own with the text ``beside`` it (``label_beside``:
    the line's text, whatever its case); where the text does not run on after the heading so, as under it."""
    if beside:
        opening = r"\s+".join(map(re.escape, beside.split()[:5]))  # its first words, however spaced
        label = re.compile(rf"^\s*(?:Abstract|ABSTRACT|Summary|SUMMARY)[.:]?[ \t]+({opening}.*?)"
                           rf"(?:{_ABSTRACT_END})", re.DOTALL | re.MULTILINE).search(first_page)
        if label:
            return " ".join(label.group(1).split()) or None
    match = _ABSTRACT_TEXT.search(first_page)
    return " ".join(match.group(1).split()) or None if match else None


def abstract_opening_with(page: str, opening: str) -> str | None:
    """The abstract that opens with the words of ``opening`` (a line of the page, however the text spaces
    them), to the keywords, the introduction or an author summary (``_ABSTRACT_END``); None where the page
    does not hold them."""
    words = opening.split()[:6]
    if not words:
        return None
    spaced = r"\s+".join(map(re.escape, words))
    found = re.search(rf"({spaced}.*?)(?:{_ABSTRACT_END})", page, re.DOTALL)
    return " ".join(found.group(1).split()) or None if found else None


def label_beside(heading: Segment, segments: list[Segment]) -> str | None:
    """The text beside an abstract's heading set as a label in a column of its own, left of the text's first
    line (The PracTeX Journal's 'Abstract' beside 'turnstile is a LaTeX package ...'): the heading's segment
    holds the word alone, and another starts right of it, across a gap, on its row; else None."""
    if not re.fullmatch(r"(?:Abstract|ABSTRACT|Summary|SUMMARY)[.:]?", heading.text.strip()):
        return None
    return next((seg.text for seg in segments if seg is not heading
                 and abs(seg.y - heading.y) < heading.size / 2
                 and heading.x1 < seg.x0 < heading.x1 + 3 * heading.size), None)


_STRUCTURED_TEXT = re.compile(rf"^\s*({_STRUCTURED_HEADINGS}\b.+?)(?:{_ABSTRACT_END})",
                              re.DOTALL | re.MULTILINE)


def structured_abstract(first_page: str) -> str | None:
    """A structured abstract without an 'Abstract' heading: from its first heading, which it keeps
    ('Background: ...', as OUP's 'Motivation: ...' under an 'Abstract' heading is kept), to its end."""
    match = _STRUCTURED_TEXT.search(first_page)
    return " ".join(match.group(1).split()) or None if match else None
