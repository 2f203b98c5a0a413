"""Tests of kb.notes.files: byte-exact round trips, minimal edits, clear errors, safe writes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.notes.edits import set_fields
from kb.notes.files import (
    Note,
    NoteError,
    atomic_write_bytes,
    create_note,
    find_notes,
    import_note,
    parse_note,
    read_note,
    render_new_note,
    save_note,
    slugify,
    validate_paths,
)

SEEDS = Path(__file__).parents[1].parent / "shared/seeds"
SEED = SEEDS / "000_ce90e91fe3e899e8.txt"

GOOD = (
    b"---\n"
    b'paper_id: "arxiv:1"\n'
    b"# a comment the user wrote\n"
    b'title: "A title"\n'
    b"quality_score: 3\n"
    b'status: "analyzed"\n'
    b"publication:\n"
    b'  venue: "arXiv"\n'
    b"  year: 2024\n"
    b"custom_field: keep me  # trailing comment\n"
    b"---\n"
    b"\n# Body\n\ntext\n"
)


def _err(raw: bytes) -> NoteError:
    with pytest.raises(NoteError) as info:
        parse_note(raw, Path("papers/x.md"))
    return info.value


# --- round trips --------------------------------------------------------------------------------


@pytest.mark.skipif(not SEED.exists(), reason="shared seeds not available")
def test_read_note_seed_round_trip_byte_identical(tmp_path: Path) -> None:
    raw = SEED.read_bytes()
    note = read_note(SEED)
    assert note.raw == raw
    assert note.meta.paper_id == "arxiv:2502.00001"
    assert note.meta.extra_fields["is_zheng_shuangjia_paper"] is False
    note.path = tmp_path / "seed.md"
    save_note(note)
    assert (tmp_path / "seed.md").read_bytes() == raw


@pytest.mark.skipif(not SEEDS.exists(), reason="shared seeds not available")
def test_parse_note_all_seeds_round_trip() -> None:
    for seed in sorted(SEEDS.glob("*.txt")):
        raw = seed.read_bytes()
        try:
            note = parse_note(raw, seed)
        except NoteError:
            continue  # a seed may be deliberately bad; round trip is about the good ones
        assert note.raw == raw


@pytest.mark.skipif(not SEED.exists(), reason="shared seeds not available")
def test_set_fields_seed_status_changes_exactly_one_line() -> None:
    note = read_note(SEED)
    new = set_fields(note, {"status": "reviewed"})
    old_lines = note.raw.splitlines(keepends=True)
    new_lines = new.raw.splitlines(keepends=True)
    assert len(old_lines) == len(new_lines)
    diff = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert diff == [(b'status: "analyzed"\n', b'status: "reviewed"\n')]
    assert new.meta.status == "reviewed"
    assert SEED.read_bytes() == note.raw  # nothing written


@pytest.mark.skipif(not SEED.exists(), reason="shared seeds not available")
def test_set_fields_seed_dotted_key_changes_only_that_line() -> None:
    note = read_note(SEED)
    new = set_fields(note, {"publication.year": 2025})
    diff = [(a, b) for a, b in zip(note.raw.splitlines(), new.raw.splitlines(), strict=True) if a != b]
    assert diff == [(b"  year: 2026", b"  year: 2025")]
    assert new.meta.year == 2025


def test_parse_note_bom_crlf_comments_kept() -> None:
    raw = b"\xef\xbb\xbf" + GOOD.replace(b"\n", b"\r\n")
    note = parse_note(raw, Path("x.md"))
    assert note.raw == raw
    assert note.meta.title == "A title"
    assert note.body.startswith("\r\n# Body")
    assert note.id == "x"
    assert len(note.content_hash) == 64
    new = set_fields(note, {"quality_score": 5, "tags": ["a", "b"]})
    assert new.raw.startswith(b"\xef\xbb\xbf---\r\n")
    assert b"quality_score: 5\r\n" in new.raw
    assert b'tags:\r\n  - "a"\r\n  - "b"\r\n---\r\n' in new.raw
    assert b"\n" not in new.raw.replace(b"\r\n", b"")
    assert b"# a comment the user wrote\r\n" in new.raw
    assert b"custom_field: keep me  # trailing comment\r\n" in new.raw


def test_parse_note_unquoted_date_accepted() -> None:
    raw = GOOD.replace(b"quality_score: 3\n", b"quality_score: 3\ndecision_date: 2026-02-28\n")
    assert parse_note(raw, Path("x.md")).meta.decision_date == dt.date(2026, 2, 28)


_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85"),
    min_size=1,
    max_size=30,
).filter(lambda s: s.strip() != "")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    title=_text,
    score=st.integers(1, 5),
    tags=st.lists(_text, max_size=3),
    extra=st.one_of(st.none(), st.booleans(), st.integers(), _text),
    crlf=st.booleans(),
    bom=st.booleans(),
    body=st.text(max_size=50),
)
def test_parse_note_property_round_trip(
    tmp_path_factory: pytest.TempPathFactory,
    title: str,
    score: int,
    tags: list[str],
    extra: object,
    crlf: bool,
    bom: bool,
    body: str,
) -> None:
    raw = render_new_note(
        {"paper_id": "p:1", "title": title, "quality_score": score, "tags": tags, "extra": extra}, body
    )
    if crlf:
        raw = raw.replace(b"\n", b"\r\n")
    if bom:
        raw = b"\xef\xbb\xbf" + raw
    note = parse_note(raw, Path("x.md"))
    assert note.meta.title == title
    assert note.meta.tags == tags
    assert note.meta.extra_fields["extra"] == extra
    out = tmp_path_factory.mktemp("rt") / "x.md"
    note.path = out
    save_note(note)
    assert out.read_bytes() == raw


@settings(max_examples=40, deadline=None)
@given(
    field=st.sampled_from(["title", "analyst", "quality_score", "status", "publication.year", "tags", "new"]),
    crlf=st.booleans(),
    data=st.data(),
)
def test_set_fields_property_new_value_other_lines_unchanged(field: str, crlf: bool, data: st.DataObject) -> None:
    values = {
        "title": _text,
        "analyst": _text,
        "quality_score": st.integers(1, 5),
        "status": st.sampled_from(["inbox", "reading", "archived"]),
        "publication.year": st.integers(1900, 2100),
        "tags": st.lists(_text, max_size=3),
        "new": st.one_of(_text, st.integers(), st.none()),
    }
    value = data.draw(values[field])
    raw = GOOD.replace(b"\n", b"\r\n") if crlf else GOOD
    note = parse_note(raw, Path("x.md"))
    new = parse_note(set_fields(note, {field: value}).raw, Path("x.md"))
    got: object = new.meta
    for part in field.split("."):
        got = getattr(got, part) if hasattr(got, part) else new.meta.extra_fields[part]
    assert getattr(got, "value", got) == value
    # Every line not belonging to the edited top-level key is unchanged and in order.
    top = field.split(".")[0]

    def others(b: bytes) -> list[bytes]:
        fm, _, body = b.partition(b"\n---")
        lines = fm.splitlines() + [body]
        out, inside = [], False
        for line in lines:
            if line[:1] not in (b" ", b"-") and not line.startswith(b"#"):
                inside = line.startswith(top.encode() + b":")
            if not inside:
                out.append(line)
        return out

    assert others(new.raw) == others(raw)


# --- errors --------------------------------------------------------------------------------------


def test_parse_note_empty_frontmatter_names_missing_fields() -> None:
    err = _err(b"---\n---\nbody\n")
    assert "paper_id" in str(err) and "title" in str(err)
    assert err.field == "paper_id"


def test_parse_note_malformed_yaml_gives_file_line() -> None:
    err = _err(b'---\npaper_id: "a"\ntitle: "t"\n  bad: [x\n---\n')
    assert err.line is not None and err.line >= 4
    assert "malformed YAML" in str(err)
    assert str(err).startswith(f"papers/x.md:{err.line}: ")


def test_parse_note_missing_opening_fence() -> None:
    err = _err(b'paper_id: "a"\n---\n')
    assert "opening '---'" in str(err) and err.line == 1


def test_parse_note_missing_closing_fence() -> None:
    assert "closing '---'" in str(_err(b'---\npaper_id: "a"\ntitle: "t"\n'))


def test_parse_note_wrong_type_names_field_and_line() -> None:
    err = _err(GOOD.replace(b"quality_score: 3", b'quality_score: "high"'))
    assert err.field == "quality_score" and err.line == 5
    assert str(err).startswith("papers/x.md:5: field 'quality_score': Input should be a valid integer")
    assert "expected" in str(err)


def test_parse_note_unknown_status_lists_allowed() -> None:
    err = _err(GOOD.replace(b'status: "analyzed"', b'status: "done"'))
    assert err.field == "status" and err.line == 6
    for allowed in ("inbox", "to_read", "reading", "analyzed", "reviewed", "archived"):
        assert allowed in str(err)


def test_parse_note_unknown_decision_lists_allowed() -> None:
    err = _err(GOOD.replace(b"quality_score: 3\n", b"quality_score: 3\ndecision: maybe\n"))
    assert err.field == "decision"
    assert "ACCEPT" in str(err) and "PENDING" in str(err)


def test_parse_note_duplicate_claim_ids() -> None:
    claims = b"claims:\n  - id: depth\n    statement: one\n  - id: depth\n    statement: two\n"
    err = _err(GOOD.replace(b"---\n\n", claims + b"---\n\n"))
    assert "duplicate claim id 'depth'" in str(err)
    assert err.field == "claims.1.id" and err.line == 14


def test_parse_note_nested_error_field_path() -> None:
    claims = b"claims:\n  - id: Bad Id\n    statement: one\n"
    err = _err(GOOD.replace(b"---\n\n", claims + b"---\n\n"))
    assert err.field == "claims.0.id" and err.line == 12


def test_parse_note_not_utf8_gives_byte_offset() -> None:
    raw = GOOD.replace(b"A title", b"A \xff title")
    err = _err(raw)
    offset = raw.index(b"\xff")
    assert f"byte offset {offset}" in str(err)
    assert err.line == 4


def test_read_note_over_max_bytes(tmp_path: Path) -> None:
    p = tmp_path / "big.md"
    p.write_bytes(GOOD)
    with pytest.raises(NoteError, match=f"{len(GOOD)} bytes, over the limit of 10 bytes"):
        read_note(p, max_bytes=10)


def test_parse_note_yaml_not_mapping() -> None:
    assert "expected a mapping" in str(_err(b"---\n- a\n- b\n---\n"))


def test_parse_note_duplicate_yaml_key() -> None:
    err = _err(b'---\npaper_id: "a"\ntitle: "t"\ntitle: "u"\n---\n')
    assert err.line == 4


def test_parse_note_python_tag_not_constructed() -> None:
    note = parse_note(GOOD.replace(b"keep me", b"!!python/object:os.system x"), Path("x.md"))
    assert note.meta.extra_fields["custom_field"] == "x"


def test_set_fields_invalid_change_raises_and_keeps_note() -> None:
    note = parse_note(GOOD, Path("x.md"))
    with pytest.raises(NoteError) as info:
        set_fields(note, {"quality_score": "high"})
    assert info.value.field == "quality_score"
    assert note.raw == GOOD


def test_set_fields_new_key_appended_at_end() -> None:
    new = set_fields(parse_note(GOOD, Path("x.md")), {"analyst": "me"})
    assert new.raw == GOOD.replace(b"comment\n---\n", b'comment\nanalyst: "me"\n---\n')


# --- writing -------------------------------------------------------------------------------------


META = {"paper_id": "arxiv:9", "title": "Déjà Vu: A Paper!"}


def test_create_note_never_overwrites(tmp_path: Path) -> None:
    a = create_note(tmp_path, META, "# A\n")
    b = create_note(tmp_path, META, "# B\n")
    c = create_note(tmp_path, META, "# C\n")
    assert [n.path.name for n in (a, b, c)] == ["deja-vu-a-paper.md", "deja-vu-a-paper-2.md", "deja-vu-a-paper-3.md"]
    assert read_note(a.path).body == "\n# A\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_create_note_invalid_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(NoteError):
        create_note(tmp_path, {"title": "no id"}, "x")
    assert list(tmp_path.iterdir()) == []


def test_import_note_copies_bytes_never_overwrites(tmp_path: Path) -> None:
    src = tmp_path / "src" / "n.md"
    src.parent.mkdir()
    raw = b"\xef\xbb\xbf" + GOOD.replace(b"\n", b"\r\n")
    src.write_bytes(raw)
    papers = tmp_path / "papers"
    first = import_note(src, papers)
    second = import_note(src, papers)
    assert first.path.name == "n.md" and second.path.name == "n-2.md"
    assert first.path.read_bytes() == raw == second.path.read_bytes()


def test_slugify_safe_and_bounded() -> None:
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("蛋白质") == "蛋白质"  # a Chinese title gives a readable name
    assert slugify("深度诅咒：PLM 是否存在？") == "深度诅咒-plm-是否存在"
    assert slugify("") == "note"
    long = slugify("word " * 50)
    assert 0 < len(long) <= 80 and not long.endswith("-")
    assert slugify("../../etc/passwd") == "etc-passwd"


def test_atomic_write_bytes_replaces(tmp_path: Path) -> None:
    p = tmp_path / "f.md"
    atomic_write_bytes(p, b"one")
    atomic_write_bytes(p, b"two")
    assert p.read_bytes() == b"two" and [x.name for x in tmp_path.iterdir()] == ["f.md"]


def test_find_notes_recursive_sorted(tmp_path: Path) -> None:
    for rel in ("b.md", "a/c.md", "a/x.txt", ".hidden/d.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(GOOD)
    assert find_notes(tmp_path) == [tmp_path / "a/c.md", tmp_path / "b.md"]


def test_validate_paths_reports_bad_and_duplicate_ids(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(GOOD)
    (tmp_path / "b.md").write_bytes(GOOD)
    (tmp_path / "c.md").write_bytes(b"no frontmatter\n")
    other = tmp_path / "other.md"
    other.write_bytes(GOOD.replace(b"arxiv:1", b"arxiv:2"))
    notes, errors = validate_paths([tmp_path, other])
    assert [n.path.name for n in notes] == ["a.md", "other.md"]
    assert all(isinstance(n, Note) for n in notes)
    dup = next(e for e in errors if e.field == "paper_id")
    assert dup.path.name == "b.md" and "a.md" in str(dup) and dup.line == 2
    assert any(e.path.name == "c.md" for e in errors)


def _changed_lines(before: bytes, after: bytes) -> tuple[list[str], list[str]]:
    import difflib

    diff = list(difflib.ndiff(before.decode().splitlines(), after.decode().splitlines()))
    return [d[2:] for d in diff if d.startswith("- ")], [d[2:] for d in diff if d.startswith("+ ")]


def test_set_fields_list_edits_rewrite_only_the_changed_items() -> None:
    from kb.notes.edits import frontmatter_data

    path = Path(__file__).parents[1] / "papers" / "sampling-intermediate-temperatures-langevin.md"
    note = read_note(path)
    claims = frontmatter_data(note)["claims"]
    edited = [dict(c) for c in claims]
    edited[1]["statement"] = "An edited statement."
    new = set_fields(note, {"claims": edited})
    removed, added = _changed_lines(note.raw, new.raw)
    assert len(removed) == 1 and "statement:" in removed[0]
    assert added == ['    statement: "An edited statement."']  # the block's own quoting and indent
    assert [c.id for c in new.meta.claims] == [c.id for c in note.meta.claims]

    dropped = set_fields(note, {"claims": [claims[0], claims[2]]})
    removed, added = _changed_lines(note.raw, dropped.raw)
    assert added == [] and any(claims[1]["id"] in line for line in removed)
    assert [c.id for c in dropped.meta.claims] == [claims[0]["id"], claims[2]["id"]]


def test_set_fields_list_edits_keep_unquoted_items_and_fall_back_for_inline_lists() -> None:
    raw = (b'---\npaper_id: x:1\ntitle: T\ntags:\n  - plm   # the field\n  - depth\nauthors: [{name: A}]\n---\nbody\n'
           )
    note = parse_note(raw, Path("x.md"))
    new = set_fields(note, {"tags": ["plm", "scaling", "depth"]})
    assert _changed_lines(note.raw, new.raw) == ([], ["  - scaling"])
    assert b"  - plm   # the field\n" in new.raw
    inline = set_fields(note, {"authors": [{"name": "A"}, {"name": "B"}]})
    assert inline.meta.authors[1].name == "B" and inline.raw.endswith(b"---\nbody\n")
