"""The lexicon of conference, workshop and symposium names: some 400 meetings' acronyms ('SOSP', 'NeurIPS',
'USENIX Security') and full names ('ACM Symposium on Operating Systems Principles'), from two MIT-licensed
lists of computing and machine-learning meetings (``conferences.tsv`` beside this module, built by
benchmarks/build_conferences.py, whose header says from which lists and commits), with the meetings of
computational biology those lists lack.

kb reads a PDF's venue where its page names the meeting the paper appeared at, in words no grammar of
publication statements holds ('Workshop track - ICLR 2018', 'Accepted to NAACL-HLT 2019'): ``mentions`` finds
the lexicon's meetings in a line of text, each as the page prints it without what is no part of a meeting's
name (a proceedings' 'Proceedings of the', an ordinal, a year, a place), and ``meeting`` reads the meeting a
span names from its start ('In Proceedings of the 37th International Conference on Machine Learning, Vienna'
-> 'International Conference on Machine Learning'). An acronym is a meeting's only with its year beside it
('ACL 2020', 'KDD '19', 'AAAI-21', 'ICLR2021'), so that a word ('ACL injury', 'CHI') names nothing; a full
name needs no year. Whether a mention is a statement about the article itself (its place on the page) is
decided by ``pdf_publication``, not here.

The venue is the name as printed (the corpus' convention: 'SOSP', 'USENIX Symposium on Operating Systems
Design and Implementation'), not the lexicon's spelling: a full name is matched by its key
(``journals.name_key``) without the bodies and the 'Annual' or 'International' that open it, since pages name
one meeting with or without them ('IEEE/CVF Conference on Computer Vision and Pattern Recognition',
'Conference on Computer Vision and Pattern Recognition'). The file, 25 KB, is read whole on the first lookup
(never at ``kb`` start-up): ``lexicon()`` is cached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kb.papers.journals import name_key

LEXICON = Path(__file__).with_name("conferences.tsv")
_LONGEST = 16  # words in the longest name looked for

# A meeting's own word: a full name without one ('Financial Cryptography and Data Security') is matched only
# where it has four words or more, which prose's and titles' phrases rarely share with a meeting.
MEETING_WORD = re.compile(r"\b(?:Conference|Symposium|Workshop|Meeting|Congress|Colloquium|Forum|Summit|"
                          r"Convention|Seminar)\b", re.IGNORECASE)
# The words that may open a meeting's name or be left out of it: 'The', 'Annual', 'International', and the
# bodies holding it ('ACM', 'IEEE/CVF', 'ACM-SIAM', 'ACM SIGPLAN'). A name in capitals has its words in
# capitals: a body is a known one, never any word in capitals.
_OPENING = re.compile(r"^(?:[Tt]he|THE|[Aa]nnual|ANNUAL|[Ii]nternational|INTERNATIONAL)$")
_BODIES = frozenset({"ACM", "IEEE", "USENIX", "SIAM", "AAAI", "IFIP", "EATCS", "CAAI", "CCF", "IAPR", "ISCA",
                     "CVF", "RSJ", "SIGDA", "SIGACT", "IACR", "AMIA", "ISCB", "ACL", "EACL", "EG"})
_BODY = re.compile(r"^[A-Z]+(?:[/-][A-Z]+)*$")


def _is_body(word: str) -> bool:
    """Whether ``word`` names a body holding meetings ('IEEE', 'IEEE/CVF', 'ACM-SIAM', 'SIGPLAN')."""
    return _BODY.match(word) is not None and all(part in _BODIES or part.startswith("SIG")
                                                 for part in re.split(r"[/-]", word))


# An acronym of a meeting: two capitals at least and three characters ('ICLR', 'NeurIPS', 'CoNLL'), so that
# a word ('Performance', 'Cloud') or two letters ('RE', 'SC') are never one.
_ACRONYM_SHAPE = re.compile(r"^(?=[\w&+.-]{3,}$)(?=.*[A-Z].*[A-Z])[A-Z][\w&+.-]*$")
# A meeting's year after its acronym: ' 2019', ' '19', '’19', '-19', glued '2019' ('ICLR2021'); two digits
# after a space alone are no year ('ICML 21 times').
_YEAR_AFTER = re.compile(r"^(?:[ -]?(?P<year>(?:19|20)\d\d)|(?: ?[’'‘]|-)(?P<yy>\d\d))(?!\d)")
# A meeting's word after its acronym in place of its year ('ICDE Conference 2010', 'VLDB Conference'), where
# no full name goes on after it ('AAAI Conference on Artificial Intelligence' is the full name's).
_MEETING_AFTER = re.compile(r"^ (?:Conference|Workshop|Symposium)\b(?! (?:on|of|for|in|and|the)\b)")


@dataclass(frozen=True)
class Mention:
    """A meeting a line names: as printed (``printed``, at ``start``:``end`` of the line), the lexicon's
    ``acronym`` and full ``name`` of it, the year printed with it (``year``, or None) and whether the line
    names it by its acronym (``by_acronym``)."""

    printed: str
    acronym: str
    name: str
    start: int
    end: int
    year: int | None
    by_acronym: bool


def _core(words: list[str]) -> str:
    """A full name's key without the words that may open it or be left out (see ``_OPENING``)."""
    # (three words are always kept: 'USENIX Annual Technical Conference' -> 'annual technical conference')
    at = 0
    while at < len(words) - 3 and (_OPENING.match(words[at]) or _is_body(words[at])):
        at += 1
    return name_key(" ".join(words[at:]))


