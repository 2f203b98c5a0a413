"""A note is data, never a program: what a shared note can and cannot make kb do.

A note that asks for remote code, names folders, or sets cache locations is invalid when it is read; kb
never loads a pickle from its caches; only the person running kb grants such things (``kb verify --set``).
"""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import pytest

from kb.notes.bindings import binding_problems
from kb.notes.files import NoteError, parse_note
from schemas import Claim
from tests.helpers.cli import run_kb

ROOT = Path(__file__).resolve().parents[1]


def _note(analyzer: str, params: dict[str, object], expect: str = "") -> bytes:
    return (f'---\npaper_id: "t:trust"\ntitle: "Trust"\nclaims:\n  - id: c\n    statement: "s"\n'
            f"    analyzer:\n      name: {analyzer}\n      params: {json.dumps(params)}\n{expect}---\nBody.\n").encode()


def _planted_model(folder: Path, marker: Path) -> Path:
    """A model folder whose Python, if kb ever imported it, would leave ``marker`` behind."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({
        "model_type": "evil", "auto_map": {"AutoConfig": "configuration_evil.EvilConfig",
                                           "AutoModelForMaskedLM": "modeling_evil.EvilModel"}}))
    code = f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
    (folder / "configuration_evil.py").write_text(code)
    (folder / "modeling_evil.py").write_text(code)
    return folder


@pytest.mark.parametrize(("analyzer", "params", "field"), [
    ("depth.probe", {"trust_remote_code": True}, "trust_remote_code"),
    ("depth.probe", {"fasta": "/etc/passwd"}, "fasta"),
    ("depth.sweep", {"fasta": "../../secrets.fasta"}, "fasta"),
    ("langevin.sweep", {"work_dir": "/tmp/anywhere"}, "work_dir"),
    ("langevin.contacts", {"cache_dir": "~/.ssh"}, "cache_dir"),
    ("langevin.design", {"structure_file": "/etc/shadow"}, "structure_file"),
    ("langevin.sweep", {"sequences_file": "/etc/passwd"}, "sequences_file"),
])
def test_a_note_cannot_set_what_widens_trust(analyzer: str, params: dict[str, object], field: str,
                                            tmp_path: Path) -> None:
    with pytest.raises(NoteError) as info:
        parse_note(_note(analyzer, params), tmp_path / "n.md")
    assert info.value.field == f"claims.0.analyzer.params.{field}" and info.value.line == 9  # the params line
    assert "only the person running kb may set this" in info.value.message


def test_a_note_cannot_name_a_model_folder(tmp_path: Path) -> None:
    folder = _planted_model(tmp_path / "model", tmp_path / "ran")
    for spec in (str(folder), "~/models/x", "./model", "../model"):
        with pytest.raises(NoteError, match="a note names a model by hub id"):
            parse_note(_note("depth.probe", {"model": spec}), tmp_path / "n.md")
    parse_note(_note("depth.probe", {"model": "facebook/esm2_t6_8M_UR50D"}), tmp_path / "ok.md")  # a hub id is fine


def test_remote_code_in_a_shared_note_leaves_no_trace(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    folder = _planted_model(tmp_path / "planted-model", marker)
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    (papers / "evil.md").write_bytes(_note("depth.probe", {"model": str(folder), "trust_remote_code": True}))

    validated = run_kb(papers, home, "validate")
    assert validated.returncode == 1 and "trust_remote_code" in validated.stderr
    verified = run_kb(papers, home, "verify", "--all")
    assert "Traceback" not in verified.stderr
    assert not marker.exists(), "the planted model's Python ran"
    assert not list(home.glob("evidence/**/*")) if home.exists() else True


def test_cache_files_are_never_unpickled(tmp_path: Path) -> None:
    from analyzers.langevin.store import UnreadableCache, load_plain, save_plain

    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[object, ...]:
            return (Path.write_text, (marker, "ran"))

    planted = tmp_path / "train" / "cached.pt"
    planted.parent.mkdir()
    planted.write_bytes(pickle.dumps({"es_state": Payload()}))
    with pytest.raises(UnreadableCache):
        load_plain(planted)
    assert not marker.exists()
    import numpy as np
    import torch

    save_plain({"w": torch.ones(2), "records": {"losses": np.arange(3.0), "step": np.int64(4)}}, planted)
    back = load_plain(planted)
    assert back["records"]["step"] == 4 and back["records"]["losses"].tolist() == [0.0, 1.0, 2.0]


def test_no_code_path_loads_pickles() -> None:
    """A guard for the future: nothing in kb or the analyzers unpickles data it reads back."""
    unsafe = re.compile(r"weights_only\s*=\s*False|pickle\.loads?\(|cloudpickle\.loads?\("
                        r"|numpy\.load\(.*allow_pickle=True")
    offenders = [f"{path.relative_to(ROOT)}:{i}" for folder in ("kb", "analyzers", "app", "schemas")
                 for path in (ROOT / folder).rglob("*.py")
                 for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if unsafe.search(line)]
    assert offenders == []


def test_binding_problems_name_the_field_and_what_is_allowed() -> None:
    def problems(binding: dict[str, object], expect: dict[str, object] | None = None) -> list[tuple[str, str]]:
        return binding_problems(Claim.model_validate({"id": "c", "statement": "s", "analyzer": binding,
                                                      **({"expect": expect} if expect else {})}))

    assert "unknown analyzer 'depth.nope'" in problems({"name": "depth.nope"})[0][1]
    (field, why), = problems({"name": "noop", "scale": "huge"})
    assert field == "analyzer.scale" and "known: smoke" in why
    (field, why), = problems({"name": "depth.probe", "params": {"max_sequence": 3}})
    assert field == "analyzer.params.max_sequence" and "allowed:" in why and "max_sequences" in why
    (field, why), = problems({"name": "depth.probe", "params": {"max_sequences": "many"}})
    assert field == "analyzer.params.max_sequences"
    (field, why), = problems({"name": "noop"}, {"metric": "valu", "op": ">", "value": 1})
    assert field == "expect.metric" and "value" in why
    assert problems({"name": "depth.probe"}, {"metric": "layers.3.kl_to_final", "op": "<", "value": 1}) == []


@pytest.mark.parametrize("expect", ['{metric: value, op: ">", value: .nan}', '{metric: value, op: ">", value: "two"}',
                                    '{metric: value, op: "<", value: true}'])
def test_thresholds_that_cannot_decide_are_invalid(expect: str, tmp_path: Path) -> None:
    with pytest.raises(NoteError) as info:
        parse_note(_note("noop", {}, f"    expect: {expect}\n"), tmp_path / "n.md")
    assert info.value.field is not None and info.value.field.startswith("claims.0.expect")


def test_the_operator_grants_what_a_note_cannot(tmp_path: Path) -> None:
    from kb.core import KnowledgeBase
    from kb.settings import Settings

    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "n.md").write_bytes(_note("noop", {"value": 3}))
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    kb.index()
    (run,), skipped = kb.verify(["n"], operator_params={"steps": 2})
    assert not skipped and run.params["steps"] == 2
    # A key no targeted analyzer takes is refused, nothing queued (never dropped without a word).
    from analyzers.overrides import OverrideError

    with pytest.raises(OverrideError, match="not_a_noop_field"):
        kb.verify(["n"], operator_params={"steps": 2, "not_a_noop_field": 1})
    assert len(kb.runs()) == 1
