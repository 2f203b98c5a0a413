"""Start-up time of the ``kb`` command: the median wall and CPU time of ``kb --help``, ``kb add --help``,
``kb list`` on an empty notes folder, on the bundled notes and on 1,000 generated notes (each on an index
already built, so the time is the start-up and the check that nothing changed, not the indexing), each run as
a new process (``python -m kb``), the commands interleaved so a change in the machine's load falls on all
alike. ``--before REV`` measures that
commit of this repository too (``git archive`` into a temporary folder, same Python), interleaved with this
checkout, and prints the ratios. Prints the load average beside the numbers: on a shared machine wall times
mean little without it; CPU time (user + system of the child) moves less with the load.

``--pdfs N`` measures instead ``kb add FILE.pdf``'s reading of a PDF: its child process (``python -m
kb.papers.pdf_child FILE.pdf``, kb/papers/pdf_child.py), a fresh one per PDF as ``kb add`` starts it, on N
articles of the real-article corpus' tuning half (spread over it in name order), each PDF's runs of each tree
interleaved; with ``--before``, each article's ratio and, over the articles, the median ratio and the ratio of
the summed medians (the child's start-up, imports and first uses included: what ``kb add`` waits for).

Python's bytecode caches are used as an installed kb has them (``PYTHONDONTWRITEBYTECODE`` is dropped for the
runs measured): without them every start compiles kb's modules from source again.

    .venv/bin/python benchmarks/bench_startup.py            # 7 rounds
    .venv/bin/python benchmarks/bench_startup.py --rounds 15 --before main --json
    .venv/bin/python benchmarks/bench_startup.py --pdfs 12 --rounds 9 --before e3dc798   # kb add's PDF reads
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
GENERATED = 1000  # notes in the generated library


def _run(tree: Path, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of ``python -m ARGS`` (``kb ...``, or another of kb's modules) with ``tree``
    first on the path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", *args], cwd=tree, check=True,
                   env={**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))},
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _export(revision: str, into: Path) -> Path:
    """The tree of ``revision`` (``git archive``: no worktree is registered), with the bundled notes."""
    archive = subprocess.run(["git", "archive", "--format=tar", revision], cwd=ROOT, check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _generated_notes(folder: Path, count: int) -> Path:
    """``count`` small valid notes (title, year, quality, tags, body) in ``folder``: a library of some size."""
    folder.mkdir()
    for n in range(count):
        (folder / f"generated-{n:04d}.md").write_text(
            f'---\npaper_id: "bench:{n}"\ntitle: "Generated note {n}"\npublication: {{year: {2000 + n % 27}}}\n'
            f'quality_score: {1 + n % 5}\ntags: ["bench", "group-{n % 10}"]\n---\n\nNote {n}.\n',
            encoding="utf-8")
    return folder


def _summary(times: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
            "max_s": round(max(times), 3)}


def _tuning_pdfs(count: int) -> list[Path]:
    """``count`` PDFs of the corpus' tuning half, spread over it in name order (the first, and evenly after)."""
    from benchmarks.bench_add import selected

    pdfs = [pdf for pdf, _ in selected("tuning")]
    return [pdfs[n * len(pdfs) // count] for n in range(min(count, len(pdfs)))]


def measure(rounds: int, before: str | None = None, pdfs: int = 0) -> dict[str, object]:
    """Median, lowest and highest seconds (wall, CPU) of each command over ``rounds`` interleaved runs; with
    ``pdfs``, of the PDF reader's child on that many tuning articles instead of the commands."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        trees = {"now": ROOT} | ({f"before ({before})": _export(before, base / "before")} if before else {})
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env.pop("KB_ANALYZER_MODULES", None)  # the commands as a user runs them, with no test plug-in
        (base / "empty").mkdir()
        runs: list[tuple[str, Path, list[str]]] = []  # (name, tree, args): each tree its own homes and notes
        for n, (label, tree) in enumerate(trees.items()):
            if pdfs:  # (the same files for every tree: the PDFs of this checkout)
                runs += [(f"read {pdf.name} | {label}", tree, ["kb.papers.pdf_child", str(pdf)])
                         for pdf in _tuning_pdfs(pdfs)]
                continue
            bundled = shutil.copytree(ROOT / "papers", base / f"bundled-{n}")
            generated = _generated_notes(base / f"generated-{n}", GENERATED)
            runs += [(f"kb --help | {label}", tree, ["kb", "--help"]),
                     (f"kb add --help | {label}", tree, ["kb", "add", "--help"]),
                     (f"kb list ({GENERATED:,} notes) | {label}", tree,
                      ["kb", "list", "--papers", str(generated), "--home", str(base / f"home-generated-{n}")]),
                     (f"kb list (empty) | {label}", tree,
                      ["kb", "list", "--papers", str(base / "empty"), "--home", str(base / f"home-empty-{n}")]),
                     (f"kb list (bundled notes) | {label}", tree,
                      ["kb", "list", "--papers", str(bundled), "--home", str(base / f"home-bundled-{n}")])]
        runs.sort(key=lambda run: run[0])  # the same command of each tree one after the other
        for _, tree, args in runs:  # the first run builds each index, writes the bytecode, warms the file cache
            _run(tree, args, env)
        walls: dict[str, list[float]] = {name: [] for name, _, _ in runs}
        cpus: dict[str, list[float]] = {name: [] for name, _, _ in runs}
        load_before = os.getloadavg()
        for _ in range(rounds):
            for name, tree, args in runs:
                wall, cpu = _run(tree, args, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
        load_after = os.getloadavg()
    return {"rounds": rounds, "cpus": os.cpu_count(), "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
            "commands": {name: {"wall": _summary(walls[name]), "cpu": _summary(cpus[name])} for name in walls}}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="runs of each command (interleaved)")
    parser.add_argument("--before", help="a git revision to measure too (e.g. main), interleaved with this one")
    parser.add_argument("--pdfs", type=int, default=0, metavar="N", help="measure kb add's PDF reader (its "
                        "child process) on N tuning articles instead of the commands")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    result = measure(args.rounds, args.before, args.pdfs)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"load average {result['load_average_before']} -> {result['load_average_after']} on "
          f"{result['cpus']} CPUs, {args.rounds} rounds")
    rows: dict[str, dict[str, dict[str, float]]] = result["commands"]  # type: ignore[assignment]
    for name, row in rows.items():
        print(f"{name:<48} wall median {row['wall']['median_s']:.3f} s (min {row['wall']['min_s']:.3f}, max "
              f"{row['wall']['max_s']:.3f})  cpu median {row['cpu']['median_s']:.3f} s")
    pairs = [(name.removesuffix(" | now"), row, rows[name.replace("| now", f"| before ({args.before})")])
             for name, row in rows.items() if args.before and name.endswith("| now")]
    for name, row, old in pairs:
        print(f"{name:<48} now/before: wall {row['wall']['median_s'] / old['wall']['median_s']:.2f}, cpu "
              f"{row['cpu']['median_s'] / old['cpu']['median_s']:.2f}")
    if args.pdfs and pairs:  # over the PDFs: the median of their ratios, and the ratio of their summed medians
        for kind in ("wall", "cpu"):
            ratios = [row[kind]["median_s"] / old[kind]["median_s"] for _, row, old in pairs]
            summed = (sum(row[kind]["median_s"] for _, row, _ in pairs)
                      / sum(old[kind]["median_s"] for _, _, old in pairs))
            print(f"all {len(pairs)} PDFs, {kind}: median now/before {statistics.median(ratios):.2f}, "
                  f"summed medians now/before {summed:.2f}")


if __name__ == "__main__":
    main()