class Lexicon:
    """The lexicon file (benchmarks/build_conferences.py): after its ``#`` header, one line per name, a
    meeting's acronym, a tab and its full name. Indexed by acronym as printed ('NeurIPS'; a body's acronym
    before it may be left out: 'IEEE VIS', 'VIS') and by each full name's key without its opening
    (``_core``)."""

    def __init__(self, path: Path = LEXICON) -> None:
        self.by_acronym: dict[str, tuple[str, str]] = {}
        self.by_name: dict[str, tuple[str, str]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("#") or "\t" not in line:
                continue
            acronym, name = line.split("\t", 1)
            words = acronym.split()
            bodied = len(words) > 1 and _is_body(words[0])
            if bodied:  # a body's acronym first ('USENIX Security')
                self.by_acronym.setdefault(acronym, (acronym, name))
            if _ACRONYM_SHAPE.match(words[-1]):  # the meeting's own, alone too ('VIS' for 'IEEE VIS')
                self.by_acronym.setdefault(words[-1] if bodied else acronym, (acronym, name))
            key = _core(name.split())
            if len(key.split()) >= 3 and (MEETING_WORD.search(name) or len(name.split()) >= 4):
                self.by_name.setdefault(key, (acronym, name))
        # An acronym the lexicon spells in lower case too, printed in capitals ('INTERSPEECH 2021' for
        # 'Interspeech', 'EUROGRAPHICS'): the capitals name it, where they name no acronym of their own.
        self.by_capitals = {acronym.upper(): meeting for acronym, meeting in self.by_acronym.items()
                            if not acronym.isupper() and acronym.upper() not in self.by_acronym}
        # the first and last words of the names' keys: a span whose words open or end no name is not tried
        self._openings = {key.split()[0] for key in self.by_name}
        self._endings = {key.split()[-1] for key in self.by_name}

    def acronym(self, printed: str) -> tuple[str, str] | None:
        """The meeting (acronym, full name) an acronym as printed names: 'NeurIPS' (or in capitals),
        'NAACL-HLT' and 'EMNLP-IJCNLP', 'ESEC/FSE' (a joint meeting's parts: the first known one's), 'USENIX
        Security', a track's 'CHI EA'; None for another word."""
        if printed in self.by_acronym:
            return self.by_acronym[printed]
        if printed in self.by_capitals:
            return self.by_capitals[printed]
        words = printed.split()
        if len(words) == 2 and words[0] in self.by_acronym and re.fullmatch(r"[A-Z]{2,4}", words[1]):
            return self.by_acronym[words[0]]  # a track of the meeting ('CHI EA', 'ACL SRW')
        parts = re.split(r"[-/+]", printed)
        known = [part for part in parts if part in self.by_acronym]
        shaped = all(_ACRONYM_SHAPE.match(part) or part.isupper() and len(part) > 1 for part in parts)
        if len(parts) > 1 and known and shaped:
            return self.by_acronym[known[0]]  # ('ESEC/FSE': FSE's, the part the lexicon knows)
        return None

    def name(self, printed: str) -> tuple[str, str] | None:
        """The meeting (acronym, full name) a full name as printed names, with or without the words that
        may open it ('IEEE', 'Annual', 'International'); None for any other name."""
        words = printed.split()
        if len(name_key(printed).split()) < 3:  # ('Security Symposium' names no one meeting)
            return None
        return self.by_name.get(_core(words))

    def mentions(self, line: str) -> list[Mention]:
        """The meetings ``line`` names, left to right, none overlapping another: an acronym with its year
        beside it, or a full name, the longest that opens at its word."""
        found: list[Mention] = []
        words = list(re.finditer(r"\S+", line))
        keys = [name_key(word.group()).split() for word in words]  # each word's key's words, looked up once
        at = 0
        while at < len(words):
            mention = self._acronym_at(line, words, at) or self._name_at(line, words, keys, at)
            if mention is None:
                at += 1
                continue
            found.append(mention)
            at = next((i for i, w in enumerate(words) if w.start() >= mention.end), len(words))
        return found

    def _acronym_at(self, line: str, words: list[re.Match[str]], at: int) -> Mention | None:
        """The meeting whose acronym opens word ``at`` (a body's acronym before it, 'USENIX Security', taken
        in), with its year after it or its meeting's word ('ICDE Conference'); None where there is none."""
        for width in (2, 1):
            if at + width > len(words):
                continue
            raw = line[words[at].start():words[at + width - 1].end()]
            token = raw.lstrip("([“\"‘'")
            if not token[:1].isupper():
                return None  # (an acronym opens with a capital: most words are passed over here)
            start = words[at + width - 1].end() - len(token)
            # the acronym up to its glued year or a quote ('ICLR2021', 'KDD’19', 'AAAI-21')
            glued = re.match(r"^(.+?)(?=(?:19|20)\d\d\b|[’'‘]\d\d\b|-\d\d\b|[,.;:)\]]|$)", token)
            printed = glued.group(1) if glued else token
            if printed != printed.strip():
                continue  # ('NAACL-HLT 2019' read two words at a time: the year is no part of it)
            meeting = self.acronym(printed)
            if meeting is None:
                continue
            rest = line[start + len(printed):]
            year = _YEAR_AFTER.match(rest)
            worded = None if year else _MEETING_AFTER.match(rest)
            if year is None and worded is None:
                return None  # an acronym without its year names nothing ('ACL injury', 'CHI')
            if worded:  # ('ICDE Conference 2010', 'the 19th VLDB Conference Dublin')
                year = _YEAR_AFTER.match(rest[worded.end():])
            number = None
            if year is not None:
                yy = int(year.group("yy") or 0)
                number = int(year.group("year")) if year.group("year") else yy + (1900 if yy >= 50 else 2000)
            return Mention(printed, *meeting, start, start + len(printed), number, True)
        return None

    def _name_at(self, line: str, words: list[re.Match[str]], keys: list[list[str]],
                 at: int) -> Mention | None:
        """The meeting whose full name opens word ``at`` (a capital), the longest the lexicon holds (``keys``:
        each word's key's words)."""
        first = words[at].group()
        bare = first.strip("(“\"")
        if not first[:1].isupper() or not keys[at] or not (
                _OPENING.match(bare) or _is_body(bare) or keys[at][0] in self._openings):
            return None
        for stop in range(min(len(words), at + _LONGEST), at + 1, -1):
            if not keys[stop - 1] or keys[stop - 1][-1] not in self._endings:
                continue
            start, end = words[at].start(), words[stop - 1].end()
            printed = re.sub(r"^[^\w]+|[^\w)]+$", "", line[start:end])
            meeting = self.name(printed) if printed else None
            if meeting is not None:
                start += line[start:end].find(printed)
                return Mention(printed, *meeting, start, start + len(printed), None, False)
        return None


@cache
def lexicon() -> Lexicon:
    """The lexicon, its file read on first use."""
    return Lexicon(LEXICON)


def mentions(line: str) -> list[Mention]:
    """The meetings ``line`` names (see ``Lexicon.mentions``)."""
    return lexicon().mentions(line)
