"""Small inputs cannot exhaust time or memory, and each bad one is one line naming the file, line or field.

Cases from issue 25: 2,000 quotes against a 4 MB source (minutes of ``kb index`` before), a 2 MB Markdown
table (``kb show``: 64 s and 2.1 GB before), BibTeX files of doubling ``@string`` macros (MemoryError, or an
8.4 MB note kb would not read), malformed or deeply nested Zotero JSON, 5,000 seeds on one claim, a
5,000-digit number, 10,000 plain claims, a bad BibTeX year and a malformed ``pdb_id``. Time bounds are on
the CPU time of the ``kb`` command (in this process; the BibTeX bombs in a process of their own), so a busy
test machine does not make them flaky.
"""

from __future__ import annotations

import json
import random
import re
import resource
import subprocess
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kb.core import KnowledgeBase
from kb.notes import files as notes_mod
from kb.notes.files import NoteError, create_note, parse_note
from kb.notes.grounding import PAGE_BREAK, WORK_BUDGET, Grounding, QuoteMatcher, check_note, normalize_text
from kb.settings import Settings
from tests.helpers.cli import run_kb, run_kb_process, warm_cli

ROOT = Path(__file__).resolve().parents[1]
NOTE_HEAD = '---\npaper_id: "t:{name}"\ntitle: "{name}"\n'


