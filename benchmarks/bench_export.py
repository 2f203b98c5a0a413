"""``kb export --bibtex`` over a generated library whose notes have no citation keys yet: the first export
proposes a key for each note and writes it into the note (its lock, a byte-minimal atomic edit); the second
finds every key in place. Both through the real CLI, each in a new process (index brought up to date first,
timed apart).

    .venv/bin/python benchmarks/bench_export.py --n 1000

Goal: the first export of 1,000 notes well under a minute (it took ~70 s when every key written scanned the
notes folder for the note's path), its cost bounded by parsing each note once, checking the keyed result once
and one atomic write (issue 40: five parses per note made it 3.85 times a cold index). CPU seconds (user +
system of the command's process) are printed beside wall seconds: on a loaded machine they are what compares.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_app import make_note  # noqa: E402

FAMILIES = ["Siji", "Rives", "Lin", "Meier", "Elnaggar", "Brandes", "Madani", "Nijkamp", "Hsu", "Notin"]


def write_library(papers: Path, n: int, seed: int) -> None:
    """``n`` notes with claims (``bench_app.make_note``), each with one to three authors and no citekey."""
    rng = random.Random(seed)
    (papers / "sources").mkdir(parents=True)
    for i in range(n):
        text, source = make_note(i, rng, with_source=rng.random() < 0.5)
        authors = "".join(f'  - name: "{rng.choice("ABCDEFG")}. {rng.choice(FAMILIES)}"\n'
                          for _ in range(rng.randint(1, 3)))
        text = text.replace("tags:\n", f"authors:\n{authors}tags:\n", 1)
        (papers / f"note-{i:06d}.md").write_text(text, encoding="utf-8")
        if source is not None:
            (papers / "sources" / f"note-{i:06d}.txt").write_text(source, encoding="utf-8")


def kb_command(folder: Path, *args: str) -> tuple[float, float]:
    """Wall and CPU seconds one ``kb`` command takes in a new process (its output checked, then dropped)."""
    env = {**os.environ, "KB_PAPERS": str(folder / "papers"), "KB_HOME": str(folder / "home"),
           "PYTHONPATH": str(ROOT)}
    env.pop("KB_DATABASE_URL", None)
    before, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([sys.executable, "-m", "kb.cli", *args], check=True, capture_output=True, env=env, cwd=ROOT)
    wall, after = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="Notes to generate.")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kb-bench-export-") as tmp:
        folder = Path(tmp)
        write_library(folder / "papers", args.n, args.seed)
        index = kb_command(folder, "index")
        out = folder / "first.bib"
        first = kb_command(folder, "export", "--bibtex", "-o", str(out))
        entries = out.read_text(encoding="utf-8").count("\n@") + 1
        keyed = sum("\ncitekey: " in p.read_text(encoding="utf-8") for p in (folder / "papers").glob("*.md"))
        assert entries == args.n == keyed, (entries, keyed)
        second = kb_command(folder, "export", "--bibtex", "-o", str(folder / "second.bib"))
        assert (folder / "second.bib").read_bytes() == out.read_bytes(), "keys must be stable"
    print(f"notes                        {args.n:8d}   (load average {os.getloadavg()[0]:.2f})")
    print("                                 wall        cpu")
    print(f"kb index (cold)              {index[0]:8.2f} s {index[1]:8.2f} s")
    print(f"kb export --bibtex, first    {first[0]:8.2f} s {first[1]:8.2f} s   (writes {args.n} citation keys; "
          f"{first[1] / index[1]:.2f} times the index's cpu)")
    print(f"kb export --bibtex, again    {second[0]:8.2f} s {second[1]:8.2f} s   (every key in place)")


if __name__ == "__main__":
    main()
