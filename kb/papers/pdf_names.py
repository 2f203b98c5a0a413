"""What a line of page 1's author block is: a list of names (each with the keys of the marks after it:
'Hothorn¹,*'), an institution, an address or contact details, or prose; the marks linking names to affiliation
blocks; lines of names a superscript or the measure split, joined again; an affiliation's lines as one.
Which lines are the author block, and whose affiliation is whose, is read in ``pdf_authors``."""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable

from kb.papers.pdf_page import (
    COLUMN_GAP,
    MARK_CLOSE,
    MARK_OPEN,
    SYMBOL_MARKS,
    UNMAPPED_MARKS,
    Segment,
    unmarked,
)

# Lines of an author block that are an address, a date or contact details, not an institution. (A telephone's
# label is followed by its number, its other label or the line's end: 'Tel-Aviv University' is none.)
# An '@' is an e-mail's only between two non-spaces: 'PLT @ Northeastern University' names a group at one.
ADDRESS = re.compile(
    r"\d{3,}|^\d+ |\w\d*\s+\d+[a-z]?$|str\.\s*\d|\S@\S|\bE-?mail\b|\bURL\b|https?:|\bwww\.|"
    r"\bTel(?:ephone)?\b\.?:?\s*(?:\(\w+\)\s*)?(?:[+(\d/]|$)|\bFax\b|\b(?:Str\.|Straße|Street|Ave\.|Avenue|Road|Square|Lane|Drive|Boulevard|"
    r"P\.?O\.? Box)\b|^(?:January|February|March|April|May|June|July|August|"
    r"September|October|November|December)\b|"
    # a British postcode ('Chilton, OX11 0QX, UK'), in capitals as printed
    r"(?-i:\b[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}\b)|"
    # the web page's buttons a journal prints under the authors (ACS: 'Cite This: ...', 'Read Online',
    # 'ACCESS | Metrics & More | Article Recommendations'): no institution
    r"\bCite This\b|\bRead Online\b|\bMetrics & More\b|\bArticle Recommendations\b|^ACCESS$",
    re.IGNORECASE,
)


def up_to_address(parts: Iterable[str]) -> list[str]:
    """An affiliation's parts (its text split at commas) before the first that is an address part
    (``ADDRESS``: a street, a postcode, contact details), a mark's ⟨⟩ text aside: an institution's name ends
    where its address begins. Where the first part runs on from the institution's name into its postcode, no
    comma between ('Karolinska Institutet 171 77 Stockholm', 'Universität Hamburg 20146 Hamburg', 'University
    of Chinese Academy of Sciences Team for iGEM 2016'), the name is the words before the number."""
    parts = list(parts)
    kept = list(itertools.takewhile(lambda p: not ADDRESS.search(unmarked(p)), parts))
    if kept or not parts:
        return kept
    named = _BEFORE_NUMBER.match(parts[0])
    name = named.group("name") if named else ""
    return [name] if INSTITUTION.search(name) and not ADDRESS.search(unmarked(name)) else []


# An institution's name, its marks included, up to the first number of three digits or more after it.
_BEFORE_NUMBER = re.compile(r"^(?P<name>(?:⟨[^⟩]*⟩|[^\d⟨])*?[^\W\d_])\s+\d{3,}")


# (in other languages too: 'Universidad', 'Departamento', 'Dipartimento', 'Facultad', 'Escuela', 'École',
# 'Hochschule', 'Politecnico')
INSTITUTION = re.compile(r"Universi(?:t|dad|dade)|Institut|College|School|Depart(?:a?ment)|Dipartimento|"
                         r"Facult|Escuela|[ÉE]cole\b|Hochschule|Politecnico|Dept\.|Laborator|Center|Centre|"
                         r"Project|Inc\b|Ltd\b|GmbH|\bAG\b|Corporation|Foundation|Hospital|Academy|Faculty|"
                         r"Enthusiasts|Research|\bETH\b|\bEPFL\b|\bMIT\b|\bUC\b|Statistics|Seminar|Sciences?\b|Methodology|Pharma|"
                         r"Division|Group\b|Unit\b|Labs?\b|B\.V\.|N\.V\.|Pvt\b|LLC\b|Corp\b", re.IGNORECASE)


