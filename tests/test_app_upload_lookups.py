"""The app's add-a-note upload reads a PDF as ``kb add FILE.pdf`` does (one function,
``kb.papers.lookups.read_paper_file``): the DOI it prints is looked up (recorded Crossref and OpenAlex answers
on loopback), the form says where each field came from, and the note it creates records ``field_sources`` for
the fields still as filled, with the abstract in its body; without lookups, one line says so (AppTest over a
real knowledge base)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.notes.files import read_note
from tests.helpers.app_env import make_env, open_app
from tests.helpers.article_pdf import BERKELEY, PREPRINT_DOI, PREPRINT_TITLE, make_preprint_pdf
from tests.helpers.grobid import MAML_TITLE, RecordedGrobid, make_maml_pdf
from tests.helpers.lookups import RecordedLookups


def _upload(tmp_path: Path, pdf: Path | None = None):  # noqa: ANN202 - AppTest
    pdf = pdf or make_preprint_pdf(tmp_path / "rao.pdf")
    at = open_app("edit_note")
    at.file_uploader(key="add_upload").set_value((pdf.name, pdf.read_bytes(), "application/pdf")).run()
    assert not at.exception, at.exception
    return at


def test_upload_looks_the_doi_up_and_the_note_records_each_fields_source(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lookups: str) -> None:
    env = make_env(tmp_path, monkeypatch)
    at = _upload(tmp_path)
    assert [r for r in RecordedLookups.requests if r.startswith("/works/")] == [f"/works/{PREPRINT_DOI}"]
    assert at.text_input(key="fm_title").value == PREPRINT_TITLE
    assert at.text_input(key="fm_venue").value == "bioRxiv"  # the record's, not the layout's
    shown = " ".join(c.value for c in at.caption)
    assert "title `crossref`" in shown and "affiliations `openalex`" in shown, shown
    assert "Unsupervised contact prediction" in at.text_area(key="fm_body").value  # the abstract, in the body
    at.text_input(key="fm_venue").set_value("bioRxiv (preprint server)")  # the user's now, not Crossref's
    at.button(key="edit_save").click().run()
    assert not at.exception, at.exception
    notes = [read_note(p) for p in env.papers.glob("*.md")]
    note = next(n for n in notes if n.meta.title == PREPRINT_TITLE)
    assert {k: v.value for k, v in (note.meta.field_sources or {}).items()} == {
        "title": "crossref", "authors": "crossref", "year": "crossref", "doi": "crossref",
        "affiliations": "openalex", "abstract": "crossref"}  # no 'venue': edited after the upload
    assert note.meta.authors[0].affiliation == BERKELEY and len(note.meta.authors) == 5
    assert "## Abstract\n\nUnsupervised contact prediction" in note.body


def test_upload_without_lookups_keeps_the_layout_and_says_why(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    make_env(tmp_path, monkeypatch)  # conftest turns lookups off (KB_LOOKUPS=false)
    at = _upload(tmp_path)
    warnings = [w.value for w in at.warning]
    assert any(f"doi:{PREPRINT_DOI} not looked up online: lookups are off" in w for w in warnings), warnings
    assert at.text_input(key="fm_title").value == PREPRINT_TITLE
    shown = " ".join(c.value for c in at.caption)
    assert "title `layout`" in shown and "crossref" not in shown, shown


def test_upload_with_grobid_says_which_fields_grobid_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          grobid: str) -> None:
    make_env(tmp_path, monkeypatch)
    at = _upload(tmp_path, make_maml_pdf(tmp_path / "maml.pdf"))
    assert len(RecordedGrobid.received) == 1
    assert at.text_input(key="fm_title").value == MAML_TITLE  # GROBID's, not the capitals on the page
    shown = " ".join(c.value for c in at.caption)
    assert "title `grobid`" in shown and "affiliations `layout`" in shown, shown
