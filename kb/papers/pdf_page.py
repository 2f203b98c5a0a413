"""A PDF's pages as pypdfium2 reads them: every page's text with ligatures resolved, and page 1's lines as
segments (characters with their boxes and font sizes, superscripts marked apart, TeX's accents on their
letters, each segment's font style). What the segments say (title, authors, abstract) is read in
``pdf_layout``.

- **Text**: every page's text, pages separated by ``PAGE_BREAK``; ligature code points (U+FB00-FB06) folded
  by NFKC, and the control codes TeX's T1 and OT1 fonts use for ligatures and quotes when the font has no
  Unicode map (where other extractors drop them: 'modied', 'uctuation') mapped back (``_FONT_CODES``).
- **Segments**: runs of text on one line in one size, split into columns by the gaps between their characters;
  a manuscript's line numbers left out, and the running header and footer read apart (``margin_lines``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

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


# Greek set in a font whose Unicode map gives mathematical look-alikes for some of its letters (U+2206
# INCREMENT for capital delta, U+00B5 MICRO SIGN for mu, U+2126 OHM SIGN for omega): in a word with Greek
# letters they are those letters ('∆ηµήτριος': 'Δημήτριος'); elsewhere they keep their meaning
# ('10 µm', '∆t').
_GREEK_LOOKALIKES = str.maketrans({"\u2206": "\u0394", "\u00b5": "\u03bc", "\u2126": "\u03a9"})
_GREEK_LETTERS = "\u0370-\u03ff\u1f00-\u1fff"
_LOOKALIKE_WORD = re.compile(rf"[\w\u2206\u2126]*[{_GREEK_LETTERS}][\w\u2206\u2126]*")
# Polytonic Greek sets a capital's breathing and accent before it, and a font may give them as spacing marks
# (U+1FBF PSILI in '᾿Α'): they go on the capital, as one letter ('Ἀ'), like TeX's spacing accents.
_GREEK_SPACING_MARK = re.compile("([\u0384\u0385\u1fbd\u1fbf-\u1fc1\u1fcd-\u1fcf\u1fdd-\u1fdf"
                                 "\u1fed-\u1fef\u1ffd\u1ffe])([\u0391-\u03a9])")


def _greek(text: str) -> str:
    """Greek words with their look-alike letters and spacing marks (``_GREEK_LOOKALIKES``,
    ``_GREEK_SPACING_MARK``) as the Greek letters they print."""
    text = _GREEK_SPACING_MARK.sub(lambda m: unicodedata.normalize(
        "NFC", m.group(2) + unicodedata.normalize("NFKD", m.group(1)).lstrip()), text)
    return _LOOKALIKE_WORD.sub(lambda m: m.group().translate(_GREEK_LOOKALIKES), text)


def clean_text(text: str) -> str:
    """Ligatures resolved (NFKC for U+FB00-FB06, font control codes mapped), TeX's spacing accents put
    on their letters, Greek's look-alikes and spacing marks as its letters (``_greek``), line ends as
    ``\\n``."""
    text = _TEX_COPYRIGHT.sub("©", _COMPOUND_HYPHEN.sub("-", text.replace("\r\n", "\n")))
    text = _OT1_FL.sub("fl", text).translate(_FONT_CODES)
    text = _OT1_EN_DASH.sub("–", text)
    text = _LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    if any(accent in text for accent in _SPACING_ACCENTS):
        text = _TEX_ACCENT.sub(lambda m: unicodedata.normalize(
            "NFC", (m.group(2) or m.group(4)) + _SPACING_ACCENTS[m.group(1) or m.group(3)]), text)
    if re.search(f"[{_GREEK_LETTERS}]", text):
        text = _greek(text)
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
    font: str = ""  # the font most of its letters are set in, by its name without a subset's prefix

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
    # how a field was read where no rule read it ('layout (learned year ranker, p=0.97)')
    read_by: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LearnedReaders:
    """Which learned readers may add to what the rules read (the settings of the same names): the year
    ranker fills a year the rules left empty (``pdf_year``), the line labeller mends an abstract
    (``pdf_roles``)."""

    year: bool = False
    abstract: bool = False

    def flags(self) -> list[str]:
        """As the PDF reader's child process takes them on its command line (``pdf_child``)."""
        flags = {"--learned-year": self.year, "--learned-abstract": self.abstract}
        return [flag for flag, on in flags.items() if on]

    @classmethod
    def from_flags(cls, argv: list[str]) -> LearnedReaders:
        return cls(year="--learned-year" in argv, abstract="--learned-abstract" in argv)


# -- reading the PDF ------------------------------------------------------------------------------

