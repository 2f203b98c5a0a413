"""GROBID as the reader of a PDF's header (``KB_GROBID_URL``): its TEI parsed into a record, and ``kb add
FILE.pdf`` with GROBID's fields over the layout rules', the layout filling what GROBID leaves empty and the
identifier lookups (Crossref) first over both, each field saying where it came from; offline, down, busy or
answering something else, one line and the layout alone.

The answers are real GROBID output from public repositories (``tests/fixtures/grobid/README.md``), served on
loopback (``tests/helpers/grobid.py``); each test's expected values were written by reading the TEI first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.notes.files import Note, read_note
from kb.papers.add import AddError
from kb.papers.grobid import MAX_ANSWER_BYTES, parse_tei
from tests.helpers.article_pdf import BERKELEY, PREPRINT_DOI, PREPRINT_TITLE, make_preprint_pdf
from tests.helpers.benchmarks import load_benchmark
from tests.helpers.cli import run_kb
from tests.helpers.grobid import FIXTURES, MAML_AUTHORS, MAML_TITLE, RecordedGrobid, form, make_maml_pdf
from tests.helpers.lookups import RecordedLookups
from tests.servers import free_port

MAML_ABSTRACT = "We propose an algorithm for meta-learning that is model-agnostic, in the sense that"


def _tei(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


# -- the TEI, read: values written from each file before the parser ran ---------------------------------------

def test_a_header_answer_gives_title_authors_and_abstract() -> None:
    record = parse_tei(_tei("mmda-maml-header.tei.xml"))  # processHeaderDocument, GROBID 0.7.0
    assert record.title == MAML_TITLE
    assert record.authors == [(name, None) for name in MAML_AUTHORS]  # no affiliation read
    assert (record.year, record.venue, record.doi, record.arxiv_id) == (None, None, None, None)  # '<date/>'
    assert record.abstract is not None and record.abstract.startswith(MAML_ABSTRACT)
    assert record.abstract.endswith("for policy gradient reinforcement learning with neural network policies.")
    assert record.sources() == {"title": "grobid", "authors": "grobid", "abstract": "grobid"}


def test_a_full_text_header_gives_institutions_year_venue_and_doi() -> None:
    record = parse_tei(_tei("grobid-client-0046d83a-fulltext.tei.xml"))  # GROBID 0.6.2
    assert record.title == ("Multi-contact functional electrical stimulation for hand opening: "
                            "electrophysiologically driven identification of the optimal stimulation site")
    tuebingen = "Eberhard Karls University"  # the institution orgName: not its departments, not its address
    assert record.authors == [("Cristiano De Marchis", tuebingen), ("Thiago Santos Monteiro", None),
                              ("Cristina Simon-Martinez", tuebingen), ("Silvia Conforto", tuebingen),
                              ("Alireza Gharabaghi", tuebingen)]
    # GROBID's surname where the printed name alone would split otherwise ('De Marchis', not 'Marchis')
    assert record.families == ["De Marchis", "Santos Monteiro", None, None, None]
    assert (record.year, record.venue, record.doi) == (2016, "Journal of NeuroEngineering and Rehabilitation",
                                                       "10.1186/s12984-016-0129-6")
    assert record.abstract is not None
    assert record.abstract.startswith("Background: Functional Electrical Stimulation (FES) is increasingly")


def test_an_arxiv_idno_a_published_date_and_sentences() -> None:
    record = parse_tei(_tei("mmda-e5910c02-fulltext.tei.xml"))  # GROBID 0.7.2, sentence-segmented
    assert record.title == ("Generalizing Deep Models for Overhead Image Segmentation Through Getis-Ord Gi* "
                            "Pooling")
    # 'U C Merced' is the university GROBID took for a name: kb keeps what GROBID read, in order
    assert [name for name, _ in record.authors] == ["Xueqing Deng", "U C Merced", "Yi Zhu", "Shawn Newsam"]
    assert (record.arxiv_id, record.year, record.doi) == ("1912.10667", 2019, None)  # 'arXiv:1912.10667v1[cs.CV]'
    assert record.abstract is not None and record.abstract.startswith(
        "That most deep learning models are purely data driven is both a strength and a weakness. Given "
        "sufficient training data")  # the sentences one space apart


def test_authors_without_a_name_are_left_out_and_the_doi_kept() -> None:
    record = parse_tei(_tei("colrev-wagner2022-fulltext.tei.xml"))  # GROBID 0.8.2, consolidateHeader=0
    assert record.title == "Artificial intelligence and the conduct of literature reviews"
    # the two affiliations GROBID set as 'authors' of their own (no persName) are not people
    assert record.authors == [("Gerit Wagner", None), ("Roman Lukyanenko", None), ("Guy Par", None),
                              ("Guy Paré", None)]
    assert (record.doi, record.year, record.venue) == ("10.1177/02683962211048201", None, None)
    assert record.abstract is not None and record.abstract.startswith(
        "Artificial intelligence (AI) is beginning to transform traditional research practices")


def test_a_template_doi_from_grobid_is_never_kept() -> None:
    # the real answer with its DOI replaced by JSS's template DOI
    tei = _tei("colrev-wagner2022-fulltext.tei.xml").replace(b"10.1177/02683962211048201", b"10.18637/jss.v000.i00")
    record = parse_tei(tei)
    assert record.doi is None and any("DOI 10.18637/jss.v000.i00 left out" in n for n in record.notices)


@pytest.mark.parametrize(("answer", "why"), [
    (b"", "no header"), (b"<TEI", "not XML"), (b"<html><body>Bad gateway</body></html>", "not its TEI"),
    (b'<?xml version="1.0"?><!DOCTYPE TEI [<!ENTITY a "aaaa">]><TEI/>', "declares a DOCTYPE")])
def test_what_is_not_grobid_tei_is_one_line(answer: bytes, why: str) -> None:
    with pytest.raises(AddError, match=why) as caught:
        parse_tei(answer)
    assert "\n" not in str(caught.value)


# -- kb add, against the loopback GROBID -------------------------------------------------------------------

def _add(kb_dirs: tuple[Path, Path], pdf: Path) -> tuple[Note | None, str]:
    papers, home = kb_dirs
    done = run_kb(papers, home, "add", str(pdf), "--json")
    rows = json.loads(done.stdout) if done.returncode == 0 else []
    return (read_note(Path(rows[0]["path"])) if rows else None), done.stderr


@pytest.fixture
def maml_pdf(tmp_path: Path) -> Path:
    return make_maml_pdf(tmp_path / "maml.pdf")


def _sources(note: Note) -> dict[str, str]:
    return {name: source.value for name, source in (note.meta.field_sources or {}).items()}


def test_grobid_reads_the_header_and_the_layout_fills_what_it_lacks(
        kb_dirs: tuple[Path, Path], maml_pdf: Path, grobid: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_CONTACT_EMAIL", "lab@example.org")
    note, err = _add(kb_dirs, maml_pdf)
    assert note is not None, err
    meta = note.meta
    assert meta.title == MAML_TITLE and [a.name for a in meta.authors] == MAML_AUTHORS
    # GROBID read no affiliation, year or venue: the layout's
    assert [a.affiliation for a in meta.authors] == [BERKELEY] * 3
    assert meta.publication and (meta.publication.year, meta.publication.venue) == (
        2017, "International Conference on Machine Learning")
    assert _sources(note) == {"title": "grobid", "authors": "grobid", "abstract": "grobid",
                              "affiliations": "layout", "year": "layout", "venue": "layout"}
    assert f"## Abstract\n\n{MAML_ABSTRACT}" in note.body  # GROBID's, not the page's
    # What GROBID was sent: the PDF itself, as the form's 'input', and consolidateHeader=0
    [request] = RecordedGrobid.received
    assert request["path"] == "/api/processHeaderDocument"
    assert request["headers"]["Accept"] == "application/xml"
    assert request["headers"]["User-Agent"].endswith("(mailto:lab@example.org)")
    fields = form(request)
    assert fields["input"] == ("maml.pdf", maml_pdf.read_bytes())
    assert fields["consolidateHeader"] == (None, b"0")
    papers, home = kb_dirs
    shown = run_kb(papers, home, "show", note.id)
    assert "title: grobid" in shown.stdout and "affiliations: layout" in shown.stdout


def test_the_identifier_lookups_still_come_first(kb_dirs: tuple[Path, Path], tmp_path: Path, grobid: str,
                                                 lookups: str) -> None:
    note, err = _add(kb_dirs, make_preprint_pdf(tmp_path / "rao.pdf"))  # prints its DOI; GROBID reads MAML
    assert note is not None, err
    assert len(RecordedGrobid.received) == 1 and any(r.startswith("/works/") for r in RecordedLookups.requests)
    assert note.meta.title == PREPRINT_TITLE and note.meta.publication
    assert note.meta.publication.doi == PREPRINT_DOI  # the DOI the layout read (GROBID read none) looked up
    assert _sources(note) == {"title": "crossref", "authors": "crossref", "year": "crossref", "venue": "crossref",
                              "doi": "crossref", "affiliations": "openalex", "abstract": "crossref"}


def test_the_doi_grobid_read_is_looked_up(kb_dirs: tuple[Path, Path], maml_pdf: Path, grobid: str,
                                          lookups: str) -> None:
    RecordedGrobid.answer = _tei("colrev-wagner2022-fulltext.tei.xml")  # a DOI the page does not print
    note, err = _add(kb_dirs, maml_pdf)
    assert note is not None, err
    doi = "10.1177/02683962211048201"
    assert [r for r in RecordedLookups.requests if r.startswith("/works/")] == [f"/works/{doi}"]
    # no Crossref record for it here (404): GROBID's fields stay, and the line says whose they are
    [line] = [line for line in err.splitlines() if "not looked up online" in line]
    assert line.startswith(f"note: doi:{doi} not looked up online (doi {doi}: Crossref does not know this paper")
    assert line.endswith("the fields are GROBID's and the PDF layout's")
    assert note.meta.paper_id == f"doi:{doi}" and _sources(note)["doi"] == "grobid"


def test_grobid_down_is_one_line_and_the_layout_alone(kb_dirs: tuple[Path, Path], maml_pdf: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_GROBID_URL", f"http://127.0.0.1:{free_port()}")  # nothing listens: refused
    monkeypatch.setenv("KB_LOOKUPS", "true")
    note, err = _add(kb_dirs, maml_pdf)
    assert note is not None, err
    lines = [line for line in err.splitlines() if "GROBID" in line]
    assert len(lines) == 1 and lines[0].startswith("note: GROBID did not read the header (GROBID is unreachable (")
    assert lines[0].endswith("); the fields are the PDF layout's")
    assert note.meta.title == MAML_TITLE.upper() and set(_sources(note).values()) == {"layout"}


def test_grobid_busy_is_waited_out(kb_dirs: tuple[Path, Path], maml_pdf: Path, grobid: str) -> None:
    RecordedGrobid.busy = 1  # 503 'all threads busy' with 'Retry-After: 1', then the header
    note, err = _add(kb_dirs, maml_pdf)
    assert note is not None and note.meta.title == MAML_TITLE, err
    assert len(RecordedGrobid.received) == 2
    assert form(RecordedGrobid.received[1])["input"][1] == maml_pdf.read_bytes()  # the PDF sent again, whole


@pytest.mark.parametrize(("answer", "reason"), [
    (b"<TEI><teiHeader>", "GROBID answered something that is not XML (no element found"),
    (b"<TEI/>" + b" " * MAX_ANSWER_BYTES, "GROBID answered more than 5 MB")])
def test_a_bad_answer_is_one_line_and_the_layout_alone(kb_dirs: tuple[Path, Path], maml_pdf: Path, grobid: str,
                                                       answer: bytes, reason: str) -> None:
    RecordedGrobid.answer = answer
    note, err = _add(kb_dirs, maml_pdf)
    assert note is not None, err
    [line] = [line for line in err.splitlines() if "GROBID" in line]
    assert line.startswith(f"note: GROBID did not read the header ({reason}")
    assert note.meta.title == MAML_TITLE.upper() and set(_sources(note).values()) == {"layout"}


@pytest.mark.parametrize(("variable", "why"), [("KB_OFFLINE", "offline (KB_OFFLINE=1)"),
                                               ("KB_LOOKUPS", "lookups are off (KB_LOOKUPS=false)")])
def test_offline_grobid_is_not_asked(kb_dirs: tuple[Path, Path], maml_pdf: Path, grobid: str,
                                     monkeypatch: pytest.MonkeyPatch, variable: str, why: str) -> None:
    monkeypatch.setenv(variable, "1" if variable == "KB_OFFLINE" else "false")
    note, err = _add(kb_dirs, maml_pdf)
    assert note is not None, err
    assert RecordedGrobid.received == []
    assert f"note: GROBID not asked: {why}; the header is the PDF layout's" in err.splitlines()


# -- benchmarks/bench_add.py --grobid URL, against the loopback GROBID ---------------------------------------

def test_bench_add_measures_the_corpus_with_grobid(grobid: str, monkeypatch: pytest.MonkeyPatch) -> None:
    bench_add = load_benchmark("bench_add")
    name = "gdata-unknown"  # a short tuning article (R News, 2007); GROBID answers MAML's header for it
    if not (bench_add.CORPUS / f"{name}.pdf").exists():
        pytest.skip("the PDF corpus is missing: benchmarks/data/pdfs/")
    [with_grobid], _ = bench_add.run(grobid_url=grobid, articles={name})
    [request] = RecordedGrobid.received
    assert form(request)["input"] == (f"{name}.pdf", (bench_add.CORPUS / f"{name}.pdf").read_bytes())
    assert with_grobid["grobid"] is None  # read: the fields scored are GROBID's where it read one
    RecordedGrobid.busy = 1  # busy for longer than kb waits: the layout alone, and the row says why
    monkeypatch.setenv("KB_LOOKUP_MAX_WAIT", "0.5")
    [layout], _ = bench_add.run(grobid_url=grobid, articles={name})
    assert layout["grobid"].startswith("GROBID did not read the header (GROBID asks kb to slow down (HTTP 503")
    assert layout["title"] and not with_grobid["title"]  # MAML's title, not this article's
    assert layout["authors"] and not with_grobid["authors"] and not with_grobid["abstract"]
    # what GROBID did not read stays the layout's, scored the same
    assert all(with_grobid[f] == layout[f] for f in ("year", "venue", "doi", "arxiv_id", "ligatures"))


def test_only_an_answer_that_parses_is_kept(tmp_path: Path, maml_pdf: Path, grobid: str) -> None:
    from kb.papers.add import read_pdf
    from kb.papers.grobid import read_header
    from kb.settings import Settings

    settings, layout = Settings(home=tmp_path / "home"), read_pdf(maml_pdf)
    RecordedGrobid.answer = b"<TEI><teiHeader>"  # cut short: not kept, so the next add asks again
    assert read_header(layout, maml_pdf, settings).title == MAML_TITLE.upper()
    RecordedGrobid.answer = _tei("mmda-maml-header.tei.xml")
    assert read_header(layout, maml_pdf, settings).title == MAML_TITLE
    assert read_header(layout, maml_pdf, settings).title == MAML_TITLE  # from the cache: not uploaded again
    assert len(RecordedGrobid.received) == 2
    other = make_maml_pdf(tmp_path / "other.pdf")  # another file (its bytes differ): asked for
    other.write_bytes(other.read_bytes() + b"\n% another PDF\n")
    read_header(layout, other, settings)
    assert len(RecordedGrobid.received) == 3
