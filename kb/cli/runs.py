"""Commands over analyzers, runs and evidence: analyzers, verify, worker, runs, cancel, evidence."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.markup import escape
from rich.padding import Padding
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Column
from typer.core import TyperGroup

from kb.cli.common import (
    ArtifactStoreOpt,
    CacheDirOpt,
    Col,
    DbOpt,
    HomeOpt,
    JsonOpt,
    Listing,
    OfflineOpt,
    PapersOpt,
    app,
    console,
    err_console,
    esc,
    fail,
    make_kb,
    print_json,
    print_json_line,
    setting_option,
)
from kb.display import NOT_RUNNABLE, claim_scale_text, evidence_origin, observed_text, run_status, scale_text
from kb.notes.bindings import reason_line, settling
from kb.notes.files import NoteError
from kb.queue import executors
from schemas import EvidenceRecord, RunRecord, Verdict

if TYPE_CHECKING:  # types only: the modules behind them load when a command runs (start-up)
    from kb.core import KnowledgeBase
    from kb.evidence.claim_states import ClaimState


@app.command()
def analyzers(name: Annotated[str | None, typer.Argument(help="One analyzer: its metrics, with what each "
                                                     "measures, and its scales.")] = None,
              as_json: JsonOpt = False) -> None:
    """List registered analyzers (scales, GPU need, how many metrics); name one for its metrics."""
    from kb.core import KnowledgeBase
    registered = KnowledgeBase.analyzers()
    rows: list[dict[str, Any]] = [
        {
            "id": key,
            "summary": cls.summary,
            "version": cls.version,
            "metrics": cls.metrics,
            "scales": sorted(cls.scales),
            "gpu": cls.resources.gpu.value,
            "memory_gb": cls.resources.memory_gb,
        }
        for key, cls in registered.items()
        if name is None or key == name
    ]
    from analyzers import registry

    for package, error in registry.broken().items():
        err_console.print(
            f"[bold red]broken[/]: analyzer package {esc(package)} failed to load: {esc(error)}",
            highlight=False,
        )
    if name is not None and not rows:
        _no_such("analyzer", name, registered)
    if as_json:
        print_json(rows)
        return
    if name is not None:
        (row,) = rows
        console.print(f"[bold]{esc(row['id'])}[/] v{esc(row['version'])} · gpu {row['gpu']} · scales "
                      f"{esc(', '.join(row['scales']))}\n{esc(row['summary'])}\n")
        console.print(f"[bold cyan]{len(row['metrics'])} metric(s) a claim's expect.metric can name[/]")
        for metric, description in row["metrics"].items():  # a definition list: descriptions are read whole
            console.print(f"[bold]{esc(metric)}[/]")
            console.print(Padding(esc(description), (0, 0, 0, 4)))
        return
    listing = Listing(
        f"{len(rows)} analyzer(s)",
        [
            Col("name"),
            Col("gpu"),
            Col("metrics"),
            Col("scales", ratio=2),
            Col("summary", ratio=3, min_width=100),
        ],
    )
    for row in rows:
        listing.add(name=esc(row["id"]), gpu=row["gpu"], metrics=str(len(row["metrics"])),
                    scales=esc(", ".join(row["scales"])), summary=esc(row["summary"]))
    console.print(listing.table)
    console.print("[dim]kb analyzers NAME: its metrics and what each measures; --json: everything[/]")


def _no_such(kind: str, name: str, registered: Iterable[str]) -> NoReturn:
    """One line for a name the registry does not have, with the names it has; exit 1."""
    err_console.print(f"[red]error[/]: no {kind} {esc(repr(name))}; registered: {esc(', '.join(registered))}",
                      soft_wrap=True)
    raise typer.Exit(1)


@app.command("executors")
def executors_(name: Annotated[str | None, typer.Argument(help="One executor: each setting it needs, with "
                                                      "its environment variable and what it does.")] = None,
               as_json: JsonOpt = False) -> None:
    """List the registered executors (where runs execute: `kb verify --executor NAME`) and what each needs."""
    registered = executors.load_all()
    rows: list[dict[str, Any]] = [
        {"name": key, "label": cls.label, "description": cls.description,
         "needs_shared_database": cls.needs_shared_database, "needs_worker": cls.needs_worker,
         "settings": [vars(need) for need in executors.needed_settings(cls)]}
        for key, cls in registered.items() if name is None or key == name]
    for label_, error in executors.broken().items():
        err_console.print(f"[bold red]broken[/]: executor {esc(label_)} failed to load: {esc(error)}",
                          highlight=False)
    if name is not None and not rows:
        _no_such("executor", name, registered)
    if as_json:
        print_json(rows)
        return
    if name is not None:
        (row,) = rows
        console.print(f"[bold]{esc(row['name'])}[/] ({esc(row['label'])}): {esc(row['description'])}\n")
        console.print(f"[bold cyan]{len(row['settings'])} setting(s) it needs[/]")
        for need in row["settings"]:  # a definition list, as `kb analyzers NAME` prints metrics
            console.print(f"[bold]{esc(need['env'])}[/] ({esc(need['name'])})")
            console.print(Padding(esc(need["description"]), (0, 0, 0, 4)))
        return
    listing = Listing(f"{len(rows)} executor(s)", [Col("name"), Col("shared index"), Col("worker"),
                                                   Col("settings", ratio=2, fold=True),
                                                   Col("runs execute", ratio=3, min_width=100)])
    for row in rows:
        listing.add(**{"name": esc(row["name"]),
                       "shared index": "yes" if row["needs_shared_database"] else "no",
                       "worker": "yes" if row["needs_worker"] else "no",
                       "settings": esc(", ".join(need["env"] for need in row["settings"]) or "none"),
                       "runs execute": esc(row["description"])})
    console.print(listing.table)
    console.print("[dim]kb executors NAME: each setting with what it does; --json: everything[/]")


@app.command()
def verify(
    targets: Annotated[list[str] | None, typer.Argument(help="Claim keys (note#claim) or note ids.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every claim bound to an analyzer.")] = False,
    stale: Annotated[bool, typer.Option("--stale", help="Only claims without current evidence.")] = False,
    tension: Annotated[str | None, typer.Option("--tension", help="A tension's id (`kb tensions`): queue the "
                                                "runs that decide it.")] = None,
    rerun: Annotated[list[str] | None, typer.Option("--rerun", help="A run's id (`kb runs`, `kb evidence "
                                                    "CLAIM`): run it again here with the same parameters, "
                                                    "e.g. evidence imported from another machine "
                                                    "(repeatable).")] = None,
    device: Annotated[str, typer.Option(help="cpu, cuda or cuda:N.")] = "cpu",
    executor: Annotated[str, typer.Option(help="Where the runs execute (the registered executors): "
                                          + "; ".join(
        # Help is rich markup: escaped, or 'plm-kb[ray]' loses its '[ray]' as a style tag.
        f"{name}: {escape(cls.description)}" for name, cls in executors.load_all().items())
                                          + ".")] = "local",
    ray_address: Annotated[str | None, setting_option("ray_address", "--ray-address")] = None,
    run: Annotated[bool, typer.Option("--run/--queue-only", help="Also run the queue here until it is "
                                      "empty.")] = True,
    grants: Annotated[list[str] | None, typer.Option("--set", help="Parameter key=value for every run whose "
                                                     "analyzer takes it, including what a note may not set "
                                                     "(trust_remote_code=true, work_dir=..., fasta=...); "
                                                     "checked before anything is queued.")] = None,
    papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None, artifact_store: ArtifactStoreOpt = None,
    offline: OfflineOpt = None, cache_dir: CacheDirOpt = None, as_json: JsonOpt = False,
) -> None:
    """Queue re-verification of claims (and, by default, run the queue here, with progress)."""
    if not targets and not all_ and not stale and not tension and not rerun:
        err_console.print("[red]error[/]: name claims or notes, or pass --all, --stale, --tension or --rerun")
        raise typer.Exit(2)
    kb = make_kb(papers, home, db, artifact_store=artifact_store, offline=offline, cache_dir=cache_dir,
                 ray_address=ray_address)
    chosen = _ready_executor(kb, executor)
    queued, skipped = _queue_verification(
        kb,
        targets,
        stale=stale,
        tension=tension,
        rerun=rerun,
        device=device,
        executor=executor,
        grants=grants,
    )
    for key, reason in skipped:
        err_console.print(f"[yellow]skipped[/] {esc(key)}: {esc(reason)}", highlight=False)
    if not as_json:
        console.print(kb.queued_message(queued))
    told: set[str] = set()  # runs whose verdict line was printed as it landed

    def landed(record: RunRecord, verdict: Verdict | None) -> None:
        told.add(record.id)
        print_verdict(verdict_row(kb, record, verdict), verdict, as_json=as_json)

    if run and queued:
        ids = [r.id for r in queued]
        watch(kb, ids, lambda: chosen.run(kb.engine, ids), on_end=landed, json_lines=as_json)
    elif queued:
        _hand_over(kb, chosen, queued, as_json=as_json)
    _report_verification(kb, queued, told, as_json=as_json)


def _ready_executor(kb: KnowledgeBase, name: str) -> executors.Executor:
    """The executor ``name``, checked ready before anything is queued; an unknown or unavailable one is one
    line and exit 2."""
    try:
        chosen = kb.executor(name)
        chosen.check()
    except (KeyError, executors.ExecutorUnavailable) as exc:  # nothing was queued
        err_console.print(f"[red]error[/]: {esc(exc.args[0])}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    return chosen


def _hand_over(
    kb: KnowledgeBase, chosen: executors.Executor, queued: list[RunRecord], *, as_json: bool
) -> None:
    """Runs not run here: handed over (a Slurm job each, printed), or left queued for a worker (what each
    waits for printed)."""
    for run_id, job_id in chosen.submit(kb.engine, [r.id for r in queued]).items():
        err_console.print(f"run {run_id[:12]}: job {job_id}")
    waiting = kb.waiting()
    for record in queued:
        if record.id in waiting and not as_json:
            console.print(f"run {record.id[:12]}: {esc(waiting[record.id])}", highlight=False)


def _queue_verification(kb: KnowledgeBase, targets: list[str] | None, *, stale: bool, tension: str | None,
                        rerun: list[str] | None, device: str, executor: str,
                        grants: list[str] | None) -> tuple[list[RunRecord], list[tuple[str, str]]]:
    """Queue what ``kb verify`` was asked for: reruns, a tension's runs, or the claims named (or all, or the
    stale ones); the runs queued and the claims skipped with why. Bad input exits with one line, nothing
    queued."""
    from analyzers.overrides import OverrideError, split_pairs

    try:
        if rerun:
            return _rerun(kb, rerun, device, executor)
        if tension is not None:
            return kb.verify_tension(tension, device=device, executor=executor,
                                     operator_params=split_pairs(grants or []))
        return kb.verify(list(targets) if targets else None, stale_only=stale, device=device,
                         executor=executor, operator_params=split_pairs(grants or []))
    except NoteError as exc:
        fail(exc)
    except OverrideError as exc:  # nothing was queued
        err_console.print(f"[red]error[/]: {esc(exc)}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def _report_verification(
    kb: KnowledgeBase, queued: list[RunRecord], told: set[str], *, as_json: bool
) -> None:
    """The queued runs' verdicts in the queue's order: a table, or (``--json``) one line for each run whose
    verdict was not printed as it landed; exit 1 when a run failed."""
    records = kb.runs(ids=[r.id for r in queued], limit=len(queued) or 1)
    verdicts = kb.run_verdicts([r.id for r in records])
    rows = [verdict_row(kb, record, verdicts.get(record.id)) for record in records]
    order = {r.id: n for n, r in enumerate(queued)}  # the queue's order, as planned
    rows.sort(key=lambda row: order[row["run"]])
    if (
        as_json
    ):  # the runs not judged here (queued for a worker, handed to Slurm): their status, one line each
        for row in rows:
            if row["run"] not in told:
                print_json_line(row)
    elif rows:
        verdict_table(rows)
    if any(r["status"] == "failed" for r in rows):
        raise typer.Exit(1)


def verdict_row(kb: KnowledgeBase, record: RunRecord, verdict: Verdict | None) -> dict[str, Any]:
    """What became of one run, as the verdict table, the lines printed as verdicts land and ``--json`` say it:
    the claim's state (``kb.evidence.claim_states``' rule), the value and its spread, the evidence's scale,
    why."""
    from kb.evidence.claim_states import verdict_state

    state = verdict_state(verdict)
    found = kb.claim(record.claim_key) if record.claim_key else None
    scale = (
        verdict.evidence_scale.model_dump(exclude_none=True) if verdict and verdict.evidence_scale else None
    )
    return {"id": record.claim_key, "run": record.id, "analyzer": record.analyzer,
            "status": record.status.value,
            "verdict": verdict.kind.value if verdict else None, "state": state.value if state else None,
            "observed": verdict.observed if verdict else None, "spread": verdict.spread if verdict else None,
            "expected": verdict.expected if verdict else None, "scale": scale,
            "reason": reason_line(found[0] if found else None, verdict.reason if verdict else None,
                                  state.value if state else None) or None}


def print_verdict(row: dict[str, Any], verdict: Verdict | None, *, as_json: bool) -> None:
    """One verdict the moment it lands: a JSON Lines record on stdout (``--json``), else one line: the claim,
    its state, the value against what was expected, the evidence's scale and why."""
    if as_json:
        print_json_line(row)
        return
    parts = [_state_cell(row)]
    if verdict is not None and verdict.kind.value not in ("not_runnable", "error"):
        value = observed_text(verdict)
        parts.append(esc(f"{value} (expected {verdict.expected})" if verdict.expected else value))
    if row["scale"]:
        parts.append(esc(f"at {scale_text(row['scale'])}"))
    if row["reason"]:
        parts.append(esc(row["reason"]))
    # Wrapped at the console's width (an 80-column terminal reads it whole); `kb evidence CLAIM` has the rest.
    console.print(f"[bold]{esc(row['id'] or row['analyzer'])}[/]: " + " · ".join(parts), highlight=False)