def _letter_classes() -> tuple[str, str]:
    """Two character classes' bodies (ranges: 'A-Z...') of the Basic Multilingual Plane's letters: those of
    Unicode's categories Lu and Lt (upper- and title-case), and those of Lo (letters of scripts without
    capitals). Built at import in one pass over the plane's categories, the runs of each class found by a
    regular expression over a string of one mark per character (8 ms where a pass per class took 17, in
    every ``kb add``'s PDF reader)."""
    marks = {"Lu": "U", "Lt": "U", "Lo": "O"}
    categories = map(unicodedata.category, map(chr, range(0x10000)))
    kinds = "".join([marks.get(category, " ") for category in categories])

    def body(mark: str) -> str:
        return "".join(re.escape(chr(run.start())) if run.end() - run.start() == 1
                       else f"{re.escape(chr(run.start()))}-{re.escape(chr(run.end() - 1))}"
                       for run in re.finditer(f"{mark}+", kinds))

    return body("U"), body("O")


# A capital letter of any script with capitals (Unicode's upper- and title-case letters): a name may open
# with 'Ú', 'Ł' or 'Š' ('Úlfar Erlingsson'), and a name printed in Greek or Cyrillic opens with a Greek or
# Cyrillic capital ('Δημήτριος Ἀ. Φιλίππου', 'Андрей Колмогоров'); and a letter of a script without capitals
# (Unicode's other letters: Han, kana, Hangul, Arabic, Hebrew, ...).
UPPER, _CASELESS = _letter_classes()
# A name word of a script without capitals has no capital to tell it by; it is told by its shortness: Han,
# kana and Hangul set a syllable a letter, and a name's words run to three at the most
# ('山田 太郎', '김 민수').
_CASELESS_WORD = rf"[{_CASELESS}]{{1,3}}"
# a word, initials run together ('G.K.M.') or hyphenated ('J.-P.')
_NAME_WORD = rf"(?:[{UPPER}]\.){{2,}}|[{UPPER}]\.-[{UPPER}]\.|[{UPPER}][\w'’\-]*\.?"
# A title's words, capitalised as a title capitalises them, that no name holds: prepositions, articles and
# conjunctions ('Bootstrapping Reasoning With Reasoning', 'Under Functional Constraint': a title's second
# line set under its first, or a subtitle, in the names' place). (Not the short words that are names of their
# own in some language: 'In', 'An', 'Do', 'To', 'On', 'Or' are Korean, Chinese, Vietnamese or Hebrew names.)
_TITLE_WORDS = (r"\b(?:The|Of|For|And|With|Without|Within|Under|From|Into|Onto|Upon|Towards?|Through|Using|"
                r"Via|Beyond|Between|Among|Across|Against|Versus|About)\b")
# (the particles a name sets in lower case: 'van der Maaten', 'dos Santos', 'del Toro', 'bin Said', and the
# Portuguese and Spanish 'and' between two surnames: 'Ivan Rosa e Silva', 'José Ortega y Gasset'; and the
# name a person goes by, in parentheses before the surname: 'J. S. (Pat) Heslop-Harrison', never last, where
# an affiliation would stand: 'Alice Smith (Google)')
# (An alternative of ``_NAME_WORD`` that opens with initials, 'G.K.M.' or 'J.-P.', matches a name's start
# alone: a line opening so is read as names whatever follows, as before the other scripts were added.)
NAME = re.compile(rf"^(?!.*{_TITLE_WORDS})"
                  rf"(?:{_NAME_WORD}(?: (?:{_NAME_WORD}|\([{UPPER}][\w'’\-]*\)(?= )|van|von|de|der|den|da|"
                  rf"das|di|do|dos|du|del|della|le|la|los|ter|bin|ibn|zu|e|y)){{1,4}}"
                  # (and after it, the name as its bearer writes it in a script without capitals: 'Wei Zhang
                  # (张伟)'; an affiliation in parentheses is in the paper's script: 'Alice Smith (Google)')
                  rf"(?: \({_CASELESS_WORD}(?: {_CASELESS_WORD})*\))?$"
                  # (or the name in such a script alone, its words short: '山田 太郎')
                  rf"|{_CASELESS_WORD}(?: {_CASELESS_WORD}){{1,3}}$)")
