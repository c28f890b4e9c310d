"""Issue 12, ingest throughput: the fast analyzer, hashing embedder and append path change nothing.

The references below are the implementations before the speed-up (one character and one token
at a time, one BLAKE2b hash per term occurrence); the fast code must give the same folded text,
tokens, terms and float32 vectors bit for bit. The store's append path (a batch of documents
with no rows yet) must leave the same rows as the merge it skips, and never duplicate a document
another handle wrote in between.
"""

from __future__ import annotations

import dataclasses
import unicodedata

import numpy as np
import pytest

from citewise.core import Document
from citewise.demo import sample_dir
from citewise.models.embedders import HashingEmbedder, l2_normalise
from citewise.store.base import DocumentUpdate
from citewise.store.lance import LanceStore
from citewise.text import analyzer as A
from citewise.text.chunker import Chunker
from citewise.text.tokens import count_tokens

from conftest import shared_dataset


TRICKY = [
    "Café naïve Ελληνικά άέή Привет ё й",
    "Ｅ‑1004 ＡＢＣ１ ｶﾀｶﾅ ガギグ 한국어 申请退款需要主管批准。 ไทย การ",
    "\u0301leading mark, a\u0301\u0302 double, x\u0903y spacing mark, हिन्दी भाषा",
    "E\u20131004 10\u201320 cells\u2014and MT103 v4.5 anti-inflammatory capture_timeout_ms soft\u00adhyphen",
    "Ǆ ǅ ß ﬁ ligature Ⅻ ² ½ İstanbul ΣΑΣ ῼ",
    "mixed e\u0301-1004 b\u0327_x u\u0308ber-cool",
    "",
    "   ",
    "the and of",  # stop words only
]


# -- references: the code before the speed-up ------------------------------------------------


def _ref_fold(text: str) -> str:
    if text.isascii():
        return text.lower()
    text = A.fold_dashes(text)
    decomposed = unicodedata.normalize("NFKD", text)
    out: list[str] = []
    strip = True
    kept_mark = False
    for c in decomposed:
        if unicodedata.combining(c):
            if not strip:
                out.append(c)
                kept_mark = True
            continue
        strip = A._strips_marks(c)
        out.append(c)
    folded = "".join(out)
    if kept_mark or not folded.isascii():
        folded = unicodedata.normalize("NFC", folded)
    return folded.lower()


def _ref_raw_tokens(text: str) -> list[str]:
    folded = _ref_fold(text)
    toks = A._token_re().findall(folded)
    if folded.isascii() or not A._NOSPACE_CHAR.search(folded):
        return toks
    out: list[str] = []
    for tok in toks:
        out.extend(A._segment(tok) if A._NOSPACE_CHAR.search(tok) else [tok])
    return out


def _ref_analyze(text: str) -> list[str]:
    out: list[str] = []
    for tok in _ref_raw_tokens(text):
        if tok in A.STOP_WORDS:
            continue
        if not tok.isascii() and A._NOSPACE_CHAR.match(tok):
            out.append(tok)
            continue
        if A._SPLIT.search(tok):
            if A._HAS_DIGIT.search(tok):
                out.append(tok)
                continue
            out.append(tok)
            out.extend(A._stem(p) for p in A._SPLIT.split(tok) if p and p not in A.STOP_WORDS)
            continue
        out.append(tok if A._HAS_DIGIT.search(tok) else A._stem(tok))
    return out


def _ref_embed(texts: list[str], dim: int) -> np.ndarray:
    e = HashingEmbedder(dim)
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        counts: dict[str, int] = {}
        for t in _ref_analyze(text):
            counts[t] = counts.get(t, 0) + 1
        for term, tf in counts.items():
            b, sign = e._bucket(term)
            out[row, b] += sign * (1.0 + np.log(tf))
    return l2_normalise(out)


def _sample_texts() -> list[str]:
    folder = sample_dir() / "corpus"
    return [p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.suffix in (".md", ".txt")]


def _assert_same_analysis(texts: list[str]) -> None:
    for t in texts:
        assert A.fold(t) == _ref_fold(t), t[:80]
        assert A.raw_tokens(t) == _ref_raw_tokens(t), t[:80]
        assert A.analyze(t) == _ref_analyze(t), t[:80]
        assert A.lexical_text(t) == " ".join(_ref_analyze(t)), t[:80]


