"""The lexicon of journal names (kb/papers/journals.py, built from JabRef's lists by benchmarks/build_journals.py)
and where kb/papers/pdf_publication.py takes a journal it names for the article's venue: a citation's shape
after the name where a page names its own journal (a margin, a line above the title, a line it opens, 'Cite
this:'), or a margin's whole line; never prose, an affiliation, another work's citation, the reference list, a
publisher, or a common word without a citation's shape."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from kb.papers import journals
from kb.papers.pdf_layout import read_article
from kb.papers.pdf_page import PdfArticle
from kb.papers.pdf_publication import read_publication
from tests.helpers.article_pdf import make_first_page_pdf

ROOT = Path(__file__).resolve().parents[1]
PNAS = "Proceedings of the National Academy of Sciences of the United States of America"


# -- the lexicon ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("printed", "full"), [
    ("Nucleic Acids Res.", "Nucleic Acids Research"),  # ISO, with periods
    ("Nucleic Acids Res", "Nucleic Acids Research"),  # Medline, without
    ("Proc. Natl. Acad. Sci. USA", PNAS),
    ("Proc Natl Acad Sci U S A", PNAS),
    ("PLoS Comput Biol", "PLoS Computational Biology"),
    ("J. Chem. Inf. Model.", "Journal of Chemical Information and Modeling"),
    ("NUCLEIC ACIDS RESEARCH", "Nucleic Acids Research"),
    ("Nat. Commun.", "Nature Communications"),
])
def test_lexicon_maps_an_abbreviation_to_the_full_name(printed: str, full: str) -> None:
    assert journals.full_name(printed) == full


def test_lexicon_knows_no_name_it_was_not_given() -> None:
    assert journals.full_name("Journal of Imaginary Results") is None
    assert journals.full_name("Department of Biology") is None


def test_name_key_folds_case_periods_ampersands_accents_and_a_leading_the() -> None:
    assert journals.name_key("The Journal of Chem. & Bio.") == journals.name_key("journal of chem and bio")
    assert journals.name_key("Revue d’Écologie") == "revue d ecologie"
    assert journals.name_key("The") == "the"  # a name that is only 'The' keeps it


def test_mentions_are_the_longest_names_opening_with_a_capital() -> None:
    found = list(journals.mentions("Nucleic Acids Research, 2003, Vol. 31, No. 13"))
    assert [(m.printed, m.journal, m.start) for m in found] == [("Nucleic Acids Research",
                                                                 "Nucleic Acids Research", 0)]
    # prose's lower-case words name nothing, though 'genes' and 'cell' are journals
    assert not list(journals.mentions("the genes of the cell were sequenced"))
    bracketed = next(journals.mentions("(Nucleic Acids Res. 2005;"))
    assert (bracketed.printed, bracketed.start) == ("Nucleic Acids Res.", 1)


def test_lexicon_keys_are_the_names_folded() -> None:
    """The keys the file writes (benchmarks/build_journals.py) are ``name_key``'s: every full name is found by
    its own spelling, and no key is a full name's that ``name_key`` would not make."""
    known = dict(journals.lexicon().entries())
    full_names = set(known.values())
    assert len(full_names) > 30_000
    assert all(known.get(journals.name_key(name)) == name for name in full_names)


def test_lookup_answers_as_the_whole_table_does() -> None:
    """A lookup bisects the file for the names opening with the key's first word: it answers as the whole
    table read from the file does, for every one of its 68,539 keys and for thousands of keys it lacks (each
    key's neighbours in the file's order: shortened, lengthened, prefixed, its first word alone); and a word
    opens a name exactly when a key opens with it (or it is 'the')."""
    lexicon = journals.Lexicon(journals.LEXICON)  # (a fresh one: nothing of it read yet)
    lines = journals.LEXICON.read_text(encoding="utf-8").splitlines()
    table = dict(line.split("\t") for line in lines if not line.startswith("#"))
    assert len(table) == len(lines) - 3 == 68_539  # (each key written once, after the 3 lines of header)
    assert all(lexicon.get(key) == name for key, name in table.items())
    chosen = random.Random(39).sample(sorted(table), 2_000)
    others = {other for key in chosen for other in
              (key[:-1], key + "s", key + " x", "a" + key, key.partition(" ")[0], key.rpartition(" ")[0])}
    others |= {"", "the", "0", "zzzz", "\uffff", "journal of"}
    absent = others - table.keys()
    assert len(absent) > 5_000
    assert all(lexicon.get(key) is None for key in absent)
    openings = {"the", *(key.partition(" ")[0] for key in table)}
    words = openings | {key.partition(" ")[0] for key in others} | {key + "x" for key in openings}
    assert all(lexicon.opens_a_name(word) == (word in openings) for word in words)


