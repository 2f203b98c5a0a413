"""Adding papers (``kb add``) from PDFs, BibTeX and Zotero files made here, and from arXiv and Crossref
answers served by a loopback HTTP server; and the source-file checks of validate, check and import."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from kb.notes.files import read_note
from kb.notes.grounding import QuoteMatcher
from tests.helpers.cli import run_kb
from tests.helpers.lookups import RecordedLookups

WIDE = {"COLUMNS": "200"}


def _run(kb_dirs: tuple[Path, Path], *args: str) -> tuple[int, str, str]:
    done = run_kb(*kb_dirs, *args, env=WIDE)
    return done.returncode, done.stdout, done.stderr


# -- source files: validate warns, check fails, import copies ----------------------------------------

NOTE = '---\npaper_id: "t:1"\ntitle: "Deeper models"\nsource_file: "sources/deeper.txt"\n---\nbody\n'


def test_validate_warns_on_missing_source_file_but_passes(kb_dirs: tuple[Path, Path]) -> None:
    papers, _ = kb_dirs
    (papers / "deeper.md").write_text(NOTE, encoding="utf-8")
    code, _, err = _run(kb_dirs, "validate")
    assert code == 0
    assert "warning" in err and "deeper.md" in err and "sources/deeper.txt" in err and "does not exist" in err


def test_check_fails_on_missing_or_unreadable_source_file(kb_dirs: tuple[Path, Path]) -> None:
    papers, _ = kb_dirs
    (papers / "deeper.md").write_text(NOTE, encoding="utf-8")
    code, _, err = _run(kb_dirs, "check", "deeper")
    assert code == 1 and "does not exist" in err
    (papers / "sources" / "deeper.txt").write_bytes(b"\xff\xfe not utf-8 \xff")
    code, _, err = _run(kb_dirs, "check", "deeper")
    assert code == 1 and "not UTF-8" in err
    (papers / "sources" / "deeper.txt").write_text("Deeper models\n", encoding="utf-8")
    code, _, err = _run(kb_dirs, "check", "deeper")
    assert code == 0, err


def test_import_copies_the_source_along_and_never_overwrites(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    papers, _ = kb_dirs
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "sources").mkdir(parents=True)
    (elsewhere / "deeper.md").write_text(NOTE, encoding="utf-8")
    (elsewhere / "sources" / "deeper.txt").write_text("Deeper models, the text.\n", encoding="utf-8")
    code, _, err = _run(kb_dirs, "import", str(elsewhere / "deeper.md"))
    assert code == 0, err
    assert (papers / "sources" / "deeper.txt").read_text(encoding="utf-8") == "Deeper models, the text.\n"
    # A second note naming the same source file with other text: refused, nothing written or replaced.
    other = elsewhere / "other.md"
    other.write_text(NOTE.replace('"t:1"', '"t:2"'), encoding="utf-8")
    (elsewhere / "sources" / "deeper.txt").write_text("Different text.\n", encoding="utf-8")
    code, _, err = _run(kb_dirs, "import", str(other))
    assert code == 1 and "already has the name" in err
    assert not (papers / "other.md").exists()
    assert (papers / "sources" / "deeper.txt").read_text(encoding="utf-8") == "Deeper models, the text.\n"


def test_import_refuses_a_source_file_outside_the_notes_folder(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    papers, _ = kb_dirs
    (tmp_path / "out" / "in").mkdir(parents=True)
    (tmp_path / "out" / "secret.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "out" / "in" / "n.md").write_text(NOTE.replace("sources/deeper.txt", "../secret.txt"),
                                                  encoding="utf-8")
    code, _, err = _run(kb_dirs, "import", str(tmp_path / "out" / "in" / "n.md"))
    assert code == 1 and "outside" in err
    assert not (papers / "n.md").exists() and not (papers.parent / "secret.txt").exists()


# -- offline inputs: PDF, BibTeX, Zotero --------------------------------------------------------------

def _make_pdf(path: Path, pages: list[str], title: str | None = None) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    if title:
        pdf.set_title(title)
        pdf.set_author("Aleena Siji and Stefan Bauer")
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    pdf.output(str(path))



def _without_bundled(kb_dirs: tuple[Path, Path], paper_id: str = "arxiv:2602.21750") -> None:
    """Remove the bundled note of ``paper_id``: a second note with a paper_id another note has is refused, and
    these tests add that paper anew."""
    for path in kb_dirs[0].glob("*.md"):
        if read_note(path).meta.paper_id == paper_id:
            path.unlink()


def test_add_pdf_stores_full_text_with_pages_and_a_valid_note(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    _without_bundled(kb_dirs)
    pdf = tmp_path / "paper.pdf"
    _make_pdf(pdf, ["Depth in Protein Language Models\narXiv:2602.21750\nWe study six PLMs.",
                    "Results\nThe optimal depth is 24 layers for perplexity. As in arXiv:2101.00001."],
              title="Depth in Protein Language Models")
    code, out, err = _run(kb_dirs, "add", str(pdf), "--tag", "plm", "--json")
    assert code == 0, err
    (row,) = json.loads(out)
    note = read_note(Path(row["path"]))
    assert note.meta.title == "Depth in Protein Language Models"
    assert note.meta.paper_id == "arxiv:2602.21750" and note.meta.tags == ["plm"]
    assert [a.name for a in note.meta.authors] == ["Aleena Siji", "Stefan Bauer"]
    text = (note.path.parent / note.meta.source_file).read_text(encoding="utf-8")  # type: ignore[operator]
    first, second = text.split("\f")
    assert "We study six PLMs." in first and "optimal depth is 24 layers" in second
    assert QuoteMatcher(text).pages("The optimal depth is 24 layers") == [2]
    code, _, err = _run(kb_dirs, "validate", str(note.path))
    assert code == 0 and "warning" not in err
    notes_before = sorted(p.name for p in kb_dirs[0].rglob("*") if p.is_file() and ".kb-locks" not in p.parts)
    code, _, err = _run(kb_dirs, "add", str(pdf))  # the same paper again: one error line, nothing written
    errors = [line for line in err.splitlines() if not line.startswith("note: ")]  # 'not looked up online'
    assert code == 1 and "paper_id 'arxiv:2602.21750' is already used" in err and len(errors) == 1
    assert sorted(p.name for p in kb_dirs[0].rglob("*") if p.is_file() and ".kb-locks" not in p.parts) == notes_before


def test_add_unreadable_pdf_says_what_to_give_instead(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"not a pdf at all")
    code, _, err = _run(kb_dirs, "add", str(bad))
    assert code == 1 and "bad.pdf" in err and "BibTeX" in err


BIB = r"""
@article{siji2026,
  title = {From Words to Amino Acids: Does the {Curse} of Depth Persist?},
  author = {Siji, Aleena and Karimi Mamaghan, Amir Mohammad and Bauer, Stefan},
  year = {2026},
  eprint = {2602.21750},
  archivePrefix = {arXiv},
  abstract = {We study six popular PLMs with 12 to 36 layers.},
}
@inproceedings{lin2023,
  title = {Evolutionary-scale prediction of atomic-level protein structure},
  author = {Zeming Lin and Alexander Rives},
  booktitle = {Science},
  year = {2023},
  doi = {10.1126/science.ade2574},
}
"""


def test_add_bibtex_adds_each_entry_with_ids_venue_and_abstract(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    _without_bundled(kb_dirs)
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    code, out, err = _run(kb_dirs, "add", str(bib), "--json")
    assert code == 0, err
    notes = {r["paper_id"]: read_note(Path(r["path"])) for r in json.loads(out)}
    assert set(notes) == {"arxiv:2602.21750", "doi:10.1126/science.ade2574"}
    siji = notes["arxiv:2602.21750"]
    assert siji.meta.title == "From Words to Amino Acids: Does the Curse of Depth Persist?"
    assert [a.name for a in siji.meta.authors] == ["Aleena Siji", "Amir Mohammad Karimi Mamaghan", "Stefan Bauer"]
    assert siji.meta.publication and siji.meta.publication.year == 2026 and siji.meta.publication.venue == "arXiv"
    assert "12 to 36 layers" in (siji.path.parent / str(siji.meta.source_file)).read_text(encoding="utf-8")
    lin = notes["doi:10.1126/science.ade2574"]
    assert lin.meta.publication and lin.meta.publication.venue == "Science" and lin.meta.source_file is None
    # Adding the same file again is refused per entry (paper_id taken), and nothing is left behind.
    before = sorted(p.name for p in (kb_dirs[0] / "sources").iterdir())
    code, _, err = _run(kb_dirs, "add", str(bib))
    assert code == 1 and "already used" in err
    assert sorted(p.name for p in (kb_dirs[0] / "sources").iterdir()) == before


def test_add_zotero_csl_json(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    items = [{"id": "http://zotero.org/users/1/items/ABCD", "type": "article-journal",
              "title": "Evolutionary-scale prediction of atomic-level protein structure with a language model",
              "container-title": "Science", "DOI": "10.1126/science.ade2574",
              "URL": "https://www.science.org/doi/10.1126/science.ade2574",
              "author": [{"family": "Lin", "given": "Zeming"}, {"family": "Rives", "given": "Alexander"}],
              "issued": {"date-parts": [["2023", 3, 17]]},
              "abstract": "Language models of protein sequences are scaled up to 15 billion parameters."}]
    export = tmp_path / "zotero.json"
    export.write_text(json.dumps(items), encoding="utf-8")
    code, out, err = _run(kb_dirs, "add", str(export), "--json")
    assert code == 0, err
    note = read_note(Path(json.loads(out)[0]["path"]))
    assert note.meta.paper_id == "doi:10.1126/science.ade2574"
    assert [a.name for a in note.meta.authors] == ["Zeming Lin", "Alexander Rives"]
    assert note.meta.publication and (note.meta.publication.year, note.meta.publication.venue) == (2023, "Science")
    assert note.meta.urls and note.meta.urls.paper_url == items[0]["URL"]


def test_add_unknown_input_names_what_kb_takes(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    (tmp_path / "notes.docx").write_bytes(b"x")
    code, _, err = _run(kb_dirs, "add", str(tmp_path / "notes.docx"))
    assert code == 1 and ".pdf" in err and ".bib" in err


# -- online inputs against a loopback server ----------------------------------------------------------

def test_add_arxiv_fills_frontmatter_and_stores_the_abstract(kb_dirs: tuple[Path, Path], lookups: str) -> None:
    _without_bundled(kb_dirs)
    code, out, err = _run(kb_dirs, "add", "arxiv:2602.21750v1", "--json")
    assert code == 0, err
    assert RecordedLookups.requests and "id_list=2602.21750" in RecordedLookups.requests[0]
    note = read_note(Path(json.loads(out)[0]["path"]))
    meta = note.meta
    assert meta.paper_id == "arxiv:2602.21750"
    assert meta.title == "From Words to Amino Acids: Does the Curse of Depth Persist?"
    assert [(a.name, a.affiliation) for a in meta.authors] == [
        ("Aleena Siji", "Technical University of Munich"),
        ("Amir Mohammad Karimi Mamaghan", "KTH Royal Institute of Technology"), ("Stefan Bauer", "Unknown")]
    assert meta.institutions == ["Technical University of Munich", "KTH Royal Institute of Technology"]
    assert meta.publication and (meta.publication.year, meta.publication.venue, meta.publication.arxiv_id) == (
        2026, "arXiv", "2602.21750")
    assert meta.urls and meta.urls.pdf_url == "https://arxiv.org/pdf/2602.21750v1"
    source = (note.path.parent / str(meta.source_file)).read_text(encoding="utf-8")
    assert "mainly refine the final output distribution" in source
    # The stored abstract grounds a claim quoting it, and the note's title and id agree with it.
    code, _, err = _run(kb_dirs, "check", note.id)
    assert code == 0, err


def test_add_arxiv_unknown_id_is_one_clear_line(kb_dirs: tuple[Path, Path], lookups: str) -> None:
    code, _, err = _run(kb_dirs, "add", "arxiv:9999.99999")
    assert code == 1 and "arXiv has no paper '9999.99999'" in err


def test_add_doi_from_crossref_keeps_affiliations_and_abstract(kb_dirs: tuple[Path, Path], lookups: str) -> None:
    code, out, err = _run(kb_dirs, "add", "doi:10.1126/science.ade2574", "--json")
    assert code == 0, err
    note = read_note(Path(json.loads(out)[0]["path"]))
    meta = note.meta
    assert meta.title == "Evolutionary-scale prediction of atomic-level protein structure with a language model"
    assert meta.authors[0].name == "Zeming Lin"
    assert meta.authors[0].affiliation == "Meta AI, New York, NY, USA.; New York University, New York, NY, USA."
    assert meta.authors[2].affiliation == "Unknown"
    assert meta.publication and (meta.publication.year, meta.publication.venue, meta.publication.doi) == (
        2023, "Science", "10.1126/science.ade2574")
    source = (note.path.parent / str(meta.source_file)).read_text(encoding="utf-8")
    assert "scaled up to 15 billion parameters" in source and "<jats:p>" not in source
    code, _, err = _run(kb_dirs, "add", "doi:10.9999/unknown")
    assert code == 1 and "HTTP 404" in err


def test_add_offline_fails_fast_saying_what_to_give(kb_dirs: tuple[Path, Path],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port nothing listens on: connection refused, as offline
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("KB_ARXIV_API_URL", f"http://127.0.0.1:{port}/api/query")
    code, _, err = _run(kb_dirs, "add", "arxiv:2602.21750")
    assert code == 1
    assert "arXiv is unreachable" in err and "kb add paper.pdf" in err and "BibTeX" in err
    assert not list((kb_dirs[0]).glob("from-words*"))


def test_add_gives_up_at_the_lookup_deadline(kb_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        monkeypatch.setenv("KB_CROSSREF_API_URL", f"http://127.0.0.1:{silent.getsockname()[1]}")
        monkeypatch.setenv("KB_LOOKUP_TIMEOUT", "0.5")
        started = time.monotonic()
        code, _, err = _run(kb_dirs, "add", "doi:10.1126/science.ade2574")
        assert time.monotonic() - started < 5
    assert code == 1 and "Crossref is unreachable" in err


def test_add_with_draft_offers_claims_and_writes_none(kb_dirs: tuple[Path, Path], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KB_CHAT_MODEL", raising=False)  # the deterministic drafter
    bib = tmp_path / "one.bib"
    bib.write_text("@article{d, title = {Depth of PLMs}, year = {2025}, abstract = {We train models with 650M "
                   "parameters on 12 layers. The optimal depth is at least 24 layers.}}\n", encoding="utf-8")
    code, out, err = _run(kb_dirs, "add", str(bib), "--draft")
    assert code == 0, err
    assert "drafted claims for depth-of-plms" in out and "kb draft-claims depth-of-plms --accept" in out
    assert read_note(kb_dirs[0] / "depth-of-plms.md").meta.claims == []
