"""The declared costs kb's cold estimates rest on, measured as multiples of the speed probe (issue 40).

A cold estimate is a declared time (``Analyzer.expected_seconds``, a built-in model's ``TRAIN_SECONDS``, a
library's load in ``analyzers.progress.LIBRARIES``) scaled by this machine's speed now
(``kb.evidence.estimates.machine_slowness``: the probe's time over ``REFERENCE_CALIBRATION_SECONDS``). So each
declared time must be its cost in probe units times that reference, whatever the load it was measured under.
This measures those multiples: each round in a fresh process (libraries not loaded, a fresh cache) times each
workload between two probes (interleaved, so both see the same load), and prints the median multiple over the
rounds, the reference seconds it implies, and the probe's CPU time (its cost without contention: the
reference machine's probe time, on the machine that defines it).

    nice .venv/bin/python benchmarks/bench_costs.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODEL = "builtin:esm-designed-4x64"


def one_round() -> dict[str, float]:
    """Run in a fresh process: each workload timed between two probes; {workload: seconds / probe seconds}."""
    import importlib

    from analyzers.progress import LIBRARIES
    from kb.evidence.estimates import calibration_seconds

    multiples: dict[str, float] = {}
    calibration_seconds(1)  # numpy imported, its code warm: what a probe in a running process finds
    cpu = time.process_time()
    probes = [calibration_seconds()]
    multiples["probe cpu seconds"] = (time.process_time() - cpu) / 5  # its five rounds

    def timed(name: str, work: object) -> None:
        started = time.perf_counter()
        work()  # type: ignore[operator]
        seconds = time.perf_counter() - started
        probes.append(calibration_seconds())
        multiples[name] = seconds / statistics.mean(probes[-2:])

    for library, (module, _) in LIBRARIES.items():
        timed(f"loading {library}", lambda module=module: importlib.import_module(module))
    from analyzers import registry
    from analyzers.base import RunContext
    from analyzers.depth import tiny

    work = Path(tempfile.mkdtemp(prefix="kb-bench-costs-"))
    (work / "out").mkdir()
    try:
        timed(f"training {MODEL}", lambda: tiny.trained_tiny_esm(MODEL, 0, cache=work / "cache" / "depth"))
        probe = registry.get("depth.probe")
        params = probe.params_for(scale="smoke")
        timed("depth.probe smoke", lambda: probe.run(params, RunContext(work / "out", cache_dir=work / "cache")))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return multiples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_round()))
        return
    from kb.evidence.estimates import REFERENCE_CALIBRATION_SECONDS

    rounds = []
    for number in range(1, args.rounds + 1):
        done = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True, check=True,
                              cwd=ROOT)
        rounds.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"round {number}: " + ", ".join(f"{k} {v:.4g}" for k, v in rounds[-1].items()), flush=True)
    print(f"medians over {len(rounds)} round(s); reference probe {REFERENCE_CALIBRATION_SECONDS} s:")
    for name in rounds[0]:
        median = statistics.median(one[name] for one in rounds)
        if name == "probe cpu seconds":
            print(f"  {name:<40} {median:.4f}")
        else:
            print(f"  {name:<40} {median:8.1f} probes = {median * REFERENCE_CALIBRATION_SECONDS:7.2f} reference s")


if __name__ == "__main__":
    main()