def test_fast_analyzer_equals_reference_on_tricky_and_sample_texts():
    texts = TRICKY + _sample_texts()
    assert len(texts) > 20
    _assert_same_analysis(texts)
    # hand-checked values, so the reference itself is pinned
    assert A.fold("Café Ελληνικά x\u0903y") == "cafe ελληνικα x\u0903y"
    assert A.analyze("mixed e\u0301-1004 b\u0327_x u\u0308ber-cool") == [
        "mix",
        "e-1004",
        "b_x",
        "b",
        "x",
        "uber-cool",
        "uber",
        "cool",
    ]


def test_analysis_memo_is_bounded_and_does_not_change_results(monkeypatch):
    monkeypatch.setattr(A, "_TERMS", {})  # a fresh memo: other tests have filled the shared one
    monkeypatch.setattr(A, "_TERMS_MAX", 3)
    A._analyze.cache_clear()
    texts = ["Refunds within thirty days", "Refund windows, E-1004 and v4.5", "Refunds within thirty days"]
    got = [A.analyze(t) for t in texts]
    assert 0 < len(A._TERMS) <= 3 + 5  # replaced when full, then one text's new tokens added
    assert got == [_ref_analyze(t) for t in texts]
    assert got[1] == ["refund", "window", "e-1004", "v4.5"]
    got[0].append("mutated")  # analyze returns a fresh list: the memo is not aliased
    assert A.analyze(texts[0]) == ["refund", "within", "thirti", "day"]
    A._analyze.cache_clear()


@pytest.mark.parametrize("dim", [8, 256])
def test_hashing_vectors_are_bit_identical_to_the_row_by_row_loop(dim):
    texts = TRICKY + _sample_texts() + ["refund refund refund window", "a b c d e f g h i j k l m n o p"]
    fast = HashingEmbedder(dim).embed(texts)
    ref = _ref_embed(texts, dim)
    assert fast.dtype == np.float32 and fast.shape == (len(texts), dim)
    assert fast.tobytes() == ref.tobytes()  # dim 8: most rows have colliding terms
    assert not fast[TRICKY.index("the and of")].any()  # no terms: zero row
    assert HashingEmbedder(dim).embed([]).shape == (0, dim)


def test_fast_analysis_and_vectors_equal_reference_on_scifact():
    from citewise.text.loaders import load_beir_corpus

    docs = list(load_beir_corpus(shared_dataset("beir-scifact") / "corpus.jsonl"))[:1500]
    texts = [c.indexed_text for d in docs for c in Chunker().chunk(d.doc_id, d.title, d.text)]
    assert sum(not t.isascii() for t in texts) > 300  # the non-ASCII paths are exercised
    _assert_same_analysis(texts)
    assert HashingEmbedder(256).embed(texts).tobytes() == _ref_embed(texts, 256).tobytes()


def test_count_tokens_counts_special_token_text_as_plain_text():
    from citewise.text.tokens import _encoding

    # len(encode(text)) raised ValueError on these (a document quoting them could not be chunked)
    text = "see <|endoftext|> and <|endofprompt|> here"
    assert count_tokens(text) == len(_encoding().encode_ordinary(text)) == 17
    assert count_tokens("Refunds within 30 days.") == len(_encoding().encode("Refunds within 30 days."))
    assert count_tokens("") == 0


# -- the append path --------------------------------------------------------------------------


def _update(doc_id: str, text: str, emb: HashingEmbedder) -> DocumentUpdate:
    doc = Document(doc_id, doc_id.title(), text, f"/src/{doc_id}.md", "markdown", f"h-{text}")
    chunks = Chunker().chunk(doc_id, doc.title, text)
    return DocumentUpdate(doc, chunks, emb.embed([c.indexed_text for c in chunks]), ("public",))


def _rows(store: LanceStore) -> list[tuple]:
    tbl = store._scan(["chunk_id", "doc_id", "text", "lexical", "content_hash"]).sort_by("chunk_id")
    return list(zip(*(tbl.column(c).to_pylist() for c in tbl.schema.names)))


