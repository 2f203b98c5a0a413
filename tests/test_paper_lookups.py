"""Identifiers first: ``kb add FILE.pdf`` looks the DOI the PDF prints up (Crossref, OpenAlex for institutions)
and takes the record's fields over the layout's, saying where each came from; offline, or when a lookup
fails, the layout alone with one line saying so. Template DOIs are never stored, a paper whose ``paper_id``
another paper holds gets a distinct one, and the abstract goes into the new note's body.

The recorded answers (``tests/fixtures/lookups``) are written by hand in the services' response shapes
(Crossref's ``message.title[]``, ``author[{given, family, affiliation[]}]``, ``issued.date-parts``;
OpenAlex's ``authorships[{author, institutions[], raw_affiliation_strings[]}]``) for a real bioRxiv
preprint, and served on loopback (``tests/helpers/lookups.py``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kb.notes.files import Note, read_note
from kb.papers.identifiers import placeholder_doi
from tests.helpers.article_pdf import BERKELEY, PREPRINT_DOI, PREPRINT_TITLE, make_article_pdf, make_preprint_pdf
from tests.helpers.cli import run_kb
from tests.helpers.lookups import RecordedLookups
from tests.servers import free_port

DOI, TITLE = PREPRINT_DOI, PREPRINT_TITLE
RECORD_AUTHORS = ["Roshan Rao", "Joshua Meier", "Tom Sercu", "Sergey Ovchinnikov", "Alexander Rives"]


@pytest.fixture
def preprint(tmp_path: Path) -> Path:
    """The bioRxiv preprint's first page: its DOI in the header, three of its five authors over one place."""
    return make_preprint_pdf(tmp_path / "rao.pdf")


def _add(kb_dirs: tuple[Path, Path], *args: str) -> tuple[Note | None, str]:
    papers, home = kb_dirs
    done = run_kb(papers, home, "add", *args, "--json")
    rows = json.loads(done.stdout) if done.returncode == 0 else []
    return (read_note(Path(rows[0]["path"])) if rows else None), done.stderr


def _crossref_requests() -> list[str]:
    return [r for r in RecordedLookups.requests if r.startswith("/works/")]