ENDED = {"succeeded", "failed", "cancelled"}


class _RunBars:
    """What ``watch`` keeps from one poll of the runs to the next: a bar per run, the verdicts of the runs
    that succeeded (asked once each), the runs ``on_end`` was told of and, where stderr is no terminal, the
    status and time of the last line printed per run."""

    def __init__(self, kb: KnowledgeBase, ids: list[str] | None, *, quiet: bool,
                 on_end: Callable[[RunRecord, Verdict | None], None] | None) -> None:
        self.kb, self.ids, self.quiet, self.on_end = kb, ids, quiet, on_end
        self.plain = not err_console.is_terminal
        self.every = kb.settings.progress_interval / 2
        self.narrow = (
            err_console.width < 100
        )  # the label is then the claim's own id, so that its message fits too
        self.printed: dict[
            str, tuple[str, float]
        ] = {}  # run id -> (status shown, when its last line was printed)
        self.tasks: dict[str, TaskID] = {}
        self.verdicts: dict[str, Verdict | None] = {}  # of runs that ended, asked once each
        self.ended: set[str] = set()  # runs on_end was called for

    def columns(self) -> tuple[ProgressColumn, ...]:
        """The bars' columns. At 80 columns the bar, percentage, status and clock take ~45; the claim and the
        message share the rest, each cut to one line (a bar that wraps would redraw as many lines)."""
        return (
            TextColumn(
                "{task.fields[label]}", table_column=Column(ratio=3, no_wrap=True, overflow="ellipsis")
            ),
            BarColumn(bar_width=8 if self.narrow else 16),
            TaskProgressColumn(),
            TextColumn("[bold]{task.fields[status]}", table_column=Column(no_wrap=True)),
            TextColumn("{task.description}", table_column=Column(ratio=2, no_wrap=True, overflow="ellipsis")),
            TimeElapsedColumn(),
        )

    def poll(self) -> list[RunRecord]:
        """The runs watched (every active one, and those shown, if no ids), with the verdicts newly in."""
        kb = self.kb
        records = kb.runs(ids=self.ids, limit=10_000) if self.ids is not None else [
            r for r in kb.runs(limit=10_000) if r.status.value not in ENDED or r.id in self.tasks]
        succeeded = [r.id for r in records if r.status.value == "succeeded" and r.id not in self.verdicts]
        self.verdicts.update(kb.run_verdicts(succeeded) if succeeded else {})
        return records

    def judged(self, records: list[RunRecord], final: bool = False) -> None:
        """Tell ``on_end`` of each run that ended, once."""
        for (
            record
        ) in records:  # a run that succeeded is told once its verdict is in (its evidence is written)
            if self.on_end is not None and record.id not in self.ended and record.status.value in ENDED and (
                    final or record.status.value != "succeeded" or record.id in self.verdicts):
                self.ended.add(record.id)
                self.on_end(record, self.verdicts.get(record.id))

    def label(self, record: RunRecord) -> str:
        """The run's label: its id and claim. A long key is cut at its start: the claim's own id tells the
        bars apart (a note's claims share its note id)."""
        name = record.claim_key or record.analyzer
        name = name.rsplit("#", 1)[-1] if self.narrow else name
        room = max(16, err_console.width - 56)  # what the bar, status and clock leave
        name = name if len(name) <= room else "…" + name[1 - room:]
        return f"[dim]{record.id[:8]}[/] {esc(name)}"

    def show(self, bars: Progress, record: RunRecord) -> None:
        """Bring the run's bar up to date; without a terminal, print its line when due."""
        if record.id not in self.tasks:
            self.tasks[record.id] = bars.add_task("", total=1.0, status="", label=self.label(record))
        verdict = self.verdicts.get(record.id)
        message = (verdict.reason if verdict is not None and verdict.kind.value == "not_runnable"
                   else record.error or record.message or "").splitlines()
        shown = run_status(record.status.value, verdict)
        bars.update(self.tasks[record.id], completed=record.progress, status=shown,
                    description=esc(message[0][:80]) if message else "")
        last = self.printed.get(record.id)
        now = time.monotonic()
        if self.plain and not self.quiet and (last is None or last[0] != shown
                                              or (shown == "running" and now - last[1] >= self.every)):
            # The claim once per status; the refreshes of a running run name it by run id alone.
            about = (
                f" {esc(record.claim_key or record.analyzer)}:" if last is None or last[0] != shown else ""
            )
            self.printed[record.id] = (shown, now)
            err_console.print(f"{record.id[:8]}{about} {shown} {record.progress:.0%}"
                              + (f" · {esc(message[0])}" if message else ""), highlight=False)


