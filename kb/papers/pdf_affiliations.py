"""Affiliations printed away from page 1's author block, which fill the gaps it leaves: page 1's footnote
blocks opened by the names' marks (ICML: '¹Amazon Web Services ²Facebook AI', ``pdf_authors``), an
"Affiliation:" or "AUTHOR INFORMATION" block at the end of the paper (JSS, R Journal, ACS), address blocks
closed by e-mail lines (amsart), signed address blocks (R News, TUGboat), the addresses over Econometrica's
closing 'Manuscript received' line, and a footnote stating in prose where the authors work (IEEE: 'Birman and
Van Renesse are with the Department of ...')."""

from __future__ import annotations

import itertools
import re

from kb.notes.page_break import PAGE_BREAK
from kb.papers.pdf_authors import footnote_affiliations, numbered_blocks
from kb.papers.pdf_names import (
    ADDRESS,
    CONTACT,
    END_MARKS,
    INSTITUTION,
    NAME,
    UPPER,
    is_prose,
    join_affiliation,
    up_to_address,
)
from kb.papers.pdf_page import SYMBOL_MARKS, PdfArticle, Segment


def fill_from_the_end(article: PdfArticle, marks: dict[str, list[str]] | None = None,
                      page: list[Segment] | None = None) -> None:
    """Affiliations page 1's author block lacks: from page 1's footnote, the blocks the names' marks open
    (``marks``: each name's keys in page 1's author block; ``page``: page 1's segments), else from the end of
    the paper: an "Affiliation:" block naming each author, or numbered blocks under an 'Author details'
    heading linked by the names' marks, else (amsart) one address block per author in byline order, each
    closed by its 'Email address:' line, or (Econometrica) the address blocks over the text's closing
    'Manuscript received' line. Page 1 names the institution; the end adds department and address lines, so it
    fills gaps only."""
    full = "\n".join(article.pages)
    names = [n for n, _ in article.authors]
    unplaced = {name: (marks or {}).get(name, []) for name, affiliation in article.authors if not affiliation}
    footnote = footnote_affiliations(page or [], unplaced)
    ends = _author_details(full, names, marks or {}) | _end_affiliations(full, names)
    in_order = _address_blocks(full, len(article.authors))
    signed = _signed_blocks("\n".join(article.pages[-2:]), names)
    received = _before_received(full, len(article.authors), len(article.pages[0]) if article.pages else 0)
    stated = _stated_affiliations(article.pages[0] if article.pages else "", names)
    everyone = _all_authors(article.pages[0] if article.pages else "")
    ends = _author_information(full, names) | ends
    article.authors = [(name, affiliation or footnote.get(name) or stated.get(name) or everyone
                        or ends.get(name) or (in_order[i] if in_order else None) or signed.get(name)
                        or (received[i] if received else None))
                       for i, (name, affiliation) in enumerate(article.authors)]


# The heading of numbered affiliation blocks at the paper's end (BMC's and SpringerOpen's 'Author details',
# page 1 printing only the corresponding author's block and 'Full list of author information is available at
# the end of the article'), and what closes them: the article's dates, the references, the publisher's note.
_DETAILS_HEAD = re.compile(r"^[ \t]*(?:Author details|Author affiliations|Affiliations)[ \t]*$", re.MULTILINE)
_DETAILS_END = re.compile(r"^\s*(?:Received|Accepted|Published|References|Publisher['’]s Note)\b")
_DETAILS_LINES = 40  # the most lines a list of numbered blocks runs to


def _author_details(text: str, names: list[str], marks: dict[str, list[str]]) -> dict[str, str]:
    """Each name's institution from the numbered blocks under the last 'Author details' heading
    (``_DETAILS_HEAD``): the block the name's first number mark opens. Only where every name has a number and
    every name's number opens a block naming an institution; else none (the heading over something else)."""
    found = list(_DETAILS_HEAD.finditer(text))
    numbers = {name: next((k for k in marks.get(name, []) if k.isdigit()), None) for name in names}
    if not found or not names or not all(numbers.values()):
        return {}
    lines = text[found[-1].end():].lstrip("\n").split("\n")[:_DETAILS_LINES]
    section = "\n".join(itertools.takewhile(
        lambda line: line != PAGE_BREAK and not is_prose(line) and not _DETAILS_END.match(line), lines))
    blocks = numbered_blocks(section)
    if not all(number in blocks for number in numbers.values()):
        return {}
    return {name: blocks[number] for name, number in numbers.items() if number}


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
        kept = ", ".join(up_to_address(parts)).strip(" .,")
        if kept:  # the section's form says what the text after the dash is: no institution word needed
            result[name] = kept
    return result


