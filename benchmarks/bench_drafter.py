"""Precision and recall of the deterministic fallback claim drafter on the labelled evaluation set.

Prints one line per passage (drafted, labels, precision, recall, recall on quantitative labels), the
micro average over the tuning passages and over the held-out passages (labelled after the drafter was
last tuned), and, with ``--errors``, every unmatched drafted quote (FP) and missed label (FN). The
matching rule is in ``kb.agents.eval_set``.

Run: .venv/bin/python benchmarks/bench_drafter.py [--errors]
"""

from __future__ import annotations

import argparse
import time

from kb.agents.eval_set import Score, evaluate, load_eval_set, total


def _short(text: str, width: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _line(name: str, score: Score) -> str:
    return (f"{name:28s} {score.drafted:7d} {score.labels:6d} {score.quantitative_labels:5d} "
            f"{score.precision:5.2f} {score.recall:5.2f} {score.recall_quantitative:7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--errors", action="store_true", help="List false positives and missed labels.")
    args = parser.parse_args()
    passages = load_eval_set()
    start = time.perf_counter()
    scores = evaluate(passages)
    elapsed = time.perf_counter() - start
    held_out = {p.name for p in passages if p.held_out}
    print(f"{'passage':28s} {'drafted':>7s} {'labels':>6s} {'quant':>5s} {'P':>5s} {'R':>5s} {'R_quant':>7s}")
    for name, score in scores.items():
        print(_line(name, score))
    print(_line("tuning set (micro)", total(s for n, s in scores.items() if n not in held_out)))
    print(_line("held-out set (micro)", total(s for n, s in scores.items() if n in held_out)))
    print(_line("all (micro)", total(scores.values())))
    print(f"fallback drafter on {len(passages)} passages ({sum(len(p.text) for p in passages):,} characters) "
          f"in {elapsed * 1000:.0f} ms")
    if args.errors:
        for name, score in scores.items():
            for quote in score.unmatched_drafted:
                print(f"FP {name}: {_short(quote)}")
            for quote in score.missed_labels:
                print(f"FN {name}: {_short(quote)}")


if __name__ == "__main__":
    main()