# Names are separated by commas, 'and', '&', (Springer's journals) a middle dot or bullet, or (Wiley's
# current journal template: Protein Science, Proteins, Animal Genetics) a vertical bar.
_NAME_SPLIT = re.compile(r",\s*(?:(?:and|AND)\s+)?|\s+(?:and|AND)\s+|\s*&\s*|\s+[·•|]\s+")
# and after a name (or numbers: 'Hothorn1'; or a symbol without a Unicode map: an ORCID or envelope icon)
# (a word processor's marks typed in the line's size after a space, 'Ada Lovelace 1,2': a name never ends in
# a digit; nor in a closing quote or a prime, which a scan's OCR layer makes of a footnote's star:
# 'Yannis E. Ioannidis’')
END_MARKS = re.compile(rf"[\s{SYMBOL_MARKS}{UNMAPPED_MARKS}]+$|(?<=[a-z]) ?\d(?:,\d)*$|(?<=[a-z])[’′]+$")


# What may open a line of names: a byline's 'by', or the 'and', comma or both (', and') joining it to the
# names of the line before ('Torsten Hothorn¹' / ', Kurt Hornik²' / 'and Achim Zeileis²'); and what may close
# one: the 'and', comma or Springer's middle dot joining it to the next ('Edmond Halley and' / 'Isaac Newton';
# 'Lucas Burns · Tatsuya Daniel ·' / 'Stephon Alexander · Justin Dressel'), or Wiley's vertical bar ('Irene
# Kuiper⁶ |' / 'Christina D. Lindquist⁷ |', each bar a segment of its own or glued to a name).
LEAD_SEPARATOR = re.compile(r"^\s*(?:[,&·|]\s*(?:(?:and|AND)\s+)?|(?:by|By|BY|and|AND)\s+)"
                            r"|(?:\s+(?:and|AND)|\s*[,&·|])\s*$")


# An academic degree after a name ('Alice Smith, PhD¹, Bob Jones MD²'), as medical journals and preprints
# print them: no name of its own. Only before a separator, a mark or the line's end ('M.D. Smith' is a name).
# So is an IEEE membership grade ('Alice Smith, Member, IEEE, and Bob Jones, Fellow, IEEE').
_IEEE_GRADE = r"(?:(?:Graduate )?Student |Senior |Life )?(?:Member|Fellow),?\s+IEEE"
IEEE_GRADE = re.compile(rf"\b{_IEEE_GRADE}\b")
_DEGREE = re.compile(r",?\s*\b(?:Ph\.?\s?D|M\.?D|M\.?Sc|B\.?Sc|MPH|DPhil|MBBS|MBChB|PharmD|DVM|FRCP|"
                     rf"{_IEEE_GRADE})\.?"
                     rf"(?=\s*(?:[,;{SYMBOL_MARKS}⟨]|and\b|&|$))")


# A no-break space, which typesetters set between a name's words (Frontiers:
# 'Marcos\u00a0Espinola-Sánchez'): a space to the name's rules.
NBSP = "\u00a0"


# A double-blind submission's stand-in for its authors ('Anonymous Authors', 'Anonymous Submission'): no
# names.
ANONYMOUS = re.compile(r"\bAnonymous\b", re.IGNORECASE)


# Numbers glued to a name, in a list with commas ('Ada Lovelace1,2, Alan Turing2'): marks the text did not
# raise (a word processor's, or a superscript the extractor set on the line).
_GLUED_MARKS = re.compile(r"(?<=[a-z])(\d{1,2}(?:,\d{1,2})+)(?=[\s,;]|$)")


# A superscript followed by a space and a capital closes one name and opens the next: a row of names set
# apart by space alone, each closed by its mark (ICML's 'Cuong V. Nguyen¹  Tal Hassner²  Matthias Seeger¹',
# NeurIPS's 'Wei Liu¹  Jun Wang²*', ICLR's, CVPR's): the mark stands where a list sets its comma.
_MARK_BETWEEN = re.compile(rf"{MARK_OPEN}[^{MARK_CLOSE}]*{MARK_CLOSE}[ \t]+(?=[{UPPER}])")


def listed(seg: Segment) -> str:
    """A line's text as a list of names reads it: each superscript between two names (``_MARK_BETWEEN``) as
    the comma it stands for, the other superscripts left out."""
    return unmarked(_MARK_BETWEEN.sub(", ", seg.marked or seg.text)).strip()


