"""The Library's citation downloads (BibTeX, CSL-JSON) for the notes its filters show, with AppTest."""

from __future__ import annotations

import difflib
import json

import pytest

from kb.notes.files import read_note
from tests.helpers.app_env import AppEnv, open_app, record_deferred_downloads


def test_library_downloads_citations_of_the_filtered_notes(app_env: AppEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    downloads = record_deferred_downloads(monkeypatch)
    note = app_env.papers / "sampling-intermediate-temperatures-langevin.md"
    before = note.read_bytes()
    at = open_app()
    at.sidebar.selectbox(key="lib_tag").set_value("langevin").run()
    assert not at.exception, at.exception
    assert [b.label for b in at.download_button] == ["BibTeX", "CSL-JSON"]
    assert note.read_bytes() == before  # showing the buttons writes nothing: keys are given when a file is made

    bibtex = downloads[at.download_button(key="lib_export_bibtex").proto.deferred_file_id]
    assert (bibtex["filename"], bibtex["mimetype"]) == ("kb-citations.bib", "application/x-bibtex")
    text = bibtex["callable"]().decode("utf-8")
    assert text.startswith("@article{tiana2025,\n") and text.count("\n@") == 0  # one note: the filtered one
    assert "author = {Tiana, Guido}" in text
    assert read_note(note).meta.citekey == "tiana2025"
    changed = [line for line in difflib.ndiff(before.decode().splitlines(True), note.read_text().splitlines(True))
               if line[:1] in "+-"]
    assert changed == ['+ citekey: "tiana2025"\n']  # one line added, every other byte kept

    csl = downloads[at.download_button(key="lib_export_csl-json").proto.deferred_file_id]
    items = json.loads(csl["callable"]())
    assert [(i["id"], i["author"]) for i in items] == [("tiana2025", [{"family": "Tiana", "given": "Guido"}])]


def test_library_says_when_two_notes_share_a_key(app_env: AppEnv) -> None:
    for name in ("noop-note.md", "sampling-intermediate-temperatures-langevin.md"):
        path = app_env.papers / name
        path.write_text(path.read_text(encoding="utf-8").replace("\ntitle:", '\ncitekey: "same"\ntitle:', 1),
                        encoding="utf-8")
    app_env.kb.index()
    at = open_app()
    assert not at.download_button
    assert any("citekey" in w.value and "noop-note" in w.value for w in at.warning)
