"""A hostile PDF costs one line: ``kb add`` reads every PDF in a child process with a memory and a time limit
(``kb.papers.pdf_child``), so a cyclic page tree or a stream that inflates to gigabytes never takes kb down (real
PDFs written here, the real PDF library, real limits)."""

from __future__ import annotations

import time
import zlib
from pathlib import Path

import pytest

from kb.papers.pdf_child import read_article_bounded
from tests.helpers.cli import run_kb


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (1 0 obj is the catalog), with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _inflating_pdf(path: Path, inflated: int) -> None:
    """One page whose content stream is ``inflated`` bytes once decompressed (a few hundred KB on disk)."""
    stream = zlib.compress(b"BT /F1 12 Tf 10 10 Td (a) Tj ET\n" * (inflated // 32), 9)
    path.write_bytes(_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]))


def _cyclic_pdf(path: Path) -> None:
    """A page tree whose node is its own kid."""
    path.write_bytes(_pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>"]))


def test_a_pdf_that_inflates_past_the_memory_limit_is_one_line(tmp_path: Path) -> None:
    pdf = tmp_path / "bomb.pdf"
    _inflating_pdf(pdf, 400_000_000)
    assert pdf.stat().st_size < 3_000_000
    started = time.monotonic()
    with pytest.raises(ValueError) as refused:
        read_article_bounded(pdf, memory=250_000_000, timeout=60)
    assert "\n" not in str(refused.value) and time.monotonic() - started < 60
    assert "GB a PDF may use" in str(refused.value), refused.value  # out of memory, or crashed at the limit


def test_a_pdf_that_takes_too_long_is_stopped(tmp_path: Path) -> None:
    pdf = tmp_path / "slow.pdf"
    _inflating_pdf(pdf, 200_000_000)
    with pytest.raises(ValueError, match="took over 1 s|needs more than|failed|crashed"):
        read_article_bounded(pdf, timeout=1)


def test_kb_add_of_a_cyclic_page_tree_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    pdf = tmp_path / "cyclic.pdf"
    _cyclic_pdf(pdf)
    result = run_kb(papers, tmp_path / "home", "add", str(pdf))
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cyclic.pdf" in lines[0], result.stderr
    assert list(papers.rglob("*.md")) == []
