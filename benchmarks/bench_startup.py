"""Start-up time of the ``kb`` command: the median wall time of ``kb --help`` and ``kb list`` (on an empty
notes folder and KB home, so the time is the start-up, not the work), each run as a new process
(``python -m kb``), the commands interleaved so a change in the machine's load falls on both alike. Prints
the load average beside the numbers: on a shared machine they mean little without it.

    .venv/bin/python benchmarks/bench_startup.py            # 7 rounds
    .venv/bin/python benchmarks/bench_startup.py --rounds 15 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _seconds(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kb", *args], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def measure(rounds: int) -> dict[str, object]:
    """Median, lowest and highest seconds of each command over ``rounds`` interleaved runs."""
    with tempfile.TemporaryDirectory() as tmp:
        papers, home = Path(tmp) / "papers", Path(tmp) / "home"
        papers.mkdir()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        commands = {"kb --help": ["--help"], "kb list": ["list", "--papers", str(papers), "--home", str(home)]}
        _seconds(commands["kb list"], env)  # the first run builds the index and warms the file cache
        times: dict[str, list[float]] = {name: [] for name in commands}
        load_before = os.getloadavg()
        for _ in range(rounds):
            for name, args in commands.items():
                times[name].append(_seconds(args, env))
        load_after = os.getloadavg()
    return {"rounds": rounds, "cpus": os.cpu_count(), "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
            "commands": {name: {"median_s": round(statistics.median(t), 3), "min_s": round(min(t), 3),
                                "max_s": round(max(t), 3)} for name, t in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="runs of each command (interleaved)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    result = measure(args.rounds)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"load average {result['load_average_before']} -> {result['load_average_after']} on "
          f"{result['cpus']} CPUs, {args.rounds} rounds")
    for name, row in result["commands"].items():  # type: ignore[attr-defined]
        print(f"{name:<12} median {row['median_s']:.3f} s  (min {row['min_s']:.3f}, max {row['max_s']:.3f})")


if __name__ == "__main__":
    main()
