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

import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from kb.notes.grounding import PAGE_BREAK
from kb.papers import identifiers
from kb.papers.pdf_publication import ARXIV_ID, read_publication

# Control codes a TeX font without a Unicode map leaves in the text (T1 encoding at 0x1b-0x1f and its
# quotes at 0x10/0x11; OT1 at 0x0b-0x0f). pdfium hands them through; they are ligatures and quote marks.
_FONT_CODES = str.maketrans({"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl",
                             "\x0b": "ff", "\x0c": "fi", "\x0e": "ffi", "\x0f": "ffl",
                             "\x10": "“", "\x11": "”", "\x02": "-", "\r": "",
                             # pdfium joins a word hyphenated across lines, marking the join with U+FFFE
                             # (a capital after it is a compound's own hyphen: 'Time-Sharing', see clean_text)
                             "\ufffe": ""})
# No word is broken after its first letter (hyphenation leaves two or more before the break), so a join after
# a word of one letter is its own hyphen too ('L-' / 'cyanohomoalanine': 'L-cyanohomoalanine').
_COMPOUND_HYPHEN = re.compile("\ufffe(?=[A-Z])|(?<=\\b[A-Za-z])\ufffe")
# OT1's fl sits at 0x0d, the carriage return: pdfium ends its lines with '\r\n', so a lone one before a
# letter ('more \rexible') is the ligature of a font without a Unicode map.
_OT1_FL = re.compile("\r(?=[a-z])")
# TeX's \copyright is a 'c' set inside the big circle of its symbol font, which sits at 0x0d too: a lone
# carriage return before 'c' and a year ('\rc 2013 International Society ...') is the copyright sign.
_TEX_COPYRIGHT = re.compile("\rc(?= ?(?:19|20)\\d\\d\\b)")
# OT1's en dash sits at '{': a font whose Unicode map gives the code's ASCII prints 'TREC{3'; a brace between
# two word characters that no closing brace follows in its word is that dash.
_OT1_EN_DASH = re.compile(r"(?<=\w)\{(?=\w)(?![^\s}]*\})")
_LIGATURES = re.compile("[\ufb00-\ufb06]")


# TeX's spacing accents, set as characters of their own before their letter ('Universit¨at',
# 'R´eunion'). Where the extractor orders one by position instead ('Munchen ¨' at the end of a line), its
# letter cannot be told. The grave accent only between letters: alone, '`' is TeX's opening quote.
_SPACING_ACCENTS = {"¨": "\u0308", "´": "\u0301", "ˆ": "\u0302", "˜": "\u0303", "ˇ": "\u030c", "`": "\u0300"}
_TEX_ACCENT = re.compile(r"([¨´ˆ˜ˇ])([A-Za-z])|(?<=[A-Za-z])(`)([aeiou])")


def clean_text(text: str) -> str:
    """Ligatures resolved (NFKC for U+FB00-FB06, font control codes mapped), TeX's spacing accents put
    on their letters, line ends as ``\\n``."""
    text = _TEX_COPYRIGHT.sub("©", _COMPOUND_HYPHEN.sub("-", text.replace("\r\n", "\n")))
    text = _OT1_FL.sub("fl", text).translate(_FONT_CODES)
    text = _OT1_EN_DASH.sub("–", text)
    text = _LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    if any(accent in text for accent in _SPACING_ACCENTS):
        text = _TEX_ACCENT.sub(lambda m: unicodedata.normalize(
            "NFC", (m.group(2) or m.group(4)) + _SPACING_ACCENTS[m.group(1) or m.group(3)]), text)
    return text


@dataclass
class Segment:
    """A run of text on one line of a page, in one font size, with no wide gap inside."""

    # without its superscripts (footnote and affiliation marks: 'Eddelbuettel', not 'Eddelbuettela')
    text: str
    size: float  # font size in points
    x0: float
    x1: float
    y: float  # baseline height from the bottom of the page
    marked: str = ""  # the text with each superscript run kept between MARK_OPEN and MARK_CLOSE
    style: str = ""  # 'italic' or 'bold' when most of its letters are set so (``font_style``)

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
    reasons: dict[str, str] = field(default_factory=dict)  # why a field was left empty: kb was not sure


# -- reading the PDF ------------------------------------------------------------------------------

_GAP = 1.0  # a horizontal gap wider than this many font sizes starts a new segment (a new column)


MARK_OPEN, MARK_CLOSE = "⟨", "⟩"  # around a superscript run in Segment.marked: '⟨a⟩Debian Project'
_SUPERSCRIPT_SIZE = 0.8  # a character this much smaller than its line's type ...
_SUPERSCRIPT_RAISE = 0.2  # ... and raised by this many of the line's font sizes is a superscript


def _char_size(raw: object, index: int, matrix: object) -> float:
    """The character's font size as printed: the font's size times the text matrix's scale (a PDF may set
    every font at size 1 and scale it by its matrix, as FrameMaker does). ``matrix``: an FS_MATRIX to fill."""
    import pypdfium2.raw as pdfium_c

    size = float(pdfium_c.FPDFText_GetFontSize(raw, index))
    if pdfium_c.FPDFText_GetMatrix(raw, index, matrix):
        m = matrix._obj  # type: ignore[attr-defined]
        size *= abs(m.a * m.d - m.b * m.c) ** 0.5 or 1.0
    return size


_Char = tuple[str, float, float, float, float]  # (char, x0, x1, bottom, size)

# A font size under this is none a reader sees: a Type 3 (bitmap) font scales its glyphs, not its text, and
# pdfium reports its size as a fraction of a point for every glyph, title and body alike.
_NO_SIZE = 2.0
# How tall a font's letters stand, in its size: capitals, digits and ascenders, and the x-height's letters.
_TALL_LETTERS, _TALL = frozenset("bdhklABCDEFGHIKLMNOPRSTUVWXYZ"), 0.69
_SHORT_LETTERS, _SHORT = frozenset("acemnorsuvwxz"), 0.43


