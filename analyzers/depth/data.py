"""Sequences for the depth analyzers: strict FASTA reading, the shipped designed corpus, batching by length.

The offline default corpus (``data/designed.fasta``) is made by this project
(``make_designed_fasta.py``): designed sequences sampled on the contact map of an idealized four-helix
bundle. They are NOT natural proteins and NOT UniProt data; real corpora (UniRef50 subsets) come from
the user as FASTA files.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
#: Letters ESM tokenizers accept besides the 20 standard amino acids (ambiguity codes, X).
EXTRA_LETTERS = "XBZUO"
DESIGNED_FASTA = Path(__file__).parent / "data" / "designed.fasta"
DESIGNED_DESCRIPTION = (
    "designed sequences (Potts-like energy on an idealized four-helix-bundle contact map, 4 families), "
    "made by this project; not natural proteins, not UniProt"
)


@dataclass(frozen=True)
class Record:
    """One FASTA record: ``name`` (first word of the header), full ``header`` and ``sequence``."""

    name: str
    header: str
    sequence: str
    structure: str | None = None  # SaProt: 3Di letters of the residues (lower case, '#' unknown)

    @property
    def split(self) -> str | None:
        """The ``split=train|val`` tag of the header, when the file carries one (the designed corpus does)."""
        for word in self.header.split()[1:]:
            if word.startswith("split="):
                return word.removeprefix("split=")
        return None


def read_fasta(
    path: Path | str,
    min_length: int = 1,
    max_length: int | None = None,
    allowed: str = AMINO_ACIDS + EXTRA_LETTERS,
) -> list[Record]:
    """Records of a FASTA file, de-duplicated by sequence, in file order.

    Lines starting with ``;`` are comments. Sequences shorter than ``min_length`` or longer than
    ``max_length`` are dropped. A letter outside ``allowed`` raises ``ValueError`` naming the file, the
    line, the record and the letter; a missing file, or one with no record, raises too.
    """
    path = Path(path)
    records = _fasta_records(path, _fasta_text(path), allowed)
    if not records:
        raise ValueError(f"{path}: empty FASTA file (no '>' record found)")
    return _kept_records(path, records, min_length, max_length)


def _fasta_text(path: Path) -> str:
    """The file's text; a missing file or one that is not UTF-8 text raises naming the file."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: FASTA file not found")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not a text FASTA file ({error.reason} at byte {error.start})") from error


def _fasta_records(path: Path, text: str, allowed: str) -> list[tuple[str, str, list[str]]]:
    """``(name, header, sequence lines)`` per record, in file order; a letter outside ``allowed``, or
    letters before the first header, raise ``ValueError`` naming the line."""
    allowed_set = set(allowed)
    records: list[tuple[str, str, list[str]]] = []
    for line_number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(";"):
            continue
        if line.startswith(">"):
            header = line[1:].strip()
            name = header.split()[0] if header else f"record_{len(records) + 1}"
            records.append((name, header, []))
            continue
        if not records:
            raise ValueError(f"{path}: line {line_number} has sequence letters before any '>' header")
        letters = line.upper().replace(" ", "")
        bad = sorted(set(letters) - allowed_set)
        if bad:
            raise ValueError(
                f"{path}: line {line_number} (record {records[-1][0]!r}) has invalid letter(s) "
                f"{', '.join(map(repr, bad))}; allowed: {allowed}"
            )
        records[-1][2].append(letters)
    return records


def _kept_records(
    path: Path, records: list[tuple[str, str, list[str]]], min_length: int, max_length: int | None
) -> list[Record]:
    """The records whose length is in bounds, the first of each sequence only; an empty record raises."""
    seen: set[str] = set()
    out: list[Record] = []
    for name, header, parts in records:
        sequence = "".join(parts)
        if not sequence:
            raise ValueError(f"{path}: record {name!r} has no sequence")
        if len(sequence) < min_length or (max_length is not None and len(sequence) > max_length):
            continue
        if sequence in seen:
            continue
        seen.add(sequence)
        out.append(Record(name, header, sequence))
    return out


THREE_DI_LETTERS = "acdefghiklmnpqrstvwy#"


def read_structures(path: Path | str) -> dict[str, str]:
    """3Di structure strings by record name from a FASTA file (Foldseek's alphabet in either case, '#'
    where the structure is unknown or not trusted, e.g. pLDDT < 70), lower-cased as SaProt writes them.
    A letter outside the alphabet raises ``ValueError`` naming the file, the line and the record."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: structure FASTA not found")
    structures: dict[str, list[str]] = {}
    name: str | None = None
    for line_number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(";"):
            continue
        if line.startswith(">"):
            name = line[1:].split()[0] if line[1:].strip() else f"record_{len(structures) + 1}"
            structures[name] = []
            continue
        if name is None:
            raise ValueError(f"{path}: line {line_number} has letters before any '>' header")
        letters = line.lower().replace(" ", "")
        bad = sorted(set(letters) - set(THREE_DI_LETTERS))
        if bad:
            raise ValueError(
                f"{path}: line {line_number} (record {name!r}) has letter(s) {', '.join(map(repr, bad))} "
                f"outside the 3Di alphabet {THREE_DI_LETTERS}"
            )
        structures[name].append(letters)
    if not structures:
        raise ValueError(f"{path}: empty structure FASTA (no '>' record found)")
    return {key: "".join(parts) for key, parts in structures.items()}


def attach_structures(records: list[Record], structures: dict[str, str], path: str) -> list[Record]:
    """``records`` with their 3Di strings (by record name); a record without one, or with one of another
    length, raises ``ValueError`` naming it."""
    out = []
    for record in records:
        structure = structures.get(record.name)
        if structure is None:
            raise ValueError(
                f"{path}: no 3Di string for record {record.name!r} (names must match the sequences')"
            )
        if len(structure) != len(record.sequence):
            raise ValueError(f"{path}: record {record.name!r} has {len(structure)} 3Di letters for "
                             f"{len(record.sequence)} residues")
        out.append(Record(record.name, record.header, record.sequence, structure))
    return out


def split_records(records: list[Record], val_fraction: float = 0.1) -> tuple[list[Record], list[Record]]:
    """``(train, val)``: by the headers' ``split=`` tags when every record has one, else by a hash of the
    sequence (deterministic, independent of file order)."""
    if records and all(record.split in ("train", "val") for record in records):
        return [r for r in records if r.split == "train"], [r for r in records if r.split == "val"]
    threshold = int(val_fraction * 1000)
    val = [
        r for r in records if int(hashlib.sha256(r.sequence.encode()).hexdigest()[:8], 16) % 1000 < threshold
    ]
    val_names = {id(r) for r in val}
    return [r for r in records if id(r) not in val_names], val


def length_batches(records: list[Record], batch_size: int) -> list[list[Record]]:
    """Batches of similar length (longest first), so padding stays small and memory errors come early."""
    ordered = sorted(records, key=lambda record: (-len(record.sequence), record.name))
    return [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]


def file_sha256(path: Path | str) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def unigram_accuracy(records: list[Record]) -> float:
    """Accuracy of always predicting the most frequent residue of ``records`` (the unigram floor)."""
    counts: dict[str, int] = {}
    for record in records:
        for letter in record.sequence:
            counts[letter] = counts.get(letter, 0) + 1
    total = sum(counts.values())
    return max(counts.values()) / total if total else 0.0
