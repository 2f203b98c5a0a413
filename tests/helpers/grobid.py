"""A loopback GROBID: ``POST /api/processHeaderDocument`` answered with a recorded GROBID TEI
(``tests/fixtures/grobid``, real GROBID output; its README names each file's origin), and the ``grobid``
fixture that points ``KB_GROBID_URL`` at it with network lookups on.

``RecordedGrobid.answer`` is the body it answers (the MAML header by default), ``busy`` the number of 503s
('all threads busy', as GROBID answers) it gives first; ``received`` keeps each request (path, headers, body)
and ``form`` reads a request's multipart body back with the standard library's own MIME parser.
"""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.article_pdf import BERKELEY, make_article_pdf
from tests.helpers.lookups import loopback

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grobid"
MAML_HEADER = FIXTURES / "mmda-maml-header.tei.xml"  # a processHeaderDocument answer (GROBID 0.7.0)
MAML_TITLE = "Model-Agnostic Meta-Learning for Fast Adaptation of Deep Networks"
MAML_AUTHORS = ["Chelsea Finn", "Pieter Abbeel", "Sergey Levine"]


def make_maml_pdf(path: Path) -> Path:
    """MAML's first page as a test PDF: its title in capitals, its names over one institution, a proceedings
    line, and another abstract than the paper's (so whose abstract a note gets shows)."""
    return make_article_pdf(path, MAML_TITLE.upper(), "Proceedings of the 34th International Conference on "
                            "Machine Learning, Sydney, Australia, PMLR 70, 2017.",
                            "Chelsea Finn, Pieter Abbeel and Sergey Levine", BERKELEY)


class RecordedGrobid(BaseHTTPRequestHandler):
    """GROBID's header service on loopback, answering ``answer``; remembers each request."""

    answer: bytes = b""
    busy: int = 0
    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        cls = type(self)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        cls.received.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
        if self.path != "/api/processHeaderDocument":
            self._answer(404, b"Not Found", "text/plain", {})
        elif cls.busy > 0:
            cls.busy -= 1
            self._answer(503, b"", "text/plain", {"Retry-After": "1"})
        else:
            self._answer(200, cls.answer, "application/xml", {})

    def _answer(self, code: int, body: bytes, kind: str, headers: dict[str, str]) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def form(request: dict[str, Any]) -> dict[str, tuple[str | None, bytes]]:
    """Each field of a received multipart/form-data body: its file name (None for a plain field) and bytes,
    read by ``email``'s MIME parser (not kb's code)."""
    head = f"Content-Type: {request['headers']['Content-Type']}\r\n\r\n".encode()
    message = email.message_from_bytes(head + request["body"], policy=email.policy.HTTP)
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        fields[str(name)] = (part.get_filename(), part.get_payload(decode=True))
    return fields


@pytest.fixture
def grobid(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The loopback GROBID (answering the MAML header); ``KB_GROBID_URL`` points at it, lookups on."""
    with loopback(RecordedGrobid) as base:
        monkeypatch.setenv("KB_GROBID_URL", base)
        monkeypatch.setenv("KB_LOOKUPS", "true")
        RecordedGrobid.answer, RecordedGrobid.busy, RecordedGrobid.received = MAML_HEADER.read_bytes(), 0, []
        yield base
