"""Page 1's author block read into authors with their affiliations: the names (``pdf_names``) linked to the
affiliation blocks their marks point at ('Hothorn¹' and '¹Universität Zürich'), else to the lines under each
name (same column first), else to a footnote of the page that states them (by a symbol mark, by number, or
over the corresponding author's note). Addresses, e-mail and a journal's lines under the authors are left
out."""

from __future__ import annotations

import dataclasses
import itertools
import re

from kb.papers.pdf_names import (
    ADDRESS,
    ANONYMOUS,
    BARE_MARK,
    CONTACT,
    END_MARKS,
    IEEE_GRADE,
    INSTITUTION,
    LEAD_SEPARATOR,
    NAME,
    is_name_list,
    is_prose,
    join_affiliation,
    join_wrapped,
    listed,
    mark_keys,
    merge_spaced,
    name_parts,
    up_to_address,
)
from kb.papers.pdf_page import (
    COLUMN_GAP,
    MARK_CLOSE,
    MARK_OPEN,
    SYMBOL_MARKS,
    UNMAPPED_MARK,
    UNMAPPED_MARKS,
    Segment,
    body_text_size,
    remarked,
    row_groups,
    unmarked,
)


def page_authors(block: list[Segment], page: str) -> list[tuple[str, str | None]]:
    """The authors of page 1's author block (``block``: its lines) with their affiliations: those the block
    links to each name (``block_authors``), else those a footnote of the page (``page``: its text)
    states, by a symbol mark, by number, or over the corresponding author's note."""
    # An affiliation holding a control code is text a font left unmapped ('atthew Levine \x01', its bitmap
    # capital lost; 'K\x88tw Gatzèa', a Greek font's address read as Latin codes): none, rather than a garbled
    # one. (C1 controls, U+0080-U+009F, are never printed text either.) Nor is an aside in brackets ('(Lecture
    # at the physical-mathematical faculty, ...)', a translator's note under the name) or a software release's
    # line ('X Version 11, Release 7.7', a manual's byline): kb leaves a field it is not sure of empty.
    authors = [(name, None if affiliation and _NO_AFFILIATION.search(affiliation) else affiliation)
               for name, affiliation in _footnoted(block_authors(block), block, page)]
    authors = _numbered_footnote(authors, block, page)
    authors = _numbered_lines(authors, block, page)
    authors = _labelled_footnote(authors, block, page)
    authors = _under_the_correspondence(authors, block, page)
    # (an address line's separator left at its end where the next line, contacts only, was dropped:
    # 'Mangosuthu University of Technology, Umlazi,' over 'Durban 4026, South Africa; e-mail ...')
    authors = _after_the_correspondence(_over_the_correspondence(authors, page), page)
    authors = _respectively(authors)
    return [(name, affiliation.rstrip(" ,;") or None if affiliation else affiliation)
            for name, affiliation in authors]


