"""Check and repair a PostgreSQL store (:mod:`citewise.store.postgres`).

The server keeps its own files whole (write-ahead log, crash recovery); what can go wrong that
a user can repair is the store's *derived* state, and the reading of damaged pages:

**Check** (:func:`check`):

* every table of the store exists and each of its rows reads (a sequential scan of each table;
  a damaged page fails it with the server's ``data_corrupted`` error);
* every index of the store is valid (``pg_index.indisvalid``: a failed ``CREATE INDEX
  CONCURRENTLY`` or an interrupted ``REINDEX`` leaves one that is not) and reads (a query forced
  onto it: ``enable_seqscan`` off);
* the BM25 statistics equal what the chunks imply: each chunk's postings sum to its token count
  (``doc_len``), each term's ``df`` is its number of postings, ``corpus_stats`` holds the chunk
  count and total length;
* the row-level security policies that filter reads by group exist on every table that holds
  document text (``chunks``, ``postings`` and the derived tables of
  :mod:`citewise.store.pg_derived`);
* the recorded vector dimension is the index's.

**Repair** (:func:`repair`): the postings, term statistics and corpus statistics are rebuilt from
the chunks' ``lexical`` text in one transaction (the rows are the source of truth; nothing is
lost), every index of the store is rebuilt (``REINDEX TABLE``), and the tables, indexes and
policies of the store's definition are created where missing.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from citewise.store.faults import one_line
from citewise.store.integrity import Finding, RepairResult

if TYPE_CHECKING:  # type-only: the store package is imported when a check opens one
    from citewise.store.postgres import PostgresStore
    from citewise.store.postgres.host import PgConnection

#: Tables whose rows carry document text (each needs its group policy), by policy name.
POLICIES = {"chunks": "by_groups", "postings": "by_chunk"}


def _open(url: str, dim: int) -> PostgresStore:
    from citewise.store.postgres import PostgresStore

    return PostgresStore(url, dim, pool_size=1)


def check(url: str, dim: int) -> list[Finding]:
    """Findings for the store at ``url`` (module docstring); empty = everything reads.

    Raises:
        CitewiseError: the server cannot be reached.
    """
    psycopg = __import__("psycopg")
    store = _open(url, dim)
    s = store.schema
    out: list[Finding] = []
    try:
        with store._connection() as conn:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY 1", (s,)
                ).fetchall()
            ]
            for t in tables:
                try:
                    conn.execute(f"SELECT count(*) FROM (SELECT * FROM {s}.{t}) x").fetchone()
                except psycopg.Error as e:
                    out.append(Finding(f"table {t}", f"{s}.{t}", f"cannot be read ({one_line(e)})"))
            for name, table, valid in conn.execute(
                "SELECT i.relname, t.relname, x.indisvalid FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
                "JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace "
                "WHERE n.nspname = %s ORDER BY 1",
                (s,),
            ).fetchall():
                if not valid:
                    out.append(
                        Finding(f"index {name}", f"{s}.{name}", "not valid (an interrupted build)", derived=True)
                    )
                    continue
                problem = _probe_index(conn, s, name, table)
                if problem:
                    out.append(Finding(f"index {name}", f"{s}.{name}", problem, derived=True))
            have = {
                (r[0], r[1])
                for r in conn.execute(
                    "SELECT tablename, policyname FROM pg_policies WHERE schemaname = %s", (s,)
                ).fetchall()
            }
            from citewise.store.pg_derived import DERIVED_POLICIES

            for table, policy in {**POLICIES, **DERIVED_POLICIES}.items():
                if table in tables and (table, policy) not in have:
                    out.append(
                        Finding(
                            f"permissions of {table}",
                            f"{s}.{table}",
                            f"row-level security policy {policy} is missing",
                            derived=True,
                        )
                    )
            rec = conn.execute(f"SELECT value FROM {s}.meta WHERE key = 'dim'").fetchone()
            if rec and int(rec[0]) != dim:
                out.append(Finding("settings", f"{s}.meta", f"records dimension {rec[0]}, the index {dim}"))
            if not any(f.part.startswith("table ") for f in out):
                out += _check_statistics(conn, s)
    finally:
        store.close()
    return out


def _probe_index(conn: PgConnection, s: str, name: str, table: str) -> str:
    """'' when a query forced onto index ``name`` reads, else the error (one line)."""
    psycopg = __import__("psycopg")
    cols = conn.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_index x "
        "JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0] "
        "WHERE x.indexrelid = %s::regclass",
        (f"{s}.{name}",),
    ).fetchone()
    if cols is None:
        return ""
    col, typ = cols
    if typ.startswith("vector"):
        pred = f"ORDER BY {col} <=> (SELECT {col} FROM {s}.{table} LIMIT 1) LIMIT 1"
        sql = f"SELECT 1 FROM {s}.{table} {pred}"
    elif typ.endswith("[]"):
        sql = f"SELECT count(*) FROM {s}.{table} WHERE {col} && ARRAY['']::{typ}"
    else:
        sql = f"SELECT count(*) FROM {s}.{table} WHERE {col} IS NOT NULL"
    try:
        with conn.transaction():
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute(sql).fetchall()
    except psycopg.Error as e:
        return f"a query on it fails ({one_line(e)})"
    return ""


def _check_statistics(conn: PgConnection, s: str) -> list[Finding]:
    out: list[Finding] = []
    bad_len = conn.execute(f"""SELECT count(*) FROM {s}.chunks c LEFT JOIN
                                 (SELECT rid, sum(tf) AS n FROM {s}.postings GROUP BY rid) p ON p.rid = c.rid
                               WHERE c.doc_len <> coalesce(p.n, 0)""").fetchone()[0]
    if bad_len:
        out.append(
            Finding(
                "BM25 postings",
                f"{s}.postings",
                f"{bad_len:,} chunks' postings do not sum to their token count",
                derived=True,
            )
        )
    bad_df = conn.execute(f"""SELECT count(*) FROM {s}.term_stats t FULL JOIN
                                (SELECT term_id, count(*) AS n FROM {s}.postings GROUP BY term_id) p ON p.term_id = t.term_id
                              WHERE coalesce(t.df, 0) <> coalesce(p.n, 0)""").fetchone()[0]
    if bad_df:
        out.append(
            Finding(
                "BM25 term statistics",
                f"{s}.term_stats",
                f"{bad_df:,} terms' document frequency differs from their postings",
                derived=True,
            )
        )
    n, total = conn.execute(f"SELECT n_chunks, total_len FROM {s}.corpus_stats").fetchone()
    real = conn.execute(f"SELECT count(*), coalesce(sum(doc_len), 0) FROM {s}.chunks").fetchone()
    if (n, total) != tuple(real):
        out.append(
            Finding(
                "BM25 corpus statistics",
                f"{s}.corpus_stats",
                f"record {n:,} chunks and {total:,} tokens, the table holds {real[0]:,} and {real[1]:,}",
                derived=True,
            )
        )
    return out


def repair(url: str, dim: int) -> RepairResult:
    """Rebuild the store's derived state (module docstring). Holds the store's ingest lock."""
    from citewise.store.postgres import _copy_text_array, _ddl, bm25_terms

    result = RepairResult()
    store = _open(url, dim)
    s = store.schema
    try:
        with store.ingest_lock():
            with store._tx(snapshot=False) as cur:
                for stmt in _ddl(s, dim):
                    if "ADD CONSTRAINT" not in stmt:  # the rest is idempotent (IF NOT EXISTS, policy re-creation)
                        cur.execute(stmt)
                store._restore_postings_keys(cur)
            from citewise.store.pg_derived import ensure_tables

            with store._tx(snapshot=False) as cur:
                ensure_tables(cur, s, dim)
            result.actions.append("created the tables, indexes and row-level security policies that were missing")
            with store._tx(snapshot=False) as cur:
                cur.execute(f"DELETE FROM {s}.postings")
                cur.execute(f"DELETE FROM {s}.term_stats")
                rows = cur.execute(f"SELECT rid, lexical, groups FROM {s}.chunks ORDER BY rid").fetchall()
                df: Counter[str] = Counter()
                per_row = []
                for rid, lexical, groups in rows:
                    terms = bm25_terms(lexical or "")
                    tf = Counter(terms)
                    df.update(tf.keys())
                    per_row.append((rid, tf, len(terms), groups))
                names = sorted(df)
                ids = dict(
                    cur.execute(
                        f"""INSERT INTO {s}.term_stats (term, df)
                                           SELECT * FROM unnest(%s::text[], %s::int[]) RETURNING term, term_id""",
                        (names, [df[t] for t in names]),
                    ).fetchall()
                )
                with cur.copy(f"COPY {s}.postings (term_id, rid, tf, doc_len, groups) FROM STDIN") as copy:
                    for rid, tf, n, groups in per_row:
                        arr = _copy_text_array(groups)
                        copy.write("".join(f"{ids[t]}\t{rid}\t{c}\t{n}\t{arr}\n" for t, c in sorted(tf.items())))
                cur.executemany(
                    f"UPDATE {s}.chunks SET doc_len = %s WHERE rid = %s AND doc_len <> %s",
                    [(n, rid, n) for rid, _, n, _ in per_row],
                )
                cur.execute(
                    f"UPDATE {s}.corpus_stats SET n_chunks = %s, total_len = %s",
                    (len(per_row), sum(n for _, _, n, _ in per_row)),
                )
            result.actions.append(f"rebuilt the BM25 postings and statistics from {len(rows):,} stored chunks")
            with store._connection() as conn:
                tables = [
                    r[0]
                    for r in conn.execute(
                        "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY 1", (s,)
                    ).fetchall()
                ]
                for t in tables:
                    conn.execute(f"REINDEX TABLE {s}.{t}")
            result.actions.append(f"rebuilt every index of {len(tables)} tables")
        store.refresh_indexes()
    finally:
        store.close()
    return result
