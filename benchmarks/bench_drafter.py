"""Precision and recall of the deterministic fallback claim drafter on kb.agents.eval_set.

Run: .venv/bin/python benchmarks/bench_drafter.py
"""

from __future__ import annotations

import time

from kb.agents.drafter import fallback_draft
from kb.agents.eval_set import EVAL_SET, score


def main() -> None:
    start = time.perf_counter()
    precision, recall = score(EVAL_SET)
    elapsed = time.perf_counter() - start
    for item in EVAL_SET:
        p, r = score([item])
        drafted = len(fallback_draft(item.text, registered=[]))
        print(f"{item.name:12s} expected={len(item.expected)} drafted={drafted} precision={p:.2f} recall={r:.2f}")
    print(f"fallback drafter on {len(EVAL_SET)} texts: precision={precision:.2f} recall={recall:.2f} "
          f"({elapsed * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
