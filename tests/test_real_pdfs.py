"""Real published articles (R vignettes from Debian and published papers, benchmarks/data/pdfs/) come in
whole: each field of the note stays at least as right as measured, ligatures are resolved in the stored text,
and the paper's text is searchable through the real CLI, with the page of each hit."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.settings import Settings
from tests.helpers.benchmarks import load_benchmark
from tests.helpers.cli import run_kb

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "data" / "pdfs"
LME4 = CORPUS / "lme4-lmer.pdf"
# Right per field in each half of the corpus, as benchmarks/bench_add.py measured it: a change may not lower one.
# The first held-out half (19 articles) was retired to tuning on 2026-11-28, when three rounds of rules had not
# moved it (see the corpus README); a fresh held-out half replaces it, and its floors are measurements, never a
# target to tune against. (Of the tuning half, functional-reactive-animation and therac have no readable text:
# their fields stay empty; level-ancestor's title and a name lost glyphs: 'simpli#ed', 'Mart()n';
# consistent-hashing's names and abstract heading are bitmaps without a Unicode map; essentia's institution line
# stands above marks that lead to e-mails only, one of them a name's only address.)
FLOORS = {
    # 325 articles: round 10's 204, round 11's six fresh batches of 55 (third and fourth waves, each read once
    # before any rule was made from it: title 49, authors 41, affiliations 27, year 45, venue 32, abstract 41 of
    # 55), raised to the measurements after round 11's rules (benchmarks/data/pdfs/README.md, "Round 11 measured"),
    # round 11's validation batch of 12 and round 12's of 30, each retired to tuning after its one read (README,
    # "Round 12"; round 12's read: title 25, authors 25, affiliations 19, year 26, venue 21, DOI 27, abstract 22 of
    # 30), with round 12's two DOI rules and one corrected DOI truth; and round 10's held-out half of 24, read in
    # totals four times (rounds 10-12 and at round 13's start: title 20, authors 21, affiliations 16, year 20,
    # venue 13, DOI 23, abstract 20 of 24), retired to tuning in round 13 (README, "Round 13"); round 13's
    # publication rules from their misses (year 315 -> 318, venue 295 -> 305) and two author-block rules
    # (affiliations 285 -> 287), and a journal's logo and page 1's broken words (title 311 -> 313, authors 307
    # -> 308, affiliations 287 -> 288), and an abstract set in another style wherever the text order draws it
    # (abstract 303 -> 306), and a published version cited before its journal or on page 2 (year 318 -> 320,
    # venue 305 -> 307, DOI 324 -> 325), and bylines (IEEE's grades in italic, an ORCID icon before a name's
    # marks: authors 308 -> 310, affiliations 288 -> 289), Nature Portfolio's glued footnote numbers and a block
    # broken mid-phrase over two columns (affiliations 289 -> 291), a meeting in capitals (venue 307 -> 308), a
    # row of names sharing the lines under it (affiliations 291 -> 292, after the held-out half's read)
    "tuning": {"title": 313, "authors": 310, "affiliations": 292, "year": 320, "venue": 308, "doi": 325,
               "arxiv_id": 325, "abstract": 306, "ligatures": 322},
    # round 13's fresh held-out half (31 articles), read once in totals after round 13's rules were merged
    # (README.md, "Round 13 measured"): floors that are its first read, never a target to tune against
    "held-out": {"title": 26, "authors": 25, "affiliations": 14, "year": 25, "venue": 22, "doi": 29,
                 "arxiv_id": 30, "abstract": 25, "ligatures": 31},
}


WIDE = {"COLUMNS": "200"}
pytestmark = pytest.mark.skipif(not LME4.exists(), reason="the PDF corpus is missing: benchmarks/data/pdfs/")


def _cli(tmp_path: Path, *args: str) -> str:
    result = run_kb(tmp_path / "papers", tmp_path / "home", *args, env=WIDE)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


@pytest.mark.slow  # reads every article of both halves (~3 min idle); the layout rules' unit tests run by default
def test_real_pdfs_each_field_stays_at_its_measured_accuracy() -> None:
    bench_add = load_benchmark("bench_add")
    rows, seconds_per_page = bench_add.run()  # the tuning and held-out halves: never the validation batch
    assert len(rows) >= 356 and not any(row["split"] == "validation" for row in rows)
    for half, floors in FLOORS.items():
        right = bench_add.totals([row for row in rows if row["split"] == half])["right"]
        assert all(right[field] >= floor for field, floor in floors.items()), (half, right)
    assert seconds_per_page < 0.5  # a 51-page article in seconds, not minutes


# Round 3's short tuning articles, one per genre the rules were made for (the longer ones, USENIX covers and
# arXiv preprints, are read by the slow test above): elsarticle's letter superscripts over addresses after
# commas, acmart's author grid with a publisher's copyright year, llncs's LaTeX logo and 'Submitted/Accepted'
# footers, R News's byline with its signed address at the end and its 'published as CITE'.
@pytest.mark.parametrize("name", ["elsarticle-authorgroup", "acmart-sigconf", "llncsconf-accepted",
                                  "gdata-unknown"])
def test_real_pdf_of_a_genre_comes_in_whole(name: str) -> None:
    _comes_in_whole(name)


def _comes_in_whole(name: str, fields: tuple[str, ...] | None = None) -> None:
    """Every field of the tuning article ``name`` (or each of ``fields``) is right against its truth file."""
    from kb.papers.add import read_pdf
    from kb.papers.pdf_layout import read_article

    bench_add = load_benchmark("bench_add")
    truth = json.loads((CORPUS / f"{name}.truth.json").read_text(encoding="utf-8"))
    assert truth["split"] == "tuning"
    record = read_pdf(CORPUS / f"{name}.pdf")
    right = bench_add.score(record, truth, read_article(CORPUS / f"{name}.pdf").abstract)
    right = {field: ok for field, ok in right.items() if fields is None or field in fields}
    assert all(right.values()), {field: ok for field, ok in right.items() if not ok}


# Round 4's tuning articles, each the real article a rule was made from (tests/test_pdf_layout.py holds each
# rule's constructed example): a Wiley journal's superscripts after commas, its semicolon address parts and
# citation line (jl-elementary-proof); a Word-made page whose title block is drawn after the body, with
# affiliations stated in a footnote's prose (hidden-hand); an IEEE CS header naming the meeting by its ordinal
# (byzantine-commit). The longer ones are read by default only through the slow test above and here, slow:
# bitmap (Type 3) fonts sized by their letters and OT1's fl (predicate-dispatching), a drop capital, a 'By'
# byline and 'Reprinted with corrections from' (shannon-communication), Kluwer journal headers
# (organizing-programs, strachey-fundamental), JACoW's names grouped by affiliation (jacow-a4). The second
# batch's: an APA footer citing the article itself (gamification-education); an AMS header stating the
# publication in capitals over a title in capitals (thurston-proof-progress); OT1's en dash at '{' and one
# block under a row of names (okapi-trec3). The third batch's: Elsevier's 2009 boxes and marks that open the
# next name's segment (omega-crash-recovery).
@pytest.mark.parametrize("name", [
    "jl-elementary-proof", "hidden-hand", "byzantine-commit", "gamification-education",
    *(pytest.param(name, marks=pytest.mark.slow) for name in (
        "predicate-dispatching", "shannon-communication", "organizing-programs", "strachey-fundamental",
        "jacow-a4", "thurston-proof-progress", "okapi-trec3", "omega-crash-recovery")),
])
def test_real_pdf_of_a_round_four_genre_comes_in_whole(name: str) -> None:
    _comes_in_whole(name)


def test_real_pdf_with_a_bitmap_font_page_leaves_its_fields_empty_with_the_reason() -> None:
    """functional-reactive-animation: dvips's Type 3 fonts without a Unicode map give control codes; no field
    is filled from them, and each says why (the title falls back to the file's name, saying so)."""
    from kb.papers.add import read_pdf

    record = read_pdf(CORPUS / "functional-reactive-animation.pdf")
    assert record.title == "functional-reactive-animation" and not record.authors
    assert (record.venue, record.year) == (None, None)
    assert all("no readable text" in record.unread[f] for f in ("title", "authors", "venue", "year"))


def test_real_pdf_note_has_affiliations_from_page_one_and_the_journal(tmp_path: Path) -> None:
    (tmp_path / "papers").mkdir()
    _cli(tmp_path, "add", str(LME4))
    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home"))
    note = kb.read("fitting-linear-mixed-effects-models-using-lme4")
    meta = note.meta.model_dump()
    assert [a["affiliation"] for a in meta["authors"]] == [
        "University of Wisconsin-Madison", "ETH Zurich", "McMaster University", "McMaster University"]
    assert (meta["publication"]["venue"], meta["publication"]["year"]) == ("Journal of Statistical Software", 2015)
    source = (tmp_path / "papers" / meta["source_file"]).read_text(encoding="utf-8")
    assert source.count("\f") == 50  # 51 pages
    assert not any("\ufb00" <= ch <= "\ufb06" for ch in source)
    assert "fixed- and random-effects" in source and "profiled REML criterion" in source


def test_real_pdf_dropped_ligatures_come_back() -> None:
    """strucchange's fonts have no Unicode map for fi/fl: other extractors print 'modied', 'uctuation'."""
    from kb.papers.add import read_pdf

    text = read_pdf(CORPUS / "strucchange-intro.pdf").text
    assert "modified version of Zeileis" in text and "fluctuation test" in text
    assert " uctuation" not in text and "modied" not in text


def test_search_finds_words_inside_a_papers_source_text_with_the_page(tmp_path: Path) -> None:
    (tmp_path / "papers").mkdir()
    _cli(tmp_path, "add", str(LME4))
    hits = json.loads(_cli(tmp_path, "search", "sleepstudy", "--json"))
    assert [h["id"] for h in hits] == ["fitting-linear-mixed-effects-models-using-lme4"]
    source = next((tmp_path / "papers" / "sources").glob("*.txt")).read_text(encoding="utf-8")
    pages_with_word = [i for i, page in enumerate(source.split("\f"), 1) if "sleepstudy" in page]
    assert hits[0]["page"] in pages_with_word and "[sleepstudy]" in hits[0]["snippet"]
    # 'REML' is in the abstract, which the new note's body holds too: the hit is the body's, without a page.
    shown = _cli(tmp_path, "search", "sleepstudy")
    assert "fitting-linear-mixed" in shown and "p. " in shown
    assert json.loads(_cli(tmp_path, "search", "sleepstudy-nowhere", "--json")) == []


def test_search_source_pages_leave_with_the_note(tmp_path: Path) -> None:
    (tmp_path / "papers").mkdir()
    _cli(tmp_path, "add", str(LME4))
    note = next((tmp_path / "papers").glob("*.md"))
    note.unlink()
    assert json.loads(_cli(tmp_path, "search", "sleepstudy", "--json")) == []
    with sqlite3.connect(tmp_path / "home" / "index.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM paper_fts_source").fetchone() == (0,)


# Round 5's tuning articles, in the genres of the held-out half's weak fields, each the real article a rule was
# made from (tests/test_pdf_layout.py holds each rule's constructed example): a title word in a font of its own
# before its colon (kelips); an APA journal header with 'Jl.' and an unheaded abstract set smaller, ending the
# page (gaming-the-system); an APA self-citation above the title, outranking 'Preprint submitted to', and a
# marked address without an institution word (emotions-ipm); a one-size Word manuscript: title centred over
# the names, a chapter 'To appear in EDITORS (Eds.), BOOK.', the abstract opening page 2 (common-ground); the
# first mark's institution (sok-memory); names opening with accented capitals in an author grid (macaroons).
# The second batch's: initial capitals from a font without boxes or sizes, TeX's accented dotless i
# (lca-revisited); the affiliation in the footnote the byline's mark points to (online-ad-auctions).
@pytest.mark.parametrize("name", [
    "kelips",
    *(pytest.param(name, marks=pytest.mark.slow) for name in (
        "gaming-the-system", "emotions-ipm", "common-ground", "sok-memory", "macaroons", "signal-collect",
        "pointwise-nba", "quantum-ml-review", "lca-revisited", "online-ad-auctions")),
])
def test_real_pdf_of_a_round_five_genre_comes_in_whole(name: str) -> None:
    _comes_in_whole(name)


# Round 6's classes in the authors, affiliations and abstract of the retired held-out half, each the real article
# a rule was made from (tests/test_pdf_layout.py holds each rule's constructed example; the article's other
# fields are other rules'): symbol marks without a Unicode map matched in order (lmtest-intro); a list of names
# wrapped inside a name (dynamo); an institution ended by its web address (rcpparmadillo-intro); the first of two
# stacked institutions (surveillance-monitoringcounts); unheaded abstracts set apart in measure (end-to-end) and
# in italic (stasis-storage).
@pytest.mark.parametrize("name", [
    "lmtest-intro",
    *(pytest.param(name, marks=pytest.mark.slow) for name in (
        "dynamo", "rcpparmadillo-intro", "surveillance-monitoringcounts", "end-to-end", "stasis-storage")),
])
def test_real_pdf_of_a_round_six_class_has_its_authors_affiliations_and_abstract(name: str) -> None:
    _comes_in_whole(name, ("authors", "affiliations", "abstract"))


# Round 6's publication classes (tests/test_pdf_publication.py holds each one's constructed example), on the real
# article each was found on: a Word template's permission block with its template date beside the meeting's year
# (dynamo); a DOI the reference list broke after its slash (vcd-strucplot); a journal's abbreviation beside its
# full name in a Springer header (dining-cryptographers); an author's spelling of the journal (e1071-svmdoc); a
# scan's misread journal line outvoted by the last page's (flp-impossibility); a cover page's punctuation of the
# title (simple-testing). Only these fields are checked: the articles' other fields are other rules'.
@pytest.mark.parametrize("name", [
    "dynamo", "vcd-strucplot", "dining-cryptographers",
    *(pytest.param(name, marks=pytest.mark.slow) for name in (
        "e1071-svmdoc", "flp-impossibility", "simple-testing")),
])
def test_real_pdf_title_and_publication_of_a_round_six_class(name: str) -> None:
    _comes_in_whole(name, ("title", "year", "venue", "doi", "arxiv_id"))


# Round 7's classes of authors, affiliations and abstracts (tests/test_pdf_layout.py holds each one's constructed
# example), on the new tuning articles they were found on: Nature's marks before an envelope icon and set a thin
# space after the name, a Portuguese 'e' between surnames and the numbered affiliations footnote at the foot of
# page 1 (af2-centrosome-commsbio); ACS's web buttons under the names and its 'AUTHOR INFORMATION' section
# (alphafold2-jcim); a drop capital's narrow lines, no affiliation, and the one institution over the
# corresponding-author note at the page's foot (ai-revolutions-embo); OUP's mixed marks, a surname wrapped to the
# next line and a unit opening an affiliation (unilanguage-bioinformatics); line numbers right of eLife's
# sidebar and an institution opening with 'The' on its next line (dissociation-biorxiv); PLoS 2013's abstract
# heading in the title's size (neural-correlations-plos); an anonymous submission (kover-anonymous-icml).
@pytest.mark.parametrize(("name", "fields"), [
    ("af2-centrosome-commsbio", ("authors", "affiliations", "abstract")),
    ("alphafold2-jcim", ("authors", "affiliations", "abstract")),
    *(pytest.param(name, fields, marks=pytest.mark.slow) for name, fields in (
        ("unilanguage-bioinformatics", ("authors", "affiliations", "abstract")),
        ("ai-revolutions-embo", ("authors", "affiliations", "abstract")),
        ("dissociation-biorxiv", ("authors", "affiliations", "abstract")),
        ("neural-correlations-plos", ("authors", "affiliations", "abstract")),
        ("kover-anonymous-icml", ("authors", "abstract")))),
])
def test_real_pdf_of_a_round_seven_class_has_its_authors_affiliations_and_abstract(
        name: str, fields: tuple[str, ...]) -> None:
    _comes_in_whole(name, fields)


# Round 9's classes of titles, authors and affiliations (tests/test_pdf_layout.py holds each one's constructed
# example), on the journal articles as published they were found on: a sidebar the text order gives before the
# title, under the abstract's heading (gustatory-inhibition-elife, student-performance-mdpi); an ORCID icon
# between a name and its mark, and a mark in the line's size (crispr-offtarget-bioinformatics); a numbered
# footnote whose '1' stands on a line of its own, closed by a sentence (smoking-epigenetics-bmc: whole); a grid
# cell's '& CISUC, University of Coimbra' (shap-student-ieee); an Elsevier masthead's journal name and a title's
# star (plant-enhancers-bba); a name with the name he goes by in parentheses, a short first line of the body
# under the address, and three columns of body that are no abstract (centromere-commentary-pnas); and the check's
# two, read whole by these rules (teacher-dashboard-lak) or after one more, footnotes labelling an e-mail and an
# address (genai-review-jla); the second check's two, after the rules their read gave: a banner named again in
# the footer, a margin's glyphs after the heading, PLOS's 'ID' badge and typed address numbers
# (mobile-surveys-plosone: whole), no-break spaces inside names (child-insurance-frontiers).
@pytest.mark.parametrize(("name", "fields"), [
    ("crispr-offtarget-bioinformatics", ("title", "authors", "affiliations", "abstract")),
    ("smoking-epigenetics-bmc", None),
    ("shap-student-ieee", ("title", "authors", "affiliations", "year", "doi", "abstract")),
    ("plant-enhancers-bba", ("title", "authors", "affiliations", "year", "doi", "abstract")),
    ("centromere-commentary-pnas", ("title", "authors", "affiliations", "doi", "abstract")),
    *(pytest.param(name, fields, marks=pytest.mark.slow) for name, fields in (
        ("gustatory-inhibition-elife", ("title", "authors", "affiliations", "year", "venue", "abstract")),
        ("student-performance-mdpi", ("title", "authors", "affiliations", "year", "doi", "abstract")),
        ("genai-review-jla", ("title", "authors", "affiliations", "venue", "doi", "abstract")),
        ("teacher-dashboard-lak", None),
        ("child-insurance-frontiers", ("title", "authors", "affiliations", "year", "doi", "abstract")),
        ("mobile-surveys-plosone", None))),
])
def test_real_pdf_of_a_round_nine_class_has_its_title_authors_and_affiliations(
        name: str, fields: tuple[str, ...] | None) -> None:
    _comes_in_whole(name, fields)


# Round 9's TeX-community articles, each the real article a rule was made from (tests/test_pdf_layout.py holds
# each rule's constructed page): a name in Greek letters, its look-alikes and spacing breathings resolved, over
# an address in an unmapped font (elhyphen-eutypon); one line naming each name's institution in their order
# (ofs-eurotex); an abstract's heading run in in small capitals (dcpic-eurotex) or set in a label column
# (turnstile-practex); a journal's name set up the side of a reprint box (mathcol-dtk). Their year, venue and
# DOI belong to the publication rules.
@pytest.mark.parametrize("name", ["elhyphen-eutypon", "ofs-eurotex", "dcpic-eurotex", "turnstile-practex",
                                  "mathcol-dtk"])
def test_real_pdf_of_a_round_nine_tex_community_class_has_its_title_authors_and_abstract(name: str) -> None:
    _comes_in_whole(name, ("title", "authors", "affiliations", "abstract"))


# Round 10's author classes from the retired articles (tests/test_pdf_author_layouts.py holds each rule's
# constructed pages): a row of names set apart by space, each closed by its raised mark (leep-icml; its
# affiliations are in an ICML footnote, another rule's) and the next row of such names in another weight
# (d-separation-neurips); Science's symbols after a name's comma and mark (fast-folding-science); a title's
# line capitalised as a title over the names, and a number mark whose digits run together (star-reasoner,
# protein-structure-evolution: their titles are another rule's); a name, its e-mail and its institution on one
# line (nitime-scipy); a title block drawn after the body (corfunc-fdr); a line of names in the title's size
# ending the title (quantum-affinity-arxiv, dialog-tex).
@pytest.mark.parametrize(("name", "fields"), [
    ("d-separation-neurips", ("title", "authors", "affiliations")),
    ("nitime-scipy", ("title", "authors", "affiliations")),
    ("corfunc-fdr", ("title", "authors", "affiliations")),
    ("quantum-affinity-arxiv", ("title", "authors", "affiliations")),
    *(pytest.param(name, fields, marks=pytest.mark.slow) for name, fields in (
        ("leep-icml", ("title", "authors")),
        ("fast-folding-science", ("title", "authors", "affiliations")),
        ("star-reasoner", ("authors", "affiliations")),
        ("protein-structure-evolution", ("authors", "affiliations")),
        ("dialog-tex", ("title", "authors", "affiliations")))),
])
def test_real_pdf_of_a_round_ten_author_class_has_its_authors_and_affiliations(
        name: str, fields: tuple[str, ...]) -> None:
    _comes_in_whole(name, fields)


# Round 7's title and publication classes (tests/test_pdf_publication.py holds each one's constructed example),
# on the real tuning article each was found on: OUP's banner level with a placeholder volume line
# (bits-bioinformatics); a footer's journal opening its line under an address (af2-centrosome-commsbio); an
# abbreviation whose full name is page 2's running header (alphafold2-jcim); a journal class's '© The Author
# 2019.' on a manuscript (unilanguage-bioinformatics); a hyphen after a one-letter word at a line's end
# (methionine-toolkit-biorxiv; its venue is bioRxiv, the server whose stamp it bears); the
# abstract's heading in the title's size (neural-correlations-plos, rules of tests/test_pdf_layout.py).
@pytest.mark.parametrize(("name", "fields"), [
    ("bits-bioinformatics", ("title", "year", "venue", "doi")),
    ("af2-centrosome-commsbio", ("title", "year", "venue", "doi")),
    ("alphafold2-jcim", ("title", "year", "venue", "doi")),
    ("unilanguage-bioinformatics", ("title", "year", "venue", "doi")),
    pytest.param("methionine-toolkit-biorxiv", ("title", "year", "venue", "doi"), marks=pytest.mark.slow),
    pytest.param("neural-correlations-plos", ("title", "year", "venue", "doi"), marks=pytest.mark.slow),
])
def test_real_pdf_title_and_publication_of_a_round_seven_class(name: str, fields: tuple[str, ...]) -> None:
    _comes_in_whole(name, fields)


# Round 9's classes of publication statements (tests/test_pdf_publication.py holds each one's constructed
# example), on the TeX-community and R-vignette articles and the journal articles they were found on: a version
# of this paper published elsewhere, stated on page 2 (tsp, seriation, clue: 'A previous version of this
# manuscript was published in ...'); a statement followed by the whole citation (spam-jss); a TeX journal's
# line above the title, 'NAME, YEAR, No. N' (turnstile-practex); a meeting named alone at page 1's foot
# (ofs-eurotex); 'Reproduced with permission from NAME, no. N, MONTH YEAR' (elhyphen-eutypon); a reprint box's
# 'NAME N/YEAR, S. PAGES' (mathcol-dtk); the R Journal's footer without its year (stringdist-rjournal); a
# meeting's year glued to its name (metaplot-practicaltex); eLife's component DOI (gustatory-inhibition-elife);
# 'Published by' a school, and a journal header 'NAME VOL (ISSUE), PAGES' with its date after the DOI
# (hierarchical-ridge-jds); a reprint's printed DOI over its original's (lwc-zpravodaj); a citation's year in
# a body line the footer band took in (genai-review-jla); PNAS's footer between bars (centromere-commentary-pnas);
# a name a sidebar broke and the footer prints whole (student-performance-mdpi); an article in press's header
# with 'xxx' for its volume and pages (plant-enhancers-bba).
@pytest.mark.parametrize("name", [
    "turnstile-practex", "ofs-eurotex", "elhyphen-eutypon", "mathcol-dtk", "stringdist-rjournal",
    "metaplot-practicaltex", "hierarchical-ridge-jds", "centromere-commentary-pnas", "plant-enhancers-bba",
    *(pytest.param(name, marks=pytest.mark.slow) for name in (
        "tsp", "seriation", "clue", "spam-jss", "gustatory-inhibition-elife", "lwc-zpravodaj",
        "genai-review-jla", "student-performance-mdpi")),
])
def test_real_pdf_publication_statement_of_a_round_nine_class(name: str) -> None:
    _comes_in_whole(name, ("year", "venue", "doi"))


# Round 10's classes of publication statements, found on the retired articles (tests/test_pdf_publication.py
# holds each one's constructed example and its variants in other templates' wordings): an ordinal's superscript
# set apart in PMLR's footnote (leep-icml); a volume's word after the name ('TUGboat Vol 13(4)',
# textmerg-tugboat); a journal line without a comma after the name (corfunc-fdr); 'a version of my paper
# “TITLE” in VENUE' (dialog-tex); a proceedings' running footer with a glued two-digit year (hyperref-eurotex);
# page 1 citing the article as a chapter of an edited book (afex-mixed-models); page 1 citing the reference entry
# of its own title (bradleyterry2); a journal's 'The' from its own citation (brms-multilevel); Science's footer
# between wide gaps and its DOI under the dates on the last page (fast-folding-science, rosettafold-science); the
# metadata DOI the page prints, of two XMP packets (protein-design-dl-review); IEEE Xplore's stamp
# (shap-student-ieee). Short ones by default, the longer ones slow.
@pytest.mark.parametrize(("name", "fields"), [
    ("corfunc-fdr", ("year", "venue", "doi")),
    ("fast-folding-science", ("year", "venue", "doi")),
    ("rosettafold-science", ("year", "venue", "doi")),
    ("shap-student-ieee", ("year", "venue", "doi")),
    ("protein-design-dl-review", ("year", "venue", "doi")),
    *(pytest.param(name, ("year", "venue", "doi"), marks=pytest.mark.slow) for name in (
        "leep-icml", "textmerg-tugboat", "dialog-tex", "hyperref-eurotex", "afex-mixed-models", "bradleyterry2",
        "brms-multilevel")),
])
def test_real_pdf_publication_statement_of_a_round_ten_class(name: str, fields: tuple[str, ...]) -> None:
    _comes_in_whole(name, fields)


# Round 10's classes of affiliations, found on the retired articles (tests/test_pdf_layout.py holds each rule's
# constructed page and its variants): a name's marks split by a word processor's space after a comma, beside the
# name or raised apart ('Yang¹,' '#'; '& Burkhard Rost' '1, 3': trrosetta-biorxiv, plm-embeddings-structure);
# notes on the authors in other words ('These authors contribute equally', causcell-biorxiv; 'Equal senior
# authorship', retro-retrieval); 'All authors from DeepMind' (retro-retrieval); numbered blocks opened at a
# line's start or glued to the institution (rosettafold-science, protein-design-dl-review, causcell-biorxiv);
# PLoS's typed numbers over the paragraph's wrapped lines (evfold-plos); units closed by semicolons sharing the
# institution under them (squire-emnlp); BMC's side column under the correspondence e-mails, and a supplement's
# meeting under the names (bioinformatics-topics-bmc). Institutions only in page 1's footnote, opened by the
# names' marks, with no institution's word (ICML's '¹Amazon Web Services ²Facebook AI', leep-icml); a TUGboat
# signature at the end, its diamond a control code, the street on the company's line and the e-mail spelt out
# ('bitplant.de GmbH, Fabrikstr. 15', 'olpa (at) uucode dot com': cals-tugboat).
@pytest.mark.parametrize("name", [
    "trrosetta-biorxiv", "plm-embeddings-structure", "squire-emnlp", "evfold-plos", "bioinformatics-topics-bmc",
    "leep-icml", "cals-tugboat",
    *(pytest.param(name, marks=pytest.mark.slow) for name in (
        "causcell-biorxiv", "retro-retrieval", "rosettafold-science", "protein-design-dl-review")),
])
def test_real_pdf_of_a_round_ten_class_has_its_authors_and_affiliations(name: str) -> None:
    _comes_in_whole(name, ("authors", "affiliations"))


def test_real_pdf_author_details_at_the_end_give_each_number_its_block() -> None:
    """smoking-epigenetics-bmc's 'Author details' at the end, as the real article prints them: the blocks page
    1 leaves out (BMC prints only the corresponding author's there) are read by number, for names whose page 1
    block gave none; the names' real marks are '1,2', and a name marked '2' alone gets the second block."""
    from kb.papers.pdf_affiliations import fill_from_the_end
    from kb.papers.pdf_layout import read_article

    article = read_article(CORPUS / "smoking-epigenetics-bmc.pdf")
    names = [name for name, _ in article.authors]
    article.authors = [(name, None) for name in names]
    fill_from_the_end(article, {name: ["2"] if name == names[-1] else ["1", "2", "*"] for name in names})
    assert [a for _, a in article.authors] == [
        *["MRC Integrative Epidemiology Unit, University of Bristol, Bristol, UK"] * (len(names) - 1),
        "Population Health Sciences, Bristol Medical School, University of Bristol, Bristol, UK"]


# Round 10's title and abstract classes, on the retired articles each was made from (tests/test_pdf_title_abstract.py
# holds each rule's constructed page and its variants): a journal's logo over its ISSN and web address (MDPI's
# 'genes', protein-structure-evolution; Elsevier's 'ScienceDirect', protein-design-dl-review); a byline in the
# title's size, apart by its gap (dialog-tex) or its style (quantum-affinity-arxiv); a subtitle under a closed title
# over the byline (ai-revolutions-embo, star-reasoner); a bold title in the body's size over an upright name in
# its column, its cm-super font's name telling its weight (babelbib-tugboat, cals-tugboat, whose abstract came
# with it); an unheaded summary closed by the drop capital that opens the body (fast-folding-science,
# rosettafold-science).
@pytest.mark.parametrize("name", [
    "ai-revolutions-embo", "babelbib-tugboat", "cals-tugboat", "protein-design-dl-review", "quantum-affinity-arxiv",
    "fast-folding-science", "rosettafold-science",
    *(pytest.param(name, marks=pytest.mark.slow) for name in (
        "dialog-tex", "protein-structure-evolution", "star-reasoner")),
])
def test_real_pdf_title_and_abstract_of_a_round_ten_class(name: str) -> None:
    _comes_in_whole(name, ("title", "abstract"))


# Round 10's second wave, on the articles each rule was made from (tests/test_pdf_author_layouts.py holds each
# rule's constructed page and its variants): the PLOS template's numbered address lines in the text's size
# (lotus-driver-genes-preprint, 30 pages); the corresponding author's numbered blocks under BMC's
# correspondence note, the others' from 'Author details' at the end (genlib-bmcbioinf).
@pytest.mark.parametrize("name", [
    "genlib-bmcbioinf",
    pytest.param("lotus-driver-genes-preprint", marks=pytest.mark.slow),
])
def test_real_pdf_of_a_round_ten_second_wave_class_has_its_authors_and_affiliations(name: str) -> None:
    _comes_in_whole(name, ("authors", "affiliations"))


# Round 10's second wave, publication classes (tests/test_pdf_publication.py holds each rule's constructed
# lines): a series whose name opens with 'Proceedings of' (PMLR's header, lerc-l4dc); a footer whose bars the
# font left unmapped (PNAS before 2011, romanov-genomic-pnas).
@pytest.mark.parametrize("name", ["lerc-l4dc", "romanov-genomic-pnas"])
def test_real_pdf_publication_of_a_round_ten_second_wave_class(name: str) -> None:
    _comes_in_whole(name, ("year", "venue", "doi"))


# Round 10's second wave and its second check of three (the corpus README's "Round 10 second wave"): each
# article whole, as kb reads it after the wave's rules; the articles over ten pages slow.
# tensor-decomp-iclr-review's title is left (the extractor moves its second line's small-capital words onto
# the third), its other fields are checked.
_SECOND_WAVE_FIELDS = ("authors", "affiliations", "year", "venue", "doi", "arxiv_id", "abstract", "ligatures")


@pytest.mark.parametrize(("name", "fields"), [
    ("genlib-bmcbioinf", None), ("romanov-genomic-pnas", None), ("natural-policy-gradient-nips", None),
    ("bilstm-crf-arxiv", None), ("hostile-bioinformatics-preprint", None), ("sedef-eccb-submission", None),
    *(pytest.param(name, fields, marks=pytest.mark.slow) for name, fields in (
        ("lotus-driver-genes-preprint", None), ("vic-arxiv", None), ("lerc-l4dc", None), ("swin-arxiv", None),
        ("force-directed-spe", None), ("tensor-decomp-iclr-review", _SECOND_WAVE_FIELDS),
        ("aldy-genotyping-preprint", None))),
])
def test_real_pdf_of_the_round_ten_second_wave_comes_in_whole(name: str, fields: tuple[str, ...] | None) -> None:
    _comes_in_whole(name, fields)


# Round 10's second wave: ten articles from publishers the corpus had few of, read once before any rule was made
# from them (benchmarks/data/pdfs/README.md, "Round 10 second wave"). The classes their misses showed
# (tests/test_pdf_publication.py and tests/test_pdf_title_abstract.py hold each rule's constructed page and its
# variants): a journal's acronym beside the name it stands for (APS's 'PRL' and 'PHYSICAL REVIEW LETTERS',
# weak-values-prl; 'PVLDB' and its footer, graph-anns-pvldb); an arXiv link to the paper's full version
# (graph-anns-pvldb); a journal's name holding a colon, a download stamp's year in a cover page's margin and
# the year of IOP's 'To cite this article' (ising-stock-jpcs); a printer's imprint ('Printed in the United
# Kingdom') and a rubric in the title's size (markov-onegin-cup); a title in capitals as wide as the text block
# over a 'By' byline and institutions listed in the byline's order (nonreversible-sampler-aoap); Springer's
# abbreviation by the name the document's Subject gives it and its names joined by a middle dot over two rows
# (spacetime-acoustics-qsmf). Tests of the authors and affiliations classes are in tests/test_pdf_author_layouts.py.
# Three came in whole at the first read (noisy-examples-mlj, novelty-detection-jmlr, stylized-facts-tandf).
@pytest.mark.parametrize(("name", "fields"), [
    ("weak-values-prl", ("venue",)),
    ("ising-stock-jpcs", ("year", "venue")),
    ("markov-onegin-cup", ("title", "year", "venue")),
    *(pytest.param(name, fields, marks=pytest.mark.slow) for name, fields in (
        ("graph-anns-pvldb", ("venue", "arxiv_id")),
        ("nonreversible-sampler-aoap", ("title", "authors", "affiliations", "abstract")),
        ("spacetime-acoustics-qsmf", ("authors", "venue")),
        ("noisy-examples-mlj", None), ("novelty-detection-jmlr", None), ("stylized-facts-tandf", None))),
])
def test_real_pdf_of_a_round_ten_second_wave_class(name: str, fields: tuple[str, ...] | None) -> None:
    _comes_in_whole(name, fields)


# Round 11's third wave: ten conference papers as their proceedings print them, read once before any rule was made
# from them (benchmarks/data/pdfs/README.md, "Round 11 third wave"). The classes their misses showed
# (tests/test_pdf_publication.py holds each rule's constructed page and its variants): ACM's reference format naming
# the meeting by its acronym before a colon (broker-queue-ics, duchenne-smiles-chi); a permission block's joint
# acronym and kind of paper, and its conference line without dates (norec-fse-arxiv, live-photos-chiea); an acronym
# and 'Conference' named by the acronym (serial-histograms-vldb's old VLDB footer, hique-icde's IEEE footer); 'Proc.'
# for 'Proceedings of' (rum-conjecture-edbt); a copyright year before a comma (rnn-ensemble-aaai); a line of e-mail
# addresses between the names and their institution (broker-queue-ics, tests/test_pdf_author_layouts.py); a title
# line whose OCR'd words stand a few points apart, and a given name the OCR layer set apart from the rest of the name
# with its footnote's star read as a quote (serial-histograms-vldb, tests/test_pdf_title_abstract.py and
# tests/test_pdf_author_layouts.py); a mark the extractor gives as a control code after a name and before its
# institution (rum-conjecture-edbt). Two came in whole at the first read (lottery-heads-emnlp,
# tubular-segmentation-miccai); after the rules all ten are, the articles over ten pages slow.


@pytest.mark.parametrize("name", [
    "duchenne-smiles-chi", "live-photos-chiea", "rnn-ensemble-aaai", "tubular-segmentation-miccai",
    "rum-conjecture-edbt",
    *(pytest.param(name, marks=pytest.mark.slow) for name in (
        "lottery-heads-emnlp", "hique-icde", "norec-fse-arxiv", "broker-queue-ics", "serial-histograms-vldb")),
])
def test_real_pdf_of_the_round_eleven_third_wave_comes_in_whole(name: str) -> None:
    _comes_in_whole(name)


# Round 11's third wave: seven life-science articles with many institutions each, read once before any rule was
# made from them (benchmarks/data/pdfs/README.md, "Round 11 third wave"). The classes their misses showed
# (tests/test_pdf_many_affiliations.py holds each rule's constructed page and its variants): a given name ending
# a line over its initials and surname (telomere-alt-nar); a byline whose names and raised marks are each a
# segment, and an institution's name running on into a number (tetracycline-ecoli-ssb: 'iGEM 2016, Beijing');
# numbered blocks run on after the address before them (fossil-leaves-phytokeys); Frontiers's side column and a
# symbol typed between raised marks (sheep-lameness-fvets: its authors and affiliations; its abstract and
# ligatures are other fields' classes). contagion-patterns-pcbi came in whole at the first read.
@pytest.mark.parametrize(("name", "fields"), [
    ("neural-toxicity-pnas", None),
    ("tetracycline-ecoli-ssb", ("authors", "affiliations")),
    *(pytest.param(name, fields, marks=pytest.mark.slow) for name, fields in (
        ("telomere-alt-nar", None), ("fossil-leaves-phytokeys", ("authors", "affiliations", "abstract")),
        ("sheep-lameness-fvets", ("title", "authors", "affiliations", "venue", "doi")),
        ("contagion-patterns-pcbi", None))),
])
def test_real_pdf_of_a_round_eleven_life_science_article(name: str, fields: tuple[str, ...] | None) -> None:
    _comes_in_whole(name, fields)


# Round 11's third wave: ten articles from statistics, mathematics, physics, economics and engineering, read once
# before any rule was made from them (benchmarks/data/pdfs/README.md, "Round 11 third wave"). The title and
# abstract classes their misses showed (tests/test_pdf_title_abstract.py holds each rule's constructed page and
# its variants): a name's raised letter marks on a line of their own under the title and Elsevier's letter-spaced
# box heads (grid-spacing-spasta); a journal's header stacked over its volume line, larger than the title, and a
# run-in heading in small capitals the extractor read as a mark (spectral-norm-jipam); a digital archive's cover
# sheet before a page with an unheaded abstract, and a name the cover spells without the mark a scan glued to it
# (kyle-insider-econometrica). Two publication classes (tests/test_pdf_publication.py): a cover sheet's own
# 'REFERENCES' line heads no reference list (kyle-insider-econometrica), and a journal's name broken over the
# header's lines after a joining word (spectral-norm-jipam), SAGE's '© The Author(s) 2020' over its permissions
# line with its © read as '!' (class-imbalance-smmr); and two of affiliations (tests/test_pdf_author_layouts.py):
# the authors' addresses over Econometrica's closing 'Manuscript received' line (kyle-insider-econometrica) and
# SAGE's footnote numbers on lines of their own (class-imbalance-smmr), a numbered note naming a position only
# (bwb-stability-cfdsc), each now whole, and ifacconf's one mark closing a row of names and IFAC's 'Preprints of
# the Nth ...' header over its dates (gps-ins-outlier-ifac).
# Four came in whole at the first read.
@pytest.mark.parametrize(("name", "fields"), [
    ("grid-spacing-spasta", None),
    ("spectral-norm-jipam", ("title", "abstract", "year", "venue", "doi")),
    ("class-imbalance-smmr", None),
    ("efficient-absorption-revtex", None),
    ("bwb-stability-cfdsc", None),
    ("gps-ins-outlier-ifac", ("title", "authors", "affiliations", "year", "doi", "abstract")),
    *(pytest.param(name, fields, marks=pytest.mark.slow) for name, fields in (
        ("kyle-insider-econometrica", None),
        ("actuar-risk", None), ("desolve-vignette", None), ("ordinal-clm-article", None))),
])
def test_real_pdf_of_a_round_eleven_third_wave_class(name: str, fields: tuple[str, ...] | None) -> None:
    _comes_in_whole(name, fields)


# Round 11's fourth wave ("pubs2"): ten journal articles as their publishers print them, read once before any
# rule was made from them (benchmarks/data/pdfs/README.md, "Round 11 fourth wave"). The venue and year classes
# their misses showed (tests/test_pdf_publication.py holds each rule's constructed page and its variants): a
# margin's journal name opening before its periodical's word (random-graph-epidemics-sjs, midi-genre-eurasip),
# ResearchGate's cover line 'Article in JOURNAL · MONTH YEAR' (clinic-simulation-jors), an older journal's header
# with the month after its pages (spatial-glmm-biometrics), and a name read from inside a scan's misread
# word, and a scan's misread word spelled as the document spells it elsewhere (suffix-tree-jacm); and two of
# affiliations (tests/test_pdf_author_layouts.py): an IEEE footnote's 'was with' (gqc-ldpc-ieee-tit) and 'The
# authors are with' (restart-belief-ieee-lcomm); and ResearchGate's cover page read as a cover sheet
# (clinic-simulation-jors, tests/test_pdf_title_abstract.py). Each article's fields kb reads right after the
# rules; the articles over ten pages slow.
@pytest.mark.parametrize(("name", "fields"), [
    ("midi-genre-eurasip", None),
    ("spatial-glmm-biometrics", None),
    ("restart-belief-ieee-lcomm", None),
    ("aflibercept-4yr-scirep", ("title", "year", "venue", "doi")),
    ("ranibizumab-registry-ophtha", ("year", "venue", "doi", "abstract")),
    *(pytest.param(name, fields, marks=pytest.mark.slow) for name, fields in (
        ("random-graph-epidemics-sjs", None),
        ("clinic-simulation-jors", None),
        ("gqc-ldpc-ieee-tit", None),
        ("process-discovery-infosys", ("title", "authors", "affiliations", "year", "venue", "doi")),
        ("suffix-tree-jacm", ("title", "year", "venue", "doi")))),
])
def test_real_pdf_of_a_round_eleven_fourth_wave_journal(name: str, fields: tuple[str, ...] | None) -> None:
    _comes_in_whole(name, fields)


# Round 11's fourth wave: nine preprints, workshop papers, technical reports and manuscripts, read once before any
# rule was made from them (benchmarks/data/pdfs/README.md, "Round 11 fourth wave"; first read: affiliations 7,
# year 6, venue 5, DOI 8, arXiv id 8, abstract 8 of 9). The classes their misses showed: a draft's circulation
# notice in the title block is no affiliation (labour-flows-working-paper, tests/test_pdf_title_abstract.py); a
# word broken at its own hyphen keeps it where the document writes it so (phaserings-icad, the same file); and in
# tests/test_pdf_publication.py a class file's sample publication and DOI (padic-lean-lipics-submission), imsart's
# submission header and its arXiv id of zeros (dyncorr-imsart-submission), 'This paper was presented at' a
# workshop (ensembles-hcml-chi-workshop) and a meeting's acronym joined to its year by an en dash
# (phaserings-icad). Left: the SIGCHI extended-abstract format's address columns beside the abstract
# (ensembles-hcml-chi-workshop) and a footnote institute marked by a separate raised '∗' (labour-flows-working-
# paper), both empty; dyncorr-imsart-submission's own text layer breaks its ligatures ('a↵ect').
@pytest.mark.parametrize(("name", "fields"), [
    ("phaserings-icad", None),
    ("ensembles-hcml-chi-workshop", ("title", "authors", "year", "venue", "doi", "arxiv_id", "abstract")),
    ("approx-pf-technote", None),
    *(pytest.param(name, fields, marks=pytest.mark.slow) for name, fields in (
        ("padic-lean-lipics-submission", None),
        ("dyncorr-imsart-submission", ("title", "authors", "affiliations", "year", "venue", "doi", "arxiv_id",
                                       "abstract")),
        ("labour-flows-working-paper", ("title", "authors", "year", "venue", "doi", "arxiv_id", "abstract")),
        ("slice-tuner-techreport", None), ("stencil-hlpp-snjnl", None), ("verbal-autopsy-snjnl", None))),
])
def test_real_pdf_of_a_round_eleven_fourth_wave_manuscript(name: str, fields: tuple[str, ...] | None) -> None:
    _comes_in_whole(name, fields)


# Round 11's fourth wave: nine life-science articles from text-mining tools' test corpora, read once before any
# rule was made from them (benchmarks/data/pdfs/README.md, "Round 11 fourth wave"). The classes their misses
# showed (tests/test_pdf_author_layouts.py holds each rule's constructed page and its variants): a mark typed
# after a surname in capitals (ace-inhibitors-clinsci); addresses numbered '1.' run on in a paragraph, a number
# closing a line (fanged-frog-plosone); an institution's name broken at a paragraph's line end (teak-genome-
# dnares); a symbol typed after the superscript closing a name (wheat-volatiles-metabolites); Wiley's vertical
# bars between names (wildlife-forensics-animgen, whose addresses beside the abstract are left: the author block
# ends at the abstract's heading); a masthead the footer cites by volume (hiv-pheophytin-molecules,
# tests/test_pdf_layout.py). Checked here: each article's fields as kb reads them after the wave's rules
# (vespa-peerjcs's venue, printed as 'PeerJ Comput. Sci.', silica-coagulation-bri's venue and unheaded abstract,
# and crayfish-edge-biorxiv's line-numbered author block are left); the articles over ten pages slow.
_ALL_BUT = {
    "venue": ("title", "authors", "affiliations", "year", "doi", "arxiv_id", "abstract", "ligatures"),
    "affiliations": ("title", "authors", "year", "venue", "doi", "arxiv_id", "abstract", "ligatures"),
}


@pytest.mark.parametrize(("name", "fields"), [
    ("wildlife-forensics-animgen", _ALL_BUT["affiliations"]),
    ("silica-coagulation-bri", ("title", "authors", "affiliations", "year", "doi", "arxiv_id", "ligatures")),
    *(pytest.param(name, fields, marks=pytest.mark.slow) for name, fields in (
        ("ace-inhibitors-clinsci", None), ("fanged-frog-plosone", None), ("teak-genome-dnares", None),
        ("wheat-volatiles-metabolites", None), ("vespa-peerjcs", _ALL_BUT["venue"]),
        ("hiv-pheophytin-molecules", None),
        ("crayfish-edge-biorxiv", ("title", "year", "venue", "doi", "arxiv_id", "ligatures")))),
])
def test_real_pdf_of_the_round_eleven_fourth_wave(name: str, fields: tuple[str, ...] | None) -> None:
    _comes_in_whole(name, fields)
