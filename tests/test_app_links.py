"""Links between notes on the Note page, with AppTest: a link leads to the note or claim it names, an unknown
one says so, and each note lists the notes that link to it."""

from __future__ import annotations

from tests.helpers.app_env import AppEnv, open_app

TARGET = "siji-2026-curse-of-depth-in-plms"
LINKS = (f"\nSee [[{TARGET}]], [[{TARGET}#late-layers-refine|the refinement claim]] and [[ghost-note]]; "
         f"`[[{TARGET}]]` is code.\n\n```\n[[in-a-fence]] <b>x</b>\n```\n"
         # A fence in a list item ends with the item: what follows is Markdown again, and stays escaped.
         "- item\n  ```\n  code\nlazy ![img](http://example.org/x.png)\n")


def test_note_page_links_to_notes_and_claims_and_lists_backlinks(app_env: AppEnv) -> None:
    source = app_env.papers / "noop-note.md"
    source.write_text(source.read_text(encoding="utf-8") + LINKS, encoding="utf-8")
    before = source.read_bytes()
    app_env.kb.index()

    at = open_app("note", id="noop-note")
    body = next(m.value for m in at.markdown if "See " in m.value)
    assert (f"[:material/description: From Words to Amino Acids: Does the Curse of Depth Persist?]"
            f"(note?id={TARGET})") in body
    assert f"[:material/fact_check: the refinement claim](note?id={TARGET}&claim=late-layers-refine)" in body
    assert "\\[\\[ghost-note\\]\\] :gray[(unknown note)]" in body
    assert f"`[[{TARGET}]]`" in body and "```\n[[in-a-fence]] <b>x</b>\n```" in body  # code as written
    assert "![img](" not in body and "!\\[img\\](http\\://example.org/x.png)" in body
    assert source.read_bytes() == before

    at = open_app("note", id=TARGET, claim="late-layers-refine")
    backlinks = [(link.label, link.proto.query_string) for link in at.get("page_link")
                 if "noop" in link.proto.query_string]
    assert backlinks == [("Noop test note (on late-layers-refine)", "id=noop-note")]
    assert any("the claim the link named" in b for b in (m.value for m in at.markdown))
    assert not at.exception

    at = open_app("note", id=TARGET, claim="no-such-claim")
    assert any("no claim 'no-such-claim'" in w.value for w in at.warning)
