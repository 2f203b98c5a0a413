"""Training data for the depth sweep, streamed from a FASTA file of any size in length-bucketed batches.

The sweep never holds its corpus in memory: ``StreamedBatches`` reads records one by one, keeps a shuffle
buffer of ``buffer_sequences`` training records, sorts the buffer by length, cuts it into micro-batches of
at most ``batch_tokens`` padded tokens (so a batch of short sequences holds many and one of long sequences
few, and padding stays small), and hands them out in a seeded random order; at the end of the file it starts
a new epoch. Its position (byte offset of the buffer, epoch, batch index, generator state) is plain data, so
a resumed run rebuilds exactly the batches an uninterrupted run would have seen.

The train/validation split is decided per record, as ``data.split_records`` does for a whole file: a
``split=train|val`` header tag where the record has one, else a hash of the sequence, so validation
sequences never reach training whatever the file order.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import torch

from analyzers.depth.data import AMINO_ACIDS, EXTRA_LETTERS, Record

_ALLOWED = frozenset(AMINO_ACIDS + EXTRA_LETTERS)
#: Tokens ESM adds around a sequence (<cls>, <eos>): a cropped sequence of n residues is n + 2 tokens.
SPECIAL_TOKENS = 2


def is_validation(record: Record, val_fraction: float) -> bool:
    """Whether ``record`` is held out: its ``split=`` tag, else the sequence hash rule of
    ``split_records``."""
    if record.split in ("train", "val"):
        return record.split == "val"
    return int(hashlib.sha256(record.sequence.encode()).hexdigest()[:8], 16) % 1000 < int(val_fraction * 1000)


def iter_fasta(handle: BinaryIO, path: Path, min_length: int = 8) -> Iterator[tuple[int, Record]]:
    """``(byte offset of the record's header, record)`` for each record from the handle's position on.

    Lines starting with ``;`` are comments; letters outside the amino-acid alphabet raise ``ValueError``
    naming the file and record; records shorter than ``min_length`` are skipped.
    """
    header: str | None = None
    start = 0
    parts: list[str] = []
    while True:
        offset = handle.tell()
        raw = handle.readline()
        if not raw:
            break
        line = raw.decode("utf-8", errors="replace").strip()
        if not line or line.startswith(";"):
            continue
        if line.startswith(">"):
            record = _finished_record(path, header, parts, min_length)
            if record is not None:
                yield start, record
            header, start, parts = line[1:].strip(), offset, []
        elif header is not None:
            parts.append(line.upper().replace(" ", ""))
    record = _finished_record(path, header, parts, min_length)
    if record is not None:
        yield start, record


def _finished_record(path: Path, header: str | None, parts: list[str], min_length: int) -> Record | None:
    """The record whose lines were read (None before the first header, or when shorter than
    ``min_length``); a letter outside the alphabet raises ``ValueError`` naming the record."""
    if header is None:
        return None
    sequence = "".join(parts)
    bad = set(sequence) - _ALLOWED
    if bad:
        raise ValueError(f"{path}: record {header.split()[0]!r} has invalid letter(s) {sorted(bad)}")
    name = header.split()[0] if header.strip() else "record"
    return Record(name, header, sequence) if len(sequence) >= min_length else None


def validation_records(
    path: Path, val_fraction: float, max_sequences: int, min_length: int = 8
) -> list[Record]:
    """The first ``max_sequences`` held-out records of the file (read until found, not the whole file)."""
    out: list[Record] = []
    seen: set[str] = set()
    with path.open("rb") as handle:
        for _, record in iter_fasta(handle, path, min_length):
            if is_validation(record, val_fraction) and record.sequence not in seen:
                seen.add(record.sequence)
                out.append(record)
                if len(out) >= max_sequences:
                    break
    return out


def _generator_state(generator: torch.Generator) -> str:
    return base64.b64encode(bytes(generator.get_state().tolist())).decode("ascii")


def _set_generator_state(generator: torch.Generator, state: str) -> None:
    generator.set_state(torch.tensor(list(base64.b64decode(state)), dtype=torch.uint8))


@dataclass
class StreamPosition:
    """Where the stream is: the buffer starting at ``offset`` (built with generator state ``generator``) in
    epoch ``epoch``, next batch ``batch_index`` of it."""

    offset: int = 0
    epoch: int = 0
    batch_index: int = 0
    generator: str = ""
    end_offset: int = 0  # where the next buffer starts (set when a buffer is built)


@dataclass
class StreamedBatches:
    """Seeded, resumable, length-bucketed micro-batches of training records from a FASTA file."""

    path: Path
    batch_tokens: int
    max_residues: int
    val_fraction: float
    seed: int = 0
    buffer_sequences: int = 10_000
    min_length: int = 8
    position: StreamPosition = field(default_factory=StreamPosition)
    _batches: list[list[Record]] = field(default_factory=list, repr=False)
    _generator: torch.Generator = field(default_factory=torch.Generator, repr=False)

    def __post_init__(self) -> None:
        self._generator.manual_seed(self.seed)
        self.position.generator = _generator_state(self._generator)

    def state(self) -> dict[str, Any]:
        """The position as plain data (JSON)."""
        p = self.position
        return {"offset": p.offset, "epoch": p.epoch, "batch_index": p.batch_index, "generator": p.generator}

    def load_state(self, state: dict[str, Any]) -> None:
        """Go back to a position from ``state``: the buffer is rebuilt from the file exactly as it was."""
        self.position = StreamPosition(int(state["offset"]), int(state["epoch"]), 0, str(state["generator"]))
        self._batches = []
        self._fill()
        self.position.batch_index = int(state["batch_index"])

    def _crop(self, record: Record) -> Record:
        excess = len(record.sequence) - self.max_residues
        if excess <= 0:
            return record
        start = int(torch.randint(0, excess + 1, (1,), generator=self._generator))
        return Record(record.name, record.header, record.sequence[start : start + self.max_residues])

    def _fill(self) -> None:
        """Read the next buffer from ``position.offset`` (wrapping to a new epoch at the end of the file)."""
        _set_generator_state(self._generator, self.position.generator)
        buffer: list[Record] = []
        end = self.position.offset
        with self.path.open("rb") as handle:
            handle.seek(self.position.offset)
            for offset, record in iter_fasta(handle, self.path, self.min_length):
                if len(buffer) >= self.buffer_sequences:
                    end = offset
                    break
                if not is_validation(record, self.val_fraction):
                    buffer.append(self._crop(record))
            else:
                end = 0  # end of file: the next buffer starts a new epoch
        if not buffer:
            if self.position.offset == 0:
                raise ValueError(
                    f"{self.path}: no training sequence (all held out or shorter than {self.min_length})"
                )
            self.position = StreamPosition(0, self.position.epoch + 1, 0, self.position.generator)
            self._fill()
            return
        buffer.sort(key=lambda record: len(record.sequence))
        if len(buffer[-1].sequence) + SPECIAL_TOKENS > self.batch_tokens:
            raise ValueError(
                f"{self.path}: record {buffer[-1].name!r} ({len(buffer[-1].sequence)} residues after "
                f"cropping to max_residues {self.max_residues}) cannot hold one sequence in batch_tokens "
                f"{self.batch_tokens} "
                f"(+{SPECIAL_TOKENS} special tokens): raise batch_tokens or lower max_residues"
            )
        batches: list[list[Record]] = [[]]
        for record in buffer:
            # Sorted ascending: the record is the longest so far, so the padded size is its length x count.
            if (len(batches[-1]) + 1) * (len(record.sequence) + SPECIAL_TOKENS) > self.batch_tokens:
                batches.append([])
            batches[-1].append(record)
        order = torch.randperm(len(batches), generator=self._generator).tolist()
        self._batches = [batches[i] for i in order]
        self.position.end_offset = end

    def next_batch(self) -> list[Record]:
        """The next micro-batch (records, cropped to ``max_residues``)."""
        if not self._batches:
            self._fill()
        if self.position.batch_index >= len(self._batches):
            wrapped = self.position.end_offset == 0
            self.position = StreamPosition(
                self.position.end_offset, self.position.epoch + (1 if wrapped else 0), 0,
                _generator_state(self._generator),
            )
            self._fill()
        batch = self._batches[self.position.batch_index]
        self.position.batch_index += 1
        return batch

    def mean_residues_per_batch(self) -> float:
        """Mean residues per micro-batch over the first buffer of a fresh stream with the same settings: what
        turns a token budget into a step count before training starts."""
        probe = StreamedBatches(self.path, self.batch_tokens, self.max_residues, self.val_fraction, self.seed,
                                self.buffer_sequences, self.min_length)
        probe._fill()
        return sum(len(r.sequence) for batch in probe._batches for r in batch) / len(probe._batches)
