"""``kb models list | pull | import`` and ``kb probe``: the depth package's own commands, added to the ``kb``
CLI through the registry's ``register_commands`` hook.

``kb probe`` runs ``depth.probe`` for one or more models and writes, per model, ``depth_metrics.json``
and plots, plus ``summary.json`` and (several models) comparison plots across relative depth. The
output folder is built beside the target under a temporary name and renamed into place at the end,
so a failed run leaves no half-written folder and an earlier result at the same path intact.

The KB home comes from the kb CLI's own ``--home`` option (``KB_HOME``, default ``.kb``), declared on
these commands the way kb declares it on its own: imported models and built-in trained models live in
its ``cache/`` folder. ``kb probe``'s runs get their context (cache, offline flag) from the ``CommandHost``
kb hands the hook, built from the operator's settings as the worker's runs are. Nothing here imports kb.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from analyzers import files
from analyzers.base import Cancelled, NotRunnable, looks_like_path
from analyzers.progress_bars import LoggedProgress
from analyzers.registry import CommandHost, register_commands

console = Console()
err_console = Console(stderr=True)

HomeOpt = Annotated[
    Path | None,
    typer.Option(
        "--home",
        envvar="KB_HOME",
        help="KB home (index, evidence, caches); imported models live under its cache/ folder.",
    ),
]
DEFAULT_HOME = Path(".kb")  # kb's default KB home (kb.settings.Settings.home)


def cache_dir(home: Path | None) -> Path:
    """The KB home's cache folder, where runs keep what outlives them (imported and built-in models)."""
    return (home or DEFAULT_HOME) / "cache"