# A footnote that says in prose where authors work (IEEE's style): 'Birman and Van Renesse are with the
# Department of Computer Science, Cornell University, Ithaca NY 14850; Dolev is at Cornell on leave from
# ...'. The institution runs to a clause's end: a semicolon, a parenthesis ('(e-mail: ...)'), a sentence's
# end, 'on leave' or 'in' and a place.
_NAME_RUN = rf"[{UPPER}][\w'’-]*\.?(?: [{UPPER}][\w'’-]*\.?)*"
_STATED = re.compile(rf"(?P<who>{_NAME_RUN}(?:(?:,? and|,) {_NAME_RUN})*) (?:is|are|was|were) (?:now )?"
                     r"(?:with|at) "
                     r"(?:the )?(?P<where>[^;()]+?)(?=\s*(?:[;(]|\.\s|\.?$| on leave\b| in [A-Z]))")


def _stated_affiliations(page: str, names: list[str]) -> dict[str, str]:
    """Each author's institution as a footnote states it in prose (``_STATED``): the clause's parts up to
    the first address part; a name is the author whose surname ends it."""
    found: dict[str, str] = {}
    # a word broken at a line's end goes on in lower case on the next ('Uni-' / 'versity of Notre Dame')
    page = re.sub(r"(?<=[a-z])- *\n\s*(?=[a-z])", "", page)
    for match in _STATED.finditer(" ".join(page.split())):
        parts = [p.strip() for p in match.group("where").split(",")]
        where = ", ".join(up_to_address(parts)).strip(" .")
        for who in re.split(r",? and |, ", match.group("who")):
            surname = who.split()[-1].casefold()
            for name in names:
                if name.split()[-1].casefold() == surname and where:
                    found.setdefault(name, where)
    return found


# A statement that every author works at one place, under the names or in a footnote: DeepMind's 'All authors
# from DeepMind, †Equal contributions', IEEE's 'All authors are with the Department of ..., Stanford
# University, Stanford, CA 94305 USA', 'All the authors are affiliated with ...'. The place opens with a
# capital (after 'the'): 'All authors with equal contribution' names none; a name's mark ('†'), a semicolon, a
# parenthesis or a sentence's end closes it.
_ALL_AUTHORS = re.compile(r"\b(?:All (?:the )?authors (?:are )?(?:(?:affiliated )?with|from|at)|"
                          r"(?:The|Both(?: the)?) authors are (?:(?:affiliated )?with|at)) (?:the )?"
                          rf"(?P<where>[{UPPER}][^;()\n{SYMBOL_MARKS}]*?)(?=\s*(?:[;(){SYMBOL_MARKS}]|\.\s|\.?$))")


def _all_authors(page: str) -> str | None:
    """The one institution page 1 says all the authors are at (``_ALL_AUTHORS``): the statement's parts up to
    the first address part; the statement's form says it is their place, so no institution word is needed
    ('DeepMind'). None where no such statement is printed, or two say different places."""
    places = set()
    for match in _ALL_AUTHORS.finditer(" ".join(page.split())):
        parts = [p.strip() for p in match.group("where").split(",")]
        # (up to an empty part too)
        where = ", ".join(itertools.takewhile(bool, up_to_address(parts))).strip(" .")
        if where:
            places.add(where)
    return places.pop() if len(places) == 1 else None


# An e-mail address spelt out so that no robot reads it, on a line of its own (TUGboat: 'olpa (at) uucode dot
# com', 'karl (at) freefriends dot org'; 'jane [at] alpha [dot] edu'): a contact line like any other.
_SPELT_MAIL = re.compile(r"^[\w.+-]+\s*(?:\(at\)|\[at\]|\sat\s)\s*[\w-]+"
                         r"(?:\s*(?:\(dot\)|\[dot\]|\sdot\s|\.)\s*[\w-]+)+$", re.IGNORECASE)


# What opens a signature's name line: TUGboat's diamond ('⋄ Karl Berry'), a control code where the font's
# diamond has no Unicode map (cmsy's code 5: '\x05 Oleg Parashchenko'), and spaces.
_SIGN = re.compile(r"^[\s\x00-\x1f⋄◇◆•◦]+|\s+$")


