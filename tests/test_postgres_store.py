"""What only the PostgreSQL backend has: row-level security, the advisory ingest lock, term
statistics kept in SQL, ``--store`` / ``CITEWISE_STORE`` and ``citewise index migrate``.

The backend-independent contract is in tests/test_store_conformance.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from collections import Counter

import pytest
from typer.testing import CliRunner

from citewise.cli import app
from citewise.core import CitewiseError, Filters
from citewise.index import Index, IndexBusy, strip_password
from citewise.models.embedders import HashingEmbedder
from citewise.store import migrate, postgres
from citewise.store.postgres import SEARCH_ROLE, PostgresStore, split_url

from conftest import write_doc

runner = CliRunner()


@pytest.fixture()
def corpus(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "pub.md", "Public fees", "wire transfer fee schedule for everyone")
    write_doc(root, "fin.md", "Finance fees", "wire transfer fee approvals for finance", permissions=["finance"])
    write_doc(root, "sec.md", "Security fees", "wire transfer fee keys for security", permissions=["security"])
    return root


@pytest.fixture()
def pg_index(pg_url, tmp_path, corpus):
    idx = Index.open(tmp_path / "idx", embedder="hashing", store=pg_url)
    assert idx.ingest(corpus).added == 3
    return idx


def _rows_seen(store: PostgresStore, groups_literal: str | None) -> list[str]:
    """doc ids visible to the search role in a transaction that sets ``citewise.groups`` to
    ``groups_literal`` (None: does not set it)."""
    with store._tx() as cur:
        cur.execute(f"SET LOCAL ROLE {SEARCH_ROLE}")
        if groups_literal is not None:
            cur.execute("SELECT set_config('citewise.groups', %s, true)", (groups_literal,))
        return sorted(r[0] for r in cur.execute(f"SELECT DISTINCT doc_id FROM {store.schema}.chunks"))


def test_row_level_security_fails_closed_and_follows_the_groups(pg_index):
    store = pg_index.store
    assert _rows_seen(store, None) == []  # groups never set: nothing
    assert _rows_seen(store, "") == []
    assert _rows_seen(store, "{}") == []
    assert _rows_seen(store, "{finance}") == ["fin"]
    assert _rows_seen(store, "{public,security}") == ["pub", "sec"]
    # the setting is local: the next transaction starts with nothing again
    assert _rows_seen(store, None) == []
    with store._tx() as cur:  # the postings of rows the role cannot see are hidden too
        cur.execute(f"SET LOCAL ROLE {SEARCH_ROLE}")
        cur.execute("SELECT set_config('citewise.groups', '{public}', true)")
        assert {
            r[0]
            for r in cur.execute(
                f"SELECT DISTINCT c.chunk_id FROM {store.schema}.postings p "
                f"JOIN {store.schema}.chunks c ON c.rid = p.rid"
            )
        } == {c for c, _, _ in store.chunk_versions()["pub"]}


def test_row_level_security_holds_when_the_where_clause_forgets_the_groups(pg_index, monkeypatch):
    real = postgres.filter_sql

    def forgetful(filters, alias="c"):
        if filters is not None and filters.groups is not None:
            filters = Filters(doc_ids=filters.doc_ids, as_of=filters.as_of, version=filters.version)
        return real(filters, alias)

    monkeypatch.setattr(postgres.search, "filter_sql", forgetful)
    store = pg_index.store
    emb = HashingEmbedder(store.dim)
    public = Filters(groups=("public",))
    assert {h.doc_id for h in store.lexical_search(["wire", "transfer", "fee"], 10, public)} == {"pub"}
    assert {h.doc_id for h in store.vector_search(emb.embed(["wire transfer fee"])[0], 10, public)} == {"pub"}
    assert {h.doc_id for h in store.lexical_search(["wire"], 10, Filters(groups=("finance",)))} == {"fin"}
    # the trusted path (no group filter) sees every row, as in the embedded store
    assert {h.doc_id for h in store.lexical_search(["wire"], 10)} == {"pub", "fin", "sec"}


def test_term_statistics_equal_a_recount_after_replace_and_delete(pg_index, corpus):
    write_doc(corpus, "pub.md", "Public fees", "wire wire transfer limits changed for everyone")
    (corpus / "sec.md").unlink()
    report = pg_index.ingest(corpus)
    assert (report.updated, report.deleted) == (1, 1)
    store = pg_index.store
    with store._tx() as cur:
        lexical = [r[0] for r in cur.execute(f"SELECT lexical FROM {store.schema}.chunks")]
    terms = [postgres.bm25_terms(x) for x in lexical]
    df = Counter(t for ts in terms for t in set(ts))
    assert store.term_statistics() == {"n_chunks": len(terms), "total_len": sum(map(len, terms)), "df": dict(df)}
    # hand-computed BM25 of the one-term query "limit" on the replaced chunk
    import math

    n, avg = len(terms), sum(map(len, terms)) / len(terms)
    i = next(i for i, ts in enumerate(terms) if "limit" in ts)
    tf, dl = terms[i].count("limit"), len(terms[i])
    want = math.log(1 + (n - 1 + 0.5) / 1.5) * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avg))
    (hit,) = store.lexical_search(["limit"], 5)
    assert hit.doc_id == "pub" and hit.score == pytest.approx(want, rel=1e-9)


def test_advisory_lock_serialises_ingests_across_handles(pg_index, pg_url, tmp_path, corpus):
    other = Index.open(tmp_path / "other-folder", embedder="hashing", store=pg_url)  # same store, other folder
    with pg_index.store.ingest_lock():
        with pytest.raises(IndexBusy, match="another ingest is running"):
            other.ingest(corpus)
    assert other.ingest(corpus).unchanged == 3


def test_open_errors_are_one_clear_line(pg_url, pg_server):
    PostgresStore(pg_url, 16)
    with pytest.raises(CitewiseError, match="stored vectors have dim 16, embedder gives 32"):
        PostgresStore(pg_url, 32)
    with pytest.raises(CitewiseError, match="schema must be letters"):
        split_url(pg_server + "&schema=bad-name")
    with pytest.raises(CitewiseError, match="cannot connect"):
        PostgresStore("postgresql://nobody:pw@/nodb?host=/nonexistent-socket-dir", 16)
    assert strip_password("postgresql://u:pw@h/db") == "postgresql://u@h/db"
    # libpq's ?password= too: never recorded, never echoed (break-it trial)
    assert (
        strip_password("postgresql://u@h/db?host=/s&password=S3CRET&schema=t") == "postgresql://u@h/db?host=/s&schema=t"
    )
    with pytest.raises(CitewiseError, match=r"password=\*\*\*: cannot connect") as e:
        PostgresStore("postgresql://nobody@/nodb?host=/nonexistent-socket-dir&password=S3CRET", 16)
    assert "S3CRET" not in str(e.value)


def test_a_store_that_cannot_be_opened_is_never_recorded(tmp_path, corpus):
    """One `citewise search --store BAD` used to write BAD into index.json before connecting,
    and every later command of that index failed on a store the user had not named; a new
    index folder was left naming it too. No server is needed: the socket folder does not exist."""
    bad = "postgresql://nobody@/nodb?host=/nonexistent-socket-dir"
    idx = Index.open(tmp_path / "idx", embedder="hashing")
    idx.ingest(corpus)
    before = (tmp_path / "idx" / "index.json").read_text()
    with pytest.raises(CitewiseError, match="cannot connect"):
        Index.open(tmp_path / "idx", store=bad)
    assert (tmp_path / "idx" / "index.json").read_text() == before
    assert Index.open(tmp_path / "idx").search("wire transfer fee", 1)  # still the embedded store, answering
    with pytest.raises(CitewiseError, match="cannot connect"):
        Index.open(tmp_path / "new" / "idx", embedder="hashing", store=bad)
    assert not (tmp_path / "new").exists()


def test_cli_store_option_env_and_migrate(tmp_path, corpus, pg_url, monkeypatch):
    lance_idx = tmp_path / "lance-idx"
    res = runner.invoke(app, ["ingest", str(corpus), "--index", str(lance_idx), "--embedder", "hashing", "--json"])
    assert res.exit_code == 0, res.output
    before = json.loads(
        runner.invoke(
            app,
            [
                "search",
                "wire transfer fee",
                "--index",
                str(lance_idx),
                "--as",
                "finance",
                "--json",
                "--retriever",
                "hybrid",
            ],
        ).output
    )["hits"]
    assert {h["doc_id"] for h in before} == {"pub", "fin"}
    # migrate: the same hits, now from PostgreSQL (the folder records the store)
    monkeypatch.setattr(migrate, "BATCH_ROWS", 2)  # several read/write batches of whole documents
    res = runner.invoke(app, ["index", "migrate", "--from", str(lance_idx), "--to", pg_url, "--json"])
    assert res.exit_code == 0, res.output
    monkeypatch.undo()
    moved = json.loads(res.output)
    assert (moved["documents"], moved["runs"]) == (3, 1) and moved["chunks"] >= 3
    assert json.loads((lance_idx / "index.json").read_text())["store"] == strip_password(pg_url)
    after = json.loads(
        runner.invoke(
            app,
            [
                "search",
                "wire transfer fee",
                "--index",
                str(lance_idx),
                "--as",
                "finance",
                "--json",
                "--retriever",
                "hybrid",
            ],
        ).output
    )["hits"]
    assert [(h["chunk_id"], round(h["score"], 4)) for h in after] == [
        (h["chunk_id"], round(h["score"], 4)) for h in before
    ]
    assert Index.open(lance_idx).store.stats()["backend"] == "postgresql"
    assert Index.open(lance_idx, store="lancedb").store.stats()["backend"] == "lancedb"
    # CITEWISE_STORE picks the store for an index folder that recorded none
    fresh = tmp_path / "fresh"
    monkeypatch.setenv("CITEWISE_STORE", pg_url.replace("schema=", "schema=env_"))
    res = runner.invoke(app, ["ingest", str(corpus), "--index", str(fresh), "--embedder", "hashing", "--json"])
    assert res.exit_code == 0, res.output
    assert Index.open(fresh).store.stats()["backend"] == "postgresql"
    res = runner.invoke(app, ["ask", "wire transfer fee schedule", "--index", str(fresh), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["citations"], res.output
    monkeypatch.delenv("CITEWISE_STORE")
    # migrating another index into a schema that holds this one's documents would merge the two:
    # refused (break-it trial); migrating the same index again (an interrupted copy) is fine
    solo = tmp_path / "solo-docs"
    write_doc(solo, "solo.md", "Solo", "A page of its own.")
    solo_idx = tmp_path / "solo-idx"
    assert runner.invoke(app, ["ingest", str(solo), "--index", str(solo_idx), "--embedder", "hashing"]).exit_code == 0
    res = runner.invoke(
        app, ["index", "migrate", "--from", str(solo_idx), "--to", pg_url.replace("schema=", "schema=env_")]
    )
    assert isinstance(res.exception, CitewiseError) and "would merge two indexes" in str(res.exception)
    assert Index.open(fresh).store.stats()["documents"] == 3
    res = runner.invoke(
        app, ["index", "migrate", "--from", str(solo_idx), "--to", pg_url.replace("schema=", "schema=solo_")]
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["search", "x", "--index", str(fresh), "--store", "mysql://h/db"])
    assert isinstance(res.exception, CitewiseError)  # main() prints it as one 'error:' line, exit 2
    assert str(res.exception) == "--store 'mysql://h/db': expected 'lancedb' or a postgresql:// URL"


def _principal_of(conn) -> tuple[str, str]:
    """(current_user, the groups setting or '') of a connection, outside any transaction."""
    user, groups = conn.execute(
        f"SELECT current_user, coalesce(current_setting('{postgres.GROUPS_SETTING}', true), '')"
    ).fetchone()
    return user, groups


def test_pooled_connections_keep_concurrent_principals_apart(pg_index, monkeypatch):
    import threading

    # only row-level security guards the groups here (the WHERE clause forgets them), so a
    # principal leaking from one connection or transaction into another would show
    real = postgres.filter_sql
    monkeypatch.setattr(
        postgres.search,
        "filter_sql",
        lambda f, alias="c": real(
            None if f is None else Filters(doc_ids=f.doc_ids, as_of=f.as_of, version=f.version), alias
        ),
    )
    store = pg_index.store
    emb = HashingEmbedder(store.dim)
    qv = emb.embed(["wire transfer fee"])[0]
    finance_open, security_done = threading.Event(), threading.Event()
    seen: dict[str, list[set]] = {"finance": [], "security": []}
    errors: list[BaseException] = []

    def finance():  # holds a transaction as finance while security queries on another connection
        try:
            with store._tx(("finance",)) as cur:
                finance_open.set()
                assert security_done.wait(30)
                seen["finance"].append({r[0] for r in cur.execute(f"SELECT doc_id FROM {store.schema}.chunks")})
            for _ in range(20):
                seen["finance"].append(
                    {h.doc_id for h in store.lexical_search(["wire", "fee"], 10, Filters(groups=("finance",)))}
                )
                seen["finance"].append({h.doc_id for h in store.vector_search(qv, 10, Filters(groups=("finance",)))})
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    def security():
        try:
            assert finance_open.wait(30)
            for _ in range(20):
                seen["security"].append(
                    {h.doc_id for h in store.lexical_search(["wire", "fee"], 10, Filters(groups=("security",)))}
                )
                seen["security"].append({h.doc_id for h in store.vector_search(qv, 10, Filters(groups=("security",)))})
            security_done.set()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
            security_done.set()

    threads = [threading.Thread(target=finance), threading.Thread(target=security)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert len(seen["finance"]) == 41 and len(seen["security"]) == 40
    assert all(s == {"fin"} for s in seen["finance"]), seen["finance"]  # 0 leaks either way
    assert all(s == {"sec"} for s in seen["security"]), seen["security"]
    assert store.pool_stats()["pool_size"] >= 2  # two transactions were open at once
    # every pooled connection handed back carries no principal
    conns = [store._pool.getconn() for _ in range(store.pool_stats()["pool_size"])]
    try:
        assert {_principal_of(c) for c in conns} == {(_principal_of(conns[0])[0], "")}
        assert _principal_of(conns[0])[0] != SEARCH_ROLE
    finally:
        for c in conns:
            store._pool.putconn(c)


def test_a_connection_returned_to_the_pool_carries_no_principal(pg_url, pg_index):
    # one connection: each borrow is the same (and nothing may borrow a second while holding it)
    store = PostgresStore(pg_url, pg_index.store.dim, pool_size=1, ann_min_rows=1)
    try:
        with store._connection() as conn:
            owner = _principal_of(conn)
            # a caller that set the principal at session level (not what the store does) ...
            conn.execute(f"SET ROLE {SEARCH_ROLE}")
            conn.execute("SELECT set_config(%s, '{finance}', false)", (postgres.GROUPS_SETTING,))
            assert _principal_of(conn) == (SEARCH_ROLE, "{finance}")
        with store._connection() as again:  # ... is reset by the pool before the next borrower
            assert again is conn and _principal_of(again) == (owner[0], "")
        # a transaction that fails half-way as a principal is rolled back, principal gone
        with pytest.raises(RuntimeError, match="boom"):
            with store._tx(("finance",)) as cur:
                assert cur.execute("SELECT current_user").fetchone()[0] == SEARCH_ROLE
                raise RuntimeError("boom")
        with store._connection() as again:
            assert again is conn and _principal_of(again) == (owner[0], "")
        # and the trusted path after it still sees every document
        assert {h.doc_id for h in store.lexical_search(["wire"], 10)} == {"pub", "fin", "sec"}
        store.refresh_indexes()  # builds the HNSW index on the one connection
        assert store.has_ann_index()
    finally:
        store.close()


def _zipf_updates(n: int, dim: int, seed: int = 5):
    """``n`` one-chunk documents of Zipf-distributed words (w0 in nearly every chunk, w300 rare),
    every 10th readable by ``restricted`` only, the rest ``public``; random unit vectors."""
    import numpy as np

    from citewise.core import Chunk, Document
    from citewise.store.base import DocumentUpdate

    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        ranks = np.minimum(rng.zipf(1.3, int(rng.integers(5, 40))), 400) - 1
        text = " ".join(f"w{r}" for r in ranks)
        doc = Document(
            doc_id=f"d{i:04d}", title=f"Doc {i}", text=text, source="synthetic", format="text", content_hash=f"h{i}"
        )
        chunk = Chunk(
            chunk_id=f"d{i:04d}#0",
            doc_id=doc.doc_id,
            heading_path=(),
            text=text,
            start=0,
            end=len(text),
            token_count=len(ranks),
        )
        vec = rng.normal(size=(1, dim)).astype(np.float32)
        out.append(
            DocumentUpdate(doc, [chunk], vec / np.linalg.norm(vec), ("restricted",) if i % 10 == 0 else ("public",))
        )
    return out


def _bm25_by_hand(store: PostgresStore, terms: list[str], visible) -> list[tuple[str, float]]:
    """Every visible chunk's BM25 (module docstring's formula) from its stored lexical text,
    recounted in Python; best first, ties by chunk id."""
    import math

    with store._tx() as cur:
        rows = cur.execute(f"SELECT chunk_id, doc_id, groups, lexical FROM {store.schema}.chunks").fetchall()
    toks = {cid: postgres.bm25_terms(lex) for cid, _, _, lex in rows}
    n, avg = len(toks), sum(map(len, toks.values())) / len(toks)
    df = Counter(t for ts in toks.values() for t in set(ts))
    out = []
    for cid, doc, groups, _ in rows:
        if not visible(doc, groups):
            continue
        ts = Counter(toks[cid])
        score = sum(
            math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            * ts[t]
            * 2.2
            / (ts[t] + 1.2 * (0.25 + 0.75 * len(toks[cid]) / avg))
            for t in terms
            if ts[t]
        )
        if score > 0:
            out.append((cid, score))
    return sorted(out, key=lambda x: (-x[1], x[0]))


@pytest.mark.parametrize("probe_cost", [0, 10**9])  # 0: always prune (MaxScore passes); 10**9: sum every posting
def test_bm25_maxscore_equals_the_full_sum(pg_url, monkeypatch, probe_cost):
    monkeypatch.setattr(postgres.search, "BM25_PROBE_COST", probe_cost)
    store = PostgresStore(pg_url, 8)
    try:
        store.upsert(_zipf_updates(600, 8))
        store.refresh_indexes()
        cases = [
            (["w250", "w0", "w1"], None, lambda d, g: True),  # a rare term and two near-everywhere ones
            (["w40", "w40", "w2", "w0"], Filters(groups=("public",)), lambda d, g: "public" in g),  # repeated term
            (["w30", "w1", "w0"], Filters(groups=("restricted",)), lambda d, g: "restricted" in g),  # 10% visible
            (
                ["w399", "w0"],
                Filters(doc_ids=("d0001", "d0002", "d0003", "d0400")),
                lambda d, g: d in ("d0001", "d0002", "d0003", "d0400"),
            ),  # fewer than k visible
            (["w3", "w5", "w0", "w7"], None, lambda d, g: True),
        ]
        pruned = []
        for terms, filters, visible in cases:
            want = _bm25_by_hand(store, terms, visible)[:10]
            got = store.lexical_search(terms, 10, filters)
            assert [h.chunk_id for h in got] == [c for c, _ in want], terms
            assert [h.score for h in got] == pytest.approx([s for _, s in want], rel=1e-9)
            passes = store.last_bm25_passes
            if probe_cost:
                assert passes == [len(set(terms))]  # one pass over every posting
            else:  # essential terms grow pass by pass; 0 = the visible rows scored by lookups, last
                assert passes[:-1] == sorted(passes[:-1]) and 0 not in passes[:-1]
                pruned.append(passes)
        if not probe_cost:
            # the common terms were looked up, not summed in full; the selective filters took the
            # visible-rows pass
            assert pruned == [[2], [1], [1, 0], [1, 0], [1, 2]]
    finally:
        store.close()


POSTINGS_KEYS = {"postings_pkey", "postings_rid_fkey", "postings_rid"}


def _postings_keys(store: PostgresStore) -> set[str]:
    with store._tx() as cur:
        return {
            r[0]
            for r in cur.execute(
                "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype IN ('p', 'f') UNION "
                "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = 'postings'",
                (f"{store.schema}.postings", store.schema),
            )
        }


def _odd_groups_source(tmp_path):
    """A LanceDB store of three documents whose groups need quoting in an array literal and
    escaping in COPY's text format."""
    import numpy as np

    from citewise.core import Chunk, Document
    from citewise.store.base import DocumentUpdate
    from citewise.store.lance import LanceStore

    groups = {"q": ('a"b',), "b": ("c\\d", "x,y"), "t": ("tab\there", "{z}", "new\nline", "public")}
    src = LanceStore(tmp_path / "src", 8)
    ups = []
    for i, (doc_id, g) in enumerate(sorted(groups.items())):
        doc = Document(
            doc_id, doc_id.upper(), f"wire fee {doc_id} words", f"s/{doc_id}", "text", f"h{doc_id}", groups=g
        )
        vec = np.eye(8, dtype=np.float32)[i : i + 1]
        ups.append(
            DocumentUpdate(
                doc,
                [Chunk(f"{doc_id}#0", doc_id, (doc.title,), doc.text, 0, 10, 3)],
                vec,
                g,
                lexical=[f"wire fee {doc_id} words"],
            )
        )
    src.upsert(ups)
    return src, groups


