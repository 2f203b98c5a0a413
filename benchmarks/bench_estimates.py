"""Estimates against actual times across the demo's quick runs: the ratio estimate / actual of each (goal: within
2x for every run, on an idle machine).

Plans the demo's runs over the bundled notes in a fresh KB home (a fresh cache: the first runs train the built-in
models, a first-use stage of their own), keeps the quick ones (an estimate under ``--quick`` seconds, runnable
here), runs them through the real worker, and prints each run's estimate, actual time, stages and ratio. Then it
plans the same runs again (``--rounds``): their estimates now come from the first round's own times (the median of
this machine's runs) and the cache holds the models, and it runs and reports them again.

    nice .venv/bin/python benchmarks/bench_estimates.py --rounds 2

``--papers FOLDER`` plans another folder's notes instead of the bundled ones (a quick run of the report).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kb.core import KnowledgeBase  # noqa: E402
from kb.evidence.estimates import machine_slowness  # noqa: E402
from kb.settings import Settings  # noqa: E402
from schemas import RunRecord  # noqa: E402

GOAL_RATIO = 2.0


def plan_quick(kb: KnowledgeBase, quick: float) -> tuple[list[RunRecord], list[str]]:
    """Queue the demo's runs, keep the quick runnable ones, cancel the rest; the kept runs and the cancelled
    claims."""
    queued, _ = kb.verify(stale_only=False, priority=2)
    kept, dropped = [], []
    for run in queued:
        found = kb.run_estimates[run.id]
        if found.not_runnable is None and found.seconds is not None and found.seconds <= quick:
            kept.append(run)
        else:
            kb.cancel(run.id)
            dropped.append(f"{run.claim_key} ({found.text()[:80]})")
    return kept, dropped


def report(kb: KnowledgeBase, runs: list[RunRecord]) -> list[float]:
    """One line per run: estimate, actual, stages, ratio; the ratios."""
    ratios = []
    for queued in runs:
        run = kb.get_run(queued.id)
        assert run is not None
        estimate, actual = run.expected_seconds, run.actual_seconds
        if estimate is None or actual is None:
            print(f"  {run.claim_key}: {run.status.value}, estimate {estimate}, actual {actual}")
            continue
        ratio = estimate / actual
        ratios.append(ratio)
        stages = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in run.stages.items())
        flag = "" if 1 / GOAL_RATIO <= ratio <= GOAL_RATIO else "  <-- outside 2x"
        print(f"  {run.claim_key:<60} {run.analyzer:<12} est {estimate:7.1f} s  actual {actual:7.1f} s  "
              f"ratio {ratio:5.2f}  [{stages}]{flag}")
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2, help="Plan-and-run rounds (the second learns).")
    parser.add_argument("--quick", type=float, default=600.0, help="Longest estimate (s) of a run kept.")
    parser.add_argument("--keep", type=Path, default=None, help="KB home to use (default: a fresh temp one).")
    parser.add_argument("--papers", type=Path, default=ROOT / "papers",
                        help="Notes whose claims are planned (copied first; default: the bundled notes).")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kb-bench-estimates-"))
    papers = work / "papers"
    shutil.copytree(args.papers, papers)
    kb = KnowledgeBase(Settings(papers=papers, home=args.keep or work / "home"))
    kb.index()
    try:
        for round_number in range(1, args.rounds + 1):
            runs, dropped = plan_quick(kb, args.quick)
            print(f"round {round_number}: {len(runs)} quick run(s); left out: {len(dropped)}; load average "
                  f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, speed probe {machine_slowness():.1f}x "
                  "the reference machine's time")
            started = time.perf_counter()
            kb.work()
            print(f"  ran in {time.perf_counter() - started:.1f} s; load average now {os.getloadavg()[0]:.1f}")
            ratios = report(kb, runs)
            if ratios:
                inside = sum(1 / GOAL_RATIO <= r <= GOAL_RATIO for r in ratios)
                print(f"  round {round_number}: {inside}/{len(ratios)} within {GOAL_RATIO:g}x "
                      f"(ratios {min(ratios):.2f}..{max(ratios):.2f})")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