def _fail(message: str, code: int = 1) -> None:
    err_console.print(f"[bold red]error[/]: {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def _clear_errors() -> Iterator[None]:
    """Bad input and unavailable resources become one-line errors with a non-zero exit code."""
    import torch
    from pydantic import ValidationError

    from analyzers.depth.loading import OutOfMemory

    try:
        yield
    except ValidationError as error:
        problems = "; ".join(
            f"--{'.'.join(map(str, e['loc'])).replace('_', '-')}: {e['msg']}" for e in error.errors()
        )
        _fail(problems)
    except (NotRunnable, OutOfMemory, FileNotFoundError, ValueError) as error:
        _fail(str(error).splitlines()[0] if str(error) else type(error).__name__)
    except torch.OutOfMemoryError as error:
        _fail(f"out of memory ({str(error).splitlines()[0]}); lower --batch-size or --max-length")
    except Cancelled:
        _fail("cancelled", 130)


def _slug(model: str, taken: set[str]) -> str:
    base = model.removeprefix("builtin:")
    base = Path(base).name if Path(base).is_dir() else base.replace("/", "--")
    base = re.sub(r"[^\w.-]+", "_", base) or "model"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


@contextmanager
def atomic_folder(target: Path) -> Iterator[Path]:
    """A temporary folder beside ``target`` that replaces it only if the block succeeds."""
    target = target.expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise ValueError(f"--out {target}: exists and is not a folder")
    with files.atomic_folder(target) as staging:
        yield staging


def _hub_cached(hub_id: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(hub_id, "config.json"), str)


def _model_rows(cache: Path) -> list[dict[str, Any]]:
    from analyzers.depth.catalog import BUILTINS, MODELS, describe, imported_models

    rows = []
    for card in MODELS.values():
        row = card.row()
        row["cached"] = _hub_cached(card.hub_id)
        rows.append(row)
    for name, recipe in BUILTINS.items():
        rows.append(
            {
                "id": name,
                "kind": "builtin",
                "family": "ESM-2-shaped (trained here)",
                "objective": "masked",
                "num_layers": recipe.num_layers,
                "width": recipe.width,
                "approx_params": None,
                "loader": "EsmForMaskedLM",
                "supported": True,
                "why_not": "",
                "note": describe(name),
                "cached": None,
            }
        )
    for name, entry in imported_models(cache).items():
        rows.append(
            {
                "id": name,
                "kind": "imported",
                "family": "local",
                "objective": None,
                "num_layers": entry.get("num_layers"),
                "width": entry.get("width"),
                "approx_params": None,
                "loader": entry.get("architecture"),
                "supported": True,
                "why_not": "",
                "note": f"imported from {entry.get('source')}",
                "cached": True,
                "path": entry.get("path"),
            }
        )
    return rows


def _params_text(value: float | None) -> str:
    if not value:
        return ""
    return f"{value / 1e9:.1f}B" if value >= 1e9 else f"{value / 1e6:.0f}M"


def add_models_commands(app: typer.Typer) -> None:
    """``kb models list | pull | import``."""
    models_app = typer.Typer(
        help="PLMs the depth probes know: list, download (pull) or import local folders.",
        no_args_is_help=True,
    )
    app.add_typer(models_app, name="models")

    @models_app.command("list")
    def list_models(
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False, home: HomeOpt = None
    ) -> None:
        """List the known PLMs (hub), built-in trained tiny models and imported folders, with support
        status."""
        with _clear_errors():
            rows = _model_rows(cache_dir(home))
        if as_json:
            sys.stdout.write(json.dumps(rows, indent=2) + "\n")
            return
        table = Table(title="models for kb probe", header_style="bold cyan")
        for column in ("id", "family", "objective", "layers", "width", "params", "loader", "status"):
            table.add_column(column, overflow="fold")
        for row in rows:
            if not row["supported"]:
                status = f"[yellow]not supported[/] ({row['loader']})"
            elif row["kind"] == "hub":
                status = "[green]cached[/]" if row["cached"] else "supported (kb models pull)"
            else:
                status = f"[green]{row['kind']}[/]"
            table.add_row(
                row["id"],
                row["family"],
                row["objective"] or "",
                str(row["num_layers"] or ""),
                str(row["width"] or ""),
                _params_text(row["approx_params"]),
                row["loader"] or "",
                status,
            )
        console.print(table)

    @models_app.command("pull")
    def pull(
        model_id: Annotated[str, typer.Argument(help="Hub id, e.g. facebook/esm2_t6_8M_UR50D.")],
        revision: Annotated[str | None, typer.Option(help="Branch, tag or commit.")] = None,
        trust_remote_code: Annotated[
            bool, typer.Option("--trust-remote-code", help="Also fetch model code.")
        ] = False,
    ) -> None:
        """Download a hub model into the Hugging Face cache (safetensors preferred); offline it fails at
        once."""
        from analyzers.depth.loading import load_model, pull_model

        with _clear_errors():
            resolved = pull_model(model_id, revision, trust_remote_code)
            loaded = load_model(resolved, trust_remote_code=trust_remote_code)
        console.print(f"[green]ok[/] {model_id} @ {resolved.revision} in {resolved.folder} "
                      f"({loaded.adapter.architecture}, {loaded.adapter.num_layers} layers)", highlight=False)

    @models_app.command("import")
    def import_(
        folder: Annotated[Path, typer.Argument(help="Folder with config.json, weights and tokenizer files.")],
        name: Annotated[str | None, typer.Option(help="Name for --model (default: the folder name).")] = None,
        trust_remote_code: Annotated[bool, typer.Option("--trust-remote-code")] = False,
        home: HomeOpt = None,
    ) -> None:
        """Validate a local model folder, copy it under KB_HOME/cache/models and register it for --model
        NAME."""
        from analyzers.depth.loading import import_model

        with _clear_errors():
            entry = import_model(folder, name, trust_remote_code, cache_dir=cache_dir(home))
        console.print(
            f"[green]imported[/] {entry['name']} ({entry['architecture']}, {entry['num_layers']} layers, "
            f"{entry['weights_format']}) -> {entry['path']}",
            highlight=False,
        )


# ``kb probe``'s options, named here so the command reads as what it does.
ModelsOpt = Annotated[
    list[str],
    typer.Option(
        "--model", "-m", help="Hub id, folder, imported or built-in name; repeat to compare models."
    ),
]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Output folder (replaced atomically).")]
FastaOpt = Annotated[Path | None, typer.Option(help="FASTA; default: the shipped designed sequences.")]
DeviceOpt = Annotated[str, typer.Option(help="cpu, cuda or cuda:N.")]
DtypeOpt = Annotated[str, typer.Option(help="float32, bfloat16 or float16.")]
BatchSizeOpt = Annotated[int, typer.Option(min=1, help="Sequences per pass.")]
MaxLengthOpt = Annotated[int | None, typer.Option(min=1, help="Drop sequences longer than this.")]
MaxSequencesOpt = Annotated[int, typer.Option(min=1, help="Sequences probed.")]
ReplayTokensOpt = Annotated[
    int | None,
    typer.Option(
        min=0, help="Skip probes: tokens replayed together (default: 1 variant on CPU, 16384 on CUDA)."
    ),
]
SkipsOpt = Annotated[bool, typer.Option("--skips/--no-skips", help="Layer-skip and deletion probes.")]
SeedOpt = Annotated[int, typer.Option(help="Seed (masking, built-in training).")]
NoiseLevelOpt = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=1.0,
        help="Diffusion LMs (DPLM): share of residues masked, t/T at diffusion step t of T=500.",
    ),
]
StructureFastaOpt = Annotated[
    Path | None, typer.Option(help="SaProt: FASTA of 3Di strings, same record names as the sequences.")
]
TrustRemoteCodeOpt = Annotated[bool, typer.Option("--trust-remote-code")]
SummaryJsonOpt = Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")]