def test_bulk_load_fills_an_empty_store_like_row_by_row_import_and_puts_the_keys_back(pg_url, tmp_path):
    """``index migrate`` copies into an empty store with the postings' primary key, foreign key
    and rid index off, built once at the end. Same rows, statistics and search results as the
    per-batch import; group names that need quoting and escaping survive the text-format COPY."""
    from citewise.store.migrate import document_rows

    src, groups = _odd_groups_source(tmp_path)
    plain = PostgresStore(pg_url, 8)
    bulk = PostgresStore(pg_url.replace("schema=", "schema=bulk_"), 8)
    for _, rows in document_rows(src):
        plain.import_rows(rows)
    with bulk.bulk_load() as took:
        assert took and _postings_keys(bulk) == set()
        for _, rows in document_rows(src):
            bulk.import_rows(rows)
    assert _postings_keys(bulk) == POSTINGS_KEYS == _postings_keys(plain)

    def dump(store):
        with store._tx() as cur:
            s = store.schema
            return (
                cur.execute(
                    f"SELECT c.chunk_id, p.tf, p.doc_len, p.groups, t.term FROM {s}.postings p "
                    f"JOIN {s}.chunks c ON c.rid = p.rid JOIN {s}.term_stats t ON t.term_id = p.term_id "
                    "ORDER BY 1, 5"
                ).fetchall(),
                cur.execute(f"SELECT term, df FROM {s}.term_stats ORDER BY 1").fetchall(),
                cur.execute(f"SELECT n_chunks, total_len FROM {s}.corpus_stats").fetchall(),
            )

    assert dump(bulk) == dump(plain)
    assert dict((r[0], tuple(r[3])) for r in dump(bulk)[0]) == {f"{d}#0": g for d, g in groups.items()}
    for doc_id, g in groups.items():
        for group in g:
            hits = bulk.lexical_search(["wire", "fee"], 10, Filters(groups=(group,)))
            assert doc_id in {h.doc_id for h in hits}, group  # the row-level security policy reads these groups
    # the keys hold again: a second copy of a posting is refused
    with pytest.raises(Exception, match="postings_pkey"):
        with bulk._tx(snapshot=False) as cur:
            cur.execute(f"INSERT INTO {bulk.schema}.postings SELECT * FROM {bulk.schema}.postings LIMIT 1")
    # a store that has rows: nothing is dropped, rows replace documents as always
    with bulk.bulk_load() as took:
        assert not took and _postings_keys(bulk) == POSTINGS_KEYS
        for _, rows in document_rows(src):
            bulk.import_rows(rows)
    assert dump(bulk) == dump(plain)


