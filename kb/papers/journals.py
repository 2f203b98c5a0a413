"""The lexicon of journal names: some 38,000 journals' full names and their abbreviations ('Nucleic Acids
Res.', 'Proc Natl Acad Sci U S A', 'PLoS Comput Biol'), from JabRef's CC0 abbreviation lists
(``journals.tsv`` beside this module, built by benchmarks/build_journals.py, whose header says from which
lists and commit).

kb reads a PDF's venue where its page names a journal without a grammar cue ('Genes 2014, 5, 254-270'):
``mentions`` finds the lexicon's names in a line of text and ``full_name`` maps an abbreviation to the
journal's full name. Where a mention is a statement about the article itself (its shape on the page) is
decided by ``pdf_publication``, not here.

The file's lines are sorted by the names' keys, and it is mapped into memory, not read: a lookup bisects it
for the lines of the names that open with the key's first word and reads only those (once per word and
process). A PDF whose venue a statement gives looks up one name, a page scanned for names a few hundred
words' names; reading the whole table took 67 ms, on the first PDF of most ``kb add``s. The file is opened
on first use (never at ``kb`` start-up): ``lexicon()`` is cached.
"""

from __future__ import annotations

import mmap
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LEXICON = Path(__file__).with_name("journals.tsv")
_NOT_WORD = re.compile(r"[^\w]+")
_LONGEST = 16  # words in the longest name looked for: longer ones are never printed whole on one line


def name_key(name: str) -> str:
    """A journal name as it is looked up: accents, case, periods and other punctuation, '&' for 'and', a
    leading 'The' and spacing folded ('The Journal of Chem. & Bio.' and 'journal of chem and bio' are one)."""
    if not name.isascii():  # (most names are ASCII, and skip the slower Unicode folding)
        name = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    words = _NOT_WORD.sub(" ", name.casefold().replace("&", " and ")).split()
    return " ".join(words[1:] if words[:1] == ["the"] and len(words) > 1 else words)


class Lexicon:
    """The lexicon file (benchmarks/build_journals.py): after its ``#`` header, one line per name, its key
    (``name_key``), a tab and the full name of the journal it names, the lines in the order of their keys'
    UTF-8 bytes (Python's order of strings). A key is found by bisecting the file's bytes, mapped into memory;
    an abbreviation two journals share ('J. Biol.') is in the file under neither."""

    def __init__(self, path: Path = LEXICON) -> None:
        with path.open("rb") as file:
            self._bytes = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        self._first = 0  # where the names' lines begin, after the header
        while self._bytes[self._first:self._first + 1] == b"#":
            self._first = self._bytes.find(b"\n", self._first) + 1
        self._by_opening: dict[str, dict[str, str]] = {}  # ``_names_opening_with``'s, by word

    def _first_not_below(self, key: bytes) -> int:
        """Where the first line whose key is not below ``key`` begins (the file's length: there is none)."""
        data, low, high = self._bytes, self._first, len(self._bytes)
        # (``low`` and ``high`` are always where lines begin: the keys before ``low`` are below ``key``, the
        # keys from ``high`` on are not)
        while low < high:
            start = data.rfind(b"\n", low, (low + high) // 2) + 1 or low  # the line the middle falls in
            tab = data.find(b"\t", start)
            if data[start:tab] < key:
                low = data.find(b"\n", tab) + 1
            else:
                high = start
        return low

    def _names_opening_with(self, word: str) -> dict[str, str]:
        """The keys whose first word is ``word`` and the full names they give: the lines from ``word`` to
        ``word`` and '!' (a space, the next character of a longer key, is below '!', which no key holds; any
        other is above it), read once per word (a page repeats its words; 'journal' opens the most keys,
        4,323)."""
        names = self._by_opening.get(word)
        if names is None:
            wanted = word.encode("utf-8")
            block = self._bytes[self._first_not_below(wanted):self._first_not_below(wanted + b"!")]
            names = self._by_opening[word] = dict(line.split("\t", 1)
                                                  for line in block.decode("utf-8").splitlines())
        return names

    def get(self, key: str) -> str | None:
        """The full name of the journal ``key`` (a ``name_key``) names, or None."""
        return self._names_opening_with(key.partition(" ")[0]).get(key)

    def opens_a_name(self, word: str) -> bool:
        """Whether a key's first word is ``word``, or ``word`` is 'the' (a key drops a leading 'The'): a word
        no name opens with is passed over without trying the names that could start there."""
        return word == "the" or bool(self._names_opening_with(word))

    def entries(self) -> Iterator[tuple[str, str]]:
        """Every key and the full name it gives, in the file's order (for checks; a lookup reads none of
        this)."""
        for line in self._bytes[self._first:].decode("utf-8").splitlines():
            key, _, name = line.partition("\t")
            yield key, name

    def full_name(self, printed: str) -> str | None:
        """The full name of the journal ``printed`` names (its full name or an abbreviation), or None."""
        return self.get(name_key(printed))


@cache
def lexicon() -> Lexicon:
    """The lexicon, its file opened on first use (a lookup then reads only the lines it bisects)."""
    return Lexicon(LEXICON)


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
    known = lexicon()
    words = list(_WORD.finditer(line))
    at = 0
    while at < len(words):
        opening = name_key(words[at].group()).split(" ", 1)[0]
        for stop in range(min(len(words), at + _LONGEST), at, -1) if known.opens_a_name(opening) else ():
            start, end = words[at].start(), words[stop - 1].end()
            raw = line[start:end]
            printed = re.sub(_EDGE, "", raw)
            journal = known.get(name_key(printed)) if printed else None
            if journal is None or not (printed[0].isupper() or printed.startswith(journal[:1])):
                continue
            # where the printed name sits in the line, without the punctuation around it
            start += raw.find(printed)
            yield Mention(printed, journal, start, start + len(printed))
            at = stop
            break
        else:
            at += 1
