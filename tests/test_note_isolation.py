"""One bad note is one error line, never the end of the library: each case through the real CLI (in process).

A folder holds good notes beside one bad note (a ``!!binary`` value that is not UTF-8, a ``!!set``, an
impossible date, a file name that is not UTF-8). ``kb index`` reports the bad note on one line naming the file
(escaped), line and field, and exits 1 (the convention: any invalid note makes ``index`` and ``validate`` exit
1, the others are still indexed); ``kb list`` and ``kb search`` show the good notes. ``kb validate`` and
``kb index`` accept exactly the same notes. Searches kb cannot run, an index from a newer kb and a damaged
full-text table are one line and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.settings import Settings
from tests.helpers.cli import KB, run_kb, where

GOOD = {
    "good-one": 'paper_id: "g:1"\ntitle: "Good one about folding"\ntags: ["protein design", "esm"]\n',
    "good-two": 'paper_id: "g:2"\ntitle: "Good two about folding"\n',
}
# name -> (frontmatter, the line and field the error must name)
BAD = {
    "binary": ('paper_id: "b:1"\ntitle: "Binary"\nblob: !!binary |\n  //79/A==\n', ":4:", "field 'blob'"),
    "set": ('paper_id: "s:1"\ntitle: "Set"\nextra: !!set {a, b}\n', ":4:", "field 'extra'"),
    "date": ('paper_id: "d:1"\ntitle: "Date"\npublication:\n  venue: "x"\n  date: 2025-02-30\n', ":6:",
             "field 'publication.date'"),
}


def write_note(folder: Path, name: str | bytes, frontmatter: str, body: str = "Text about proteins.\n") -> None:
    raw_name = name if isinstance(name, bytes) else name.encode()
    with open(os.path.join(os.fsencode(folder), raw_name + b".md"), "wb") as handle:
        handle.write(b"---\n" + frontmatter.encode() + b"---\n" + body.encode())


def library(tmp_path: Path) -> tuple[Path, Path]:
    papers = tmp_path / "papers"
    papers.mkdir()
    for name, frontmatter in GOOD.items():
        write_note(papers, name, frontmatter)
    return papers, tmp_path / "home"


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def assert_good_notes_served(papers: Path, home: Path) -> None:
    listed = run_kb(papers, home, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(row["id"] for row in json.loads(listed.stdout)) == ["good-one", "good-two"]
    found = run_kb(papers, home, "search", "folding", "--json")
    assert found.returncode == 0, found.stderr
    assert sorted(row["id"] for row in json.loads(found.stdout)) == ["good-one", "good-two"]


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_frontmatter_is_one_line_and_the_rest_is_indexed(tmp_path: Path, case: str) -> None:
    papers, home = library(tmp_path)
    frontmatter, line, field = BAD[case]
    write_note(papers, case, frontmatter)
    indexed = run_kb(papers, home, "index")
    assert indexed.returncode == 1, indexed.stderr
    assert "Traceback" not in indexed.stderr
    (error,) = error_lines(indexed.stderr)
    assert f"{case}.md{line}" in error and field in error, error
    assert "2 added" in indexed.stdout and "1 invalid" in indexed.stdout
    assert_good_notes_served(papers, home)
    validated = run_kb(papers, home, "validate", "--json")
    assert validated.returncode == 1
    verdicts = {row["id"]: row["valid"] for row in json.loads(validated.stdout)}
    assert verdicts == {"good-one": True, "good-two": True, case: False}


def test_file_name_not_utf8_is_one_escaped_line(tmp_path: Path) -> None:
    papers, home = library(tmp_path)
    write_note(papers, b"bad-\xff-name", 'paper_id: "n:1"\ntitle: "Bad name"\n')
    indexed = run_kb(papers, home, "index")
    assert indexed.returncode == 1 and "Traceback" not in indexed.stderr
    (error,) = error_lines(indexed.stderr)
    assert "bad-\\xff-name.md" in error and "not valid UTF-8" in error, error
    assert_good_notes_served(papers, home)
    validated = run_kb(papers, home, "validate")
    assert validated.returncode == 1 and error_lines(validated.stderr) == [error]


def test_validate_accepts_exactly_what_index_indexes(tmp_path: Path) -> None:
    """The one per-note check: over a folder of odd notes, `kb validate`'s valid set is `kb index`'s indexed set."""
    papers, home = library(tmp_path)
    for name, (frontmatter, _, _) in BAD.items():
        write_note(papers, name, frontmatter)
    write_note(papers, b"odd-\xfe", 'paper_id: "o:1"\ntitle: "Odd name"\n')
    write_note(papers, "dup-paper", 'paper_id: "g:1"\ntitle: "Same paper as good-one"\n')
    (papers / "sub").mkdir()
    write_note(papers / "sub", "good-two", 'paper_id: "g:3"\ntitle: "Same id as good-two"\n')
    write_note(papers, "esc-\x1b]0;title\x07", 'paper_id: "e:1"\ntitle: "Escapes \\x1b[31m red"\n')
    write_note(papers, "loop-source", 'paper_id: "l:1"\ntitle: "Loop"\nsource_file: "loop.txt"\n')
    os.symlink("loop.txt", papers / "loop.txt")
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    valid, errors = kb.validate()
    report = kb.index()
    indexed = {paper.path for paper in kb.list_papers()}
    assert {str(note.path) for note in valid} == indexed
    assert sorted({str(e.path) for e in errors}) == sorted({str(e.path) for e in report.errors})
    # In sorted order dup-paper.md takes paper_id g:1 first; sub/good-two.md repeats the id good-two.
    assert {Path(path).stem for path in indexed} == {"dup-paper", "good-two", "esc-\x1b]0;title\x07"}
    validated = run_kb(papers, home, "validate")
    assert len(error_lines(validated.stderr)) == len(errors) and "Traceback" not in validated.stderr


def test_escape_sequences_are_shown_escaped(tmp_path: Path) -> None:
    papers, home = library(tmp_path)
    write_note(papers, "red", 'paper_id: "r:1"\ntitle: "Red \\x1b[31m folding"\n', body="Body \x1b[2J text.\n")
    write_note(papers, "title-\x1b]0;pwned\x07", 'paper_id: "t:1"\ntitle: "Named folding"\n')
    write_note(papers, "broken-\x1b[31m", 'paper_id: "t:2"\ntitle: [unclosed\n')
    outputs = [run_kb(papers, home, *args) for args in
               (["index"], ["list"], ["list", "--json"], ["search", "folding"], ["show", "red"],
                ["validate"], ["show", "title-\x1b]0;pwned\x07"])]
    for result in outputs:
        assert "\x1b" not in result.stdout and "\x1b" not in result.stderr, result.args
        assert "\x07" not in result.stdout and "\x07" not in result.stderr, result.args
    listing = outputs[1].stdout
    assert "Red \\x1b[31m folding" in listing and "title-\\x1b]0;pwned\\x07" in listing
    titles = {row["id"]: row["title"] for row in json.loads(outputs[2].stdout)}
    assert titles["red"] == "Red \x1b[31m folding"  # JSON keeps the data, escaped the JSON way
    (error,) = error_lines(outputs[0].stderr)
    assert "broken-\\x1b[31m.md:4: malformed YAML" in error
    assert "Body \\x1b[2J text." in outputs[4].stdout


def test_tag_with_a_space_stays_one_tag(tmp_path: Path) -> None:
    papers, home = library(tmp_path)
    listed = run_kb(papers, home, "list", "--json", "--tag", "protein design")
    assert [row["tags"] for row in json.loads(listed.stdout)] == [["protein design", "esm"]]


def test_searches_kb_cannot_run_are_one_line(tmp_path: Path) -> None:
    papers, home = library(tmp_path)
    long = run_kb(papers, home, "search", " ".join(f"word{i}" for i in range(1000)))
    assert long.returncode == 2 and "Traceback" not in long.stderr
    (error,) = error_lines(long.stderr)
    assert "1,000 words" in error
    # A query the terminal passed as bytes that are not UTF-8 (argv decoded with surrogateescape): raw argv
    # bytes need a process of their own.
    argv = [*KB, "search", b"fold\xffing", *where(papers, home)]
    raw = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert raw.returncode == 2 and "Traceback" not in raw.stderr
    assert "not valid UTF-8" in error_lines(raw.stderr)[0]


def test_index_from_a_newer_kb_is_one_line(tmp_path: Path) -> None:
    papers, home = library(tmp_path)
    assert run_kb(papers, home, "index").returncode == 0
    with sqlite3.connect(home / "index.sqlite") as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0999_from_the_future'")
    for args in (["list"], ["search", "folding"], ["index"]):
        result = run_kb(papers, home, *args)
        assert result.returncode == 3 and "Traceback" not in result.stderr, result.stderr
        (error,) = error_lines(result.stderr)
        assert "newer kb" in error and "0999_from_the_future" in error
    rebuilt = run_kb(papers, home, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert_good_notes_served(papers, home)


# A dropped table in the default suite; corrupted blocks (FTS5's own integrity check finds them) as a slow case.
DAMAGE = ["DROP TABLE paper_fts",
          pytest.param("UPDATE paper_fts_data SET block = x'0102030405' WHERE id > 1", marks=pytest.mark.slow)]


@pytest.mark.parametrize("damage", DAMAGE)
def test_damaged_full_text_table_says_rebuild(tmp_path: Path, damage: str) -> None:
    papers, home = library(tmp_path)
    assert run_kb(papers, home, "index").returncode == 0
    with sqlite3.connect(home / "index.sqlite") as conn:
        conn.execute(damage)
    found = run_kb(papers, home, "search", "folding")
    assert found.returncode == 3 and "Traceback" not in found.stderr, found.stderr
    (error,) = error_lines(found.stderr)
    assert "the search index is damaged: run `kb index --rebuild`" in error
    assert run_kb(papers, home, "index", "--rebuild").returncode == 0
    assert_good_notes_served(papers, home)
