"""The CLI as a person reads it at 80 columns: every listing fits, rows stay one or two lines, states read
by their labels (proxies apart), ``kb evidence`` writes words and rounded numbers, never a dict or None,
and library progress bars stay off.

One knowledge base with long ids (the width test needs them) and a claim in each interesting state, made
real: ``kb demo`` verifies it through the real queue, with ``COLUMNS=80``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.cli import run_kb

Done = subprocess.CompletedProcess[str]  # what run_kb returns
WIDTH = 80
NOTE_ID = "siji-2026-depth-and-scale-in-protein-models"  # as long as the bundled notes' ids
STATEMENT = ("The echoed value, which stands in for a number the paper reports in its third table after "
             "training for a very long time, is above the threshold the claim names.")
CLAIMS = {  # claim id -> (noop params, expectation, claim scale, the state kb must report)
    "echoed-value-above-two-at-small-scale": ("{value: 3.14159265}", '{metric: value, op: ">", value: 2}',
                                                     None, "supported"),
    "echoed-value-above-two-at-650m-params": ("{value: 3}", '{metric: value, op: ">", value: 2}',
                                                          "{parameters: 650000000, data: UniRef50}",
                                                          "consistent_proxy"),
    "echoed-value-above-four-at-650m-params": ("{value: 3}", '{metric: value, op: ">", value: 4}',
                                                           "{parameters: 650000000}", "at_odds_proxy"),
    "needs-a-gpu-this-machine-does-not-have": ('{not_runnable: "needs a GPU: re-verify with --device cuda"}',
                                                    '{metric: value, op: ">", value: 2}', None, "not_runnable"),
}
LABELS = {"supported": "supported", "consistent_proxy": "consistent (proxy)", "at_odds_proxy": "at odds (proxy)",
          "not_runnable": "not runnable", "unbound": "no analyzer"}


def note_text() -> str:
    claims = ""
    for claim_id, (params, expect, scale, _) in CLAIMS.items():
        claims += (f'- id: {claim_id}\n  statement: "{STATEMENT}"\n  analyzer: {{name: noop, params: {params}}}\n'
                   f"  expect: {expect}\n" + (f"  scale: {scale}\n" if scale else ""))
    claims += f'- id: no-analyzer-bound-to-this-claim\n  statement: "{STATEMENT}"\n'
    return (f'---\npaper_id: "test:listings"\ntitle: "A long title that no 80-column terminal can show whole, '
            f'about depth and scale in protein language models"\ntags: [plm, depth, scaling, testing]\n'
            f'publication: {{venue: arXiv, year: 2025}}\nquality_score: 3\ndecision: MAYBE\nstatus: reading\n'
            f'claims:\n{claims}---\nbody\n')


@dataclass
class Cli:
    papers: Path
    home: Path
    demo: Done

    def __call__(self, *args: str) -> Done:
        return kb_at_80(*args, "--papers", str(self.papers), "--home", str(self.home))


def kb_at_80(*args: str) -> Done:
    """The real ``kb`` command line (in this process: each command takes milliseconds, not a Python start-up),
    in an 80-column terminal: rich reads ``COLUMNS`` whenever it lays out."""
    return run_kb(None, None, *args, env={"COLUMNS": str(WIDTH), "KB_APP_WORKER": "false", "KB_DATABASE_URL": None})


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    root = tmp_path_factory.mktemp("listings")
    papers = root / "papers"
    papers.mkdir()
    (papers / f"{NOTE_ID}.md").write_text(note_text(), encoding="utf-8")
    demo = kb_at_80("demo", "--papers", str(papers), "--home", str(root / "home"))
    assert demo.returncode == 0, demo.stdout + demo.stderr
    return Cli(papers, root / "home", demo)


def assert_fits(text: str) -> list[str]:
    lines = text.splitlines()
    too_wide = [line for line in lines if len(line.rstrip()) > WIDTH]
    assert not too_wide, "\n".join(too_wide)
    return lines


def table_body(lines: list[str], title: str) -> list[str]:
    """The rows of the listing titled ``title``: the lines after its header rule, up to a blank or unindented
    line that starts no row (the hint under it)."""
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rule = next(i for i in range(start, len(lines)) if lines[i].startswith("─"))
    body = []
    for line in lines[rule + 1:]:
        if not line.strip() or line.startswith(("kb evidence", "5 claims")):
            break
        body.append(line)
    return body


def test_demo_verdict_table_fits_80_columns_one_or_two_lines_per_claim(cli: Cli) -> None:
    lines = assert_fits(cli.demo.stdout)
    body = table_body(lines, "verdicts")
    keys = [f"{NOTE_ID}#{claim_id}" for claim_id in CLAIMS]
    firsts = [line for line in body if line.startswith(NOTE_ID)]
    assert len(firsts) == len(keys) and len(body) <= 2 * len(keys), "\n".join(body)  # 1 or 2 lines per claim
    rows: dict[str, str] = {}  # the folded key put back together -> the row's first line
    for i, line in enumerate(body):
        if line.startswith(NOTE_ID):
            more = body[i + 1] if i + 1 < len(body) and not body[i + 1].startswith(NOTE_ID) else ""
            rows[line.split()[0] + (more.split()[0] if more.strip() else "")] = line
    assert set(rows) == set(keys), rows
    for claim_id, (*_, state) in CLAIMS.items():
        assert LABELS[state] in rows[f"{NOTE_ID}#{claim_id}"]  # on the row's first line, by its label
    # Every claim counted, the one without an analyzer too.
    assert "5 claims: 1 supported · 1 consistent (proxy) · 1 at odds (proxy) · 1 not runnable · 1 no analyzer" \
        in " ".join(cli.demo.stdout.split())
    # kb's own bars: one per run, the one that could not execute not called 'succeeded'.
    bars = [line for line in cli.demo.stderr.splitlines() if "━" in line]
    assert_fits(cli.demo.stderr)
    assert any("not runnable" in line for line in bars) and sum("succeeded" in line for line in bars) >= 3
    assert "Writing model shards" not in cli.demo.stderr and "it/s]" not in cli.demo.stderr


def test_listings_fit_80_columns(cli: Cli) -> None:
    listed = cli("list")
    lines = assert_fits(listed.stdout)
    assert any(line.startswith(NOTE_ID) for line in lines)  # a 55-character id stays whole at 80 columns
    assert any("A long title" in line and "…" in line for line in lines)  # cut to one line, with an ellipsis

    runs = cli("runs")
    lines = assert_fits(runs.stdout)
    assert len(lines) <= 3 + 2 * len(CLAIMS), runs.stdout  # title, header, rule, then at most 2 lines per run
    for state in ("supported", "consistent_proxy", "at_odds_proxy", "not_runnable"):  # each run's verdict
        assert sum(LABELS[state] in line for line in lines) == 1, (state, runs.stdout)
    assert "succeeded" not in runs.stdout and "100%" not in runs.stdout  # not for the run that could not execute

    analyzers = kb_at_80("analyzers")
    lines = assert_fits(analyzers.stdout)
    assert len(lines) <= 12, analyzers.stdout  # one line per analyzer
    one = kb_at_80("analyzers", "noop")
    assert_fits(one.stdout)
    assert "value" in one.stdout and "the 'value' parameter, echoed" in one.stdout

    shown = cli("show", NOTE_ID)
    lines = assert_fits(shown.stdout)
    for claim_id, (*_, state) in CLAIMS.items():
        assert any(line.startswith(claim_id[:25]) and LABELS[state] in line for line in lines), claim_id


def test_evidence_writes_words_and_rounded_numbers_never_dicts_or_none(cli: Cli) -> None:
    shown = {}
    for claim_id, (*_, state) in CLAIMS.items():
        result = cli("evidence", f"{NOTE_ID}#{claim_id}")
        assert result.returncode == 0, result.stdout + result.stderr
        assert_fits(result.stdout)
        text = shown[claim_id] = result.stdout
        assert "None" not in text and "{'" not in text and "': " not in text, text
        assert f"state: {LABELS[state]}" in text and f"verdict: {LABELS[state]}" in text, text
        assert "expects: value >" in text  # the claim's own expectation, also where the run could not execute
    proxy = " ".join(shown["echoed-value-above-two-at-650m-params"].split())
    assert "claimed at: 650M parameters · UniRef50" in proxy and "evidence scale: smoke" in proxy
    exact = shown["echoed-value-above-two-at-small-scale"]
    assert "observed: 3.142" in exact and "3.14159" not in exact  # 4 significant digits
    assert "claimed at: not stated" in exact


def test_json_carries_the_proxy_states(cli: Cli) -> None:
    shown = json.loads(cli("show", NOTE_ID, "--json").stdout)[0]
    assert {c["id"]: c["state"] for c in shown["claims"]} == {
        **{claim_id: state for claim_id, (*_, state) in CLAIMS.items()}, "no-analyzer-bound-to-this-claim": "unbound"}
    (listed,) = json.loads(cli("list", "--json").stdout)
    assert listed["claim_states"] == {"supported": 1, "consistent_proxy": 1, "at_odds_proxy": 1, "not_runnable": 1,
                                      "unbound": 1}
    runs = {r["claim_key"].split("#")[1]: r for r in json.loads(cli("runs", "--json").stdout)}
    assert runs["needs-a-gpu-this-machine-does-not-have"]["shown_status"] == "not runnable"
    assert runs["echoed-value-above-four-at-650m-params"]["verdict"] == "at_odds_proxy"
    (record,) = json.loads(cli("evidence", f"{NOTE_ID}#echoed-value-above-two-at-650m-params",
                               "--json").stdout)
    assert record["verdict"]["proxy_outcome"] == "consistent" and record["verdict"]["kind"] == "inconclusive"
    assert record["state"] == "consistent_proxy"


def test_cli_process_turns_library_progress_bars_off() -> None:
    probe = ("import kb.cli, transformers.utils.logging as tl, huggingface_hub.utils as hu; "
             "print(tl.is_progress_bar_enabled(), hu.are_progress_bars_disabled())")
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env)
    assert out.stdout.split() == ["False", "True"], out.stderr