def test_pdf_with_a_doi_takes_the_record_with_each_fields_source(
        kb_dirs: tuple[Path, Path], preprint: Path, lookups: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_CONTACT_EMAIL", "lab@example.org")
    note, err = _add(kb_dirs, str(preprint))
    assert note is not None, err
    meta = note.meta
    assert (meta.paper_id, meta.title) == (f"doi:{DOI}", TITLE)
    assert [a.name for a in meta.authors] == RECORD_AUTHORS  # the record's five, not the layout's three
    assert meta.publication and (meta.publication.year, meta.publication.venue, meta.publication.doi) == (
        2020, "bioRxiv", DOI)  # a posted preprint's server, not its publisher (Cold Spring Harbor Laboratory)
    # Crossref gives no affiliations; OpenAlex places all five (the layout only three): OpenAlex's.
    assert [a.affiliation for a in meta.authors] == [BERKELEY, "Meta (United States)", "Meta (United States)",
                                                     "Harvard University", "Meta (United States); New York University"]
    assert {k: v.value for k, v in (meta.field_sources or {}).items()} == {
        "title": "crossref", "authors": "crossref", "year": "crossref", "venue": "crossref", "doi": "crossref",
        "affiliations": "openalex", "abstract": "crossref"}
    assert "## Abstract\n\nUnsupervised contact prediction is central" in note.body
    assert "Transformer attention maps learn contacts" in note.body  # the record's abstract, not the layout's
    text = (note.path.parent / str(meta.source_file)).read_text(encoding="utf-8")
    assert "Attention maps of protein language models capture contacts" in text  # the PDF's full text is kept
    assert RecordedLookups.agents and all(a.endswith("(mailto:lab@example.org)") for a in RecordedLookups.agents)
    papers, home = kb_dirs
    shown = run_kb(papers, home, "show", note.id)
    assert "title: crossref" in shown.stdout and "affiliations: openalex" in shown.stdout


def test_without_an_openalex_record_affiliations_come_from_the_layout(
        kb_dirs: tuple[Path, Path], preprint: Path, lookups: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_OPENALEX_API_URL", f"{lookups}/not-openalex")  # every OpenAlex request: 404
    note, err = _add(kb_dirs, str(preprint))
    assert note is not None, err
    assert [(a.name, a.affiliation) for a in note.meta.authors] == [
        ("Roshan Rao", BERKELEY), ("Joshua Meier", BERKELEY), ("Tom Sercu", "Unknown"),
        ("Sergey Ovchinnikov", "Unknown"), ("Alexander Rives", BERKELEY)]
    sources = note.meta.field_sources or {}
    assert sources["affiliations"].value == "layout" and sources["title"].value == "crossref"
    assert "not looked up on OpenAlex" in err


def test_a_429_is_waited_out_and_the_answer_cached(kb_dirs: tuple[Path, Path], preprint: Path, lookups: str) -> None:
    RecordedLookups.throttle = {"crossref": 1}  # 'Retry-After: 1', then the record
    started = time.monotonic()
    note, err = _add(kb_dirs, str(preprint))
    assert note is not None and note.meta.title == TITLE, err
    assert len(_crossref_requests()) == 2 and time.monotonic() - started >= 1.0
    # The same paper again: refused as a duplicate, and Crossref is not asked again (the answer is cached).
    again, err = _add(kb_dirs, str(preprint))
    assert again is None and "already used" in err
    assert len(_crossref_requests()) == 2


def test_a_429_past_the_longest_wait_leaves_the_layout_saying_why(
        kb_dirs: tuple[Path, Path], preprint: Path, lookups: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_LOOKUP_MAX_WAIT", "0.5")
    RecordedLookups.throttle = {"crossref": 5}
    note, err = _add(kb_dirs, str(preprint))
    assert note is not None, err
    assert [a.name for a in note.meta.authors] == ["Roshan Rao", "Joshua Meier", "Alexander Rives"]
    assert f"doi:{DOI} not looked up online" in err and "HTTP 429" in err
    assert len(_crossref_requests()) == 1


def test_offline_the_layout_alone_with_one_line_saying_so(
        kb_dirs: tuple[Path, Path], preprint: Path, lookups: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_OFFLINE", "1")
    note, err = _add(kb_dirs, str(preprint))
    assert note is not None, err
    assert RecordedLookups.requests == []
    notes = [line for line in err.splitlines() if "not looked up online" in line]
    assert notes == [f"note: doi:{DOI} not looked up online: offline (KB_OFFLINE=1); the fields are the PDF "
                     "layout's"]
    meta = note.meta
    assert meta.title == TITLE and [a.name for a in meta.authors] == ["Roshan Rao", "Joshua Meier", "Alexander Rives"]
    assert {v.value for v in (meta.field_sources or {}).values()} == {"layout"}
    # the year and the server the stamp states ('this version posted December 15, 2020'), nothing guessed
    assert meta.publication and (meta.publication.venue, meta.publication.year) == ("bioRxiv", 2020)


def test_an_unreachable_service_leaves_the_layout_saying_why(
        kb_dirs: tuple[Path, Path], preprint: Path, lookups: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_CROSSREF_API_URL", f"http://127.0.0.1:{free_port()}")  # connection refused
    note, err = _add(kb_dirs, str(preprint))
    assert note is not None, err
    assert "not looked up online (doi " in err and "Crossref is unreachable" in err
    assert not any(r.startswith("/openalex") for r in RecordedLookups.requests)  # offline: no more tries


def test_template_dois_are_never_stored_and_two_such_papers_keep_apart(kb_dirs: tuple[Path, Path],
                                                                       tmp_path: Path) -> None:
    header = "Journal of Statistical Software, MMMMMM YYYY, Volume VV, Issue II. doi: 10.18637/jss.v000.i00"
    first = make_article_pdf(tmp_path / "a.pdf", "Sparse Models in R", header, "Ann Smith and Bo Chen", BERKELEY)
    second = make_article_pdf(tmp_path / "b.pdf", "Sparse Models in R", header, "Carla Diaz", "Harvard University")
    one, err = _add(kb_dirs, str(first))
    assert one is not None, err
    assert one.meta.paper_id == "title:sparse-models-in-r" and one.meta.publication
    assert one.meta.publication.doi is None
    two, err = _add(kb_dirs, str(second))  # same title slug, other authors: another paper, another id
    assert two is not None, err
    assert two.meta.paper_id == "title:sparse-models-in-r-2" and two.meta.publication
    assert two.meta.publication.doi is None
    assert "paper_id 'title:sparse-models-in-r' is another paper's" in err and "'title:sparse-models-in-r-2'" in err
    assert "- **Paper ID**: title:sparse-models-in-r-2" in two.body
    again, err = _add(kb_dirs, str(first))  # the first paper again: a duplicate, refused
    assert again is None and "already used by note" in err


def test_bibtex_abstract_goes_into_the_new_note_and_a_collision_gets_its_own_id(kb_dirs: tuple[Path, Path],
                                                                                tmp_path: Path) -> None:
    bib = tmp_path / "a.bib"
    bib.write_text("@article{a, title = {Depth of PLMs}, author = {Smith, Ann}, year = {2025}, doi = "
                   "{10.5555/12345678}, abstract = {We train 12 layers.}}\n", encoding="utf-8")
    note, err = _add(kb_dirs, str(bib))
    assert note is not None, err
    assert "DOI 10.5555/12345678 left out" in err and note.meta.publication and note.meta.publication.doi is None
    assert "## Abstract\n\nWe train 12 layers.\n\n## " in note.body
    assert {k: v.value for k, v in (note.meta.field_sources or {}).items()} == {
        "title": "bibtex", "authors": "bibtex", "year": "bibtex", "abstract": "bibtex"}
    other = tmp_path / "b.bib"
    other.write_text("@article{b, title = {Depth of PLMs}, author = {Jones, Bo}, year = {2024}}\n", encoding="utf-8")
    second, err = _add(kb_dirs, str(other))
    assert second is not None and second.meta.paper_id == "title:depth-of-plms-2", err
    assert "## Abstract" not in second.body  # no abstract known: no empty heading


@pytest.mark.parametrize(("doi", "placeholder"), [
    ("10.18637/jss.v000.i00", True), ("10.18637/jss.v011.i10", False), ("10.32614/RJ-20XX-XXX", True),
    ("10.32614/RJ-2015-012", False), ("10.xxxx/abc.123", True), ("https://doi.org/10.1126/science.ade2574", False),
    ("10.5555/12345678", True), ("10.1016/j.neuron.2020.01.001", False)])
def test_placeholder_dois_are_told_from_real_ones(doi: str, placeholder: bool) -> None:
    assert (placeholder_doi(doi) is not None) is placeholder


def test_pdf_identifiers_come_from_xmp_document_info_and_links(tmp_path: Path) -> None:
    from fpdf import FPDF

    from kb.papers.pdf_child import read_article_bounded
    from kb.papers.pdf_ids import PdfIdentifiers

    pdf = FPDF()
    pdf.set_xmp_metadata('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/'
                         '22-rdf-syntax-ns#"><rdf:Description xmlns:prism="http://prismstandard.org/namespaces/'
                         f'basic/2.0/"><prism:doi>{DOI}</prism:doi></rdf:Description></rdf:RDF></x:xmpmeta>')
    pdf.set_subject("Preprint arXiv:2602.21750")
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.cell(0, 6, "A paper. doi: 10.18637/jss.v000.i00", new_x="LMARGIN", new_y="NEXT")  # a template's
    pdf.cell(0, 6, "Published version", link="https://doi.org/10.1126/science.ade2574")
    pdf.output(str(tmp_path / "ids.pdf"))
    article = read_article_bounded(tmp_path / "ids.pdf")
    assert (article.doi, article.arxiv_id) == (DOI, "2602.21750")  # XMP over the printed template and the link
    # Without metadata: the printed DOI when it is real, else a page-1 link's; a template never.
    links = PdfIdentifiers(link_dois=["10.1126/science.ade2574"])
    assert links.doi("10.1038/s41586-021-03819-2") == "10.1038/s41586-021-03819-2"
    assert links.doi("10.18637/jss.v000.i00") == "10.1126/science.ade2574"
    assert PdfIdentifiers().doi("10.18637/jss.v000.i00") is None