def test_lexicon_file_says_where_it_came_from() -> None:
    with journals.LEXICON.open(encoding="utf-8") as text:
        header = [next(text) for _ in range(3)]
    assert "github.com/JabRef/abbrv.jabref.org at commit " in header[0]
    assert "CC0 1.0" in header[1] and "lifescience" in header[1]


def test_lexicon_is_not_read_when_kb_papers_is_imported() -> None:
    """kb start-up never reads the lexicon: importing the PDF reader leaves it unread until a page is read."""
    code = ("import kb.papers.pdf_layout, kb.papers.journals as j; import sys; "
            "sys.exit(j.lexicon.cache_info().currsize)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


# -- the venue from a journal the lexicon names ----------------------------------------------------------

TITLE = "Coevolution Predicts Contacts in Protein Families"


def _published(page: str, margins: list[str] | None = None, title: str | None = TITLE) -> PdfArticle:
    article = PdfArticle(pages=[page], title=title)
    read_publication(article, margins)
    return article


@pytest.mark.parametrize(("page", "margins", "venue"), [
    # a banner above the title in Medline's order, abbreviated and not spelt out: as printed
    (f"Genome Res. 2011 Jan;21(1):1-10. doi:10.1101/gr.1\n{TITLE}\nAda Lovelace", [], "Genome Res."),
    # a running header, the journal's name alone beside the page number
    (f"{TITLE}\nAda Lovelace", ["Nucleic Acids Research 1234"], "Nucleic Acids Research"),
    # set in capitals: as the name is written
    (f"{TITLE}\nAda Lovelace", ["NUCLEIC ACIDS RESEARCH"], "Nucleic Acids Research"),
    # a citation box: after 'Citation:', the authors, the year and the title before the name; the full name the
    # lexicon gives the abbreviation, where the page prints it too
    (f"{TITLE}\nAda Lovelace\nCitation: Lovelace A, Turing A, et al. (2011) Coevolution predicts contacts. "
     "PLoS Comput Biol 7(12): e1002195. doi:10.1371/journal.pcbi.1002195\nEditor: Alan Turing, PLoS "
     "Computational Biology board", [], "PLoS Computational Biology"),
    (f"{TITLE}\nAda Lovelace\nCitation: Lovelace A, Turing A, et al. (2011) Coevolution predicts contacts. "
     "PLoS Comput Biol 7(12): e1002195. doi:10.1371/journal.pcbi.1002195", [], "PLoS Comput Biol"),
    # a line it opens, after the abstract, in a citation's shape; a single word is a name in that shape
    (f"{TITLE}\nAda Lovelace\nAbstract\nWe predict contacts.\nBioinformatics 2005 Mar;21(6):1-10", [],
     "Bioinformatics"),
    # a sentence's period after a full name is not part of it
    (f"{TITLE}\nAda Lovelace\nGenome Research. 2011 Jan;21(1):1-10", [], "Genome Research"),
    # a running footer's pipes, in capitals, after the addresses its column stacks over it
    (f"{TITLE}\nAda Lovelace", ["1 Somewhere University, 4 Main Street, London. ✉email: ada@example.org "
                                 "NATURE COMMUNICATIONS | (2022) 13:312 | https://doi.org/10.1038/x"],
     "Nature Communications"),
    # a statement in capitals before the name: not the end of a longer name
    (f"{TITLE}\nAda Lovelace", ["APPEARED IN BULLETIN OF THE AMERICAN MATHEMATICAL SOCIETY Volume 30, Number 2, "
                                 "April 1994, Pages 161-177"], "Bulletin of the American Mathematical Society"),
    # a publisher's word in a journal's name, with the citation's shape
    (f"IEEE Access 2021, 9, 12345-12360\n{TITLE}\nAda Lovelace", [], "IEEE Access"),
    # the page's own spelling where it prints the full name
    (f"{TITLE}\nAda Lovelace", ["The American Statistician"], "The American Statistician"),
])
def test_lexicon_names_the_venue_where_a_page_names_its_journal(page: str, margins: list[str],
                                                                venue: str) -> None:
    assert _published(page, margins).venue == venue


@pytest.mark.parametrize(("page", "margins"), [
    # an affiliation naming a journal's word: no citation's shape, and the name does not open its line
    (f"{TITLE}\nAda Lovelace\nDepartment of Bioinformatics, University of Somewhere, 2014, 5 Main Street", []),
    # a common word alone in a margin or above the title: no name without a citation's shape
    (f"Cell\n{TITLE}\nAda Lovelace", ["Genes", "Bioinformatics 3"]),
    # another work cited in prose, in parentheses or mid-sentence
    (f"{TITLE}\nAda Lovelace\nContacts were predicted before (Nature 596, 583 (2021)) and as shown in Nucleic "
     "Acids Res. 2005; 33: 1-10 they", []),
    # the reference list
    (f"{TITLE}\nAda Lovelace\nReferences\nNucleic Acids Res. 2005; 33(2): 1-10.", []),
    # a journal's name alone below the title, in the body: a heading or prose, not a banner
    (f"{TITLE}\nAda Lovelace\nNucleic Acids Research", []),
    # the end of a longer name the lexicon does not hold: not that name's last words' journal
    (f"{TITLE}\nAda Lovelace", ["The Bell System Technical Journal, Vol. 27, pp. 379-423, 1948"]),
    (f"{TITLE}\nAda Lovelace", ["LISP AND SYMBOLIC COMPUTATION: An International Journal, 4, 223-242, 1991"]),
    # a place and a year are no citation, though 'Boston' and 'Hand' are journals
    (f"{TITLE}\nAda Lovelace", ["Reprinted in Integrated Networks. Artech House, Boston, 1991. ISBN 0-89006"]),
    (f"{TITLE}\nAda Lovelace\nHand 1981; Titterington, Smith, and Makov 1985", []),
    # a journal's template on a manuscript: its placeholder volume
    (f"BIOINFORMATICS Vol. 00 no. 00 2012\n{TITLE}\nAda Lovelace", []),
    # a publisher the lists hold beside its journals; a name made of a page's common words
    (f"{TITLE}\nAda Lovelace", ["American Mathematical Society", "Technical Report"]),
])
def test_lexicon_refuses_mentions_that_are_not_this_articles_journal(page: str, margins: list[str]) -> None:
    assert _published(page, margins).venue is None


def test_lexicon_citation_gives_the_year_where_no_statement_did() -> None:
    """The year of the citation that names the journal; never digits of its DOI or a link."""
    opened = _published(f"{TITLE}\nAda Lovelace\nAbstract\nWe predict contacts.\nBioinformatics 2005 Mar;21(6):1-10")
    assert (opened.venue, opened.year) == ("Bioinformatics", 2005)
    footer = "NATURE COMMUNICATIONS | 13:312 | https://doi.org/10.1038/s41467-2019-2020 | www.nature.com 2022"
    assert (_published(TITLE, [footer]).venue, _published(TITLE, [footer]).year) == ("Nature Communications", 2022)
    boxed = f"{TITLE}\nCite this: PLoS Comput Biol 7(12): e1002195. doi:10.1371/journal.pcbi.1999"
    assert (_published(boxed).venue, _published(boxed).year) == ("PLoS Comput Biol", None)


def test_a_statement_outranks_the_lexicon() -> None:
    """The rules' venue stands: the lexicon is asked only where they leave it empty."""
    page = f"{TITLE}\nAda Lovelace\nTo appear in Statistical Science (2011)."
    assert _published(page, ["Nucleic Acids Research"]).venue == "Statistical Science"


def test_a_statements_abbreviation_takes_the_full_name_the_page_prints_elsewhere() -> None:
    """A rule's venue abbreviated ('PLoS Comput Biol', Vancouver's order) whose words do not open the full
    name's in order: the lexicon's full name, where the page prints it; else as printed."""
    cited = f"PLoS Comput Biol 2011; 7(12): e1002195\n{TITLE}\nAda Lovelace"
    assert _published(cited + "\nwww.ploscompbiol.org PLoS Computational Biology").venue == (
        "PLoS Computational Biology")
    assert _published(cited).venue == "PLoS Comput Biol"


def test_lexicon_venue_read_from_a_pdfs_running_header(tmp_path: Path) -> None:
    """Through the whole reader: a PDF whose running header is the journal's name beside the page number."""
    pdf = make_first_page_pdf(tmp_path / "paper.pdf", TITLE, "Ada Lovelace and Alan Turing",
                              "University of Somewhere", header=("Genome Research 1234",))
    assert read_article(pdf).venue == "Genome Research"
    plain = make_first_page_pdf(tmp_path / "plain.pdf", TITLE, "Ada Lovelace and Alan Turing",
                                "Department of Bioinformatics, University of Somewhere")
    assert read_article(plain).venue is None


MIRROR = Path("/work/.mirror/JabRef+abbrv.jabref.org/repo")


@pytest.mark.skipif(not MIRROR.exists(), reason="no clone of JabRef's lists here (benchmarks/build_journals.py)")
def test_shipped_lexicon_is_the_build_of_the_lists_it_names() -> None:
    """benchmarks/build_journals.py --check: the bundled file is exactly what the script makes from the lists
    at the commit its header names (a hand edit, or a change of ``name_key`` without a rebuild, fails)."""
    with journals.LEXICON.open(encoding="utf-8") as text:
        commit = next(text).split("at commit ")[1].strip()
    head = subprocess.run(["git", "-C", str(MIRROR), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.stdout.strip() != commit:
        pytest.skip(f"the clone is not at the lexicon's commit {commit}")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "build_journals.py"), "--check",
                           "--repo", str(MIRROR)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
