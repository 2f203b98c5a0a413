"""Commands over analyzers, runs and evidence: analyzers, verify, worker, runs, cancel, evidence."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from kb.cli.common import (
    DbOpt,
    HomeOpt,
    JsonOpt,
    PapersOpt,
    app,
    console,
    err_console,
    esc,
    fail,
    make_kb,
    print_json,
)
from kb.core import KnowledgeBase
from kb.notes import NoteError
from kb.queue.executors import EXECUTORS
from kb.verdicts import describe


@app.command()
def analyzers(as_json: JsonOpt = False) -> None:
    """List registered analyzers with their metrics, scales and resource needs."""
    rows: list[dict[str, Any]] = [{"id": name, "summary": cls.summary, "version": cls.version, "metrics": cls.metrics,
             "scales": sorted(cls.scales), "gpu": cls.resources.gpu.value, "memory_gb": cls.resources.memory_gb}
            for name, cls in KnowledgeBase.analyzers().items()]
    from analyzers import registry

    for label, error in registry.broken().items():
        err_console.print(f"[bold red]broken[/]: analyzer package {esc(label)} failed to load: {esc(error)}",
                          highlight=False)
    if as_json:
        print_json(rows)
        return
    table = Table(title=f"{len(rows)} analyzer(s)", header_style="bold cyan")
    for column in ("name", "summary", "scales", "gpu", "metrics"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(esc(row["id"]), esc(row["summary"]), esc(", ".join(row["scales"])), row["gpu"],
                      esc(", ".join(row["metrics"])))
    console.print(table)


@app.command()
def verify(
    targets: Annotated[list[str] | None, typer.Argument(help="Claim keys (note#claim) or note ids.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every claim bound to an analyzer.")] = False,
    stale: Annotated[bool, typer.Option("--stale", help="Only claims without current evidence.")] = False,
    device: Annotated[str, typer.Option(help="cpu, cuda or cuda:N.")] = "cpu",
    executor: Annotated[str, typer.Option(help="local (this machine), ray (Ray tasks) or slurm (one Slurm job per "
                                          "run; GPUs on request).")] = "local",
    ray_address: Annotated[str | None, typer.Option(help="Address of an existing Ray cluster.")] = None,
    run: Annotated[bool, typer.Option("--run/--queue-only", help="Also run the queue here until it is empty.")] = True,
    grants: Annotated[list[str] | None, typer.Option("--set", help="Parameter key=value for every run whose "
                                                     "analyzer takes it, including what a note may not set "
                                                     "(trust_remote_code=true, work_dir=..., fasta=...).")] = None,
    papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None, as_json: JsonOpt = False,
) -> None:
    """Queue re-verification of claims (and, by default, run the queue here, with progress)."""
    if not targets and not all_ and not stale:
        err_console.print("[red]error[/]: name claims or notes, or pass --all or --stale")
        raise typer.Exit(2)
    if executor not in EXECUTORS:
        err_console.print(f"[red]error[/]: executor {executor!r} is unknown; use one of {', '.join(EXECUTORS)}")
        raise typer.Exit(2)
    kb = make_kb(papers, home, db)
    if executor == "slurm" and kb.settings.resolved_database_url.startswith("sqlite"):
        err_console.print("[red]error[/]: Slurm jobs run on other machines and need a shared index: set "
                          "KB_DATABASE_URL (or --db) to a PostgreSQL URL, e.g. postgresql+psycopg://user@host/kb, "
                          "and KB_ARTIFACT_STORE to a store the nodes reach (see README, Running on a GPU cluster)",
                          soft_wrap=True)
        raise typer.Exit(2)
    operator_params = _parse_grants(grants or [])
    try:
        queued, skipped = kb.verify(list(targets) if targets else None, stale_only=stale, device=device,
                                    executor=executor, operator_params=operator_params)
    except NoteError as exc:
        fail(exc)
        return
    for key, reason in skipped:
        err_console.print(f"[yellow]skipped[/] {esc(key)}: {esc(reason)}", highlight=False)
    if not as_json:
        console.print(f"queued {len(queued)} run(s)")
    if run and queued:
        ids = [r.id for r in queued]
        work: Callable[[], object] = {"ray": lambda: kb.work_on_ray(ids, address=ray_address),
                                      "slurm": lambda: kb.work_on_slurm(ids)}.get(executor, lambda: kb.work(once=True))
        watch(kb, ids, work, quiet=as_json)
    elif executor == "slurm" and queued:
        for run_id, job_id in kb.submit_to_slurm([r.id for r in queued]).items():
            err_console.print(f"run {run_id[:12]}: Slurm job {job_id}")
    statuses = {r.id: r.status.value for r in kb.runs(ids=[r.id for r in queued], limit=len(queued) or 1)}
    history = {key: kb.evidence(key) for key in {r.claim_key for r in queued if r.claim_key}}
    latest = {key: records[0] for key, records in history.items() if records}
    rows = []
    for record in queued:
        status = statuses[record.id]
        evidence = latest.get(record.claim_key) if record.claim_key else None
        verdict = evidence.verdict if evidence and evidence.run_id == record.id else None
        rows.append({"id": record.claim_key, "run": record.id, "analyzer": record.analyzer, "status": status,
                     "verdict": verdict.kind.value if verdict else None, "reason": verdict.reason if verdict else None})
    if as_json:
        print_json(rows)
    else:
        verdict_table(rows)
    if any(r["status"] == "failed" for r in rows):
        raise typer.Exit(1)


def _parse_grants(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` pairs (YAML values) given by the person running kb."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    grants: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            err_console.print(f"[red]error[/]: --set {escape(pair)} is not key=value "
                              "(e.g. --set trust_remote_code=true)")
            raise typer.Exit(2)
        grants[key.strip()] = yaml.load(raw) if raw.strip() else None
    return grants


ENDED = {"succeeded", "failed", "cancelled"}


def watch(kb: KnowledgeBase, ids: list[str] | None, work: Callable[[], object] | None = None, *,
           quiet: bool = False, poll: float = 0.5) -> None:
    """One progress bar per run, refreshed from the database until the runs end (all active runs if no ids).

    ``work`` (a local worker or the Ray executor) runs in a thread meanwhile: the bars show what the
    durable queue says, so they look the same whoever executes the runs.
    """
    failure: list[BaseException] = []

    def guarded() -> None:
        try:
            work() if work is not None else None
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread below
            failure.append(exc)

    thread = threading.Thread(target=guarded, daemon=True)
    columns = (TextColumn("{task.fields[label]}"), BarColumn(), TaskProgressColumn(),
               TextColumn("[bold]{task.fields[status]}"), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=err_console, disable=quiet) as bars:
        tasks: dict[str, TaskID] = {}
        thread.start()
        while True:
            records = kb.runs(ids=ids, limit=10_000) if ids is not None else [
                r for r in kb.runs(limit=10_000) if r.status.value not in ENDED or r.id in tasks]
            for record in records:
                if record.id not in tasks:
                    label = f"{record.claim_key or record.analyzer} [dim]{record.id[:8]}[/]"
                    tasks[record.id] = bars.add_task("", total=1.0, status="", label=label)
                message = (record.error or record.message or "").splitlines()
                bars.update(tasks[record.id], completed=record.progress, status=record.status.value,
                            description=message[0][:60] if message else "")
            if all(r.status.value in ENDED for r in records) and not thread.is_alive():
                break
            if not thread.is_alive() and work is not None:  # runs left for other workers: stop watching
                break
            time.sleep(poll)
    thread.join()
    if failure:
        raise failure[0]


def verdict_table(rows: list[dict[str, Any]]) -> None:
    colour = {"supported": "green", "refuted": "red", "inconclusive": "yellow", "not_runnable": "magenta",
              "error": "red"}
    table = Table(title="verdicts", header_style="bold cyan")
    for column in ("claim", "analyzer", "status", "verdict", "reason"):
        table.add_column(column, overflow="fold")
    for row in rows:
        kind = row["verdict"] or row["status"]
        table.add_row(esc(row["id"]), esc(row["analyzer"]), row["status"], f"[{colour.get(kind, 'white')}]{kind}[/]",
                      esc(row["reason"] or ""))
    console.print(table)


@app.command()
def worker(
    forever: Annotated[bool, typer.Option("--forever", help="Keep polling for new runs.")] = False,
    device: Annotated[str | None, typer.Option("--device", help="Take only runs asking for this device kind "
                                               "(cuda: a GPU machine serving a shared index).")] = None,
    stop: Annotated[bool, typer.Option("--stop", help="Stop this KB home's background worker (the app's) and "
                                       "exit; a run it held is re-queued at once.")] = False,
    papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None,
) -> None:
    """Run queued runs (re-queues runs abandoned by dead workers first); logs each run to stderr."""
    import logging

    if stop:
        from kb.queue import daemon

        kb = make_kb(papers, home, db)
        stopped = daemon.stop_worker(kb.settings.home)
        requeued = kb.recover()  # its process is gone: a run it held goes back to the queue now
        console.print(("stopped the background worker" if stopped else "no background worker is running")
                      + (f"; re-queued {len(requeued)} run(s) it held" if requeued else ""))
        return

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger = logging.getLogger("kb.worker")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    kb = make_kb(papers, home, db)
    try:
        counts = kb.work(once=not forever, device=device)
    finally:
        logger.removeHandler(handler)
    console.print(", ".join(f"{v} {k}" for k, v in counts.items()) or "queue empty")


@app.command("runs")
def runs_(status: Annotated[str | None, typer.Option(help="queued, running, succeeded, failed, cancelled.")] = None,
          limit: Annotated[int, typer.Option(help="Most recent N.")] = 50,
          follow: Annotated[bool, typer.Option("--watch", help="Live progress of queued and running runs.")] = False,
          papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """List runs, newest first, with progress (``--watch``: follow active runs live until they end)."""
    kb = make_kb(papers, home, db)
    if follow:
        watch(kb, None)
    records = kb.runs(status=status, limit=limit)
    if as_json:
        print_json([r.model_dump(mode="json") for r in records])
        return
    table = Table(title=f"{len(records)} run(s)", header_style="bold cyan")
    for column in ("id", "claim", "analyzer", "status", "progress", "message"):
        table.add_column(column, overflow="fold")
    for r in records:
        table.add_row(r.id[:12], esc(r.claim_key or ""), esc(r.analyzer), r.status.value, f"{r.progress:.0%}",
                      esc((r.error or r.message or "").splitlines()[0]) if (r.error or r.message) else "")
    console.print(table)


@app.command()
def cancel(run_id: Annotated[str, typer.Argument(help="Run id.")],
           papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None) -> None:
    """Cancel a queued or running run."""
    kb = make_kb(papers, home, db)
    if not kb.cancel(run_id):
        err_console.print(f"[red]error[/]: no queued or running run {esc(repr(run_id))}; see 'kb runs'")
        raise typer.Exit(1)
    console.print(f"cancelled {run_id}")


@app.command()
def evidence(claim_key: Annotated[str, typer.Argument(help="Claim key: '<note id>#<claim id>'.")],
             papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """The claim, then its evidence, newest first: verdict and why, scale, provenance, staleness."""
    kb = make_kb(papers, home, db)
    kb.index()
    found = kb.claim(claim_key)
    if found is None:
        fail(NoteError(claim_key, "no such claim: a claim key is '<note id>#<claim id>'; run 'kb show NOTE' "
                                   "to see a note's claims"))
        return
    records = kb.evidence(claim_key)
    if as_json:
        print_json([{**r.model_dump(mode="json"), "id": claim_key, "evidence_id": r.id} for r in records])
        return
    claim, grounding = found
    status = kb.claim_states(claim_key.split("#", 1)[0]).get(claim_key)
    about = [f"[bold]{escape(claim.statement)}[/]",
             f"[bold]state[/]: {status.state.value if status else '-'}"
             + (f" ({escape(status.stale_reason)})" if status and status.stale_reason else "")]
    if claim.source is not None:
        about.append(f"[dim]“{escape(claim.source.quote)}”[/]  (quote: {grounding or 'not checked'})")
    if claim.analyzer is not None:
        about.append(f"analyzer: {esc(claim.analyzer.name)} ({esc(claim.analyzer.scale or 'default')} scale)"
                     + (f", expects {esc(describe(claim.expect))}" if claim.expect else ""))
    console.print(Panel("\n".join(about), title=esc(claim_key)))
    if not records:
        console.print(f"no evidence for {esc(claim_key)} yet: run 'kb verify {esc(claim_key)}'")
        return
    for i, r in enumerate(records):
        v = r.verdict
        title = ("latest" if i == 0 else "earlier") + (" [yellow](stale)[/]" if r.stale else "")
        lines = [f"[bold]verdict[/]: {v.kind.value if v else '-'} — {esc(v.reason) if v else ''}",
                 f"[bold]expected[/]: {v.expected if v else '-'}   [bold]observed[/]: {v.observed if v else '-'}",
                 f"[bold]scale[/]: {v.evidence_scale.model_dump(exclude_none=True) if v and v.evidence_scale else '-'}"
                 f"  vs claim {v.claim_scale if v else '-'}",
                 f"[bold]run[/]: {r.run_id}  [bold]device[/]: {r.provenance.device if r.provenance else '-'}"
                 f"  [bold]when[/]: {r.created_at:%Y-%m-%d %H:%M}"]
        if r.stale:
            lines.append(f"[yellow]stale[/]: {esc(r.stale_reason)}")
        lines += [f"artifact: {a}" for a in r.artifacts]
        console.print(Panel("\n".join(lines), title=title))
