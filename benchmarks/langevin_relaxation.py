"""How far a Langevin run's chains are from meeting: per model and temperature, the loss (the energy the
*equilibrated* check reads) of the chains from each start over ten windows of the run, the gap between the ES and OT
starts, the gate's R-hat and bulk ESS over the second half and the last quarter, and each chain's integrated
autocorrelation time of the loss (two estimates: a chain still drifting has none well defined); from those times,
the chain length at which the check would pass (the steps after burn-in about ``PASSING_TAUS`` autocorrelation
times, from the power table in analyzers/langevin/README.md).

It reads the sample cache a run leaves in its work folder (``kb langevin run --work-dir DIR``: ``DIR/samples``),
which holds every chain's loss draws, so the numbers come from the run itself, not from a rerun:

    .venv/bin/python benchmarks/langevin_relaxation.py RUN_WORK_DIR/samples

analyzers/langevin/README.md ("A CPU preset whose checks resolve") reports its output for `small`'s models at
5,700 steps.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from analyzers.langevin.convergence import PASSING_TAUS, arviz_diagnostics, effective_sample_size  # noqa: E402
from analyzers.langevin.store import load_plain  # noqa: E402

WINDOWS = 10


def chains(folder: Path) -> dict[tuple[str, float], dict[str, tuple[np.ndarray, np.ndarray, int]]]:
    """The finished chains in a sample cache: (model, temperature) -> start -> (steps, losses, run length)."""
    found: dict[tuple[str, float], dict[str, tuple[np.ndarray, np.ndarray, int]]] = defaultdict(dict)
    for path in sorted(folder.glob("*.pt")):
        state = load_plain(path)
        if not isinstance(state, dict) or not state.get("done"):
            continue  # a chain still running (or not a chain): nothing final to read
        record = state["records"]
        model, start = record["name"].split("@")
        steps, losses = zip(*sorted(record["energies"]), strict=True)
        found[(model, float(record["temperature"]))][start] = (np.array(steps), np.array(losses),
                                                               int(record["steps"]))
    return dict(found)


def autocorrelation_steps(steps: np.ndarray, losses: np.ndarray, length: int) -> tuple[float, float]:
    """The integrated autocorrelation time of one chain's loss after burn-in (half the run), in sampler steps: as
    the gate's bulk ESS reads it (rank-normalized, its two halves as two chains: a drift between them counts), and
    by Geyer's estimator on the draws as they are (a drift counts less)."""
    after = losses[steps > length / 2]
    every = float(steps[1] - steps[0]) if len(steps) > 1 else 1.0
    _, bulk = arviz_diagnostics(after[None, :])
    return len(after) * every / bulk, len(after) * every / effective_sample_size(after[None, :])


def report(found: dict[tuple[str, float], dict[str, tuple[np.ndarray, np.ndarray, int]]]
           ) -> list[tuple[float, float]]:
    """Print the report; the autocorrelation times of every chain (steps; bulk, Geyer's)."""
    taus: list[tuple[float, float]] = []
    for (model, temperature), starts in sorted(found.items()):
        print(f"{model} at T = {temperature:g}")
        for start, (steps, losses, length) in sorted(starts.items()):
            tau = autocorrelation_steps(steps, losses, length)
            taus.append(tau)
            means = " ".join(f"{window.mean():.4f}" for window in np.array_split(losses, WINDOWS))
            print(f"  {start}: loss by tenth of {length} steps: {means}; autocorrelation time {tau[0]:,.0f} steps "
                  f"(bulk), {tau[1]:,.0f} (Geyer)")
        if {"ES", "OT"} <= starts.keys():
            _report_pair(starts["ES"], starts["OT"])
    return taus


def _report_pair(es: tuple[np.ndarray, np.ndarray, int], ot: tuple[np.ndarray, np.ndarray, int]) -> None:
    """The gap between the two starts by tenth, and the gate's numbers over the second half and last quarter."""
    gaps = [a.mean() - b.mean() for a, b in zip(np.array_split(es[1], WINDOWS), np.array_split(ot[1], WINDOWS),
                                                 strict=True)]
    print("  gap ES - OT by tenth: " + " ".join(f"{gap:+.4f}" for gap in gaps))
    for label, share in (("second half", 0.5), ("last quarter", 0.75)):
        a, b = es[1][es[0] > share * es[2]], ot[1][ot[0] > share * ot[2]]
        draws = min(len(a), len(b))
        rhat, ess = arviz_diagnostics(np.stack([a[:draws], b[:draws]]))
        spread = float(np.sqrt((a.var() + b.var()) / 2)) or float("nan")
        print(f"  {label}: R-hat {rhat:.2f}, bulk ESS {ess:.1f}; gap {a.mean() - b.mean():+.4f} "
              f"({(a.mean() - b.mean()) / spread:+.1f} sd)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", type=Path, help="a run's sample cache: its --work-dir's samples/ folder")
    args = parser.parse_args()
    found = chains(args.samples)
    if not found:
        sys.exit(f"{args.samples}: no finished chain here; give a Langevin run's work folder's samples/")
    taus = report(found)
    for label, times in (("bulk", [bulk for bulk, _ in taus]), ("Geyer", [geyer for _, geyer in taus])):
        low, high = min(times), max(times)
        print(f"autocorrelation times ({label}) {low:,.0f}-{high:,.0f} steps: equilibrated needs ~{PASSING_TAUS} "
              f"of them after burn-in, chains of ~{2 * PASSING_TAUS * low:,.0f}-{2 * PASSING_TAUS * high:,.0f} "
              "steps with burn-in as long")


if __name__ == "__main__":
    main()
