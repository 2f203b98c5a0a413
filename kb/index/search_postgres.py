"""Search on PostgreSQL: the notes as ``LikeSearch`` finds them, then the notes' source texts, page by page.

SQLite keeps a note's source text (an abstract, or a PDF's full text with pages separated by form feeds)
in an FTS5 table, one row per page (``kb.index.search``). Here the same rows live in a plain table of the same
name, ``paper_fts_source`` (``paper_id``, ``page``, ``text``), with a GIN index over
``to_tsvector('simple', text)``: a query of words finds its pages through the index (every word, the last
one as a prefix, as on SQLite) and ranks them with ``ts_rank``; a query with punctuation ('ESM-2') or
Chinese, Japanese or Korean text, which the word parser would split differently from the text, matches
each term as a substring (ILIKE). Each note found only through its source text comes after the notes
matching in their own text, at its best page, with that page's number and a snippet, the shape SQLite gives.

The table is not a model of ``kb.index.database`` (migrations leave ``paper_fts*`` tables to the search
backends). When it
is created in a database that already holds notes, the notes with a source text are marked as having a
changed source, so the next ``kb index`` reads them again and fills it (as migration 0007 does on SQLite).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from sqlalchemy import Connection, Engine, bindparam, text

from kb.index.search import (
    SOURCE_TABLE,
    LikeSearch,
    SearchDoc,
    SearchHit,
    check_query,
    has_cjk,
    make_snippet,
    query_terms,
    substring_snippet,
)
from kb.notes.grounding import PAGE_BREAK

# The word parser of the 'simple' configuration: no stemming and no stop words, like FTS5's unicode61.
_VECTOR = "to_tsvector('simple', text)"
# A tsvector holds at most 1 MB: a source text without page breaks (a long .txt) is stored in pieces of
# this many characters, each a row of the same page.
MAX_ROW_CHARS = 100_000
_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {SOURCE_TABLE} "
    "(paper_id TEXT NOT NULL, page INTEGER NOT NULL, text TEXT NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS {SOURCE_TABLE}_paper ON {SOURCE_TABLE} (paper_id)",
    f"CREATE INDEX IF NOT EXISTS {SOURCE_TABLE}_words ON {SOURCE_TABLE} USING gin ({_VECTOR})",
)


def pieces(page: str, size: int = MAX_ROW_CHARS) -> list[str]:
    """A page cut at whitespace into pieces of at most about ``size`` characters (most pages: one piece)."""
    page = page.replace("\x00", "")  # PostgreSQL's text holds no NUL character
    out: list[str] = []
    while len(page) > size:
        cut = page.rfind(" ", size // 2, size)
        cut = size if cut < 0 else cut
        out.append(page[:cut])
        page = page[cut:]
    return [*out, page]


def word_query(terms: Sequence[str]) -> str | None:
    """A ``to_tsquery('simple', ...)`` expression: every word, the last one as a prefix (None: no word).

    Only letters, digits and underscores reach it (the rest split words, as the parser splits the text), so no
    user text is read as tsquery syntax."""
    words = [w.lower() for term in terms for w in re.findall(r"\w+", term)]
    if not words:
        return None
    quoted = [f"'{w}'" for w in words]
    quoted[-1] += ":*"
    return " & ".join(quoted)


def _like(term: str) -> str:
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class PostgresSearch(LikeSearch):
    """``LikeSearch`` over the notes, plus their source texts by page (see the module docstring)."""

    def create(self, engine: Engine) -> None:
        with engine.begin() as conn:
            new = conn.execute(text("SELECT to_regclass(:name) IS NULL"), {"name": SOURCE_TABLE}).scalar()
            for statement in _CREATE:
                conn.exec_driver_sql(statement)
            if new:  # notes indexed before it existed: -1 matches no mtime, so `kb index` re-reads them
                conn.exec_driver_sql("UPDATE paper SET source_mtime_ns = -1 WHERE source_path IS NOT NULL")

    def index_many(self, conn: Connection, docs: Sequence[SearchDoc]) -> None:
        self.remove_many(conn, [d.paper_id for d in docs])
        rows = [{"paper_id": d.paper_id, "page": number, "text": piece}
                for d in docs if d.source.strip()
                for number, page in enumerate(d.source.split(PAGE_BREAK), 1) if page.strip()
                for piece in pieces(page)]
        if rows:
            conn.execute(text(f"INSERT INTO {SOURCE_TABLE} (paper_id, page, text) "
                              "VALUES (:paper_id, :page, :text)"), rows)

    def remove_many(self, conn: Connection, paper_ids: Iterable[str]) -> None:
        wanted = sorted(set(paper_ids))
        if wanted:
            conn.execute(text(f"DELETE FROM {SOURCE_TABLE} WHERE paper_id IN :ids")
                         .bindparams(bindparam("ids", expanding=True)), {"ids": wanted})

    def search(self, query: str, limit: int = 20, *, snippets: bool = True) -> list[SearchHit]:
        hits = super().search(query, limit, snippets=snippets)
        if len(hits) < limit:
            found = {h.paper_id for h in hits}
            hits += self.search_sources(query, limit - len(hits), found, snippets=snippets)
        return hits

    def search_sources(self, query: str, limit: int, exclude: set[str], *, snippets: bool) -> list[SearchHit]:
        """Notes (not in ``exclude``) whose source text holds the query, each at its best page, best first."""
        check_query(query)
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        exact = has_cjk(query) or any(not term.isalnum() for term in terms)
        params: dict[str, object] = {"limit": limit}
        if exact:  # the text as typed: 'ESM-2', 'p<0.05', Chinese
            where = " AND ".join(f"text ILIKE :t{i} ESCAPE '\\'" for i in range(len(terms)))
            params.update({f"t{i}": _like(term) for i, term in enumerate(terms)})
            rank = "0.0"
        else:
            where = f"{_VECTOR} @@ to_tsquery('simple', :q)"
            rank = f"ts_rank({_VECTOR}, to_tsquery('simple', :q))"
            params["q"] = word_query(terms)
        if exclude:
            where += " AND paper_id NOT IN :exclude"
            params["exclude"] = sorted(exclude)
        sql = text(
            "SELECT paper_id, page, rank, text FROM ("
            f"SELECT DISTINCT ON (paper_id) paper_id, page, {rank} AS rank, text FROM {SOURCE_TABLE} "
            f"WHERE {where} ORDER BY paper_id, rank DESC, page) AS best "
            "ORDER BY rank DESC, paper_id LIMIT :limit"
        )
        if exclude:
            sql = sql.bindparams(bindparam("exclude", expanding=True))
        with self.engine.connect() as conn:
            rows = conn.execute(sql, params).all()
        lowered = [" ".join(t.split()).lower() for t in terms]
        hits = []
        for paper_id, page, score, page_text in rows:
            snippet = ""
            if snippets:
                snippet = (substring_snippet((page_text,), lowered) if exact
                           else make_snippet((page_text,), [re.sub(r"\W", "", t) for t in lowered]))
            hits.append(SearchHit(paper_id, -1e9 + float(score), snippet, page=int(page)))
        return hits
