"""Full-text search over indexed papers.

:class:`SqliteFtsSearch` keeps an FTS5 table (``paper_fts``) beside the paper rows and ranks with
bm25 (title weighted highest). :class:`LikeSearch` is the fallback for other databases: it scans the
paper and claim tables with case-insensitive LIKE. User queries are never passed to FTS5 as syntax:
each term is quoted, and the last term is a prefix match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Connection, Engine, text

FTS_TABLE = "paper_fts"
_CREATE_FTS = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
    "paper_id UNINDEXED, title, tags, body, claims, tokenize='unicode61 remove_diacritics 2')"
)
# bm25 weights per column: paper_id, title, tags, body, claims
_BM25 = f"bm25({FTS_TABLE}, 0.0, 10.0, 4.0, 1.0, 2.0)"
_TERM = re.compile(r"\S+")


@dataclass(frozen=True)
class SearchHit:
    """One search result: higher score is better."""

    paper_id: str
    score: float
    snippet: str


@dataclass(frozen=True)
class SearchDoc:
    """The searchable text of one paper."""

    paper_id: str
    title: str
    tags: str
    body: str
    claims_text: str


class SearchBackend(Protocol):
    """Keeps a search index of papers and answers queries."""

    def create(self, engine: Engine) -> None: ...

    def index_paper(
        self, conn: Connection, paper_id: str, title: str, tags: str, body: str, claims_text: str
    ) -> None: ...

    def index_many(self, conn: Connection, docs: Sequence[SearchDoc]) -> None: ...

    def remove(self, conn: Connection, paper_id: str) -> None: ...

    def remove_many(self, conn: Connection, paper_ids: Iterable[str]) -> None: ...

    def search(self, query: str, limit: int = 20, *, snippets: bool = True) -> list[SearchHit]: ...


def query_terms(query: str) -> list[str]:
    """Split a user query into terms that contain at least one letter or digit."""
    return [t for t in _TERM.findall(query) if any(ch.isalnum() for ch in t)]


def fts_query(query: str) -> str | None:
    """Turn free text into a safe FTS5 MATCH expression (None when nothing is searchable)."""
    terms = query_terms(query)
    if not terms:
        return None
    quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
    quoted[-1] += "*"
    return " ".join(quoted)


class SqliteFtsSearch:
    """FTS5-backed search (SQLite only)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(self, engine: Engine) -> None:
        with engine.begin() as conn:
            conn.exec_driver_sql(_CREATE_FTS)

    def index_paper(self, conn: Connection, paper_id: str, title: str, tags: str, body: str, claims_text: str) -> None:
        self.index_many(conn, [SearchDoc(paper_id, title, tags, body, claims_text)])

    def index_many(self, conn: Connection, docs: Sequence[SearchDoc]) -> None:
        if not docs:
            return
        self.remove_many(conn, [d.paper_id for d in docs])
        conn.exec_driver_sql(
            f"INSERT INTO {FTS_TABLE} (paper_id, title, tags, body, claims) VALUES (?, ?, ?, ?, ?)",
            [(d.paper_id, d.title, d.tags, d.body, d.claims_text) for d in docs],
        )

    def remove(self, conn: Connection, paper_id: str) -> None:
        self.remove_many(conn, [paper_id])

    def remove_many(self, conn: Connection, paper_ids: Iterable[str]) -> None:
        wanted = set(paper_ids)
        if not wanted:
            return
        # paper_id is UNINDEXED: find the rowids in one pass, then delete by rowid (fast).
        rowids = [
            (int(rowid),)
            for rowid, pid in conn.exec_driver_sql(f"SELECT rowid, paper_id FROM {FTS_TABLE}")
            if pid in wanted
        ]
        if rowids:
            conn.exec_driver_sql(f"DELETE FROM {FTS_TABLE} WHERE rowid = ?", rowids)

    def search(self, query: str, limit: int = 20, *, snippets: bool = True) -> list[SearchHit]:
        match = fts_query(query)
        if match is None or limit <= 0:
            return []
        # Rank first (cheap), then build snippets for the top hits only: FTS5's snippet() would be
        # evaluated for every matching row before the sort.
        sql = text(
            f"SELECT rowid, paper_id, {_BM25} AS rank FROM {FTS_TABLE} "
            f"WHERE {FTS_TABLE} MATCH :q ORDER BY rank LIMIT :limit"
        )
        terms = [re.sub(r"\W", "", t).lower() for t in query_terms(query)]
        terms = [t for t in terms if t]
        with self.engine.connect() as conn:
            rows = conn.execute(sql, {"q": match, "limit": limit}).all()
            if not rows or not snippets:  # the Library filters by the ids alone: no texts to read
                return [SearchHit(paper_id, -float(rank), "") for _, paper_id, rank in rows]
            rowids = ",".join(str(int(r[0])) for r in rows)
            texts = {
                int(r[0]): (r[1] or "", r[2] or "", r[3] or "")
                for r in conn.exec_driver_sql(
                    f"SELECT rowid, title, body, claims FROM {FTS_TABLE} WHERE rowid IN ({rowids})"
                )
            }
        hits = []
        for rowid, paper_id, rank in rows:
            title, body, claims = texts.get(int(rowid), ("", "", ""))
            hits.append(SearchHit(paper_id, -float(rank), make_snippet((body, claims, title), terms)))
        return hits


