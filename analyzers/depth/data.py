"""FASTA reading for the depth probes: strict letters, length filter, de-duplication."""

from __future__ import annotations

from pathlib import Path

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
#: Letters ESM tokenizers accept besides the 20 standard amino acids (ambiguity codes, X).
EXTRA_LETTERS = "XBZUO"


def read_fasta(
    path: Path, min_length: int = 1, max_length: int | None = None, allowed: str = AMINO_ACIDS + EXTRA_LETTERS
) -> list[tuple[str, str]]:
    """Records ``(name, sequence)`` of a FASTA file, de-duplicated by sequence, in file order.

    Sequences shorter than ``min_length`` or longer than ``max_length`` are dropped. A letter outside
    ``allowed`` raises ``ValueError`` naming the record and the letter; a file with no record raises too.
    """
    text = Path(path).read_text(encoding="utf-8")
    records: list[tuple[str, list[str]]] = []
    for line_number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith(">"):
            records.append((line[1:].split()[0] if line[1:].strip() else f"record_{len(records) + 1}", []))
        elif not records:
            raise ValueError(f"{path}: line {line_number} has sequence letters before any '>' header")
        else:
            records[-1][1].append(line.upper())
    if not records:
        raise ValueError(f"{path}: empty FASTA file (no '>' record found)")
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for name, parts in records:
        sequence = "".join(parts)
        bad = sorted(set(sequence) - set(allowed))
        if bad:
            raise ValueError(f"{path}: record {name!r} has invalid letter(s) {', '.join(map(repr, bad))}")
        if len(sequence) < min_length or (max_length is not None and len(sequence) > max_length):
            continue
        if sequence in seen:
            continue
        seen.add(sequence)
        out.append((name, sequence))
    return out
