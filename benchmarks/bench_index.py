"""Benchmark of the kb index: cold indexing, no-change re-indexing and search latency.

Usage: ``python benchmarks/bench_index.py --n 10000``. Goals: no-change re-index < 5 % of the cold
time; search p95 < 50 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kb.index.database import make_engine
from kb.index.indexing import index_notes, search

WORDS = [
    "protein",
    "language",
    "model",
    "depth",
    "attention",
    "entropy",
    "rank",
    "collapse",
    "transformer",
    "layer",
    "probe",
    "structure",
    "contact",
    "prediction",
    "fitness",
    "mutation",
    "embedding",
    "sparse",
    "autoencoder",
    "feature",
    "interpretability",
    "evolution",
    "homology",
    "alignment",
    "scaling",
    "perplexity",
    "benchmark",
    "folding",
    "enzyme",
    "antibody",
    "design",
    "diffusion",
    "sequence",
]
TAGS = ["plm", "structure", "sae", "scaling", "fitness", "design", "rna", "antibody", "interpretability"]
DECISIONS = ["ACCEPT", "REJECT", "MAYBE", "PENDING"]


def make_note(i: int, rng: random.Random) -> str:
    title = " ".join(rng.choices(WORDS, k=6)).capitalize() + f" {i}"
    tags = "".join(f'  - "{t}"\n' for t in rng.sample(TAGS, 3))
    body = "\n\n".join(" ".join(rng.choices(WORDS, k=60)) for _ in range(8))
    return (
        "---\n"
        f'paper_id: "bench:{i:06d}"\n'
        f'title: "{title}"\n'
        f"tags:\n{tags}"
        f"quality_score: {rng.randint(1, 5)}\n"
        f'decision: "{rng.choice(DECISIONS)}"\n'
        f"publication:\n  year: {rng.randint(2015, 2026)}\n"
        "claims:\n"
        "  - id: main\n"
        f'    statement: "{" ".join(rng.choices(WORDS, k=12))}"\n'
        "---\n\n"
        f"# {title}\n\n{body}\n\n## 一句话总结\n蛋白质 语言 模型 深度\n"
    )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000, help="number of notes to generate")
    parser.add_argument("--queries", type=int, default=200, help="number of search queries")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory(prefix="kb-bench-") as tmp:
        papers = Path(tmp) / "papers"
        for shard in range(10):
            (papers / f"s{shard}").mkdir(parents=True)
        t0 = time.perf_counter()
        for i in range(args.n):
            (papers / f"s{i % 10}" / f"note-{i:06d}.md").write_text(make_note(i, rng), encoding="utf-8")
        gen_s = time.perf_counter() - t0

        engine = make_engine(f"sqlite:///{Path(tmp) / 'home' / 'index.sqlite'}")
        t0 = time.perf_counter()
        cold = index_notes(engine, papers)
        cold_s = time.perf_counter() - t0
        assert len(cold.added) == args.n and not cold.errors, (len(cold.added), cold.errors[:3])

        t0 = time.perf_counter()
        warm = index_notes(engine, papers)
        warm_s = time.perf_counter() - t0
        assert len(warm.unchanged) == args.n, warm

        queries = []
        for _ in range(args.queries):
            kind = rng.random()
            if kind < 0.6:
                queries.append(" ".join(rng.sample(WORDS, 2)))
            elif kind < 0.8:
                queries.append(rng.choice(WORDS)[:4])
            elif kind < 0.9:
                queries.append("蛋白质")
            else:
                queries.append('"' + rng.choice(WORDS) + " (" + rng.choice(WORDS) + ")*")
        latencies = []
        for q in queries:
            t0 = time.perf_counter()
            search(engine, q, limit=20)
            latencies.append((time.perf_counter() - t0) * 1000)
        engine.dispose()

    ratio = warm_s / cold_s
    p50, p95 = statistics.median(latencies), percentile(latencies, 0.95)
    rows = [
        ("notes", f"{args.n}", ""),
        ("generate", f"{gen_s:.2f} s", ""),
        ("cold index", f"{cold_s:.2f} s", f"{args.n / cold_s:.0f} notes/s"),
        (
            "no-change re-index",
            f"{warm_s:.3f} s",
            f"{ratio:.1%} of cold (goal < 5%) {'OK' if ratio < 0.05 else 'MISS'}",
        ),
        ("search p50", f"{p50:.2f} ms", f"{len(latencies)} queries"),
        ("search p95", f"{p95:.2f} ms", f"goal < 50 ms {'OK' if p95 < 50 else 'MISS'}"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>12}  {note}")


if __name__ == "__main__":
    main()