def is_name_list(text: str) -> bool:
    if ANONYMOUS.search(text):
        return False
    text = text.replace(NBSP, " ")
    text = _MARK_AFTER_COMMA.sub(_mark_before_comma, _DEGREE.sub("", _GLUED_MARKS.sub("", text)))
    # marks in parentheses: 'Wimmer(1,2)'
    text = re.sub(r"\(\d+(?:,\d+)*\)", "", LEAD_SEPARATOR.sub("", text))
    parts = [END_MARKS.sub("", p).strip() for p in _NAME_SPLIT.split(END_MARKS.sub("", text))]
    parts = [p for p in parts if p]
    return bool(parts) and not INSTITUTION.search(text) and all(NAME.match(p) and not _STREET.search(p)
                                                                for p in parts)


_STREET = re.compile(r"\b(?:Street|Road|Avenue|Square|Lane|Drive|Boulevard)$")  # no name ends so


# E-mail addresses, one by one or grouped in braces before their shared domain, as acmart and ACL set a line
# of them under the names ('{bernhard.kerbl | michael.kenzel | joerg.mueller}@icg.tugraz.at',
# '{thawani,jpujara,ilievski}@isi.edu'): their parts are in lower case, but they are contacts, no words of
# running text.
ADDRESSES = re.compile(r"\{[^{}]*\}\s*@\S+|\S+@\S+")


def is_prose(line: str) -> bool:
    """A line of running text (an unheaded abstract, a disclaimer), where an author block has ended: eight
    words or more, two thirds of them in lower case, and no institution named."""
    words = re.findall(r"[^\W\d_][\w'’-]*", line)
    return (len(words) >= 8 and sum(w[0].islower() for w in words) >= 2 * len(words) / 3
            and not INSTITUTION.search(line))


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
        return (len(text.split()) <= 3 and "," not in text and not INSTITUTION.search(text)
                and not re.fullmatch(r"[A-Z][A-Z\d&-]+", text))  # ... and no acronym: 'LIX' names a unit

    return (bare(before) and bool(INSTITUTION.search(line))) or (
        bare(line) and bool(INSTITUTION.search(before))
    )


# Marks linking a name to its affiliation block: superscript letters, numbers or symbols ('Sandersonb,c',
# 'Hothorn1', 'Rousseau*†'), or numbers in parentheses ('Wimmer(1,2)'). A symbol whose glyph has no Unicode
# map comes out as '?' ('Wyatt Lloyd?' over '?Princeton University'): a mark like the others, as a
# superscript or opening an institution. So does one the extractor gives as a control code, the same code
# after the name and before its institution (rum-conjecture-edbt: 'Mark Callaghan' and 'Facebook, Inc.', each
# with a fourth symbol given as '\x05').
_MARK_KEYS = re.compile(rf"[a-z]|\d+|[{SYMBOL_MARKS}#?{UNMAPPED_MARKS}\x01-\x08\x0e-\x1f]")
# (numbers and symbols in one list too: OUP's '1,∗'; a symbol may close a number or a letter with no comma
# between them, the corresponding author's: OUP's current template '1,2∗', BMC's '2,5*', Nature's '1*')
_MARK_ITEM = rf"(?:[a-z\d]{{1,2}}[{SYMBOL_MARKS}#]*|[{SYMBOL_MARKS}#]+)"
# (a word processor sets a space after each comma of a list of marks: '1, 3', '2, 3, #'; ICML's template sets
# the equal-contribution symbol before the affiliation's number with a space or none: '* 1', '*1')
_MARK_SEPARATOR = rf"(?:,[ \t]?|(?<=[{SYMBOL_MARKS}#])[ \t]?|[ \t](?=[{SYMBOL_MARKS}#]))"
# (an icon may close the marks: Nature's corresponding author's envelope, '1,3✉')
BARE_MARK = re.compile(rf"^(?:{_MARK_ITEM}(?:{_MARK_SEPARATOR}{_MARK_ITEM})*|\(\d+(?:,\d+)*\))"
                       rf"[{UNMAPPED_MARKS}]?$")
