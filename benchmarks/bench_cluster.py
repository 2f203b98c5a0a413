"""Per-run overhead of the Slurm executor and of the S3 artifact store, against the local executor and the
folder store, on real loopback servers (PostgreSQL, moto's S3 server, the single-node Slurm of .ci/slurm-up).

    .venv/bin/python benchmarks/bench_cluster.py --repeats 5

Every run is the no-op analyzer writing one small plot, so what is timed is kb's own machinery. Each repeat
runs the three set-ups once, interleaved, and the medians are reported:

- local + folder: `kb.work()` in this process, evidence under the KB home (today's single machine);
- local + S3: the same worker uploading to the S3 store (upload cost per run);
- Slurm + S3: submit, job start, claim, run, upload, evidence (what a cluster adds per run);
and, per store, the first read of a plot by a reader with an empty cache (the app on another machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers: the loopback servers

from kb.core import KnowledgeBase
from kb.evidence.artifact_store import ArtifactStore
from kb.settings import Settings, SlurmSettings
from tests.noop_analyzer import register_for_subprocesses
from tests.servers import postgres_server, s3_server

register_for_subprocesses()  # the queue is measured with the test-only noop analyzer

NOTE = """---
paper_id: "bench:cluster"
title: "Cluster overhead"
claims:
  - id: echo
    statement: "The value is above two."
    analyzer: {name: noop, params: {value: 3, plot: true}}
    expect: {metric: value, op: ">", value: 2}
---
"""


def make_kb(root: Path, name: str, db: str, store: str | None, partition: str | None) -> KnowledgeBase:
    from sqlalchemy import create_engine, text

    admin = create_engine(db, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    papers = root / name / "papers"
    papers.mkdir(parents=True)
    (papers / "bench.md").write_text(NOTE, encoding="utf-8")
    slurm = SlurmSettings(partition=partition, time_minutes=5, mem_gb=1, cpus_per_task=1,
                          job_home=str(root / name / "job-home"))
    kb = KnowledgeBase(Settings(papers=papers, home=root / name / "home", artifact_store=store, slurm=slurm,
                                database_url=db.rsplit("/", 1)[0] + f"/{name}"))
    kb.index()
    return kb


def one_run(kb: KnowledgeBase, executor: str) -> tuple[float, str]:
    """Seconds from queueing to evidence recorded, and the plot's store key."""
    t0 = time.perf_counter()
    (record,), _ = kb.verify(["bench"], executor=executor)
    if executor == "slurm":
        kb.work_on_slurm([record.id], poll=0.05)
    else:
        kb.work()
    took = time.perf_counter() - t0
    latest = kb.evidence("bench#echo")[0]
    assert latest.run_id == record.id and latest.verdict is not None, latest
    return took, next(a for a in latest.artifacts if a.endswith(".png"))


def first_read(home: Path, store_url: str | None, key: str) -> float:
    """Seconds for a reader with an empty cache to get the plot as a local file."""
    reader = ArtifactStore(home, store_url)
    t0 = time.perf_counter()
    assert reader.local_path(key) is not None
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="Interleaved repeats (medians are reported).")
    args = parser.parse_args()
    from analyzers import registry
    from kb.queue.slurm import slurm_available

    registry.load_all()
    why = slurm_available()
    if why is not None:
        sys.exit(f"no Slurm here: {why} (bash .ci/slurm-up starts the single-node cluster)")
    import subprocess

    partition = subprocess.run(["sinfo", "-h", "-o", "%P"], capture_output=True, text=True).stdout.split()[0]
    with tempfile.TemporaryDirectory() as tmp, postgres_server() as db, s3_server() as endpoint:
        import s3fs

        os.environ.update({"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "bench",
                           "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"})
        s3fs.S3FileSystem().mkdir("bench")
        root = Path(tmp)
        s3 = "s3://bench/kb"
        setups = {"local + folder": (make_kb(root, "folder", db, None, None), "local"),
                  "local + S3": (make_kb(root, "s3", db, s3, None), "local"),
                  "Slurm + S3": (make_kb(root, "slurm", db, s3, partition.rstrip("*")), "slurm")}
        for kb, executor in setups.values():  # warm-up: imports, connections, the first job's interpreter
            one_run(kb, executor)
        times: dict[str, list[float]] = {name: [] for name in setups}
        reads: dict[str, list[float]] = {"folder": [], "S3": []}
        for i in range(args.repeats):
            for name, (kb, executor) in setups.items():
                took, key = one_run(kb, executor)
                times[name].append(took)
                if name == "local + folder":
                    reads["folder"].append(first_read(kb.settings.home, None, key))
                elif name == "local + S3":
                    reads["S3"].append(first_read(root / f"reader-{i}", s3, key))
        base = statistics.median(times["local + folder"])
        print(f"per-run wall time, queue to evidence, median of {args.repeats} interleaved repeats (noop + 1 plot):")
        for name, values in times.items():
            median = statistics.median(values)
            print(f"  {name:15s} {1000 * median:8.1f} ms   x{median / base:6.1f} of local + folder")
        folder_read = statistics.median(reads["folder"])
        s3_read = statistics.median(reads["S3"])
        print("first read of a plot by a reader with an empty cache:")
        print(f"  folder store    {1000 * folder_read:8.2f} ms")
        print(f"  S3 store        {1000 * s3_read:8.2f} ms   x{s3_read / folder_read:6.1f} of the folder store")
        print("what the ratios measure: the S3 line adds one upload per file to a local run; the Slurm line adds "
              "sbatch, scheduling (sched_interval=1 s), a new Python process importing kb, and polling")


if __name__ == "__main__":
    main()
