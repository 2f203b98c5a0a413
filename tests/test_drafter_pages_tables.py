"""Drafts carry their page, and tables printed as text are read (issue 39): in a paged text (a PDF's text as
`kb add` stores it) every drafted claim names the PDF page its quote starts on, in its source, in
`kb draft-claims` and its --json, whoever drafted it; a table printed as text (a label and numbers per row
under a line of column names) drafts its worked rows as single results, by the drafter's rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from kb.agents.drafter import draft
from kb.agents.fallback import table_results, units
from kb.agents.text_tables import most_significant, parse_row
from kb.notes.grounding import PAGE_BREAK, QuoteMatcher, check_quote
from schemas.claim import ClaimKind
from tests.helpers.chat import call, scripted
from tests.helpers.cli import run_kb

PAGES = [
    "Timing the Samplers\n\n"
    "We find that the new sampler is 2.7 times faster than the old one on every data set. The estimated\n"
    "mixing time was",
    "reduced by a median of 40 percent in our runs. Nothing else is reported here.\n",
    "Smith et al. (2019) found an accuracy of 0.91 on the same data.\n"
    "The observed speed-up was measured at 3.1 times on the largest data set.\n",
]
ARTICLE = PAGE_BREAK.join(PAGES)

# R's printed simultaneous tests (multcomp's glht), on the second page, under a lead-in line and column names.
TESTS = PAGE_BREAK.join([
    "An Analysis of Three Groups\n\nWe compare the three groups pairwise.\n",
    "R> summary(glht(fit, linfct = mcp(group = \"Tukey\")))\n"
    "Linear Hypotheses:\n"
    "Estimate Std. Error t value Pr(>|t|)\n"
    "mid - low == 0 0.4342 0.4239 1.024 0.5594\n"
    "high - low == 0 1.1888 0.4432 2.682 0.0227 *\n"
    "high - mid == 0 0.7546 0.3184 2.370 0.0502 .\n"
    "---\n"
    "Signif. codes: 0 ‘***’ 0.001 ‘**’ 0.01 ‘*’ 0.05 ‘.’ 0.1 ‘ ’ 1\n",
])


def test_units_and_drafts_name_the_page_their_quote_starts_on() -> None:
    found = {u.text: u.page for u in units(ARTICLE)}
    assert found["We find that the new sampler is 2.7 times faster than the old one on every data set."] == 1
    # a sentence running over the page break starts on page 1
    assert found["The estimated mixing time was reduced by a median of 40 percent in our runs."] == 1
    assert found["Nothing else is reported here."] == 2
    claims = draft(ARTICLE, analyzers={}).claims
    assert {c.quote: c.page for c in claims} == {
        "We find that the new sampler is 2.7 times faster than the old one on every data set.": 1,
        "The estimated mixing time was reduced by a median of 40 percent in our runs.": 1,
        "The observed speed-up was measured at 3.1 times on the largest data set.": 3}
    for claim in claims:  # checked against the pages themselves, not the drafter's own bookkeeping
        assert claim.to_claim().source is not None and claim.to_claim().source.page == claim.page
        assert check_quote(claim.quote.split(" was")[0], PAGES[claim.page - 1])


def test_a_text_without_pages_drafts_without_a_page() -> None:
    (claim,) = draft("We find that the new sampler is 2.7 times faster than the old one.", analyzers={}).claims
    assert claim.page is None and claim.to_claim().source is not None and claim.to_claim().source.page is None


def test_start_page_of_a_quote_on_one_page_over_a_break_and_absent() -> None:
    matcher = QuoteMatcher(ARTICLE)
    assert matcher.start_page("the observed speed-up was measured") == 3
    assert matcher.start_page("The estimated mixing time was reduced by a median") == 1  # runs over to page 2
    assert matcher.start_page("reduced by a median of 40 percent") == 2
    assert matcher.start_page("a sentence no page holds") is None
    assert QuoteMatcher("One page only, no breaks.").start_page("One page only") is None


def _drafted(claims: list[dict[str, object]]) -> AIMessage:
    return call("DraftedClaims", {"claims": claims}, "a1")


def test_the_review_gives_a_chat_models_quotes_their_page_and_corrects_a_wrong_one() -> None:
    answer = [
        {"id": "faster", "statement": "The new sampler is 2.7 times faster.", "kind": "quantitative",
         "quote": "the new sampler is 2.7 times faster than the old one"},  # no page given
        {"id": "speed-up", "statement": "A 3.1-fold speed-up.", "kind": "quantitative", "page": 1,
         "quote": "The observed speed-up was measured at 3.1 times"},  # a wrong page
        {"id": "mixing", "statement": "Mixing time fell by 40 %.", "kind": "quantitative", "page": 1,
         "quote": "The estimated mixing time was reduced by a median of 40 percent"},  # right, over a break
    ]
    result = draft(ARTICLE, analyzers={}, model=scripted(_drafted(answer)))
    pages = {c.id: c.page for c in result.claims}
    assert pages == {"faster": 1, "speed-up": 3, "mixing": 1}
    notes = {c.id: c.notes for c in result.claims}
    assert notes["speed-up"] == ["page 1 corrected to 3: the quote is not on page 1"]
    assert notes["faster"] == [] and notes["mixing"] == []


def test_a_table_of_tested_hypotheses_drafts_its_most_significant_row() -> None:
    (table,) = [u for u in units(TESTS) if u.kind == "table"]
    assert table.page == 2 and table.header == ("Estimate Std. Error t value Pr(>|t|)",)
    result = draft(TESTS, analyzers={})
    assert result.rejected == []  # the quote is verbatim
    (claim,) = result.claims
    assert (claim.quote, claim.page, claim.kind, claim.section) == (
        "high - low == 0 1.1888 0.4432 2.682 0.0227 *", 2, ClaimKind.quantitative, "table")
    assert claim.statement == \
        "high - low == 0: 1.1888 0.4432 2.682 0.0227 (Estimate Std. Error t value Pr(>|t|))"
    assert claim.notes[0] == ("drafted because it states a test result: the hypothesis of a printed test table "
                              "rejected most clearly")


def test_the_first_row_quotes_its_header_and_a_bound_is_no_exact_p_value() -> None:
    text = TESTS.replace("0.5594\n", "0.0011 **\n").replace("0.0227 *", "<0.001 ***")
    (claim,) = draft(text, analyzers={}).claims  # the bound '<0.001' may be smaller: it is not read as a value
    assert claim.quote == "Estimate Std. Error t value Pr(>|t|) mid - low == 0 0.4342 0.4239 1.024 0.0011 **"
    assert check_quote(claim.quote, text)


def test_a_fit_statistic_row_under_column_names_is_drafted_and_its_numbers_named() -> None:
    text = PAGE_BREAK.join(["Models compared\n", (
        "The differences become obvious when the full likelihood is considered:\n"
        "ML-Pois Quasi-Pois NB Hurdle-NB ZINB\n"
        "logLik -17972 NA -12171 -12090 -12091\n"
        "Df 8 8 9 15 15\n"
        "The ML Poisson model is clearly inferior to all other fits.\n")])
    drafted = {c.quote: c for c in draft(text, analyzers={}).claims}
    row = drafted["ML-Pois Quasi-Pois NB Hurdle-NB ZINB logLik -17972 NA -12171 -12090 -12091"]
    assert row.statement == "logLik: ML-Pois -17972; Quasi-Pois NA; NB -12171; Hurdle-NB -12090; ZINB -12091"
    assert row.page == 2 and row.notes[0].endswith("an estimate: a fitted model's statistic in a printed table")
    assert not any(q.startswith("Df") for q in drafted)  # degrees of freedom: set by the model, not estimated
    # the lead-in sentence stays a sentence: the column names were taken off its end, not glued to it
    lead_in = "The differences become obvious when the full likelihood is considered:"
    assert lead_in in {u.text for u in units(text)}


@pytest.mark.parametrize("text", [
    # a model's coefficient table: every term tested, no hypothesis stated
    "Estimate Std. Error t value Pr(>|t|)\n(Intercept) -69.02 7.51 -9.183 4.18e-13 ***\n"
    "waistcirc 0.2104 0.0671 3.135 0.00264 **\n",
    # the tail of a typeset table: rows under no line of column names
    "(0.088) (0.200)\nAIC 35959.2 24359.1 24210.1 24211.4\nBIC 36010.4 24416.6 24306.0 24307.3\n",
    # R's str() output, and a data set's description
    "List of 2\n$ coefficients : num [1:2] -2.35 2.2\n$ rank : int 2 3\n",
    "Collection Disks TREC WT10G\naverage # of terms 237 272 398\naverage # of edges 608 734 901\n",
])
def test_tables_that_state_no_worked_result_draft_nothing(text: str) -> None:
    paged = PAGE_BREAK.join(["A paper\n", text])
    assert draft(paged, analyzers={}).claims == []


def test_rows_are_told_from_prose_dates_and_printed_vectors() -> None:
    row = parse_row("long - short == 0 1.1888 0.5203 2.285 0.0614 .")
    assert row is not None and (row.label, row.cells, row.code) == (
        "long - short == 0", ("1.1888", "0.5203", "2.285", "0.0614"), ".")
    assert row.p_value() == pytest.approx(0.0614)
    bound = parse_row("x 4.81 0.51 9.44 < 2e-16 ***")
    assert bound is not None and bound.cells[-1] == "<2e-16" and bound.p_value() is None
    assert parse_row("# of documents 741,856 528,155 1,692,096") is not None
    for line in ("February 10, 2023", "[1] 1 2 3", "The model has 3 layers and 2 heads.", "12 34 56",
                 "AIC: 1303.09 BIC: 1332.775", "x = 1, 2", "Table 2 3 4 see text here"):
        assert parse_row(line) is None, line
    rows = [r for r in map(parse_row, ["a == 0 1.0 0.5 0.01", "b == 0 1.0 0.5 0.2 .", "c == 0 1.0 0.5 0.09 ."])
            if r is not None]
    best = most_significant(rows)  # only rows with a significance code count: 'a' has none
    assert best is not None and best.label == "c == 0"
    assert table_results(units(PAGE_BREAK.join(["p\n", "Estimate Pr(>|t|)\na == 0 1.0 0.01\n"]))[0]) == []


def test_cli_draft_claims_prints_and_writes_the_page(tmp_path: Path) -> None:
    text = tmp_path / "paper.txt"
    text.write_text(ARTICLE, encoding="utf-8")
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    shown = run_kb(papers, home, "draft-claims", str(text), "--json", env={"KB_CHAT_MODEL": ""})
    assert shown.returncode == 0, shown.stderr
    rows = {row["quote"]: row for row in json.loads(shown.stdout)}
    assert rows["The observed speed-up was measured at 3.1 times on the largest data set."]["page"] == 3
    table = run_kb(papers, home, "draft-claims", str(text), env={"KB_CHAT_MODEL": "", "COLUMNS": "400"})
    assert table.returncode == 0, table.stderr
    assert "on the largest data set. (p. 3)" in table.stdout


def test_outside_a_paged_text_no_table_is_read_as_text_rows() -> None:
    note = "ML-Pois Quasi-Pois NB\nlogLik -17972 NA -12171\n"  # a note's text: its tables are Markdown's
    assert units(note) == [] and draft(note, analyzers={}).claims == []  # a heading and a non-prose line
    assert [u.kind for u in units(PAGE_BREAK.join(["p\n", note]))] == ["table"]