# (a symbol typed on the line between two superscripts is one run of marks with them: Frontiers's 'Katharine
# E. Lewis¹*†', the '*' not raised between the raised '1' and '†')
# A mark typed in the text closes a surname printed in capitals as it closes one in lower case (Portland
# Press: 'Rajni K. SHARMA†¹, Geoffrey MASUYER‡'; a byline in capitals: 'JOHN SMITH*'): two capitals before
# it, so that an initial's letter is never read as one ('K.' is no surname).
_AFTER_WORD = r"(?:(?<=[a-z])|(?<=[A-Z]{2}))"
_MARK_GROUP = re.compile(rf"⟨(?P<sup>[^⟩]*)⟩|\((?P<par>\d+(?:[,;]\d+)*)\)|"
                         rf"{_AFTER_WORD} ?(?P<num>\d(?:,\d)*)|{_AFTER_WORD}(?P<sym>[{SYMBOL_MARKS}]+)|"
                         rf"(?<=⟩)(?P<between>[{SYMBOL_MARKS}]+)(?=[ \t]*⟨)")
# The marks closing a name: one superscript run or several, a space between them where a word processor
# split the list after a comma ('Jianyi Yang¹,' '#'); each run's keys are the name's.
_TRAILING_MARKS = re.compile(rf"(?:[ \t]*(?:{_MARK_GROUP.pattern}))+[\s{SYMBOL_MARKS}{UNMAPPED_MARKS}]*$")
# A symbol or superscript set after the comma that follows its name ('Dingwen Tao,∗ Sheng Di,†'; Wiley's
# 'Sanjoy Dasgupta,¹ Anupam Gupta²'): it is that name's mark. So are symbols set on the line after such a
# superscript, before the next name (Science: 'Kresten Lindorff-Larsen,¹*† Stefano Piana,¹*†', the '*†' not
# raised): a name never opens with a mark.
_MARK_AFTER_COMMA = re.compile(rf",[ \t]*([{SYMBOL_MARKS}]+|⟨[^⟩]*⟩(?:[ \t]*[{SYMBOL_MARKS}]+(?=[ \t]|$))?)")


def _mark_before_comma(match: re.Match[str]) -> str:
    """A mark set after its name's comma (``_MARK_AFTER_COMMA``) moved before it; symbols after a superscript
    go into it ('⟨1⟩ *†' -> '⟨1*†⟩'), one mark."""
    mark = match.group(1)
    if mark.startswith(MARK_OPEN) and not mark.endswith(MARK_CLOSE):
        close = mark.index(MARK_CLOSE)
        mark = f"{mark[:close]}{mark[close + 1:].strip()}{MARK_CLOSE}"
    return f"{mark},"


def mark_keys(mark: str) -> list[str]:
    """The keys of a mark ('1,∗' -> '1', '*'): TeX's '∗' and a typed '*' are one key."""
    return _MARK_KEYS.findall(mark.replace("∗", "*"))


# PLOS sets an ORCID badge as the letters 'ID' in a font of its own, glued to the name before its mark
# ('Joseph AliID¹'): a name never ends in 'ID' after a lower-case letter.
_ORCID_BADGE = re.compile(r"(?<=[a-z])ID(?=⟨|[\s,;*]|$)")


def name_parts(seg: Segment) -> list[tuple[str, list[str]]]:
    """The names of a name line, each with the keys of the marks after it."""
    marked = _GLUED_MARKS.sub(lambda m: f"{MARK_OPEN}{m.group(1)}{MARK_CLOSE}",
                              _ORCID_BADGE.sub("", (seg.marked or seg.text).replace(NBSP, " ")))
    protected = re.sub(r"⟨[^⟩]*⟩|\(\d+(?:,\d+)*\)", lambda m: m.group().replace(",", ";"), marked)
    protected = LEAD_SEPARATOR.sub("", protected)  # a byline: 'by A, B and C', or 'and C' after 'A, B'
    protected = _MARK_AFTER_COMMA.sub(_mark_before_comma, _DEGREE.sub("", protected))
    # A superscript is never inside a name: one followed by a capital separates two ('Smith¹ Bob Jones²').
    protected = re.sub(r"(⟨[^⟩]*⟩)[ \t]+(?=[A-Z])", r"\1, ", protected)
    parts = []
    for part in _NAME_SPLIT.split(protected):
        match = _TRAILING_MARKS.search(part)
        keys = [k for run in (_MARK_GROUP.finditer(part, match.start()) if match else [])
                for g in ("sup", "par", "num", "sym", "between") if run.group(g)
                for k in mark_keys(run.group(g))]
        name = END_MARKS.sub("", unmarked(part[:match.start()] if match else part)).strip()
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
_OPENS_BLOCK = re.compile(rf"^(?:{MARK_OPEN}(?![^{MARK_CLOSE}]*{MARK_CLOSE}{_ICONS},)"
                          rf"|[{SYMBOL_MARKS}?]+(?=[A-Z]))")


