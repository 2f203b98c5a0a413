"""Queue overhead: no-op analyzer runs per second through the local worker and through Ray (real SQLite).

    .venv/bin/python benchmarks/bench_queue.py --n 200 [--ray]

Ray is started before the clock starts (cluster start-up is a one-off cost, reported separately);
each Ray task claims its run through the same queue as a local worker.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.noop_analyzer

from analyzers import registry
from kb.core import KnowledgeBase
from kb.queue import store as queue_store
from kb.settings import Settings
from tests.noop_analyzer import register_for_subprocesses

register_for_subprocesses()  # the queue is measured with the test-only noop analyzer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200, help="Runs to queue and execute.")
    parser.add_argument("--ray", action="store_true", help="Also measure the Ray executor (local Ray instance).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase(Settings(papers=Path(tmp) / "papers", home=Path(tmp) / "home"))
        (Path(tmp) / "papers").mkdir()
        kb.index()
        registry.load_all()  # importing the analyzers (torch, transformers) is start-up, not queue overhead
        t0 = time.perf_counter()
        for _ in range(args.n):
            queue_store.enqueue(kb.engine, "noop", {"value": 1.0})
        t_enqueue = time.perf_counter() - t0
        t0 = time.perf_counter()
        counts = kb.work()
        t_work = time.perf_counter() - t0
        assert counts == {"succeeded": args.n}, counts
        print(f"runs: {args.n}")
        print(f"enqueue:             {args.n / t_enqueue:8.1f} runs/s")
        print(f"local worker (noop): {args.n / t_work:8.1f} runs/s  ({1000 * t_work / args.n:.1f} ms/run)")
        if args.ray:
            import ray

            t0 = time.perf_counter()
            ray.init(include_dashboard=False, log_to_driver=False)
            t_start = time.perf_counter() - t0
            ids = [queue_store.enqueue(kb.engine, "noop", {"value": 1.0}, executor="ray").id for _ in range(args.n)]
            try:
                t0 = time.perf_counter()
                statuses = kb.work_on_ray(ids)
                t_ray = time.perf_counter() - t0
            finally:
                ray.shutdown()
            assert set(statuses.values()) == {"succeeded"}, statuses
            print(f"ray start-up:        {t_start:8.1f} s (once per cluster connection)")
            print(f"ray executor (noop): {args.n / t_ray:8.1f} runs/s  ({1000 * t_ray / args.n:.1f} ms/run), "
                  f"{t_work / t_ray:.2f}x the local worker's rate")


if __name__ == "__main__":
    main()
