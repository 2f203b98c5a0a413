"""Citations out (``kb export --bibtex|--csl-json``): stable keys written into notes once, and entries that
``kb add`` reads back into the same fields, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kb.notes.files import read_note
from kb.notes.locks import creation_lock
from kb.papers.bibtex import NameParts, bibtex_name, read_names, split_name
from kb.papers.cite import propose_citekey
from schemas.note import PaperNote
from tests.helpers.cli import run_kb
from tests.helpers.parses import record_parses

# Accents as LaTeX, braces protecting case, specials escaped, 'von' and 'Jr' parts, a two-word family name.
BIB = r"""
@article{waals1873,
  title = {On the {C}ontinuity of the Gaseous and Liquid States: {M}{\"u}ller's 50\% \& more},
  author = {van der Waals, Jr., Johannes Diderik and M{\"u}ller, J{\"o}rg and Karimi Mamaghan, Amir Mohammad
            and King, Jr, Martin Luther and Ludwig van Beethoven and {\'E}mile Zola},
  journal = {Annalen der Physik {\&} Chemie},
  year = {1999},
  doi = {10.5281/zenodo.7_123},
  url = {https://example.org/a_b?c=1%20d},
  abstract = {A ~study of $x$ and {braces} \{kept\} with caf\'e.},
  keywords = {thermodynamics; phase-transitions, gases},
}
@misc{siji2026,
  title = {From Words to Amino Acids: Does the {Curse} of Depth Persist?},
  author = {Siji, Aleena and Bauer, Stefan},
  year = {2026},
  eprint = {2602.21750},
  archivePrefix = {arXiv},
}
"""


def _notes(papers: Path) -> dict[str, Any]:
    """Each note's frontmatter (as data) and its source text, keyed by paper_id."""
    found = {}
    for path in papers.glob("*.md"):
        note = read_note(path)
        source = (papers / note.meta.source_file).read_text(encoding="utf-8") if note.meta.source_file else None
        fields = note.meta.model_dump(mode="json", exclude={"source_file", "field_sources"})  # the paper's, not how
        found[note.meta.paper_id] = (fields, source)
    return found


def _library(tmp_path: Path, name: str) -> tuple[Path, Path]:
    papers = tmp_path / name
    papers.mkdir()
    return papers, tmp_path / f"{name}-home"


@pytest.mark.parametrize("fmt, suffix", [("--bibtex", ".bib"), ("--csl-json", ".json")])
def test_export_round_trips_through_add_field_by_field(tmp_path: Path, fmt: str, suffix: str) -> None:
    first = _library(tmp_path, "first")
    bib = tmp_path / "in.bib"
    bib.write_text(BIB, encoding="utf-8")
    added = run_kb(*first, "add", str(bib), "--tag", "from-bib")
    assert added.returncode == 0, added.stderr
    before = _notes(first[0])
    waals, _ = before["doi:10.5281/zenodo.7_123"]
    # What the importer made of the LaTeX, checked against the values written out here.
    assert waals["title"] == "On the Continuity of the Gaseous and Liquid States: Müller's 50% & more"
    assert [(a["name"], a.get("family")) for a in waals["authors"]] == [
        ("Johannes Diderik van der Waals, Jr.", None), ("Jörg Müller", None),
        ("Amir Mohammad Karimi Mamaghan", "Karimi Mamaghan"), ("Martin Luther King, Jr", None),
        ("Ludwig van Beethoven", None), ("Émile Zola", None)]
    assert waals["publication"] == {"venue": "Annalen der Physik & Chemie", "year": 1999, "arxiv_id": None,
                                    "doi": "10.5281/zenodo.7_123"}
    assert waals["urls"]["paper_url"] == "https://example.org/a_b?c=1%20d"
    assert waals["citekey"] == "waals1873"  # the file's key is kept
    assert waals["tags"] == ["thermodynamics", "phase-transitions", "gases", "from-bib"]  # the entry's and --tag

    exported = tmp_path / f"out{suffix}"
    result = run_kb(*first, "export", fmt, "-o", str(exported))
    assert result.returncode == 0, result.stderr
    second = _library(tmp_path, "second")
    readded = run_kb(*second, "add", str(exported))
    assert readded.returncode == 0, readded.stderr
    after = _notes(second[0])
    assert after.keys() == before.keys()
    for paper_id, (meta, source) in before.items():
        for field, value in meta.items():  # field by field, so a failure names the field
            assert after[paper_id][0][field] == value, (paper_id, field)
        assert after[paper_id][1] == source, paper_id
    assert before["doi:10.5281/zenodo.7_123"][1] == "A study of x and braces {kept} with café.\n"


def test_export_csl_json_follows_the_schema(tmp_path: Path) -> None:
    library = _library(tmp_path, "lib")
    bib = tmp_path / "in.bib"
    bib.write_text(BIB, encoding="utf-8")
    assert run_kb(*library, "add", str(bib)).returncode == 0
    result = run_kb(*library, "export", "--csl-json", "--tag", "nothing-has-this")
    assert result.returncode == 0 and json.loads(result.stdout) == []
    result = run_kb(*library, "export", "--csl-json")
    items = {item["id"]: item for item in json.loads(result.stdout)}
    assert items["waals1873"]["type"] == "article-journal"
    assert items["waals1873"]["author"][0] == {"family": "Waals", "given": "Johannes Diderik",
                                               "non-dropping-particle": "van der", "suffix": "Jr."}
    assert items["waals1873"]["issued"] == {"date-parts": [[1999]]}
    assert items["waals1873"]["container-title"] == "Annalen der Physik & Chemie"
    assert items["siji2026"]["number"] == "arXiv:2602.21750" and "container-title" not in items["siji2026"]


NOTE = """---
paper_id: "x:{n}"
title: "{title}"
authors:
  - name: "{author}"
# a comment the export must keep
publication: {{year: {year}}}
---
Body {n} stays.
"""


def _write(papers: Path, n: int, title: str, author: str, year: int) -> Path:
    path = papers / f"note-{n}.md"
    path.write_text(NOTE.format(n=n, title=title, author=author, year=year), encoding="utf-8")
    return path


def test_export_writes_each_key_once_and_never_rewrites_it(tmp_path: Path) -> None:
    papers, home = _library(tmp_path, "lib")
    paths = [_write(papers, 1, "Deep protein models", "Tobias Höppe", 2024),
             _write(papers, 2, "The deep end", "Anna Höppe", 2024),
             _write(papers, 3, "Deep again", "Tobias Hoppe", 2024),
             _write(papers, 4, "Unwritten", "Ludwig van Beethoven", 2025)]
    before = [p.read_bytes() for p in paths]
    result = run_kb(papers, home, "export", "--bibtex", "note-1", "note-2", "note-3")
    assert result.returncode == 0, result.stderr
    keys = [read_note(p).meta.citekey for p in paths]
    assert keys == ["hoppe2024", "hoppe2024deep", "hoppe2024deepa", None]
    for path, old, key in zip(paths[:3], before[:3], keys[:3], strict=True):  # one line added, every other byte kept
        assert path.read_bytes() == old.replace(b"---\nBody", f'citekey: "{key}"\n---\nBody'.encode())
    assert "@misc{hoppe2024deep,\n" in result.stdout and "author = {Höppe, Anna}" in result.stdout
    assert paths[3].read_bytes() == before[3]  # not exported: not touched
    # A key once set is never rewritten: by the next export, nor when the user changes it by hand.
    written = paths[0].read_bytes()
    assert run_kb(papers, home, "export", "--bibtex").returncode == 0
    assert paths[0].read_bytes() == written and read_note(paths[3]).meta.citekey == "beethoven2025"
    assert run_kb(papers, home, "set", "note-2", "citekey=mine:2024").returncode == 0
    assert "@misc{mine:2024," in run_kb(papers, home, "export", "--bibtex", "note-2").stdout


def test_export_refuses_two_notes_with_one_key_and_bad_options(tmp_path: Path) -> None:
    papers, home = _library(tmp_path, "lib")
    for n in (1, 2):
        path = _write(papers, n, "Same key", "A B", 2020)
        path.write_text(path.read_text().replace("---\nBody", 'citekey: "Same2020"\n---\nBody'))
    result = run_kb(papers, home, "export", "--bibtex")
    assert result.returncode == 1 and "note-1" in result.stderr and "note-2" in result.stderr
    assert "citekey" in result.stderr
    assert run_kb(papers, home, "export", "note-1").returncode == 2  # neither format
    assert run_kb(papers, home, "export", "--bibtex", "--csl-json").returncode == 2
    missing = run_kb(papers, home, "export", "--bibtex", "no-such-note")
    assert missing.returncode == 1 and "no-such-note" in missing.stderr and "kb list" in missing.stderr
    bad = _write(papers, 3, "Bad key", "A B", 2020)
    bad.write_text(bad.read_text().replace("---\nBody", 'citekey: "has space"\n---\nBody'))
    assert run_kb(papers, home, "validate", str(bad)).returncode == 1


def test_add_leaves_out_a_key_another_note_has(tmp_path: Path) -> None:
    papers, home = _library(tmp_path, "lib")
    path = _write(papers, 1, "Taken", "A B", 2020)
    path.write_text(path.read_text().replace("---\nBody", 'citekey: "siji2026"\n---\nBody'))
    bib = tmp_path / "in.bib"
    bib.write_text(BIB, encoding="utf-8")
    assert run_kb(papers, home, "add", str(bib)).returncode == 0
    keys = sorted(str(read_note(p).meta.citekey) for p in papers.glob("*.md"))
    assert keys == ["None", "siji2026", "waals1873"]


def test_names_split_by_bibtex_rules_and_written_back_whole() -> None:
    names = read_names(r"de la Fontaine, Jean and {Barnes and Noble} and Doe, John and others")
    assert names == [NameParts("Jean", "de la", "Fontaine", ""), NameParts("", "", "Barnes and Noble", ""),
                     NameParts("John", "", "Doe", "")]
    for parts in names:
        assert read_names(bibtex_name(parts)) == [parts]
    assert split_name("Vincent Van Gogh", "Van Gogh") == NameParts("Vincent", "", "Van Gogh", "")


def test_propose_citekey_without_author_or_year() -> None:
    meta = PaperNote(paper_id="x", title="The  Ångström scale")
    assert propose_citekey(meta, set()) == "anonnd"
    assert propose_citekey(meta, {"anonnd"}) == "anonndangstrom"
    assert propose_citekey(meta, {"anonnd", "anonndangstrom", "anonndangstroma"}) == "anonndangstromb"


def test_export_names_the_notes_it_could_not_read(tmp_path: Path) -> None:
    papers, home = _library(tmp_path, "lib")
    _write(papers, 1, "Fine", "A B", 2020)
    (papers / "broken.md").write_text('---\npaper_id: "x:b"\ntitle: [unclosed\n---\n', encoding="utf-8")
    result = run_kb(papers, home, "export", "--bibtex")
    assert result.returncode == 0 and result.stdout.startswith("@misc{b2020,")
    assert [line for line in result.stderr.splitlines() if "not exported" in line][0].startswith(
        f"warning: not exported: {papers / 'broken.md'}")


def test_export_gives_keys_only_under_the_folders_creation_lock(tmp_path: Path) -> None:
    """Reading the keys in use and writing a new one is one step for the whole folder (the lock ``kb add`` takes
    to check a paper_id free), so two exports at once never hand out one key twice: while another holds the
    lock, an export waits, and past the timeout gives up having written nothing."""
    papers, home = _library(tmp_path, "lib")
    path = _write(papers, 1, "Paper", "Ann Lee", 2021)
    before = path.read_bytes()
    with creation_lock(papers, timeout=5):
        result = run_kb(papers, home, "export", "--bibtex", env={"KB_NOTE_LOCK_TIMEOUT": "0.5"})
    assert result.returncode == 1 and "lock" in result.stderr and result.stdout == ""
    assert path.read_bytes() == before
    assert run_kb(papers, home, "export", "--bibtex").stdout.startswith("@misc{lee2021,")


def test_an_export_of_many_notes_scans_the_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each key written finds its note in one scan of the notes folder made for the whole export (a scan per
    note made 1,000 notes take ~70 s), each still written under its lock: 30 notes named, keys written to all."""
    from kb.notes import files

    papers, home = _library(tmp_path, "lib")
    paths = [_write(papers, n, f"Scan {n}", "Ada Lovelace", 2000 + n % 7) for n in range(30)]
    assert run_kb(papers, home, "index").returncode == 0
    scans: list[Path] = []
    real = files.find_notes
    monkeypatch.setattr(files, "find_notes", lambda folder: scans.append(folder) or real(folder))
    result = run_kb(papers, home, "export", "--bibtex", *(p.stem for p in paths))
    assert result.returncode == 0, result.stderr
    keys = [read_note(p).meta.citekey for p in paths]
    assert all(keys) and len({k.casefold() for k in keys if k}) == len(paths)
    assert result.stdout.count("\n@") + 1 == len(paths)
    # One scan checking the ids given, one for the keys written: never one per note.
    assert len(scans) == 2, scans


def test_a_first_export_parses_each_note_at_most_once_and_its_keyed_text_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 40: the first export of 1,000 notes without keys took 3.85 times a cold index, nearly all of it
    parsing each note's YAML five times (the export's read, the edit's read under the lock, its own parse and
    walk, the result's validation). Now no text is parsed twice in the export: each note at most once (not at
    all when this process has just parsed it) and its text with the key once, which the index then reuses."""
    papers, home = _library(tmp_path, "lib")
    paths = [_write(papers, n, f"Parsed once {tmp_path.name} {n}", "Ada Lovelace", 2000 + n) for n in range(6)]
    assert run_kb(papers, home, "index").returncode == 0
    parsed = record_parses(monkeypatch)
    result = run_kb(papers, home, "export", "--bibtex")
    assert result.returncode == 0, result.stderr
    keyed = [p.read_text(encoding="utf-8").split("---\n", 2)[1] for p in paths]
    assert all("\ncitekey: " in text for text in keyed)
    assert len(parsed) == len(set(parsed)) <= 2 * len(paths), len(parsed)
    assert set(keyed) <= set(parsed)