def sized_line(chars: list[_Char], heights: list[float]) -> list[_Char]:
    """A line's characters, those whose font reports no size (``_NO_SIZE``) given the size their printed
    letters show (``heights``: each character's box height): the median height of the line's capitals and
    ascenders over the share of the size they stand, else of its x-height letters. One size for the line,
    so that its words are not split apart by their letters' heights."""
    unsized = [i for i, c in enumerate(chars) if c[4] < _NO_SIZE]
    if not unsized:
        return chars
    size = None
    for letters, share in ((_TALL_LETTERS, _TALL), (_SHORT_LETTERS, _SHORT)):
        tall = sorted(heights[i] for i in unsized if chars[i][0] in letters and heights[i] > 0)
        if tall:
            size = tall[len(tall) // 2] / share
            break
    if size is None:
        return chars
    return [(c[0], c[1], c[2], c[3], round(size, 1)) if i in set(unsized) else c for i, c in enumerate(chars)]


def _unboxed_placed(chars: list[_Char], heights: list[float]) -> list[_Char]:
    """A line's characters, each glyph that pdfium gives no box (no width, no height) and no size put just
    before the next character, on its baseline and in its size: its reported place is another's (a Type 3
    font's initial capitals: 'S' of 'SUNY' reported at the end of the line above, as a raised mark). One
    that ends its line, with nothing after it to stand before, is left out. (``heights`` is kept in step.)"""
    placed = list(chars)
    for i in range(len(placed) - 1, -1, -1):  # from the end: a run of them takes the place before the next
        ch, left, right, _, size = placed[i]
        if ch == " " or right - left > 0 or heights[i] > 0 or size >= _NO_SIZE:
            continue
        if i == len(placed) - 1:
            del placed[i], heights[i]
        elif placed[i + 1][0] != " ":
            after = placed[i + 1]
            placed[i] = (ch, after[1] - 0.5 * after[4], after[1], after[3], after[4])
    return placed


# Code points a symbol glyph without a Unicode map comes out as (the font's own codes read as dingbats or as
# private-use characters): a footnote or affiliation mark ('❸Institut für ...' for '†Institut').
UNMAPPED_MARKS = "\u2700-\u27bf\ue000-\uf8ff"
_UNMAPPED_MARK = re.compile(f"[{UNMAPPED_MARKS}]")


def _unmapped_marks_sized(chars: list[_Char]) -> list[_Char]:
    """A line's characters, each unmapped symbol glyph (``UNMAPPED_MARKS``) directly before a letter given
    that letter's size: set from a symbol font at another size, it would make the letters after it look
    raised and smaller (superscripts) and split the line at them."""
    sized = list(chars)
    for i, char in enumerate(sized[:-1]):
        after = sized[i + 1]
        if _UNMAPPED_MARK.fullmatch(char[0]) and after[0].isalpha():
            sized[i] = (char[0], char[1], char[2], after[3], after[4])
    return sized


def _segment(run: list[_Char]) -> Segment | None:
    """A segment from a run of characters; its superscripts (smaller and raised) marked apart."""
    visible = [c for c in run if c[0] != " "]
    if not visible:
        return None
    size = max(c[4] for c in visible)
    base = min(c[3] for c in visible if c[4] > size - 0.5)

    def is_super(c: _Char) -> bool:
        return c[4] < _SUPERSCRIPT_SIZE * size and c[3] > base + _SUPERSCRIPT_RAISE * size

    flags = _inside_words([c[0] != " " and is_super(c) for c in run], [c[0] for c in run])
    plain, marked, inside = [], [], False
    for c, up in zip(run, flags, strict=True):
        if up != inside:
            marked.append(MARK_OPEN if up else MARK_CLOSE)
            inside = up
        marked.append(c[0])
        if not up:
            plain.append(c[0])
    if inside:
        marked.append(MARK_CLOSE)
    text = clean_text("".join(plain)).strip()
    if not text:  # a line of marks only ('1' above its institution): keep it, as a mark
        text = clean_text("".join(c[0] for c in run)).strip()
        return Segment(text, size, visible[0][1], max(c[2] for c in visible), base,
                       MARK_OPEN + text + MARK_CLOSE)
    body = [c for c in visible if not is_super(c)]
    return Segment(
        text,
        max(c[4] for c in body),
        body[0][1],
        max(c[2] for c in body),
        min(c[3] for c in body),
        clean_text("".join(marked)).strip(),
    )


def _inside_words(up: list[bool], chars: list[str]) -> list[bool]:
    """Superscript flags, with a raised run of capitals set between two letters cleared: a logo's letter
    ('L' 'A' 'TEX': LaTeX), part of its word; a mark stands at a word's end or opens a line."""
    flags = list(up)
    i = 0
    while i < len(flags):
        if not flags[i]:
            i += 1
            continue
        j = i
        while j < len(flags) and flags[j]:
            j += 1
        if (i > 0 and j < len(chars) and chars[i - 1].isalpha() and chars[j].isalpha()
                and all(c.isupper() for c in chars[i:j])):
            flags[i:j] = [False] * (j - i)
        i = j
    return flags


def _place_accents(chars: list[_Char]) -> list[_Char]:
    """A line's characters with each TeX spacing accent put on the letter printed under it (its box's
    centre inside the letter's), wherever the text order put it ('Universit ¨ ¨at', 'fur ... ¨'); the
    spaces the extractor set around a moved accent, between letters that touch, go with it. TeX's accented
    i is the accent then a dotless i ('´ı' of \\'{\\i}): one letter, 'í', wherever their boxes fall."""
    paired: list[_Char] = []
    for c in chars:
        if c[0] == "ı" and paired and paired[-1][0] in _SPACING_ACCENTS:
            c = (unicodedata.normalize("NFC", "i" + _SPACING_ACCENTS[paired.pop()[0]]), *c[1:])
        paired.append(c)
    chars = paired
    accents = [c for c in chars if c[0] in _SPACING_ACCENTS]
    if not accents:
        return chars
    placed = [c for c in chars if c[0] not in _SPACING_ACCENTS]
    for accent in accents:
        centre = (accent[1] + accent[2]) / 2
        under = [i for i, c in enumerate(placed) if c[0].isalpha() and c[1] <= centre <= c[2]]
        if under:
            i = under[0]
            base = "i" if placed[i][0] == "ı" else placed[i][0]  # the accent over a dotless i: 'í'
            letter = unicodedata.normalize("NFC", base + _SPACING_ACCENTS[accent[0]])
            placed[i] = (letter, *placed[i][1:])
        else:
            placed.append(accent)  # no letter under it: kept where the text put it
    kept: list[_Char] = []
    for i, c in enumerate(placed):
        before = kept[-1] if kept else None
        after = next((n for n in placed[i + 1:] if n[0] != " "), None)
        if c[0] == " " and (before is None or before[0] == " " or after is not None
                            and 0 <= after[1] - before[2] < 0.2 * max(before[4], 1.0)):
            continue  # a space between two letters that touch: the extractor's, around a moved accent
        kept.append(c)
    return kept


def _placed_text(textpage: object, text: str) -> str:
    """A page's text with each TeX spacing accent on the letter under it (``_place_accents``), on the lines
    that hold one ('Erlangen-N ¨ urnberg' in an address at the end of a paper); other lines as extracted."""
    if not any(accent in text for accent in _SPACING_ACCENTS):
        return text
    import ctypes

    import pypdfium2.raw as pdfium_c

    raw, matrix = textpage.raw, ctypes.byref(pdfium_c.FS_MATRIX())  # type: ignore[attr-defined]
    lines, start = [], 0
    for line in text.split("\n"):
        end = start + len(line)
        if any(accent in line for accent in _SPACING_ACCENTS):
            chars: list[_Char] = []
            for i in range(start, end):
                if text[i] != "\r":
                    left, bottom, right, _top = textpage.get_charbox(i)  # type: ignore[attr-defined]
                    chars.append((text[i], left, right, bottom, _char_size(raw, i, matrix)))
            line = "".join(c[0] for c in _place_accents(chars))
        lines.append(line)
        start = end + 1
    return "\n".join(lines)


def _page_segments(textpage: object, text: str) -> list[Segment]:
    """Page 1's text as segments, top to bottom (pdfium's own line order), columns split at wide gaps."""
    segments: list[Segment] = []
    chars: list[_Char] = []
    heights: list[float] = []
    styles: dict[tuple[float, float], str] = {}  # each styled letter's style, by its place (left, bottom)

    def flush() -> None:
        run: list[_Char] = []
        line = _unmapped_marks_sized(sized_line(_unboxed_placed(chars, heights), heights))
        for char in _place_accents(line):
            visible = [c for c in run if c[0] != " "]
            # Another size at a word starts a segment; the run's size is its largest (a superscript that
            # opens it, 'ᵃDebian Project', is no size of its own).
            if char[0] != " " and visible and (
                    char[1] - visible[-1][2] > _GAP * max(char[4], 1.0)  # a wide gap: another column
                    or (run[-1][0] == " " and abs(char[4] - max(c[4] for c in visible)) > 0.5)):
                add(run)
                run = []
            run.append(char)
        add(run)
        chars.clear()
        heights.clear()

    def add(run: list[_Char]) -> None:
        segment = _segment(run)
        if segment is not None:
            letters = [styles.get((c[1], c[3]), "") for c in run if c[0].isalpha()]
            segment.style = max(set(letters), key=letters.count) if letters else ""
            segments.append(segment)

    import ctypes

    import pypdfium2.raw as pdfium_c

    raw = textpage.raw  # type: ignore[attr-defined]
    matrix = ctypes.byref(pdfium_c.FS_MATRIX())
    font_style = FontStyles(raw)
    for i, ch in enumerate(text):
        if ch == "\n" or ch == "\r" and not _OT1_FL.match(text, i):
            flush()
            continue
        left, bottom, right, top = textpage.get_charbox(i)  # type: ignore[attr-defined]
        if ch == " " and chars and chars[-1][0] == " ":
            continue
        chars.append((ch, left, right, bottom, _char_size(raw, i, matrix)))
        heights.append(top - bottom)
        if ch.isalpha() and (style := font_style(i)):
            styles[(left, bottom)] = style
    flush()
    return segments


_ITALIC_FLAG = 64  # the font descriptor's Italic flag (PDF 1.7, table 123)
_ITALIC_NAME = re.compile(r"Ital|Obl(?:ique)?|Slant|-It\b|-(?:Bold)?It$|^CM(?:TI|SL|MI)", re.IGNORECASE)
_BOLD_NAME = re.compile(r"Bold|Black|Heavy|Medi|Semibold|Demi|-Bd\b|^CMB|^CMBX", re.IGNORECASE)


class FontStyles:
    """Each character's font style on one text page: 'italic' or 'bold' for a character set in such a font (by
    its descriptor's Italic flag, its weight of 600 or more, or its name: 'NimbusRomNo9L-ReguItal', 'CMTI9',
    'Times-Bold'), else ''; worked out once per font (its name and flags), one call per character."""

    def __init__(self, raw: object) -> None:
        import ctypes

        import pypdfium2.raw as pdfium_c

        self._raw, self._pdfium = raw, pdfium_c
        self._buffer = ctypes.create_string_buffer(256)
        self._flags = ctypes.c_int(0)
        self._flags_ref = ctypes.byref(self._flags)
        self._styles: dict[tuple[bytes, int], str] = {}

    def __call__(self, index: int) -> str:
        self._pdfium.FPDFText_GetFontInfo(self._raw, index, self._buffer, 256, self._flags_ref)
        key = (self._buffer.value, self._flags.value)
        if key not in self._styles:
            name = key[0].decode("latin-1").split("+")[-1]
            italic = key[1] & _ITALIC_FLAG and not name.startswith("CMSY") or _ITALIC_NAME.search(name)
            bold = self._pdfium.FPDFText_GetFontWeight(self._raw, index) >= 600 or _BOLD_NAME.search(name)
            self._styles[key] = "" if not name else "italic" if italic else "bold" if bold else ""
        return self._styles[key]


def read_article(path: Path) -> PdfArticle:
    """Text and metadata of a PDF (see the module docstring); raises ``ValueError`` for an unreadable file."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        raise ValueError(str(exc)) from None
    try:
        pages: list[str] = []
        layouts: list[tuple[list[Segment], float]] = []  # pages 1 and 2: segments and the page's height
        stamps: list[str] = []  # page 1's free-text annotations
        for number, page in enumerate(document):
            stamps += free_text(page) if number == 0 else []
            textpage = page.get_textpage()
            raw_text = textpage.get_text_range(0, textpage.count_chars())
            page_text, numbers = unnumbered(clean_text(_placed_text(textpage, raw_text)).strip())
            pages.append(page_text)
            if number == 0 or number == 1 and _is_cover(pages):  # page 2 only after a cover page
                layouts.append((_without_line_numbers(_page_segments(textpage, raw_text), numbers),
                                page.get_height()))
        metadata = document.get_metadata_dict(skip_empty=True)
    finally:
        document.close()
    article = PdfArticle(pages=pages)
    if pages and pages[0] and unreadable(pages[0]):
        article.reasons = {f: UNREADABLE for f in ("title", "authors", "abstract", "venue", "year")}
    elif pages and pages[0]:
        # a cover page (USENIX's) before the article's own first page, which is titled
        at = 1 if len(layouts) > 1 and opens_titled(layouts[1][0]) else 0
        describe(article, layouts[at][0], at, height=layouts[at][1])
        article.title = punctuated_title(article.title, pages[:at])
        read_publication(article, _margins(*layouts[0]), read=at + 1, stamps=stamps)
    _from_metadata(article, metadata)
    if article.arxiv_id is None and pages:
        arxiv = ARXIV_ID.search(pages[0])
        article.arxiv_id = arxiv.group(1) if arxiv else None
    if article.doi is None and pages and "doi" not in article.reasons:
        bare = re.finditer(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;])", pages[0])  # a bare DOI on page 1
        article.doi = next((d.group(1) for d in bare if not identifiers.archive_doi(d.group(1))), None)
    _say_why_empty(article)
    return article


# A number opening a line: a manuscript's line number in the margin (bioRxiv and medRxiv submissions,
# journals' review copies), which the text puts before the line it numbers, or on a line of its own.
_LINE_NUMBER = re.compile(r"^[ \t]*(\d{1,5})(?:[ \t]+|$)", re.MULTILINE)
_NUMBERED_LINES = 8  # the fewest numbers in a row that make a page line-numbered ...
_NUMBERED_SHARE = 0.5  # ... and the least share of its lines they open
_NUMBER_SKIP = 3  # a run of line numbers may skip up to this many (a line the text put elsewhere)


def unnumbered(page: str) -> tuple[str, set[int]]:
    """A page's text without the line numbers in its margin, and those numbers: the longest run of numbers
    opening lines that count up one by one in text order (skipping up to ``_NUMBER_SKIP``), when it is
    ``_NUMBERED_LINES`` long or more and opens half the page's lines; else the page as it is. A number in
    a line's text ('9 1 Introduction': the section's own '1') is no line number, nor are a contents page's
    or a table's numbered rows, which open fewer of the lines or do not count up."""
    found = list(_LINE_NUMBER.finditer(page))
    chains: list[list[re.Match[str]]] = []
    for match in found:
        value = int(match.group(1))
        longest = max((c for c in chains if 0 < value - int(c[-1].group(1)) <= _NUMBER_SKIP),
                      key=len, default=None)
        if longest is None:
            chains.append([match])
        else:
            longest.append(match)
    run = max(chains, key=len, default=[])
    lines = sum(1 for line in page.splitlines() if line.strip())
    if len(run) < _NUMBERED_LINES or len(run) < _NUMBERED_SHARE * lines:
        return page, set()
    text, at = [], 0
    for match in run:
        text.append(page[at:match.start(1)])
        at = match.end()
    text.append(page[at:])
    return "".join(text), {int(m.group(1)) for m in run}