# (a symbol typed after the superscript is one of its marks: MDPI's 'Francesco P. Fanizzi' '²,* and Antonio
# F. Logrieco⁴,*', the corresponding author's '*' not raised)
_CLOSING_MARK = re.compile(rf"{MARK_OPEN}[^{MARK_CLOSE}]*{MARK_CLOSE}[{SYMBOL_MARKS}]*{_ICONS}(?:,|and\b|&)")


def _name_end(text: str) -> bool:
    """A line's one capitalised word, no institution's: the surname a list of names wrapped to the next line
    ('..., Ole' / 'Winther²'), whose raised mark beside it is its own."""
    return bool(re.fullmatch(rf"[{UPPER}][\w'’-]+", text)) and not INSTITUTION.search(text)


# A superscript's baseline stands this many of its line's sizes above the line's, at least (0.3 missed
# Communications Medicine's '1,3✉', raised 0.27 of its size, which the extractor gives the line's size).
_RAISED = 0.25
_ICON_GAP = 3.0  # the widest gap, in type sizes, between a name and its mark (an ORCID icon fits in it)


def merge_spaced(block: list[Segment]) -> list[Segment]:
    """Segments of one line joined again: those a letter-spaced name split ('MICHAEL' 'J. FISCHER'), and
    those closer than a column's gap on one baseline, which a superscript or a change of size at a word
    split ('Torsten Hothorn¹' ', Kurt Hornik²'; 'Wirtschaftsuniversit' 'ät Wien')."""
    merged: list[Segment] = []
    for seg in block:
        last = merged[-1] if merged else None
        gap = seg.x0 - last.x1 if last is not None else -1.0
        # A mark alone, raised beside the end of a line of names ('Ernesto Jiménez' 'ᵇ'): that name's mark
        # (beside an institution it opens the next block: '?Princeton University,' '†' 'Intel Labs'). An
        # ORCID icon, drawn and no text, may stand between the name and its mark (OUP, MDPI), and a mark
        # the extractor gives the line's size is told by how high it is raised.
        if (last is not None and BARE_MARK.match(seg.text)
                and (seg.size < last.size - 0.5 or seg.y - last.y > _RAISED * last.size)
                and 0 <= gap < _ICON_GAP * min(seg.size, last.size) and last.y < seg.y < last.y + last.size
                and (is_name_list(LEAD_SEPARATOR.sub("", listed(last))) or _name_end(last.text))):
            merged[-1] = Segment(last.text, last.size, last.x0, seg.x1, last.y,
                                 f"{last.marked or last.text}{MARK_OPEN}{seg.text}{MARK_CLOSE}", last.style)
            continue
        # A segment opening with the previous name's mark, set after a space ('Alice Smith' '¹,*, Bob Jones',
        # MDPI): its box starts after the mark, so the gap holds the mark's width too, and an ORCID icon's
        # (OUP: 'Alan E. Murphy' '¹,²*, Brian M. Schilder', 2.5 sizes apart).
        closing = bool(_CLOSING_MARK.match(seg.marked or "")) and last is not None and is_name_list(
            LEAD_SEPARATOR.sub("", listed(last)))
        # (a gap after a name's superscript holds the mark's width too: 'Johansen²,*' ', Ole')
        after_mark = (last.marked or "").endswith(MARK_CLOSE) if last is not None else False
        # (a scan's OCR layer boxes each word, and a given name alone may stand more than a space from the
        # rest of the name: 'Yannis' 'E. Ioannidis', 13 points apart in 11-point type)
        given = (last is not None and re.fullmatch(r"[A-Z][a-z]+", last.text) is not None
                 and is_name_list(f"{last.text} {seg.text}"))
        if (last is not None and abs(last.y - seg.y) < 0.4 * seg.size and abs(last.size - seg.size) < 0.5
                and (0 <= gap < (2 if after_mark or given else 1) * COLUMN_GAP * seg.size
                     and not _OPENS_BLOCK.match(seg.marked or seg.text)
                     or 0 <= gap < _ICON_GAP * seg.size and closing
                     or 0 < gap < 2 * seg.size and last.text.isupper() and seg.text.isupper())):
            merged[-1] = Segment(f"{last.text} {seg.text}", seg.size, last.x0, seg.x1, seg.y,
                                 f"{last.marked or last.text} {seg.marked or seg.text}", last.style)
        else:
            merged.append(seg)
    return merged


