"""An embedder from a local ONNX folder as sentence-transformers exports one
(``SentenceTransformer(..., backend="onnx").save(folder)``), run on onnxruntime (no torch).

Folder layout read (sentence-transformers 3.x/4.x):

* ``model.onnx`` or ``onnx/model.onnx``: the transformer; outputs ``last_hidden_state`` /
  ``token_embeddings`` (token vectors, pooled here) or ``sentence_embedding`` (used as is);
* ``tokenizer.json``: a HuggingFace ``tokenizers`` file;
* ``1_Pooling/config.json`` (optional): ``pooling_mode_mean_tokens`` (default),
  ``pooling_mode_cls_token``, ``pooling_mode_max_tokens`` or ``pooling_mode_lasttoken``;
* ``sentence_bert_config.json`` (optional): ``max_seq_length`` (default 512), ``do_lower_case``;
* ``config_sentence_transformers.json`` (optional): ``prompts`` (``query`` and ``passage`` or
  ``document``), prepended to queries and passages.

Rows are L2-normalised whether or not the folder has a ``Normalize`` module: the Embedder
contract is unit vectors, and cosine ranking is unchanged by it.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from citewise.core import CitewiseError
from citewise.models.embedding import Prompts, l2_normalise

POOLING_MODES = ("mean", "cls", "max", "lasttoken")


def session_options(threads: int):
    """onnxruntime ``SessionOptions``: ``threads`` intra-op threads, one inter-op thread, warnings
    off, basic graph rewrites only, no spinning.

    Basic rewrites: the extended/layout passes took ~0.1 s more at every session start and gave
    the same vectors (|diff| <= 1.3e-7) at the same query speed on the int8 MiniLM (session
    0.15-0.18 s vs 0.26 s, one query 6.1 vs 6.6 ms). No spinning: on shared cores a spinning
    pool took the CPU the other thread needed (single query, 2 threads: 39 vs 10 ms at best).
    """
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return opts


def pool(hidden: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """Sentence vectors from token vectors, as sentence-transformers' ``Pooling`` computes them.

    Args:
        hidden: float (batch, tokens, dim) token vectors.
        mask: int (batch, tokens) attention mask (1 = real token).
        mode: ``mean`` (mean over real tokens), ``cls`` (first token), ``max`` (per dimension
            over real tokens) or ``lasttoken`` (last real token).

    >>> h = np.array([[[1., 2.], [3., 4.], [9., 9.]]]); m = np.array([[1, 1, 0]])
    >>> pool(h, m, "mean").tolist(), pool(h, m, "max").tolist(), pool(h, m, "lasttoken").tolist()
    ([[2.0, 3.0]], [[3.0, 4.0]], [[3.0, 4.0]])
    """
    m = mask[..., None].astype(np.float32)
    if mode == "cls":
        return hidden[:, 0, :]
    if mode == "max":
        return np.where(m > 0, hidden, -np.inf).max(axis=1)
    if mode == "lasttoken":
        last = np.maximum(mask.sum(axis=1) - 1, 0)
        return hidden[np.arange(len(hidden)), last, :]
    return (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise CitewiseError(f"{path}: not a readable JSON file ({' '.join(str(e).split())[:120]})") from None
    if not isinstance(data, dict):
        raise CitewiseError(f"{path}: expected a JSON object")
    return data


def pooling_mode(config: dict, where: Path) -> str:
    """The pooling of a ``1_Pooling/config.json`` object (``mean`` when none is set).

    Raises:
        CitewiseError: it sets a mode not supported here (weighted mean) or several modes.
    """
    keys = {
        "pooling_mode_mean_tokens": "mean",
        "pooling_mode_cls_token": "cls",
        "pooling_mode_max_tokens": "max",
        "pooling_mode_lasttoken": "lasttoken",
    }
    on = [mode for key, mode in keys.items() if config.get(key)]
    other = [k for k, v in config.items() if k.startswith("pooling_mode_") and v and k not in keys]
    if other or len(on) > 1:
        raise CitewiseError(
            f"{where}: pooling {', '.join(other + on)} is not supported (one of {', '.join(POOLING_MODES)})"
        )
    return on[0] if on else "mean"


class OnnxFolderEmbedder:
    """A sentence-transformers ONNX export in a folder (see module docstring).

    Args:
        folder: the export folder.
        name: model name recorded in the index (default: the folder's name).
        batch_size: texts per onnxruntime call (formed by length, so padding stays small).
        threads: intra-op threads for batches (default: all cores); a single text (a query)
            runs on one thread.
        prompts: query/passage prompts; None: the folder's ``prompts``.

    Raises:
        CitewiseError: the folder, its model or its tokenizer is missing or unreadable, or its
            pooling is not supported (one line naming the file).
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        name: str | None = None,
        batch_size: int = 32,
        threads: int | None = None,
        prompts: Prompts | None = None,
    ):
        self.folder = Path(folder).expanduser()
        if not self.folder.is_dir():
            raise CitewiseError(f"{self.folder}: no such ONNX model folder")
        model = next(
            (p for p in (self.folder / "model.onnx", self.folder / "onnx" / "model.onnx") if p.is_file()), None
        )
        if model is None:
            raise CitewiseError(f"{self.folder}: no model.onnx (looked for model.onnx and onnx/model.onnx)")
        self.model_path = model
        tok = self.folder / "tokenizer.json"
        if not tok.is_file():
            raise CitewiseError(f"{tok}: not found (the folder needs the model's tokenizer.json)")
        st = _read_json(self.folder / "sentence_bert_config.json")
        self.max_seq_length = int(st.get("max_seq_length") or 512)
        self.window = self.max_seq_length
        self.lowercase = bool(st.get("do_lower_case", False))
        pooling_file = self.folder / "1_Pooling" / "config.json"
        pooling = _read_json(pooling_file)
        self.pooling = pooling_mode(pooling, pooling_file)
        if prompts is None:
            declared = _read_json(self.folder / "config_sentence_transformers.json").get("prompts") or {}
            prompts = Prompts(
                str(declared.get("query", "")),
                str(declared.get("passage", declared.get("document", ""))),
                source=str(self.folder / "config_sentence_transformers.json"),
            )
        self.prompts = prompts
        self.name = name or self.folder.resolve().name
        self.batch_size = batch_size
        self.threads = threads or os.cpu_count() or 1
        self._lock = threading.Lock()
        self._sessions: dict[int, object] = {}
        self._tok = None
        self._dim: int | None = (
            int(pooling["word_embedding_dimension"]) if pooling.get("word_embedding_dimension") else None
        )

    @property
    def tokenizer(self):
        if self._tok is None:
            from tokenizers import Tokenizer

            path = self.folder / "tokenizer.json"
            try:
                tok = Tokenizer.from_file(str(path))
            except Exception as e:  # noqa: BLE001 - tokenizers raises its own exception type
                raise CitewiseError(f"{path}: not a tokenizers file ({' '.join(str(e).split())[:120]})") from None
            tok.enable_truncation(self.max_seq_length)
            pad_id, pad = 0, "[PAD]"
            for cand in ("[PAD]", "<pad>", "<|endoftext|>"):
                if tok.token_to_id(cand) is not None:
                    pad_id, pad = tok.token_to_id(cand), cand
                    break
            tok.enable_padding(pad_id=pad_id, pad_token=pad)
            self._tok = tok
        return self._tok

    def _session(self, threads: int):
        with self._lock:
            if threads not in self._sessions:
                import onnxruntime as ort

                try:
                    self._sessions[threads] = ort.InferenceSession(
                        str(self.model_path), sess_options=session_options(threads), providers=["CPUExecutionProvider"]
                    )
                except Exception as e:  # noqa: BLE001 - onnxruntime's own exception types
                    raise CitewiseError(
                        f"{self.model_path}: onnxruntime cannot load it ({' '.join(str(e).split())[:160]})"
                    ) from None
            return self._sessions[threads]

    @property
    def dim(self) -> int:
        """Vector size (from the pooling config, else from embedding one text)."""
        if self._dim is None:
            self._dim = int(self._embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Passages: float32 (len(texts), dim), L2-normalised."""
        return self._embed([self.prompts.passage + t for t in texts]) if len(texts) else self._empty()

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Queries: float32 (len(texts), dim), L2-normalised."""
        return self._embed([self.prompts.query + t for t in texts]) if len(texts) else self._empty()

    def _empty(self) -> np.ndarray:
        return np.zeros((0, self.dim), dtype=np.float32)

    def _embed(self, texts: list[str]) -> np.ndarray:
        n = len(texts)
        texts = [(t.lower() if self.lowercase else t) if t.strip() else " " for t in texts]
        encs = self.tokenizer.encode_batch(texts)
        lengths = np.array([sum(e.attention_mask) for e in encs])
        order = np.argsort(-lengths, kind="stable")
        sess = self._session(1 if n == 1 else self.threads)
        inputs = {i.name for i in sess.get_inputs()}
        outputs = [o.name for o in sess.get_outputs()]
        out = None
        for s in range(0, n, self.batch_size):
            idx = order[s : s + self.batch_size]
            width = max(int(lengths[idx].max()), 1)
            ids = np.array([encs[i].ids[:width] for i in idx], dtype=np.int64)
            mask = np.array([encs[i].attention_mask[:width] for i in idx], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            res = dict(zip(outputs, sess.run(None, {k: v for k, v in feeds.items() if k in inputs})))
            if "sentence_embedding" in res:
                pooled = np.asarray(res["sentence_embedding"], dtype=np.float32)
            else:
                hidden = res.get("last_hidden_state", res.get("token_embeddings", next(iter(res.values()))))
                pooled = pool(np.asarray(hidden, dtype=np.float32), mask, self.pooling)
            if out is None:
                out = np.zeros((n, pooled.shape[1]), dtype=np.float32)
            out[idx] = pooled
        return l2_normalise(out)