def test_new_documents_are_appended_and_replaced_ones_merged(tmp_path, monkeypatch):
    emb = HashingEmbedder(16)
    calls: list[str] = []
    import lancedb.table

    orig_add, orig_merge = lancedb.table.LanceTable.add, lancedb.table.LanceTable.merge_insert
    monkeypatch.setattr(
        lancedb.table.LanceTable, "add", lambda self, *a, **k: (calls.append("add"), orig_add(self, *a, **k))[1]
    )
    monkeypatch.setattr(
        lancedb.table.LanceTable,
        "merge_insert",
        lambda self, *a, **k: (calls.append("merge"), orig_merge(self, *a, **k))[1],
    )
    store = LanceStore(tmp_path / "lance", 16)
    store.upsert([_update("a", "Refunds take 30 days.", emb)])  # creates the table
    store.upsert([_update("b", "Chargebacks are disputed.", emb), _update("c", "Invoices are monthly.", emb)])
    assert calls == ["add"]
    # one known document in the batch: the whole batch is merged (b replaced, d added)
    store.upsert(
        [_update("b", "Chargebacks are disputed within 10 days.", emb), _update("d", "Plans renew yearly.", emb)]
    )
    assert calls == ["add", "merge"]
    rows = _rows(store)
    assert [r[1] for r in rows] == ["a", "b", "c", "d"]  # one row per document, no duplicate b
    assert rows[1][2] == "Chargebacks are disputed within 10 days."
    assert rows[1][3] == "b chargeback disput within 10 day"  # title "B", then the text
    # deleting a document invalidates the memo: re-adding it is an append again, one row
    assert store.delete(["c"]) == 1
    store.upsert([_update("c", "Invoices are weekly.", emb)])
    assert calls == ["add", "merge", "add"]
    assert [r[1] for r in _rows(store)] == ["a", "b", "c", "d"]


def test_a_document_written_by_another_handle_is_merged_not_duplicated(tmp_path):
    emb = HashingEmbedder(16)
    first = LanceStore(tmp_path / "lance", 16)
    first.upsert([_update("a", "Refunds take 30 days.", emb)])
    first.upsert([_update("b", "Chargebacks are disputed.", emb)])  # memo: {a, b} at this version
    other = LanceStore(tmp_path / "lance", 16)
    other.upsert([_update("c", "Invoices are monthly.", emb)])  # a commit `first` did not make
    first.upsert([_update("c", "Invoices are weekly.", emb)])  # must see c and replace it
    rows = _rows(first)
    assert [r[1] for r in rows] == ["a", "b", "c"]
    assert rows[2][2] == "Invoices are weekly."
    changed = dataclasses.replace(_update("a", "Refunds take 14 days.", emb))
    first.upsert([changed])
    assert [r[2] for r in _rows(first)][0] == "Refunds take 14 days."


def test_one_hashing_embedder_shared_by_threads_gives_the_same_vectors():
    from concurrent.futures import ThreadPoolExecutor

    texts = _sample_texts() + TRICKY
    batches = [texts[i::4] + [f"term{i}-{j} word{j}" for j in range(300)] for i in range(4)]
    alone = [HashingEmbedder(64).embed(b) for b in batches]  # each on its own, fresh memo
    shared = HashingEmbedder(64)
    for _ in range(3):
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(shared.embed, batches))
        assert all(g.tobytes() == a.tobytes() for g, a in zip(got, alone))


def test_chunker_fit_check_without_counting_agrees_with_the_count():
    import random

    from citewise.text.chunker import _Run

    rng = random.Random(7)
    ch = Chunker()
    texts = _sample_texts() + TRICKY[:5]
    checked = skipped = 0
    for text in texts:
        run = _Run(text, [], max_header=200)
        for _ in range(40):
            s = rng.randrange(0, max(1, len(text)))
            e = rng.randrange(s, len(text) + 1)
            path = rng.choice([(), ("Title",), ("Title", "Section é")])
            exact = ch._tokens(run, s, e, path)
            for limit in (exact - 1, exact, exact + 1, 2 * (e - s) + 10):
                assert ch._within(run, s, e, path, limit) == (exact <= limit)
                checked += 1
            skipped += len(text[s:e].encode()) + (run.path_tokens(path) if path else 0) <= exact + 1
    assert checked > 1000 and skipped > 0  # both the byte bound and the exact count were used