_WRAP_LINES = 4  # the most lines one list of names is wrapped over with a name broken between two of them


def join_wrapped(block: list[Segment]) -> list[Segment]:
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
    """How many of ``lines`` make one wrapped list of names (``join_wrapped``); 1 when the first line is a
    list of names itself, names none, or no lines below it complete it."""
    first = LEAD_SEPARATOR.sub("", lines[0].text)
    if is_name_list(first) and len(lines) > 1:
        return 2 if _surname_wrapped(lines[0], lines[1]) else 1
    if is_name_list(first) or not _NAME_SPLIT.search(first):
        return 1
    for count in range(2, len(lines) + 1):
        above, line = lines[count - 2], lines[count - 1]
        if abs(line.size - lines[0].size) >= 0.5 or not 0 < above.y - line.y < 2 * line.size:
            return 1
        # The break is inside a name: one word ends the line above, one word opens this one ('Avinash' /
        # 'Lakshman'), or initials stand on either side of the break ('Rebecca' / 'A. Dagg', 'Rebecca A.' /
        # 'Dagg'); a place over a name ('New York, NY' / 'Bob Jones') is no wrapped list.
        ends = END_MARKS.sub("", _NAME_SPLIT.split(LEAD_SEPARATOR.sub("", above.text))[-1]).split()
        opens = END_MARKS.sub("", _NAME_SPLIT.split(LEAD_SEPARATOR.sub("", line.text))[0]).split()
        if not (len(ends) == len(opens) == 1 or _broken_at_initials(ends, opens)):
            return 1
        if is_name_list(LEAD_SEPARATOR.sub("", " ".join(s.text for s in lines[:count]))):
            return count
    return 1


# A given name as it opens a name: a capital, then lower-case letters (hyphenated: 'Ann-Marie'); and an
# initial ('A.', 'J.-P.').
_GIVEN_NAME = re.compile(rf"[{UPPER}][^\W\d_]*[a-z][^\W\d_]*(?:-[{UPPER}][^\W\d_]*)?$")
_INITIAL = re.compile(rf"[{UPPER}]\.(?:-[{UPPER}]\.)?$")


def _broken_at_initials(ends: list[str], opens: list[str]) -> bool:
    """The words ending a line (``ends``) and opening the next (``opens``) are one name the measure broke
    where its initials stand: a given name, and the initials after it on either line, then one surname
    ('Rebecca' / 'A. Dagg', 'Rebecca A.' / 'Dagg', 'Loretta' / 'M. S. Lau', as NAR, OUP and Cell Press set a
    long byline). A place's words are no given name and initials ('New York, NY' / 'Bob Jones')."""
    words = ends + opens
    return (bool(ends) and bool(opens) and 2 < len(words) <= 5 and bool(_GIVEN_NAME.match(words[0]))
            and bool(_GIVEN_NAME.match(words[-1])) and all(_INITIAL.match(w) for w in words[1:-1]))


def _surname_wrapped(above: Segment, line: Segment) -> bool:
    """A list of names whose last name the measure broke before its surname ('..., R. James' / 'Cotton¹,
    Andreas S. Tolias⁵'): the line directly below in its size opens with one word before a separator, which
    is no name alone, and the two lines make one list of names."""
    if abs(line.size - above.size) >= 0.5 or not 0 < above.y - line.y < 2 * line.size:
        return False
    text = LEAD_SEPARATOR.sub("", line.text)
    pieces = _NAME_SPLIT.split(text)
    if len(pieces) < 2 or len(END_MARKS.sub("", pieces[0]).split()) != 1 or is_name_list(text):
        return False
    return is_name_list(LEAD_SEPARATOR.sub("", f"{above.text} {line.text}"))


CONTACT = re.compile(r"\S@\S|\bE-?mail\b|\bURL\b|https?:|\bwww\.|\bTel(?:ephone)?\b|\bFax\b", re.IGNORECASE)