def watch(
    kb: KnowledgeBase,
    ids: list[str] | None,
    work: Callable[[], object] | None = None,
    *,
    quiet: bool = False,
    poll: float = 0.5,
    on_end: Callable[[RunRecord, Verdict | None], None] | None = None,
    json_lines: bool = False,
) -> None:
    """One progress bar per run, refreshed from the database until the runs end (all active runs if no ids).

    ``work`` (a local worker or the Ray executor) runs in a thread meanwhile: the bars show what the
    durable queue says, so they look the same whoever executes the runs. Where stderr is not a terminal
    (a log file, a pipe) bars cannot redraw: each run gets a line when its status changes and, while it
    runs, at least every ``progress_interval`` seconds (half of it), with its latest message and time left.
    ``on_end`` is called once per run the moment it ends, with its verdict once judged (None for a run that
    failed, was cancelled or judged nothing). ``json_lines``: stdout carries JSON Lines, so the bars leave it
    alone (rich would otherwise route stdout through the bars' console, stderr).
    """
    failure: list[BaseException] = []

    def guarded() -> None:
        try:
            work() if work is not None else None
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread below
            failure.append(exc)

    thread = threading.Thread(target=guarded, daemon=True)
    state = _RunBars(kb, ids, quiet=quiet, on_end=on_end)
    columns = state.columns()
    with Progress(
        *columns, console=err_console, disable=quiet, expand=True, redirect_stdout=not json_lines
    ) as bars:
        thread.start()
        while True:
            records = state.poll()
            state.judged(sorted(records, key=lambda r: r.created_at))
            for record in sorted(
                records, key=lambda r: r.created_at
            ):  # in queue order: the next to run on top
                state.show(bars, record)
            if all(r.status.value in ENDED for r in records) and not thread.is_alive():
                break
            if not thread.is_alive() and work is not None:  # runs left for other workers: stop watching
                break
            time.sleep(poll)
        state.judged(records, final=True)  # a run that succeeded without evidence (no claim) is told now
    thread.join()
    if failure:
        raise failure[0]