def _signed_blocks(text: str, names: list[str]) -> dict[str, str]:
    """The address blocks that sign an article at its end without a heading (R News, The R Journal, TUGboat):
    an author's full name alone on a line (after TUGboat's diamond: ``_SIGN``), the institution's lines under
    it, closed by an e-mail or web address line (the e-mail spelt out too: ``_SPELT_MAIL``). The institution
    is the block's text up to its first address part, which may share the institution's line
    ('bitplant.de GmbH, Fabrikstr. 15' over '89520 Heidenheim, Germany'). A block without such a closing
    line, or without an institution word, is not one."""
    lines = [line.strip() for line in text.splitlines()]
    signs = [_SIGN.sub("", END_MARKS.sub("", line)) for line in lines]  # each line as a signature's name
    found: dict[str, str] = {}
    for name in names:
        at = [i for i, sign in enumerate(signs) if sign == name]
        if not at:
            continue
        block: list[str] = []
        for line in lines[at[-1] + 1:at[-1] + 6]:
            if _contact(line) or not line or line == PAGE_BREAK or line in names:
                break
            block.append(line)
        closed = at[-1] + 1 + len(block) < len(lines) and _contact(lines[at[-1] + 1 + len(block)])
        institution = _before_the_address(block)
        if closed and institution and INSTITUTION.search(" ".join(institution)):
            found[name] = join_affiliation(institution)
    return found


def _contact(line: str) -> bool:
    """A line of contact details: an e-mail or web address, a telephone number, or an e-mail spelt out."""
    return bool(CONTACT.search(line) or _SPELT_MAIL.match(line))


def _before_the_address(block: list[str]) -> list[str]:
    """A block's lines up to its first address part: the lines before the first line holding one, and that
    line's comma-separated parts before it ('bitplant.de GmbH, Fabrikstr. 15': 'bitplant.de GmbH')."""
    kept: list[str] = []
    for line in block:
        if not ADDRESS.search(line):
            kept.append(line)
            continue
        parts = up_to_address(line.split(","))
        return [*kept, ",".join(parts).strip()] if "".join(parts).strip() else kept
    return kept


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
        kept = up_to_address(parts)
        blocks.append(", ".join(p for p in kept if p))
        start = mail.end()
    return blocks if all(blocks) else None


# The line closing an article's text with its history, under the authors' addresses (Econometrica's
# 'Manuscript received January 1984; revision received December, 1984.').
_MANUSCRIPT_RECEIVED = re.compile(r"^\s*Manuscript received\b", re.MULTILINE)
_RECEIVED_BLOCK_LINES = 8  # the most lines the addresses over it run to


def _before_received(text: str, authors: int, first_page: int) -> list[str] | None:
    """The institutions of the address blocks directly over the last 'Manuscript received' line, one per
    author in byline order (Econometrica prints its authors' addresses only there: 'Princeton University';
    two authors' blocks joined by a line 'and'); None unless the lines over it, back to the text's last
    sentence, hold an institution and split into as many blocks as there are authors. The line closes the
    text: after page 1 (``first_page``: its length in ``text``), where IEEE's footnote opens 'Manuscript
    received ...' over the authors' affiliations in prose."""
    found = list(_MANUSCRIPT_RECEIVED.finditer(text))
    if not found or not authors or found[-1].start() <= first_page:
        return None
    lines = [line.strip() for line in text[:found[-1].start()].rstrip("\n").split("\n")]
    # (back to a sentence's end: a word's full stop, not an abbreviation's, 'U.S.A.')
    above = list(itertools.takewhile(lambda line: line and not re.search(r"[a-z]{2}\.$", line)
                                     and not is_prose(line) and line != PAGE_BREAK,
                                     reversed(lines[-_RECEIVED_BLOCK_LINES:])))[::-1]
    blocks = [list(group) for joiner, group in itertools.groupby(above, key=lambda line: line == "and")
              if not joiner]
    if len(blocks) != authors or not all(INSTITUTION.search(" ".join(block)) for block in blocks):
        return None
    institutions = [", ".join(up_to_address(part.strip() for part in " ".join(block).split(",")))
                    for block in blocks]
    return institutions if all(institutions) else None


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
        owner = surnames.get(words[-1].casefold()) if len(words) <= 5 and NAME.match(line) else None
        if owner is not None:
            current = owner
            result[current] = []
        elif current is not None and not ADDRESS.search(line) and not _is_running_head(line, names):
            result[current].append(line)
    return {name: join_affiliation(parts) for name, parts in result.items() if parts}


def _is_running_head(line: str, names: list[str]) -> bool:
    """A page's running head ('Douglas Bates, Martin Mächler 51'): author names with a page number."""
    return sum(name.split()[-1] in line for name in names) >= 1 and bool(re.search(r"\d+$", line))
