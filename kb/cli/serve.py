"""The main jobs: ``kb demo`` (index, re-verify stale claims, print verdicts) and ``kb app`` (the Streamlit
app)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from kb.cli.common import (
    Col,
    DbOpt,
    HomeOpt,
    Listing,
    PapersOpt,
    app,
    console,
    err_console,
    esc,
    make_kb,
    papers_table,
    print_json_line,
)
from kb.cli.runs import print_verdict, verdict_row, verdict_table, watch
from kb.cli.tensions import print_tensions
from kb.notes.bindings import reason_line
from schemas import RunRecord

if TYPE_CHECKING:  # types only: the modules behind them load when a command runs (start-up)
    from rich.console import Console

    from kb.core import KnowledgeBase
    from schemas import EvidenceRecord, Verdict


@app.command()
def demo(
    verify_claims: Annotated[
        bool, typer.Option("--verify/--no-verify", help="Also re-verify stale claims.")
    ] = True,
    papers: PapersOpt = None,
    home: HomeOpt = None,
    db: DbOpt = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Stream one JSON object per verdict (JSON Lines) on "
            "stdout as each lands, then one per claim not re-run; the rest goes "
            "to stderr.",
        ),
    ] = False,
) -> None:
    """The main job on embedded defaults: index the bundled notes, re-verify their claims, print it all."""
    from kb.evidence.claim_states import ALL_STATES, label
    kb = make_kb(papers, home, db)
    report = kb.index()
    out = err_console if as_json else console  # --json: stdout carries the verdicts alone
    out.print(f"[bold]kb[/] index at {kb.settings.resolved_database_url}")
    for error in report.errors:
        err_console.print(f"[yellow]skipped invalid note[/]: {esc(error)}", highlight=False)
    _import_shipped(kb)
    _show_library(kb, out)
    if not verify_claims:
        return
    queued, skipped = kb.verify(stale_only=True)
    for key, reason in skipped:
        err_console.print(f"[yellow]not verified[/] {esc(key)}: {esc(reason)}", highlight=False)
    told = _judge_queued(kb, queued, as_json=as_json)
    evidence = {key: kb.evidence(key) for key in kb.claim_keys()}  # newest first; read once for both tables
    verdicts = _claim_rows(kb, evidence, dict(skipped))
    if as_json:  # the claims not judged above (current evidence, not runnable, no run): one line each
        for row in verdicts:
            if row["id"] not in told:
                print_json_line(row)
        return
    verdict_table(verdicts)
    _made_elsewhere_table(evidence)
    # Every claim counted, those bound to no analyzer too, in the Library header's order.
    counts = Counter(status.state.value for status in kb.claim_states().values())
    console.print(f"{sum(counts.values())} claims: " + " · ".join(
        f"{counts[state]} {label(state)}" for state in ALL_STATES if counts[state]), highlight=False)
    print_tensions(kb.tensions())  # where notes disagree, and how it stands


def _show_library(kb: KnowledgeBase, out: Console) -> None:
    """The notes, newest first, then every claim they make with its analyzer and statement."""
    from kb.core import paper_summary

    rows = [paper_summary(p) for p in kb.list_papers(sort="year", descending=True)]
    out.print(papers_table(rows, f"Library: {len(rows)} note(s)"))
    claims = [(p["id"], c) for p in rows for c in kb.claims(p["id"])]
    listing = Listing(
        f"{len(claims)} claim(s)",
        [Col("claim", ratio=2, fold=True), Col("analyzer", min_width=100), Col("statement", ratio=1)],
    )
    for note_id, claim in claims:
        listing.add(claim=esc(f"{note_id}#{claim.claim_id}"), analyzer=esc(claim.analyzer or "-"),
                    statement=esc(claim.statement))
    out.print(listing.table)


def _judge_queued(kb: KnowledgeBase, queued: list[RunRecord], *, as_json: bool) -> set[str]:
    """Run the queued verification here, each claim's verdict printed as its run is judged; the claims whose
    verdict was printed."""
    from kb.queue import daemon

    told: set[str] = set()

    def landed(record: RunRecord, verdict: Verdict | None) -> None:
        told.add(record.claim_key or record.id)
        print_verdict(verdict_row(kb, record, verdict), verdict, as_json=as_json)

    if queued:
        _print_plan(kb, queued)
        if not as_json:
            console.print("[bold]each claim's verdict as its run is judged[/]")
        with daemon.registered_worker(kb.settings.home):  # the app, opened meanwhile, starts no second worker
            watch(kb, [r.id for r in queued], lambda: kb.work(once=True), on_end=landed, json_lines=as_json)
    return told


def _import_shipped(kb: KnowledgeBase) -> None:
    """The notes folder's shipped evidence (``evidence/``: bundles a lab exported from its GPU runs), imported
    before anything runs, one line per bundle (to stderr: ``--json`` keeps stdout for verdicts)."""
    for path, outcome in kb.import_shipped_evidence():
        where = esc(str(path.relative_to(kb.settings.papers)))
        if isinstance(outcome, str):
            err_console.print(f"[yellow]evidence bundle refused[/] {where}: {esc(outcome)}", highlight=False)
        elif outcome.added:
            err_console.print(f"evidence made elsewhere: {where}: imported {len(outcome.added)} run(s)",
                              highlight=False)


def _made_elsewhere_table(evidence: dict[str, list[EvidenceRecord]]) -> None:
    """Each claim whose evidence (``evidence``: each claim's, newest first) was made elsewhere (imported):
    that verdict, where and on what it was made, and beside it the latest verdict made here, or how to make
    one."""
    from kb.display import evidence_origin
    listing = Listing("evidence made elsewhere, beside what this machine gives",
                      [Col("claim", ratio=2, fold=True), Col("elsewhere", ratio=3, fold=True),
                       Col("here", ratio=2, fold=True)])  # fmt: skip
    for key, records in evidence.items():
        made = [(record, evidence_origin(record.provenance)) for record in records]
        elsewhere = next(((record, origin) for record, origin in made if origin), None)
        if elsewhere is None:
            continue
        imported, origin = elsewhere
        local = next((record for record, origin in made if not origin), None)
        here = (_verdict_word(local) + (" (stale)" if local.stale else "") if local is not None
                else f"not run here: kb verify --rerun {imported.run_id}")
        listing.add(claim=esc(key), elsewhere=esc(f"{_verdict_word(imported)}: {origin}"), here=esc(here))
    if listing.table.row_count:
        console.print(listing.table)


def _verdict_word(record: EvidenceRecord) -> str:
    return record.verdict.kind.value if record.verdict else "no verdict"


def _claim_rows(kb: KnowledgeBase, claim_evidence: dict[str, list[EvidenceRecord]],
                not_runnable: dict[str, str]) -> list[dict[str, Any]]:
    """Every bound claim's row of the demo's verdict table (``claim_evidence``: each claim's evidence, newest
    first): its state now, its latest evidence's verdict, why."""
    verdicts: list[dict[str, Any]] = []
    states = kb.claim_states()  # the status column is the claim's state, as every other surface shows it
    for key, evidence in claim_evidence.items():
        verdict = evidence[0].verdict if evidence else None
        state = states[key].state.value if key in states else "unverified"
        found = kb.claim(key)
        stated = found[0] if found else None
        if key in not_runnable and not evidence:
            verdicts.append(
                {
                    "id": key,
                    "run": None,
                    "analyzer": "-",
                    "status": state,
                    "state": state,
                    "verdict": "not_runnable",
                    "reason": reason_line(stated, not_runnable[key], state),
                }
            )
            continue
        reason = (f"{states[key].stale_reason}; " if key in states and states[key].stale_reason
                  else "") + (verdict.reason if verdict else "")
        verdicts.append({"id": key, "run": evidence[0].run_id if evidence else None,
                         "analyzer": evidence[0].analyzer if evidence else "-", "status": state,
                         "state": state, "verdict": verdict.kind.value if verdict else None,
                         "reason": reason_line(stated, reason, state)})
    return verdicts


def _print_plan(kb: KnowledgeBase, queued: list[RunRecord]) -> None:
    """What the demo will run, in the order it runs it (quick first), each with its estimate, and that the app
    can be opened meanwhile."""
    from analyzers.progress import duration_text
    estimates = kb.run_estimates
    listing = Listing(f"re-verifying {len(queued)} run(s) at their bound scale, quick ones first",
                      [Col("#"), Col("claim", ratio=3, fold=True), Col("analyzer", min_width=100),
                       Col("estimate", ratio=2, fold=True)])
    total, unknown = 0.0, 0
    for number, record in enumerate(queued, 1):
        estimate = estimates.get(record.id)
        seconds = estimate.seconds if estimate is not None else None
        total += seconds or 0.0
        unknown += seconds is None and not (estimate is not None and estimate.shares_work)
        listing.add(**{"#": str(number)}, claim=esc(record.claim_key or "-"),
                    analyzer=esc(record.analyzer + (f" @ {estimate.scale}" if estimate else "")),
                    estimate=esc(estimate.text() if estimate else "unknown"))
    err_console.print(listing.table)
    err_console.print(f"in all about {duration_text(total)}" + (f", plus {unknown} run(s) without an estimate"
                                                                  if unknown else "")
                      + "; results are kept, so a rerun takes seconds", highlight=False)
    err_console.print(
        "open the app now, in another terminal: [bold].venv/bin/kb app[/] (http://localhost:8501) "
        "shows each verdict as it arrives, and the runs' progress on its Runs page"
    )


@app.command("app")
def run_app(
    papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None,
    port: Annotated[int, typer.Option("--port", help="Port for the web app.")] = 8501,
    host: Annotated[str, typer.Option("--host", help="Address to listen on; the default serves this machine "
                                      "only. 0.0.0.0 exposes the app (and its Re-verify buttons) to the "
                                      "network.")] = "localhost",
    headless: Annotated[bool, typer.Option("--headless/--browser", help="Do not open a browser.")] = True,
) -> None:
    """Start the Streamlit app (streamlit run app/main.py) over this knowledge base."""
    import os
    import signal
    import subprocess

    if host not in ("localhost", "127.0.0.1", "::1"):
        err_console.print(f"[yellow]warning[/]: the app listens on {escape(host)}: anyone who reaches this "
                          "address can read the notes and queue runs on this machine (there is no login); "
                          "put it behind an authenticating proxy or keep the default --host localhost",
                          soft_wrap=True)

    if (taken := _port_taken(host, port)) is not None:
        err_console.print(f"[bold red]error[/]: {escape(taken)}", soft_wrap=True, highlight=False)
        raise typer.Exit(1)
    root = Path(__file__).resolve().parents[2]
    script = root / "app" / "main.py"
    settings = make_kb(papers, home, db).settings
    # From any folder: '-P' keeps the current folder off the server's import path, and the project root goes
    # first, so a folder named like a package where kb app is started (a clone called 'kb' seen from its
    # parent) cannot shadow kb, app or analyzers.
    env = {**os.environ, "KB_PAPERS": str(settings.papers.resolve()), "KB_HOME": str(settings.home.resolve()),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    if settings.database_url:
        env["KB_DATABASE_URL"] = settings.database_url
    command = [sys.executable, "-P", "-m", "streamlit", "run", str(script), "--server.port", str(port),
               "--server.address", host,
               "--server.headless", "true" if headless else "false",
               # A tool, not a Streamlit demo: no deploy button, no usage statistics sent anywhere, and a calm
               # primary colour (red reads as 'refuted' next to the verdict badges).
               "--client.toolbarMode", "minimal", "--browser.gatherUsageStats", "false",
               "--theme.primaryColor", "#3b5bdb", "--theme.codeTextColor", "#24292f"]
    server = subprocess.Popen(command, env=env)

    def stop(signum: int, frame: object) -> None:
        # `kb app` stopped (SIGTERM from a service manager, Ctrl-C) stops the Streamlit server it started.
        # The background worker is left alone: it serves the queue for the CLI too (`kb worker --stop`).
        server.send_signal(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        code = server.wait()
    finally:
        if server.poll() is None:
            server.kill()
    raise typer.Exit(code)


def _port_taken(host: str, port: int) -> str | None:
    """Why the app cannot listen on ``host:port``, or None where nothing answers there: kb's app already
    running (a Streamlit server answers its health check, ``/_stcore/health``), or another program holding the
    port."""
    import socket
    import urllib.request

    probe = "127.0.0.1" if host in ("0.0.0.0", "::", "localhost") else host  # where a local client reaches it
    try:
        with socket.create_connection((probe, port), timeout=1):
            pass
    except OSError:
        return None  # nothing listens: Streamlit may start here
    url = f"http://{'localhost' if probe == '127.0.0.1' else probe}:{port}"
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:  # noqa: S310 - loopback/ours
            healthy = answer.status == 200 and answer.read(16).strip() == b"ok"
    except OSError:
        healthy = False
    another = f"start another with a free port: kb app --port {port + 1}"
    if healthy:
        return f"kb's app is already running at {url}: open that in a browser (or {another})"
    return f"port {port} is busy (another program listens on it, not kb's app): {another}"
