"""A loopback HTTP server with recorded arXiv, Crossref and OpenAlex answers (``tests/fixtures/lookups``), and
the ``lookups`` fixture that points kb's lookup settings at it and turns PDF lookups on.

Routes, as the real services have them: ``/api/query?id_list=ID`` (arXiv's Atom API: ``arxiv-ID.xml``, else
``arxiv-error.xml``, as arXiv answers an unknown id), ``/works/DOI`` (Crossref: ``crossref-DOI.json``, '/' as
'_'), ``/openalex/works/doi:DOI`` (OpenAlex: ``openalex-DOI.json``); anything not recorded is a 404.
``RecordedLookups.throttle`` makes the next N requests of a route answer 429 with ``Retry-After`` first.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lookups"


class RecordedLookups(BaseHTTPRequestHandler):
    """Serves the recorded answers; remembers each request's path and User-Agent."""

    requests: list[str] = []
    agents: list[str] = []
    throttle: dict[str, int] = {}  # route ('arxiv', 'crossref', 'openalex') -> 429s still to answer

    def _recorded(self) -> tuple[str, Path | None]:
        url = urlparse(self.path)
        if url.path == "/api/query":
            ident = parse_qs(url.query)["id_list"][0]
            path = FIXTURES / f"arxiv-{ident}.xml"
            return "arxiv", path if path.exists() else FIXTURES / "arxiv-error.xml"
        if url.path.startswith("/works/"):
            return "crossref", FIXTURES / f"crossref-{unquote(url.path.removeprefix('/works/')).replace('/', '_')}.json"
        if url.path.startswith("/openalex/works/doi:"):
            doi = unquote(url.path.removeprefix("/openalex/works/doi:"))
            return "openalex", FIXTURES / f"openalex-{doi.replace('/', '_')}.json"
        return "", None

    def do_GET(self) -> None:
        cls = type(self)
        cls.requests.append(self.path)
        cls.agents.append(self.headers.get("User-Agent", ""))
        route, path = self._recorded()
        if cls.throttle.get(route, 0) > 0:
            cls.throttle[route] -= 1
            self._answer(429, b"Too Many Requests", "text/plain", {"Retry-After": "1"})
        elif path is not None and path.exists():
            kind = "application/atom+xml" if route == "arxiv" else "application/json"
            self._answer(200, path.read_bytes(), kind)
        else:
            self._answer(404, b"Resource not found.", "text/plain")

    def _answer(self, code: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def loopback(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on a free loopback port for the block: its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The recorded-answers server; kb's arXiv, Crossref and OpenAlex settings point at it, lookups on."""
    with loopback(RecordedLookups) as base:
        monkeypatch.setenv("KB_ARXIV_API_URL", f"{base}/api/query")
        monkeypatch.setenv("KB_CROSSREF_API_URL", base)
        monkeypatch.setenv("KB_OPENALEX_API_URL", f"{base}/openalex")
        monkeypatch.setenv("KB_LOOKUPS", "true")
        RecordedLookups.requests, RecordedLookups.agents, RecordedLookups.throttle = [], [], {}
        yield base
