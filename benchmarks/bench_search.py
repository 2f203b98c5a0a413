"""Search at 10,000 notes in Chinese and English, side by side with ``grep -rlF`` over the same files.

    .venv/bin/python benchmarks/bench_search.py --n 10000 --queries 200

Notes are made from the user's own note (seed 000: Chinese body with English terms), each a random
selection of its lines plus English words, so queries hit realistic text. Queries are random 2-4
character substrings of a note (Chinese, English fragments, mixed), and English words. Reported per kind:
kb's latency (p50, p95; limit 20, as the CLI and the app ask), and, on 10 queries per kind, kb's recall
and grep's (``grep -rliF``) against the exact answer (the notes whose text contains every term of the query), and
grep's time.
Goal: p95 < 50 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kb.index.database import make_engine
from kb.index.indexing import index_notes, search
from kb.index.search import has_cjk

SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "000_ce90e91fe3e899e8.txt"
WORDS = ["protein", "language", "model", "depth", "attention", "entropy", "rank", "collapse", "transformer",
         "layer", "probe", "structure", "contact", "fitness", "mutation", "embedding", "scaling", "perplexity"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="Notes to generate.")
    parser.add_argument("--queries", type=int, default=200, help="Queries per kind.")
    args = parser.parse_args()
    rng = random.Random(0)
    seed_text = SEED.read_text(encoding="utf-8")
    body = seed_text.split("\n---\n", 1)[1]  # after the frontmatter: the user's Chinese analysis
    lines = [line for line in body.splitlines() if line.strip()]
    with tempfile.TemporaryDirectory(prefix="kb-bench-search-") as tmp:
        papers = Path(tmp) / "papers"
        papers.mkdir()
        bodies: dict[str, str] = {}
        for i in range(args.n):
            body = "\n".join(rng.sample(lines, min(25, len(lines))) + [" ".join(rng.choices(WORDS, k=30))])
            note_id = f"note-{i:05d}"
            bodies[note_id] = body
            (papers / f"{note_id}.md").write_text(f'---\npaper_id: "bench:{i}"\ntitle: "Note {i}"\n---\n{body}\n',
                                                  encoding="utf-8")
        engine = make_engine(f"sqlite:///{Path(tmp) / 'index.sqlite'}")
        t0 = time.perf_counter()
        report = index_notes(engine, papers)
        index_s = time.perf_counter() - t0
        assert len(report.added) == args.n and not report.errors

        kinds: dict[str, list[tuple[str, str]]] = {"chinese 2-4 chars": [], "english/mixed 2-4 chars": [],
                                                    "english word": []}
        while min(len(v) for k, v in kinds.items() if k != "english word") < args.queries:
            note_id = rng.choice(list(bodies))
            text = bodies[note_id]
            n = rng.randint(2, 4)
            start = rng.randrange(0, len(text) - n)
            query = text[start : start + n]
            if not query.strip() or "\n" in query or not any(ch.isalnum() for ch in query):
                continue
            kind = "chinese 2-4 chars" if all(has_cjk(ch) for ch in query) else "english/mixed 2-4 chars"
            if len(kinds[kind]) < args.queries:
                kinds[kind].append((query, note_id))
        kinds["english word"] = [(w, "") for w in rng.choices(WORDS, k=args.queries)]

        print(f"{args.n} notes, indexed in {index_s:.1f} s; {args.queries} queries per kind")
        print(f"{'kind':26s} {'kb p50':>8s} {'kb p95':>8s} {'kb recall':>10s} {'grep median':>12s} "
              f"{'grep recall':>12s} {'grep/kb p50':>12s}")
        for kind, queries in kinds.items():
            latencies = []
            for query, _ in queries:
                t0 = time.perf_counter()
                search(engine, query, limit=20)
                latencies.append(1000 * (time.perf_counter() - t0))
            # Recall against the exact answer (the notes whose text contains the query, any case), for kb and
            # for grep on the same files, on 10 queries per kind.
            grep_times, truth, got, grep_got = [], 0, 0, 0
            for query, _ in queries[:10]:
                # A query is its whitespace-separated terms (as in kb and any search box): each must occur.
                terms = query.lower().split()
                expected = {nid for nid, body in bodies.items()
                            if all(term in " ".join(body.split()).lower() for term in terms)}
                t0 = time.perf_counter()
                out = subprocess.run(["grep", "-rliF", "--", query, str(papers)], capture_output=True, text=True)
                grep_times.append(1000 * (time.perf_counter() - t0))
                grepped = {Path(line).stem for line in out.stdout.splitlines()}
                hits = {h.paper_id for h in search(engine, query, limit=len(expected) + 10, snippets=False)}
                truth += len(expected)
                got += len(expected & hits)
                grep_got += len(expected & grepped)
            p50, grep_p50 = statistics.median(latencies), statistics.median(grep_times)
            print(f"{kind:26s} {p50:7.2f}ms {percentile(latencies, 0.95):7.2f}ms {got / max(truth, 1):>10.1%} "
                  f"{grep_p50:10.1f}ms {grep_got / max(truth, 1):>12.1%} {grep_p50 / p50:11.0f}x")
        engine.dispose()


if __name__ == "__main__":
    main()
