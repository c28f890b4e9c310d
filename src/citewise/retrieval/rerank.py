"""Reranking: re-score the top candidates of any retriever with a model that reads query and passage.

One protocol, :class:`Reranker` (``rerank(query, passages) -> scores``), three back ends, and one
wrapper that turns any :class:`~citewise.retrieval.retrievers.Retriever` into a reranked one:

* :class:`HttpReranker` — the common rerank HTTP APIs:
  ``tei``: Hugging Face text-embeddings-inference, ``POST {base}/rerank`` with
  ``{"query", "texts", "truncate"}``, answered ``[{"index", "score"}, ...]``;
  ``cohere`` (Cohere, Jina, vLLM, Infinity, llama.cpp ``--reranking``): ``POST {base}/v1/rerank``
  with ``{"model", "query", "documents", "top_n"}``, answered ``{"results": [{"index",
  "relevance_score"}, ...]}``.
* :class:`OnnxCrossEncoder` — a cross-encoder the user exports to a folder holding
  ``tokenizer.json`` (Hugging Face ``tokenizers`` format, with its pair template) and
  ``model.onnx`` (inputs ``input_ids`` / ``attention_mask`` / optionally ``token_type_ids``,
  int64 ``(batch, seq)``; first output the logits ``(batch,)``, ``(batch, 1)`` or
  ``(batch, 2)`` — the last column is the relevance logit). Runs on onnxruntime, no torch.
* :class:`LLMReranker` — a chat model through :class:`citewise.models.chat.OpenAIChatModel`:
  ``pointwise`` asks for a 0–10 relevance grade per passage; ``listwise`` shows all passages
  numbered and asks for a permutation (RankGPT: Sun et al., EMNLP 2023, "Is ChatGPT Good at
  Search?"), passages the model leaves out keep their order after the ranked ones.

:class:`RerankingRetriever` fetches ``depth`` candidates from its base retriever, reranks them and
returns the top k (stage ``rerank``). Every reranker failure — connection, timeout, HTTP status,
malformed body, wrong number of scores — raises :class:`RerankError`; the wrapper then logs a
warning and returns the base retriever's order unchanged (fail closed: a broken reranker never
hides or invents results). Permission filtering is the base retriever's (inside the Store), so
reranking can only reorder what the principal may already see.

Spec strings (``--reranker``): ``tei:URL``, ``cohere:URL[#MODEL]``, ``onnx:FOLDER``,
``llm`` / ``llm-pointwise`` / ``llm-listwise`` (endpoint from the settings' ``[llm]`` /
``[llm.reranker]``, e.g. ``CITEWISE_LLM_RERANKER_MODEL``).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence, runtime_checkable

import httpx
import numpy as np

from citewise.core import CitewiseError, Filters, Hit, Principal
from citewise.models.tls import tls_context

if TYPE_CHECKING:
    from citewise.models.chat import ChatModel
    from citewise.retrieval.retrievers import Retriever
    from citewise.store.base import Store, StoredChunk

log = logging.getLogger("citewise.rerank")

#: Candidates reranked by default (the top of the base retriever's list).
RERANK_DEPTH = 30
#: Characters of each passage sent to a reranker (cross-encoders truncate at ~512 tokens anyway).
PASSAGE_CHARS = 2000
RERANKER_SPECS = ("tei:URL", "cohere:URL[#MODEL]", "onnx:FOLDER", "llm", "llm-pointwise", "llm-listwise")


class RerankError(CitewiseError):
    """A reranker could not score the passages (endpoint down, bad answer, bad model folder)."""


@runtime_checkable
class Reranker(Protocol):
    """Scores passages for a query: ``rerank(query, passages) -> list[float]`` (one score per
    passage, same order, higher = more relevant; scales differ between rerankers).

    Raises:
        RerankError: on any failure (never returns a partial list).
    """

    name: str

    def rerank(self, query: str, passages: Sequence[str]) -> list[float]: ...


def _scores_from_indexed(items: Any, n: int, key: str, where: str) -> list[float]:
    """``[{"index": i, key: s}, ...]`` -> scores in passage order (every index exactly once)."""
    if not isinstance(items, list):
        raise RerankError(f"{where}: expected a list of results, got {type(items).__name__}")
    scores: list[float | None] = [None] * n
    for it in items:
        try:
            i, s = int(it["index"]), float(it[key])
        except (KeyError, TypeError, ValueError):
            raise RerankError(
                f"{where}: result without an integer 'index' and a numeric '{key}': {str(it)[:120]}"
            ) from None
        if not 0 <= i < n or scores[i] is not None:
            raise RerankError(f"{where}: result index {i} out of range or repeated ({n} passages sent)")
        scores[i] = s
    if any(s is None for s in scores):
        raise RerankError(f"{where}: {sum(s is None for s in scores)} of {n} passages came back without a score")
    return [float(s) for s in scores]  # type: ignore[arg-type]


class HttpReranker:
    """Client for TEI ``/rerank`` or Cohere/Jina-style ``/v1/rerank`` (see module docstring).

    Args:
        base_url: server root, e.g. ``http://localhost:8080`` (TEI) or ``https://api.jina.ai``
            (a trailing ``/v1`` is accepted for the cohere style).
        style: ``tei`` or ``cohere``.
        model: model name sent in the cohere-style body (ignored by TEI).
        api_key: sent as ``Authorization: Bearer``.
        timeout: seconds per request.
        transport: an ``httpx`` transport (tests).

    Raises:
        CitewiseError: unknown style (lists the valid ones).
    """

    STYLES = ("tei", "cohere")

    def __init__(
        self,
        base_url: str,
        style: str = "tei",
        model: str = "",
        api_key: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ):
        if style not in self.STYLES:
            raise CitewiseError(f"unknown rerank API style '{style}' (valid: {', '.join(self.STYLES)})")
        self.style = style
        self.model = model
        base = base_url.rstrip("/")
        if style == "cohere":
            self.url = base + ("/rerank" if base.endswith("/v1") else "/v1/rerank")
        else:
            self.url = base + "/rerank"
        self.name = f"{style}:{model or base}"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport, verify=tls_context())

    def rerank(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        texts = [p[:PASSAGE_CHARS] for p in passages]
        if self.style == "tei":
            body = {"query": query, "texts": texts, "truncate": True, "raw_scores": False}
        else:
            body = {"query": query, "documents": texts, "top_n": len(texts)}
            if self.model:
                body["model"] = self.model
        try:
            resp = self._client.post(self.url, json=body)
        except httpx.HTTPError as e:
            raise RerankError(f"{self.url}: {type(e).__name__}: {e}") from None
        if resp.status_code >= 400:
            raise RerankError(f"{self.url}: HTTP {resp.status_code}: {resp.text[:200]}")
        try:
            data = resp.json()
        except ValueError:
            raise RerankError(f"{self.url}: response is not JSON: {resp.text[:200]}") from None
        if self.style == "tei":
            return _scores_from_indexed(data, len(texts), "score", self.url)
        if not isinstance(data, dict):
            raise RerankError(f"{self.url}: expected an object with 'results', got {type(data).__name__}")
        return _scores_from_indexed(data.get("results"), len(texts), "relevance_score", self.url)


class OnnxCrossEncoder:
    """A cross-encoder exported to ONNX, from a folder with ``tokenizer.json`` and ``model.onnx``.

    Query and passage are encoded as a pair (the tokenizer's own post-processor adds the
    ``[CLS] q [SEP] p [SEP]`` template and type ids), truncated to ``max_length`` tokens, padded
    per batch. The score is the relevance logit (last column of a 2-column output).

    Args:
        folder: the model folder.
        max_length: tokens per pair (passage truncated first, as ``sentence-transformers`` does).
        batch_size: pairs per onnxruntime call.

    Raises:
        RerankError: the folder lacks either file, or onnxruntime/tokenizers cannot load them.
    """

    def __init__(self, folder: str | Path, max_length: int = 512, batch_size: int = 16):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        folder = Path(folder)
        missing = [f for f in ("tokenizer.json", "model.onnx") if not (folder / f).is_file()]
        if missing:
            raise RerankError(f"{folder}: not a cross-encoder folder (missing {', '.join(missing)})")
        try:
            self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            self.session = ort.InferenceSession(str(folder / "model.onnx"), opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - any load failure is the user's folder's fault
            raise RerankError(f"{folder}: cannot load the cross-encoder ({type(e).__name__}: {e})") from None
        self.tokenizer.enable_truncation(max_length, strategy="only_second")
        self.tokenizer.no_padding()
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.batch_size = batch_size
        self.name = f"onnx:{folder.name}"

    def rerank(self, query: str, passages: Sequence[str]) -> list[float]:
        out: list[float] = []
        for b in range(0, len(passages), self.batch_size):
            pairs = [(query, p[:PASSAGE_CHARS]) for p in passages[b : b + self.batch_size]]
            enc = self.tokenizer.encode_batch(pairs)
            width = max(len(e.ids) for e in enc)
            ids = np.zeros((len(enc), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for i, e in enumerate(enc):
                n = len(e.ids)
                ids[i, :n], mask[i, :n], types[i, :n] = e.ids, e.attention_mask, e.type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            try:
                logits = np.asarray(self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0])
            except Exception as e:  # noqa: BLE001
                raise RerankError(f"{self.name}: inference failed ({type(e).__name__}: {e})") from None
            logits = logits.reshape(len(enc), -1)
            out.extend(float(x) for x in logits[:, -1])
        return out


_POINTWISE = (
    "Rate how well the passage answers the query, from 0 (unrelated) to 10 (answers it fully). "
    "Reply with the number only."
)
_LISTWISE = (
    "Rank the {n} passages below by how well they answer the query, most relevant first. "
    "Reply with the passage numbers only, in order, like [2] > [1] > [3]."
)


#: Fewest tokens of a passage worth showing the listwise reranker; when the window cannot give
#: every passage this many, the list is ranked in overlapping windows (below).
MIN_PASSAGE_TOKENS = 80


class LLMReranker:
    """Reranking by a chat model (see module docstring). Passages reach the model fenced as data.

    Prompts fit the model's context window (:func:`citewise.models.chat.document_room`):
    pointwise, each passage is cut to what the window leaves; listwise, the passages share it,
    and when that would give a passage fewer than :data:`MIN_PASSAGE_TOKENS` the list is ranked in
    windows of as many passages as fit, sliding from the end of the list to its start by half a
    window (RankGPT's sliding window, Sun et al. 2023), so the best passages move to the front.

    Args:
        chat: a :class:`citewise.models.chat.ChatModel`.
        mode: ``pointwise`` (one call per passage, grade 0–10) or ``listwise`` (a permutation;
            score = n - position).
        passage_chars: characters of a passage shown at most.

    Raises (from :meth:`rerank`):
        RerankError: the endpoint failed, or a pointwise reply holds no number / listwise reply
            holds no passage number.
    """

    MODES = ("pointwise", "listwise")

    def __init__(self, chat: ChatModel, mode: str = "listwise", passage_chars: int = 800):
        if mode not in self.MODES:
            raise CitewiseError(f"unknown LLM rerank mode '{mode}' (valid: {', '.join(self.MODES)})")
        self.chat = chat
        self.mode = mode
        self.passage_chars = passage_chars
        self.name = f"llm-{mode}"

    def _ask(self, system: str, user: str) -> str:
        from citewise.models.chat import ChatError

        try:
            resp = self.chat.chat(
                [{"role": "system", "content": system}, {"role": "user", "content": user}], max_tokens=200
            )
        except ChatError as e:
            raise RerankError(f"{self.name}: {e}") from None
        return resp.content or ""

    def _cut(self, passage: str, tokens: int) -> str:
        from citewise.text.tokens import truncate_tokens

        return truncate_tokens(passage[: self.passage_chars], max(tokens, 1))

    def rerank(self, query: str, passages: Sequence[str]) -> list[float]:
        from citewise.models.chat import document_room

        if not passages:
            return []
        if self.mode == "pointwise":
            room = document_room(self.chat, 200, _POINTWISE, f"Query: {query}\n\n<passage>\n</passage>")
            scores = []
            for i, p in enumerate(passages):
                reply = self._ask(_POINTWISE, f"Query: {query}\n\n<passage>\n{self._cut(p, room)}\n</passage>")
                m = re.search(r"-?\d+(?:\.\d+)?", reply)
                if not m:
                    raise RerankError(f"{self.name}: no grade in the reply for passage {i + 1}: {reply[:80]!r}")
                scores.append(float(m.group()))
            return scores
        n = len(passages)
        room = document_room(self.chat, 200, _LISTWISE.format(n=n), f"Query: {query}")
        per = room // n - 12  # the "[i] <passage>" wrapper
        if per >= MIN_PASSAGE_TOKENS or n <= 2:
            order = self._rank(query, list(passages), max(per, 16))
        else:
            width = max(2, room // (MIN_PASSAGE_TOKENS + 12))
            order = list(range(n))
            start = max(0, n - width)
            while True:
                window = order[start : start + width]
                ranked = self._rank(query, [passages[i] for i in window], room // len(window) - 12)
                order[start : start + width] = [window[j] for j in ranked]
                if start == 0:
                    break
                start = max(0, start - max(1, width // 2))
        scores = [0.0] * n
        for pos, i in enumerate(order):
            scores[i] = float(n - pos)
        return scores

    def _rank(self, query: str, passages: list[str], tokens: int) -> list[int]:
        """One listwise call: the passages' indices, most relevant first (left-out ones after, in order)."""
        body = "\n\n".join(f"[{i}] <passage>\n{self._cut(p, tokens)}\n</passage>" for i, p in enumerate(passages, 1))
        reply = self._ask(_LISTWISE.format(n=len(passages)), f"Query: {query}\n\n{body}")
        order: list[int] = []
        for m in re.finditer(r"\[(\d+)\]", reply):
            i = int(m.group(1)) - 1
            if 0 <= i < len(passages) and i not in order:
                order.append(i)
        if not order:
            raise RerankError(f"{self.name}: no passage numbers in the reply: {reply[:80]!r}")
        return order + [i for i in range(len(passages)) if i not in order]


def make_reranker(spec: str) -> Reranker:
    """Build a reranker from a spec string (module docstring; :data:`RERANKER_SPECS`).

    ``cohere:`` reads an API key from ``CITEWISE_RERANK_API_KEY`` when set.

    Raises:
        CitewiseError: an unknown spec (listing the valid forms), a missing model folder, or no
            LLM endpoint configured for ``llm*``.
    """
    import os

    kind, _, arg = spec.partition(":")
    if kind in ("tei", "cohere") and arg:
        url, _, model = arg.partition("#")
        return HttpReranker(url, kind, model=model, api_key=os.environ.get("CITEWISE_RERANK_API_KEY"))
    if kind == "onnx" and arg:
        return OnnxCrossEncoder(arg)
    if spec in ("llm", "llm-listwise", "llm-pointwise"):
        from citewise.models.chat import ChatConfig, OpenAIChatModel

        return LLMReranker(
            OpenAIChatModel(ChatConfig.from_env("reranker")), "pointwise" if spec == "llm-pointwise" else "listwise"
        )
    raise CitewiseError(f"unknown reranker '{spec}' (valid: {', '.join(RERANKER_SPECS)})")


def passage_text(chunk: StoredChunk) -> str:
    """What a reranker reads for a stored chunk: title, heading path and text."""
    head = " > ".join(h for h in chunk.heading_path if h)
    parts = [chunk.title] if chunk.title and chunk.title not in chunk.heading_path[:1] else []
    if head:
        parts.append(head)
    parts.append(chunk.text)
    return "\n".join(parts)


class RerankingRetriever:
    """Any retriever, with its top ``depth`` candidates reordered by a :class:`Reranker`.

    Hits below ``depth`` keep their base order after the reranked ones. Ties in the rerank score
    break by base rank. On :class:`RerankError` the base order is returned and a warning logged
    (``citewise.rerank``); ``last_error`` keeps the message.

    Args:
        base: the retriever giving candidates (it applies permissions and filters).
        reranker: the scorer.
        store: where the candidates' text is read (``get_chunks``).
        depth: candidates reranked (at least k is fetched).
    """

    def __init__(self, base: Retriever, reranker: Reranker, store: Store, depth: int = RERANK_DEPTH):
        self.base = base
        self.reranker = reranker
        self.store = store
        self.depth = depth
        self.name = f"{base.name}+rerank"
        self.last_error = ""

    def search(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        hits = self.base.search(query, max(k, self.depth), principal=principal, filters=filters)
        head, tail = hits[: self.depth], hits[self.depth :]
        self.last_error = ""
        try:
            chunks = self.store.get_chunks([h.chunk_id for h in head])
            scores = self.reranker.rerank(
                query, [passage_text(chunks[h.chunk_id]) if h.chunk_id in chunks else h.title for h in head]
            )
            if len(scores) != len(head):
                raise RerankError(f"{self.reranker.name}: {len(scores)} scores for {len(head)} passages")
        except RerankError as e:
            self.last_error = str(e)
            log.warning("reranker failed, keeping the %s order: %s", self.base.name, e)
            return [dataclasses.replace(h, rank=i) for i, h in enumerate(hits[:k], start=1)]
        order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
        out = [dataclasses.replace(head[i], score=float(scores[i]), stage="rerank") for i in order] + tail
        return [dataclasses.replace(h, rank=i) for i, h in enumerate(out[:k], start=1)]
