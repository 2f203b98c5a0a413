"""``langevin.sweep`` at a named scale, driven from Python through the analyzer registry (what
``kb run langevin.sweep --scale small --device cuda`` runs, without kb's CLI and its database dependencies, which
a bare GPU node lacks: see /work/shared/docs/gpu-node.md), printing every progress report with the seconds since
the start and, at the end, the seconds each stage took and the run's headline figures.

Run: python3 benchmarks/gpu_sweep.py [--scale small] [--device cuda] [--work DIR] [--set key=json ...]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

# where each stage starts: the first report that matches (training includes the relaxation of the starts)
STAGES = (("design", re.compile(r"contact map: ")), ("training", re.compile(r": training \(ES ensemble")),
          ("sampling", re.compile(r"step \d+/\d+")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default="small")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--work", default="/tmp/kb-gpu-sweep", help="run folder and cache (a rerun reuses stages)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=JSON", help="override one parameter")
    args = parser.parse_args(argv)
    from analyzers.base import RunContext
    from analyzers.registry import get

    overrides = {"device": args.device}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = json.loads(value)
    analyzer = get("langevin.sweep")
    params = analyzer.params_for(overrides, scale=args.scale)
    started = time.perf_counter()
    first_seen: dict[str, float] = {}

    def progress(fraction: float, message: str) -> None:
        now = time.perf_counter() - started
        for stage, marker in STAGES:
            if stage not in first_seen and marker.search(message):
                first_seen[stage] = now
        print(f"[{now:7.1f} s] {fraction:5.1%} {message}", flush=True)

    work = Path(args.work)
    context = RunContext(work / "run", cache_dir=work / "cache", progress=progress, report_every=10.0)
    result = analyzer.run(params, context)
    total = time.perf_counter() - started
    print(f"langevin.sweep --scale {args.scale} --device {args.device}: {total:.1f} s in all")
    marks = sorted(first_seen.items(), key=lambda item: item[1]) + [("end", total)]
    for (stage, at), (_, until) in zip(marks, marks[1:], strict=False):
        print(f"  {stage:9s} from {at:7.1f} s, until {until:7.1f} s")
    data = result.model_dump(mode="json")
    for key in ("test_error_by_temperature", "max_norm_drift", "temperatures"):
        if key in data:
            print(f"  {key}: {data[key]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