def timed_kb(papers: Path, home: Path, *args: str,
             env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    """The real ``kb`` CLI in this process, and the CPU seconds the command used (user + system)."""
    warm_cli()
    before = time.process_time()
    done = run_kb(papers, home, *args, env=env)
    return done, time.process_time() - before


def timed_kb_process(papers: Path, home: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The real ``kb`` CLI in its own process, and the CPU seconds it used: for an input that could exhaust
    memory, which must not take the test process with it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = run_kb_process(papers, home, *args, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def one_error_line(stderr: str) -> str:
    """The single 'error:' line of a refusal (and no traceback)."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("error")]
    assert len(lines) == 1, stderr
    return lines[0]


# -- quote matching --------------------------------------------------------------------------------------

def _source(rng: random.Random, size: int, pages: int) -> str:
    vocabulary = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) for _ in range(5000)]
    page_texts = []
    for _ in range(pages):
        words = rng.choices(vocabulary, k=size // pages // 6)
        page_texts.append(" ".join(words) + ".\n")
    return PAGE_BREAK.join(page_texts)


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_two_thousand_quotes_against_a_4mb_source_index_in_seconds(tmp_path: Path) -> None:
    rng = random.Random(1)
    source = _source(rng, 4_000_000, 20)
    pages = source.split(PAGE_BREAK)
    papers = tmp_path / "papers"
    (papers / "sources").mkdir(parents=True)
    (papers / "sources" / "paper.txt").write_text(source, encoding="utf-8")
    claims, expected = [], {}
    for i in range(2000):
        page = rng.randrange(len(pages))
        words = pages[page].split()
        start = rng.randrange(len(words) - 12)
        quote = words[start:start + 8]
        if i % 2:
            quote.insert(4, "nowhereword")  # not in the source
        claims.append(f'  - id: c{i}\n    statement: "s"\n    source: {{quote: "{" ".join(quote)}", '
                      f"page: {page + 1}}}\n")
        expected[f"big#c{i}"] = "not_found" if i % 2 else "grounded"
    (papers / "big.md").write_text(NOTE_HEAD.format(name="big") + 'source_file: "sources/paper.txt"\nclaims:\n'
                                   + "".join(claims) + "---\nBody.\n", encoding="utf-8")
    home = tmp_path / "home"
    indexed, cpu = timed_kb(papers, home, "index")
    assert indexed.returncode == 0, indexed.stderr
    assert cpu < 10, f"kb index took {cpu:.1f} CPU seconds (minutes before quotes were matched once per source)"
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    assert {key: found[1] for key in expected if (found := kb.claim(key))} == expected
    note = kb.read("big")
    reasons = [r.reason for r in check_note(note, kb.read_source(note))[:2]]
    assert reasons[0].startswith("quote found on page") and reasons[1].startswith("the quote does not occur")


def _naive(quote: str, source: str) -> tuple[bool, list[int]]:
    """Grounding as it is defined: the normalized quote inside the normalized source, and page by page."""
    found = normalize_text(quote) in normalize_text(source)
    pages = source.split(PAGE_BREAK)
    on = [i for i, page in enumerate(pages, 1) if normalize_text(quote) in normalize_text(page)] \
        if found and len(pages) > 1 else []
    return found, on


def test_quote_matcher_agrees_with_the_definition_before_and_after_its_index() -> None:
    rng = random.Random(7)
    words = ["protein", "model", "layer", "depth", "the", "of", "pro-\ntein", "first–order", "ﬁne", "A", "a"]
    pages = [" ".join(rng.choices(words, k=300)) for _ in range(5)]
    source = PAGE_BREAK.join(pages)
    matcher = QuoteMatcher(source)
    flat = normalize_text(source).split(" ")
    for i in range(400):  # past the lookups after which the word index answers (the first ones scan)
        if i % 3 == 0:
            quote = " ".join(rng.choices(words, k=rng.randint(1, 6)))
        else:  # a piece of the source, cut mid-word at both ends sometimes
            start = rng.randrange(len(flat) - 8)
            quote = " ".join(flat[start:start + rng.randint(1, 7)])[rng.randint(0, 2):] or "protein"
        found, on = _naive(quote, source)
        assert (matcher.contains(quote), matcher.pages(quote) if found else []) == (found, on), quote


def test_quotes_the_index_cannot_answer_stop_at_the_budget_with_a_reason() -> None:
    source = "lorem ipsum dolor sit amet " * 160_000 + "and one passage said once"  # 4.3 MB
    matcher = QuoteMatcher(source)
    quotes = [f"xq{i}" for i in range(WORK_BUDGET // len(source) + 20)]  # one-word quotes: each scans it all
    start = time.process_time()
    results = [matcher.ground(quote, None) for quote in quotes]
    assert time.process_time() - start < 10
    statuses = [status for status, _ in results]
    assert statuses.count(Grounding.not_found) == len(quotes)
    unchecked = [reason for _, reason in results if reason.startswith("not checked")]
    assert 1 <= len(unchecked) <= 21 and "quote at least three words" in unchecked[0]
    assert matcher.ground("and one passage said", None)[0] is Grounding.grounded  # the index still answers


# -- rendering -------------------------------------------------------------------------------------------

def _table_note(papers: Path) -> int:
    rows = ["| a | b | c |", "|---|---|---|"] + [f"| cell {i} | value {i * 3} | text {i} |" for i in range(70_000)]
    body = "\n".join(rows) + "\n"
    papers.mkdir(parents=True, exist_ok=True)
    (papers / "table.md").write_text(NOTE_HEAD.format(name="table") + "---\n" + body, encoding="utf-8")
    return len(body)


def test_show_renders_a_2mb_table_within_the_budget(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    size = _table_note(papers)
    assert size > 2_000_000
    shown, cpu = timed_kb(papers, tmp_path / "home", "show", "table")
    assert shown.returncode == 0, shown.stderr
    assert cpu < 5, f"kb show took {cpu:.1f} CPU seconds"
    assert "cell 100 " in shown.stdout and "cell 60000 " not in shown.stdout
    tail = " ".join(shown.stdout.split())  # the message may wrap
    assert "more characters of the body are not shown" in tail and "max_rendered_body" in tail
    assert "table.md" in tail
    whole, _ = timed_kb(papers, tmp_path / "home", "show", "table", "--json")
    assert len(json.loads(whole.stdout)[0]["body"]) == size  # --json has it all


def test_app_note_page_renders_a_2mb_table_within_the_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import streamlit as st

    papers, home = tmp_path / "papers", tmp_path / "home"
    _table_note(papers)
    for name, value in (("KB_PAPERS", str(papers)), ("KB_HOME", str(home)), ("KB_APP_WORKER", "false")):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("KB_DATABASE_URL", raising=False)
    KnowledgeBase(Settings(papers=papers, home=home)).index()
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    at.query_params.update({"id": "table"})
    start = time.process_time()
    at.switch_page("views/note.py").run()
    assert time.process_time() - start < 20
    assert not at.exception, at.exception
    tables = [m.value for m in at.markdown if "| cell 1 |" in m.value]
    assert tables and all(len(value) <= Settings().max_rendered_body for value in tables)
    assert any("more characters of the body are not shown" in c.value for c in at.caption)
    st.cache_resource.clear()
    st.cache_data.clear()


# -- kb add: BibTeX and Zotero ---------------------------------------------------------------------------

def _doubling_bib(levels: int) -> str:
    lines = ['@string{s0 = "aaaaaaaaaaaaaaaa"}'] + [f"@string{{s{i} = s{i - 1} # s{i - 1}}}" for i in range(1, levels)]
    return "\n".join([*lines, f"@article{{bomb, title = s{levels - 1}, year = {{2024}}}}"]) + "\n"


@pytest.mark.parametrize("levels", [21, 40])  # 576 bytes -> a 16 MB title; 1 kB -> 8 TB (MemoryError before)
def test_add_refuses_bibtex_macros_that_expand_past_the_cap(levels: int, kb_dirs: tuple[Path, Path],
                                                             tmp_path: Path) -> None:
    bib = tmp_path / "bomb.bib"
    bib.write_text(_doubling_bib(levels), encoding="utf-8")
    assert bib.stat().st_size < 1100
    before = sorted(p.name for p in kb_dirs[0].rglob("*"))
    done, cpu = timed_kb_process(*kb_dirs, "add", str(bib))
    assert done.returncode == 1 and cpu < 10
    line = one_error_line(done.stderr)
    assert "bomb.bib" in line and "entry 'bomb', field 'title'" in line and "@string" in line, line
    assert sorted(p.name for p in kb_dirs[0].rglob("*")) == before  # nothing written


def test_add_reads_ordinary_bibtex_macros_and_refuses_undefined_ones(kb_dirs: tuple[Path, Path],
                                                                     tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text('@string{nat = "Nature"}\n@article{a, title = {Folding} # " at scale", journal = nat, '
                   "month = jan, year = {2024}}\n", encoding="utf-8")
    done, _ = timed_kb(*kb_dirs, "add", str(bib), "--json")
    assert done.returncode == 0, done.stderr
    note = notes_mod.read_note(Path(json.loads(done.stdout)[0]["path"]))
    assert note.meta.title == "Folding at scale" and note.meta.publication
    assert note.meta.publication.venue == "Nature"
    bib.write_text("@article{b, title = nosuchmacro}\n", encoding="utf-8")
    done, _ = timed_kb(*kb_dirs, "add", str(bib))
    line = one_error_line(done.stderr)
    assert done.returncode == 1 and "entry 'b', field 'title'" in line and "'nosuchmacro'" in line


def test_a_bad_bibtex_year_names_the_bib_file_and_entry(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{old, title = {An old paper}, year = {1850}}\n", encoding="utf-8")
    done, _ = timed_kb(*kb_dirs, "add", str(bib))
    line = one_error_line(done.stderr)
    assert done.returncode == 1 and "new-note.md" not in line
    assert str(bib) in line and "entry 'old'" in line and "publication.year" in line, line
    assert not list((kb_dirs[0] / "sources").glob("an-old-paper*"))


def test_add_never_writes_a_note_kb_would_refuse_to_read(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    bib = tmp_path / "long.bib"
    bib.write_text("@article{long, title = {" + "Long title " * 300 + "}, year = {2024}}\n", encoding="utf-8")
    done, _ = timed_kb(*kb_dirs, "add", str(bib), env={"KB_MAX_NOTE_BYTES": "2000"})
    line = one_error_line(done.stderr)
    assert done.returncode == 1 and "entry 'long'" in line and "max_note_bytes" in line, line
    assert not list(kb_dirs[0].glob("long-title*"))
    # The same check, core function: the bytes about to be written are read back as kb reads them.
    with pytest.raises(NoteError, match="over the limit of 1,000 bytes"):
        create_note(tmp_path, {"paper_id": "t:1", "title": "x" * 2000}, "", max_bytes=1000)
    assert not list(tmp_path.glob("*.md"))


@pytest.mark.parametrize(("name", "content", "says"), [
    ("deep", "[" * 100_000 + "]" * 100_000, "nests too deeply"),
    ("authors", json.dumps([{"title": "T", "author": "Lin, Zeming"}]), "item 0: 'author' is not a list"),
    ("scalar", json.dumps(3), "expected a list of CSL-JSON items"),
    ("untitled", json.dumps([{"title": ["a", ["b"]]}]), "item 0 has no 'title'"),
    ("broken", '[{"title": "T",', "not a CSL-JSON export"),
])
def test_add_refuses_malformed_zotero_json_in_one_line(name: str, content: str, says: str,
                                                       kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    export = tmp_path / f"{name}.json"
    export.write_text(content, encoding="utf-8")
    done, _ = timed_kb(*kb_dirs, "add", str(export))
    line = one_error_line(done.stderr)
    assert done.returncode == 1 and f"{name}.json" in line and says in line and "Zotero" in line, line


def test_add_reads_odd_but_valid_zotero_fields(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    export = tmp_path / "odd.json"
    export.write_text(json.dumps([{"title": "Odd", "issued": {"raw": "2023"}, "author": [{"literal": "Lab X"}],
                                   "container-title": ["not", "text"], "DOI": None}]), encoding="utf-8")
    done, _ = timed_kb(*kb_dirs, "add", str(export), "--json")
    assert done.returncode == 0, done.stderr
    note = notes_mod.read_note(Path(json.loads(done.stdout)[0]["path"]))
    assert [a.name for a in note.meta.authors] == ["Lab X"] and note.meta.year is None


# -- notes: seeds, numbers, claims, parameters -----------------------------------------------------------

def _seeds_note(count: int) -> str:
    return (NOTE_HEAD.format(name="seeds") + "claims:\n  - id: c\n    statement: \"s\"\n    analyzer:\n"
            f"      name: noop\n      seeds: {list(range(count))}\n---\n")


def test_seeds_per_claim_are_capped_by_a_setting(tmp_path: Path) -> None:
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    (papers / "seeds.md").write_text(_seeds_note(5000), encoding="utf-8")
    done, _ = timed_kb(papers, home, "validate")
    line = one_error_line(done.stderr)
    assert done.returncode == 1 and "seeds.md:9:" in line and "field 'claims.0.analyzer.seeds'" in line, line
    assert "5,000 seeds" in line and "max_seeds_per_claim" in line
    raised, _ = timed_kb(papers, home, "index", env={"KB_MAX_SEEDS_PER_CLAIM": "5000"})
    assert raised.returncode == 0, raised.stderr
    # The cap lowered again: the claim the index still holds is skipped, not queued 5,000 times.
    done, _ = timed_kb(papers, home, "verify", "--all")
    assert "queued 0 run(s)" in done.stdout and "over the limit of 10" in " ".join(done.stderr.split())


def _params_note(params: str) -> str:
    return (NOTE_HEAD.format(name="asks") + "claims:\n  - id: c\n    statement: \"s\"\n    analyzer:\n"
            f"      name: noop\n      params: {params}\n---\n")


@pytest.mark.parametrize(("params", "setting", "bound"), [
    ("{steps: 5000}", "KB_MAX_NOTE_INTEGER", "1000"),  # sizes and budgets: the operator's bound, not kb's
    ("{threads: 2}", "KB_MAX_NOTE_THREADS", "1"),  # threads: the operator's bound, not this machine's cores
])
def test_what_a_note_may_ask_of_the_machine_is_the_operators_setting(tmp_path: Path, params: str, setting: str,
                                                                     bound: str) -> None:
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    (papers / "asks.md").write_text(_params_note(params), encoding="utf-8")
    done, _ = timed_kb(papers, home, "validate", env={setting: bound})
    line = one_error_line(done.stderr)
    assert done.returncode == 1 and "asks.md:" in line and "field 'claims.0.analyzer.params." in line, line
    assert setting in line and f" {int(bound):,} " in line, line
    if setting == "KB_MAX_NOTE_INTEGER":  # within the default bound the same note is valid
        done, _ = timed_kb(papers, home, "validate")
        assert done.returncode == 0, done.stderr


def test_a_5000_digit_number_names_its_line_and_field(tmp_path: Path) -> None:
    raw = (NOTE_HEAD.format(name="n") + "publication:\n  venue: x\n  year: " + "7" * 5000 + "\n---\n").encode()
    with pytest.raises(NoteError) as info:
        parse_note(raw, tmp_path / "n.md")
    assert (info.value.line, info.value.field) == (6, "publication.year")
    assert "5,000 digits" in info.value.message and "date" not in info.value.message


def test_the_alias_guard_counts_what_aliases_add_not_what_is_written(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notes_mod, "MAX_YAML_VALUES", 500)  # a small cap keeps the note small and fast
    claims = "".join(f'  - id: c{i}\n    statement: "claim {i}"\n    source: {{quote: "q {i}"}}\n'
                     for i in range(300))  # ~2,700 values written out, no alias
    assert len(parse_note((NOTE_HEAD.format(name="plain") + "claims:\n" + claims + "---\n").encode(),
                          tmp_path / "plain.md").meta.claims) == 300
    bomb = NOTE_HEAD.format(name="bomb") + 'a: &a ["x", "x", "x", "x", "x", "x", "x", "x"]\n' + \
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b]\n---\n"
    with pytest.raises(NoteError, match="expands to more than 500 values through its aliases"):
        parse_note(bomb.encode(), tmp_path / "bomb.md")


@pytest.mark.slow
def test_ten_thousand_plain_claims_are_valid(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    claims = "".join(f'  - id: c{i}\n    statement: "claim {i}"\n    kind: qualitative\n'
                     f'    source: {{quote: "quote {i}", page: 1}}\n' for i in range(10_000))
    (papers / "many.md").write_text(NOTE_HEAD.format(name="many") + "claims:\n" + claims + "---\n", encoding="utf-8")
    done, _ = timed_kb(papers, tmp_path / "home", "validate")
    assert done.returncode == 0 and "10000 claims" in done.stdout, done.stderr


@pytest.mark.parametrize(("pdb_id", "valid"), [("2ABD", True), ("1ubi", True), ("../../etc/passwd", False),
                                               ("ABCD", False), ("2AB", False), ("2ABDE", False)])
def test_pdb_id_is_checked_where_the_note_declares_it(pdb_id: str, valid: bool, tmp_path: Path) -> None:
    for analyzer in ("langevin.design", "langevin.sweep"):
        raw = (NOTE_HEAD.format(name="pdb") + "claims:\n  - id: c\n    statement: \"s\"\n    analyzer:\n"
               f"      name: {analyzer}\n      params: {{pdb_id: {json.dumps(pdb_id)}}}\n---\n").encode()
        if valid:
            parse_note(raw, tmp_path / "pdb.md")
            continue
        with pytest.raises(NoteError) as info:
            parse_note(raw, tmp_path / "pdb.md")
        assert (info.value.line, info.value.field) == (9, "claims.0.analyzer.params.pdb_id"), str(info.value)
        assert re.search(r"pattern", info.value.message)
