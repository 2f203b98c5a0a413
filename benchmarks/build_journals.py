"""Build kb/papers/journals.tsv, the lexicon of journal names ``kb add`` recognises on a PDF's page 1
(kb/papers/journals.py), from JabRef's journal abbreviation lists (github.com/JabRef/abbrv.jabref.org, CC0 1.0).

The lists taken are those of the fields a protein-language-model researcher reads and cites (``LISTS``, in order
of preference: a journal's full name is spelt as the first list that holds it spells it, since the Medline
lists write titles in sentence case, 'Nucleic acids research'): JabRef's general list (multidisciplinary and
computing journals: ACM, Nature's and Cell's families), life science (biology and bioinformatics, with ISO
abbreviations), the University of British Columbia library's (13,000 titles of every field, the only list
holding many journals founded since 2015: 'Science Advances', 'Communications Biology', 'Nature Machine
Intelligence'), IEEE, the American Chemical Society's (JCIM, JCTC, Biochemistry), MathSciNet's mathematics list
and the AMS list (statistics and probability journals: 'Ann. Statist.', 'J. Amer. Statist. Assoc.'), and the two
Medline lists, Index Medicus and Entrez (every Medline-indexed journal with its dotless abbreviation, 'PLoS
Comput Biol', 'Proc Natl Acad Sci U S A'). Left out: astronomy, geology and physics, mechanics, meteorology,
sociology, economics, classics and archaeology (outside the field).

Each line of the written file is a name as it is looked up (``name_key``: 'nucleic acids res'), a tab, and the
full name of the journal it names: a journal's full name's line and one line per abbreviation, the lines sorted
by those keys, uncompressed, so that ``kb add`` finds a name by bisecting the file (kb.papers.journals) and
reads none of it it does not need (4.7 MB on disk, 1 MB in git's and a wheel's compression; reading the whole
0.7 MB gzip of journal rows took 67 ms of the first PDF of every ``kb add``). An abbreviation that is the full
name again, differs from one already written only in its periods, is shared by two journals or is another
journal's full name is left out, so that each key is written once. The file's header lines (``#``) give the
source repository, its commit, the lists and the licence.

    .venv/bin/python benchmarks/build_journals.py                 # from the mirror below, at its HEAD
    .venv/bin/python benchmarks/build_journals.py --repo DIR.git  # another clone of the lists
    .venv/bin/python benchmarks/build_journals.py --check         # rebuild and compare with the shipped file
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kb.papers.journals import LEXICON, name_key  # noqa: E402

MIRROR = Path("/work/.mirror/JabRef+abbrv.jabref.org/repo")
SOURCE = "https://github.com/JabRef/abbrv.jabref.org"
LICENCE = "CC0 1.0 Universal (the repository's LICENSE.md)"
LISTS = ("general", "lifescience", "ubc", "ieee", "acs", "mathematics", "ams", "medicus", "entrez")
# Medline's lists (and a few of the others' rows) write titles in sentence case ('Journal of molecular biology'):
# their words are given capitals, but for these, which a title keeps small after its first word.
SMALL_WORDS = frozenset({"of", "and", "in", "for", "the", "on", "at", "to", "a", "an", "by", "with", "from",
                         "de", "des", "du", "la", "le", "les", "et", "und", "der", "die", "das", "für", "y"})
_TEX = re.compile(r"[$\\{}]")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def _clean(name: str) -> str:
    """A name without the place or note Medline adds in parentheses ('Bioinformatics (Oxford, England)',
    'Science (80- )') and with its whitespace collapsed."""
    return " ".join(re.sub(r"\s*\([^()]*\)\s*$", "", name).split())


def _capitalised(name: str) -> str:
    """A sentence-case title with its words capitalised as a journal's name is written ('Nucleic acids
    research' -> 'Nucleic Acids Research'); a word's own capitals ('eLife', 'BMC') are kept."""
    words = name.split()
    return " ".join(w if (i and w.lower() in SMALL_WORDS) or not w[:1].islower() else w[:1].upper() + w[1:]
                    for i, w in enumerate(words))


def read_lists(repo: Path) -> tuple[str, dict[str, tuple[str, list[str]]]]:
    """The commit read and, by each full name's key (``name_key``), its spelling and its abbreviations, in the
    order the lists give them."""
    commit = _git(repo, "rev-parse", "HEAD").strip()
    journals: dict[str, tuple[str, list[str]]] = {}
    for list_name in LISTS:
        text = _git(repo, "show", f"HEAD:journals/journal_abbreviations_{list_name}.csv")
        for row in csv.reader(io.StringIO(text)):
            if len(row) < 2 or not row[0].strip():
                continue
            full = _clean(row[0])
            if _TEX.search(full):
                continue  # MathSciNet's TeX markup ('30$\\sp {\\rm o}$ Coloquio'): no page prints it so
            if len(full.split()) > 1 and full == full[:1] + full[1:].lower():
                full = _capitalised(full)
            key = name_key(full)
            if not key:
                continue
            _, abbreviations = journals.setdefault(key, (full, []))
            for abbreviation in map(_clean, row[1:]):
                if abbreviation and abbreviation not in abbreviations and not _TEX.search(abbreviation):
                    abbreviations.append(abbreviation)
    return commit, journals


def render(commit: str, journals: dict[str, tuple[str, list[str]]]) -> bytes:
    """The lexicon file's text: its header, then one line per name as it is looked up (``name_key``), in the
    order of those keys (a journal's full name's and each of its abbreviations'), with the journal's full name
    after a tab; so that ``kb add`` finds a name by bisection without reading the whole file."""
    lines = [f"# Journal names and their abbreviations, from {SOURCE} at commit {commit}",
             f"# lists: {', '.join(LISTS)} (journals/journal_abbreviations_LIST.csv); licence: {LICENCE}",
             "# built by benchmarks/build_journals.py; one name a line, sorted: the name as it is looked up "
             "(kb.papers.journals.name_key), a tab, the full name of the journal it names"]
    # Each abbreviation in its looked-up form, once: not the full name again, nor the same but for its periods
    # ('Nucleic Acids Res.', 'Nucleic Acids Res'). One that two journals share ('J. Biol.') names neither, and
    # one that is another journal's full name names that journal: both are left out here, so that every key is
    # written once and kb reads the file without resolving anything.
    owners: dict[str, set[str]] = {}
    for key, (_, abbreviations) in journals.items():
        for abbreviation in abbreviations:
            owners.setdefault(name_key(abbreviation), set()).add(key)
    names: dict[str, str] = {}
    for key in sorted(journals):
        full, abbreviations = journals[key]
        names[key] = full
        for kept in dict.fromkeys(name_key(a) for a in abbreviations):
            if kept != key and kept not in journals and owners[kept] == {key}:
                names[kept] = full
    # (sorted as Python sorts strings, by code point: the order of their UTF-8 bytes, which the lookup bisects)
    lines += [f"{key}\t{names[key]}" for key in sorted(names)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=MIRROR, help="a (bare) clone of JabRef's lists")
    parser.add_argument("--check", action="store_true", help="compare with the shipped file, write nothing")
    args = parser.parse_args()
    commit, journals = read_lists(args.repo)
    data = render(commit, journals)
    if args.check:
        same = LEXICON.read_bytes() == data
        print("the shipped lexicon is the lists' build" if same else "the shipped lexicon differs")
        sys.exit(0 if same else 1)
    LEXICON.write_bytes(data)
    print(f"{len(journals)} journals, {len(data)} bytes: {LEXICON.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
