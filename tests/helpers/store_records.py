"""A noop claim run once into a folder store (the KB home): the genuine run record that the store-record
tests copy, forge or plant beside (tests/test_trust_store_records.py, tests/test_trust_store_keys.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.cli import run_kb


def noop_note(paper_id: str, threshold: int) -> str:
    """A note whose one claim ``c`` binds the noop analyzer at value 3 and expects it above ``threshold``."""
    return (f'---\npaper_id: "t:{paper_id}"\ntitle: "{paper_id.title()}"\nclaims:\n  - id: c\n    statement: "s"\n'
            f'    analyzer: {{name: noop, params: {{value: 3}}}}\n'
            f'    expect: {{metric: value, op: ">", value: {threshold}}}\n---\n')


def verified_once(tmp_path: Path, name: str, note: str) -> tuple[Path, Path, dict[str, Any]]:
    """``note`` written as ``papers/NAME.md`` and verified once: papers, home and the run's record."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    (papers / f"{name}.md").write_text(note, encoding="utf-8")
    assert run_kb(papers, home, "verify", name).returncode == 0
    (record,) = (home / "runs").glob("*/attempt-*.json")
    return papers, home, json.loads(record.read_text())