def _respectively(authors: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """Institutions listed in the byline's order on one line under it, as the Annals and other IMS journals
    set them: 'By Persi Diaconis, Susan Holmes and Radford M. Neal' over 'Stanford University, Stanford
    University and INRA and University of Toronto'. Where every name got the same line and it splits as a list
    of names does (commas, then a last 'and') into one institution per name, each name takes its own; an
    address ('Department of Physics and Astronomy, University of X') has no last 'and' after its commas or
    parts that name no institution, and stays whole."""
    lines = {affiliation for _, affiliation in authors}
    line = lines.pop() if len(lines) == 1 else None
    if len(authors) < 2 or not line:
        return authors
    *firsts, last = line.split(", ")
    if " and " not in last:
        return authors
    parts = [*firsts, *last.rsplit(" and ", 1)]
    if len(parts) != len(authors) or not all(INSTITUTION.search(part) for part in parts):
        return authors
    return [(name, part) for (name, _), part in zip(authors, parts, strict=True)]


_UNMAPPED_TEXT = re.compile(r"[\x00-\x1f\x80-\x9f]")  # control codes, C0 and C1: never printed text
_NO_AFFILIATION = re.compile(rf"{_UNMAPPED_TEXT.pattern}|^\s*[(\[]|\b(?:Version|Release)\s+\d")
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
        for key in [] if affiliation else [k for k in marks.get(name, []) if k in SYMBOL_MARKS + "#"]:
            symbols = "*∗" if key == "*" else key
            note = re.search(rf"^\s*[{symbols}]\s*(?P<text>[^\n]+)", page, re.MULTILINE)
            first = re.split(r"\.\s|;|,? and ", note.group("text"))[0].strip(" .") if note else ""
            if first and INSTITUTION.search(first) and not CONTACT.search(first) and all(
                    w[:1].isupper() or not w[:1].isalpha() or w in _SMALL_WORDS for w in first.split()):
                affiliation = first
                break
        found.append((name, affiliation))
    return found


# Where a numbered footnote of affiliations opens: a line starting '1 ' and an institution's name, or the
# raised '1' on a line of its own over it (BMC: '1' / ' MRC Integrative Epidemiology Unit, University ...'),
# or glued to it (Nature Portfolio: '1DTU Compute, Technical University of Denmark, Lyngby, Denmark.
# 2Department ...').
_FIRST_FOOTNOTE = re.compile(r"^[ \t]*1(?:[ \t]+|[ \t]*\n[ \t]*|(?=[A-Z][A-Za-z]))(?=[A-Z])"
                             r"(?=[^\n]*?(?:" + INSTITUTION.pattern + "))", re.MULTILINE | re.IGNORECASE)
# The next block opens after a sentence's end or at a line's start (its number raised at the end of the line
# before, the extractor gives it a line of its own: 'USA. 2' / 'Institute for ...'), its number set apart from
# the institution or glued to it ('USA. 10Department of ...', Science).
_NEXT_FOOTNOTE = re.compile(r"(?:^[ \t]*|(?<=[.;])\s+)(\d{1,2})(?:\s+(?=[A-Z])|(?=[A-Z][A-Za-z]))",
                            re.MULTILINE)


def _numbered_footnote(authors: list[tuple[str, str | None]], block: list[Segment],
                       page: str) -> list[tuple[str, str | None]]:
    """Affiliations in a numbered footnote at the foot of page 1 (Nature's journals: '1 Queen Mary University
    of London, School of ..., London E1 2AT, UK. 2 Medical Research Council—Laboratory of ...'), for names
    whose number marks the author block left unlinked: each block's institution up to its first address
    part. Only when no name has an affiliation, and every name's first number opens a block that names an
    institution; else the names as they were (a numbered line of the body is no footnote)."""
    numbers = _unlinked_numbers(authors, block)
    starts = list(_FIRST_FOOTNOTE.finditer(page))
    if numbers is None:
        return authors
    if not starts:
        return _numbers_on_their_lines(authors, numbers, block, page)
    # The footnote ends at a line of prose ('Full list of author information is available at the end of the
    # article', BMC) or at the page's end. (a line the measure broke after a dash goes on without a space:
    # 'Council—' / 'Laboratory')
    lines = page[starts[-1].start():].split("\n")
    foot = "\n".join(itertools.takewhile(lambda line: not is_prose(line), lines))
    return _by_number(authors, numbers, numbered_blocks(foot))


# A footnote's number set raised on a line of its own over its address (SAGE: '1' / 'Enterprise Ireland
# Medical and Engineering Technologies Gateway, GMIT, Galway, Ireland' / '2' / ...).
_NUMBER_ALONE = re.compile(r"^[ \t]*(\d{1,2})[ \t]*$")


def _numbers_on_their_lines(authors: list[tuple[str, str | None]], numbers: dict[str, str],
                            block: list[Segment], page: str) -> list[tuple[str, str | None]]:
    """Affiliations in a footnote whose numbers stand on lines of their own, each over its address's one
    line (SAGE's journals), where the addresses need name no institution by a word ('Enterprise Ireland ...
    Gateway, GMIT'): the numbers say what they are, so they must run 1, 2, ... in the page's last such run
    and be exactly the numbers the names carry. Each name gets the address its first number opens, up to its
    first address part; else the names as they were."""
    lines = page.splitlines()
    runs: list[dict[str, str]] = []
    for i, line in enumerate(lines[:-1]):
        number = _NUMBER_ALONE.match(line)
        if number is None or not lines[i + 1].strip() or _NUMBER_ALONE.match(lines[i + 1]):
            continue
        if number.group(1) == "1":
            runs.append({})
        if runs and number.group(1) == str(len(runs[-1]) + 1):
            runs[-1][number.group(1)] = lines[i + 1].strip()
    carried = {k for _, _, keys in _name_lines(block)[0] for k in keys if k.isdigit()}
    if not runs or len(runs[-1]) < 2 or set(runs[-1]) != carried:
        return authors
    institutions = {n: ",".join(up_to_address(text.split(","))).strip() for n, text in runs[-1].items()}
    if not all(institutions[n] for n in numbers.values()):
        return authors
    return [(name, institutions[numbers[name]]) for name, _ in authors]


def numbered_blocks(text: str) -> dict[str, str]:
    """Each block's institution, by its number, in a run of numbered affiliation blocks ('1 Queen Mary
    University of London, School of ..., London E1 2AT, UK. 2 Medical Research Council—Laboratory of ...'):
    the block's text up to its first address part, where it names an institution; the first block of a
    number counts. (a line the measure broke after a dash goes on without a space: 'Council—' /
    'Laboratory')"""
    pieces = _NEXT_FOOTNOTE.split(re.sub(r"(?<=[—–-])\s*\n\s*", "", text))  # '', number, text, number, ...
    blocks: dict[str, str] = {}
    for number, body in zip(pieces[1::2], pieces[2::2], strict=True):
        institution = _institution_part(" ".join(body.split()))
        if institution and number not in blocks:
            blocks[number] = institution.strip(" .")
    return blocks


def name_marks(block: list[Segment]) -> dict[str, list[str]]:
    """The keys of each name's marks in page 1's author block (``block``), for blocks printed elsewhere in
    the paper to be linked to the names (``pdf_affiliations``)."""
    marks: dict[str, list[str]] = {}
    for _, name, keys in _name_lines(block)[0]:
        marks.setdefault(name, keys)
    return marks


# -- affiliations in page 1's footnote, by the names' marks --------------------------------------------------

_FOOT_THIRD = 1 / 3  # a footnote stands in the lowest third of the page's text ...
_FOOT_SMALLER = 0.5  # ... set at least this many points smaller than the body
_FOOT_MOST_WORDS = 10  # more than an institution's name runs to: a footnote's sentence
_RAISED_MARK = 0.8  # a mark alone on its segment is set this much smaller than the footnote's text, at most
# A mark opening a block of the footnote: a superscript or a symbol at the text's start or after a space
# ('¹Amazon Web Services ²Facebook AI', '∗DeepMind †Meta AI'), or a number glued to a capitalised word at
# the line's start where no superscript was told ('1Amazon Web Services').
_FOOT_MARK = re.compile(rf"(?:^|(?<=\s))(?:⟨(?P<sup>[^⟩]+)⟩|(?P<sym>[{SYMBOL_MARKS}]+))\s*(?=[^\W\d_])"
                        r"|^(?P<num>\d{1,2})(?=[A-Z][a-z])")
# A line of the footnote goes on with the block above it only where that block's text stops mid-phrase
# (the measure broke it after a comma, a dash, 'of' or 'and'); else it is another note (the proceedings'
# line).
_MID_PHRASE = re.compile(r"(?:[,&–—-]|\b(?:of|and|for|the|de|in))$")
# A full stop ending a sentence of the footnote: not an abbreviation's ('Dept. of', 'St. Louis', 'Univ.').
_SENTENCE_END = re.compile(r"(?<!\b[A-Z][a-z])(?<!\bDept)(?<!\bUniv)\.(?:\s+(?=[A-Z(])|\s*$)")


def footnote_affiliations(segments: list[Segment], marks: dict[str, list[str]]) -> dict[str, str]:
    """Each name's institution from page 1's footnote, opened by the marks the names carry (ICML, AISTATS,
    NeurIPS and ICLR camera-readies, workshops: 'Cuong V. Nguyen¹  Tal Hassner²' over the footnote '¹Amazon
    Web Services ²Facebook AI (Work done before joining Facebook). Correspondence to: ...'), where the author
    block prints none (``marks``: the keys of the names to place). A footnote is set smaller than the body,
    in the lowest third of the page's text (``segments``: page 1's); a block runs from its mark to the next.
    Its institution is its first clause (no aside in brackets) up to an address part: the mark and the place
    say what it is, so no institution's word is needed ('Amazon Web Services', 'DeepMind'), but it must read
    as a name does (each word capitalised but the small ones, ten words at most, no contacts). A note is no
    block ('Equal contribution', 'Correspondence to', an e-mail, 'Work done while at ...'): its name goes on
    to its next mark. Only where every name's marks lead to an institution; else none."""
    if not segments or not marks or not all(marks.values()):
        return {}
    body = body_text_size(segments)
    low, top = min(s.y for s in segments), max(s.y for s in segments)
    foot = [s for s in segments if s.y < low + _FOOT_THIRD * (top - low) and s.size <= body - _FOOT_SMALLER]
    blocks = _footnote_blocks(foot)
    found: dict[str, str] = {}
    for name, keys in marks.items():
        # (the first block a name's marks lead to that reads as an institution: a note, a sentence or contacts
        # is passed over for the name's next mark; a name with none places nobody)
        institution = next((i for k in _run_apart(keys, blocks) if k in blocks
                            and (i := _footnote_institution(_first_clause(blocks[k])))), None)
        if institution is None:
            return {}
        found[name] = institution
    return found


def _footnote_blocks(foot: list[Segment]) -> dict[str, str]:
    """The blocks of a footnote's lines (``foot``, in the page's text order), by the keys of the mark opening
    each (``_FOOT_MARK``; a raised mark alone opens the text after it); the first block of a key counts."""
    blocks: dict[str, list[str]] = {}
    current: list[str] = []
    raised = _RAISED_MARK * max((s.size for s in foot), default=0.0)  # a mark alone is raised, so smaller
    for seg in foot:
        marked = (seg.marked or seg.text).strip()
        if seg.size < raised and BARE_MARK.match(re.sub(r"[⟨⟩]", "", marked)):
            current = [k for k in mark_keys(re.sub(r"[⟨⟩]", "", marked)) if k not in blocks]
            for key in current:
                blocks[key] = []
            continue
        opens = list(_FOOT_MARK.finditer(marked))
        # text before the first mark goes on with the block above, where it stopped mid-phrase or has no text
        before = marked[:opens[0].start()] if opens else marked
        last = [blocks[k] for k in current]
        if before.strip() and last and (not last[0] or _MID_PHRASE.search(last[0][-1])):
            for lines in last:
                lines.append(before.strip())
        elif before.strip():
            current = []
        for at, mark in enumerate(opens):
            end = opens[at + 1].start() if at + 1 < len(opens) else len(marked)
            current = [k for k in mark_keys(mark.group("sup") or mark.group("sym") or mark.group("num"))
                       if k not in blocks]
            for key in current:
                blocks[key] = [marked[mark.end():end].strip()]
    return {key: unmarked(_joined_lines(lines)) for key, lines in blocks.items() if lines}


def _joined_lines(lines: list[str]) -> str:
    """A block's lines as one text, a word the measure broke at its hyphen joined again."""
    return re.sub(r"(?<=[a-z])- (?=[a-z])", "", " ".join(lines))


def _first_clause(text: str) -> str:
    """A footnote block's first clause, without asides in brackets: up to its first sentence's end, a
    semicolon, or a note run on after the institution ('Google Inc. Correspondence to: ...')."""
    text = " ".join(re.sub(r"\s*\([^()]*\)", "", text).split())
    note = _NOTE.search(text)
    return _SENTENCE_END.split(text[:note.start()] if note and note.start() else text)[0].split(";")[0]


def _footnote_institution(clause: str) -> str | None:
    """A footnote block's institution (``footnote_affiliations``): its first clause (``_first_clause``) up to
    its first address part; None unless it reads as an institution's name."""
    parts = up_to_address(clause.split(","))
    institution = ",".join(parts).strip(" .,:")
    words = institution.split()
    if (not words or len(words) > _FOOT_MOST_WORDS or CONTACT.search(institution) or _NOTE.search(institution)
            or is_prose(institution)):
        return None
    if not all(w[:1].isupper() or not w[:1].isalpha() or w in _SMALL_WORDS for w in words):
        return None
    if _POSITION_ONLY.fullmatch(re.sub(r"^[A-Z]{2,}\s+", "", institution)):
        return None  # a position, an organisation's acronym before it at most ('CIFAR Senior Fellow')
    return institution


def _unlinked_numbers(authors: list[tuple[str, str | None]], block: list[Segment]) -> dict[str, str] | None:
    """Each name's first number mark, for a numbered footnote to give the names their affiliations: only where
    no name has an affiliation and every name has a number; else None."""
    if not authors or any(a for _, a in authors):
        return None
    keys = {name: k for _, name, k in _name_lines(block)[0]}
    numbers = {name: next((k for k in keys.get(name, []) if k.isdigit()), "") for name, _ in authors}
    return numbers if all(numbers.values()) else None


def _by_number(authors: list[tuple[str, str | None]], numbers: dict[str, str],
               institutions: dict[str, str]) -> list[tuple[str, str | None]]:
    """Each name with the institution of the footnote its number opens, where every name's footnote names
    one; else the names as they were."""
    if not all(n in institutions for n in numbers.values()):
        return authors
    return [(name, institutions[numbers[name]]) for name, _ in authors]


# A line of numbered affiliations set in the text's size ('1 Modal’X, UPL, Univ Paris Nanterre, F-92000
# Nanterre, France', the PLOS template): its number, then a letter.
_NUMBERED_LINE = re.compile(r"^[ \t]*(\d{1,2})[ \t]+(?=[^\W\d_])(?P<text>.*)$")
_WRAPPED_LINES = 2  # the most lines one numbered affiliation wraps onto


def _numbered_lines(authors: list[tuple[str, str | None]], block: list[Segment],
                    page: str) -> list[tuple[str, str | None]]:
    """Affiliations on numbered lines under the names, each number set in the line's size and not raised
    (PLOS's template: 'Olivier Collier1,*, Véronique Stoven2,3,4, Jean-Philippe Vert5,2,†' over '1 Modal’X,
    UPL, Univ Paris Nanterre, ...' ... '5 Google Brain, F-75009 Paris, France'), which the author block
    does not read as marked blocks: each name gets the line its first number opens, up to its first
    address part. The numbers, not the words, say these are affiliations ('Google Brain', 'MINES
    ParisTech' name no institution by a word): the lines must run 1, 2, ... on from just under the names,
    wrapping onto two lines at most, and be exactly the numbers the names carry; a numbered list or a
    section's number fails that. Only when no name has an affiliation."""
    numbers = _unlinked_numbers(authors, block)
    if numbers is None:
        return authors
    carried = {k for _, _, keys in _name_lines(block)[0] for k in keys if k.isdigit()}
    lines = page.splitlines()
    surname = authors[-1][0].split()[-1]
    # (the first numbered line comes right under the last name's line, blank lines apart)
    at = next((i for i, line in enumerate(lines)
               if (first := _NUMBERED_LINE.match(line)) and first.group(1) == "1"
               and surname in next((above for above in lines[i - 1::-1] if above.strip()), "")), None)
    if at is None:
        return authors
    blocks: dict[str, str] = {}
    number, wrapped = "", 0
    for line in lines[at:]:
        opened = _NUMBERED_LINE.match(line)
        if opened and opened.group(1) == str(len(blocks) + 1):
            number, wrapped = opened.group(1), 0
            blocks[number] = opened.group("text").strip()
        elif line.strip() and not opened and wrapped < _WRAPPED_LINES and not is_prose(line) and not (
                CONTACT.search(line)):
            wrapped += 1
            blocks[number] += " " + line.strip()
        else:
            break
    if len(blocks) < 2 or set(blocks) != carried:
        return authors
    institutions = {n: ",".join(up_to_address(text.split(","))).strip()
                    for n, text in blocks.items()}
    if not all(institutions[n] for n in numbers.values()):
        return authors
    return [(name, institutions[numbers[name]]) for name, _ in authors]


# BMC's and SpringerOpen's page 1 prints only the corresponding author's numbered addresses, under the
# correspondence note, the first number raised at the end of the contacts' line ('* Correspondence:
# a@b.ca 2' / 'Centre de recherche, ...' / '5' / 'School of ...'): the text after the note's last contact.
_AFTER_CONTACTS = re.compile(r"^.*\S@\S+[;,]?", re.DOTALL)
_UNDER_CORRESPONDENCE_LINES = 12  # the most lines of those addresses


def _under_the_correspondence(authors: list[tuple[str, str | None]], block: list[Segment],
                              page: str) -> list[tuple[str, str | None]]:
    """Affiliations in the numbered blocks printed under page 1's correspondence note, which are the
    corresponding author's only (BMC and SpringerOpen: '2' Centre hospitalier universitaire Sainte-Justine,
    '5' University of Ottawa; 'Full list of author information is available at the end of the article'):
    each name gets the first block one of its numbers opens, and a name none of whose numbers is printed
    there gets none here (the end's 'Author details' fill it, ``pdf_affiliations``). Only when no name has
    an affiliation and every name carries a number, the text after the note's contacts opens with a number,
    and every block there is one the names carry."""
    if not authors or any(a for _, a in authors):
        return authors
    keys = {name: [k for k in ks if k.isdigit()] for _, name, ks in _name_lines(block)[0]}
    if not all(keys.get(name) for name, _ in authors):
        return authors
    lines = page.splitlines()
    at = next((i for i, line in enumerate(lines) if _CORRESPONDENCE_LINE.match(line)), None)
    if at is None:
        return authors
    under = list(itertools.takewhile(lambda line: bool(line.strip()) and not is_prose(line),
                                     lines[at + 1:at + 1 + _UNDER_CORRESPONDENCE_LINES]))
    text = _AFTER_CONTACTS.sub("", "\n".join([lines[at], *under]))
    if not re.match(r"\s*\d{1,2}\b", text):
        return authors
    blocks = numbered_blocks(text)
    carried = {k for ks in keys.values() for k in ks}
    if not blocks or not set(blocks) <= carried:
        return authors
    return [(name, next((blocks[k] for k in keys[name] if k in blocks), None)) for name, _ in authors]


# A numbered footnote entry that labels its parts ('²Email: a@b.fi Address: School of Computing, University of
# Eastern Finland, Yliopistokatu 2, ... ORCID iD: https://...'): where each entry opens, and its address.
_LABELLED_ENTRY = re.compile(r"(?<![\w.@/-])(\d{1,2})\s*E-?mail\s*:", re.IGNORECASE)
_ADDRESS_LABEL = re.compile(r"\bAddress\s*:\s*(?P<address>.+?)\s*(?:\bORCID\b|$)", re.IGNORECASE)


def _labelled_footnote(authors: list[tuple[str, str | None]], block: list[Segment],
                       page: str) -> list[tuple[str, str | None]]:
    """Affiliations in numbered footnotes that label their parts, an e-mail then an address (the Journal of
    Learning Analytics: 'Corresponding author ¹Email: ... Address: Center of ... (CATALPA), FernUniversität in
    Hagen, Universitätsstrasse 27, ...'), for names whose number the author block left unlinked: each entry's
    address up to its first street or postcode part. Only when no name has an affiliation and every name's
    first number opens an entry whose address names an institution."""
    numbers = _unlinked_numbers(authors, block)
    if numbers is None:
        return authors
    text = page.replace("\n", " ")
    starts = list(_LABELLED_ENTRY.finditer(text))
    entries: dict[str, str] = {}
    for i, start in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else None  # the next entry, or the page's end
        address = _ADDRESS_LABEL.search(text[start.end():end])
        institution = _institution_part(address.group("address")) if address else None
        if institution and start.group(1) not in entries:
            entries[start.group(1)] = institution.strip(" .")
    return _by_number(authors, numbers, entries)


_CORRESPONDENCE_LINE = re.compile(rf"^\s*[{SYMBOL_MARKS}]?\s*(?:Corresponding authors?|Correspondence)\b",
                                  re.IGNORECASE)


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
    if not INSTITUTION.search(line) or is_prose(line) or CONTACT.search(line) or not line[:1].isupper() or (
            INSTITUTION.search(over) and not is_prose(over)):
        return authors
    institution = _institution_part(line)
    return [(name, institution.strip(" .")) for name, _ in authors] if institution else authors
_AFTER_CONTACTS_LINES = 5  # the most lines of an institution after the correspondence note's contacts
# The words of a place of work, not those a journal's name shares ('Nucleic Acids Research', 'Statistical
# Science'): the column under the contacts may hold the journal's line where no institution is printed.
_PLACE_OF_WORK = re.compile(r"Universi(?:t|dad|dade)|Institut|College|School|Depart(?:a?ment)|Facult|"
                            r"Laborator|Cent(?:er|re)\b|Hospital|Academy|Inc\b|Ltd\b|GmbH|Corporation",
                            re.IGNORECASE)


def _after_the_correspondence(authors: list[tuple[str, str | None]],
                              page: str) -> list[tuple[str, str | None]]:
    """The one affiliation printed unmarked under the correspondence note's contacts (BMC's and SpringerOpen's
    side column: '*Correspondence:' / 'jqw.skye@gmail.com;' / 'jwzhang@tju.edu.cn' / 'College of
    Intelligence' / 'and Computing, Tianjin' / 'University, Tianjin, China'): every author's, when no author
    has one. A numbered block there ('1 MRC Integrative Epidemiology Unit', the corresponding author's among
    several) is read by its number, not here; the lines run to a blank line, a line of prose or a note
    ('Full list of author information is available at the end of the article'), up to their first address
    part."""
    if not authors or any(a for _, a in authors):
        return authors
    lines = page.splitlines()
    at = next((i for i, line in enumerate(lines) if _CORRESPONDENCE_LINE.match(line)), None)
    if at is None:
        return authors
    after = list(itertools.dropwhile(lambda line: bool(CONTACT.search(line)), lines[at + 1:]))
    block = list(itertools.takewhile(
        lambda line: bool(line.strip()) and not is_prose(line) and not CONTACT.search(line)
        and not _CORRESPONDENCE_LINE.match(line), after[:_AFTER_CONTACTS_LINES]))
    # A side column is narrow: its lines are one paragraph the measure wrapped, its commas printed ('and
    # Computing, Tianjin' / 'University, ...'), a word broken at a hyphen joined again.
    joined = re.sub(r"(?<=\w)- (?=[a-z])", "", " ".join(line.strip() for line in block))
    # (Wiley's note names the corresponding author before the address: 'Ada Lovelace, Department of ...')
    joined = re.sub(rf"^(?:{'|'.join(re.escape(name) for name, _ in authors)}),\s*", "", joined)
    if not joined[:1].isupper() or not _PLACE_OF_WORK.search(joined) or _NOTE.search(joined):
        return authors
    institution = _institution_part(joined)
    return [(name, institution.strip(" .")) for name, _ in authors] if institution else authors


# A mark opening an affiliation line: a superscript, '(1) ', a symbol, or digits glued to a word ('1Google').
_LEADING_MARK = re.compile(r"^(?:⟨(?P<sup>[^⟩]*)⟩|\((?P<par>\d+(?:,\d+)*)\)\s+|"
                           rf"(?P<sym>[{SYMBOL_MARKS}]+|\?(?=[A-Z])|[{UNMAPPED_MARKS}])\s*|"
                           r"(?P<num>\d{1,2})(?=[A-Z][a-z]))")
_SEPARATORS = re.compile(r"^[\s,;.&|]*(?:and|AND)?[\s,;.&|]*$")  # a line between names: ',', 'and', '|'


def block_authors(block: list[Segment]) -> list[tuple[str, str | None]]:
    """Names (the block's name-like segments) with their affiliations: the blocks their marks point at,
    where names carry marks and the affiliation lines start with them; else the lines under each name."""
    names, others, grouped = _name_lines(block)
    by_marks = _marked_affiliations(others)
    if by_marks and any(keys for _, _, keys in names):
        by_marks = _unmapped_in_order(by_marks, [keys for _, _, keys in names])
        # An author's affiliation is the first block a mark links it to ('Tao Wei*‡': '*' Peking
        # University); a later mark adds a second institution ('also at') or a footnote.
        found = {name: next((by_marks[k] for k in _run_apart(keys, by_marks) if k in by_marks
                             and not _NOTE.search(by_marks[k]) and not _POSITION_ONLY.fullmatch(by_marks[k])),
                            "") for _, name, keys in names}
        found = _closing_marks(names, found)
        return [(name, grouped.get(name) or found[name] or None)
                for name in dict.fromkeys(n for _, n, _ in names)]
    lines: dict[str, list[str]] = {name: [] for _, name, _ in names}
    for seg in others:
        above = [(s, n) for s, n, _ in names if s.y > seg.y]
        # (a note on the authors is no one's affiliation: MDPI's '* Author to whom correspondence should be
        # addressed' under the address, its mark set apart from the names so that it links none)
        if not above or BARE_MARK.match(seg.text) or _NOTE.search(seg.text):
            continue
        # The names above it in its column (a grid's rows need not share a baseline), else all above; of
        # those the nearest row, then the nearest column in it.
        pool = [(s, n) for s, n in above if s.x0 < seg.x1 and seg.x0 < s.x1] or above
        row = min(s.y for s, _ in pool)
        in_row = [(s, n) for s, n in pool if abs(s.y - row) < s.size / 2]
        shared = len({id(s) for s, _ in in_row}) == 1  # one line 'A, B and C': its affiliation is theirs
        # ... unless the line names one institution per name, in the names' order
        pieces = _one_each(END_MARKS.sub("", seg.text).strip(), len(in_row)) if shared else None
        if pieces is not None:
            for (_, name), piece in zip(in_row, pieces, strict=True):
                lines[name].append(piece)
            continue
        targets = (
            [n for _, n in in_row]
            if shared
            else [min(in_row, key=lambda sn: abs(sn[0].center - seg.center))[1]]
        )
        for name in targets:
            lines[name].append(END_MARKS.sub("", seg.text).strip())
    _share_stacked(names, others, lines)
    _share_one_block(names, others, lines)
    _share_row_block(names, others, lines)
    return [(name, grouped.get(name) or join_affiliation(_first_institution(lines[name])) or None)
            for name in dict.fromkeys(n for _, n, _ in names)]


def _run_apart(keys: list[str], blocks: dict[str, str]) -> list[str]:
    """A name's mark keys, a number that keys no block read as its digits where each of them keys one: marks
    set without their comma ('Yuhuai Wu*¹²' over '¹Stanford University' and '²Google Research', as a
    superscript '^{*12}' prints them; 'Alice Smith¹³' over blocks 1, 2 and 3)."""
    return [part for key in keys for part in (
        list(key) if key.isdigit() and key not in blocks and all(d in blocks for d in key) else [key])]


def _one_each(line: str, count: int) -> list[str] | None:
    """The pieces of a line under one line of ``count`` names that names an institution for each of them, in
    the names' order (EuroTeX: 'Faculty of Electro Engineering CVUT, Prague, Faculty of Informatics MU, Brno'
    under 'Petr Olšák, Petr Sojka'): ``count`` pieces, each opened by the institution's word that opens the
    line and of one shape (as many comma-separated parts each); else None, and the line is all the names'
    ('Department of Statistics, University of Alpha': a unit and its university, one affiliation)."""
    parts = [part.strip() for part in line.split(",")]
    opener = parts[0].split()[0] if parts[0].split() else ""
    if count < 2 or not INSTITUTION.match(opener):
        return None
    starts = [i for i, part in enumerate(parts) if part.split()[:1] == [opener]]
    pieces = [parts[a:b] for a, b in zip(starts, [*starts[1:], len(parts)], strict=True)]
    if len(pieces) != count or len({len(piece) for piece in pieces}) != 1:
        return None
    return [", ".join(piece) for piece in pieces]


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
    # A line opened by '&' or 'and' that names a whole institution is a second one too ('Macao Polytechnic
    # University' / 'Macao SAR, China' / '& CISUC, University of Coimbra, Coimbra, Portugal', IEEE), where
    # one naming a unit goes on with the one above ('Department of Computer Science' / '& Engineering').
    whole = [i for i, line in enumerate(lines) if _WHOLE_INSTITUTION.search(line.strip(" ,;")) or (
        re.match(r"(?:&|and\b)", line) and any(_WHOLE_INSTITUTION.search(part.strip(" &"))
                                                for part in re.split(r",|\band\b", line)))]
    university = next((i for i in whole if re.search(r"Universi(?:t|dad|dade)", lines[i])), None)
    second = next((i for i in whole if university is not None and i > university), None)
    if second is None:
        return lines
    kept = lines[:second]
    return [*kept[:-1], kept[-1].rstrip(" ,;")]


# A block a mark leads to that is a note on the authors, not where they work: their first mark that leads
# to an institution gives the affiliation ('Alice Smith*¹': '*Equal contribution', '¹University of Alpha').
# (in the words the templates use: 'These authors contribute(d) equally', 'Equal senior authorship', 'Co-first
# authors', 'Joint last authors')
_NOTE = re.compile(r"\b(?:equal(?:ly)? contribut|contribut\w* equally|"
                   r"equal (?:senior |first |last )?authorship|co-?(?:first|senior|last) authors?|"
                   r"corresponding author|correspondence|"
                   r"joint (?:first|senior|last)|deceased)", re.IGNORECASE)
# A block that names the author's position and nothing else ('Research Adviser.', 'Professor', 'Graduate
# Student', 'Senior Research Fellow'): a note on the author, as AIAA-style conference papers number them,
# with no place of work.
_POSITION_ONLY = re.compile(r"(?:(?:Senior|Junior|Associate|Assistant|Adjunct|Visiting|Emeritus|Graduate|"
                            r"Undergraduate|Doctoral|Postdoctoral|PhD|Ph\.D\.|Research|Principal|Chief|Lead|"
                            r"Staff)\s+)*(?:Professor|Adviser|Advisor|Student|Researcher|Fellow|Engineer|Scientist|"
                            r"Lecturer|Candidate|Director|Scholar|Consultant)\.?", re.IGNORECASE)


def _closing_marks(names: list[tuple[Segment, str, list[str]]], found: dict[str, str]) -> dict[str, str]:
    """Names without a mark before a name whose one mark closes their row take its block (ifacconf sets one
    mark after the last name of those sharing an address: 'Paul F. Roysdon   Jay A. Farrell ∗' over '∗
    University of California, Riverside'; a row of three; two rows, each closed by its own mark). Only where
    every name carries one mark or none, every marked name's block is an institution, and each unmarked name
    has a marked one after it on its row; else ``found`` as it is."""
    if any(len(keys) > 1 or keys and not found[name] for _, name, keys in names):
        return found
    shared = dict(found)
    for i, (seg, name, keys) in enumerate(names):
        if keys:
            continue
        closing = next(((other, n) for other, n, k in names[i + 1:] if k), None)
        if closing is None or abs(closing[0].y - seg.y) > seg.size / 3:
            return found
        shared[name] = found[closing[1]]
    return shared


def _unmapped_in_order(by_marks: dict[str, str], keys: list[list[str]]) -> dict[str, str]:
    """Blocks opened by unmapped symbol glyphs (``UNMAPPED_MARKS``: '❸', '❹'), keyed again by the names'
    marks ('†', '‡') in the order both are printed, when no name's mark keys a block and there are as many
    names' marks as blocks: the font printed one mark, the text gives another code for it."""
    marks = list(dict.fromkeys(k for name_keys in keys for k in name_keys))
    if (any(k in by_marks for k in marks) or len(marks) != len(by_marks)
            or not all(UNMAPPED_MARK.fullmatch(k) for k in by_marks)):
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
    typed = False  # a line above opened with a typed number its name carries
    carried: str | None = None  # a number typed at the end of the line above: it opens this line's block
    for seg in _names_rejoined(join_wrapped(merge_spaced(block))):
        text = LEAD_SEPARATOR.sub("", listed(seg))
        in_size = name_size is None or abs(seg.size - name_size) < 0.5
        # The names of one block share their font: a line like a name in another style under them is
        # not one ('Google Brain' set upright under 'Ashish Vaswani' in bold) ...
        # ... unless the line carries IEEE membership grades, which IEEE sets in italic between upright names,
        # so that a line holding more grades than names reads italic ('Amir Weiss' ', Student Member, IEEE,
        # Sher Ali Cheema, Student Member, IEEE, ...')
        same_size = in_size and (name_style in (None, seg.style) or _marked_like(seg, names)
                                 or bool(names) and IEEE_GRADE.search(seg.text) is not None)
        # A line opening with a superscript opens an affiliation block: names carry their marks after them.
        if is_name_list(text) and same_size and not (seg.marked or "").startswith(MARK_OPEN):
            name_size, name_style = seg.size, seg.style
            names += [(seg, name, keys) for name, keys in name_parts(seg)]
        # (a line of names with their institution sets them in two faces, its style is either's: SciPy's
        # 'Ariel Rokem (arokem@...) – University of California, Berkeley', the institution in italic)
        elif in_size and not ANONYMOUS.search(seg.text) and (group := _grouped_line(seg)) is not None:
            name_size, name_style = seg.size, seg.style
            names += [(seg, name, keys) for name, keys in group[0]]
            grouped.update((name, group[1]) for name, _ in group[0])
        elif names and not _SEPARATORS.match(seg.text):
            numbered = _numbered(_opened_by(seg, carried), names, typed)
            # (a line of numbered blocks run on may close on the next block's number: it opens the next line)
            numbered, carried = (_closing_number(numbered, names) if typed or numbered is not seg
                                 else (numbered, None))
            kept = _without_contacts(numbered)
            if kept is None and others and _OPEN_END.search(others[-1].text):
                # the measure broke an institution's name after its open word, its address after the end of
                # the name on the next line ('..., University of' / 'Massachusetts, Amherst, MA 01003-9264')
                kept = remarked(numbered, (numbered.marked or numbered.text).split(",")[0])
            if kept is not None:
                typed = typed or numbered is not seg  # numbers typed as marks: the lines after may run on so
                others.append(kept)
    return names, others, grouped


# A line of an author block ending open, in the middle of an institution's name.
_OPEN_END = re.compile(r"(?:\b(?:of|for|and|the|de|du|des|di|della|del)|[&-])\s*$")


def _names_rejoined(segments: list[Segment]) -> list[Segment]:
    """The lines with an institution's name the measure broke between two of its words put back together,
    where the blocks run on in a paragraph: a block opened mid-line by a raised mark, after the separator
    closing the block before it ('..., India,' '³' 'Department of Forest Biology ..., University of
    Agricultural' over 'Sciences, College of Forestry, ...', OUP's DNA Research), whose line ends in a word
    (no separator, no 'and'), goes on in the next line's words up to their first comma, which leave that
    line ('Genotypic Technology Private' over 'Limited, Bengaluru, ...'). A paragraph's line break falls
    between words, not between an institution's parts: read as two lines, the name would be cut in two
    ('University of Agricultural, Sciences'). A line opening with a number or a mark opens a block of its
    own, and is left as it is."""
    rejoined = list(segments)
    for at in range(1, len(rejoined) - 1):
        mark, line, below = rejoined[at - 1], rejoined[at], rejoined[at + 1]
        before = [s for s in rejoined[:at - 1] if abs(s.y - line.y) < line.size and s.x1 <= mark.x0]
        if not (BARE_MARK.match(mark.text) and mark.size < line.size and before
                and re.search(r"(?:[,;.]|\band)$", before[-1].text.rstrip())
                and 0 <= line.x0 - mark.x1 < COLUMN_GAP * line.size):
            continue  # no block opened mid-line, after the block before it
        first, comma, rest = below.text.partition(",")
        if (re.search(r"(?:[,;.:)]|\band|⟩)$", line.text.rstrip()) or abs(below.size - line.size) > 0.5
                or not 0 < line.y - below.y < 2 * line.size or below.x0 >= line.x0
                or not re.match(r"[^\W\d_]", below.text) or below.marked and below.marked != below.text
                or len(first.split()) > 3):
            continue
        marked = f"{line.marked.rstrip()} {first.strip()}" if line.marked else ""
        rejoined[at] = Segment(f"{line.text.rstrip()} {first.strip()}", line.size, line.x0, line.x1, line.y,
                               marked, line.style)
        rejoined[at + 1] = Segment(rest.strip(), below.size, below.x0, below.x1, below.y, "", below.style)
    return [s for s in rejoined if s.text]


# A block's number typed at the end of a line, after the separator closing the block before ('...,
# Hamilton, Ontario, Canada, 3.' over 'Museum of Vertebrate Zoology ...', PLOS ONE 2014): it opens the next
# line.
_CLOSING_NUMBER = re.compile(r"(?<=[,;])\s+(\d{1,2})\.?\s*$")


def _closing_number(seg: Segment, names: list[tuple[Segment, str, list[str]]]) -> tuple[Segment, str | None]:
    """A line of numbered blocks run on in a paragraph without the number closing it (``_CLOSING_NUMBER``),
    and that number, where a name carries it: the measure broke the paragraph after it, before its block's
    first word. Else the line as it is, and None."""
    marked = seg.marked or seg.text
    closing = _CLOSING_NUMBER.search(marked)
    if closing is None or not any(closing.group(1) in keys for _, _, keys in names):
        return seg, None
    rest = marked[:closing.start()]
    return remarked(seg, rest), closing.group(1)


def _opened_by(seg: Segment, number: str | None) -> Segment:
    """The line with the number the line above closed on (``_closing_number``) as its opening mark."""
    if number is None:
        return seg
    return dataclasses.replace(seg, marked=f"{MARK_OPEN}{number}{MARK_CLOSE}{seg.marked or seg.text}")


def _marked_like(seg: Segment, names: list[tuple[Segment, str, list[str]]]) -> bool:
    """... unless every name of the line, and every name above it, carries a mark: a row of names in another
    weight goes on with the names above it where each name is closed by its mark, as the names above are
    (NeurIPS sets the first row of its author grid in bold, the next upright: 'Wei Liu¹  Jun Wang²*' over
    'Zhiying Deng¹  Yuankai Zhang¹'). An institution carries none ('Google Brain')."""
    parts = name_parts(seg)
    return (bool(names) and bool(parts) and all(keys for _, keys in parts)
            and all(keys for _, _, keys in names))


def _numbered(seg: Segment, names: list[tuple[Segment, str, list[str]]], run_on: bool = False) -> Segment:
    """A line opening with a number in the text's own size and a space before a capital ('1 University of
    Alpha, Alpha City', as a Word manuscript types its marks) as a marked line, when a name above carries
    that number as its mark; else the line as it is (a number opening a line may be a street's: '12 Main
    Street'). With ``run_on`` (a line so numbered stands above it: the blocks run on in a paragraph), the
    numbers typed after a separator on a line that opens with none are marks too."""
    text = seg.marked or seg.text
    # (the number may close with a point: '1. School of Life Sciences ..., 2. Center for', PLOS ONE 2014)
    number = re.match(r"(\d{1,2})\.?\s+(?=[A-Z])", text)
    if number is None or not any(number.group(1) in keys for _, _, keys in names):
        if not run_on or (rest := _typed_marks(text, names)) == text:
            return seg
        return remarked(seg, rest)
    rest = _typed_marks(text[number.end():], names)
    return remarked(seg, f"{MARK_OPEN}{number.group(1)}{MARK_CLOSE}{rest}")


def _typed_marks(text: str, names: list[tuple[Segment, str, list[str]]]) -> str:
    """The next blocks' numbers typed after a separator on a line ('..., United States of America, 2
    Makerere' / 'University College of Health Sciences', PLOS), set apart or glued to the institution ('...,
    Italy, 4Human Genetics'), as marks where a name carries them; or typed after the last word of the block
    before with no separator ('..., University Park, PA 16802, USA 2 Department of Paleobiology, ...',
    Pensoft's journals), where the number runs on from those opened before it on the line: higher than each
    (a number in an institution's name does not: '... USA 5 Department ..., Route 2 Building' keeps '2')."""
    opened: list[int] = [int(lead.group(1))] if (lead := re.match(r"\s*(\d{1,2})\s", text)) else []

    def mark(found: re.Match[str]) -> str:
        number = found.group("sep") or found.group("word")
        if not any(number in keys for _, _, keys in names) or found.group("word") and not (
                _closes_address(text[:found.start("word")]) and all(int(number) > n for n in opened)):
            return found.group()
        opened.append(int(number))
        return f"{found.group('letter') or ''} {MARK_OPEN}{number}{MARK_CLOSE}"

    return re.sub(r"(?<=[,;.])\s+(?P<sep>\d{1,2})\.?(?:\s+(?=[A-Z])|(?=[A-Z][a-z]))"
                  r"|(?P<letter>[^\W\d_])\s+(?P<word>\d{1,2})\s+(?=[A-Z][^\W\d_])", mark, text)


def _closes_address(before: str) -> bool:
    """The text before a typed number (``before``) ends with an address's last part, a country or a region
    after a comma or a postcode ('..., PA 16802, USA', '..., Chubut, Argentina', '..., New South Wales'):
    a few capitalised words naming no institution, alone on the line where the measure broke the address
    after a comma ('Chicago, IL, 60605,' / 'USA 12 Division of Paleobotany'). A date's day follows no such
    part ('Academic editor: Sandy Knapp | Received 1 August 2021')."""
    last = before.rpartition(",")[2]
    return 1 <= len(last.split()) <= 3 and all(w[:1].isupper() for w in last.split()) and not (
        INSTITUTION.search(last))


_CONTACT_IN_BRACKETS = re.compile(r"\s*[(<][^()<>\s]+@[^()<>\s]+[)>]")  # '(arokem@berkeley.edu)', '<a@b.org>'


def _grouped_line(seg: Segment) -> tuple[list[tuple[str, list[str]]], str] | None:
    """Names grouped by affiliation on one line, their institution after them (JACoW, IEEE: 'A. N. Author†,
    H. Coauthor, Name of Institute, City, Country'): the names with their marks' keys, and the institution
    with its place, up to an address part. None unless names open the line and an institution follows."""
    marked = re.sub(r"⟨[^⟩]*⟩", lambda m: m.group().replace(",", ";"), seg.marked or seg.text)
    # A name's contact in brackets after it is no part of it, and a dash set apart after the names separates
    # them from their institution as a comma does (SciPy: 'Ariel Rokem (arokem@berkeley.edu) – University of
    # California, Berkeley'; 'Jane Doe <jane@alpha.org> — Beta Labs').
    marked = re.sub(r"\s+[–—-]\s+", ", ", _CONTACT_IN_BRACKETS.sub("", marked), count=1)
    parts = [p for p in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", LEAD_SEPARATOR.sub("", marked)) if p]
    count = len(list(itertools.takewhile(
        lambda p: bool(NAME.match(END_MARKS.sub("", unmarked(p)).strip()))
        and not INSTITUTION.search(p), parts)))
    # an institution's word, or its acronym ('CERN, 1211 Geneva 23, Switzerland')
    if not count or count == len(parts) or not (INSTITUTION.search(parts[count])
                                                or re.fullmatch(r"[A-Z][A-Z\d&-]+", parts[count])):
        return None
    names = name_parts(dataclasses.replace(seg, marked=", ".join(parts[:count])))
    place = up_to_address(parts[count:])
    return names, ", ".join(unmarked(p) for p in place)


def _share_one_block(names: list[tuple[Segment, str, list[str]]], others: list[Segment],
                     lines: dict[str, list[str]]) -> None:
    """One column of affiliation lines under a row of names set apart (okapi-trec3: 'S E Robertson   S Walker
    S Jones ...' over 'Centre for Interactive Systems Research' / 'City University'), with no two lines side
    by side and every line under the lowest name, is the block of every name: not of the one it centres on."""
    placed = [o for o in others if not BARE_MARK.match(o.text)]
    rows = [(a, b) for (a, _, _), (b, _, _) in itertools.combinations(names, 2)
            if a is not b and abs(a.y - b.y) < a.size / 2]
    if not placed or not rows or any(o.y > min(s.y for s, _, _ in names) for o in placed):
        return
    if any(abs(a.y - b.y) < a.size / 2 for a, b in itertools.combinations(placed, 2)):
        return  # lines side by side: a block per column
    block = [END_MARKS.sub("", o.text).strip() for o in sorted(placed, key=lambda o: -o.y)]
    for name in lines:
        lines[name] = list(block)


def _share_row_block(names: list[tuple[Segment, str, list[str]]], others: list[Segment],
                     lines: dict[str, list[str]]) -> None:
    """In a block of several rows of names, a name left without lines in a row of names takes the one column
    of lines under its row, down to the next row, where those lines name an institution (ICLR: 'Dzmitry
    Bahdanau' over 'Jacobs University Bremen, Germany', then 'KyungHyun Cho   Yoshua Bengio*' over 'Université
    de Montréal', set under Cho alone). Lines side by side are a block per column, and a name with lines
    keeps them."""
    placed = [o for o in others if not BARE_MARK.match(o.text)]
    rows = row_groups(list({id(s): s for s, _, _ in names}.values()))  # (a line of names is one segment)
    for at, row in enumerate(rows):
        floor = min(s.y for s in rows[at + 1]) if at + 1 < len(rows) else float("-inf")
        under = [o for o in placed if floor < o.y < min(s.y for s in row)]
        if (len(row) < 2 or not under or not any(INSTITUTION.search(o.text) for o in under)
                or any(abs(a.y - b.y) < a.size / 2 for a, b in itertools.combinations(under, 2))):
            continue  # one name, no lines naming an institution, or lines side by side: a block per column
        block = [END_MARKS.sub("", o.text).strip() for o in sorted(under, key=lambda o: -o.y)]
        for seg, name, _ in names:
            if any(seg is s for s in row) and not lines[name]:
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


# A journal's line under the authors that is no affiliation: the editor, the dates of the article's
# history, a present address, keywords ('Associate Editor: ...', 'Received on 1 May 2020; revised ...').
_EDITORIAL = re.compile(r"^(?:(?:Associate|Handling|Academic|Section|Guest|Communicating) )?Editors?\b|"
                        # the meeting a supplement's article comes from (BMC: 'From 16th International
                        # Symposium on Bioinformatics Research and Applications'), or was presented at
                        r"^(?:From|Presented at|Delivered at)\b.*\b(?:Conference|Symposium|Workshop|Meeting|"
                        r"Congress|Summit)s?\b|"
                        r"^(?:Received|Accepted|Revised|Published|Submitted)\b|"
                        r"^(?:Present|Current|Permanent) address\b|^(?:Keywords?|Key words)\b|"
                        # how to cite the article, which lists its authors (Pensoft, PLOS, MDPI:
                        # 'Citation: Wilf P, Wing SL, ...'): no one's affiliation
                        # (its label's colon said: 'Citation Technologies Inc.' is a company)
                        r"^(?:Citation|Cite (?:this article|this|as))\s*:|^CITATION$", re.IGNORECASE)


def _without_contacts(seg: Segment) -> Segment | None:
    """An author-block line without its address and contact details: None for a line that is one, or that
    is a note or a journal's line (``_EDITORIAL``) no mark opens; for a line of blocks run on in a paragraph,
    each block's (``_run_on_blocks``); for a line listing its parts with semicolons ('Debian and R Projects;
    Chicago, IL, USA; edd@debian.org'), the parts that are none; and for an institution followed by its
    address after commas ('Elsevier B.V., Radarweg 29, 1043 NX Amsterdam, The Netherlands'), the parts
    before the first address part."""
    opened = _LEADING_MARK.match(seg.marked or seg.text)
    if _EDITORIAL.search(seg.text) or _NOTE.search(seg.text) and not opened:
        return None  # (a note a mark opens is kept: it is that mark's block, which the mark's name skips)
    if (runs_on := _run_on_blocks(seg)) is not None:
        return runs_on
    if not ADDRESS.search(seg.text):
        return seg
    if ";" not in seg.text:
        return _before_address(seg)
    parts = [p.strip() for p in (seg.marked or seg.text).split(";")]
    # A part with an address is read like a line of its own: its institution before the address after commas
    # ('AT&T Labs Research, Room A277, Florham Park, New Jersey 07932; e-mail:').
    read = [p if not ADDRESS.search(unmarked(p)) else _institution_part(p) for p in parts]
    # A lower-case word alone is a user name of an e-mail list ('{mernst;csk;chambers}@cs.washington.edu').
    kept = [p for p in read if p and not re.fullmatch(r"[a-z\d._{}-]+", unmarked(p))]
    if not kept:
        return None
    return remarked(seg, "; ".join(kept))


def _run_on_blocks(seg: Segment) -> Segment | None:
    """A line of affiliation blocks run on in a paragraph, a block's mark after the text before it
    ('University Park, PA 16802, USA ²Department of Paleobiology, Smithsonian Institution, Washington, DC',
    Pensoft; '..., Westmead, NSW 2145, Australia, ⁵Cancer Research Unit, ...'): each block read like a line
    of its own, its institution up to its address, and the text before the first mark, which goes on with the
    block above, up to its own address (the measure may break that block's name: 'Cleveland, OH 44106, USA
    ⁸University' / 'of California-Berkeley, Museum of Paleontology, Berkeley, CA 94720, USA ⁹LH Bailey
    Hortorium'). The parts are joined by semicolons, which tell the blocks apart as a paragraph's separators
    do. None for a line without such a mark, or where no address would cut the line short and every mark
    follows a separator, which tells the blocks apart as it is (``_marked_affiliations``)."""
    marked = seg.marked or seg.text
    # (a mark opening a block stands before its name's capital: one after a word closes it, a note's, and the
    # words go on: 'Department of Statistics† and Institute for Quantitative Social Science‡')
    opening = rf"{MARK_OPEN}[^{MARK_CLOSE}]*{MARK_CLOSE}\s*[A-Z]"
    if not re.search(rf"\S\s*{opening}", marked) or not (
            ADDRESS.search(seg.text) or re.search(rf"[^\W\d_]\s+{opening}", marked)):
        return None
    first, *blocks = re.split(rf"\s*(?={MARK_OPEN})", marked)
    # (only the address is left of a block whose lines broke after its institution: '20013, USA' / '³...')
    kept = [",".join(up_to_address(first.split(","))), *(_institution_part(block) or "" for block in blocks)]
    joined = "; ".join(part.strip(" ,;") for part in kept if part.strip(" ,;"))
    if not joined:
        return None
    return remarked(seg, joined)


def _before_address(seg: Segment) -> Segment | None:
    """The comma-separated parts of a line up to its first address or contact part, when its first part
    names an institution; else None."""
    marked = _institution_part(seg.marked or seg.text)
    if not marked:
        return None
    return remarked(seg, marked)


def _institution_part(text: str) -> str | None:
    """The comma-separated parts of ``text`` up to its first address part (a street, a postcode, or contact
    details: an institution's web address after it, 'ᵃDebian Project, http://www.debian.org', ends it as
    its street does), when its first part names an institution; else None."""
    parts = text.split(",")
    kept = up_to_address(parts)
    # A line that opens with an affiliation mark is an affiliation by that mark, whatever its words
    # ('ᵃPratt SILS, 144 w. 14th street, ...'): its first part names the institution.
    # (a unit named without an institution's word may come first: 'Section for Bioinformatics, Department of
    # Health Technology, Technical University of Denmark, 2800 Kgs. Lyngby')
    if not kept or not (any(INSTITUTION.search(p) for p in kept) or _LEADING_MARK.match(kept[0])):
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
    units: list[list[str]] = []  # the keys of the blocks just opened each by a line of its own ending in ';'
    last = ""  # the text last added to a block
    for seg in others:
        marked = seg.marked or seg.text
        # A block opened right after the text before it on its row ('... United States of America,' '²' 'Broad
        # Institute ...') runs on in a paragraph of blocks (PLoS): its lines are no column of their own.
        if previous is not None and abs(previous.y - seg.y) < max(seg.size, previous.size) and (
                0 <= seg.x0 - previous.x1 < COLUMN_GAP * max(seg.size, previous.size)):
            inline.add(id(seg))
        # The text a mark alone opens, directly right of it and under its raised baseline, is that mark's
        # block, whatever line the raised mark stands level with (Scientific Reports: '... USA,' and the '4'
        # raised beside it, over 'Department of Mathematics, Stanford University').
        opens = (previous is not None and bool(opened) and opened[-1][0] is previous
                 and 0 <= seg.x0 - previous.x1 < COLUMN_GAP * seg.size and 0 < previous.y - seg.y < seg.size)
        previous = seg
        if BARE_MARK.match(seg.text) or BARE_MARK.match(marked.strip("⟨⟩")) and marked.startswith("⟨"):
            current = mark_keys(seg.text)
            opened.append((seg, current))
            continue
        lead = _LEADING_MARK.match(marked)
        if lead:
            current = mark_keys(lead.group("sup") or lead.group("par") or lead.group("sym")
                                or lead.group("num"))
            opened.append((seg, current))
            marked = marked[lead.end():]
        elif opened and not opens and not _OPEN_END.search(last) and id(opened[-1][0]) not in inline and any(
                o is not opened[-1][0] and abs(o.y - opened[-1][0].y) < opened[-1][0].size
                for o, _ in opened):  # the last block opened beside another: go by column
            # (unless the block opened last broke off mid-phrase: its next words are the next line's, wherever
            # they stand: OUP's '¹³Silicon Life Sciences, ...; ¹⁴Department of Biochemistry and' over
            # 'Molecular Biology, University of Melbourne, Australia; ¹⁵...', the two blocks side by side on
            # the row above)
            column = [(o, keys) for o, keys in opened if o.y > seg.y and o.x0 < seg.x1 and seg.x0 < o.x1]
            current = min(column, key=lambda ok: ok[0].y)[1] if column else current
        # Blocks run together in one paragraph (eLife, PLoS, OUP, Nature: '¹Dept ..., Harvard University;
        # ²Howard'): a mark after a separator (';', ',', '.', 'and'), before a capital, opens the next block;
        # so does a symbol after a space ('∗University of Alpha   †Beta Labs').
        pieces = _INLINE_MARK.split(marked)  # text, (superscript, symbol), text, ...
        if len(pieces) == 1 and not lead and units and units[-1] is current:
            _share_institution(unmarked(marked).strip(" ,;"), units[:-1], blocks)
        units = [*units, current] if len(pieces) == 1 and lead and marked.rstrip().endswith(";") else []
        for index, piece in enumerate(pieces[::3]):
            if index:
                current = mark_keys(pieces[3 * index - 2] or pieces[3 * index - 1])
                opened.append((seg, current))
            text = unmarked(piece).strip(" ,;")
            for key in current if text else []:
                blocks.setdefault(key, []).append(text)
            last = text or last
    return {key: join_affiliation(lines) for key, lines in blocks.items()}


def _share_institution(line: str, units: list[list[str]], blocks: dict[str, list[str]]) -> None:
    """A line naming a whole institution, under blocks that each name a unit of it on a line of their own
    closed by a semicolon (EMNLP: '¹Department of Computer Science and Technology, BNRist;' / '²KIRC,
    Institute for Artificial Intelligence;' / 'Tsinghua University, Beijing 100084, China'): the semicolon
    says the list goes on, and the institution closing it is every unit's, not only the last one's. Added to
    the blocks of ``units`` (the last unit's block takes it as its own next line), where none names an
    institution."""
    if not _WHOLE_INSTITUTION.search(line.split(",")[0].strip()):
        return
    if any(_WHOLE_INSTITUTION.search(part.strip()) for keys in units for key in keys
           for text in blocks.get(key, []) for part in text.split(",")):
        return
    for key in dict.fromkeys(k for keys in units for k in keys):
        blocks.setdefault(key, []).append(line)


_INLINE_MARK = re.compile(rf"\s*(?:[;,.]|\band\b)\s*⟨([^⟩]+)⟩\s*(?=[A-Z])"
                          rf"|\s+([{SYMBOL_MARKS}]+)(?=[A-Z])")
