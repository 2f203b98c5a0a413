"""Queue throughput: no-op analyzer runs per second through 1 and 3 worker processes (SQLite, PostgreSQL).

    .venv/bin/python benchmarks/bench_queue.py --n 150 --repeats 3 [--base /tmp/kb-base] [--postgres] [--ray]

Each measurement queues ``--n`` runs of the test-only ``noop`` analyzer in a fresh KB home, starts the
worker processes, lets them import everything (analyzers, torch) and open the database, then starts the
clock and releases them at once: the rate is ``n`` over the time from the release to the last run's end.
``--base`` names a second checkout (e.g. ``git worktree add /tmp/kb-base HEAD``, the code before a change):
its measurements interleave with this checkout's, repeat after repeat, so both see the same machine load,
and the medians are compared. ``--postgres`` adds a throw-away PostgreSQL server (tests/servers.py).
``--ray`` measures the Ray executor in this checkout alone (local Ray instance).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

# One worker process: import, open the database, wait for the start signal, work the queue dry, print its clock.
WORKER = """
import sys, time
from pathlib import Path
from analyzers import registry
from kb.core import KnowledgeBase
from kb.settings import Settings
home, go, url = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] or None
kb = KnowledgeBase(Settings(papers=home.parent / "papers", home=home, database_url=url))
registry.load_all()
kb.engine
print("ready", flush=True)
while not go.exists():
    time.sleep(0.001)
counts = kb.work()
print("done", time.time(), sum(counts.values()), flush=True)
"""


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "KB_ANALYZER_MODULES": "tests.noop_analyzer"}


def measure(tree: Path, workers: int, n: int, url: str | None) -> float:
    """Runs per second of ``workers`` processes of the kb in ``tree`` on ``n`` queued no-op runs."""
    with tempfile.TemporaryDirectory() as tmp:
        home, go = Path(tmp) / "home", Path(tmp) / "go"
        (Path(tmp) / "papers").mkdir()
        enqueue = ("import sys; from pathlib import Path; from kb.core import KnowledgeBase; "
                   "from kb.settings import Settings; from kb.queue import store; "
                   "kb = KnowledgeBase(Settings(papers=Path(sys.argv[1]).parent / 'papers', home=Path(sys.argv[1]), "
                   "database_url=sys.argv[2] or None)); "
                   "[store.enqueue(kb.engine, 'noop', {'value': float(i)}) for i in range(int(sys.argv[3]))]")
        subprocess.run([sys.executable, "-c", enqueue, str(home), url or "", str(n)], cwd=tree, env=_env(tree),
                       check=True)
        procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(home), str(go), url or ""], cwd=tree,
                                  env=_env(tree), stdout=subprocess.PIPE, text=True) for _ in range(workers)]
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        started = time.time()
        go.touch()
        ends, done = [], 0
        for proc in procs:
            assert proc.stdout is not None
            _, end, count = proc.stdout.readline().split()
            ends.append(float(end))
            done += int(count)
            proc.wait()
        assert done == n, f"{done} of {n} runs done"
        return n / (max(ends) - started)


@contextlib.contextmanager
def databases(postgres: bool) -> Iterator[dict[str, str | None]]:
    """The databases to measure on, by name: SQLite (None: the KB home's file), and PostgreSQL when asked."""
    if not postgres:
        yield {"sqlite": None}
        return
    sys.path.insert(0, str(HERE))
    from tests.servers import postgres_server

    with postgres_server() as url:
        yield {"sqlite": None, "postgresql": url}


def fresh_database(url: str | None) -> str | None:
    """A new empty database on the server (each measurement starts from an empty queue)."""
    if url is None:
        return None
    from sqlalchemy import create_engine, text

    name = f"bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return url.rsplit("/", 1)[0] + f"/{name}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=150, help="Runs to queue and execute per measurement.")
    parser.add_argument("--repeats", type=int, default=3, help="Interleaved repeats; medians are reported.")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 3], help="Worker process counts.")
    parser.add_argument("--base", type=Path, help="Another checkout to compare with (the code before a change).")
    parser.add_argument("--postgres", action="store_true", help="Also measure on a throw-away PostgreSQL server.")
    parser.add_argument("--ray", action="store_true", help="Also measure the Ray executor (this checkout).")
    args = parser.parse_args()
    trees = {"this": HERE, **({"base": args.base.resolve()} if args.base else {})}
    rates: dict[tuple[str, str, int], list[float]] = {}
    with databases(args.postgres) as dbs:
        for _ in range(args.repeats):
            for db_name, url in dbs.items():
                for workers in args.workers:
                    for tree_name, tree in trees.items():
                        rate = measure(tree, workers, args.n, fresh_database(url))
                        rates.setdefault((db_name, tree_name, workers), []).append(rate)
    print(f"runs per measurement: {args.n}, repeats: {args.repeats} (medians; runs/s)")
    results = []
    for (db_name, tree_name, workers), values in sorted(rates.items()):
        median = statistics.median(values)
        results.append({"database": db_name, "tree": tree_name, "workers": workers, "runs_per_s": median,
                        "all": values})
        line = f"{db_name:10s} {workers} worker(s) {tree_name:5s}: {median:7.1f} runs/s"
        if tree_name == "this" and (db_name, "base", workers) in rates:
            base = statistics.median(rates[(db_name, "base", workers)])
            line += f"  ({100 * (median / base - 1):+.1f} % against base {base:.1f})"
        print(line)
    print(json.dumps(results))
    if args.ray:
        ray_rate()


def ray_rate() -> None:
    """The Ray executor's rate on 100 runs in this checkout (a local Ray instance, started off the clock)."""
    sys.path.insert(0, str(HERE))
    import ray

    from kb.core import KnowledgeBase
    from kb.queue import store as queue_store
    from kb.settings import Settings
    from tests.noop_analyzer import register_for_subprocesses

    register_for_subprocesses()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "papers").mkdir()
        kb = KnowledgeBase(Settings(papers=Path(tmp) / "papers", home=Path(tmp) / "home"))
        ray.init(include_dashboard=False, log_to_driver=False)
        ids = [queue_store.enqueue(kb.engine, "noop", {"value": 1.0}, executor="ray").id for _ in range(100)]
        try:
            started = time.perf_counter()
            statuses = kb.work_on_ray(ids)
            elapsed = time.perf_counter() - started
        finally:
            ray.shutdown()
        assert set(statuses.values()) == {"succeeded"}, statuses
        print(f"ray executor (noop): {100 / elapsed:8.1f} runs/s")


if __name__ == "__main__":
    main()
