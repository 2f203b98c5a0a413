"""Reading a PDF in a child process with a memory and a time limit, so a hostile PDF costs one line.

A PDF comes from anywhere (a shared folder, a download). The PDF library is native code: a cyclic page tree
can recurse until it crashes, and a 2 MB file can inflate to gigabytes. ``read_article_bounded`` runs
``kb.papers.pdf_layout.read_article`` in a fresh Python process whose address space (``RLIMIT_AS``) and CPU
time (``RLIMIT_CPU``) are capped, and waits at most ``timeout`` seconds; whatever goes wrong there (a crash,
the memory or time limit, an exception) comes back as a ``ValueError`` of one line, and kb goes on.

Run as ``python -m kb.papers.pdf_child PATH [--learned-year] [--learned-abstract]``: prints the article as
JSON on stdout.
"""

from __future__ import annotations

import dataclasses
import json
import resource
import signal
import subprocess
import sys
from pathlib import Path

from kb.papers.pdf_page import LearnedReaders, PdfArticle

#: Address space of the child: Python and the PDF library need a few hundred MB; a PDF that needs more is
#: refused rather than allowed to take the machine's memory.
MAX_PDF_MEMORY = 1_000_000_000
#: Seconds a PDF may take to read (a 300-page paper takes a few).
PDF_TIMEOUT = 120.0


def _limits(memory: int, seconds: float) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = int(seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def read_article_bounded(
    path: Path, *, memory: int = MAX_PDF_MEMORY, timeout: float = PDF_TIMEOUT,
    learned: LearnedReaders | None = None,
) -> PdfArticle:
    """``read_article(path, learned)`` in a child process within ``memory`` bytes and ``timeout``
    seconds; ``ValueError`` (one line) when the PDF cannot be read, crashes the reader or passes a limit."""
    command = [sys.executable, "-m", "kb.papers.pdf_child", str(path), *(learned or LearnedReaders()).flags()]
    try:
        done = subprocess.run(command, capture_output=True,
                              timeout=timeout, preexec_fn=lambda: _limits(memory, timeout), check=False)
    except subprocess.TimeoutExpired:
        raise ValueError(f"reading it took over {timeout:g} s, the limit for one PDF") from None
    if done.returncode == 0:
        data = json.loads(done.stdout)
        if "error" in data:
            raise ValueError(data["error"])
        data["authors"] = [tuple(pair) for pair in data["authors"]]
        return PdfArticle(**data)
    stderr = done.stderr.decode("utf-8", "replace")
    if "MemoryError" in stderr or done.returncode == -signal.SIGKILL or "std::bad_alloc" in stderr:
        raise ValueError(f"reading it needs more than the {memory / 1e9:.1f} GB a PDF may use (a PDF that "
                         "inflates to gigabytes)")
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise ValueError(f"reading it took over {timeout:g} s of CPU, the limit for one PDF")
    if done.returncode < 0:  # SIGABRT: the library's allocation failed inside the memory limit
        raise ValueError(
            f"the PDF reader crashed on it (signal {signal.Signals(-done.returncode).name}) within "
            f"the {memory / 1e9:.1f} GB a PDF may use"
        )
    last = (stderr.strip().splitlines() or ["no message"])[-1][:200]
    raise ValueError(f"the PDF reader failed on it ({last})")


def _with_identifiers(article: PdfArticle, path: Path) -> PdfArticle:
    """The article with the DOI and arXiv id its metadata and links name (``kb.papers.pdf_ids``) where they
    beat or fill what its text gave; a printed template DOI is dropped."""
    import pypdfium2 as pdfium

    from kb.papers.pdf_ids import read_identifiers
    from kb.papers.pdf_publication import other_versions_arxiv_ids

    document = pdfium.PdfDocument(path)
    try:
        found = read_identifiers(path, document)
    finally:
        document.close()
    article.doi = found.doi(article.doi)
    if article.arxiv_id is None and found.arxiv_ids:
        # a link on 'Our full version has been made available at https://arxiv.org/abs/...' is another
        # version's
        others = other_versions_arxiv_ids(article.pages[0]) if article.pages else set()
        article.arxiv_id = next((i for i in found.arxiv_ids if i not in others), None)
    return article


def _main(argv: list[str]) -> int:
    from kb.papers.pdf_layout import read_article

    sys.setrecursionlimit(10_000)  # a cyclic page tree ends in RecursionError here, not in a stack overflow
    try:
        article = _with_identifiers(read_article(Path(argv[0]), LearnedReaders.from_flags(argv[1:])),
                                    Path(argv[0]))
    except (ValueError, OSError, RecursionError) as exc:
        print(json.dumps({"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}))
        return 0
    print(json.dumps(dataclasses.asdict(article), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
