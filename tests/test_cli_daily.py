"""The daily loop through the real CLI (issue 40): verdicts printed as they land (``kb verify``, ``kb demo``,
``--json`` as JSON Lines), inputs never taken silently (nested typos, unreadable notes, unbound claims),
``kb list --where`` queries, and the small things (``kb app`` on a taken port, ``kb verify --help``)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from tests.helpers.cli import run_kb

NOTE = textwrap.dedent("""\
    ---
    paper_id: "test:verdicts"
    title: "Verdicts as they land"
    publication: {venue: arXiv, year: 2024}
    quality_score: 4
    decision: ACCEPT
    tags: [testing]
    claims:
      - id: above-two
        statement: "The value is above two."
        analyzer: {name: noop, params: {value: 3}}
        expect: {metric: value, op: ">", value: 2}
      - id: below-one
        statement: "The value is below one."
        analyzer: {name: noop, params: {value: 5}}
        expect: {metric: value, op: "<", value: 1}
      - id: big-model
        statement: "At 650M parameters only a GPU shows it."
        analyzer: {name: noop, params: {not_runnable: "needs a GPU: re-verify with --device cuda"}}
        expect: {metric: value, op: ">", value: 2}
      - id: unbound
        statement: "Nothing runs this."
    ---
    body
    """)

BOUND = ["v#above-two", "v#below-one", "v#big-model"]


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """A notes folder of one note whose claims the noop analyzer settles in milliseconds, and an empty home."""
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "v.md").write_text(NOTE, encoding="utf-8")
    return papers, tmp_path / "home"


def _lines(stdout: str) -> list[dict[str, object]]:
    """The JSON Lines of ``--json``: every stdout line is one JSON object (anything else fails here)."""
    return [json.loads(line) for line in stdout.splitlines()]


def _table_at(out: str) -> int:
    """Where the verdict table starts (its title line, padded to the table's width); it must appear once."""
    starts = [m.start() for m in re.finditer(r"^verdicts +$", out, flags=re.MULTILINE)]
    assert len(starts) == 1, out
    return starts[0]


def test_verify_prints_each_verdict_line_then_the_table_once(dirs: tuple[Path, Path]) -> None:
    done = run_kb(*dirs, "verify", "v")
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())  # a line wraps at the console's width
    # One line per verdict, with its state, the value against what was expected, the scale and why.
    assert "v#above-two: supported · 3 (expected value > 2.0) · at smoke · value = 3 meets '> 2.0'" in out
    assert "v#below-one: refuted · 5 (expected value < 1.0) · at smoke" in out
    assert "v#big-model: not runnable · needs a GPU" in out
    table = _table_at(done.stdout)
    assert all(done.stdout.index(f"{key}: ") < table for key in BOUND), "each line comes before the table"
    assert done.stdout[table:].count("v#above-two") == 1, "the table once"


def test_verify_json_streams_one_object_per_verdict_and_nothing_else(dirs: tuple[Path, Path]) -> None:
    done = run_kb(*dirs, "verify", "v", "--json")
    assert done.returncode == 0, done.stderr
    rows = _lines(done.stdout)
    assert sorted(str(r["id"]) for r in rows) == BOUND  # each run once
    by_claim = {r["id"]: r for r in rows}
    assert by_claim["v#above-two"]["state"] == "supported" and by_claim["v#above-two"]["observed"] == 3.0
    assert by_claim["v#above-two"]["scale"] == {"name": "smoke"}
    assert by_claim["v#below-one"]["state"] == "refuted" and by_claim["v#below-one"]["expected"] == "value < 1.0"
    assert by_claim["v#big-model"]["state"] == "not_runnable"
    assert "succeeded" in done.stderr, "progress goes to stderr"
    queued = run_kb(*dirs, "verify", "v#above-two", "--queue-only", "--json")
    (row,) = _lines(queued.stdout)  # a run not judged here: its status, still one line
    assert row["id"] == "v#above-two" and row["status"] == "queued" and row["state"] is None


def test_demo_prints_verdicts_as_they_land_and_the_table_once(dirs: tuple[Path, Path]) -> None:
    done = run_kb(*dirs, "demo")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    landed, table = out.index("each claim's verdict as its run is judged"), _table_at(out)
    assert landed < out.index("v#above-two: supported · 3") < table
    assert out[table:].count("v#below-one") == 1
    assert "4 claims: 1 supported · 1 refuted · 1 not runnable · 1 no analyzer" in out


def test_demo_json_streams_the_verdicts_then_the_claims_not_rerun(dirs: tuple[Path, Path]) -> None:
    first = run_kb(*dirs, "demo", "--json")
    assert first.returncode == 0, first.stderr
    rows = _lines(first.stdout)
    assert sorted(str(r["id"]) for r in rows) == BOUND and all(r["run"] for r in rows)
    assert "Library: 1 note(s)" in first.stderr, "the tables go to stderr"
    again = _lines(run_kb(*dirs, "demo", "--json").stdout)  # nothing stale: every claim as it stands
    assert {str(r["id"]): r["state"] for r in again} == {"v#above-two": "supported", "v#below-one": "refuted",
                                                         "v#big-model": "not_runnable"}