def _without_line_numbers(segments: list[Segment], numbers: set[int]) -> list[Segment]:
    """Page 1's segments without the line numbers ``unnumbered`` found in its text: the segments of a number
    alone that stand in one column, aligned on their right edge (a superscript mark beside a name stands
    elsewhere; a sidebar may stand left of the numbers, as eLife's template sets it): set small, they
    would pass for the body's size."""
    if not numbers:
        return segments
    alone = [s for s in segments if s.text.isdigit() and int(s.text) in numbers]
    if not alone:
        return segments
    edge = sorted(s.x1 for s in alone)[len(alone) // 2]
    column = {id(s) for s in alone if abs(s.x1 - edge) < s.size}
    if len(column) < _NUMBERED_LINES / 2:  # (a first page holds a share of the numbered lines)
        return segments
    return [s for s in segments if id(s) not in column]


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


def free_text(page: object) -> list[str]:
    """The texts of a page's free-text annotations: a stamp added to a finished PDF ('To appear in OSDI
    2006' in a box at the top of page 1), which pdfium's text page leaves out."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    raw = page.raw  # type: ignore[attr-defined]
    texts = []
    for index in range(pdfium_c.FPDFPage_GetAnnotCount(raw)):
        annot = pdfium_c.FPDFPage_GetAnnot(raw, index)
        try:
            if pdfium_c.FPDFAnnot_GetSubtype(annot) != pdfium_c.FPDF_ANNOT_FREETEXT:
                continue
            size = pdfium_c.FPDFAnnot_GetStringValue(annot, b"Contents", None, 0)
            buffer = ctypes.create_string_buffer(size)
            pdfium_c.FPDFAnnot_GetStringValue(
                annot, b"Contents", ctypes.cast(buffer, ctypes.POINTER(pdfium_c.FPDF_WCHAR)), size)
            texts.append(buffer.raw[:max(size - 2, 0)].decode("utf-16-le", errors="replace").strip())
        finally:
            pdfium_c.FPDFPage_CloseAnnot(annot)
    return [text for text in texts if text]


UNREADABLE = ("page 1 has no readable text (bitmap Type 3 fonts without a Unicode map, or a scan without a "
              "text layer): left empty rather than filled with its garbled characters")
_WORDLIKE = re.compile(r"[(\[“\"']?[A-Za-z][a-z]+[)\]”\"',.;:]?")


def unreadable(text: str) -> bool:
    """Whether a page's text is garbage: under a third of its tokens with a letter look like words (prose
    has over 60 %). Tokens without a letter (a table of contents' leader dots and page numbers, a table's
    figures) tell nothing either way, unless nearly all tokens are such (a page of symbols)."""
    tokens = text.split()
    words = [w for w in tokens if re.search("[^\\W\\d_]", w)]
    if len(tokens) >= 20 and len(words) < len(tokens) / 10:
        return True
    return len(words) >= 20 and sum(bool(_WORDLIKE.fullmatch(w)) for w in words) < len(words) / 3


def _is_cover(pages: list[str]) -> bool:
    """A cover page: page 1 has no abstract, page 2 opens with the article (an abstract near its top)."""
    if len(pages) < 2 or _ABSTRACT_TEXT.search(pages[0]):
        return False
    return bool(
        re.search(r"^\s*(?:Abstract|ABSTRACT)\b", "\n".join(pages[1].splitlines()[:25]), re.MULTILINE)
    )


def opens_titled(segments: list[Segment]) -> bool:
    """Whether a page opens an article: a line above its abstract heading is set larger than its body text
    (the title). The page after a cover page does; a manuscript's abstract page, under a running head in
    the body's size or smaller, does not: its title page is page 1."""
    if not segments:
        return False
    body = sorted(s.size for s in segments)[len(segments) // 2]
    heading = next((s for s in segments if _ABSTRACT.match(s.text)), None)
    floor = heading.y if heading is not None else float("-inf")
    return any(s.size > body + 0.5 and s.y > floor and len(s.text) > 1 for s in segments)


_MARGIN = 0.1  # the running header and footer: the top and bottom tenth of a page


def _margins(segments: list[Segment], height: float) -> list[str]:
    """Page 1's running header and footer, each column of it read top to bottom as one line (a journal's
    name stacked in its footer: 'Communications' / 'of' / 'the ACM'), and any small type above the page's
    first line of body-sized text."""
    band = [s for s in segments if s.y < _MARGIN * height or s.y > (1 - _MARGIN) * height]
    # A header set in small type above the page's first line of body-sized text, however far down the page's
    # top margin puts it (AMS's series line: 'Contemporary Mathematics').
    if segments:
        body = sorted(s.size for s in segments)[len(segments) // 2]
        first = max((s.y for s in segments if s.size >= body - 0.5), default=height)
        band += [s for s in segments if s.y > first and s.size < body - 0.5 and s not in band]
    columns: dict[int, list[Segment]] = {}
    for seg in band:
        key = next((k for k in columns if abs(k - seg.x0) < 3), round(seg.x0))
        columns.setdefault(key, []).append(seg)
    return [" ".join(s.text for s in sorted(col, key=lambda s: -s.y)) for _, col in sorted(columns.items())]


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
        if all(_NAME.match(name) and not _ANONYMOUS.search(name) for name in names):
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


# -- page 1: title, authors, affiliations ------------------------------------------------------------

_ABSTRACT = re.compile(r"^(?:Abstract|ABSTRACT|Summary|SUMMARY)\b")
# Elsevier's letter-spaced lower-case heads of the boxes under the authors ('a r t i c l e   i n f o',
# 'a b s t r a c t'): they end the author block.
_BOX_HEAD = re.compile(r"^(?:article(?: info)?|info|abstract)$")
# The headings of the lines that close an abstract: keywords, the classification lines of ACM and IEEE.
_KEYWORD_HEADS = (r"Keywords?|Key\s?words|KEY\s?WORDS|Index Terms|Categories and Subject Descriptors|"
                  r"General Terms|Key Words and Phrases|CR Categories|JEL|CCS Concepts|ACM Reference Format|"
                  r"Additional Key Words")
# Lines of an author block that are an address, a date or contact details, not an institution.
# An '@' is an e-mail's only between two non-spaces: 'PLT @ Northeastern University' names a group at one.
_ADDRESS = re.compile(
    r"\d{3,}|^\d+ |\w\d*\s+\d+[a-z]?$|str\.\s*\d|\S@\S|\bE-?mail\b|\bURL\b|https?:|\bwww\.|"
    r"\bTel(?:ephone)?\b|\bFax\b|\b(?:Str\.|Straße|Street|Ave\.|Avenue|Road|Square|Lane|Drive|Boulevard|"
    r"P\.?O\.? Box)\b|^(?:January|February|March|April|May|June|July|August|"
    r"September|October|November|December)\b|"
    # the web page's buttons a journal prints under the authors (ACS: 'Cite This: ...', 'Read Online',
    # 'ACCESS | Metrics & More | Article Recommendations'): no institution
    r"\bCite This\b|\bRead Online\b|\bMetrics & More\b|\bArticle Recommendations\b|^ACCESS$",
    re.IGNORECASE,
)
# (in other languages too: 'Universidad', 'Departamento', 'Dipartimento', 'Facultad', 'Escuela', 'École',
# 'Hochschule', 'Politecnico')
_INSTITUTION = re.compile(r"Universi(?:t|dad|dade)|Institut|College|School|Depart(?:a?ment)|Dipartimento|"
                          r"Facult|Escuela|[ÉE]cole\b|Hochschule|Politecnico|Dept\.|Laborator|Center|Centre|"
                          r"Project|Inc\b|Ltd\b|GmbH|\bAG\b|Corporation|Foundation|Hospital|Academy|Faculty|"
                          r"Enthusiasts|Research|\bETH\b|\bEPFL\b|\bMIT\b|\bUC\b|Statistics|Seminar|Sciences?\b|Methodology|Pharma|"
                          r"Division|Group\b|Unit\b|Labs?\b|B\.V\.|N\.V\.|Pvt\b|LLC\b|Corp\b", re.IGNORECASE)
# A capital letter, accented ones too: a name may open with 'Ú', 'Ł' or 'Š' ('Úlfar Erlingsson').
UPPER = ("A-ZÀ-ÖØ-ÞĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮİĲĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒ"
         "ŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŸŹŻŽ")
# a word, initials run together ('G.K.M.') or hyphenated ('J.-P.')
_NAME_WORD = rf"(?:[{UPPER}]\.){{2,}}|[{UPPER}]\.-[{UPPER}]\.|[{UPPER}][\w'’\-]*\.?"
# (the particles a name sets in lower case: 'van der Maaten', 'dos Santos', 'del Toro', 'bin Said', and the
# Portuguese and Spanish 'and' between two surnames: 'Ivan Rosa e Silva', 'José Ortega y Gasset')
_NAME = re.compile(rf"^{_NAME_WORD}(?: (?:{_NAME_WORD}|van|von|de|der|den|da|das|di|do|dos|du|del|della|"
                   rf"le|la|los|ter|bin|ibn|zu|e|y)){{1,4}}$")
# Names are separated by commas, 'and', '&', or (Springer's journals) a middle dot or bullet.
_NAME_SPLIT = re.compile(r",\s*(?:(?:and|AND)\s+)?|\s+(?:and|AND)\s+|\s*&\s*|\s+[·•]\s+")
_TITLE_MARKS = re.compile(r"[\s∗*†‡§¶]+$")  # footnote marks after a title
# and after a name (or numbers: 'Hothorn1'; or a symbol without a Unicode map: an ORCID or envelope icon)
# (a word processor's marks typed in the line's size after a space, 'Ada Lovelace 1,2': a name never ends in
# a digit)
_MARKS = re.compile(rf"[\s∗*†‡§¶{UNMAPPED_MARKS}]+$|(?<=[a-z]) ?\d(?:,\d)*$")


# What may open a line of names: a byline's 'by', or the 'and', comma or both (', and') joining it to the
# names of the line before ('Torsten Hothorn¹' / ', Kurt Hornik²' / 'and Achim Zeileis²'); and what may close
# one: the 'and' or comma joining it to the next ('Edmond Halley and' / 'Isaac Newton').
_LEAD_SEPARATOR = re.compile(r"^\s*(?:[,&]\s*(?:(?:and|AND)\s+)?|(?:by|By|BY|and|AND)\s+)"
                             r"|(?:\s+(?:and|AND)|\s*[,&])\s*$")


# An academic degree after a name ('Alice Smith, PhD¹, Bob Jones MD²'), as medical journals and preprints
# print them: no name of its own. Only before a separator, a mark or the line's end ('M.D. Smith' is a name).
# So is an IEEE membership grade ('Alice Smith, Member, IEEE, and Bob Jones, Fellow, IEEE').
_DEGREE = re.compile(r",?\s*\b(?:Ph\.?\s?D|M\.?D|M\.?Sc|B\.?Sc|MPH|DPhil|MBBS|MBChB|PharmD|DVM|FRCP|"
                     r"(?:(?:Graduate )?Student |Senior |Life )?(?:Member|Fellow),?\s+IEEE)\.?"
                     r"(?=\s*(?:[,;*∗†‡⟨]|and\b|&|$))")


# A double-blind submission's stand-in for its authors ('Anonymous Authors', 'Anonymous Submission'): no
# names.
_ANONYMOUS = re.compile(r"\bAnonymous\b", re.IGNORECASE)


# Numbers glued to a name, in a list with commas ('Ada Lovelace1,2, Alan Turing2'): marks the text did not
# raise (a word processor's, or a superscript the extractor set on the line).
_GLUED_MARKS = re.compile(r"(?<=[a-z])(\d{1,2}(?:,\d{1,2})+)(?=[\s,;]|$)")


def _is_name_list(text: str) -> bool:
    if _ANONYMOUS.search(text):
        return False
    text = _MARK_AFTER_COMMA.sub(r"\1,", _DEGREE.sub("", _GLUED_MARKS.sub("", text)))
    # marks in parentheses: 'Wimmer(1,2)'
    text = re.sub(r"\(\d+(?:,\d+)*\)", "", _LEAD_SEPARATOR.sub("", text))
    parts = [_MARKS.sub("", p).strip() for p in _NAME_SPLIT.split(_MARKS.sub("", text))]
    parts = [p for p in parts if p]
    return bool(parts) and not _INSTITUTION.search(text) and all(_NAME.match(p) and not _STREET.search(p)
                                                                 for p in parts)


_STREET = re.compile(r"\b(?:Street|Road|Avenue|Square|Lane|Drive|Boulevard)$")  # no name ends so


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
def _banner(seg: Segment, segments: list[Segment]) -> bool:
    """One word level with a journal's volume line is the journal's banner, however large it is set (OUP's
    'BIOINFORMATICS' beside 'Vol. 00 no. 00 2012')."""
    return len(seg.text.split()) == 1 and any(
        abs(other.y - seg.y) < seg.size and _VOLUME_LINE.search(other.text) for other in segments)


def describe(article: PdfArticle, segments: list[Segment], at: int = 0, height: float | None = None) -> None:
    """Fill in title, authors and abstract from the segments of the article's first page (``at``: its index,
    1 after a cover page; ``height``: the page's) and the full text. A running footer (the bottom tenth of
    the page: 'USENIX Association  2015 USENIX Annual Technical Conference') is never part of the author
    block, wherever the extractor puts it in its line order."""
    if not segments:
        return
    top = max(s.y for s in segments)
    # A single letter is never the title: a drop capital opening the first paragraph ('T' of 'THE recent
    # development ...') is set larger than any line of the page.
    # Nor is an 'Abstract' heading set in the title's size (PLoS's 2013 template): the author block is above
    # it.
    head = [s for s in segments if s.y >= top / 2 and not _NOT_TITLE.search(s.text) and len(s.text) > 1
            and not re.fullmatch(r"(?:Abstract|ABSTRACT|Summary|SUMMARY)[.:]?", s.text.strip())
            and not _banner(s, segments)]
    if not head:
        return
    title_size = max(s.size for s in head)
    body_size = sorted(s.size for s in segments)[len(segments) // 2]
    if title_size <= body_size + 0.5:  # no larger type than the body's: no title to tell by its size ...
        _capitals_head(article, head)  # ... unless set in capitals over a line of names in capitals (amsart)
        title_lines = [] if article.title else _centred_title(head, segments)  # ... or centred over names
        if not title_lines:
            _fill_from_the_end(article)
            if article.title:  # amsart's 'Abstract.' run in, as on any page
                article.abstract = _abstract(article.pages[at])
            return
    else:
        title_lines = [s for s in head if abs(s.size - title_size) < 0.5]
        # Words in small capitals sit on a title line's baseline in a smaller size: they are the title's too.
        rows = {round(s.y) for s in title_lines}
        title_lines = sorted([s for s in head if s in title_lines or s.size >= 0.6 * title_size
                              and any(abs(s.y - y) < 1.0 for y in rows)], key=lambda s: (-round(s.y), s.x0))
        title_lines += _subtitle(title_lines, head, body_size)
    article.title = join_title([s.text for s in title_lines])
    if len((article.title or "").split()) > _TITLE_MOST_WORDS:
        article.title = None  # the body's paragraphs taken for a title: none is sure
        article.reasons["title"] = (f"the lines set largest on page 1 run to more than {_TITLE_MOST_WORDS} "
                                    "words: prose, not a title")
    floor = _MARGIN * height if height else float("-inf")
    below = _above_drop_capital(_below_title(segments, floor, min(s.y for s in title_lines) - 0.1), body_size)
    end = next((i for i, s in enumerate(below) if _ABSTRACT.match(s.text)), None)
    structured = _structured_head(below) if end is None else None
    end = structured if structured is not None else end
    # Without an abstract heading the block ends at the first section heading or line of prose.
    block = below[:end] if end is not None else below[:_BLOCK_LINES]
    cut = next((i for i, s in enumerate(block) if is_prose(s.text) or _section(s.text)
                or _CAPTION.match(s.text) or _BOX_HEAD.match(s.text)
                or end is None and i and block[i - 1].y - s.y > _BLOCK_GAP * max(s.size, block[i - 1].size)),
               len(block))
    block = block[:cut]
    # An affiliation holding a control code is text a font left unmapped ('atthew Levine \x01', its bitmap
    # capital lost): none, rather than a garbled one.
    article.authors = [(name, None if affiliation and re.search(r"[\x00-\x1f]", affiliation) else affiliation)
                       for name, affiliation in _footnoted(_authors(block), block, article.pages[at])]
    article.authors = _numbered_footnote(article.authors, block, article.pages[at])
    article.authors = _over_the_correspondence(article.authors, article.pages[at])
    _fill_from_the_end(article)
    if structured is not None:
        article.abstract = _structured_abstract(article.pages[at])
    elif end is not None:
        article.abstract = _abstract(article.pages[at])
    elif block and cut < len(below) and not _SECTION.match(below[cut].text):
        if _BOX_HEAD.match(below[cut].text):  # the abstract's box: its prose starts under the heads
            cut = next((i for i in range(cut, len(below)) if is_prose(below[i].text)), cut)
        article.abstract = _unheaded_abstract(article.pages[at], block[-1], below[cut:], body_size)
        if article.abstract is None:
            article.reasons["abstract"] = (
                "no 'Abstract' heading, and the prose under the authors is neither "
                "closed by a keyword line nor set apart from the body in size, measure or style"
            )
    if end is None and article.abstract is None:
        article.abstract = _abstract_page(article.pages, at)


# The first heading of a structured abstract set without an 'Abstract' heading over it (BMC's and medical
# journals' 'Background', OUP's 'Motivation'), alone on its line or run in with a colon.
# The first heading of a structured abstract (BMC, OUP), which may stand without 'Abstract' over it.
_STRUCTURED_HEADINGS = (r"(?:Background|BACKGROUND|Motivation|MOTIVATION|Objectives?|OBJECTIVES?|"
                        r"Purpose|PURPOSE)")
_STRUCTURED_HEAD = re.compile(rf"^{_STRUCTURED_HEADINGS}(?:\s*:|$)")


def _structured_head(below: list[Segment]) -> int | None:
    """Where a structured abstract's first heading stands under the title, when no line of prose or
    section heading comes before it (after those, 'Background' heads a section of the body); else None.
    The author block ends there: the heading is no part of the last affiliation ('..., Country
    Background')."""
    for i, seg in enumerate(below[:_BLOCK_LINES]):
        if is_prose(seg.text) or _section(seg.text):
            return None
        if _STRUCTURED_HEAD.match(seg.text):
            return i
    return None


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
    of the line above, and is no line of names."""
    if not title_lines:
        return []
    last = min(title_lines, key=lambda s: s.y)
    open_end = join_title([s.text for s in title_lines]) or ""
    taken: list[Segment] = []
    for seg in sorted((s for s in head if s.y < last.y and s not in title_lines), key=lambda s: -s.y):
        next_line = bool(taken) and abs(seg.size - taken[-1].size) < 0.5  # the subtitle's, in its size
        if (last.y - seg.y > 2 * last.size or seg.size <= body_size + 0.5
                or _is_name_list(seg.text) and not next_line
                or not (open_end.endswith((":", "—", "–")) or seg.text[:1].islower() or next_line)):
            break
        taken.append(seg)
        last, open_end = seg, seg.text
    return taken


def _abstract_page(pages: list[str], at: int) -> str | None:
    """A manuscript's abstract page: the page after the title page opening (under its running head) with
    an 'Abstract' heading, when the body has not begun on the title page (an abstract comes before the
    introduction: after one, 'SUMMARY' atop page 2 is a running head)."""
    if len(pages) <= at + 1 or re.search(r"^\s*(?:(?:1|I)\.?\s+)?(?:Introduction|INTRODUCTION)\b", pages[at],
                                         re.MULTILINE):
        return None
    opening = "\n".join(pages[at + 1].splitlines()[:3])
    return _abstract(pages[at + 1]) if re.search(r"^\s*(?:Abstract|ABSTRACT|Summary|SUMMARY)\b", opening,
                                                 re.MULTILINE) else None


_SMALL_WORDS = frozenset({"of", "the", "for", "and", "in", "on", "at", "de", "la", "le", "du", "des", "der",
                          "für", "di", "da", "van", "von"})  # the words a name sets in lower case


def _footnoted(authors: list[tuple[str, str | None]], block: list[Segment],
               page: str) -> list[tuple[str, str | None]]:
    """Affiliations stated in the footnote a name's symbol mark points to ('By Hal R. Varian∗' over the
    page's '∗ UC Berkeley and Google. hal@...'), for names the author block gives none: the footnote's
    first clause, up to its first 'and', when it names an institution as a name is set, each word
    capitalised but the small ones ('Supported in part by ISX Corporation' thanks a funder; a clause with an
    e-mail gives contacts)."""
    marks = {name: keys for _, name, keys in _name_lines(block)[0]}
    found = []
    for name, affiliation in authors:
        for key in [] if affiliation else [k for k in marks.get(name, []) if k in "*†‡§¶#"]:
            symbols = "*∗" if key == "*" else key
            note = re.search(rf"^\s*[{symbols}]\s*(?P<text>[^\n]+)", page, re.MULTILINE)
            first = re.split(r"\.\s|;|,? and ", note.group("text"))[0].strip(" .") if note else ""
            if first and _INSTITUTION.search(first) and not _CONTACT.search(first) and all(
                    w[:1].isupper() or not w[:1].isalpha() or w in _SMALL_WORDS for w in first.split()):
                affiliation = first
                break
        found.append((name, affiliation))
    return found


# Where a numbered footnote of affiliations opens: a line starting '1 ' and an institution's name.
_FIRST_FOOTNOTE = re.compile(r"^[ \t]*1[ \t]+(?=[A-Z])(?=[^\n]*?(?:" + _INSTITUTION.pattern + "))",
                             re.MULTILINE | re.IGNORECASE)
_NEXT_FOOTNOTE = re.compile(r"(?:^|(?<=[.;])\s+)(\d{1,2})\s+(?=[A-Z])")


def _numbered_footnote(authors: list[tuple[str, str | None]], block: list[Segment],
                       page: str) -> list[tuple[str, str | None]]:
    """Affiliations in a numbered footnote at the foot of page 1 (Nature's journals: '1 Queen Mary University
    of London, School of ..., London E1 2AT, UK. 2 Medical Research Council—Laboratory of ...'), for names
    whose number marks the author block left unlinked: each block's institution up to its first address
    part. Only when no name has an affiliation, and every name's first number opens a block that names an
    institution; else the names as they were (a numbered line of the body is no footnote)."""
    keys = {name: k for _, name, k in _name_lines(block)[0]}
    numbers = {name: next((k for k in keys.get(name, []) if k.isdigit()), None) for name, _ in authors}
    starts = list(_FIRST_FOOTNOTE.finditer(page))
    if not authors or any(a for _, a in authors) or None in numbers.values() or not starts:
        return authors
    # (a line the measure broke after a dash goes on without a space: 'Council—' / 'Laboratory')
    foot = page[starts[-1].start():]
    text = re.sub(r"(?<=[—–-])\s*\n\s*", "", foot).replace("\n", " ")
    pieces = _NEXT_FOOTNOTE.split(text)  # '', number, text, number, text, ...
    blocks: dict[str, str] = {}
    for number, body in zip(pieces[1::2], pieces[2::2], strict=True):
        institution = _institution_part(body.strip())
        if institution and number not in blocks:
            blocks[number] = institution.strip(" .")
    if not all(n in blocks for n in numbers.values()):
        return authors
    return [(name, blocks[numbers[name] or ""]) for name, _ in authors]


_CORRESPONDENCE_LINE = re.compile(r"^\s*[*∗†]?\s*(?:Corresponding authors?|Correspondence)\b", re.IGNORECASE)


def _over_the_correspondence(authors: list[tuple[str, str | None]],
                             page: str) -> list[tuple[str, str | None]]:
    """The one affiliation printed at page 1's foot over its corresponding-author note, unmarked (EMBO
    Press: 'Oncode Institute and Division of Biochemistry, The Netherlands Cancer Institute, Amsterdam, The
    Netherlands' / '*Corresponding author. E-mail: ...'): every author's, when no author has one. Only a
    line naming an institution, no prose, with no such line over it (two institutions: whose is whose is
    not said), up to its first address part."""
    if not authors or any(a for _, a in authors):
        return authors
    lines = page.splitlines()
    at = next((i for i, line in enumerate(lines) if _CORRESPONDENCE_LINE.match(line)), None)
    if at is None or at < 2:
        return authors
    line, over = lines[at - 1].strip(), lines[at - 2].strip()
    if not _INSTITUTION.search(line) or is_prose(line) or _CONTACT.search(line) or not line[:1].isupper() or (
            _INSTITUTION.search(over) and not is_prose(over)):
        return authors
    institution = _institution_part(line)
    return [(name, institution.strip(" .")) for name, _ in authors] if institution else authors


def _centred_title(head: list[Segment], segments: list[Segment]) -> list[Segment]:
    """The title of a page set in one size throughout (a Word-made manuscript): the lines centred on the page
    (or set in bold) directly above its first centred line of names, up to a line that is neither (a running
    head or a notice set flush left), a name or prose; none unless they hold three words or more."""
    left, right = min(s.x0 for s in segments), max(s.x1 for s in segments)

    def centred(seg: Segment) -> bool:  # a full-width line of prose is no centred line
        return abs(seg.center - (left + right) / 2) < 2 * seg.size and seg.x0 > left + seg.size

    # (a line of names a superscript mark split, 'Ada Lovelace¹' ', Alan Turing²', centred as one)
    ordered = sorted(_merge_spaced(head), key=lambda s: -s.y)
    for i, seg in enumerate(ordered):
        if centred(seg) and _is_name_list(_LEAD_SEPARATOR.sub("", seg.text)):
            # flush left, a Word manuscript's title is set apart by its weight alone
            title = list(itertools.takewhile(
                # (a title in sentence case reads as prose, but is set bold or italic where prose is not)
                lambda s: (centred(s) or s.style == "bold") and not (is_prose(s.text) and not s.style)
                and not _is_name_list(s.text), reversed(ordered[:i])))[::-1]
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
    above the abstract heading after it (a Word-made PDF may draw its title block after the body)."""
    below = [s for s in segments if floor < s.y < under]
    end = next((i for i, s in enumerate(below) if _ABSTRACT.match(s.text)), None)
    if end is not None and any(s.y > below[end].y + below[end].size for s in below[end + 1:]):
        return sorted(below, key=lambda s: (-round(s.y), s.x0))
    return below


_KEYWORD_LINE = re.compile(rf"^\s*(?:{_KEYWORD_HEADS})\b|^[^|\n]+(?: \| [^|\n]+){{2,}}$", re.MULTILINE)


def _unheaded_abstract(page: str, last: Segment, prose: list[Segment], body_size: float) -> str | None:
    """The abstract of a page without an 'Abstract' heading: the paragraph under the author block (``last``:
    its last line; ``prose``: the segments from the paragraph's first line on), when a keyword line closes it
    ('Keywords: ...', 'Key Words and Phrases', terms between bars: 'statistical computing | simulation'), or
    when it is set in a size other than the body's and a section heading closes it, or, with no section on
    the page, the end of its lines in that size; or when it is set apart from the body in measure or style
    (``_set_apart``), to the end of its lines set so. Anything else may be the article's first paragraph."""
    if re.match(r"[A-Z][a-z]+:", prose[0].text):  # a labelled note ('Advisers: ...'), not an abstract
        return None
    after = page.find(last.text)
    start = page.find(prose[0].text[:40], after + len(last.text) if after >= 0 else 0)
    if start < 0:
        return None
    rest = page[start:]
    section = re.search(r"^\s*(?:(?:1|I)\.?\s+)?(?:Introduction|INTRODUCTION)\b", rest, re.MULTILINE)
    keywords = _KEYWORD_LINE.search(rest)
    if keywords and (section is None or keywords.start() < section.start()):
        stop: int | None = keywords.start()
    elif prose[0].size < _NO_SIZE:  # a bitmap font's glyphs without a size: nothing sets the paragraph apart
        stop = None
    elif abs(prose[0].size - body_size) > 0.5:
        stop = section.start() if section else _end_of_run(
            rest, list(itertools.takewhile(lambda s: abs(s.size - prose[0].size) < 0.3, prose)))
    else:
        stop = _end_of_run(rest, _set_apart(prose, body_size))
    return " ".join(rest[:stop].split()) or None if stop is not None else None


_BODY_LINES = 3  # the fewest body lines after a paragraph that tell the body's measure and style


def _set_apart(prose: list[Segment], body_size: float) -> list[Segment]:
    """The lines opening ``prose`` (in the body's size) set apart from the body lines after them: in measure
    (each line inset from both of the body's margins by a type size or more: an abstract narrower than the
    text, as 1980s journals and LNCS set it) or in style (italic or bold where the body is upright: USENIX's
    italic abstract, a bold summary); [] when they are not."""
    first = prose[0]
    run = list(itertools.takewhile(
        lambda s: abs(s.size - first.size) < 0.3 and not _SECTION.match(s.text), prose))
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


_BLOCK_GAP = 4.0  # without an abstract heading, a vertical gap of this many type sizes ends the author block
_BLOCK_LINES = 30  # the most lines an author block without an abstract heading is read for
# A first section's heading ('1 Introduction', '1. Motivation', 'I. INTRODUCTION'), never an initial ('I.
# Newton').
_SECTION = re.compile(r"^(?:1\.?\s+[A-Z][a-z]+|(?:I\.\s+)?(?:Introduction|INTRODUCTION)|Contents)\b")


def _section(line: str) -> bool:
    """A first section's heading (``_SECTION``), never an affiliation a word processor numbered in the text's
    size ('1 University of Alpha, ...', its name's mark '1' typed after it)."""
    return bool(_SECTION.match(line)) and not _INSTITUTION.search(line)


# A figure's or table's caption: a teaser figure between the authors and the abstract ends the author block.
_CAPTION = re.compile(r"^(?:Figure|Fig\.|Table)\s+\d+[.:]")


def is_prose(line: str) -> bool:
    """A line of running text (an unheaded abstract, a disclaimer), where an author block has ended: eight
    words or more, two thirds of them in lower case, and no institution named."""
    words = re.findall(r"[^\W\d_][\w'’-]*", line)
    return (len(words) >= 8 and sum(w[0].islower() for w in words) >= 2 * len(words) / 3
            and not _INSTITUTION.search(line))


def join_affiliation(lines: list[str]) -> str:
    """An affiliation's lines as one: lines naming separate units are joined by a comma ('Department of
    Statistics', 'University of Illinois'); a line the column's width broke off a name continues it with a
    space: one that opens in lower case or after '&', '-', 'of', 'and', and a short line (three words at
    most, no comma, no acronym) without an institution word beside one with it ('Texas A&M' / 'International
    University', 'Friedrich-Alexander-Universität' / 'Erlangen-Nürnberg')."""
    joined = ""
    for before, line in zip([None, *lines], lines, strict=False):
        if before is None:
            joined = line
            continue
        joined += " " + line if _continues(before, line) else ", " + line
    return joined


def _continues(before: str, line: str) -> bool:
    # (a line ending with 'the' goes on: 'Center for ..., The' / 'University of Texas at Austin')
    if line[:1].islower() or line.startswith("&") or re.search(r"(?:[&-]|\b(?:of|and|[Tt]he|for)|,)$",
                                                                before):
        return True

    def bare(text: str) -> bool:  # a piece of a name or a place: short, no comma, no institution word ...
        return (len(text.split()) <= 3 and "," not in text and not _INSTITUTION.search(text)
                and not re.fullmatch(r"[A-Z][A-Z\d&-]+", text))  # ... and no acronym: 'LIX' names a unit

    return (bare(before) and bool(_INSTITUTION.search(line))) or (
        bare(line) and bool(_INSTITUTION.search(before))
    )


def _fill_from_the_end(article: PdfArticle) -> None:
    """Affiliations page 1 lacks, from the end of the paper: an "Affiliation:" block naming each author, else
    (amsart) one address block per author in byline order, each closed by its 'Email address:' line. Page 1
    names the institution; the end adds department and address lines, so it fills gaps only."""
    full = "\n".join(article.pages)
    names = [n for n, _ in article.authors]
    ends = _end_affiliations(full, names)
    in_order = _address_blocks(full, len(article.authors))
    signed = _signed_blocks("\n".join(article.pages[-2:]), names)
    stated = _stated_affiliations(article.pages[0] if article.pages else "", names)
    ends = _author_information(full, names) | ends
    article.authors = [(name, affiliation or stated.get(name) or ends.get(name)
                        or (in_order[i] if in_order else None) or signed.get(name))
                       for i, (name, affiliation) in enumerate(article.authors)]


_AUTHOR_INFORMATION = re.compile(r"^[^\w\n]*AUTHOR INFORMATION\s*$", re.MULTILINE)  # (after ACS's "■")
_NAMED_DASH = r"\s*[−–—-]\s+"  # ACS: 'Jeffrey Skolnick − Center for the Study of Systems Biology, ...'


def _author_information(text: str, names: list[str]) -> dict[str, str]:
    """Each author's institution from an 'AUTHOR INFORMATION' section at the end (ACS's journals: the name, a
    dash, and the author's address, wrapped over lines, up to its first address part: a postcode, an ORCID
    or e-mail: 'Suresh Singh − Twilight Design, Kendall Park, New Jersey 08824'); a name the section does
    not open a line with, a dash after it, has none."""
    found = list(_AUTHOR_INFORMATION.finditer(text))
    if not found or not names:
        return {}
    section = text[found[-1].end():]
    result: dict[str, str] = {}
    for name in names:
        # (the address runs to a blank line or the line before the next 'Name −')
        match = re.search(rf"^\s*{re.escape(name)}{_NAMED_DASH}(?P<rest>.+?)"
                          rf"(?=\n\s*\n|\Z|\n[^\n]*?\S{_NAMED_DASH})", section[:4000],
                          re.MULTILINE | re.DOTALL)
        if match is None:
            continue
        joined = re.sub(r"(?<=[-−])\n", "", match.group("rest")).replace("\n", " ")
        parts = [p.strip() for p in re.split(r"[,;]", joined)]
        kept = ", ".join(itertools.takewhile(lambda p: not _ADDRESS.search(p), parts)).strip(" .,")
        if kept:  # the section's form says what the text after the dash is: no institution word needed
            result[name] = kept
    return result


# A footnote that says in prose where authors work (IEEE's style): 'Birman and Van Renesse are with the
# Department of Computer Science, Cornell University, Ithaca NY 14850; Dolev is at Cornell on leave from
# ...'. The institution runs to a clause's end: a semicolon, a parenthesis ('(e-mail: ...)'), a sentence's
# end, 'on leave' or 'in' and a place.
_NAME_RUN = rf"[{UPPER}][\w'’-]*\.?(?: [{UPPER}][\w'’-]*\.?)*"
_STATED = re.compile(rf"(?P<who>{_NAME_RUN}(?:(?:,? and|,) {_NAME_RUN})*) (?:is|are) (?:now )?(?:with|at) "
                     r"(?:the )?(?P<where>[^;()]+?)(?=\s*(?:[;(]|\.\s|\.?$| on leave\b| in [A-Z]))")


def _stated_affiliations(page: str, names: list[str]) -> dict[str, str]:
    """Each author's institution as a footnote states it in prose (``_STATED``): the clause's parts up to
    the first address part; a name is the author whose surname ends it."""
    found: dict[str, str] = {}
    for match in _STATED.finditer(" ".join(page.split())):
        parts = [p.strip() for p in match.group("where").split(",")]
        where = ", ".join(itertools.takewhile(lambda p: not _ADDRESS.search(p), parts)).strip(" .")
        for who in re.split(r",? and |, ", match.group("who")):
            surname = who.split()[-1].casefold()
            for name in names:
                if name.split()[-1].casefold() == surname and where:
                    found.setdefault(name, where)
    return found


def _signed_blocks(text: str, names: list[str]) -> dict[str, str]:
    """The address blocks that sign an article at its end without a heading (R News, The R Journal, TUGboat):
    an author's full name alone on a line (after TUGboat's diamond), the institution's lines under it, closed
    by an e-mail or web address line. A block without such a closing line, or without an institution word, is
    not one."""
    lines = [line.strip() for line in text.splitlines()]
    found: dict[str, str] = {}
    for name in names:
        # (TUGboat opens each signature with a diamond: '⋄ Karl Berry')
        at = [i for i, line in enumerate(lines) if _MARKS.sub("", line).strip().lstrip("⋄◇◆•◦ ") == name]
        if not at:
            continue
        block: list[str] = []
        for line in lines[at[-1] + 1:at[-1] + 6]:
            if _CONTACT.search(line) or not line or line == PAGE_BREAK or line in names:
                break
            block.append(line)
        closed = at[-1] + 1 + len(block) < len(lines) and _CONTACT.search(lines[at[-1] + 1 + len(block)])
        institution = list(itertools.takewhile(lambda line: not _ADDRESS.search(line), block))
        if closed and institution and _INSTITUTION.search(" ".join(institution)):
            found[name] = join_affiliation(institution)
    return found


_EMAIL_LINE = re.compile(r"^\s*E-?mail(?: address)?\s*:.*$", re.MULTILINE | re.IGNORECASE)


# The end of a reference entry: a year or pages and a full stop ('..., 1992.', '... 97 (1990), 757–773.').
_REFERENCE_END = re.compile(r"\d\.\s*$")


def _address_blocks(text: str, authors: int) -> list[str] | None:
    """The institutions of the address blocks at the very end of a paper (amsart: an address, then 'Email
    address: ...'), one per author in byline order; None unless the paper has exactly as many e-mail lines as
    authors and the last one ends it.
    A block's lines run back to the previous e-mail line (the first: to the reference entry before it, which
    ends in a year or its pages and a full stop); its institution is its text up to the first address part
    (a street, a postcode)."""
    mails = list(_EMAIL_LINE.finditer(text))
    if not authors or len(mails) != authors or text[mails[-1].end():].strip():
        return None
    blocks, start = [], None
    for mail in mails:
        lines = text[start if start is not None else 0:mail.start()].rstrip("\n").split("\n")
        if start is None:  # the first block: back to the line before it that ends a reference entry
            back = next((i for i in range(len(lines) - 1, -1, -1)
                         if _REFERENCE_END.search(lines[i])), -1)
            lines = lines[back + 1:][-4:]
        joined = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", "\n".join(lines)).replace("\n", " ")
        parts = [p.strip() for p in joined.split(",")]
        kept = list(itertools.takewhile(lambda p: not _ADDRESS.search(p), parts))
        blocks.append(", ".join(p for p in kept if p))
        start = mail.end()
    return blocks if all(blocks) else None


# Words of a title, never of a line of names, when both are set in capitals ('FROM DOMINOES TO HEXAGONS').
_TITLE_WORDS = re.compile(r"\b(?:TO|FROM|OF|THE|IN|ON|FOR|WITH|AN?|IS|ARE|VIA|INTO)\b")


def _capitals_head(article: PdfArticle, head: list[Segment]) -> None:
    """The title and authors of a page whose title is set in the body's size: (amsart) the lines in capitals
    at the top of the page ('ON MULTIVARIATE t AND GAUSS PROBABILITIES IN R'; a single small letter, a
    variable, may stand among them) directly over a line of names in capitals ('TORSTEN HOTHORN, FRANK
    BRETZ, AND ALAN GENZ')."""
    ordered = sorted(head, key=lambda s: -s.y)
    for i, seg in enumerate(ordered):
        names = _LEAD_SEPARATOR.sub("", seg.text)
        if not (names.isupper() and _is_name_list(names)) or _TITLE_WORDS.search(names):
            continue
        title = list(itertools.takewhile(_in_capitals, reversed(ordered[:i])))[::-1]
        if not title:  # no title above it: a header's name in capitals ('AMERICAN MATHEMATICAL SOCIETY')
            continue
        # Above the title only a header set smaller than it ('Volume 30, Number 2, April 1994').
        above = ordered[:i - len(title)]
        if all(s.size < title[0].size - 0.5 for s in above):
            article.title = join_title([s.text for s in title])
            article.authors = _authors([seg])
        return


def _in_capitals(seg: Segment) -> bool:
    letters = [c for c in seg.text if c.isalpha()]
    words = seg.text.split()
    return len(words) >= 3 and sum(c.islower() for c in letters) <= max(1, len(words) // 4) and not (
        _is_name_list(seg.text) and not _TITLE_WORDS.search(seg.text))


# Marks linking a name to its affiliation block: superscript letters, numbers or symbols ('Sandersonb,c',
# 'Hothorn1', 'Rousseau*†'), or numbers in parentheses ('Wimmer(1,2)'). A symbol whose glyph has no Unicode
# map comes out as '?' ('Wyatt Lloyd?' over '?Princeton University'): a mark like the others, as a
# superscript or opening an institution.
_MARK_KEYS = re.compile(rf"[a-z]|\d+|[*†‡§¶#?{UNMAPPED_MARKS}]")
# (numbers and symbols in one list too: OUP's '1,∗')
_MARK_ITEM = r"(?:[a-z\d]{1,2}|[*∗†‡§¶#]+)"
_BARE_MARK = re.compile(rf"^(?:{_MARK_ITEM}(?:,{_MARK_ITEM})*|\(\d+(?:,\d+)*\))$")
# A mark opening an affiliation line: a superscript, '(1) ', a symbol, or digits glued to a word ('1Google').
_LEADING_MARK = re.compile(r"^(?:⟨(?P<sup>[^⟩]*)⟩|\((?P<par>\d+(?:,\d+)*)\)\s+|"
                           rf"(?P<sym>[*∗†‡§¶]+|\?(?=[A-Z])|[{UNMAPPED_MARKS}])\s*|"
                           r"(?P<num>\d{1,2})(?=[A-Z][a-z]))")
_TRAILING_MARKS = re.compile(rf"(?:⟨(?P<sup>[^⟩]*)⟩|\((?P<par>\d+(?:[,;]\d+)*)\)|"
                             rf"(?<=[a-z]) ?(?P<num>\d(?:,\d)*)|(?<=[a-z])(?P<sym>[∗*†‡§¶]+))+"
                             rf"[\s∗*†‡§¶{UNMAPPED_MARKS}]*$")
# A symbol or superscript set after the comma that follows its name ('Dingwen Tao,∗ Sheng Di,†'; Wiley's
# 'Sanjoy Dasgupta,¹ Anupam Gupta²'): it is that name's mark.
_MARK_AFTER_COMMA = re.compile(r",[ \t]*([∗*†‡§¶]+|⟨[^⟩]*⟩)")
_SEPARATORS = re.compile(r"^[\s,;.&]*(?:and|AND)?[\s,;.&]*$")  # a line between names: ',' or 'and'


def _keys(mark: str) -> list[str]:
    return _MARK_KEYS.findall(mark.replace("∗", "*"))


def _name_parts(seg: Segment) -> list[tuple[str, list[str]]]:
    """The names of a name line, each with the keys of the marks after it."""
    marked = _GLUED_MARKS.sub(lambda m: f"{MARK_OPEN}{m.group(1)}{MARK_CLOSE}", seg.marked or seg.text)
    protected = re.sub(r"⟨[^⟩]*⟩|\(\d+(?:,\d+)*\)", lambda m: m.group().replace(",", ";"), marked)
    protected = _LEAD_SEPARATOR.sub("", protected)  # a byline: 'by A, B and C', or 'and C' after 'A, B'
    protected = _MARK_AFTER_COMMA.sub(r"\1,", _DEGREE.sub("", protected))
    # A superscript is never inside a name: one followed by a capital separates two ('Smith¹ Bob Jones²').
    protected = re.sub(r"(⟨[^⟩]*⟩)[ \t]+(?=[A-Z])", r"\1, ", protected)
    parts = []
    for part in _NAME_SPLIT.split(protected):
        match = _TRAILING_MARKS.search(part)
        keys = [k for g in ("sup", "par", "num", "sym") if match and match.group(g)
                for k in _keys(match.group(g))]
        name = _MARKS.sub("", re.sub(r"⟨[^⟩]*⟩", "", part[:match.start()] if match else part)).strip()
        if name:
            parts.append((_name_case(name), keys))
    return parts


def _name_case(name: str) -> str:
    """A name printed in capitals ('MICHAEL J. FISCHER') as it is written ('Michael J. Fischer')."""
    if not name.isupper():
        return name
    return " ".join(w.capitalize() if len(w.rstrip(".")) > 1 else w for w in name.split())


# A segment that opens with a mark opens an affiliation block of its own: '⟨a⟩Debian', '‡Carnegie Mellon'.
# A superscript followed by a comma closes the name before it ('Cristian Martín' '⟨a⟩, Mikel Larrea').
# (an icon after the mark, a corresponding author's envelope or an ORCID logo, still closes the name: Nature's
# 'Mark van Breugel' '¹,²✉, Ivan Rosa e Silva')
_ICONS = rf"[\s{UNMAPPED_MARKS}]*"
_OPENS_BLOCK = re.compile(rf"^(?:{MARK_OPEN}(?![^{MARK_CLOSE}]*{MARK_CLOSE}{_ICONS},)|[*∗†‡§¶?]+(?=[A-Z]))")


_CLOSING_MARK = re.compile(rf"{MARK_OPEN}[^{MARK_CLOSE}]*{MARK_CLOSE}{_ICONS}(?:,|and\b|&)")


def _name_end(text: str) -> bool:
    """A line's one capitalised word, no institution's: the surname a list of names wrapped to the next line
    ('..., Ole' / 'Winther²'), whose raised mark beside it is its own."""
    return bool(re.fullmatch(rf"[{UPPER}][\w'’-]+", text)) and not _INSTITUTION.search(text)


def _merge_spaced(block: list[Segment]) -> list[Segment]:
    """Segments of one line joined again: those a letter-spaced name split ('MICHAEL' 'J. FISCHER'), and
    those closer than a column's gap on one baseline, which a superscript or a change of size at a word
    split ('Torsten Hothorn¹' ', Kurt Hornik²'; 'Wirtschaftsuniversit' 'ät Wien')."""
    merged: list[Segment] = []
    for seg in block:
        last = merged[-1] if merged else None
        gap = seg.x0 - last.x1 if last is not None else -1.0
        # A mark alone, raised beside the end of a line of names ('Ernesto Jiménez' 'ᵇ'): that name's mark
        # (beside an institution it opens the next block: '?Princeton University,' '†' 'Intel Labs').
        if (last is not None and _BARE_MARK.match(seg.text) and seg.size < last.size - 0.5
                and 0 <= gap < 2 * seg.size and last.y < seg.y < last.y + last.size
                and (_is_name_list(_LEAD_SEPARATOR.sub("", last.text)) or _name_end(last.text))):
            merged[-1] = Segment(last.text, last.size, last.x0, seg.x1, last.y,
                                 f"{last.marked or last.text}{MARK_OPEN}{seg.text}{MARK_CLOSE}", last.style)
            continue
        # A segment opening with the previous name's mark, set after a space ('Alice Smith' '¹,*, Bob Jones',
        # MDPI): its box starts after the mark, so the gap holds the mark's width too.
        closing = bool(_CLOSING_MARK.match(seg.marked or "")) and last is not None and _is_name_list(
            _LEAD_SEPARATOR.sub("", last.text))
        # (a gap after a name's superscript holds the mark's width too: 'Johansen²,*' ', Ole')
        after_mark = (last.marked or "").endswith(MARK_CLOSE) if last is not None else False
        if (last is not None and abs(last.y - seg.y) < 0.4 * seg.size and abs(last.size - seg.size) < 0.5
                and (0 <= gap < (2 if after_mark else 1) * _GAP * seg.size
                     and not _OPENS_BLOCK.match(seg.marked or seg.text)
                     or 0 <= gap < (3 if _UNMAPPED_MARK.search(seg.text) else 2) * seg.size and closing
                     or 0 < gap < 2 * seg.size and last.text.isupper() and seg.text.isupper())):
            merged[-1] = Segment(f"{last.text} {seg.text}", seg.size, last.x0, seg.x1, seg.y,
                                 f"{last.marked or last.text} {seg.marked or seg.text}", last.style)
        else:
            merged.append(seg)
    return merged


def _authors(block: list[Segment]) -> list[tuple[str, str | None]]:
    """Names (the block's name-like segments) with their affiliations: the blocks their marks point at,
    where names carry marks and the affiliation lines start with them; else the lines under each name."""
    names, others, grouped = _name_lines(block)
    by_marks = _marked_affiliations(others)
    if by_marks and any(keys for _, _, keys in names):
        by_marks = _unmapped_in_order(by_marks, [keys for _, _, keys in names])
        # An author's affiliation is the first block a mark links it to ('Tao Wei*‡': '*' Peking
        # University); a later mark adds a second institution ('also at') or a footnote.
        found = {name: next((by_marks[k] for k in keys if k in by_marks
                             and not _NOTE.search(by_marks[k])), "") for _, name, keys in names}
        return [(name, grouped.get(name) or found[name] or None)
                for name in dict.fromkeys(n for _, n, _ in names)]
    lines: dict[str, list[str]] = {name: [] for _, name, _ in names}
    for seg in others:
        above = [(s, n) for s, n, _ in names if s.y > seg.y]
        if not above or _BARE_MARK.match(seg.text):
            continue
        # The names above it in its column (a grid's rows need not share a baseline), else all above; of
        # those the nearest row, then the nearest column in it.
        pool = [(s, n) for s, n in above if s.x0 < seg.x1 and seg.x0 < s.x1] or above
        row = min(s.y for s, _ in pool)
        in_row = [(s, n) for s, n in pool if abs(s.y - row) < s.size / 2]
        shared = len({id(s) for s, _ in in_row}) == 1  # one line 'A, B and C': its affiliation is theirs
        targets = (
            [n for _, n in in_row]
            if shared
            else [min(in_row, key=lambda sn: abs(sn[0].center - seg.center))[1]]
        )
        for name in targets:
            lines[name].append(_MARKS.sub("", seg.text).strip())
    _share_stacked(names, others, lines)
    _share_one_block(names, others, lines)
    return [(name, grouped.get(name) or join_affiliation(_first_institution(lines[name])) or None)
            for name in dict.fromkeys(n for _, n, _ in names)]


# A line that is an institution's whole name: headed by its kind ('University of Toronto', 'Universität
# Wien') or ending with it ('Stockholm University', 'Robert Koch Institute', 'Google Inc.'). 'Institute of
# Statistics' or 'Department of ...' over a university is a unit of it, no institution of its own.
_WHOLE_INSTITUTION = re.compile(
    r"^(?:The )?(?:University|Universit[äaé]t?|Universidad|Università|Universidade)\b"
    r"|\b(?:University|Universit(?:y|ät|at|é)|Institute|Institut|Institutet|College|Hospital|Inc\.?|GmbH|"
    r"Ltd\.?|Corporation|Foundation|Laboratories|LLC)$")


def _first_institution(lines: list[str]) -> list[str]:
    """The lines under a name up to its second institution: an author with two affiliations stacks them
    ('Stockholm University,' / 'Robert Koch Institute'), and its affiliation is the first. A university is
    no unit of another institution: a line after it that is an institution's whole name
    (``_WHOLE_INSTITUTION``) starts the second. Units over their university ('Department of Statistics' or
    'Prevention Institute' over 'University of Zurich') are one affiliation."""
    whole = [i for i, line in enumerate(lines) if _WHOLE_INSTITUTION.search(line.strip(" ,;"))]
    university = next((i for i in whole if re.search(r"Universi(?:t|dad|dade)", lines[i])), None)
    second = next((i for i in whole if university is not None and i > university), None)
    if second is None:
        return lines
    kept = lines[:second]
    return [*kept[:-1], kept[-1].rstrip(" ,;")]


# A block a mark leads to that is a note on the authors, not where they work: their first mark that leads
# to an institution gives the affiliation ('Alice Smith*¹': '*Equal contribution', '¹University of Alpha').
_NOTE = re.compile(r"\b(?:equal(?:ly)? contribut|contributed equally|corresponding author|correspondence|"
                   r"joint first|deceased)", re.IGNORECASE)


def _unmapped_in_order(by_marks: dict[str, str], keys: list[list[str]]) -> dict[str, str]:
    """Blocks opened by unmapped symbol glyphs (``UNMAPPED_MARKS``: '❸', '❹'), keyed again by the names'
    marks ('†', '‡') in the order both are printed, when no name's mark keys a block and there are as many
    names' marks as blocks: the font printed one mark, the text gives another code for it."""
    marks = list(dict.fromkeys(k for name_keys in keys for k in name_keys))
    if (any(k in by_marks for k in marks) or len(marks) != len(by_marks)
            or not all(_UNMAPPED_MARK.fullmatch(k) for k in by_marks)):
        return by_marks
    return dict(zip(marks, by_marks.values(), strict=True))


def _name_lines(block: list[Segment]) -> tuple[list[tuple[Segment, str, list[str]]], list[Segment],
                                                  dict[str, str]]:
    """The block's names (each with its line and the keys of its marks), its other lines (contacts left
    out), and the institution of each name printed on its own line after the names ('A, B, Institute')."""
    names: list[tuple[Segment, str, list[str]]] = []
    others: list[Segment] = []
    grouped: dict[str, str] = {}
    name_size: float | None = None
    name_style: str | None = None
    for seg in _join_wrapped(_merge_spaced(block)):
        text = _LEAD_SEPARATOR.sub("", seg.text)
        # The names of one block share their font: a line like a name in another style under them is
        # not one ('Google Brain' set upright under 'Ashish Vaswani' in bold).
        same_size = (name_size is None or abs(seg.size - name_size) < 0.5) and name_style in (None, seg.style)
        # A line opening with a superscript opens an affiliation block: names carry their marks after them.
        if _is_name_list(text) and same_size and not (seg.marked or "").startswith(MARK_OPEN):
            name_size, name_style = seg.size, seg.style
            names += [(seg, name, keys) for name, keys in _name_parts(seg)]
        elif same_size and not _ANONYMOUS.search(seg.text) and (group := _grouped_line(seg)) is not None:
            name_size, name_style = seg.size, seg.style
            names += [(seg, name, keys) for name, keys in group[0]]
            grouped.update((name, group[1]) for name, _ in group[0])
        elif names and not _SEPARATORS.match(seg.text) and (
                kept := _without_contacts(_numbered(seg, names))) is not None:
            others.append(kept)
    return names, others, grouped


def _numbered(seg: Segment, names: list[tuple[Segment, str, list[str]]]) -> Segment:
    """A line opening with a number in the text's own size and a space before a capital ('1 University of
    Alpha, Alpha City', as a Word manuscript types its marks) as a marked line, when a name above carries
    that number as its mark; else the line as it is (a number opening a line may be a street's: '12 Main
    Street')."""
    number = re.match(r"(\d{1,2})\s+(?=[A-Z])", seg.marked or seg.text)
    if number is None or not any(number.group(1) in keys for _, _, keys in names):
        return seg
    rest = (seg.marked or seg.text)[number.end():]
    return Segment(re.sub(r"⟨[^⟩]*⟩", "", rest).strip(), seg.size, seg.x0, seg.x1, seg.y,
                   f"{MARK_OPEN}{number.group(1)}{MARK_CLOSE}{rest}", seg.style)


_WRAP_LINES = 4  # the most lines one list of names is wrapped over with a name broken between two of them


def _join_wrapped(block: list[Segment]) -> list[Segment]:
    """Lines of one list of names that the measure wrapped inside a name ('..., Gunavardhan Kakulapati,
    Avinash' / 'Lakshman, Alex Pilchin, ...'), joined: a line listing names but for its broken one, and the
    lines directly below it in its size that make one list of names with it. Neither line alone is read as
    names (a single word is no name), so without the join the whole list is lost."""
    joined: list[Segment] = []
    i = 0
    while i < len(block):
        count = _wrapped_run(block[i:i + _WRAP_LINES])
        run = block[i:i + count]
        joined.append(block[i] if count == 1 else Segment(
            " ".join(s.text for s in run), run[0].size, min(s.x0 for s in run), max(s.x1 for s in run),
            run[-1].y, " ".join(s.marked or s.text for s in run), run[0].style))
        i += count
    return joined


def _wrapped_run(lines: list[Segment]) -> int:
    """How many of ``lines`` make one wrapped list of names (``_join_wrapped``); 1 when the first line is a
    list of names itself, names none, or no lines below it complete it."""
    first = _LEAD_SEPARATOR.sub("", lines[0].text)
    if _is_name_list(first) and len(lines) > 1:
        return 2 if _surname_wrapped(lines[0], lines[1]) else 1
    if _is_name_list(first) or not _NAME_SPLIT.search(first):
        return 1
    for count in range(2, len(lines) + 1):
        above, line = lines[count - 2], lines[count - 1]
        if abs(line.size - lines[0].size) >= 0.5 or not 0 < above.y - line.y < 2 * line.size:
            return 1
        # The break is inside a name: one word ends the line above, one word opens this one ('Avinash' /
        # 'Lakshman'); a place over a name ('New York, NY' / 'Bob Jones') is no wrapped list.
        ends = _NAME_SPLIT.split(_LEAD_SEPARATOR.sub("", above.text))[-1].split()
        opens = _NAME_SPLIT.split(_LEAD_SEPARATOR.sub("", line.text))[0].split()
        if len(ends) != 1 or len(opens) != 1:
            return 1
        if _is_name_list(_LEAD_SEPARATOR.sub("", " ".join(s.text for s in lines[:count]))):
            return count
    return 1


def _surname_wrapped(above: Segment, line: Segment) -> bool:
    """A list of names whose last name the measure broke before its surname ('..., R. James' / 'Cotton¹,
    Andreas S. Tolias⁵'): the line directly below in its size opens with one word before a separator, which
    is no name alone, and the two lines make one list of names."""
    if abs(line.size - above.size) >= 0.5 or not 0 < above.y - line.y < 2 * line.size:
        return False
    text = _LEAD_SEPARATOR.sub("", line.text)
    pieces = _NAME_SPLIT.split(text)
    if len(pieces) < 2 or len(_MARKS.sub("", pieces[0]).split()) != 1 or _is_name_list(text):
        return False
    return _is_name_list(_LEAD_SEPARATOR.sub("", f"{above.text} {line.text}"))


def _grouped_line(seg: Segment) -> tuple[list[tuple[str, list[str]]], str] | None:
    """Names grouped by affiliation on one line, their institution after them (JACoW, IEEE: 'A. N. Author†,
    H. Coauthor, Name of Institute, City, Country'): the names with their marks' keys, and the institution
    with its place, up to an address part. None unless names open the line and an institution follows."""
    marked = re.sub(r"⟨[^⟩]*⟩", lambda m: m.group().replace(",", ";"), seg.marked or seg.text)
    parts = [p for p in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", _LEAD_SEPARATOR.sub("", marked)) if p]
    count = len(list(itertools.takewhile(
        lambda p: bool(_NAME.match(_MARKS.sub("", re.sub(r"⟨[^⟩]*⟩", "", p)).strip()))
        and not _INSTITUTION.search(p), parts)))
    # an institution's word, or its acronym ('CERN, 1211 Geneva 23, Switzerland')
    if not count or count == len(parts) or not (_INSTITUTION.search(parts[count])
                                                or re.fullmatch(r"[A-Z][A-Z\d&-]+", parts[count])):
        return None
    names = _name_parts(Segment(seg.text, seg.size, seg.x0, seg.x1, seg.y, ", ".join(parts[:count])))
    place = itertools.takewhile(lambda p: not _ADDRESS.search(p), parts[count:])
    return names, ", ".join(re.sub(r"⟨[^⟩]*⟩", "", p) for p in place)


def _share_one_block(names: list[tuple[Segment, str, list[str]]], others: list[Segment],
                     lines: dict[str, list[str]]) -> None:
    """One column of affiliation lines under a row of names set apart (okapi-trec3: 'S E Robertson   S Walker
    S Jones ...' over 'Centre for Interactive Systems Research' / 'City University'), with no two lines side
    by side and every line under the lowest name, is the block of every name: not of the one it centres on."""
    placed = [o for o in others if not _BARE_MARK.match(o.text)]
    rows = [(a, b) for (a, _, _), (b, _, _) in itertools.combinations(names, 2)
            if a is not b and abs(a.y - b.y) < a.size / 2]
    if not placed or not rows or any(o.y > min(s.y for s, _, _ in names) for o in placed):
        return
    if any(abs(a.y - b.y) < a.size / 2 for a, b in itertools.combinations(placed, 2)):
        return  # lines side by side: a block per column
    block = [_MARKS.sub("", o.text).strip() for o in sorted(placed, key=lambda o: -o.y)]
    for name in lines:
        lines[name] = list(block)


def _share_stacked(names: list[tuple[Segment, str, list[str]]], others: list[Segment],
                   lines: dict[str, list[str]]) -> None:
    """Names stacked in one column with no line between them ('Ben Trovato' over 'G.K.M. Tobin', then their
    one block) share the block under the lowest of them: a name left without lines takes those of the name
    directly under it in its column."""
    # Bottom up: a stack of three passes its block up.
    for seg, name, _ in sorted(names, key=lambda n: n[0].y):
        if lines[name]:
            continue
        under = [(s, n) for s, n, _ in names if s.y < seg.y and s.x0 < seg.x1 and seg.x0 < s.x1]
        if not under:
            continue
        below, below_name = max(under, key=lambda sn: sn[0].y)
        between = [o for o in others if below.y < o.y < seg.y and o.x0 < seg.x1 and seg.x0 < o.x1]
        if not between and seg.y - below.y < 2 * seg.size:
            lines[name] = list(lines[below_name])


_CONTACT = re.compile(r"\S@\S|\bE-?mail\b|\bURL\b|https?:|\bwww\.|\bTel(?:ephone)?\b|\bFax\b", re.IGNORECASE)


# A journal's line under the authors that is no affiliation: the editor, the dates of the article's
# history, a present address, keywords ('Associate Editor: ...', 'Received on 1 May 2020; revised ...').
_EDITORIAL = re.compile(r"^(?:(?:Associate|Handling|Academic|Section|Guest|Communicating) )?Editors?\b|"
                        r"^(?:Received|Accepted|Revised|Published|Submitted)\b|"
                        r"^(?:Present|Current|Permanent) address\b|^(?:Keywords?|Key words)\b", re.IGNORECASE)


def _without_contacts(seg: Segment) -> Segment | None:
    """An author-block line without its address and contact details: None for a line that is one, or that
    is a note or a journal's line (``_EDITORIAL``) no mark opens; for
    a line listing its parts with semicolons ('Debian and R Projects; Chicago, IL, USA; edd@debian.org'),
    the parts that are none; and for an institution followed by its address after commas ('Elsevier B.V.,
    Radarweg 29, 1043 NX Amsterdam, The Netherlands'), the parts before the first address part."""
    opened = _LEADING_MARK.match(seg.marked or seg.text)
    if _EDITORIAL.search(seg.text) or _NOTE.search(seg.text) and not opened:
        return None  # (a note a mark opens is kept: it is that mark's block, which the mark's name skips)
    if not _ADDRESS.search(seg.text):
        return seg
    if ";" not in seg.text:
        return _before_address(seg)
    parts = [p.strip() for p in (seg.marked or seg.text).split(";")]
    # A part with an address is read like a line of its own: its institution before the address after commas
    # ('AT&T Labs Research, Room A277, Florham Park, New Jersey 07932; e-mail:').
    read = [p if not _ADDRESS.search(re.sub(r"⟨[^⟩]*⟩", "", p)) else _institution_part(p) for p in parts]
    # A lower-case word alone is a user name of an e-mail list ('{mernst;csk;chambers}@cs.washington.edu').
    kept = [p for p in read if p and not re.fullmatch(r"[a-z\d._{}-]+", re.sub(r"⟨[^⟩]*⟩", "", p))]
    if not kept:
        return None
    marked = "; ".join(kept)
    return Segment(re.sub(r"⟨[^⟩]*⟩", "", marked).strip(), seg.size, seg.x0, seg.x1, seg.y, marked)


def _before_address(seg: Segment) -> Segment | None:
    """The comma-separated parts of a line up to its first address or contact part, when its first part
    names an institution; else None."""
    marked = _institution_part(seg.marked or seg.text)
    if not marked:
        return None
    return Segment(re.sub(r"⟨[^⟩]*⟩", "", marked).strip(), seg.size, seg.x0, seg.x1, seg.y, marked)


def _institution_part(text: str) -> str | None:
    """The comma-separated parts of ``text`` up to its first address part (a street, a postcode, or contact
    details: an institution's web address after it, 'ᵃDebian Project, http://www.debian.org', ends it as
    its street does), when its first part names an institution; else None."""
    parts = text.split(",")
    kept = list(itertools.takewhile(lambda p: not _ADDRESS.search(re.sub(r"⟨[^⟩]*⟩", "", p)), parts))
    # A line that opens with an affiliation mark is an affiliation by that mark, whatever its words
    # ('ᵃPratt SILS, 144 w. 14th street, ...'): its first part names the institution.
    # (a unit named without an institution's word may come first: 'Section for Bioinformatics, Department of
    # Health Technology, Technical University of Denmark, 2800 Kgs. Lyngby')
    if not kept or not (any(_INSTITUTION.search(p) for p in kept) or _LEADING_MARK.match(kept[0])):
        return None
    return ",".join(kept).strip()


def _marked_affiliations(others: list[Segment]) -> dict[str, str]:
    """Affiliation blocks by their mark ('a', '1', '†'): a line that starts with a mark (or a line of the
    mark alone) opens a block, and the lines after it without a mark continue it; where blocks stand side by
    side ('¹University of Toronto   ²IBM Beaverton' over 'Dept. of Computer Science   Linux Technology
    Center'), a line continues the block opened above it in its column."""
    blocks: dict[str, list[str]] = {}
    current: list[str] = []
    opened: list[tuple[Segment, list[str]]] = []  # each block's opening line and its keys
    inline: set[int] = set()  # blocks opened a word's space after the text before them: a paragraph's
    previous: Segment | None = None
    for seg in others:
        marked = seg.marked or seg.text
        # A block opened right after the text before it on its row ('... United States of America,' '²' 'Broad
        # Institute ...') runs on in a paragraph of blocks (PLoS): its lines are no column of their own.
        if previous is not None and abs(previous.y - seg.y) < max(seg.size, previous.size) and (
                0 <= seg.x0 - previous.x1 < _GAP * max(seg.size, previous.size)):
            inline.add(id(seg))
        previous = seg
        if _BARE_MARK.match(seg.text) or _BARE_MARK.match(marked.strip("⟨⟩")) and marked.startswith("⟨"):
            current = _keys(seg.text)
            opened.append((seg, current))
            continue
        lead = _LEADING_MARK.match(marked)
        if lead:
            current = _keys(lead.group("sup") or lead.group("par") or lead.group("sym") or lead.group("num"))
            opened.append((seg, current))
            marked = marked[lead.end():]
        elif opened and id(opened[-1][0]) not in inline and any(
                o is not opened[-1][0] and abs(o.y - opened[-1][0].y) < opened[-1][0].size
                for o, _ in opened):  # the last block opened beside another: go by column
            column = [(o, keys) for o, keys in opened if o.y > seg.y and o.x0 < seg.x1 and seg.x0 < o.x1]
            current = min(column, key=lambda ok: ok[0].y)[1] if column else current
        # Blocks run together in one paragraph (eLife, PLoS, OUP, Nature: '¹Dept ..., Harvard University;
        # ²Howard'): a mark after a separator (';', ',', '.', 'and'), before a capital, opens the next block;
        # so does a symbol after a space ('∗University of Alpha   †Beta Labs').
        pieces = _INLINE_MARK.split(marked)  # text, (superscript, symbol), text, ...
        for index, piece in enumerate(pieces[::3]):
            if index:
                current = _keys(pieces[3 * index - 2] or pieces[3 * index - 1])
                opened.append((seg, current))
            text = re.sub(r"⟨[^⟩]*⟩", "", piece).strip(" ,;")
            for key in current if text else []:
                blocks.setdefault(key, []).append(text)
    return {key: join_affiliation(lines) for key, lines in blocks.items()}


_INLINE_MARK = re.compile(r"\s*(?:[;,.]|\band\b)\s*⟨([^⟩]+)⟩\s*(?=[A-Z])|\s+([∗*†‡§¶]+)(?=[A-Z])")


_END_BLOCK = re.compile(
    r"^(?:Affiliations?|Addresses?|Authors?['’]? addresses?)\s*:\s*$", re.MULTILINE | re.IGNORECASE
)


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
    return {name: join_affiliation(parts) for name, parts in result.items() if parts}


def _is_running_head(line: str, names: list[str]) -> bool:
    """A page's running head ('Douglas Bates, Martin Mächler 51'): author names with a page number."""
    return sum(name.split()[-1] in line for name in names) >= 1 and bool(re.search(r"\d+$", line))


# Where an abstract ends: the keywords, the classification lines of ACM and IEEE, or the first section.
# (PLoS's 'Author summary' and a 'Significance Statement' follow the abstract as boxes of their own.)
_ABSTRACT_END = (rf"\n\s*(?:{_KEYWORD_HEADS})\b|\n\s*(?:1\.?|I\.)?\s*(?:Introduction|INTRODUCTION)\b|"
                 r"\n\s*(?:Author summary|AUTHOR SUMMARY|Significance Statement)\b|\Z")
# 'Abstract' on a line of its own, or before the text on its line ('Abstract. ...', 'Abstract—...', or after a
# space alone as Springer's journals set it: 'Abstract Protein language models ...').
_ABSTRACT_TEXT = re.compile(
    rf"^\s*(?:Abstract|ABSTRACT|Summary|SUMMARY)\s*(?:[.:—–-]\s*|\n|[ \t]+(?=[A-Z]))(.+?)(?:{_ABSTRACT_END})",
    re.DOTALL | re.MULTILINE,
)


def _abstract(first_page: str) -> str | None:
    match = _ABSTRACT_TEXT.search(first_page)
    return " ".join(match.group(1).split()) or None if match else None


_STRUCTURED_TEXT = re.compile(rf"^\s*({_STRUCTURED_HEADINGS}\b.+?)(?:{_ABSTRACT_END})",
                              re.DOTALL | re.MULTILINE)


def _structured_abstract(first_page: str) -> str | None:
    """A structured abstract without an 'Abstract' heading: from its first heading, which it keeps
    ('Background: ...', as OUP's 'Motivation: ...' under an 'Abstract' heading is kept), to its end."""
    match = _STRUCTURED_TEXT.search(first_page)
    return " ".join(match.group(1).split()) or None if match else None
