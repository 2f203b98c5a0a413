"""The lexicon of journal names: some 38,000 journals' full names and their abbreviations ('Nucleic Acids
Res.', 'Proc Natl Acad Sci U S A', 'PLoS Comput Biol'), from JabRef's CC0 abbreviation lists
(``journals.tsv.gz`` beside this module, built by benchmarks/build_journals.py, whose header says from which
lists and commit).

kb reads a PDF's venue where its page names a journal without a grammar cue ('Genes 2014, 5, 254-270'):
``mentions`` finds the lexicon's names in a line of text and ``full_name`` maps an abbreviation to the
journal's full name. Where a mention is a statement about the article itself (its shape on the page) is
decided by ``pdf_publication``, not here.

The file is read once per process, on first use (never at ``kb`` start-up): ``lexicon()`` is cached.
"""

from __future__ import annotations

import gzip
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LEXICON = Path(__file__).with_name("journals.tsv.gz")
_NOT_WORD = re.compile(r"[^\w]+")
_LONGEST = 16  # words in the longest name looked for: longer ones are never printed whole on one line


def name_key(name: str) -> str:
    """A journal name as it is looked up: accents, case, periods and other punctuation, '&' for 'and', a
    leading 'The' and spacing folded ('The Journal of Chem. & Bio.' and 'journal of chem and bio' are one)."""
    if not name.isascii():  # (most names are ASCII, and skip the slower Unicode folding)
        name = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    words = _NOT_WORD.sub(" ", name.casefold().replace("&", " and ")).split()
    return " ".join(words[1:] if words[:1] == ["the"] and len(words) > 1 else words)


@dataclass(frozen=True)
class Lexicon:
    """Each name's key (``name_key``) and the full name of the journal it names (an abbreviation two journals
    share, 'J. Biol.', is in the file under neither: benchmarks/build_journals.py). ``openings``: the keys'
    first words, and 'the' (a word no name opens with is passed over without trying the names that could start
    there)."""

    names: dict[str, str]
    openings: frozenset[str]

    def full_name(self, printed: str) -> str | None:
        """The full name of the journal ``printed`` names (its full name or an abbreviation), or None."""
        return self.names.get(name_key(printed))


@cache
def lexicon() -> Lexicon:
    """The lexicon, read from ``journals.tsv.gz`` on first use (~0.1 s): each row a full name, '=' and its key
    where that is not the name in lower case, then its abbreviations' keys (benchmarks/build_journals.py)."""
    names: dict[str, str] = {}
    # (a plain loop over the fields, no unpacking or dict per row: this loop is most of the read, on the first
    # PDF of every `kb add`)
    for row in gzip.decompress(LEXICON.read_bytes()).decode("utf-8").split("\n"):
        if not row or row[0] == "#":
            continue
        fields = row.split("\t")
        name = fields[0]
        if len(fields) > 1 and fields[1][:1] == "=":
            names[fields[1][1:]] = name
            del fields[1]
        else:
            names[name.casefold()] = name
        for abbreviation in fields[1:]:
            names[abbreviation] = name
    openings = frozenset({"the", *(key.partition(" ")[0] for key in names)})  # (a key drops a leading The)
    return Lexicon(names, openings)


def full_name(printed: str) -> str | None:
    """The full name of the journal ``printed`` names ('Nucleic Acids Res.' -> 'Nucleic Acids Research'), or
    None when the lexicon holds no journal of that name."""
    return lexicon().full_name(printed)


@dataclass(frozen=True)
class Mention:
    """A journal's name as a line prints it (``printed``, at ``start``:``end`` of the line), and the full name
    of the journal it names (``journal``)."""

    printed: str
    journal: str
    start: int
    end: int


_WORD = re.compile(r"\S+")
_EDGE = r"^[^\w&]+|[^\w.&]+$"  # punctuation around a name that is not part of it ('(Nature,' -> 'Nature')


def mentions(line: str) -> Iterator[Mention]:
    """The lexicon's names printed in ``line``, left to right, each the longest name that opens at its word
    (so 'Nucleic Acids Research' and not 'Nucleic Acids'), none overlapping another. A name opens with a
    capital, or as the lexicon spells it ('eLife'), so that prose's lower-case words ('genes', 'cell') name
    nothing."""
    names, openings = lexicon().names, lexicon().openings
    words = list(_WORD.finditer(line))
    at = 0
    while at < len(words):
        opening = name_key(words[at].group()).split(" ", 1)[0]
        for stop in range(min(len(words), at + _LONGEST), at, -1) if opening in openings else ():
            start, end = words[at].start(), words[stop - 1].end()
            raw = line[start:end]
            printed = re.sub(_EDGE, "", raw)
            journal = names.get(name_key(printed)) if printed else None
            if journal is None or not (printed[0].isupper() or printed.startswith(journal[:1])):
                continue
            # where the printed name sits in the line, without the punctuation around it
            start += raw.find(printed)
            yield Mention(printed, journal, start, start + len(printed))
            at = stop
            break
        else:
            at += 1
