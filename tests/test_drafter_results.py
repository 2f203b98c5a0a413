"""Worked results on real articles (issue 39): in a PDF's full text the drafter drafts a number only as a worked
result (a test's printed result, a statement whose number comes with a test, an estimate or a measurement) and
says why, and rules out other works' results, definitions and chosen levels; the worked results marked by hand
(``benchmarks/data/pdfs/<name>.results.yaml``) are verbatim on their pages; and the benchmark drafts with a chat
model through the agent and the same review (a scripted LangChain model here, as CI runs it)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from langchain_core.messages import AIMessage

from kb.agents.drafter import draft
from kb.notes.grounding import PAGE_BREAK, check_quote
from schemas.claim import ClaimKind
from tests.helpers.benchmarks import load_benchmark
from tests.helpers.chat import call, scripted

CORPUS = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "pdfs"
# Measured by benchmarks/bench_drafter.py when the rules were tuned on the tuning half (2026-11-28): recall, and the
# precision of the drafts with a number (the drafter's worked results). A change may not lower them by more than
# the margin; the held-out half's were measured once, after the rules were frozen. Since rows of tables printed
# as text are drafted (tuned on the tuning half only): tuning 0.47/0.72 -> 0.50/0.81, held-out unchanged.
FLOORS = {"tuning": (0.50, 0.81), "held-out": (0.48, 0.53)}
MARGIN = 0.03
# Matched drafts naming the marked result's page, measured then: tuning 43 of 44 (a sentence over a page break
# starts on the page before the marked part), held-out 69 of 73 (matches between two similar sentences on
# different pages, each draft's page its own quote's).
PAGE_AGREEMENT = {"tuning": 0.97, "held-out": 0.94}
SMALL = CORPUS / "lmtest-intro.pdf"  # 5 pages, held-out, eight worked results (seven printed or stated tests)

ARTICLE = PAGE_BREAK.join([
    "Faster Sampling for Mixtures\n\n"
    "We find that the new sampler is 2.7 times faster than the old one on every data set.\n"
    "Smith et al. (2019) found an accuracy of 0.91 on the same data.\n"
    "The bandwidth is set to 0.5 by default.\n"
    "The 95% confidence intervals of all three methods are quite similar.\n\n"
    "R> dwtest(y ~ 1)\n"
    "Durbin-Watson test\n"
    "data: y ~ 1\n"
    "DW = 1.0581, p-value < 2.2e-16\n"
    "which shows serial correlation.\n\n"
    "Without randomness, leader election consistently took longer than 10 seconds in our tests.\n",
    "Another page of the article, with nothing to report on it.\n",
])


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("bench_drafter")


def test_a_paged_text_gets_its_worked_results_each_saying_why() -> None:
    result = draft(ARTICLE, analyzers={})
    why = {c.quote: (c.kind, c.notes[0]) for c in result.claims}
    assert why == {
        "We find that the new sampler is 2.7 times faster than the old one on every data set.": (
            ClaimKind.quantitative,
            "drafted because it states a worked result: a measured quantity or comparison with its number"),
        "Durbin-Watson test data: y ~ 1 DW = 1.0581, p-value < 2.2e-16": (
            ClaimKind.quantitative, "drafted because it states a test's printed result (its statistic and p-value)"),
        "Without randomness, leader election consistently took longer than 10 seconds in our tests.": (
            ClaimKind.quantitative, "drafted because it states a worked result: a test result with its number"),
        # its only number is the level the intervals were chosen at: a finding in words, not a worked number
        "The 95% confidence intervals of all three methods are quite similar.": (
            ClaimKind.qualitative, "drafted because it states a finding stated in words (no number to check)"),
    }, why  # not the cited work's accuracy, not the default bandwidth
    assert result.rejected == []  # every quote, the test's joined lines too, is found verbatim by the review


def test_outside_a_paper_the_rules_for_notes_stand() -> None:
    text = "The bandwidth is set to 0.5 by default.\n"  # in a paper, set-up; in a note, the reader's own point
    (claim,) = draft(text, analyzers={}).claims
    assert claim.kind == ClaimKind.quantitative and claim.notes[0].startswith("drafted because it states a quantity")


def test_marked_results_of_a_held_out_article_are_verbatim_on_their_pages(bench: ModuleType) -> None:
    marked = bench.load_marked(SMALL.with_name("lmtest-intro.results.yaml"))
    pages = bench.article_text(SMALL)[0].split(PAGE_BREAK)
    assert len(marked) == 8 and bench.split_of(SMALL) == "held-out"
    for result in marked:
        assert check_quote(result.quote, pages[result.page - 1]), result


@pytest.mark.slow
def test_every_marked_result_is_verbatim_on_its_page_and_each_half_has_nineteen(bench: ModuleType) -> None:
    halves: dict[str, int] = {}
    for path in sorted(CORPUS.glob("*.results.yaml")):
        pdf = CORPUS / (path.name.removesuffix(".results.yaml") + ".pdf")
        halves[bench.split_of(pdf)] = halves.get(bench.split_of(pdf), 0) + 1
        pages = bench.article_text(pdf)[0].split(PAGE_BREAK)
        for result in bench.load_marked(path):
            assert check_quote(result.quote, pages[result.page - 1]), (path.name, result)
    assert halves == {"tuning": 19, "held-out": 19}


def _drafted(claims: list[dict[str, str]], ident: str) -> AIMessage:
    return call("DraftedClaims", {"claims": claims}, ident)


def test_the_benchmark_scores_a_chat_models_drafts_after_the_same_review(bench: ModuleType) -> None:
    marked = bench.load_marked(SMALL.with_name("lmtest-intro.results.yaml"))
    found = [{"id": f"r{i}", "statement": m.quote, "kind": "quantitative", "quote": m.quote}
             for i, m in enumerate(marked)]
    cited = {"id": "cited", "statement": "Omnibus tests are not enough.", "quote": "As Breiman (2001) argues it "
             "is important to assess the goodness-of-fit of data models"}  # verbatim, but another work's
    invented = {"id": "invented", "statement": "The RESET test rejects.", "quote": "RESET rejects at p = 0.001."}
    answer = [*found, cited, invented]
    model = scripted(_drafted(answer, "a1"), _drafted(answer, "a2"))  # ignores the one repair it is offered
    article = bench.score_article(SMALL, bench.RESULTS, model)
    assert (article.drafted, article.marked, article.matched, article.rejected) == (9, 8, 8, 1)
    assert (article.precision, article.recall) == (8 / 9, 1.0)
    assert article.false_positives == [cited["quote"]]
    assert "'invented': the quote is not in the text" in json.dumps([str(m.content) for m in model.seen[-1]])


@pytest.mark.slow
def test_worked_results_stay_at_their_measured_precision_and_recall(bench: ModuleType) -> None:
    for half, (precision, recall) in FLOORS.items():
        found = bench.overall(bench.run_results(half))
        assert found["precision_quantitative"] >= precision - MARGIN, (half, found)
        assert found["recall"] >= recall - MARGIN, (half, found)
        assert found["page_agreement"] >= PAGE_AGREEMENT[half], (half, found)


def test_a_chat_models_reason_is_kept_with_its_draft() -> None:
    quote = "We find that the new sampler is 2.7 times faster than the old one on every data set."
    claim = {"id": "faster", "statement": "The new sampler is 2.7 times faster.", "kind": "quantitative",
             "quote": quote, "why": "a timing of both samplers on every data set"}
    (kept,) = draft(ARTICLE, analyzers={}, model=scripted(_drafted([claim], "a1"))).claims
    assert kept.notes == ["drafted because a timing of both samplers on every data set"]
