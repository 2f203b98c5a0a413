"""Text that is not Markdown (a refusal quoting a note's `source_file`, an error naming a note) is shown escaped
where the app renders Markdown: a note cannot make the app draw a link, an image or maths from its file names."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.display import markdown_text
from tests.helpers.app_env import make_env, open_app

NOTE = """---
paper_id: "t:md"
title: "Markdown in a file name"
source_file: "![pixel](http://127.0.0.1:9/track.png) [click](http://127.0.0.1:9/) $x$ `code`.txt"
---
Body.
"""


def test_markdown_text_escapes_links_images_code_html_and_maths() -> None:
    assert markdown_text("![i](http://h/a.png) [l](u) `c` <http://h> $x$ a_b *c*") == \
        "!\\[i\\](http\\://h/a.png) \\[l\\](u) \\`c\\` \\<http\\://h> \\$x\\$ a_b \\*c\\*"
    assert markdown_text("sources/paper_1.txt: not found (note#claim)") == "sources/paper_1.txt: not found (note#claim)"


def test_a_refusal_quoting_the_notes_source_file_is_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = make_env(tmp_path, monkeypatch)
    (env.papers / "md.md").write_text(NOTE, encoding="utf-8")
    env.kb.index()
    at = open_app("note", id="md")
    messages = [m.value for m in [*at.warning, *at.error]]
    assert any("track.png" in m for m in messages), messages  # the page said why the source is not shown
    for message in messages:
        assert "![pixel](" not in message and "[click](" not in message and "$x$" not in message, message
    assert any("!\\[pixel\\](http" in m and "\\$x\\$" in m for m in messages), messages


def test_markdown_text_shows_streamlit_shortcodes_as_written() -> None:
    # the deciding colon as an entity (the browser test shows that none renders); a run of names sharing colons
    # has each name's opening colon written so
    assert markdown_text(":smile:smile: :material/verified: :streamlit: 10:30") == \
        "&#58;smile&#58;smile: &#58;material/verified: :streamlit&#58; 10:30"
