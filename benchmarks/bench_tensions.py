"""Benchmark of ``kb tensions``' listing: every tension among 1,000 notes with 10,000 claims.

Usage: ``python benchmarks/bench_tensions.py --notes 1000 --claims-per-note 10``. Goal: the listing
(``kb.evidence.tensions.find``: read the claims from the index, group them by quantity, find the pairs whose accepted
values are disjoint, judge each tension's state) under a second, the first time in the process (cold: every claim
parsed) as well as later (warm: parsed claims are kept by their JSON). The notes are generated (not timed) over 200
named and analyzer quantities: each claim states a range or a bound around its quantity's value, a tenth of
them far off, so tensions exist; indexing them is not part of the goal (``bench_index.py`` measures that).
``--quantities 80`` crowds the same claims onto fewer quantities: 62,299 tensions, the large library's case.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kb.core import KnowledgeBase
from kb.evidence.tensions import find
from kb.settings import Settings


def claim_text(rng: random.Random, index: int, quantities: int) -> str:
    quantity = rng.randrange(quantities)
    truth = 10.0 * (quantity % 17 + 1)
    centre = truth * (3.0 if rng.random() < 0.1 else 1.0) + rng.uniform(-1, 1)  # a tenth disagree
    shape = rng.random()
    if shape < 0.5:
        expect = {"metric": "value", "op": "between", "value": [round(centre - 2, 2), round(centre + 2, 2)]}
    elif shape < 0.75:
        expect = {"metric": "value", "op": "<=", "value": round(centre + 3, 2)}
    else:
        expect = {"metric": "value", "op": ">=", "value": round(centre - 3, 2)}
    return (f"  - id: c{index}\n    statement: \"Quantity q{quantity} is near {centre:.1f}.\"\n"
            f"    kind: quantitative\n    quantity: \"q{quantity}\"\n    expect: {json.dumps(expect)}\n")


def write_notes(folder: Path, notes: int, per_note: int, quantities: int, seed: int) -> None:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(notes):
        claims = "".join(claim_text(rng, i, quantities) for i in range(per_note))
        (folder / f"note-{n:05d}.md").write_text(
            f"---\npaper_id: \"bench:{n}\"\ntitle: \"Bench note {n}\"\nclaims:\n{claims}---\nbody\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--claims-per-note", type=int, default=10)
    parser.add_argument("--quantities", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        papers = Path(tmp) / "papers"
        write_notes(papers, args.notes, args.claims_per_note, args.quantities, args.seed)
        kb = KnowledgeBase(Settings(papers=papers, home=Path(tmp) / "home"))
        started = time.perf_counter()
        report = kb.index()
        print(f"indexed {len(report.added)} notes in {time.perf_counter() - started:.1f} s (not part of the goal)")
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            found = find(kb.engine)
            times.append(time.perf_counter() - started)
        claims = args.notes * args.claims_per_note
        cold, warm = times[0], min(times[1:] or times)  # warm: the claims parsed once are kept (kb.evidence.tensions)
        print(f"{claims:,} claims, {args.notes:,} notes: {len(found):,} tensions listed in {cold:.3f} s cold, "
              f"{warm:.3f} s warm (all: {', '.join(f'{t:.3f}' for t in times)}) · goal < 1 s cold: "
              f"{'met' if cold < 1.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