COLUMN_GAP = 1.0  # a horizontal gap wider than this many font sizes starts a new segment (a new column)


MARK_OPEN, MARK_CLOSE = "⟨", "⟩"  # around a superscript run in Segment.marked: '⟨a⟩Debian Project'
_MARK = re.compile(f"{MARK_OPEN}[^{MARK_CLOSE}]*{MARK_CLOSE}")  # one superscript run, with its brackets


def unmarked(text: str) -> str:
    """``text`` (a ``Segment.marked``, or a part of one) without its superscript runs: the text a reader
    sees with the marks left out ('⟨a⟩Debian Project' -> 'Debian Project'). Spaces are kept as they are."""
    return _MARK.sub("", text)


def remarked(seg: Segment, marked: str) -> Segment:
    """``seg`` read again from ``marked`` (the line a rule cut short, joined or gave a mark): ``marked`` as
    its marked text, that text's ``unmarked`` form, stripped, as its text, and its place, size, style and font
    kept, so that a rule comparing lines' faces reads it as the line it came from."""
    return replace(seg, text=unmarked(marked).strip(), marked=marked)


def row_groups(segments: list[Segment]) -> list[list[Segment]]:
    """Segments in rows, top to bottom, each row left to right: a row is the segments whose baselines lie
    within a third of their size of its first's (a superscript or an ORCID glyph moves a name's baseline by a
    fraction of a point: 'Al Kibria' at 551.7 beside 'Labrique' at 551.3 is on their line, not above it)."""
    rows: list[list[Segment]] = []
    for seg in sorted(segments, key=lambda s: -s.y):
        if rows and rows[-1][0].y - seg.y < max(seg.size, rows[-1][0].size) / 3:
            rows[-1].append(seg)
        else:
            rows.append([seg])
    return [sorted(row, key=lambda s: s.x0) for row in rows]


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
NO_SIZE = 2.0
# How tall a font's letters stand, in its size: capitals, digits and ascenders, and the x-height's letters.
_TALL_LETTERS, _TALL = frozenset("bdhklABCDEFGHIKLMNOPRSTUVWXYZ"), 0.69
_SHORT_LETTERS, _SHORT = frozenset("acemnorsuvwxz"), 0.43


def sized_line(chars: list[_Char], heights: list[float]) -> list[_Char]:
    """A line's characters, those whose font reports no size (``NO_SIZE``) given the size their printed
    letters show (``heights``: each character's box height): the median height of the line's capitals and
    ascenders over the share of the size they stand, else of its x-height letters. One size for the line,
    so that its words are not split apart by their letters' heights."""
    unsized = [i for i, c in enumerate(chars) if c[4] < NO_SIZE]
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
        if ch == " " or right - left > 0 or heights[i] > 0 or size >= NO_SIZE:
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
# The footnote symbols that mark a title, a name or an affiliation, for use inside a character class: '∗'
# (U+2217, what TeX's \ast and the math asterisk extract as) and the typed '*', the dagger and double dagger,
# the section and pilcrow signs.
SYMBOL_MARKS = "∗*†‡§¶"
UNMAPPED_MARK = re.compile(f"[{UNMAPPED_MARKS}]")


def _unmapped_marks_sized(chars: list[_Char]) -> list[_Char]:
    """A line's characters, each unmapped symbol glyph (``UNMAPPED_MARKS``) directly before a letter given
    that letter's size: set from a symbol font at another size, it would make the letters after it look
    raised and smaller (superscripts) and split the line at them."""
    sized = list(chars)
    for i, char in enumerate(sized[:-1]):
        after = sized[i + 1]
        if UNMAPPED_MARK.fullmatch(char[0]) and after[0].isalpha():
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


def _commonest(values: list[str]) -> str:
    """The value most of a segment's letters have ('' for none); of values as common, the first met. (Not
    ``max(set(values), ...)``: a set's order of strings changes with each process's hash seed, and a line
    read italic in one run and upright in the next changes what kb reads.)"""
    return Counter(values).most_common(1)[0][0] if values else ""


