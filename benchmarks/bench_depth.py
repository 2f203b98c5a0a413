"""Wall time of one ``depth.probe`` run (probe pass + layer skips) on a model, default the tiny random ESM.

Run: .venv/bin/python benchmarks/bench_depth.py [--model ID_OR_FOLDER] [--device cpu|cuda] [--sequences N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from analyzers import registry
from analyzers.base import RunContext


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="builtin:tiny-esm")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--sequences", type=int, default=8)
    parser.add_argument("--no-skips", action="store_true", help="Time the probe pass without layer skips.")
    args = parser.parse_args()
    analyzer = registry.get("depth.probe")
    params = analyzer.params_for(
        {"model": args.model, "device": args.device, "max_sequences": args.sequences, "skips": not args.no_skips}
    )
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        result = analyzer.run(params, RunContext(out_dir=Path(out)))
        elapsed = time.perf_counter() - start
    print(
        f"depth.probe model={args.model} device={args.device} sequences={args.sequences} "
        f"layers={result.num_layers} skips={not args.no_skips}: {elapsed:.2f} s "
        f"(late_half_kl_drop_fraction={result.late_half_kl_drop_fraction:.3f})"
    )


if __name__ == "__main__":
    main()
