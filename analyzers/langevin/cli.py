"""``kb langevin ...``: run the experiment at a scale, list the Table A1 models, design sequences.

Registered through ``analyzers.registry.register_commands``. ``run`` and ``design`` build their output in
a temporary folder beside the target and rename it into place only when everything succeeded, so a
failed or interrupted run leaves no half-written output (earlier output stays intact); the sampler's
checkpoints live in the work folder, so running the same command again continues where it stopped.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from analyzers.files import atomic_write_json, staging_folder, swap_in_folder
from analyzers.registry import CommandHost, register_commands

USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError, ConnectionError, OSError)


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(1)


def _temperatures(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        _fail(f"--temperatures expects comma-separated numbers, got {text!r}")
    return None


def _publish(staging: Path, target: Path, overwrite: bool) -> None:
    """Move the finished staging folder to ``target`` (replacing it only with ``overwrite``)."""
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target} exists; pass --overwrite to replace it")
    swap_in_folder(staging, target)


def _progress_context():  # noqa: ANN202 - a rich Progress
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

    from analyzers.progress_bars import LoggedProgress

    return LoggedProgress(
        TextColumn("[bold]{task.percentage:>5.1f}%"), BarColumn(), TimeElapsedColumn(),
        TextColumn("{task.description}"), transient=False,
    )  # fmt: skip


def _sweep_params(
    analyzer: Any, scale: str, set_: list[str] | None, options: dict[str, Any], files: dict[str, Path | None]
) -> Any:
    """``langevin.sweep``'s parameters at ``scale`` from ``--set`` pairs and the options given (None: not
    given); a bad value or a missing file (``files``: what each is) fails with one line."""
    from pydantic import ValidationError

    from analyzers.overrides import OverrideError, model_error_line, split_pairs, typed_overrides

    try:
        typed = typed_overrides(split_pairs(set_ or []), analyzer.Params, analyzer.name)
    except OverrideError as error:
        _fail(str(error))
    keys = ("device", "seed")  # always set: their defaults are the command's
    overrides: dict[str, Any] = {key: options[key] for key in keys}
    overrides.update(typed)
    overrides.update({key: value for key, value in options.items() if key not in keys and value is not None})
    for what, path in files.items():
        if path is not None and not path.is_file():
            _fail(f"{what} file not found: {path}")
    try:
        return analyzer.params_for(overrides, scale=scale)
    except ValidationError as error:
        _fail(f"invalid parameters: {model_error_line(error, overrides)}")
    except ValueError as error:
        _fail(str(error))


def _run_sweep(
    analyzer: Any, params: Any, out: Path, overwrite: bool, host: CommandHost
) -> tuple[Any, float]:
    """Run the experiment and the three results into a staging folder beside ``out``, then rename it into
    place; a failure or an interrupt leaves no half-written output. Returns the sweep result and the seconds
    taken."""
    from analyzers.base import Cancelled, NotRunnable
    from analyzers.langevin.compute import contacts_result, similarity_result, sweep_result
    from analyzers.langevin.pipeline import run_experiment

    staging = staging_folder(out)
    started = time.perf_counter()
    try:
        with _progress_context() as progress:
            task = progress.add_task("starting", total=1.0)

            def report(fraction: float, message: str) -> None:
                progress.update(task, completed=max(0.0, min(1.0, fraction)), description=message[:80])

            context = host.run_context(staging, report)
            experiment = run_experiment(params, report, ctx=context)  # type: ignore[arg-type]
            name = analyzer.scale_name(params)
            sweep = sweep_result(experiment, staging, name)
            results = {
                "sweep": sweep,
                "contacts": contacts_result(experiment, staging, name),
                "similarity": similarity_result(experiment, staging, name),
            }
            progress.update(task, completed=1.0, description="done")
        from analyzers.langevin.design import write_fasta

        write_fasta(staging / "designed.fasta", experiment.sequences)
        seconds = time.perf_counter() - started
        metrics: dict[str, Any] = {key: result.model_dump(mode="json") for key, result in results.items()}
        metrics["wall_seconds"] = seconds
        metrics["params"] = params.model_dump(mode="json")
        atomic_write_json(staging / "metrics.json", metrics)
        atomic_write_json(staging / "provenance.json", {**experiment.provenance, "wall_seconds": seconds})
        _publish(staging, out, overwrite)
    except NotRunnable as error:
        shutil.rmtree(staging, ignore_errors=True)
        _fail(f"not runnable here: {error}")
    except (Cancelled, KeyboardInterrupt):
        shutil.rmtree(staging, ignore_errors=True)
        _fail("interrupted; run the same command again to continue from the last checkpoint")
    except USER_ERRORS as error:
        shutil.rmtree(staging, ignore_errors=True)
        _fail(str(error))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sweep, seconds


@register_commands
def add_langevin_commands(app: typer.Typer, host: CommandHost) -> None:
    """Add ``kb langevin run|models|design``; ``run`` gets its cache and offline flag from ``host`` (kb's
    settings), as the worker's runs do."""
    langevin = typer.Typer(
        help="Langevin sampling of compact protein LMs (seed paper 002).", no_args_is_help=True
    )
    app.add_typer(langevin, name="langevin")

    @langevin.command("run")
    def run(
        out: Annotated[Path, typer.Option("--out", help="Output folder (created; must not exist).")],
        scale: Annotated[
            str, typer.Option(help="smoke (seconds), small (minutes, CPU), paper (GPU).")
        ] = "smoke",
        device: Annotated[str, typer.Option(help="cpu, cuda or cuda:N.")] = "cpu",
        structure: Annotated[Path | None, typer.Option("--structure", help="PDB or mmCIF file.")] = None,
        pdb_id: Annotated[str | None, typer.Option("--pdb-id", help="RCSB id (online only, cached).")] = None,
        sequences: Annotated[
            Path | None,
            typer.Option("--sequences", help="FASTA or one sequence per line, instead of the design."),
        ] = None,
        chain: Annotated[str | None, typer.Option(help="Chain id (default: the first).")] = None,
        model: Annotated[
            int, typer.Option("--nmr-model", help="Model number of an NMR ensemble (1-based).")
        ] = 1,
        cutoff: Annotated[float | None, typer.Option(help="Heavy-atom contact cutoff, A.")] = None,
        temperatures: Annotated[
            str | None, typer.Option(help="Comma-separated sampling temperatures.")
        ] = None,
        sampler: Annotated[str | None, typer.Option(help="pseudo-langevin, unconstrained or sgld.")] = None,
        workers: Annotated[
            int | None, typer.Option(help="Processes for the temperatures (0: per core).")
        ] = None,
        work_dir: Annotated[Path | None, typer.Option(help="Cache and checkpoint folder.")] = None,
        seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
        set_: Annotated[
            list[str] | None, typer.Option("--set", help="Any parameter: key=value (repeatable).")
        ] = None,
        overwrite: Annotated[bool, typer.Option(help="Replace --out if it exists.")] = False,
    ) -> None:
        """Design sequences, train ES/OT models, sample them over temperatures, write metrics and plots."""
        from analyzers.langevin.spec import LangevinSweep

        if out.exists() and not overwrite:
            _fail(f"{out} exists; pass --overwrite to replace it, or choose another --out")
        analyzer = LangevinSweep()
        params = _sweep_params(
            analyzer,
            scale,
            set_,
            {
                "device": device,
                "seed": seed,
                "structure_file": str(structure) if structure else None,
                "pdb_id": pdb_id,
                "sequences_file": str(sequences) if sequences else None,
                "chain": chain,
                "cutoff": cutoff,
                "temperatures": _temperatures(temperatures),
                "sampler": sampler,
                "workers": workers,
                "work_dir": str(work_dir) if work_dir else None,
                "model_index": model if model != 1 else None,
            },
            {"structure": structure, "sequences": sequences},
        )
        sweep, seconds = _run_sweep(analyzer, params, out, overwrite, host)
        typer.echo(f"wrote {out} in {seconds:.0f} s ({sweep.scale.name} scale, {params.device})")
        typer.echo(f"test error by T: {[round(e, 4) for e in sweep.test_error_by_temperature]} "
                   f"(interior minimum: {sweep.test_error_min_is_interior})")  # fmt: skip

    langevin.command("models")(models)
    langevin.command("design")(design_command)


