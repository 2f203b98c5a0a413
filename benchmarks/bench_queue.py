"""Queue overhead: no-op analyzer runs per second through the local worker (real SQLite).

    .venv/bin/python benchmarks/bench_queue.py --n 200
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from kb import runs
from kb.core import KnowledgeBase
from kb.settings import Settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200, help="Runs to queue and execute.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase(Settings(papers=Path(tmp) / "papers", home=Path(tmp) / "home"))
        (Path(tmp) / "papers").mkdir()
        kb.index()
        t0 = time.perf_counter()
        for _ in range(args.n):
            runs.enqueue(kb.engine, "noop", {"value": 1.0})
        t_enqueue = time.perf_counter() - t0
        t0 = time.perf_counter()
        counts = kb.work()
        t_work = time.perf_counter() - t0
        assert counts == {"succeeded": args.n}, counts
        print(f"runs: {args.n}")
        print(f"enqueue:            {args.n / t_enqueue:8.1f} runs/s")
        print(f"local worker (noop): {args.n / t_work:8.1f} runs/s  ({1000 * t_work / args.n:.1f} ms/run)")


if __name__ == "__main__":
    main()