def test_a_bulk_load_that_fails_or_dies_leaves_the_keys_on(pg_url, tmp_path):
    from citewise.store.migrate import document_rows

    src, _ = _odd_groups_source(tmp_path)
    store = PostgresStore(pg_url, 8)
    ((_, rows),) = list(document_rows(src))
    with pytest.raises(CitewiseError, match="document 'b' imported twice in one bulk load"):
        with store.bulk_load():
            store.import_rows(rows)
            store.import_rows(rows[:1])
    assert _postings_keys(store) == POSTINGS_KEYS
    # killed inside the block (its exit never runs): the next open of the store puts them back
    import os
    import subprocess
    import sys

    url = pg_url.replace("schema=", "schema=dead_")
    watch = PostgresStore(url, 8)  # opened (and the schema made) before the kill
    script = (
        "import os, signal, sys\n"
        "from citewise.store.postgres import PostgresStore\n"
        "store = PostgresStore(sys.argv[1], 8)\n"
        "with store.bulk_load():\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, url],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")},
    )
    assert run.returncode == -9, run.stderr
    assert _postings_keys(watch) == set()
    assert _postings_keys(PostgresStore(url, 8)) == POSTINGS_KEYS


def test_source_view_reads_a_document_through_the_store_contract(pg_index, corpus):
    from fastapi.testclient import TestClient

    from citewise.core import Principal
    from citewise.service.app import create_app
    from citewise.service.documents import source_view

    view = source_view(pg_index, "pub", Principal())
    assert view is not None and view.exact is True and view.title == "Public fees"
    assert view.text == (corpus / "pub.md").read_text(encoding="utf-8")
    assert view.path == "pub.md" and [c[0] for c in view.chunks] == ["pub#public-fees"]
    # a forbidden document and a missing one look the same
    assert source_view(pg_index, "fin", Principal()) is None
    assert source_view(pg_index, "nosuch", Principal()) is None
    assert source_view(pg_index, "fin", Principal("ana", ("finance",))).title == "Finance fees"
    # a source file that is gone: the text is put together from the stored chunks
    (corpus / "sec.md").unlink()
    gone = source_view(pg_index, "sec", Principal("sam", ("security",)))
    assert gone.exact is False and "wire transfer fee keys for security" in gone.text
    with TestClient(create_app(pg_index.path, rate=0)) as client:
        r = client.get("/v1/documents/pub")
        assert r.status_code == 200 and r.json()["title"] == "Public fees" and r.json()["exact"] is True
        assert client.get("/v1/documents/fin").status_code == 404
