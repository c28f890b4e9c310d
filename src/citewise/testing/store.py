"""The store conformance suite, importable by a backend's own tests (as haystack ships
``haystack.testing.document_store``).

Usage, in a pytest module of the backend::

    import pytest
    from citewise.testing import StoreConformance

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def store(self, tmp_path):
            return MyStore(tmp_path / "db", dim=StoreConformance.DIM)   # empty, this dimension

Every test writes a handful of hand-made documents through :meth:`Store.upsert` and checks what
the :class:`~citewise.store.base.Store` methods return: ids, order, counts and permission
filtering, values that hold for any correct backend. It needs pytest (the ``test`` extra).
"""

from __future__ import annotations

import numpy as np
import pytest

from citewise.core import Chunk, Document, Filters
from citewise.store.base import DocumentUpdate, IngestRun, Store, StoreCapabilities
from citewise.text.analyzer import analyze


def make_update(
    doc_id: str,
    texts: list[str],
    vectors: np.ndarray,
    groups: tuple[str, ...] = ("public",),
    version: str = "",
    content_hash: str | None = None,
    title: str = "Untitled",
) -> DocumentUpdate:
    """One document of ``len(texts)`` chunks (``<doc_id>#<n>``, linked in order), its vectors
    ``vectors`` of shape ``(len(texts), dim)``, readable by ``groups``. The title (also each
    chunk's heading path, which is indexed with the chunk) shares no word with the texts below."""
    body = "\n\n".join(texts)
    doc = Document(
        doc_id=doc_id,
        title=title,
        text=body,
        source=f"{doc_id}.txt",
        format="text",
        content_hash=content_hash or f"hash-{doc_id}-{len(texts)}",
        version=version,
    )
    chunks, start = [], 0
    ids = [f"{doc_id}#{n}" for n in range(len(texts))]
    for n, t in enumerate(texts):
        chunks.append(
            Chunk(
                chunk_id=ids[n],
                doc_id=doc_id,
                heading_path=(doc.title,),
                text=t,
                start=start,
                end=start + len(t),
                token_count=len(t.split()),
                prev_id=ids[n - 1] if n else None,
                next_id=ids[n + 1] if n + 1 < len(ids) else None,
            )
        )
        start += len(t) + 2
    return DocumentUpdate(doc, chunks, np.asarray(vectors, dtype=np.float32), groups)


def unit(dim: int, i: int) -> np.ndarray:
    """The ``i``-th basis vector of length ``dim`` (float32)."""
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


