"""Generate ``data/designed.fasta``: the offline sequence corpus of the depth analyzers (run once, committed).

The sequences are DESIGNED, not natural: low-temperature samples of the Potts-like energy
``E(s) = sum_{i<j} C_ij B(s_i, s_j)`` on the contact map ``C`` of an idealized four-helix bundle (built
geometrically by ``analyzers.langevin.structure``; not the 2ABD structure), with ``B`` a random symmetric
20x20 matrix drawn from N(0, 1). Every sequence keeps the amino-acid composition of the ACBP sequence
(composition-preserving swap moves, as in the Langevin paper's data set). Each interaction-matrix seed
gives one "family" with its own pairwise statistics; several independent tempering chains per family
give diversity. The last chain of each family is marked ``split=val`` so that validation sequences never
share a chain with training sequences.

The committed file was made with the tempering's earlier sampling rule (a chain sampled on arriving at the
lowest temperature, weights adapting throughout); the depth sweep's recorded numbers belong to it. The rule
now samples every chain at fixed ticks with fixed weights, so running this again writes a different corpus
(of the same kind); commit it only together with a re-run of the depth sweep.

    .venv/bin/python -m analyzers.depth.make_designed_fasta [--out PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from analyzers.langevin import design, structure

OUT = Path(__file__).parent / "data" / "designed.fasta"
FAMILY_SEEDS = (11, 12, 13, 14)
CHAINS_PER_FAMILY = 10
SAMPLES_PER_CHAIN = 50
TEMPERATURES = [3.0, 2.0, 1.4, 1.0, 0.7, 0.5]
SWEEPS_BETWEEN = 10


def generate() -> list[tuple[str, str]]:
    """Records ``(header, sequence)`` of the designed corpus, deterministic given the constants above."""
    contacts = structure.ideal_four_helix_bundle()
    composition = design.encode(structure.ACBP_SEQUENCE)
    records: list[tuple[str, str]] = []
    for family, family_seed in enumerate(FAMILY_SEEDS, start=1):
        interactions = design.interaction_matrix(family_seed)
        for chain in range(CHAINS_PER_FAMILY):
            report = design.simulated_tempering(
                contacts,
                interactions,
                composition,
                SAMPLES_PER_CHAIN,
                TEMPERATURES,
                sweeps_between=SWEEPS_BETWEEN,
                seed=1000 * family_seed + chain,
            )
            split = "val" if chain == CHAINS_PER_FAMILY - 1 else "train"
            letters = np.array(list(design.AMINO_ACIDS))
            for index, ids in enumerate(report.sequences):
                name = f"designed_f{family}_c{chain:02d}_s{index:03d}"
                header = f"{name} family={family} chain={chain} split={split} T={min(TEMPERATURES)}"
                records.append((header, "".join(letters[ids])))
    return records


def write(path: Path, records: list[tuple[str, str]]) -> None:
    """FASTA with ';' comment lines first saying what the file is."""
    lines = [
        "; DESIGNED sequences, NOT natural proteins and NOT UniProt data. Made by the kb project",
        "; (analyzers/depth/make_designed_fasta.py): low-temperature simulated-tempering samples of",
        "; E(s) = sum_{i<j} C_ij B(s_i, s_j) on the contact map of an idealized four-helix bundle (86 "
        "residues,",
        "; ACBP composition kept by swap moves); one random interaction matrix B per family, seeds "
        + ", ".join(map(str, FAMILY_SEEDS))
        + f"; {CHAINS_PER_FAMILY} chains x {SAMPLES_PER_CHAIN} samples per family; split=val marks held-out "
          f"chains.",
    ]
    for header, sequence in records:
        lines.append(f">{header}")
        lines.extend(sequence[i : i + 60] for i in range(0, len(sequence), 60))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    records = generate()
    write(args.out, records)
    print(f"wrote {len(records)} designed sequences to {args.out} ({args.out.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
