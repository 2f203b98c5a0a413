"""The app renders what a note says as text on every page: Markdown images, links, raw HTML, bare URLs and
backticks in every field of two notes in tension reach no page as an image, a link or HTML (Streamlit
AppTest; each element's Markdown source parsed with a CommonMark parser)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from kb.display import code_span, markdown_body
from tests.helpers.app_env import make_env, open_app
from tests.helpers.hostile_note import HOST, hostile_note


def _sources(at: AppTest) -> list[str]:
    """The Markdown source of every element on the page that Streamlit renders as Markdown, and their help."""
    found: list[str] = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "info", "warning", "error", "success"):
        for element in at.get(kind):
            found += [str(getattr(element, "value", "") or ""), str(getattr(element, "help", "") or "")]
    for element in at.get("page_link"):
        found.append(str(getattr(element, "label", "") or ""))
    return found


_PARSER = MarkdownIt("commonmark")
_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)


def _fetching(source: str) -> list[str]:
    """What in one element's Markdown would become an image, a link or HTML, or a bare URL GFM links."""
    bad = []
    for token in _PARSER.parse(source):
        for child in [token, *(token.children or [])]:
            if child.type in ("image", "link_open", "html_inline", "html_block"):
                bad.append(f"{child.type}: {child.content} {child.attrs}")  # an image's alt hides its src
    outside_code = _CODE.sub("", source)
    bad += re.findall(r"(?:https?://|www\.)\S+", outside_code)
    return [b for b in bad if HOST in b or "track.example" in b or "<script" in b or "body.png" in b]


@pytest.mark.parametrize(("page", "query"), [("note", "hostile-a"), ("note", "hostile-b"), ("tensions", "tension"),
                                             ("library", "")])
def test_note_text_is_shown_as_text_on_every_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str,
                                                  query: str) -> None:
    env = make_env(tmp_path, monkeypatch)
    (env.papers / "hostile-a.md").write_text(hostile_note("t:hostile-a", ">", 2), encoding="utf-8")
    (env.papers / "hostile-b.md").write_text(hostile_note("t:hostile-b", "<", 1), encoding="utf-8")
    report = env.kb.index()
    assert not report.errors, report.errors
    if query == "tension":  # the tension between the two hostile notes, shown in detail
        query = next(t.id for t in env.kb.tensions() if t.a.note_id.startswith("hostile"))
    at = open_app(page, **({"id": query} if query else {}))
    sources = _sources(at)
    if page != "library":  # the Library lists notes in a table, which shows text as text
        assert any("track" in s for s in sources), sources  # the page shows the notes' text, or it tests nothing
    problems = [p for s in sources for p in _fetching(s)]
    assert problems == [], problems


def test_code_span_and_body_helpers_cannot_be_broken_out_of() -> None:
    for text in ("a ` b", "``x``", "`", "x `` ![i](http://h/i.png)"):
        tokens = _PARSER.parseInline(code_span(text))[0].children or []
        assert [t.type for t in tokens] == ["code_inline"] and tokens[0].content.strip() == text.strip()
    body = markdown_body("# Title\n\n![i](http://h/i.png) [l](http://h) <b>x</b> www.h.example **bold**\n")
    types = {child.type for token in _PARSER.parse(body) for child in [token, *(token.children or [])]}
    assert "heading_open" in types and "strong_open" in types
    assert not types & {"image", "link_open", "html_inline", "html_block"}


def test_an_answer_repeating_a_hostile_note_is_shown_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_core.messages import AIMessage

    from kb.agents import config
    from tests.helpers.chat import scripted

    make_env(tmp_path, monkeypatch)
    # A note can be written to steer the model into echoing a tracking image or a link: the Ask page must show
    # the answer's words without fetching or linking anything.
    echoed = (f"See ![pixel](https://{HOST}/body.png) and [the paper](https://{HOST}/p), "
              f"<img src='https://{HOST}/x.png'>, https://{HOST}/bare and `code`.")
    monkeypatch.setattr(config, "chat_model", lambda spec=None: scripted(AIMessage(content=echoed)))
    at = open_app("ask")
    at.chat_input(key="ask_input").set_value(f"What does ![q](https://{HOST}/q.png) say?").run()
    assert not at.exception
    sources = _sources(at)
    assert any("pixel" in s for s in sources), sources  # the answer is on the page, or this tests nothing
    problems = [p for s in sources for p in _fetching(s)]
    assert problems == [], problems


def test_figure_names_from_a_bundle_are_shown_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bundle names its figures (their stems become the plot tabs' labels and captions, which Streamlit
    renders as Markdown): names written as a Markdown image and link reach the Note page as text."""
    import hashlib
    import json
    import shutil

    from kb.core import KnowledgeBase
    from kb.settings import Settings

    env = make_env(tmp_path, monkeypatch)
    (env.papers / "figs.md").write_text(
        '---\npaper_id: "t:figs"\ntitle: "Figures"\nclaims:\n  - id: c\n    statement: "s"\n'
        '    analyzer: {name: noop, params: {value: 3, plot: true}}\n'
        '    expect: {metric: value, op: ">", value: 2}\n---\n', encoding="utf-8")
    assert not env.kb.index().errors
    lab = KnowledgeBase(Settings(papers=env.papers, home=tmp_path / "lab"))
    (run,), _ = lab.verify(["figs"])
    assert lab.work() == {"succeeded": 1}
    bundle = tmp_path / "bundle"
    lab.export_evidence(bundle, [run.id])
    manifest = json.loads((bundle / "manifest.json").read_text())
    files = manifest["runs"][0]["files"]
    png = next(f for f in files if f["path"].endswith(".png"))
    second = {**png, "path": png["path"].replace(".png", "-2.png"),
              "artifact": "figs/[the paper](https:track.example) ![pixel](https:track.example).png"}
    png["artifact"] = "figs/![pixel](https:track.example).png"
    shutil.copyfile(bundle / png["path"], bundle / second["path"])
    files.append(second)
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    assert hashlib.sha256((bundle / second["path"]).read_bytes()).hexdigest() == second["sha256"]
    assert env.kb.import_evidence(bundle).added == [run.id]

    at = open_app("note", id="figs")
    assert not at.exception
    labels = [str(tab.label) for tab in at.tabs]
    assert any("pixel" in label for label in labels), labels  # the figures' tabs are there, or this tests nothing
    problems = [p for label in labels for p in _fetching(label)]
    assert problems == [], (problems, labels)