_COLOUR = {"supported": "green", "refuted": "red", "consistent_proxy": "blue", "at_odds_proxy": "dark_orange",
           "inconclusive": "yellow", "not_runnable": "magenta", "error": "red", "stale": "yellow"}


def _state_cell(row: dict[str, Any]) -> str:
    """A row's outcome in words and colour: the claim's state, else the verdict, else the run's status."""
    from kb.evidence.claim_states import label

    state = row.get("state") or row["verdict"] or row["status"]
    return f"[{_COLOUR.get(state, 'white')}]{esc(label(state))}[/]"


def verdict_table(rows: list[dict[str, Any]]) -> None:
    """Claims with their state and why, one line each (the claim key folds where the console is narrow)."""
    # At 80 columns a claim key (up to ~80 characters) needs the width: the reason shows from 100 columns on
    # ('kb evidence CLAIM' has it whole).
    listing = Listing(
        "verdicts",
        [
            Col("claim", fold=True),
            Col("analyzer", min_width=140),
            Col("state"),
            Col("why", ratio=1, min_width=100),
        ],
    )  # the reason takes what the claim leaves
    for row in rows:
        listing.add(claim=esc(row["id"]), analyzer=esc(row["analyzer"]), state=_state_cell(row),
                    why=esc(row["reason"] or ""))
    console.print(listing.table)
    console.print("[dim]kb evidence CLAIM: the whole reason, the numbers, the scales and the history[/]")


