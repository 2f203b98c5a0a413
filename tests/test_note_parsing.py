"""One bad note never stops the library: each kind of broken note is invalid with a clear line, and every
other note is still indexed, listed and searchable (through the real CLI, in process)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kb.notes.files import NoteError, parse_note
from tests.helpers.cli import run_kb
from tests.helpers.parses import record_parses

GOOD = '---\npaper_id: "t:good"\ntitle: "A good note about trigrams"\ntags: [esm2]\n---\nBody.\n'

ALIAS_BOMB = ('---\npaper_id: "t:bomb"\ntitle: "bomb"\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
              'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n'
              'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n'
              'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n'
              'h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n---\n')

# name -> (file bytes, what the one-line error must say)
BAD: dict[str, tuple[bytes, str]] = {
    "impossible-date": (b'---\npaper_id: "t:date"\ntitle: "d"\ndecision_date: 2026-02-30\n---\n',
                        "day is out of range"),
    "surrogate": (b'---\npaper_id: "t:sur"\ntitle: "\\ud800"\n---\n', "lone surrogate"),
    "alias-bomb": (ALIAS_BOMB.encode(), "expands to more than"),
    "deep-nesting": (b'---\npaper_id: "t:deep"\ntitle: "deep"\nx: ' + b"[" * 3000 + b"]" * 3000 + b"\n---\n",
                     "nests more than"),
    "utf16": ('---\npaper_id: "t:u16"\ntitle: "u"\n---\n'.encode("utf-16"), "UTF-16"),
    "no-closing-fence": (b'---\npaper_id: "t:open"\ntitle: "open"\n\n# Heading\n\nThis paper shows that deep PLMs '
                         b"waste layers.\n\n---\n\nMore body.\n", "missing closing '---'"),
    "bool-score": (b'---\npaper_id: "t:bool"\ntitle: "b"\nquality_score: true\njournal_tier: true\n---\n',
                   "yes/no value"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_parse_note_turns_each_bad_note_into_one_clear_error(name: str, tmp_path: Path) -> None:
    raw, expected = BAD[name]
    t0 = time.perf_counter()
    with pytest.raises(NoteError) as info:
        parse_note(raw, tmp_path / f"{name}.md")
    assert time.perf_counter() - t0 < 5, "a hostile note is refused quickly"
    message = str(info.value)
    assert expected in message and f"{name}.md" in message and "\n" not in message, message


def test_impossible_date_and_surrogate_errors_name_their_line(tmp_path: Path) -> None:
    with pytest.raises(NoteError) as date:
        parse_note(BAD["impossible-date"][0], tmp_path / "d.md")
    assert date.value.line == 4
    with pytest.raises(NoteError) as surrogate:
        parse_note(BAD["surrogate"][0], tmp_path / "s.md")
    assert surrogate.value.line == 3 and surrogate.value.field == "title"


def test_every_other_note_is_indexed_listed_and_searchable(tmp_path: Path) -> None:
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    (papers / "good.md").write_text(GOOD, encoding="utf-8")
    for name, (raw, _) in BAD.items():
        (papers / f"{name}.md").write_bytes(raw)

    indexed = run_kb(papers, home, "index")
    assert "Traceback" not in indexed.stderr, indexed.stderr
    for name, (_, expected) in BAD.items():
        assert f"{name}.md" in indexed.stderr + indexed.stdout and expected in indexed.stderr + indexed.stdout, name

    listed = run_kb(papers, home, "list", "--json")
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    assert [row["id"] for row in json.loads(listed.stdout)] == ["good"]

    found = run_kb(papers, home, "search", "trigrams", "--json")
    assert found.returncode == 0 and [hit["id"] for hit in json.loads(found.stdout)] == ["good"], found.stderr

    validated = run_kb(papers, home, "validate", str(papers))
    assert validated.returncode == 1 and "Traceback" not in validated.stderr
    assert validated.stderr.count("error") >= len(BAD)


def test_a_frontmatter_is_parsed_once_per_text_and_the_kept_parses_stay_bounded(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Parses are shared by text (issue 40): the same text read from any note, by any reader, is one parse;
    a failed parse is never kept (each reader gets its own error, naming its file); the kept parses hold at
    most ``max_chars`` of text, least recently used dropped first; an edit's old text is forgotten."""
    from kb.notes import files

    monkeypatch.setattr(files.PARSE_CACHE, "max_chars", 1000)
    parsed = record_parses(monkeypatch)
    texts = [f"title: 'kept {tmp_path.name[:20]} {n:02d}'\npaper_id: 'p:{n:02d}'\n".ljust(99, "#") + "\n"
             for n in range(16)]  # 100 characters each: ten fit in 1,000
    first = files.parse_yaml(texts[0], tmp_path / "a.md")
    assert files.parse_yaml(texts[0], tmp_path / "b.md") is first and parsed == [texts[0]]
    assert files.plain_data(first.data)["paper_id"] == "p:00"
    for path in ("a.md", "b.md"):
        with pytest.raises(files.NoteError, match=f"{path}.*malformed YAML"):
            files.parse_yaml("title: [unclosed\n", tmp_path / path)
    assert parsed.count("title: [unclosed\n") == 2
    parsed.clear()
    for text in texts:
        files.parse_yaml(text, tmp_path / "a.md")
    files.parse_yaml(texts[-1], tmp_path / "a.md")
    assert parsed == texts[1:]  # texts[0] was still kept; the last is kept
    parsed.clear()
    files.parse_yaml(texts[0], tmp_path / "a.md")  # dropped by now: the oldest
    files.forget_yaml(texts[-1])
    files.parse_yaml(texts[-1], tmp_path / "a.md")
    assert parsed == [texts[0], texts[-1]]
