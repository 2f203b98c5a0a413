"""Full-text search over indexed papers.

:class:`SqliteFtsSearch` keeps an FTS5 table (``paper_fts``) beside the paper rows and ranks with bm25 (title
weighted highest). Chinese, Japanese and Korean text has no spaces between words, so a word tokenizer makes
each run of CJK characters one token and finds almost no words inside it: a second table (``paper_fts_cjk``)
holds the same text with every CJK run written as its overlapping character bigrams ("梯度消失" ->
"梯度 度消 消失"). Any CJK substring of two or more characters is then a phrase of consecutive bigrams,
found through the index and ranked with bm25 like English words; queries without CJK characters use
``paper_fts`` as before. :class:`LikeSearch` is the fallback for other databases: it scans the paper and
claim tables with case-insensitive LIKE. User queries are never passed to FTS5 as syntax: each term is
quoted, and the last term is a prefix match. A query kb cannot search (not valid Unicode text, more than
``MAX_QUERY_TERMS`` words) is a ``QueryError``; a full-text table that cannot be read (dropped, corrupted) is
a ``SearchIndexDamaged``: one line each, saying what to do.

A note's source text (its ``source_file``: an abstract, or a PDF's full text with pages separated by form
feeds) is searched too, one row per page in ``paper_fts_source`` (and its bigram twin
``paper_fts_source_cjk``), so each hit in it carries its page. Notes matching in their own text rank first;
notes found only through their source text follow, best page first. PostgreSQL keeps the same pages in a table
with a word index and answers in the same shape (``kb.index.search_postgres``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DatabaseError

from kb.notes.files import CJK_CLASS
from kb.notes.grounding import PAGE_BREAK  # between the pages of a source text

FTS_TABLE = "paper_fts"
_CREATE_FTS = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
    "paper_id UNINDEXED, title, tags, body, claims, tokenize='unicode61 remove_diacritics 2')"
)
# bm25 weights per column: paper_id, title, tags, body, claims
_BM25 = f"bm25({FTS_TABLE}, 0.0, 10.0, 4.0, 1.0, 2.0)"
_TERM = re.compile(r"\S+")
CJK_TABLE = "paper_fts_cjk"
_CREATE_CJK = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {CJK_TABLE} USING fts5("
    "paper_id UNINDEXED, title, tags, body, claims, tokenize='unicode61 remove_diacritics 2')"
)
_BM25_CJK = f"bm25({CJK_TABLE}, 0.0, 10.0, 4.0, 1.0, 2.0)"
_CJK = re.compile(f"[{CJK_CLASS}]+")
# SQLite refuses an expression more than 1,000 levels deep, and every term is one more condition; a search is
# a few words, so a pasted page is refused with a message instead of failing inside SQLite.
MAX_QUERY_TERMS = 100


class QueryError(ValueError):
    """A search query kb cannot run; the message says what to change."""


SOURCE_TABLE = "paper_fts_source"  # one row per page of a note's source text
SOURCE_CJK_TABLE = "paper_fts_source_cjk"
_CREATE_SOURCE = (f"CREATE VIRTUAL TABLE IF NOT EXISTS {SOURCE_TABLE} USING fts5("
                  "paper_id UNINDEXED, page UNINDEXED, text, tokenize='unicode61 remove_diacritics 2')")
_CREATE_SOURCE_CJK = (f"CREATE VIRTUAL TABLE IF NOT EXISTS {SOURCE_CJK_TABLE} USING fts5("
                      "paper_id UNINDEXED, page UNINDEXED, text, tokenize='unicode61 remove_diacritics 2')")


class SearchIndexDamaged(Exception):
    """The full-text tables cannot be read or written (dropped, corrupted): the index must be rebuilt."""

    def __init__(self, error: Exception | str) -> None:
        reason = str(getattr(error, "orig", error)).splitlines()[0] if str(error) else "missing"
        super().__init__(
            f"the search index is damaged: run `kb index --rebuild` (it re-creates the index from "
            f"the notes; nothing is lost); its full-text tables: {reason}"
        )


def check_query(query: str) -> None:
    """Raise ``QueryError`` for a query kb cannot search: text that is not valid Unicode (bytes that are not
    UTF-8 on the command line) or more than ``MAX_QUERY_TERMS`` words."""
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:
        raise QueryError("the search query is not valid UTF-8 text (it holds bytes no character stands for): "
                         "type it again in a UTF-8 terminal") from None
    terms = len(query_terms(query))
    if terms > MAX_QUERY_TERMS:
        raise QueryError(f"the search query has {terms:,} words; kb searches with at most {MAX_QUERY_TERMS}: "
                         "use the few words that matter")


def _fts_damage(exc: DatabaseError) -> bool:
    """Whether a database error means the full-text tables are damaged (not, say, a locked database)."""
    message = str(getattr(exc, "orig", exc)).lower()
    # "invalid fts5 file format", "vtable constructor failed": FTS5's own words for a damaged shadow table.
    return any(word in message for word in (FTS_TABLE, "fts5", "vtable", "malformed", "corrupt"))


def fts_damage(conn: Connection) -> str | None:
    """What is wrong with the full-text tables of an index that holds papers (missing, failing FTS5's own
    integrity check), or None: SQLite's ``PRAGMA integrity_check`` does not look inside FTS5 tables."""
    if not _table_exists(conn, "paper") or not conn.exec_driver_sql("SELECT count(*) FROM paper").scalar():
        return None
    for table in (FTS_TABLE, CJK_TABLE, SOURCE_TABLE, SOURCE_CJK_TABLE):
        if not _table_exists(conn, table):
            return f"the full-text table {table} is missing"
        try:
            conn.exec_driver_sql(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
        except DatabaseError as exc:
            if not _fts_damage(exc) and "integrity" not in str(exc).lower():
                raise
            return (
                f"the full-text table {table} is damaged ({str(getattr(exc, 'orig', exc)).splitlines()[0]})"
            )
    return None


def has_cjk(text: str) -> bool:
    """Whether ``text`` contains a Chinese, Japanese or Korean character."""
    return _CJK.search(text) is not None


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) < 2 else [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_tokens(text: str) -> str:
    """Text for the CJK table: each CJK run as its overlapping bigrams, then its last character alone (so
    that a one-character query, a prefix search, also finds a run's last character)."""
    return _CJK.sub(lambda m: " " + " ".join(_bigrams(m.group(0))) + f" {m.group(0)[-1]} ", text)


def cjk_query(query: str) -> str | None:
    """A safe FTS5 MATCH for the CJK table that every note containing the query's CJK text satisfies.

    A CJK run of two or more characters is the phrase of its bigrams; a single character is a prefix
    match. Other text in the query is left to the exact substring check that follows (``_contains``).
    """
    parts: list[str] = []
    for term in query_terms(query):
        for run in _CJK.findall(term):
            if len(run) == 1:
                parts.append(f'"{run}"*')
            else:
                parts.append('"' + " ".join(_bigrams(run)) + '"')
    return " ".join(parts) or None


def _contains(texts: Sequence[str], terms: Sequence[str]) -> bool:
    """Whether every term is a substring of one of the texts (case-insensitive, whitespace collapsed)."""
    flat = " ".join(" ".join(t.split()) for t in texts).lower()
    return all(term in flat for term in terms)


@dataclass(frozen=True)
class SearchHit:
    """One search result: higher score is better."""

    paper_id: str
    score: float
    snippet: str
    page: int | None = None  # the source text's page the hit is on (1-based); None for a hit in the note


@dataclass(frozen=True)
class SearchDoc:
    """The searchable text of one paper."""

    paper_id: str
    title: str
    tags: str
    body: str
    claims_text: str
    source: str = ""  # the note's source text, pages separated by PAGE_BREAK (capped as the index reads it)


class SearchBackend(Protocol):
    """Keeps a search index of papers and answers queries."""

    def create(self, engine: Engine) -> None: ...

    def index_many(self, conn: Connection, docs: Sequence[SearchDoc]) -> None: ...

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
            if (
                not _table_exists(conn, FTS_TABLE)
                and conn.exec_driver_sql("SELECT count(*) FROM paper").scalar()
            ):
                # The word table went while papers are indexed: an empty new one would silently find nothing.
                # Left missing, every search says the index is damaged; `kb index --rebuild` re-creates it.
                return
            conn.exec_driver_sql(_CREATE_FTS)
            conn.exec_driver_sql(_CREATE_SOURCE)
            conn.exec_driver_sql(_CREATE_SOURCE_CJK)
            new_cjk = not _table_exists(conn, CJK_TABLE)
            conn.exec_driver_sql(_CREATE_CJK)
            if new_cjk:  # an index made before the CJK table existed: fill it from the word table once
                rows = [
                    (
                        rowid,
                        pid,
                        cjk_tokens(t or ""),
                        cjk_tokens(g or ""),
                        cjk_tokens(b or ""),
                        cjk_tokens(c or ""),
                    )
                    for rowid, pid, t, g, b, c in conn.exec_driver_sql(
                        f"SELECT rowid, paper_id, title, tags, body, claims FROM {FTS_TABLE}"
                    )
                ]
                if rows:
                    conn.exec_driver_sql(
                        f"INSERT INTO {CJK_TABLE} (rowid, paper_id, title, tags, body, claims) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        rows,
                    )

    def index_many(self, conn: Connection, docs: Sequence[SearchDoc]) -> None:
        if not docs:
            return
        try:
            self._index_many(conn, docs)
        except DatabaseError as exc:
            if _fts_damage(exc):
                raise SearchIndexDamaged(exc) from None
            raise

    def _index_many(self, conn: Connection, docs: Sequence[SearchDoc]) -> None:
        self.remove_many(conn, [d.paper_id for d in docs])
        # A paper has the same rowid in both tables, so a CJK hit reads its text from the word table by rowid.
        base = int(conn.exec_driver_sql(f"SELECT coalesce(max(rowid), 0) FROM {FTS_TABLE}").scalar() or 0)
        conn.exec_driver_sql(
            f"INSERT INTO {FTS_TABLE} (rowid, paper_id, title, tags, body, claims) VALUES (?, ?, ?, ?, ?, ?)",
            [(base + i, d.paper_id, d.title, d.tags, d.body, d.claims_text) for i, d in enumerate(docs, 1)],
        )
        conn.exec_driver_sql(
            f"INSERT INTO {CJK_TABLE} (rowid, paper_id, title, tags, body, claims) VALUES (?, ?, ?, ?, ?, ?)",
            [(base + i, d.paper_id, cjk_tokens(d.title), cjk_tokens(d.tags), cjk_tokens(d.body),
              cjk_tokens(d.claims_text)) for i, d in enumerate(docs, 1)],
        )
        pages = [(d.paper_id, number, page) for d in docs if d.source.strip()
                 for number, page in enumerate(d.source.split(PAGE_BREAK), 1) if page.strip()]
        if pages:
            conn.exec_driver_sql(f"INSERT INTO {SOURCE_TABLE} (paper_id, page, text) VALUES (?, ?, ?)", pages)
            cjk_pages = [(pid, number, cjk_tokens(page)) for pid, number, page in pages if has_cjk(page)]
            if cjk_pages:
                conn.exec_driver_sql(
                    f"INSERT INTO {SOURCE_CJK_TABLE} (paper_id, page, text) VALUES (?, ?, ?)", cjk_pages
                )

    def remove_many(self, conn: Connection, paper_ids: Iterable[str]) -> None:
        wanted = set(paper_ids)
        if not wanted:
            return
        # paper_id is UNINDEXED: find the rowids in one pass, then delete by rowid (fast).
        try:
            for table in (FTS_TABLE, CJK_TABLE, SOURCE_TABLE, SOURCE_CJK_TABLE):
                rowids = [
                    (int(rowid),)
                    for rowid, pid in conn.exec_driver_sql(f"SELECT rowid, paper_id FROM {table}")
                    if pid in wanted
                ]
                if rowids:
                    conn.exec_driver_sql(f"DELETE FROM {table} WHERE rowid = ?", rowids)
        except DatabaseError as exc:
            if _fts_damage(exc):
                raise SearchIndexDamaged(exc) from None
            raise

    def search(self, query: str, limit: int = 20, *, snippets: bool = True) -> list[SearchHit]:
        check_query(query)
        try:
            return self._search(query, limit, snippets=snippets)
        except DatabaseError as exc:
            if _fts_damage(exc):
                raise SearchIndexDamaged(exc) from None
            raise

    def _search(self, query: str, limit: int, *, snippets: bool) -> list[SearchHit]:
        if has_cjk(query):
            hits = self._search_cjk(query, limit, snippets=snippets)
        elif any(not term.isalnum() for term in query_terms(query)):
            # 'ESM-2', 'p<0.05', '：P': the word index splits these at the punctuation and would match the
            # parts anywhere; match the text as typed instead.
            hits = self._substring_hits(query, limit, set(), snippets=snippets)
        else:
            hits = self._search_words(query, limit, snippets=snippets)
            if len(hits) < limit:
                hits += self._substring_hits(
                    query, limit - len(hits), {h.paper_id for h in hits}, snippets=snippets
                )
        if len(hits) < limit:
            hits += self._search_sources(
                query, limit - len(hits), {h.paper_id for h in hits}, snippets=snippets
            )
        return hits

    def _search_sources(
        self, query: str, limit: int, exclude: set[str], *, snippets: bool
    ) -> list[SearchHit]:
        """Notes whose source text holds the query, each at its best page (bm25), after the notes' own hits.

        Words go through the page index; CJK text through the bigram pages, then checked as substrings; a
        term with punctuation ('ESM-2') as a substring of the pages the index finds for its words."""
        terms = [" ".join(t.split()).lower() for t in query_terms(query)]
        cjk = has_cjk(query)
        match = cjk_query(query) if cjk else fts_query(" ".join(re.sub(r"[^\w\s]", " ", t) for t in terms))
        if match is None or limit <= 0:
            return []
        table = SOURCE_CJK_TABLE if cjk else SOURCE_TABLE
        sql = text(f"SELECT rowid, paper_id, page, bm25({table}) AS rank FROM {table} WHERE {table} MATCH :q "
                   "ORDER BY rank LIMIT :limit")
        exact = cjk or any(not t.replace(" ", "").isalnum() for t in terms)
        best: dict[str, SearchHit] = {}
        with self.engine.connect() as conn:
            if not _table_exists(conn, SOURCE_TABLE):
                return []  # an index made before source texts were searched: `kb index` fills it
            rows = conn.execute(sql, {"q": match, "limit": (limit + len(exclude)) * 20}).all()
            for _rowid, pid, page, rank in rows:
                if pid in exclude or pid in best:
                    continue
                page_text = ""
                if snippets or exact:
                    page_text = (
                        conn.exec_driver_sql(
                            f"SELECT text FROM {SOURCE_TABLE} WHERE paper_id = ? AND page = ?", (pid, page)
                        ).scalar()
                        or ""
                    )
                if exact and not _contains((page_text,), terms):
                    continue
                snippet = ""
                if snippets:
                    snippet = (substring_snippet((page_text,), terms) if exact
                               else make_snippet((page_text,), [re.sub(r"\W", "", t) for t in terms]))
                best[pid] = SearchHit(pid, -1e9 - float(rank), snippet, page=int(page))
                if len(best) == limit:
                    break
        return list(best.values())

    def _search_words(self, query: str, limit: int, *, snippets: bool) -> list[SearchHit]:
        """The word index, ranked with bm25 (title first); the last term matches as a prefix."""
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

    def _substring_hits(
        self, query: str, limit: int, exclude: set[str], *, snippets: bool
    ) -> list[SearchHit]:
        """Notes that contain every query term inside a word ('SM' in 'ESM2'), which the word index cannot
        see; ranked after the word hits. A scan, so it runs only when the word index found fewer than
        asked."""
        terms = [t.lower() for t in query_terms(query)]
        if not terms or limit <= 0:
            return []
        where = " AND ".join(f"instr(lower(title || ' ' || tags || ' ' || body || ' ' || claims), :t{i}) > 0"
                             for i in range(len(terms)))
        sql = text(f"SELECT paper_id, title, body, claims FROM {FTS_TABLE} WHERE {where} LIMIT :limit")
        with self.engine.connect() as conn:
            rows = conn.execute(sql, {**{f"t{i}": t for i, t in enumerate(terms)},
                                      "limit": limit + len(exclude)}).all()
        return [
            SearchHit(pid, -1e9, substring_snippet((b or "", c or "", t or ""), terms) if snippets else "")
            for pid, t, b, c in rows
            if pid not in exclude
        ][:limit]

    def _search_cjk(self, query: str, limit: int, *, snippets: bool) -> list[SearchHit]:
        """Candidates from the bigram index (ranked by bm25), kept when they contain every query term."""
        match = cjk_query(query)
        terms = [" ".join(t.split()).lower() for t in query_terms(query)]
        if match is None or limit <= 0:
            return []
        sql = text(f"SELECT rowid, paper_id, {_BM25_CJK} AS rank FROM {CJK_TABLE} WHERE {CJK_TABLE} MATCH :q "
                   "ORDER BY rank LIMIT :limit OFFSET :offset")
        hits: list[SearchHit] = []
        batch, offset = max(limit * 4, 50), 0
        with self.engine.connect() as conn:
            while len(hits) < limit:
                rows = conn.execute(sql, {"q": match, "limit": batch, "offset": offset}).all()
                if not rows:
                    break
                offset += len(rows)
                texts = self._texts(conn, [int(rowid) for rowid, _, _ in rows])
                for rowid, pid, rank in rows:
                    body, claims, title, tags = texts.get(int(rowid), ("", "", "", ""))
                    if _contains((title, tags, body, claims), terms):
                        snippet = substring_snippet((body, claims, title), terms) if snippets else ""
                        hits.append(SearchHit(pid, -float(rank), snippet))
                        if len(hits) == limit:
                            break
        return hits

    @staticmethod
    def _texts(conn: Connection, rowids: Sequence[int]) -> dict[int, tuple[str, str, str, str]]:
        """(body, claims, title, tags) by rowid, from the word table's stored text."""
        listed = ",".join(str(int(r)) for r in rowids)
        rows = conn.exec_driver_sql(
            f"SELECT rowid, body, claims, title, tags FROM {FTS_TABLE} WHERE rowid IN ({listed})")
        return {int(r): (b or "", c or "", t or "", g or "") for r, b, c, t, g in rows}


def _table_exists(conn: Connection, name: str) -> bool:
    return bool(conn.exec_driver_sql("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
                                     (name,)).scalar())


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


def substring_snippet(texts: Sequence[str], terms: Sequence[str], width: int = 60) -> str:
    """About ``width`` characters around the first term found as a substring, hits wrapped in [brackets].

    For text without spaces between words (Chinese), where ``make_snippet``'s word window does not apply.
    """
    for source in texts:
        flat = " ".join(source.split())
        lower = flat.lower()
        found = [(lower.find(t), t) for t in terms if t and lower.find(t) >= 0]
        if not found:
            continue
        pos, term = min(found)
        start = max(0, pos - width // 3)
        end = min(len(flat), start + width)
        window = flat[start:pos] + "[" + flat[pos : pos + len(term)] + "]" + flat[pos + len(term) : end]
        return ("…" if start > 0 else "") + window + ("…" if end < len(flat) else "")
    first = next((t for t in texts if t.strip()), "")
    return " ".join(first.split())[:width]


class LikeSearch:
    """Fallback for databases without FTS5: case-insensitive LIKE over the paper and claim tables."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(self, engine: Engine) -> None:
        return None

    def index_many(self, conn: Connection, docs: Sequence[SearchDoc]) -> None:
        return None

    def remove_many(self, conn: Connection, paper_ids: Iterable[str]) -> None:
        return None

    def search(self, query: str, limit: int = 20, *, snippets: bool = True) -> list[SearchHit]:
        from sqlmodel import Session, col, select

        from kb.index.database import ClaimRow, Paper

        check_query(query)
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
