"""The main jobs: ``kb demo`` (index, re-verify stale claims, print verdicts) and ``kb app`` (the Streamlit app)."""

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
)
from kb.cli.runs import verdict_table, watch
from kb.cli.tensions import print_tensions
from kb.notes.bindings import reason_line
from schemas import RunRecord

if TYPE_CHECKING:  # types only: the modules behind them load when a command runs (start-up)
    from kb.core import KnowledgeBase


@app.command()
def demo(
    verify_claims: Annotated[bool, typer.Option("--verify/--no-verify", help="Also re-verify stale claims.")] = True,
    papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None,
) -> None:
    """The main job on embedded defaults: index the bundled notes, re-verify their claims, print it all."""
    from kb.core import paper_summary
    from kb.evidence import tensions as tensions_mod
    from kb.evidence.claim_states import ALL_STATES, label
    from kb.queue import daemon
    kb = make_kb(papers, home, db)
    report = kb.index()
    console.print(f"[bold]kb[/] index at {kb.settings.resolved_database_url}")
    for error in report.errors:
        err_console.print(f"[yellow]skipped invalid note[/]: {esc(error)}", highlight=False)
    rows = [paper_summary(p) for p in kb.list_papers(sort="year", descending=True)]
    console.print(papers_table(rows, f"Library: {len(rows)} note(s)"))
    claims = [(p["id"], c) for p in rows for c in kb.claims(p["id"])]
    listing = Listing(f"{len(claims)} claim(s)", [Col("claim", ratio=2, fold=True), Col("analyzer", min_width=100),
                                                  Col("statement", ratio=1)])
    for note_id, claim in claims:
        listing.add(claim=esc(f"{note_id}#{claim.claim_id}"), analyzer=esc(claim.analyzer or "-"),
                    statement=esc(claim.statement))
    console.print(listing.table)
    if not verify_claims:
        return
    queued, skipped = kb.verify(stale_only=True)
    for key, reason in skipped:
        err_console.print(f"[yellow]not verified[/] {esc(key)}: {esc(reason)}", highlight=False)
    if queued:
        _print_plan(kb, queued)
        with daemon.registered_worker(kb.settings.home):  # the app, opened meanwhile, starts no second worker
            watch(kb, [r.id for r in queued], lambda: kb.work(once=True))
    verdicts: list[dict[str, Any]] = []
    not_runnable = dict(skipped)
    states = kb.claim_states()  # the status column is the claim's state, as every other surface shows it
    for key in kb.claim_keys():
        evidence = kb.evidence(key)
        verdict = evidence[0].verdict if evidence else None
        state = states[key].state.value if key in states else "unverified"
        found = kb.claim(key)
        stated = found[0] if found else None
        if key in not_runnable and not evidence:
            verdicts.append({"id": key, "analyzer": "-", "status": state, "state": state,
                             "verdict": "not_runnable", "reason": reason_line(stated, not_runnable[key], state)})
            continue
        reason = (f"{states[key].stale_reason}; " if key in states and states[key].stale_reason
                  else "") + (verdict.reason if verdict else "")
        verdicts.append({"id": key, "analyzer": evidence[0].analyzer if evidence else "-", "status": state,
                         "state": state, "verdict": verdict.kind.value if verdict else None,
                         "reason": reason_line(stated, reason, state)})
    verdict_table(verdicts)
    # Every claim counted, those bound to no analyzer too, in the Library header's order.
    counts = Counter(status.state.value for status in kb.claim_states().values())
    console.print(f"{sum(counts.values())} claims: " + " · ".join(
        f"{counts[state]} {label(state)}" for state in ALL_STATES if counts[state]), highlight=False)
    print_tensions([tensions_mod.record(t) for t in kb.tensions()])  # where notes disagree, and how it stands




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
    err_console.print("open the app now, in another terminal: [bold].venv/bin/kb app[/] (http://localhost:8501) "
                      "shows each verdict as it arrives, and the runs' progress on its Runs page")


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