def models(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """The Table A1 configurations and their exact parameter counts."""
    from analyzers.langevin.model import table_a1

    rows = table_a1()
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("name", "kind", "blocks", "d", "m", "parameters", "paper (k)")
    for row in rows:
        table.add_row(
            str(row["name"]),
            str(row["kind"]),
            str(row["num_layers"] or "-"),
            str(row["embed_dim"]),
            str(row["hidden_dim"]),
            f"{row['parameters']:,}",
            str(row["paper_thousands"]),
        )
    Console().print(table)


def design_command(
    out: Annotated[Path, typer.Option("--out", help="FASTA file to write.")],
    n: Annotated[int, typer.Option("--n", help="Number of sequences.")] = 12000,
    structure: Annotated[Path | None, typer.Option("--structure", help="PDB or mmCIF file.")] = None,
    pdb_id: Annotated[str | None, typer.Option("--pdb-id", help="RCSB id (online only, cached).")] = None,
    chain: Annotated[str | None, typer.Option(help="Chain id (default: the first).")] = None,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    overwrite: Annotated[bool, typer.Option(help="Replace --out if it exists.")] = False,
) -> None:
    """Design sequences on the structure's contacts (the shipped 1UBI by default) into a FASTA file."""
    from pydantic import ValidationError

    from analyzers.base import RunContext
    from analyzers.langevin.spec import LangevinDesign

    if out.exists() and not overwrite:
        _fail(f"{out} exists; pass --overwrite to replace it")
    analyzer = LangevinDesign()
    values: dict[str, Any] = {"num_sequences": n, "seed": seed, "chain": chain}
    if structure is not None:
        values["structure_file"] = str(structure)
    if pdb_id is not None:
        values["pdb_id"] = pdb_id
    try:
        params = analyzer.params_for(values)
    except (ValidationError, ValueError) as error:
        _fail(f"invalid parameters: {error}")
    staging = staging_folder(out)
    try:
        with _progress_context() as progress:
            task = progress.add_task("designing", total=1.0)
            ctx = RunContext(
                out_dir=staging,
                progress=lambda f, m: progress.update(task, completed=f, description=m[:80]),
            )
            result = analyzer.run(params, ctx)
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists() and overwrite:
            out.unlink()
        (staging / "designed.fasta").replace(out)
    except USER_ERRORS as error:
        _fail(str(error))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    typer.echo(
        f"wrote {result.num_sequences} sequences to {out} ({result.sequences_per_second:.0f}/s); identity "
        f"{result.mean_pairwise_identity:.3f} between sequences, {result.consecutive_identity:.3f} between "
        f"consecutive samples of a chain; site entropy {result.site_entropy:.2f} nats"
    )
