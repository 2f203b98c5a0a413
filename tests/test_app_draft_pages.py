"""The app's draft list shows the PDF page each drafted quote starts on, and an accepted draft keeps it in the
note (its claim's source.page), as `kb draft-claims` does (issue 39)."""

from __future__ import annotations

import pytest

from kb.agents.drafter import draft
from kb.notes.grounding import PAGE_BREAK
from tests.helpers.app_env import AppEnv, open_app

PAGES = ["Timing the samplers\n\nWe find that the new sampler is 2.7 times faster than the old one.\n",
         "Nothing to report on this page.\n",
         "The observed speed-up was measured at 3.1 times on the largest data set.\n"]


def test_an_accepted_draft_takes_its_page_into_the_editors_claim() -> None:
    from app.claims_editor import from_draft

    claims = {c.quote: from_draft(c)["source"] for c in draft(PAGE_BREAK.join(PAGES), analyzers={}).claims}
    assert claims["The observed speed-up was measured at 3.1 times on the largest data set."] == {
        "quote": "The observed speed-up was measured at 3.1 times on the largest data set.", "page": 3}
    (unpaged,) = draft(PAGES[0], analyzers={}).claims
    assert "page" not in from_draft(unpaged)["source"]


@pytest.mark.slow  # an AppTest of the edit page takes 5-9 s on the loaded 2-core machine
def test_the_draft_list_shows_each_quotes_page_and_the_note_keeps_it(app_env: AppEnv) -> None:
    at = open_app("edit_note")
    at.text_input(key="fm_title").input("Drafted pages")
    at.text_input(key="fm_paper_id").input("test:pages")
    at.text_area(key="draft_text").input(PAGE_BREAK.join(PAGES)).run()
    at.button(key="draft_go").click().run()
    assert not at.exception
    table = at.data_editor(key="draft_table").value
    assert dict(zip(table["quote"], table["page"], strict=True)) == {
        "We find that the new sampler is 2.7 times faster than the old one.": 1,
        "The observed speed-up was measured at 3.1 times on the largest data set.": 3}
    at.button(key="draft_accept").click().run()
    at.button(key="edit_save").click().run()
    assert not at.exception
    claims = [c for c in app_env.kb.read("drafted-pages").meta.claims if c.source]
    assert {c.source.quote: c.source.page for c in claims if c.source} == {
        "We find that the new sampler is 2.7 times faster than the old one.": 1,
        "The observed speed-up was measured at 3.1 times on the largest data set.": 3}
