"""The lexicon of meetings (kb/papers/conferences.py, built from two MIT-licensed lists of conferences by
benchmarks/build_conferences.py) and the one place the publication rules use it (pdf_publication's
``_from_meetings``): a meeting a page names as its own where no statement and no journal named a venue. Each
constructed page below names its meeting in a shape no row of the grammar reads, so each test fails without
the lexicon's rule; the refusals are mentions that are no statement about the paper."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kb.papers import conferences
from kb.papers.add import read_pdf
from kb.papers.pdf_page import PdfArticle
from kb.papers.pdf_publication import read_publication

ROOT = Path(__file__).resolve().parents[1]
TITLE = "Attention Maps of Protein Language Models Encode Contacts"
BODY = f"{TITLE}\nAda Lovelace\nAnalytical Engines Ltd.\nAbstract\nWe show that attention maps encode contacts.\n"


def _read(page: str, margins: list[str] | None = None) -> tuple[str | None, int | None]:
    article = PdfArticle(pages=[page], title=TITLE)
    read_publication(article, margins)
    return article.venue, article.year


# -- the lookup -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "printed", "acronym", "year"), [
    ("Published as a conference paper at ICLR 2021", "ICLR", "ICLR", 2021),
    ("NeurIPS 2021 Workshop on Machine Learning for Structural Biology", "NeurIPS", "NeurIPS", 2021),
    ("ACL 2020", "ACL", "ACL", 2020),
    ("KDD ’19, August 4–8, 2019, Anchorage, AK, USA", "KDD", "KDD", 2019),
    ("KDD'19", "KDD", "KDD", 2019),
    ("The Thirty-Fifth Conference (AAAI-21)", "AAAI", "AAAI", 2021),
    ("ICLR2021 workshop", "ICLR", "ICLR", 2021),
    ("Accepted to NAACL-HLT 2019", "NAACL-HLT", "NAACL", 2019),  # a joint meeting: its first part's
    ("EMNLP-IJCNLP 2019", "EMNLP-IJCNLP", "EMNLP", 2019),
    ("ESEC/FSE ’20, November 8–13, 2020", "ESEC/FSE", "FSE", 2020),  # the part the lexicon knows
    ("ISMB/ECCB 2021", "ISMB/ECCB", "ISMB", 2021),
    ("In Proceedings of USENIX Security '19", "USENIX Security", "USENIX Security", 2019),
    ("ECOOP '98", "ECOOP", "ECOOP", 1998),
    ("CHI EA ’25, Yokohama, Japan", "CHI EA", "CHI", 2025),  # a track of the meeting
    ("ICDE Conference 2010", "ICDE", "ICDE", 2010),  # a meeting's word between the acronym and its year
])
def test_an_acronym_with_its_year_names_its_meeting(line: str, printed: str, acronym: str, year: int) -> None:
    found = conferences.mentions(line)[0]
    assert (found.printed, found.acronym, found.year, found.by_acronym) == (printed, acronym, year, True)
    assert line[found.start:found.end] == printed


@pytest.mark.parametrize(("span", "printed", "acronym"), [
    ("In Proceedings of the 37th International Conference on Machine Learning, Vienna, Austria, PMLR 119, 2020.",
     "International Conference on Machine Learning", "ICML"),
    ("Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing, pages 1–10",
     "Conference on Empirical Methods in Natural Language Processing", "EMNLP"),
    ("The Thirty-Fifth AAAI Conference on Artificial Intelligence (AAAI-21)",
     "AAAI Conference on Artificial Intelligence", "AAAI"),
    ("Companion of the 2019 International Conference on Management of Data (SIGMOD ’19)",
     "International Conference on Management of Data", "SIGMOD"),
    ("11th USENIX Symposium on Operating Systems Design and Implementation, Seattle",
     "USENIX Symposium on Operating Systems Design and Implementation", "OSDI"),
    # with or without the bodies the lexicon's name opens with ('IEEE/CVF')
    ("2019 Conference on Computer Vision and Pattern Recognition", "Conference on Computer Vision and Pattern "
     "Recognition", "CVPR"),
    ("In: 2019 IEEE/CVF Conference on Computer Vision and Pattern Recognition",
     "IEEE/CVF Conference on Computer Vision and Pattern Recognition", "CVPR"),
    ("KDD ’19, August 4–8, 2019", "KDD", "KDD"),
    ("Proceedings of the 19th VLDB Conference Dublin, Ireland, 1993", "VLDB", "VLDB"),
])
def test_a_span_names_its_meeting_without_proceedings_ordinal_year_or_place(span: str, printed: str,
                                                                              acronym: str) -> None:
    found = conferences.mentions(span)
    assert found and (found[0].printed, found[0].acronym) == (printed, acronym)


@pytest.mark.parametrize("line", [
    "ACL injury in professional athletes",  # a common word, without a year
    "CHI",
    "ICML",
    "the ICML papers",
    "ICML 21 times",  # two digits after a space are no year
    "Department of Computer Science, University of Sydney",
    "Security Symposium",  # too few words to name one meeting
    "Performance 2019",  # one capital: a word, never an acronym
    "The VLDB Journal",  # an acronym before another word than a meeting's
    "COVID-19 2020",  # a word joined to digits is no joint meeting
    "SARS-CoV-2 2021",
])
def test_a_word_or_an_affiliation_names_no_meeting(line: str) -> None:
    assert conferences.mentions(line) == []


def test_the_lexicon_file_names_its_sources_and_licence_and_is_read_on_first_use() -> None:
    text = conferences.LEXICON.read_text(encoding="utf-8")
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("ccfddl/ccf-deadlines at commit" in line for line in header)
    assert any("huggingface/ai-deadlines at commit" in line for line in header)
    assert any("MIT" in line for line in header)
    rows = [line for line in text.splitlines() if not line.startswith("#")]
    assert rows == sorted(rows) and all(line.count("\t") == 1 for line in rows) and len(rows) > 300
    # importing the publication rules reads nothing; the first lookup reads the file once
    code = ("import json; from kb.papers import conferences, pdf_publication; "
            "before = conferences.lexicon.cache_info().currsize; conferences.mentions('ICLR 2021'); "
            "conferences.mentions('ACL 2020'); info = conferences.lexicon.cache_info(); "
            "print(json.dumps([before, info.currsize, info.misses]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [0, 1, 1]


# -- the pages: where a meeting named is this paper's ------------------------------------------------------

@pytest.mark.parametrize(("page", "margins", "venue", "year"), [
    # a running header naming the meeting and its year among other words
    (BODY, ["Workshop track - ICLR 2018"], "ICLR", 2018),
    (BODY, ["Machine Learning for Structural Biology Workshop, NeurIPS 2021"], "NeurIPS", 2021),
    # a line above the title
    (f"ICML 2020 Workshop on Computational Biology\n{BODY}", None, "ICML", 2020),
    # an ACM permission block whose meeting line gives its place before its dates
    (BODY + "Permission to make digital or hard copies of all or part of this work for personal use.\n"
            "EuroSys ’21, Online, United Kingdom, April 26–28, 2021\n"
            "© 2021 Association for Computing Machinery.\nACM ISBN 978-1-4503-8334-9/21/04. . . $15.00\n",
     None, "EuroSys", 2021),
    (BODY + "Permission to make digital or hard copies.\nSAC ’20, 30 March–3 April 2020, Brno, Czech Republic\n",
     None, "SAC", 2020),
    # an IEEE proceedings' footer on page 1's text, not in a margin
    (BODY + "2019 IEEE International Conference on Bioinformatics and Biomedicine (BIBM)\n"
            "978-1-7281-1867-3/19/$31.00 ©2019 IEEE\n",
     None, "IEEE International Conference on Bioinformatics and Biomedicine", 2019),
    # a statement the grammar's verbs do not hold ('Accepted to'), or an abbreviated proceedings
    (BODY + "Accepted to NAACL-HLT 2019.\n", None, "NAACL-HLT", 2019),
    (BODY + "Published in Proc. 19th International Conference on Extending Database Technology (EDBT), March\n"
            "15-18, 2016 - Bordeaux, France, on OpenProceedings.org.\n",
     None, "International Conference on Extending Database Technology", 2016),
    # a permission block's track ('CHI EA') with its place and no date
    (BODY + "Permission to make digital or hard copies.\nCHI EA ’25, Yokohama, Japan\n", None, "CHI EA", 2025),
    # a statement's span run on past the meeting's acronym ('VLDB Conference'): the acronym alone
    (BODY + "Permission to copy without fee all or part of this material is granted.\n"
            "Proceedings of the 19th VLDB Conference\nDublin, Ireland, 1993\n", None, "VLDB", 1993),
])
def test_a_meeting_the_page_names_as_its_own_is_the_venue(page: str, margins: list[str] | None, venue: str,
                                                           year: int) -> None:
    assert _read(page, margins) == (venue, year)


@pytest.mark.parametrize(("page", "margins"), [
    (BODY + "We use the data of the ACL 2020 shared task.\n", None),  # prose
    (BODY + "ProtTrans was published in NeurIPS 2021.\n", None),  # another work's publication
    (BODY + "Our method beats (Smith et al., accepted to ICML 2021).\n", None),  # another work's citation
    (f"Laboratory of ICML 2019 Studies\n{TITLE}\nAda Lovelace\n", None),  # an affiliation
    (BODY, ["Under review as a conference paper at ICLR 2023"]),  # not published
    (BODY, ["CHI"]),  # a common word without its year
    (BODY + "Department of Computer Science, ICML 2019, Sydney\n", None),
])
def test_a_meeting_in_prose_an_affiliation_or_a_review_is_no_venue(page: str, margins: list[str] | None) -> None:
    assert _read(page, margins) == (None, None)


# -- the real articles the shapes were found on (round 11's conference batch, tuning half) --------------------

@pytest.mark.parametrize(("name", "venue", "year"), [
    ("hique-icde", "ICDE", 2010),  # 'ICDE Conference 2010' at the foot (and in IEEE's document Subject)
    ("live-photos-chiea", "CHI EA", 2025),  # 'CHI EA ’25, Yokohama, Japan' in the permission block
    ("rum-conjecture-edbt", "International Conference on Extending Database Technology", 2016),  # 'Proc. 19th'
    ("serial-histograms-vldb", "VLDB", 1993),  # 'Proceedings of the 19th VLDB Conference Dublin, ...'
    ("broker-queue-ics", "ICS", 2018),  # the permission block read whole: 'ICS ’18: 2018 International ...'
])
def test_a_real_conference_papers_meeting(name: str, venue: str, year: int) -> None:
    """Each PDF read as ``kb add`` reads it (its child process, the document information's Subject too)."""
    record = read_pdf(ROOT / "benchmarks" / "data" / "pdfs" / f"{name}.pdf")
    truth = json.loads((ROOT / "benchmarks" / "data" / "pdfs" / f"{name}.truth.json").read_text(encoding="utf-8"))
    assert truth["split"] == "tuning" and (truth["venue"], truth["year"]) == (venue, year)
    assert (record.venue, record.year) == (venue, year)
