"""The smaller cases of a shared note turned against kb: strict JSON output (no NaN), look-alike quantities
that must still meet in a tension, and tension ids too long to collide (real CLI, real index)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.evidence.tensions import tension_id
from kb.settings import Settings
from tests.helpers.cli import run_kb


def _claim_note(paper_id: str, quantity: str, op: str, value: float, extra: str = "") -> str:
    return textwrap.dedent(f"""\
        ---
        paper_id: "{paper_id}"
        title: "{paper_id}"
        claims:
          - id: c
            statement: "s"
            kind: qualitative
            quantity: "{quantity}"
            expect: {{metric: value, op: "{op}", value: {value}}}
        {extra}---
        """)


def test_show_json_is_strict_json_when_a_note_writes_nan_and_infinity(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "nan.md").write_text(textwrap.dedent("""\
        ---
        paper_id: "t:nan"
        title: "Not a number"
        claims:
          - id: c
            statement: "s"
            analyzer: {name: noop, params: {value: 3}}
            expect: {metric: value, op: ">", value: 2}
            paper_values:
              - {value: .nan, where: "Table 1"}
              - {value: .inf, where: "Table 2"}
        ---
        """), encoding="utf-8")
    shown = run_kb(papers, tmp_path / "home", "show", "nan", "--json")
    assert shown.returncode == 0, shown.stderr

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in kb show --json")

    data = json.loads(shown.stdout, parse_constant=refuse)
    assert re.search(r"\bNaN\b|Infinity", shown.stdout) is None
    assert data is not None


def test_fullwidth_look_alike_quantities_still_meet_in_a_tension(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "a.md").write_text(_claim_note("t:a", "best-depth", ">", 20), encoding="utf-8")
    (papers / "b.md").write_text(_claim_note("t:b", "ｂｅｓｔ－ｄｅｐｔｈ", "<", 10), encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    kb.index()
    assert [(t.a.key, t.b.key) for t in kb.tensions()] == [("a#c", "b#c")]


def test_tension_ids_are_a_whole_sha256(tmp_path: Path) -> None:
    tid = tension_id("a#c", "b#c")
    assert re.fullmatch(r"t-[0-9a-f]{64}", tid) and tid == tension_id("b#c", "a#c")
    assert tension_id("a#c", "b#d") != tid


@pytest.mark.parametrize("quantity", ["best-depth", "BEST  depth"])
def test_quantities_compare_after_case_and_space_folding(quantity: str, tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "a.md").write_text(_claim_note("t:a", "best depth", ">", 20), encoding="utf-8")
    (papers / "b.md").write_text(_claim_note("t:b", quantity, "<", 10), encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    kb.index()
    assert len(kb.tensions()) == (1 if quantity == "BEST  depth" else 0)


def _many_claims_note(paper_id: str, values: range) -> str:
    claims = "".join(f'  - id: c{v}\n    statement: "s"\n    kind: qualitative\n    quantity: "q"\n'
                     f'    expect: {{metric: value, op: "==", value: {v}}}\n' for v in values)
    return f'---\npaper_id: "{paper_id}"\ntitle: "{paper_id}"\nclaims:\n{claims}---\n'


def test_claims_of_one_note_are_never_paired(tmp_path: Path) -> None:
    """3,000 claims of one note on one quantity: no pair among them is examined, so the budget of the
    pairs between notes is not spent on them and the one tension between the notes is found in full."""
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "big.md").write_text(_many_claims_note("t:big", range(3000)), encoding="utf-8")
    (papers / "small.md").write_text(_many_claims_note("t:small", range(-1, 0)), encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home", max_tension_pairs=5_000))
    kb.index()
    found = kb.tensions()
    assert found.message() is None and len(found) == 3000  # small#c-1 against each of big's claims


def test_the_tension_cap_is_reached_with_a_message(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "a.md").write_text(_many_claims_note("t:a", range(0, 60)), encoding="utf-8")
    (papers / "b.md").write_text(_many_claims_note("t:b", range(100, 160)), encoding="utf-8")
    result = run_kb(papers, tmp_path / "home", "tensions", "--json", env={"KB_MAX_TENSION_PAIRS": "1000"})
    assert result.returncode == 0, result.stderr
    assert "KB_MAX_TENSION_PAIRS" in result.stderr and "may be incomplete" in result.stderr
    assert 0 < len(json.loads(result.stdout)) <= 1000  # 3,600 pairs disjoint in all; the cap stopped at 1,000


def test_kb_add_writes_no_nul_or_control_byte_from_a_bibtex_entry(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    bib = tmp_path / "nul.bib"
    bib.write_bytes(b"@article{a, title={Null\x00 and \x1b[31mescape}, author={Doe\x07, Jane}, year={2024}, "
                    b"abstract={Some\x00 abstract text.}}\n")
    added = run_kb(papers, tmp_path / "home", "add", str(bib))
    assert added.returncode == 0, added.stderr
    written = [p.read_bytes() for p in papers.rglob("*") if p.is_file() and ".kb-locks" not in p.parts]
    assert written and all(not re.search(rb"[\x00-\x08\x0b\x0e-\x1f\x7f]", data) for data in written)
    (note,) = papers.glob("*.md")
    assert b"Null and [31mescape" in note.read_bytes()


def test_an_impossible_time_names_its_line_and_field(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "t.md").write_text('---\npaper_id: "t:t"\ntitle: "T"\nanalysis_date: 2026-01-01T25:61:00\n---\n',
                                 encoding="utf-8")
    result = run_kb(papers, tmp_path / "home", "validate")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    line = next(x for x in result.stderr.splitlines() if "t.md" in x)
    assert "t.md:4" in line and "analysis_date" in line and "hour must be in 0..23" in line, line


def test_kb_evidence_lists_at_most_twenty_paper_values(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    values = "".join(f'      - {{value: {v}, where: "Table {v}"}}\n' for v in range(2_000))
    (papers / "pv.md").write_text('---\npaper_id: "t:pv"\ntitle: "PV"\nclaims:\n  - id: c\n    statement: "s"\n'
                                  '    analyzer: {name: noop, params: {value: 3}}\n'
                                  '    expect: {metric: value, op: ">", value: 2}\n    paper_values:\n'
                                  f'{values}---\n', encoding="utf-8")
    shown = run_kb(papers, tmp_path / "home", "evidence", "pv#c")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("Table ") == 20 and "1,980 more paper value(s)" in shown.stdout
    assert len(shown.stdout) < 20_000


@pytest.mark.parametrize(("params", "field", "said"), [
    ('{value: 3, steps: 100000000000}', "steps", "over the 10,000,000 a note may set"),
    ('{value: 3, device: "cuda:0"}', "device", "never by a note"),
    ('{value: 3, threads: 100000}', "threads", "KB_MAX_NOTE_THREADS"),
])
def test_a_note_cannot_ask_for_resources_past_the_operators_bounds(tmp_path: Path, params: str, field: str,
                                                                   said: str) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "r.md").write_text('---\npaper_id: "t:r"\ntitle: "R"\nclaims:\n  - id: c\n    statement: "s"\n'
                                 f'    analyzer: {{name: noop, params: {params}}}\n'
                                 '    expect: {metric: value, op: ">", value: 2}\n---\n', encoding="utf-8")
    result = run_kb(papers, tmp_path / "home", "validate")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    line = next(x for x in result.stderr.splitlines() if "r.md" in x)
    assert f"analyzer.params.{field}" in line and said in line, line