def page_segments(textpage: object, text: str) -> list[Segment]:
    """Page 1's text as segments, top to bottom (pdfium's own line order), columns split at wide gaps."""
    segments: list[Segment] = []
    chars: list[_Char] = []
    heights: list[float] = []
    # each letter's style ('' upright) and font name, by its place (left, bottom)
    letters: dict[tuple[float, float], tuple[str, str]] = {}

    def flush() -> None:
        run: list[_Char] = []
        line = _unmapped_marks_sized(sized_line(_unboxed_placed(chars, heights), heights))
        for char in _place_accents(line):
            visible = [c for c in run if c[0] != " "]
            # Another size at a word starts a segment; the run's size is its largest (a superscript that
            # opens it, 'ᵃDebian Project', is no size of its own).
            if char[0] != " " and visible and (
                    char[1] - visible[-1][2] > COLUMN_GAP * max(char[4], 1.0)  # a wide gap: another column
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
            styles = [letters.get((c[1], c[3]), ("", "")) for c in run if c[0].isalpha()]
            segment.style = _commonest([style for style, _ in styles])
            segment.font = _commonest([font for _, font in styles])
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
        if ch.isalpha():
            letters[(left, bottom)] = font_style(i)
    flush()
    return segments


_ITALIC_FLAG = 64  # the font descriptor's Italic flag (PDF 1.7, table 123)
# TeX's Computer Modern by its Type 1 names ('CMBX10', 'CMTI10'), and its T1-encoded versions, cm-super's and
# the EC fonts' ('SFBX1000', 'SFTI1000', 'ECBX1000': bold extended, text italic, slanted, sans bold ...).
_ITALIC_NAME = re.compile(r"Ital|Obl(?:ique)?|Slant|-It\b|-(?:Bold)?It$|^CM(?:TI|SL|MI)|"
                          r"^(?:SF|EC)(?:TI|SL|SI|BI)\d", re.IGNORECASE)
_BOLD_NAME = re.compile(r"Bold|Black|Heavy|Medi|Semibold|Demi|-Bd\b|^CMB|^CMBX|^CMSSBX|"
                        r"^(?:SF|EC)(?:BX|SX|XC)\d", re.IGNORECASE)


class FontStyles:
    """Each character's font style and font on one text page: the style 'italic' or 'bold' for a character set
    in such a font (by its descriptor's Italic flag, its weight of 600 or more, or its name:
    'NimbusRomNo9L-ReguItal', 'CMTI9', 'Times-Bold'), else ''; and the font's name without a subset's prefix.
    Worked out once per font (its name and flags), one call per character."""

    def __init__(self, raw: object) -> None:
        import ctypes

        import pypdfium2.raw as pdfium_c

        self._raw, self._pdfium = raw, pdfium_c
        self._buffer = ctypes.create_string_buffer(256)
        self._flags = ctypes.c_int(0)
        self._flags_ref = ctypes.byref(self._flags)
        self._fonts: dict[tuple[bytes, int], tuple[str, str]] = {}

    def __call__(self, index: int) -> tuple[str, str]:
        self._pdfium.FPDFText_GetFontInfo(self._raw, index, self._buffer, 256, self._flags_ref)
        key = (self._buffer.value, self._flags.value)
        if key not in self._fonts:
            name = key[0].decode("latin-1").split("+")[-1]
            italic = key[1] & _ITALIC_FLAG and not name.startswith("CMSY") or _ITALIC_NAME.search(name)
            bold = self._pdfium.FPDFText_GetFontWeight(self._raw, index) >= 600 or _BOLD_NAME.search(name)
            self._fonts[key] = ("" if not name else "italic" if italic else "bold" if bold else "", name)
        return self._fonts[key]


@dataclass
class PdfPages:
    """What ``read_pages`` reads from a PDF: each page's text, page 1's segments with the page's height (and
    page 2's after a cover page), page 1's free-text annotations and the document's information."""

    pages: list[str]
    layouts: list[tuple[list[Segment], float]]
    stamps: list[str]
    metadata: dict[str, str]


def read_pages(path: Path, is_cover: Callable[[list[str]], bool]) -> PdfPages:
    """A PDF's pages (see ``PdfPages``); page 2's segments are read only when ``is_cover`` says, given the
    texts of pages 1 and 2, that page 1 is a cover page. Raises ``ValueError`` for an unreadable file."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        raise ValueError(str(exc)) from None
    try:
        first: list[str] = []  # pages 1 and 2 cleaned, to tell a cover page
        layouts: list[tuple[list[Segment], float]] = []  # pages 1 and 2: segments and the page's height
        stamps: list[str] = []  # page 1's free-text annotations
        placed: list[str] = []  # each page's text in reading order, before it is cleaned
        for number, page in enumerate(document):
            stamps += free_text(page) if number == 0 else []
            textpage = page.get_textpage()
            raw_text = textpage.get_text_range(0, textpage.count_chars())
            placed.append(_placed_text(textpage, raw_text))
            if number > 1:
                continue  # cleaned below, once the whole document's spellings are known
            page_text, numbers = unnumbered(clean_text(placed[-1]).strip())
            first.append(page_text)
            if number == 0 or is_cover(first):  # page 2 only after a cover page
                layouts.append((_without_line_numbers(page_segments(textpage, raw_text), numbers),
                                page.get_height()))
        metadata = document.get_metadata_dict(skip_empty=True)
    finally:
        document.close()
    # each join spelled as the document does (``own_hyphens``); a page it leaves as it was is cleaned once
    # (and page 1's lines so too: a title's words broken at a line's end are the document's words)
    compounds = hyphenated_joins(placed) if any("\ufffe" in text for text in placed) else {}
    spelled = own_hyphens(placed, compounds) if compounds else placed
    layouts = [(_spelled_segments(segments, compounds), height) for segments, height in layouts]
    pages = [first[i] if i < len(first) and text == placed[i] else unnumbered(clean_text(text).strip())[0]
             for i, text in enumerate(spelled)]
    return PdfPages(pages, layouts, stamps, metadata)


# A word pdfium joined across a line's end (U+FFFE at the join, see ``_FONT_CODES``), and a word written with
# its hyphen on one line.
_LINE_END_JOIN = re.compile("([A-Za-z]+)\ufffe([a-z]+)")
_HYPHENATED = re.compile(r"\b([A-Za-z]+)-([a-z]+)\b")
_WORD = re.compile(r"[A-Za-z]+")


def own_hyphens(texts: list[str], compounds: dict[str, str]) -> list[str]:
    """The pages' texts with each word broken at a line's end spelled as the document spells it elsewhere
    (``compounds``: ``hyphenated_joins(texts)``): with its hyphen where the document writes it so on one line
    more often than closed up ('touch-' / 'screen' in a paper writing 'touch-screen' throughout:
    'touch-screen', not 'touchscreen'; 'non-' / 'linear' beside 'non-linear'); else joined, as a word the
    measure broke is ('perform-' / 'ers')."""
    return [_LINE_END_JOIN.sub(lambda join: compounds.get(join.group(1) + join.group(2), join.group()), text)
            for text in texts]


def hyphenated_joins(texts: list[str]) -> dict[str, str]:
    """The words broken at a line's end (``_LINE_END_JOIN``) that the document writes with their hyphen on one
    line more often than closed up, closed up and as it writes them ('touchscreen' -> 'touch-screen')."""
    hyphenated = Counter(f"{a}-{b}".casefold() for text in texts for a, b in _HYPHENATED.findall(text))
    if not hyphenated:
        return {}
    closed = Counter(w.casefold() for text in texts for w in _WORD.findall(text.replace("\ufffe", "-")))
    return {first + rest: f"{first}-{rest}" for text in texts for first, rest in _LINE_END_JOIN.findall(text)
            if hyphenated[f"{first}-{rest}".casefold()] > closed[(first + rest).casefold()]}


def _spelled_segments(segments: list[Segment], compounds: dict[str, str]) -> list[Segment]:
    """Page 1's lines with each word a line's end broke spelled as the document writes it
    (``hyphenated_joins``): a title's 'contextually-' / 'guided' is 'contextually-guided' where the body
    writes it so."""
    if not compounds:
        return segments

    def spell(text: str) -> str:
        return _WORD.sub(lambda word: compounds.get(word.group(), word.group()), text)

    return [replace(seg, text=spell(seg.text), marked=spell(seg.marked)) if _WORD.search(seg.text) else seg
            for seg in segments]


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


MARGIN = 0.1  # the running header and footer: the top and bottom tenth of a page


def body_text_size(segments: list[Segment]) -> float:
    """The size of a page's body text: the median of its segments' sizes (most lines are body lines)."""
    return sorted(s.size for s in segments)[len(segments) // 2]


def margin_lines(segments: list[Segment], height: float) -> list[str]:
    """Page 1's running header and footer, each column of it read top to bottom as one line (a journal's
    name stacked in its footer: 'Communications' / 'of' / 'the ACM'), and any small type above the page's
    first line of body-sized text."""
    band = [s for s in segments if s.y < MARGIN * height or s.y > (1 - MARGIN) * height]
    # A header set in small type above the page's first line of body-sized text, however far down the page's
    # top margin puts it (AMS's series line: 'Contemporary Mathematics').
    if segments:
        body = body_text_size(segments)
        first = max((s.y for s in segments if s.size >= body - 0.5), default=height)
        band += [s for s in segments if s.y > first and s.size < body - 0.5 and s not in band]
    columns: dict[int, list[Segment]] = {}
    for seg in band:
        key = next((k for k in columns if abs(k - seg.x0) < 3), round(seg.x0))
        columns.setdefault(key, []).append(seg)
    return [" ".join(s.text for s in sorted(col, key=lambda s: -s.y)) for _, col in sorted(columns.items())]
