"""The claim drafter on real articles (benchmarks/data/pdfs/, result claims marked by hand): its precision and
recall stay at least as measured, less a small margin; it drafts no headings, reference entries or captions
and every quote it drafts passes its own review; and the rules behind that (running heads, reference lists,
formula debris, findings stated in words) hold on small paged texts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from kb.agents.drafter import draft
from kb.agents.fallback import units
from kb.notes.grounding import PAGE_BREAK, check_quote
from schemas.claim import ClaimKind
from tests.helpers.benchmarks import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "data" / "pdfs"
# Measured by benchmarks/bench_drafter.py when this test was written (before the drafter learned PDFs: P 0.06,
# R 0.17, 111 drafts of code or printed output, 7 quotes its own review rejected), then P 0.29, R 0.41; since the
# worked-result rules of issue 39 (other works' results, definitions, set-up and sentence tails ruled out) P 0.43,
# R 0.38. A change may not lower them by more than the margin.
PRECISION, RECALL, MARGIN = 0.43, 0.38, 0.03
JUNK_CEILING = {"heading": 6, "code": 10, "reference": 0, "caption": 0}


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    yield load_benchmark("bench_drafter")


@pytest.mark.skipif(not list(CORPUS.glob("*.claims.yaml")), reason="the marked corpus is missing")
def test_drafter_keeps_its_measured_precision_and_recall_on_real_articles(bench: ModuleType) -> None:
    articles = bench.run_corpus()
    assert len(articles) >= 10 and all(a.marked >= 4 for a in articles)
    overall = bench.overall(articles)
    assert overall["precision"] >= PRECISION - MARGIN, overall
    assert overall["recall"] >= RECALL - MARGIN, overall
    assert all(overall[kind] <= ceiling for kind, ceiling in JUNK_CEILING.items()), overall
    assert [a.name for a in articles if a.rejected] == []
    assert max(a.extract_s + a.draft_s for a in articles) < 10  # a 51-page article in about a second


def test_marked_claims_are_verbatim_on_their_page(bench: ModuleType) -> None:
    from kb.papers.add import read_pdf

    for path in sorted(CORPUS.glob("*.claims.yaml"))[:3]:  # reading every PDF again would double the time
        pdf = CORPUS / (path.name.removesuffix(".claims.yaml") + ".pdf")
        pages = read_pdf(pdf).text.split(PAGE_BREAK)
        for claim in bench.load_marked(path):
            assert check_quote(claim.quote, pages[claim.page - 1]), (path.name, claim.page, claim.quote)


def test_matching_rule_and_junk_categories(bench: ModuleType) -> None:
    marked = "The pivoted QR method is 1.6 times faster than R's lm.fit on this test."
    assert bench.stands_for(marked, marked)
    assert bench.stands_for("Overall, the pivoted QR method is 1.6 times faster than R's lm.fit.", marked)
    assert not bench.stands_for("The pivoted QR method", marked)  # a fragment holds too few of its words
    paragraph = marked + (" We then simulated a balanced design with many levels to the grouping factor and"
                          " twenty observations per group, fitted every model again from new starting values,"
                          " recorded each warning printed by optimizers, and kept those runs apart for later.")
    assert not bench.stands_for(paragraph, marked)  # a paragraph that merely contains the claim
    assert bench.category("Figure 3: Rootograms of the posterior probabilities.") == "caption"
    entry = "Buyske S (2003). R Package mmlcr: Mixed-Mode Latent Class Regression."
    assert bench.category(entry) == "reference"
    assert bench.category("fm1 <- lmer(Reaction ~ Days + (Days | Subject), sleepstudy)") == "code"
    assert bench.category("3.2. Repeated measurements") == "heading"
    assert bench.category("The clusters are now well separated.") is None


def _paged(*pages: str) -> str:
    return PAGE_BREAK.join(pages)


HEAD = "Regression Models for Count Data in R"


def test_units_drop_running_heads_reference_lists_and_formula_debris() -> None:
    text = _paged(
        "A Title\nThe ML Poisson model is clearly inferior to all other fits. The negative binomial\n",
        f"2 {HEAD}\nalready improves the fit dramatically.\nlog L =\nX N\nn=1\n3 Results\nAll tests agree.\n",
        f"{HEAD} 3\nReferences\nBuyske S (2003). R Package mmlcr. Version 1.3.2.\nA. Technical details\n"
        "The hurdle model fits better than the Poisson model.\n",
        f"4 {HEAD}\nNothing more to say here.\n")
    found = [u.text for u in units(text)]
    assert found == ["The ML Poisson model is clearly inferior to all other fits.", "The negative binomial",
                     "already improves the fit dramatically.", "All tests agree.",
                     "The hurdle model fits better than the Poisson model.", "Nothing more to say here."]
    assert all(check_quote(quote, text) for quote in found)


def test_findings_in_words_are_drafted_from_paged_texts_only() -> None:
    sentences = ("The negative binomial model already improves the fit dramatically over the Poisson model.\n"
                 "This paper is organized as follows: Section 2 describes the models.\n"
                 "We fit the model with k = 2 components to the data.\n")
    paged = draft(_paged(sentences, "Another page of the article, with no findings on it.\n"), analyzers={})
    assert [(c.quote, c.kind) for c in paged.claims] == [
        ("The negative binomial model already improves the fit dramatically over the Poisson model.",
         ClaimKind.qualitative)]
    assert draft(sentences, analyzers={}).claims == []  # a note or an abstract: numbers and tables only