def make_snippet(texts: Sequence[str], terms: Sequence[str], words: int = 14) -> str:
    """A window of about ``words`` words around the first term hit, hits wrapped in [brackets]."""
    if not terms:
        return ""
    for source in texts:
        tokens = source.split()
        for i, token in enumerate(tokens):
            low = token.lower()
            if any(t in low for t in terms):
                start = max(0, i - words // 3)
                window = tokens[start : start + words]
                out = [f"[{w}]" if any(t in w.lower() for t in terms) else w for w in window]
                prefix = "…" if start > 0 else ""
                suffix = "…" if start + words < len(tokens) else ""
                return prefix + " ".join(out) + suffix
    first = next((t for t in texts if t.strip()), "")
    return " ".join(first.split()[:words])


class LikeSearch:
    """Fallback for databases without FTS5: case-insensitive LIKE over the paper and claim tables."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(self, engine: Engine) -> None:
        return None

    def index_paper(self, conn: Connection, paper_id: str, title: str, tags: str, body: str, claims_text: str) -> None:
        return None

    def index_many(self, conn: Connection, docs: Sequence[SearchDoc]) -> None:
        return None

    def remove(self, conn: Connection, paper_id: str) -> None:
        return None

    def remove_many(self, conn: Connection, paper_ids: Iterable[str]) -> None:
        return None

    def search(self, query: str, limit: int = 20, *, snippets: bool = True) -> list[SearchHit]:
        from sqlmodel import Session, col, select

        from kb.db import ClaimRow, Paper

        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        with Session(self.engine) as session:
            stmt = select(Paper)
            for term in terms:
                pattern = "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                claim_match = (
                    select(ClaimRow.key)
                    .where(ClaimRow.paper_id == Paper.id)
                    .where(col(ClaimRow.statement).ilike(pattern, escape="\\"))
                    .exists()
                )
                stmt = stmt.where(
                    col(Paper.title).ilike(pattern, escape="\\")
                    | col(Paper.tags_text).ilike(pattern, escape="\\")
                    | col(Paper.body).ilike(pattern, escape="\\")
                    | claim_match
                )
            papers = session.exec(stmt.limit(max(limit * 5, limit))).all()
            hits = []
            lowered = [t.lower() for t in terms]
            for p in papers:
                title = p.title.lower()
                score = sum(3.0 if t in title else 0.0 for t in lowered)
                score += sum(1.0 if t in p.tags_text.lower() else 0.0 for t in lowered)
                score += sum(p.body.lower().count(t) * 0.01 for t in lowered)
                snippet = _like_snippet(p.body, lowered) if snippets else ""
                hits.append(SearchHit(paper_id=p.id, score=score, snippet=snippet))
        hits.sort(key=lambda h: (-h.score, h.paper_id))
        return hits[:limit]


def _like_snippet(body: str, terms: list[str], width: int = 80) -> str:
    lower = body.lower()
    for t in terms:
        pos = lower.find(t)
        if pos >= 0:
            start = max(0, pos - width // 2)
            return body[start : start + width].replace("\n", " ")
    return body[:width].replace("\n", " ")


def search_backend_for(engine: Engine) -> SearchBackend:
    """FTS5 on SQLite, LIKE elsewhere."""
    if engine.dialect.name == "sqlite":
        return SqliteFtsSearch(engine)
    return LikeSearch(engine)
