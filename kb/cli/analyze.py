"""``kb run ANALYZER``: run any registered analyzer once, here, on parameters typed by the person running kb.

Every analyzer gets this command for free from the registry: a scale preset, ``--set key=value``
overrides, a device and an output folder. Nothing is queued or recorded in the index (``kb verify`` does
that for claims); the result is written to ``<out>/metrics.json`` beside the analyzer's own files.
Because the parameters come from the operator's own command line, operator-only fields (remote code,
folders) may be set here, unlike in a note.
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

from analyzers.files import atomic_write_json
from analyzers.progress_bars import LoggedProgress
from kb.cli.common import HomeOpt, JsonOpt, app, console, err_console, make_kb, print_json


def _typed_params(
    name: str, overrides: list[str] | None, device: str | None, scale: str | None
) -> tuple[Any, Any]:
    """The analyzer called ``name`` and its parameters from the scale preset, ``--set`` and ``--device``; bad
    input exits 2 with one line."""
    from analyzers import registry
    from analyzers.overrides import model_error_line, split_pairs, typed_overrides

    analyzers = registry.load_all()
    if name not in analyzers:
        known = ", ".join(sorted(analyzers))
        err_console.print(f"[bold red]error[/]: no analyzer {escape(repr(name))}; known: {escape(known)}")
        raise typer.Exit(2)
    analyzer = registry.get(name)
    params_in: dict[str, Any] = {}
    try:
        params_in = typed_overrides(split_pairs(overrides or []), analyzer.Params, name)
        if device is not None:
            params_in["device"] = device
        return analyzer, analyzer.params_for(params_in, scale=scale)
    except ValidationError as exc:  # a rule across fields: still one line
        err_console.print(f"[bold red]error[/]: {escape(model_error_line(exc, params_in))}", soft_wrap=True)
        raise typer.Exit(2) from None
    except ValueError as exc:  # OverrideError, an unknown scale
        err_console.print(f"[bold red]error[/]: {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None


def _run_with_bar(name: str, analyzer: Any, params: Any, out_dir: Path, home: Path | None) -> Any:
    """Run the analyzer into ``out_dir`` under a progress bar; its result. Not runnable here exits 3, a cancel
    130."""
    from analyzers.base import Cancelled, NotRunnable
    from kb.evidence.estimates import StagedClock, estimate, load_libraries, missing_libraries, with_left

    try:
        analyzer.preflight(params)
        with LoggedProgress(TextColumn("{task.description}"), BarColumn(),
                            TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn(), console=err_console,
                            transient=True) as bar:
            task = bar.add_task(escape(name), total=1.0)

            started = time.perf_counter()
            kb = make_kb(None, home, None)
            # The bar over the run's stages, weighted by their estimates (a first-use stage included), never
            # moving back; the time left from each stage's own pace (as the worker shows it).
            clock = StagedClock()
            clock.expect(estimate(kb.engine, analyzer, params, cache_dir=kb.settings.resolved_cache_dir))
            load_libraries(missing_libraries(analyzer), clock, lambda: time.perf_counter() - started)

            def progress(fraction: float, message: str) -> None:
                shown, left = clock.update(fraction, time.perf_counter() - started)
                bar.update(
                    task, completed=shown, description=escape(f"{name}: {with_left(message, left)}"[:70])
                )

            def on_stage(stage: str, until: float) -> None:
                clock.enter(stage, until, time.perf_counter() - started)

            return analyzer.run(params, kb.job_config.run_context(out_dir, progress, on_stage=on_stage))
    except NotRunnable as exc:
        err_console.print(f"[yellow]not runnable here[/]: {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(3) from None
    except Cancelled:
        raise typer.Exit(130) from None


@app.command("run")
def run_analyzer(
    name: Annotated[str, typer.Argument(help="Registered analyzer (see `kb analyzers`).")],
    scale: Annotated[str | None, typer.Option("--scale", help="Named preset to start from.")] = None,
    overrides: Annotated[
        list[str] | None, typer.Option("--set", help="Parameter override key=value (repeatable).")
    ] = None,
    device: Annotated[str | None, typer.Option("--device", help="cpu, cuda or cuda:N.")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Output folder (default: runs/<analyzer>-<time>).")
    ] = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run one analyzer here on a scale preset and overrides; write its files and metrics.json to --out."""
    from analyzers.base import InvalidResult, result_record
    from kb.evidence.verdicts import unresolved_reason

    analyzer, params = _typed_params(name, overrides, device, scale)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    out_dir = out or Path("runs") / f"{name}-{stamp}"
    out_dir.mkdir(parents=True, exist_ok=True)
    result = _run_with_bar(name, analyzer, params, out_dir, home)
    try:
        metrics = result_record(result)
    except InvalidResult as exc:
        err_console.print(f"[bold red]error[/]: {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    atomic_write_json(out_dir / "metrics.json", metrics)
    if as_json:
        print_json(
            {"id": name, "out": str(out_dir), "scale": analyzer.scale_name(params), "metrics": metrics}
        )
        return
    console.print(f"[bold]{escape(name)}[/] at scale {escape(analyzer.scale_name(params))}: "
                  f"{len(result.artifacts)} file(s) and metrics.json in {escape(str(out_dir))}")
    for metric in analyzer.metrics:
        value = metrics.get(metric)
        if isinstance(value, int | float | bool | str):
            shown = f"{value:.4g}" if isinstance(value, float) else str(value)
            # A value whose test failed is shown as such: a claim on it reads inconclusive.
            why = unresolved_reason(metrics, metric)
            console.print(
                f"  {escape(metric)} = {escape(shown)}"
                + (f" [yellow](untestable: {escape(why)})[/]" if why else ""),
                soft_wrap=True,
            )
