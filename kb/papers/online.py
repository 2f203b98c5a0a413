"""Asking a service online: the one HTTP client of ``kb add``, for the identifier lookups (arXiv, Crossref,
OpenAlex: ``kb.papers.lookups``) and for GROBID, which is sent the PDF itself (``kb.papers.grobid``).

Requests are polite: a ``User-Agent`` naming kb and the ``contact_email`` setting, one more try after a
429/503 whose wait (``Retry-After``, else the service's usual one) is within ``lookup_max_wait``, answers
cached under ``<KB home>/cache/lookups`` (a paper's record, or a PDF's header, is asked for once), a short
deadline per request (``lookup_timeout``) and, where asked, a bound on the answer's size. What cannot be had
is an ``AddError`` of one line naming the service (``LookupUnreachable`` when the service is not reachable at
all: offline, DNS, refused, deadline).
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import os
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kb import __version__
from kb.papers.add import AddError
from kb.settings import Settings

OFFLINE_HINT = "give the PDF (`kb add paper.pdf`) or a BibTeX entry (`kb add refs.bib`)"


class LookupUnreachable(AddError):
    """The service could not be reached at all (offline, DNS, refused, deadline): asking another is futile."""


def user_agent(settings: Settings) -> str:
    """kb's User-Agent: its version and, when set, the contact address services ask polite clients for."""
    contact = f" (mailto:{settings.contact_email})" if settings.contact_email else ""
    return f"kb/{__version__}{contact}"


@dataclass(frozen=True)
class Upload:
    """A file sent as ``multipart/form-data`` (a PDF as GROBID's ``input``), with the form's other fields."""

    field: str
    filename: str
    data: bytes
    kind: str = "application/pdf"
    form: tuple[tuple[str, str], ...] = ()

    def encoded(self) -> tuple[bytes, str]:
        """The request body and its ``Content-Type`` (RFC 7578; the boundary is random, never in the file)."""
        boundary = uuid.uuid4().hex
        while boundary.encode() in self.data:
            boundary = uuid.uuid4().hex
        parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
                 for name, value in self.form]
        name = self.filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{self.field}"; filename="{name}"'
                     f"\r\nContent-Type: {self.kind}\r\n\r\n".encode() + self.data + b"\r\n")
        return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"

    def digest(self) -> str:
        """What the answer depends on besides the URL: the file's bytes and the form's fields."""
        return hashlib.sha256(self.data + repr(self.form).encode()).hexdigest()


def _cache_file(settings: Settings, key: str) -> Path:
    return settings.home / "cache" / "lookups" / f"{hashlib.sha256(key.encode()).hexdigest()[:40]}.body"


def _retry_after(value: str | None, default: float = 1.0) -> float:
    """Seconds a 'Retry-After' header asks to wait (a number of seconds or an HTTP date); ``default`` when
    absent."""
    if not value:
        return default
    if value.strip().isdigit():
        return float(value.strip())
    with contextlib.suppress(TypeError, ValueError):
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    return default


def _read(response: Any, max_bytes: int | None, service: str, url: str) -> bytes:
    """The body of ``response``; more than ``max_bytes`` is refused without reading the rest."""
    if max_bytes is None:
        return bytes(response.read())
    chunks, size = [], 0
    while chunk := response.read(min(65536, max_bytes + 1 - size)):
        chunks.append(bytes(chunk))
        size += len(chunk)
        if size > max_bytes:
            raise AddError(f"{service} answered more than {max_bytes / 1e6:g} MB ({url}), more than any "
                           "answer of it should hold; kb read no further")
    return b"".join(chunks)


def fetch(url: str, service: str, settings: Settings, accept: str, *, upload: Upload | None = None,
          hint: str = OFFLINE_HINT, max_bytes: int | None = None, busy_wait: float = 1.0,
          check: Callable[[bytes], object] | None = None) -> bytes:
    """The body at ``url`` (GET, or a POST of ``upload``), from the cache when asked before; ``AddError``
    naming the service and, after ``hint``, what to do when it cannot be had. ``busy_wait``: the wait after a
    429/503 without 'Retry-After'; ``check``: raises ``AddError`` on an answer not to be kept (not cached)."""
    cached = _cache_file(settings, url if upload is None else f"{url}\n{upload.digest()}")
    with contextlib.suppress(OSError):
        return cached.read_bytes()
    headers = {"Accept": accept, "User-Agent": user_agent(settings)}
    data = None
    if upload is not None:
        data, headers["Content-Type"] = upload.encoded()
    # The endpoints are settings of the person running kb (https by default), never a note's.
    request = urllib.request.Request(url, data=data, headers=headers)  # noqa: S310
    for attempt in range(2):
        try:
            with urllib.request.urlopen(request, timeout=settings.lookup_timeout) as response:  # noqa: S310
                body = _read(response, max_bytes, service, url)
            break
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                what = "has no such service" if upload is not None else "does not know this paper"
                then = "check its address" if upload is not None else "check the id"
                raise AddError(f"{service} {what} (HTTP 404 from {url}); {then}") from None
            if exc.code in (429, 503):
                wait = _retry_after(exc.headers.get("Retry-After"), busy_wait)
                if attempt == 0 and wait <= settings.lookup_max_wait:
                    time.sleep(wait)  # the service said when it would answer again; ask once more then
                    continue
                raise AddError(
                    f"{service} asks kb to slow down (HTTP {exc.code}, retry after {wait:g} s): try "
                    f"again later, or {hint}"
                ) from None
            raise AddError(
                f"{service} answered HTTP {exc.code} ({url}): try again later, or {hint}"
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise LookupUnreachable(f"{service} is unreachable ({reason}): {hint}") from None
    if check is not None:
        check(body)
    with contextlib.suppress(OSError):  # a cache that cannot be written costs a second request later, no more
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.part")
        partial.write_bytes(body)
        os.replace(partial, cached)
    return body