def _probe_models(
    param_sets: list[Any], out: Path, host: CommandHost, home: Path | None, quiet: bool
) -> tuple[dict[str, Any], dict[str, tuple[str, Any]]]:
    """Probe each model into its own folder of a staging folder that replaces ``out`` once all are done,
    with a progress bar per model (none when ``quiet``). Returns the summary written to ``summary.json``
    and, per model, its folder name and result."""
    from analyzers.depth import plots
    from analyzers.depth.compute import probe_one
    from analyzers.files import json_safe

    summary: dict[str, Any] = {}
    taken: set[str] = set()
    with atomic_folder(out) as staging, LoggedProgress(
        TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(), console=err_console, transient=False, disable=quiet,
    ) as bar:  # fmt: skip
        results = {}
        for params in param_sets:
            slug = _slug(params.model, taken)
            task = bar.add_task(params.model, total=1.0)

            def progress(fraction: float, message: str, task: Any = task, name: str = params.model) -> None:
                bar.update(task, completed=fraction, description=f"{name}: {message}"[:90])

            context = host.run_context(staging / slug, progress, home=home)
            result = probe_one(params, context, staging / slug, title=params.model)
            bar.update(task, completed=1.0, description=f"{params.model}: done")
            results[params.model] = (slug, result)
            summary[params.model] = {
                "folder": slug,
                **result.model_dump(mode="json", exclude={"layers"}),
                "artifacts": [f"{slug}/{a}" for a in result.artifacts],
            }
            _free_memory()
        if len(results) > 1:
            names = plots.write_comparison({m: r.layers for m, (_, r) in results.items()}, staging)
            summary["comparison_plots"] = names
        (staging / "summary.json").write_text(json.dumps(json_safe(summary), indent=2), encoding="utf-8")
    return summary, results


def _print_probe_table(out: Path, results: dict[str, tuple[str, Any]]) -> None:
    """One row per probed model: its depth numbers at a glance."""
    table = Table(title=f"depth probes -> {out}", header_style="bold cyan")
    for column in (
        "model",
        "layers",
        "late-half KL share",
        "late/early skip effect",
        "erank ratio",
        "perplexity",
    ):
        table.add_column(column)
    for name, (_, result) in results.items():
        cells = [
            result.late_half_kl_drop_fraction,
            result.late_to_early_skip_effect_ratio,
            result.erank_ratio,
            result.baseline_perplexity,
        ]
        table.add_row(name, str(result.num_layers), *["" if c is None else f"{c:.3g}" for c in cells])
    console.print(table)


def _as_given(models: list[str]) -> list[str]:
    """The person's ``--model`` values, a folder they name relative to here made absolute: kb loads a folder
    only when it is written as a path, so that a note's hub id never loads a local folder of that name."""
    return [str(Path(name).resolve()) if not looks_like_path(name, syntax_only=True) and Path(name).is_dir()
            else name for name in models]


def add_probe_command(app: typer.Typer, host: CommandHost) -> None:
    """``kb probe``: its runs get their cache and offline flag from ``host`` (kb's settings)."""

    @app.command("probe")
    def probe(
        model: ModelsOpt,
        out: OutOpt,
        fasta: FastaOpt = None,
        device: DeviceOpt = "cpu",
        dtype: DtypeOpt = "float32",
        batch_size: BatchSizeOpt = 8,
        max_length: MaxLengthOpt = None,
        max_sequences: MaxSequencesOpt = 16,
        replay_tokens: ReplayTokensOpt = None,
        skips: SkipsOpt = True,
        seed: SeedOpt = 0,
        noise_level: NoiseLevelOpt = 0.5,
        structure_fasta: StructureFastaOpt = None,
        trust_remote_code: TrustRemoteCodeOpt = False,
        as_json: SummaryJsonOpt = False,
        home: HomeOpt = None,
    ) -> None:
        """Probe one or more PLMs: logit lens, contributions, layer skips and deletion, ranks, attention
        entropy."""
        from analyzers.depth.spec import DepthProbeParams
        from analyzers.files import json_safe

        with _clear_errors():
            if fasta is not None and not fasta.is_file():
                raise FileNotFoundError(f"--fasta {fasta}: file not found")
            param_sets = [
                DepthProbeParams(
                    model=name,
                    fasta=str(fasta) if fasta else None,
                    device=device,
                    dtype=dtype,
                    batch_size=batch_size,
                    max_length=max_length,
                    max_sequences=max_sequences,
                    replay_tokens=replay_tokens,
                    skips=skips,
                    seed=seed,
                    trust_remote_code=trust_remote_code,
                    noise_level=noise_level,
                    structure_fasta=str(structure_fasta) if structure_fasta else None,
                )
                for name in _as_given(model)
            ]
            summary, results = _probe_models(param_sets, out, host, home, quiet=as_json)
        if as_json:
            sys.stdout.write(json.dumps(json_safe(summary), indent=2) + "\n")
            return
        _print_probe_table(out, results)


def _free_memory() -> None:
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


@register_commands
def add(app: typer.Typer, host: CommandHost) -> None:
    """Add ``kb models`` and ``kb probe`` to the kb CLI."""
    add_models_commands(app)
    add_probe_command(app, host)