def test_set_refuses_a_nested_typo_unless_new_field_and_validate_warns(dirs: tuple[Path, Path]) -> None:
    papers, home = dirs
    note = papers / "v.md"
    before = note.read_bytes()
    refused = run_kb(papers, home, "set", "v", "publication.yeer=2009")
    assert refused.returncode == 1 and note.read_bytes() == before, "nothing written"
    assert "did you mean `publication.year`? (use --new-field to add a new field)" in refused.stderr
    claim = run_kb(papers, home, "set", "v", "claims.above-two.statment=x")  # a claim's field, by the claim's id
    assert claim.returncode == 1 and "did you mean `claims.above-two.statement`?" in claim.stderr
    assert run_kb(papers, home, "validate").stderr == "", "no warning before"
    added = run_kb(papers, home, "set", "v", "publication.yeer=2009", "--new-field")
    assert added.returncode == 0, added.stderr
    assert "yeer: 2009" in note.read_text() and "year: 2024" in note.read_text()
    validated = run_kb(papers, home, "validate")
    assert validated.returncode == 0, "a warning: the note is valid and the field kept"
    assert "warning" in validated.stderr and "publication.yeer" in validated.stderr
    assert "did you mean `publication.year`?" in " ".join(validated.stderr.split())
    kept = run_kb(papers, home, "set", "v", "publication.pages=1-9")  # far from every field: added as asked
    assert kept.returncode == 0 and "pages: 1-9" in note.read_text()


def test_listings_name_the_notes_they_could_not_read_and_strict_fails(dirs: tuple[Path, Path]) -> None:
    papers, home = dirs
    (papers / "broken.md").write_text("---\ntitle: no paper id\n---\n", encoding="utf-8")
    for command in (["list"], ["search", "value"], ["tensions"]):
        done = run_kb(papers, home, *command)
        assert done.returncode == 0, (command, done.stderr)  # the listing itself worked
        (line,) = [line for line in done.stderr.splitlines() if line.startswith("could not read")]
        assert "broken.md" in line and "paper_id" in line, line
        strict = run_kb(papers, home, *command, "--strict")
        assert strict.returncode == 1 and "broken.md" in strict.stderr, command
    listed = run_kb(papers, home, "list", "--json")
    assert [row["id"] for row in json.loads(listed.stdout)] == ["v"], "stdout keeps its JSON"
    (papers / "broken.md").unlink()
    assert run_kb(papers, home, "list", "--strict").returncode == 0


def test_verify_of_a_claim_without_binding_says_how_to_bind_it(dirs: tuple[Path, Path]) -> None:
    unbound = run_kb(*dirs, "verify", "v#unbound")
    assert unbound.returncode == 1
    said = " ".join(unbound.stderr.split())
    assert "v#unbound: this claim has no analyzer binding" in said and "analyzer: {name: ANALYZER" in said
    assert "no claim bound" not in said
    missing = run_kb(*dirs, "verify", "v#no-such-claim")
    assert missing.returncode == 1 and "no claim bound to an analyzer has this key" in missing.stderr


OTHER = textwrap.dedent("""\
    ---
    paper_id: "test:other"
    title: "Another note"
    publication: {venue: Nature, year: 2009}
    quality_score: 2
    decision: REJECT
    tags: [Other, testing]
    ---
    body
    """)


def _listed(papers: Path, home: Path, *wheres: str) -> list[str]:
    done = run_kb(papers, home, "list", "--json", *(arg for w in wheres for arg in ("--where", w)))
    assert done.returncode == 0, done.stderr
    return [str(row["id"]) for row in json.loads(done.stdout)]


def test_list_where_filters_on_fields_tags_and_claim_states(dirs: tuple[Path, Path]) -> None:
    papers, home = dirs
    (papers / "o.md").write_text(OTHER, encoding="utf-8")
    assert _listed(papers, home, "quality_score>=4", "decision=ACCEPT") == ["v"]
    assert _listed(papers, home, "quality_score>=2") == ["o", "v"]
    assert _listed(papers, home, "quality_score>=10") == [], "numbers compare as numbers ('4' >= '10' as text)"
    assert _listed(papers, home, "decision!=accept") == ["o"]  # = and != ignore case
    assert _listed(papers, home, "publication.year<2010") == ["o"]  # dotted: a nested field
    assert _listed(papers, home, "publication.venue~NAT") == ["o"]  # ~: contains
    assert _listed(papers, home, "tags=other") == ["o"] and _listed(papers, home, "tags=testing") == ["o", "v"]
    assert _listed(papers, home, "claims>0") == ["v"]
    assert run_kb(papers, home, "verify", "v").returncode == 0
    assert _listed(papers, home, "state=refuted") == ["v"] and _listed(papers, home, "supported>=1") == ["v"]
    assert _listed(papers, home, "state!=refuted") == ["o"]
    table = run_kb(papers, home, "list", "--where", "decision=REJECT")
    assert table.returncode == 0 and "Another note" in table.stdout and "Verdicts as they land" not in table.stdout


def test_list_where_refuses_an_unknown_field_or_a_bad_condition_in_one_line(dirs: tuple[Path, Path]) -> None:
    papers, home = dirs
    typo = run_kb(papers, home, "list", "--where", "qualty_score>=4")
    assert typo.returncode == 2 and typo.stdout == ""
    (line,) = typo.stderr.strip().splitlines()
    assert "qualty_score" in line and "did you mean `quality_score`?" in line
    nested = run_kb(papers, home, "list", "--where", "publication.yaer=2024")
    assert nested.returncode == 2 and "did you mean `publication.year`?" in nested.stderr
    bad = run_kb(papers, home, "list", "--where", "quality_score")
    assert bad.returncode == 2 and "expected FIELD OP VALUE" in bad.stderr


def test_verify_help_keeps_the_brackets_of_extras() -> None:
    done = run_kb(None, None, "verify", "--help", env={"COLUMNS": "300"})
    assert done.returncode == 0
    assert "plm-kb[ray]" in done.stdout and "plm-kb[slurm]" in done.stdout  # rich markup escaped, not eaten