@app.command()
def worker(
    forever: Annotated[bool, typer.Option("--forever", help="Keep polling for new runs.")] = False,
    device: Annotated[
        str | None,
        typer.Option(
            "--device",
            help="Take only runs asking for this device kind (cuda: a GPU machine serving a shared index).",
        ),
    ] = None,
    stop: Annotated[
        bool,
        typer.Option(
            "--stop",
            help="Stop this KB home's background worker (the app's) and "
            "exit; a run it held is re-queued at once.",
        ),
    ] = False,
    no_wait: Annotated[
        bool,
        typer.Option(
            "--no-wait",
            help="Exit at once (code 3) when the index does not answer "
            "at start, instead of waiting for it as a running worker does.",
        ),
    ] = False,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    artifact_store: ArtifactStoreOpt = None,
    offline: OfflineOpt = None,
    cache_dir: CacheDirOpt = None,
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
    kb = make_kb(papers, home, db, artifact_store=artifact_store, offline=offline, cache_dir=cache_dir)
    from kb.queue import daemon, execution

    if not no_wait:
        _wait_for_index(kb)

    stopping = execution.Stop(kb.settings.stop_grace_seconds)
    stopping.install()  # SIGTERM, SIGINT: finish or hand back the running run, then exit
    try:
        with daemon.registered_worker(kb.settings.home):  # the app sees it and starts no second worker
            counts = kb.work(once=not forever, device=device, stop=stopping)
    finally:
        logger.removeHandler(handler)
    console.print(", ".join(f"{v} {k}" for k, v in counts.items()) or "queue empty")


def _wait_for_index(kb: KnowledgeBase) -> None:
    """Wait out an index that does not answer at start (a server restarting, a lock), with the one-line
    messages of a running worker's outage (``kb.queue.retry``); anything else is left to the first use."""
    from kb.index.database import make_engine
    from kb.index.opening import init_db
    from kb.queue import retry

    probe = make_engine(kb.settings.resolved_database_url, busy_timeout=kb.settings.db_busy_timeout)
    try:
        retry.retrying(probe, "starting the worker", lambda: init_db(probe))
    except Exception:  # noqa: BLE001 - not an outage (a damaged index): the worker's first use says it
        pass
    finally:
        probe.dispose()


@app.command("runs")
def runs_(
    status: Annotated[str | None, typer.Option(help="queued, running, succeeded, failed, cancelled.")] = None,
    limit: Annotated[int, typer.Option(help="Most recent N.")] = 50,
    follow: Annotated[
        bool, typer.Option("--watch", help="Live progress of queued and running runs.")
    ] = False,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List runs, newest first, with progress (``--watch``: follow active runs live until they end)."""
    from kb.evidence.claim_states import verdict_state
    kb = make_kb(papers, home, db)
    if follow:
        watch(kb, None)
    records = kb.runs(status=status, limit=limit)
    verdicts = kb.run_verdicts([r.id for r in records])
    states = {run_id: verdict_state(verdict) for run_id, verdict in verdicts.items()}
    waiting = kb.waiting()
    if as_json:
        print_json(
            [
                {
                    **r.model_dump(mode="json"),
                    "shown_status": run_status(r.status.value, verdicts.get(r.id)),
                    "verdict": (state.value if (state := states.get(r.id)) else None),
                    "waiting": waiting.get(r.id),
                }
                for r in records
            ]
        )
        return
    # One column says what became of a run: the verdict of one that succeeded, else its status (never
    # "succeeded" for a run that could not execute), so the claim key keeps the width at 80 columns.
    listing = Listing(f"{len(records)} run(s)", [
        Col("id"), Col("claim", ratio=3, fold=True), Col("analyzer", min_width=120), Col("status / verdict"),
        Col("message", ratio=2, min_width=100)])
    for r in records:
        verdict = verdicts.get(r.id)
        shown = run_status(r.status.value, verdict)
        message = _run_message(r, verdict, shown, waiting.get(r.id))
        outcome = _run_outcome(r, shown, states.get(r.id))
        listing.add(
            id=r.id[:8],
            claim=esc(r.claim_key or ""),
            analyzer=esc(r.analyzer),
            **{"status / verdict": esc(outcome)},
            message=esc(message.splitlines()[0]) if message else "",
        )
    console.print(listing.table)
    if "message" not in {c.name for c in listing.columns}:  # narrow: what each running run is doing, below
        for r in records:
            said = " · ".join(
                filter(None, [waiting.get(r.id), r.message if r.status.value == "running" else None])
            )
            if said:
                console.print(f"[dim]{r.id[:8]}[/] {esc(said.splitlines()[0])}", highlight=False)
    if any(r.status.value == "queued" for r in records) and not kb.worker_alive():
        console.print(
            "no worker is alive: queued runs wait until one starts ('kb worker --forever', or open the app)",
            highlight=False,
        )


def _run_outcome(r: RunRecord, shown: str, state: ClaimState | None) -> str:
    """The status / verdict column: the claim's state a succeeded run's verdict gives, else the shown status,
    with the progress of a run that started."""
    from kb.evidence.claim_states import label

    if shown == "succeeded" and state is not None:
        return label(state.value)
    if r.status.value in ("running", "failed", "cancelled"):
        return f"{shown} {r.progress:.0%}"
    return shown


def _run_message(r: RunRecord, verdict: Verdict | None, shown: str, waiting: str | None) -> str:
    """What ``kb runs`` says of a run: why it could not run, its error or its last message; for a run that
    waits, what it waits for (a place in line, or a worker that stopped), beside a running run's message."""
    message = verdict.reason if shown == NOT_RUNNABLE and verdict else (r.error or r.message or "")
    if waiting is not None:  # what the person waiting needs
        message = f"{waiting} · {r.message}" if r.status.value == "running" and r.message else waiting
    return message


@app.command()
def cancel(run_id: Annotated[str, typer.Argument(help="Run id.")],
           papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None) -> None:
    """Cancel a queued or running run."""
    kb = make_kb(papers, home, db)
    if not kb.cancel(run_id):
        err_console.print(f"[red]error[/]: no queued or running run {esc(repr(run_id))}; see 'kb runs'")
        raise typer.Exit(1)
    console.print(f"cancelled {run_id}")


def _rerun(kb: KnowledgeBase, run_ids: list[str], device: str, executor: str,
           ) -> tuple[list[RunRecord], list[tuple[str, str]]]:
    """Queue each run again here (``kb verify --rerun``); a run that is unknown or has not ended is
    skipped."""
    queued: list[RunRecord] = []
    skipped: list[tuple[str, str]] = []
    for run_id in run_ids:
        try:
            queued.append(kb.retry(run_id, device=device, executor=executor))
        except (KeyError, ValueError) as exc:
            skipped.append((run_id, str(exc.args[0])))
    return queued, skipped


class _ClaimOrCommand(TyperGroup):
    """``kb evidence CLAIM`` shows a claim's evidence; ``kb evidence export|import`` carry evidence between KB
    homes (``kb.cli.bundles``). A claim key holds '#', so it is never taken for a command's name."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # Any: typer carries its own click
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["show", *args]
        return super().parse_args(ctx, args)


evidence_app = typer.Typer(cls=_ClaimOrCommand, no_args_is_help=True, help=(
    "kb evidence CLAIM: a claim's evidence. kb evidence export|import: evidence bundles between KB homes."))
app.add_typer(evidence_app, name="evidence")


@evidence_app.command("show")
def evidence(
    claim_key: Annotated[str, typer.Argument(help="Claim key: '<note id>#<claim id>'.")],
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The claim, then its evidence, newest first: verdict and why, scale, provenance, staleness."""
    from kb.evidence.claim_states import (
        label,
        latest_results,
        paper_comparisons,
        paper_values_left_out,
        verdict_state,
    )
    from kb.evidence.verdicts import describe
    kb = make_kb(papers, home, db)
    kb.index()
    found = kb.claim(claim_key)
    if found is None:
        fail(NoteError(claim_key, "no such claim: a claim key is '<note id>#<claim id>'; run 'kb show NOTE' "
                                   "to see a note's claims"))
        return
    records = kb.evidence(claim_key)
    claim, grounding = found
    if as_json:  # the paper's values beside kb's latest evidence (its seeds together), on every record
        paper = [c.record() for c in paper_comparisons(claim, latest_results(kb.engine, claim_key))]
        print_json(
            [
                {
                    **r.model_dump(mode="json"),
                    "id": claim_key,
                    "evidence_id": r.id,
                    "paper_vs_kb": paper,
                    "state": (state.value if (state := verdict_state(r.verdict)) else None),
                }
                for r in records
            ]
        )
        return
    status = kb.claim_states(claim_key.split("#", 1)[0]).get(claim_key)
    about = [f"[bold]{escape(claim.statement)}[/]",
             f"[bold]state[/]: {esc(label(status.state.value)) if status else 'not indexed yet'}"
             + (f" ({escape(status.stale_reason)})" if status and status.stale_reason else "")]
    if claim.source is not None:
        about.append(f"[dim]“{escape(claim.source.quote)}”[/]  (quote: {grounding or 'not checked'})")
    if claim.analyzer is not None:
        about.append(
            f"[bold]analyzer[/]: {esc(claim.analyzer.name)} at {esc(claim.analyzer.scale or 'its default')} "
            "scale" + (f", seeds {', '.join(map(str, claim.analyzer.seeds))}" if claim.analyzer.seeds else "")
        )
    else:
        about.append("[bold]analyzer[/]: none bound, so nothing can re-verify this claim")
    # What the claim itself states, from the note: never 'None' because a verdict did not repeat it.
    expects = describe(claim.expect) if claim.expect else "no expectation stated"
    about.append(f"[bold]expects[/]: {esc(expects)}   [bold]claimed at[/]: {esc(claim_scale_text(claim))}")
    if claim.analyzer is not None:
        about.append(f"[bold]settled[/]: {esc(settling(claim).text())}")
    comparisons = paper_comparisons(claim, latest_results(kb.engine, claim_key))
    about += [f"[bold]paper vs kb[/]: {esc(c.text())}" for c in comparisons]
    if (left_out := paper_values_left_out(claim)) is not None:
        about.append(f"[bold]paper vs kb[/]: {esc(left_out)}")
    console.print(Panel("\n".join(about), title=esc(claim_key)))
    if not records:
        console.print(f"no evidence for {esc(claim_key)} yet: run 'kb verify {esc(claim_key)}'")
        return
    for i, r in enumerate(records):
        console.print(
            Panel(
                "\n".join(_evidence_lines(r, expects)),
                title=("latest" if i == 0 else "earlier") + (" [yellow](stale)[/]" if r.stale else ""),
            )
        )


def _evidence_lines(record: EvidenceRecord, expects: str) -> list[str]:
    """One piece of evidence in words: verdict and why, observed against expected, scales, run, files."""
    from kb.evidence.claim_states import label, verdict_state
    v = record.verdict
    state = verdict_state(v)
    lines = [f"[bold]verdict[/]: {esc(label(state.value)) if state else 'none drawn'}"
             + (f" — {esc(v.reason)}" if v else " (the run was made before the claim was indexed)")]
    if v is not None and v.kind.value != "not_runnable":
        lines.append(
            f"[bold]expected[/]: {esc(v.expected or expects)}   [bold]observed[/]: {esc(observed_text(v))}"
        )
    scale = v.evidence_scale.model_dump(exclude_none=True) if v and v.evidence_scale else None
    lines.append(f"[bold]evidence scale[/]: {esc(scale_text(scale) if scale else 'not recorded')}"
                 + (" [dim](a smaller-scale proxy)[/]" if v and v.proxy else ""))
    prov = record.provenance
    when = f"{record.created_at:%Y-%m-%d %H:%M}"
    lines.append(
        f"[bold]run[/]: {esc(record.run_id)}   [bold]device[/]: {esc(prov.device if prov else '-')}   "
        f"[bold]when[/]: {when}"
        + (f"   [bold]took[/]: {prov.wall_seconds:.1f} s" if prov and prov.wall_seconds is not None else "")
    )
    if (origin := evidence_origin(prov)) is not None:
        lines.append(
            f"[bold]made elsewhere[/]: {esc(origin)} (re-run it here: kb verify --rerun {esc(record.run_id)})"
        )
    if record.stale:
        lines.append(f"[yellow]stale[/]: {esc(record.stale_reason)}")
    lines += _files_lines(record.artifacts)
    return lines


def _files_lines(artifacts: list[str]) -> list[str]:
    """The run's files by name (each is stored content-addressed, ``evidence/<ab>/<sha256>/<name>``: the
    paths are in ``--json``), not one 80-character path per file."""
    if not artifacts:
        return []
    names = sorted("/".join(a.split("/")[3:]) if a.startswith("evidence/") and a.count("/") > 2 else a
                   for a in artifacts)
    return [f"[bold]files[/] ({len(names)}; stored paths in --json): {esc(', '.join(names))}"]