class StoreConformance:
    """Tests every :class:`~citewise.store.base.Store` must pass. Subclasses provide a ``store``
    fixture: a new, empty store of dimension :attr:`DIM`."""

    DIM = 8

    @pytest.fixture
    def store(self) -> Store:
        raise NotImplementedError("a StoreConformance subclass provides the 'store' fixture")

    @pytest.fixture
    def filled(self, store: Store) -> Store:
        """Three documents: ``apples`` (2 chunks, public), ``pears`` (1 chunk, public) and
        ``secret`` (1 chunk, group ``finance``); chunk vectors are basis vectors 0..3."""
        d = self.DIM
        store.upsert(
            [
                make_update(
                    "apples",
                    ["apple apple orchard harvest", "orchard tractors and ladders"],
                    np.stack([unit(d, 0), unit(d, 1)]),
                ),
                make_update("pears", ["pear orchard near the apple trees"], np.stack([unit(d, 2)])),
                make_update("secret", ["apple budget for the finance team"], np.stack([unit(d, 3)]), ("finance",)),
            ]
        )
        store.refresh_indexes()
        return store

    def test_it_is_a_store_and_states_its_capabilities(self, store: Store) -> None:
        assert isinstance(store, Store)
        caps = store.capabilities
        assert isinstance(caps, StoreCapabilities) and caps.name

    def test_documents_and_chunks_read_back(self, filled: Store) -> None:
        docs = filled.documents()
        assert sorted(docs) == ["apples", "pears", "secret"]
        assert sorted(filled.documents(["pears", "nosuch"])) == ["pears"]
        got = filled.get_chunks(["apples#0", "apples#1", "nosuch#0"])
        assert sorted(got) == ["apples#0", "apples#1"]
        assert got["apples#1"].text == "orchard tractors and ladders"
        assert filled.stats()["documents"] == 3 and filled.stats()["chunks"] == 4

    def test_document_chunks_in_text_order_inside_the_permission_filter(self, filled: Store) -> None:
        got = filled.document_chunks("apples", ("public",))
        assert [(c.chunk_id, c.start, c.end) for c in got] == [("apples#0", 0, 27), ("apples#1", 29, 57)]
        assert got[1].text == "orchard tractors and ladders"
        assert filled.document_chunks("secret", ("public", "hr")) == []
        assert [c.chunk_id for c in filled.document_chunks("secret", ("finance",))] == ["secret#0"]
        assert [c.chunk_id for c in filled.document_chunks("secret", None)] == ["secret#0"]
        assert filled.document_chunks("apples", ()) == []
        assert filled.document_chunks("nosuch", ("public",)) == []

    def test_vectors_read_back(self, filled: Store) -> None:
        vecs = filled.get_vectors(["pears#0"])
        assert np.allclose(vecs["pears#0"], unit(self.DIM, 2), atol=1e-6)

    def test_lexical_search_ranks_by_term_frequency_and_applies_permissions(self, filled: Store) -> None:
        hits = filled.lexical_search(analyze("apple"), 10, Filters(groups=("public",)))
        # apples#0 holds 'apple' twice in 4 words; pears#0 once in 6; secret#0 is not public
        assert [h.chunk_id for h in hits] == ["apples#0", "pears#0"]
        assert hits[0].score > hits[1].score > 0
        both = filled.lexical_search(analyze("apple"), 10, Filters(groups=("public", "finance")))
        assert {h.chunk_id for h in both} == {"apples#0", "pears#0", "secret#0"}
        assert filled.lexical_search(analyze("zebra"), 10, Filters(groups=("public",))) == []

    def test_vector_search_orders_by_cosine_and_fills_k_inside_the_filter(self, filled: Store) -> None:
        q = unit(self.DIM, 3) + 0.5 * unit(self.DIM, 2)
        everyone = filled.vector_search(q, 2, Filters(groups=("public", "finance")))
        assert [h.chunk_id for h in everyone] == ["secret#0", "pears#0"]
        public = filled.vector_search(q, 2, Filters(groups=("public",)))
        # the top-k is filled from public chunks: the filter is applied inside the search
        assert [h.chunk_id for h in public][:1] == ["pears#0"] and len(public) == 2
        assert all(h.doc_id != "secret" for h in public)

    def test_doc_id_filter(self, filled: Store) -> None:
        hits = filled.lexical_search(analyze("orchard"), 10, Filters(groups=("public",), doc_ids=("pears",)))
        assert [h.chunk_id for h in hits] == ["pears#0"]

    def test_replacing_a_document_replaces_all_its_chunks(self, filled: Store) -> None:
        filled.upsert([make_update("apples", ["plum jam"], np.stack([unit(self.DIM, 4)]), content_hash="v2")])
        filled.refresh_indexes()
        assert sorted(filled.get_chunks(["apples#0", "apples#1"])) == ["apples#0"]
        assert filled.get_chunks(["apples#0"])["apples#0"].text == "plum jam"
        assert [h.chunk_id for h in filled.lexical_search(analyze("tractors"), 10, Filters(groups=("public",)))] == []
        assert [h.chunk_id for h in filled.lexical_search(analyze("jam"), 10, Filters(groups=("public",)))] == [
            "apples#0"
        ]

    def test_delete_removes_a_document_from_every_search(self, filled: Store) -> None:
        assert filled.delete(["apples"]) == 2
        filled.refresh_indexes()
        assert sorted(filled.documents()) == ["pears", "secret"]
        assert [h.doc_id for h in filled.lexical_search(analyze("apple"), 10, Filters(groups=("public",)))] == ["pears"]
        assert all(
            h.doc_id != "apples" for h in filled.vector_search(unit(self.DIM, 0), 5, Filters(groups=("public",)))
        )

    def test_has_group_is_exact_and_case_sensitive(self, filled: Store) -> None:
        assert filled.has_group("finance") and filled.has_group("public")
        assert not filled.has_group("Finance") and not filled.has_group("fin")

    def test_known_terms(self, filled: Store) -> None:
        assert filled.known_terms(analyze("orchard zebra budget")) == {"orchard", "budget"}
        assert filled.known_terms([]) == set()

    def test_chunk_versions(self, filled: Store) -> None:
        versions = filled.chunk_versions()
        assert sorted(versions) == ["apples", "pears", "secret"]
        assert sorted(c for c, _, _ in versions["apples"]) == ["apples#0", "apples#1"]
        assert {h for _, h, _ in versions["apples"]} == {"hash-apples-2"}

    def test_ingest_log(self, store: Store) -> None:
        run = IngestRun(
            started_at="2026-01-02T03:04:05Z",
            finished_at="2026-01-02T03:04:06Z",
            root="/docs",
            added=3,
            chunks_embedded=4,
        )
        store.record_run(run)
        runs = store.runs()
        assert len(runs) == 1 and runs[0].root == "/docs" and runs[0].added == 3 and runs[0].chunks_embedded == 4

    def test_the_common_operations_answer_on_an_empty_store(self, store: Store) -> None:
        assert store.documents() == {}
        assert store.document_chunks("apples", ("public",)) == []
        assert store.lexical_search(analyze("apple"), 5, Filters(groups=("public",))) == []
        assert store.vector_search(unit(self.DIM, 0), 5, Filters(groups=("public",))) == []
        assert store.unindexed_rows() == 0
        assert isinstance(store.warm(), dict)
        with store.ingest_lock():
            pass
