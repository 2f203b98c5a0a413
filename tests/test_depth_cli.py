"""``kb models`` / ``kb probe`` in process (``tests/helpers/cli.py``), model loading and import, and bad input, on tiny
models saved by the tests (no hub access)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from analyzers.base import NotRunnable
from analyzers.depth.catalog import MODELS, imported_models
from analyzers.depth.loading import ModelError, hub_reachable, import_model, load_model, resolve_model
from analyzers.depth.tiny import build_random_esm, build_random_gpt2
from tests.helpers.cli import run_kb


@pytest.fixture(autouse=True)
def kb_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("KB_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # this machine has no hub; the offline path must be fast
    return home


@pytest.fixture(scope="module")
def esm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_random_esm(tmp_path_factory.mktemp("esm") / "tiny-esm", num_layers=3, width=16, num_heads=2)


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_random_gpt2(tmp_path_factory.mktemp("gpt2") / "tiny-gpt2", num_layers=2, width=16, num_heads=2)


@pytest.fixture
def fasta(tmp_path: Path) -> Path:
    path = tmp_path / "proteins.fasta"
    path.write_text(">a\nMKTAYIAKQRQISFVKSHFSRQ\n>b\nACDEFGHIKLMNPQ\n>c\nGSHMLEDPVRRW\n", encoding="utf-8")
    return path


def _one_line_error(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    assert lines and lines[-1].startswith("error: "), output
    return " ".join(lines)  # rich may wrap the one line on narrow terminals


def test_models_list_json_names_supported_and_unsupported_models(esm_dir: Path, kb_home: Path) -> None:
    import_model(esm_dir, "my-esm", cache_dir=kb_home / "cache")
    result = run_kb(None, None, "models", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["id"]: row for row in json.loads(result.stdout)}
    esm2 = rows["facebook/esm2_t33_650M_UR50D"]
    assert esm2["supported"] and esm2["num_layers"] == 33 and esm2["width"] == 1280
    assert not rows["EvolutionaryScale/esmc-300m-2024-12"]["supported"]
    assert "esm package" in rows["EvolutionaryScale/esmc-300m-2024-12"]["why_not"]
    # Every family the installed transformers can load is supported (issue 13): only esm-package ESM-C is not.
    unsupported = {row["family"] for row in rows.values() if row["kind"] == "hub" and not row["supported"]}
    assert unsupported == {"ESM-C"} and rows["biohub/ESMC-300M"]["supported"]
    assert rows["hugohrban/progen2-small"]["supported"] and rows["hugohrban/progen2-small"]["input_format"] == "progen2"
    assert rows["airkingbd/dplm_150m"]["supported"] and rows["airkingbd/dplm_150m"]["objective"] == "diffusion"
    assert rows["nferruz/ProtGPT2"]["input_format"] == "protgpt2"
    assert rows["Rostlab/prot_bert"]["input_format"] == "spaced"
    assert rows["my-esm"]["kind"] == "imported" and rows["my-esm"]["num_layers"] == 3
    assert any(row["kind"] == "builtin" for row in rows.values())
    families = {card.family for card in MODELS.values()}
    assert families >= {"ESM-2", "ProtGPT2", "ProGen2", "DPLM", "SaProt", "ProtBERT", "ESM-C"}


def test_models_pull_offline_fails_at_once_with_how_to_provide_weights() -> None:
    start = time.monotonic()
    result = run_kb(None, None, "models", "pull", "facebook/esm2_t6_8M_UR50D")
    assert result.returncode == 1
    message = _one_line_error(result.stderr)
    assert "HF_HUB_OFFLINE" in message and "kb models import" in message
    assert time.monotonic() - start < 5


def test_hub_reachable_respects_offline_and_never_hangs(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    assert hub_reachable() is False  # HF_HUB_OFFLINE=1
    monkeypatch.delenv("HF_HUB_OFFLINE")
    with socket.socket() as silent:  # accepts connections, never answers: a request would hang
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{silent.getsockname()[1]}")
        start = time.monotonic()
        assert hub_reachable(timeout_s=0.5) is False
        assert time.monotonic() - start < 1.5


def test_resolve_unknown_and_unsupported_models_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not an imported name, not a folder, not a hub id"):
        resolve_model("no such model")
    with pytest.raises(ModelError, match=r"ESM-C\) is not supported yet: the esm package's own checkpoint format"):
        resolve_model("EvolutionaryScale/esmc-600m-2024-12")
    with pytest.raises(NotRunnable, match="not in the local Hugging Face cache"):
        resolve_model("nobody-here/no-such-plm")


def test_a_hub_id_never_loads_a_folder_of_that_name_here(esm_dir: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, kb_home: Path) -> None:
    """A note names models by hub id; a folder 'owner/name' planted where a worker runs is not what it loads.
    A folder is one only when written as a path, and ``kb probe --model DIR`` makes the person's own
    relative folder one."""
    import shutil
    planted = tmp_path / "facebook" / "esm2_t6_8M_UR50D"
    shutil.copytree(esm_dir, planted)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(NotRunnable, match="not in the local Hugging Face cache"):  # the hub id, not the folder
        resolve_model("facebook/esm2_t6_8M_UR50D")
    assert resolve_model("./facebook/esm2_t6_8M_UR50D").source == "folder"
    with pytest.raises(ModelError, match=r"a folder here: name it \./facebook or by its absolute path"):
        resolve_model("facebook")
    with pytest.raises(ModelError, match="no such folder"):
        resolve_model("./nowhere")
    probed = run_kb(None, None, "probe", "--model", "facebook/esm2_t6_8M_UR50D", "--out", str(tmp_path / "out"),
                    "--max-sequences", "2", "--no-skips", "--json")
    assert probed.returncode == 0, probed.stderr  # the person's own folder, relative to where they typed it
    assert list(json.loads(probed.stdout)) == [str(planted)]


def test_load_model_refuses_unsupported_architecture(tmp_path: Path) -> None:
    from transformers import RobertaConfig, RobertaForMaskedLM

    config = RobertaConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=32, architectures=["RobertaForMaskedLM"])
    RobertaForMaskedLM(config).save_pretrained(tmp_path)
    with pytest.raises(ModelError, match="unsupported architecture 'RobertaForMaskedLM'.*EsmForMaskedLM"):
        load_model(str(tmp_path))


def test_load_model_reads_pickle_checkpoints_weights_only_and_checks_keys(esm_dir: Path, tmp_path: Path) -> None:
    import shutil

    pickled = tmp_path / "pickled"
    shutil.copytree(esm_dir, pickled)
    state = load_file(pickled / "model.safetensors")
    (pickled / "model.safetensors").unlink()
    torch.save(state, pickled / "pytorch_model.bin")
    loaded = load_model(str(pickled))
    assert loaded.provenance["weights_format"] == "pickle (weights_only)"
    reference = load_model(str(esm_dir))
    for (name, a), (_, b) in zip(loaded.model.state_dict().items(), reference.model.state_dict().items(), strict=True):
        assert torch.equal(a, b), name
    broken = tmp_path / "broken"
    shutil.copytree(esm_dir, broken)
    state.pop(next(k for k in state if "encoder.layer.1" in k))
    save_file(state, broken / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ModelError, match="checkpoint does not match EsmForMaskedLM.*missing_keys"):
        load_model(str(broken))


def test_models_import_validates_registers_and_is_found_by_name(esm_dir: Path, tmp_path: Path, kb_home: Path) -> None:
    result = run_kb(None, None, "models", "import", str(esm_dir), "--name", "tiny-esm")
    assert result.returncode == 0, result.stderr
    entry = imported_models(kb_home / "cache")["tiny-esm"]
    assert Path(entry["path"]).is_relative_to(kb_home / "cache") and entry["weights_format"] == "safetensors"
    with pytest.raises(ModelError, match="unknown model 'tiny-esm'"):  # no cache folder given: no imported names
        load_model("tiny-esm")
    loaded = load_model("tiny-esm", cache_dir=kb_home / "cache")
    assert loaded.adapter.num_layers == 3 and loaded.provenance["weights_hash"] == entry["weights_hash"]
    no_tokenizer = tmp_path / "no-tokenizer"
    no_tokenizer.mkdir()
    for name in ("config.json", "model.safetensors"):
        (no_tokenizer / name).write_bytes((esm_dir / name).read_bytes())
    result = run_kb(None, None, "models", "import", str(no_tokenizer))
    assert result.returncode == 1 and "tokenizer" in _one_line_error(result.stderr)
    assert "no-tokenizer" not in imported_models(kb_home / "cache")
    result = run_kb(None, None, "models", "import", str(tmp_path / "missing"))
    assert result.returncode == 1 and "not a folder" in _one_line_error(result.stderr)


def test_probe_cli_two_models_writes_metrics_plots_and_comparison(
    esm_dir: Path, gpt2_dir: Path, fasta: Path, tmp_path: Path
) -> None:
    out = tmp_path / "runs" / "x"
    result = run_kb(None, None, "probe", "--model", str(esm_dir), "--model", str(gpt2_dir), "--fasta", str(fasta),
                                "--out", str(out), "--batch-size", "2", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert set(summary) == {str(esm_dir), str(gpt2_dir), "comparison_plots"}
    assert {"comparison.png", "comparison.svg"} <= {p.name for p in out.iterdir()}
    esm = summary[str(esm_dir)]
    assert esm["num_layers"] == 3 and esm["provenance"]["weights_hash"] and esm["provenance"]["data_hash"]
    metrics = json.loads((out / esm["folder"] / "depth_metrics.json").read_text(encoding="utf-8"))
    assert len(metrics["layers"]["skip_heatmap"]) == 3 and "skip_attn_heatmap" in metrics["layers"]
    gpt2_metrics = json.loads((out / summary[str(gpt2_dir)]["folder"] / "depth_metrics.json").read_text())
    assert "future_heatmap" in gpt2_metrics["layers"]
    for model in (esm, summary[str(gpt2_dir)]):
        assert all((out / artifact).is_file() for artifact in model["artifacts"])
        assert {Path(a).suffix for a in model["artifacts"]} >= {".svg", ".png", ".json"}
    assert [p.name for p in out.parent.iterdir()] == ["x"]  # no temporary folder left beside it


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("empty", "empty FASTA"),
        ("letters", "invalid letter(s) '1'"),
        ("offline", "not in the local Hugging Face cache"),
        ("cuda", "CUDA asked for"),
        ("too_long", "is longer than"),
        ("unknown", "unknown model"),
    ],
)
def test_probe_cli_bad_input_is_one_line_error_and_leaves_output_intact(
    case: str, expected: str, esm_dir: Path, gpt2_dir: Path, tmp_path: Path
) -> None:
    if case == "cuda" and torch.cuda.is_available():
        pytest.skip("CUDA present")
    fasta = tmp_path / "in.fasta"
    fasta.write_text({"empty": "\n", "letters": ">bad\nAC1E\n", "too_long": ">long\n" + "A" * 300 + "\n"}.get(
        case, ">ok\nMKTAYIAKQRQ\n"), encoding="utf-8")
    model = {"offline": "facebook/esm2_t6_8M_UR50D", "unknown": "not a model", "too_long": str(gpt2_dir)}.get(
        case, str(esm_dir))
    out = tmp_path / "out"
    out.mkdir()
    (out / "earlier.json").write_text("{}", encoding="utf-8")
    args = ["probe", "--model", model, "--fasta", str(fasta), "--out", str(out)]
    result = run_kb(None, None, *args, *(["--device", "cuda"] if case == "cuda" else []))
    assert result.returncode == 1
    assert expected in _one_line_error(result.stderr)
    assert [p.name for p in out.iterdir()] == ["earlier.json"]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")]  # no partial folder left


def test_probe_cli_out_of_memory_is_a_clear_error() -> None:
    import typer

    from analyzers.depth.cli import _clear_errors

    with pytest.raises(typer.Exit) as stopped, _clear_errors():
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
    assert stopped.value.exit_code == 1


def test_sequences_are_written_the_way_each_tokenizer_expects(tmp_path: Path) -> None:
    from transformers import BertTokenizer, EsmTokenizer

    from analyzers.depth.loading import format_sequence, input_format_for

    spaced_vocab = tmp_path / "bert.txt"
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    spaced_vocab.write_text("\n".join([*specials, *"LAGVESIKRDTPNQFYMHCWXUBZO"]) + "\n")
    protbert = BertTokenizer(vocab_file=str(spaced_vocab), do_lower_case=False)
    saprot_vocab = tmp_path / "saprot.txt"
    structure_aware = [f"{a}#" for a in "LAGVESIKRDTPNQFYMHCW"]
    saprot_vocab.write_text("\n".join(["<cls>", "<pad>", "<eos>", "<unk>", "<mask>", *structure_aware]) + "\n")
    saprot = EsmTokenizer(vocab_file=str(saprot_vocab))
    assert input_format_for(protbert) == "spaced" and input_format_for(saprot) == "saprot"
    assert format_sequence("MKUZ", "spaced") == "M K X X"
    spaced_ids = protbert(format_sequence("MKTA", "spaced"))["input_ids"][1:-1]
    assert spaced_ids == protbert.convert_tokens_to_ids(list("MKTA"))
    saprot_ids = saprot(format_sequence("MKT", "saprot"))["input_ids"][1:-1]
    assert saprot_ids == saprot.convert_tokens_to_ids(["M#", "K#", "T#"])


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_probe_cli_family_options_reach_the_probes(tmp_path: Path, kb_home: Path) -> None:
    from analyzers.depth.tiny import build_random_dplm, build_random_progen2, build_random_saprot

    dplm = build_random_dplm(tmp_path / "dplm", num_layers=2, width=16, num_heads=2)
    saprot = build_random_saprot(tmp_path / "saprot", num_layers=2, width=16, num_heads=2)
    progen, _ = build_random_progen2(tmp_path / "progen2", num_layers=2, width=32, num_heads=8, rotary_dim=2)
    result = run_kb(None, None, "models", "import", str(progen), "--name", "tiny-progen2")  # KB_HOME -> --home
    assert result.returncode == 0, result.stderr
    assert imported_models(kb_home / "cache")["tiny-progen2"]["architecture"] == "ProGenForCausalLM"
    fasta = tmp_path / "seq.fasta"
    fasta.write_text(">a\nMKTAYIAKQRQISF\n>b\nACDEFGHIKLMN\n", encoding="utf-8")
    structures = tmp_path / "3di.fasta"
    structures.write_text(">a\ndddvvvpppqqq##\n>b\nDDDVVVPPPQQQ\n", encoding="utf-8")  # either case
    out = tmp_path / "out"
    result = run_kb(None, None, "probe", "--model", str(dplm), "--model", str(saprot), "--model", "tiny-progen2",
                                "--fasta", str(fasta), "--structure-fasta", str(structures), "--noise-level", "0.7",
                                "--out", str(out), "--json", "--home", str(kb_home))
    assert result.returncode == 1 and "takes no structure tokens" in _one_line_error(result.stderr)
    assert not out.exists()
    for model, options, expected in (
        (str(dplm), ["--noise-level", "0.7"], "diffusion noise level 0.7 (step 350 of 500)"),
        (str(saprot), ["--structure-fasta", str(structures)], "over amino acids"),
        ("tiny-progen2", [], "next-token prediction"),
    ):
        result = run_kb(None, None, "probe", "--model", model, "--fasta", str(fasta), *options, "--no-skips",
                                    "--out", str(out), "--json")
        assert result.returncode == 0, result.stderr
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        metrics = json.loads((out / summary[model]["folder"] / "depth_metrics.json").read_text(encoding="utf-8"))
        assert expected in metrics["layers"]["evaluation"]
        if model == str(saprot):
            assert "3Di structure strings from 3di.fasta" in summary[model]["notes"]
    bad = tmp_path / "bad.fasta"
    bad.write_text(">a\ndddvv\n>b\nDDDVVVPPPQQQ\n", encoding="utf-8")
    result = run_kb(None, None, "probe", "--model", str(saprot), "--fasta", str(fasta), "--structure-fasta",
                                str(bad), "--out", str(out))
    assert result.returncode == 1 and "has 5 3Di letters for 14 residues" in _one_line_error(result.stderr)
