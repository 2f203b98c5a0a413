"""The main jobs: ``kb demo`` (index, re-verify stale claims, print verdicts) and ``kb app`` (the Streamlit app)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

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
from kb.core import paper_summary
from kb.evidence import ALL_STATES, label


@app.command()
def demo(
    verify_claims: Annotated[bool, typer.Option("--verify/--no-verify", help="Also re-verify stale claims.")] = True,
    papers: PapersOpt = None, home: HomeOpt = None, db: DbOpt = None,
) -> None:
    """The main job on embedded defaults: index the bundled notes, re-verify their claims, print it all."""
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
        err_console.print(f"re-verifying {len(queued)} claim(s) at their bound scale")
        watch(kb, [r.id for r in queued], lambda: kb.work(once=True))
    verdicts: list[dict[str, Any]] = []
    not_runnable = dict(skipped)
    states = kb.claim_states()  # the status column is the claim's state, as every other surface shows it
    for key in kb.claim_keys():
        evidence = kb.evidence(key)
        verdict = evidence[0].verdict if evidence else None
        state = states[key].state.value if key in states else "unverified"
        if key in not_runnable and not evidence:
            verdicts.append({"id": key, "analyzer": "-", "status": state, "state": state,
                             "verdict": "not_runnable", "reason": not_runnable[key]})
            continue
        verdicts.append({"id": key, "analyzer": evidence[0].analyzer if evidence else "-", "status": state,
                         "state": state, "verdict": verdict.kind.value if verdict else None,
                         "reason": (f"{states[key].stale_reason}; " if key in states and states[key].stale_reason
                                    else "") + (verdict.reason if verdict else "")})
    verdict_table(verdicts)
    # Every claim counted, those bound to no analyzer too, in the Library header's order.
    counts = Counter(status.state.value for status in kb.claim_states().values())
    console.print(f"{sum(counts.values())} claims: " + " · ".join(
        f"{counts[state]} {label(state)}" for state in ALL_STATES if counts[state]), highlight=False)




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

    script = Path(__file__).resolve().parents[2] / "app" / "main.py"
    settings = make_kb(papers, home, db).settings
    env = {**os.environ, "KB_PAPERS": str(settings.papers.resolve()), "KB_HOME": str(settings.home.resolve())}
    if settings.database_url:
        env["KB_DATABASE_URL"] = settings.database_url
    command = [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
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
