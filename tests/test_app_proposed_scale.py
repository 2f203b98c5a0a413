"""The app's drafter shows the scale proposed from the paper's text for a drafted claim that states none, as a
proposal: adding the claim without ticking 'Use it' leaves it without a scale (issue 35)."""

from __future__ import annotations

from tests.helpers.app_env import AppEnv, open_app

TEXT = ("We study masked models with 650M parameters trained on UniRef50. The optimal depth is at least 24 layers. "
        "The 650M model reaches a perplexity of 8.2.")


def test_the_drafter_table_shows_the_proposed_scale_and_adds_the_claim_without_it(app_env: AppEnv) -> None:
    at = open_app("edit_note")
    at.text_input(key="fm_title").input("Scales proposed")
    at.text_input(key="fm_paper_id").input("test:scales")
    at.text_area(key="draft_text").input(TEXT).run()
    at.button(key="draft_go").click().run()
    assert not at.exception
    table = at.data_editor(key="draft_table").value
    row = table[table["quote"] == "The optimal depth is at least 24 layers."].iloc[0]
    assert row["proposed scale"] == "650M parameters, UniRef50, 24 layers" and not row["use scale"]
    stated = table[table["quote"].str.contains("650M")].iloc[0]
    assert stated["proposed scale"] == ""  # the quote states its own size: nothing to propose
    at.button(key="draft_accept").click().run()
    at.button(key="edit_save").click().run()
    assert not at.exception
    claims = {c.source.quote: c for c in app_env.kb.read("scales-proposed").meta.claims if c.source}
    assert claims["The optimal depth is at least 24 layers."].scale is None  # a proposal until accepted
