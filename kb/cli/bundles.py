"""Evidence that travels: ``kb evidence export`` writes chosen runs as a bundle, ``kb evidence import``
adds one to this KB home (``kb.queue.bundles``: every verdict judged again here, a bad bundle refused in one
line)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kb.cli.common import DbOpt, HomeOpt, JsonOpt, PapersOpt, console, err_console, esc, make_kb, print_json
from kb.cli.runs import evidence_app


@evidence_app.command("export")
def export(
    run_ids: Annotated[list[str] | None, typer.Argument(help="Run ids to export (see `kb runs`).")] = None,
    out: Annotated[Path, typer.Option("-o", "--out", help="The bundle to write: a folder, or a file ending "
                                      ".tar.gz. Never written over.")] = Path("evidence-bundle.tar.gz"),
    claim: Annotated[str | None, typer.Option("--claim", help="Every run with metrics of this claim "
                                              "('<note id>#<claim id>').")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every run with metrics.")] = False,
    with_checkpoints: Annotated[bool, typer.Option(
        "--with-checkpoints", help="Also carry the runs' binary files (checkpoints, arrays); an import never "
        "reads them.")] = False,
    papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None, as_json: JsonOpt = False,
) -> None:
    """Write runs' evidence (parameters, metrics, checks, figures, logs, provenance) as JSON and PNG files."""
    if bool(run_ids) + (claim is not None) + all_ != 1:
        err_console.print("[red]error[/]: name run ids, or pass --claim CLAIM, or --all (one of them)")
        raise typer.Exit(2)
    from kb.queue.bundles import BundleRefused  # loads the store and the index: only when a bundle is made

    kb = make_kb(papers, home, db)
    try:
        report = kb.export_evidence(out, run_ids or None, claim_key=claim, with_checkpoints=with_checkpoints)
    except BundleRefused as exc:
        err_console.print(f"[red]error[/]: {esc(exc)}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    if as_json:
        print_json({"bundle": str(report.path), "runs": report.runs, "left_out": report.left_out})
        return
    for line in report.left_out:
        err_console.print(f"[yellow]left out[/] {esc(line)}", highlight=False, soft_wrap=True)
    console.print(f"wrote {esc(report.path)}: {len(report.runs)} run(s)", highlight=False)


@evidence_app.command("import")
def import_(
    bundle: Annotated[Path, typer.Argument(help="A bundle `kb evidence export` wrote: a folder or a "
                                           ".tar.gz.")],
    papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None, as_json: JsonOpt = False,
) -> None:
    """Add a bundle's runs to this KB home, each verdict judged from its metrics by this kb's own rule."""
    from kb.queue.bundles import BundleRefused  # loads the store and the index: only when a bundle is made

    kb = make_kb(papers, home, db)
    try:
        report = kb.import_evidence(bundle)
    except BundleRefused as exc:
        err_console.print(f"[red]error[/]: {esc(bundle)} refused, nothing imported: {esc(exc)}",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    verdicts = kb.run_verdicts(report.added)
    if as_json:
        print_json({"added": report.added, "already_here": report.already_here,
                    "checkpoints_skipped": report.checkpoints_skipped,
                    "verdicts": {k: v.kind.value if v else None for k, v in verdicts.items()}})
        return
    for run_id in report.added:
        verdict = verdicts.get(run_id)
        console.print(f"run {esc(run_id[:12])}: {esc(verdict.kind.value) if verdict else 'no verdict'}"
                      + (f" — {esc(verdict.reason)}" if verdict else ""), highlight=False, soft_wrap=True)
    if report.already_here:
        console.print(f"{len(report.already_here)} run(s) already here, kept as they are", highlight=False)
    if report.checkpoints_skipped:
        console.print(f"{report.checkpoints_skipped} checkpoint file(s) not imported (kb never reads "
                      "binaries from a bundle)", highlight=False)
    console.print(f"imported {len(report.added)} run(s) from {esc(bundle)}", highlight=False)
