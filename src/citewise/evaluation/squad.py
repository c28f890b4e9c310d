"""Answer evaluation on SQuAD 2.0 dev: retrieval + extractive answers over all 1,204 paragraphs.

Every paragraph becomes a document (``doc_id`` = ``<article>/<n>``, title = the article title);
every question is answered through retrieval (the question does not say which paragraph it is
about), so this measures the whole pipeline: retrieval, evidence score and abstention, sentence
choice, short-answer extraction and citations.

Metrics (Rajpurkar et al. 2018, SQuAD 2.0; official ``evaluate-v2.0.py`` definitions):

* **exact match / F1** of the short answer (:attr:`Answer.short`; '' when the answer abstains)
  against every gold answer, maximum over gold answers; an unanswerable question's gold is
  the empty string. Normalisation as in the official script: lowercase, remove punctuation,
  remove the articles *a*, *an*, *the*, collapse whitespace. F1 is over normalised tokens; when
  the prediction or the gold is empty, F1 = EM. Reported overall, on answerable
  (``HasAns``) and on unanswerable (``NoAns``) questions; ``NoAns`` exact match is the no-answer
  accuracy (share of unanswerable questions abstained).
* **abstention precision / recall** with abstention as the positive class and the unanswerable
  questions as the truth: precision = abstentions on unanswerable / all abstentions; recall =
  abstentions on unanswerable / unanswerable questions.
* **citation precision**: over answerable questions that were answered, cited paragraphs that
  are the question's gold paragraph / all cited paragraphs; **gold cited** = share of those
  answers citing the gold paragraph at all.
* **answer in quote**: share of answered answerable questions whose quoted sentences contain a
  gold answer (normalised substring): how often the extractive answer shows the answer, whatever
  the short-answer heuristic picked.

The abstention threshold is calibrated on a deterministic half of the questions (sorted by
sha256 of the id; objective of :mod:`citewise.answer.calibrate`: answered with the gold
paragraph cited + abstained on unanswerable) and metrics are reported on the other half and
on all questions. Question embeddings are computed in one batch, and the answer units of every
paragraph once, so the whole dev set runs in minutes.
"""

from __future__ import annotations

import collections
import hashlib
import json
import re
import string
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from citewise.core import Document, InputError
from citewise.text.loaders import sha256_hex

SQUAD_FILES = ("dev-v2.0.json", "dev-v2.0.reconstructed.json")


# -- official normalisation and scores (evaluate-v2.0.py) -------------------------------------
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)


def squad_split(title: str) -> str:
    """``train`` or ``test`` for a SQuAD article: first byte of sha256 of its title even ->
    ``train``. The 35 dev articles split 19 / 16.

    >>> squad_split("Normans") in ("train", "test")
    True
    """
    return "train" if hashlib.sha256(title.encode("utf-8")).digest()[0] % 2 == 0 else "test"


def normalize_answer(s: str) -> str:
    """Lowercase, remove punctuation, articles and extra whitespace (official SQuAD v2).

    >>> normalize_answer("The  Norman-French, a people!")
    'normanfrench people'
    """
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(prediction: str, gold: str) -> int:
    """1 if the normalised strings are equal, else 0."""
    return int(normalize_answer(prediction) == normalize_answer(gold))


def f1_score(prediction: str, gold: str) -> float:
    """Token-level F1 of normalised strings; if either is empty, 1.0 when both are, else 0.0."""
    p = normalize_answer(prediction).split()
    g = normalize_answer(gold).split()
    if not p or not g:
        return float(p == g)
    common = collections.Counter(p) & collections.Counter(g)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def best_scores(prediction: str, golds: Sequence[str]) -> tuple[int, float]:
    """``(EM, F1)`` maximised over gold answers; no gold answers means gold = ''."""
    golds = [g for g in golds if normalize_answer(g)] or [""]
    return max(exact_match(prediction, g) for g in golds), max(f1_score(prediction, g) for g in golds)


# -- data ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SquadQuestion:
    """One SQuAD question with its paragraph's document id and gold answer texts."""

    qid: str
    question: str
    doc_id: str
    answers: tuple[str, ...]
    impossible: bool


@dataclass
class SquadData:
    """Paragraph documents and questions of one SQuAD v2 file."""

    path: Path
    documents: list[Document]
    questions: list[SquadQuestion]


def _slug(title: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", title).strip("_") or "article"


def find_squad_file(directory: str | Path) -> Path:
    """The SQuAD v2 JSON inside ``directory`` (or ``directory`` itself if it is the file).

    Raises:
        InputError: no such file.
    """
    p = Path(directory)
    if p.is_file():
        return p
    for name in SQUAD_FILES:
        if (p / name).is_file():
            return p / name
    raise InputError(str(p), f"no SQuAD v2 file here (expected one of: {', '.join(SQUAD_FILES)})")


def load_squad(directory: str | Path) -> SquadData:
    """Read a SQuAD v2 JSON file into paragraph documents and questions.

    Raises:
        InputError: unreadable file, not JSON, or missing fields (the path in the data named).
    """
    path = find_squad_file(directory)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        articles = data["data"]
    except OSError as e:
        raise InputError(str(path), f"cannot read: {e.strerror or e}") from None
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise InputError(str(path), f"not a SQuAD v2 file ({type(e).__name__}: {e})") from None
    docs: list[Document] = []
    questions: list[SquadQuestion] = []
    for ai, art in enumerate(articles):
        try:
            title = str(art["title"])
            for pi, para in enumerate(art["paragraphs"]):
                ctx = str(para["context"])
                doc_id = f"{_slug(title)}/{pi}"
                docs.append(
                    Document(
                        doc_id=doc_id,
                        title=title.replace("_", " "),
                        text=ctx,
                        source=f"{path}#data[{ai}].paragraphs[{pi}]",
                        format="squad",
                        content_hash=sha256_hex(ctx.encode("utf-8")),
                    )
                )
                for qa in para["qas"]:
                    impossible = bool(qa.get("is_impossible", False))
                    answers = tuple(str(a["text"]) for a in qa.get("answers", []))
                    questions.append(
                        SquadQuestion(
                            str(qa["id"]), str(qa["question"]), doc_id, () if impossible else answers, impossible
                        )
                    )
        except (KeyError, TypeError) as e:
            raise InputError(
                str(path),
                f"data[{ai}] ('{art.get('title', '?') if isinstance(art, dict) else '?'}'): missing field {e}",
            ) from None
    return SquadData(path, docs, questions)


def sample_questions(questions: Sequence[SquadQuestion], limit: int | None) -> list[SquadQuestion]:
    """All questions, or ``limit`` of them chosen deterministically (sorted by sha256 of the id)."""
    if limit is None or limit >= len(questions):
        return list(questions)
    return sorted(questions, key=lambda q: hashlib.sha256(q.qid.encode()).hexdigest())[:limit]


def calibration_half(qid: str) -> bool:
    """Whether a question belongs to the calibration (train) half: first sha256 byte even."""
    return hashlib.sha256(qid.encode()).digest()[0] % 2 == 0


# -- evaluation -------------------------------------------------------------------------------
@dataclass
class Prediction:
    """What the answerer did for one question (threshold not yet applied)."""

    q: SquadQuestion
    score: float
    generator_answered: bool
    short: str
    quote: str
    cited: list[str] = field(default_factory=list)


def _metrics(preds: Sequence[Prediction], threshold: float) -> dict:
    n = len(preds)
    em = f1 = 0.0
    has = [p for p in preds if not p.q.impossible]
    no = [p for p in preds if p.q.impossible]
    has_em = has_f1 = no_em = 0.0
    abst_tp = abst_all = 0
    cited_gold = cited_total = answered_has = gold_cited = in_quote = 0
    for p in preds:
        answered = p.generator_answered and p.score >= threshold
        e, f = best_scores(p.short if answered else "", p.q.answers)
        em += e
        f1 += f
        if p.q.impossible:
            no_em += e
        else:
            has_em += e
            has_f1 += f
        if not answered:
            abst_all += 1
            abst_tp += p.q.impossible
        elif not p.q.impossible:
            answered_has += 1
            cited_total += len(p.cited)
            cited_gold += sum(1 for d in p.cited if d == p.q.doc_id)
            gold_cited += p.q.doc_id in p.cited
            quote = normalize_answer(p.quote)
            in_quote += any(normalize_answer(a) and normalize_answer(a) in quote for a in p.q.answers)

    def r(x: float, d: int) -> float | None:
        return round(x / d, 4) if d else None

    return {
        "questions": n,
        "answerable": len(has),
        "unanswerable": len(no),
        "exact": r(100 * em, n),
        "f1": r(100 * f1, n),
        "HasAns_exact": r(100 * has_em, len(has)),
        "HasAns_f1": r(100 * has_f1, len(has)),
        "NoAns_exact": r(100 * no_em, len(no)),
        "no_answer_accuracy": r(no_em, len(no)),
        "abstention_precision": r(abst_tp, abst_all),
        "abstention_recall": r(abst_tp, len(no)),
        "answered_answerable": answered_has,
        "citation_precision": r(cited_gold, cited_total),
        "gold_cited": r(gold_cited, answered_has),
        "answer_in_quote": r(in_quote, answered_has),
    }


def choose_squad_threshold(preds: Sequence[Prediction]) -> float:
    """Threshold maximising the summed F1 of ``preds`` (the calibration half): an answered
    question scores its short answer's F1, an abstained one 1 when it is unanswerable;
    midpoint of the best interval, lowest on ties."""
    items = sorted(preds, key=lambda p: p.score)
    ok_if_answered = [best_scores(p.short, p.q.answers)[1] if p.generator_answered else 0.0 for p in items]
    ok_if_abstained = [float(p.q.impossible) for p in items]
    # threshold between items[i-1] and items[i]: items[:i] abstain, items[i:] answer (if generated)
    answered_ok_suffix = [0.0] * (len(items) + 1)
    for i in range(len(items) - 1, -1, -1):
        answered_ok_suffix[i] = answered_ok_suffix[i + 1] + ok_if_answered[i]
    # items the generator abstained on count as abstained whatever the threshold
    gen_abst_ok_suffix = [0.0] * (len(items) + 1)
    for i in range(len(items) - 1, -1, -1):
        gen_abst_ok_suffix[i] = gen_abst_ok_suffix[i + 1] + (ok_if_abstained[i] and not items[i].generator_answered)
    best, best_i, prefix = -1.0, 0, 0.0
    for i in range(len(items) + 1):
        value = prefix + gen_abst_ok_suffix[i] + answered_ok_suffix[i]
        if value > best:
            best, best_i = value, i
        if i < len(items):
            prefix += ok_if_abstained[i]
    if best_i == 0:
        return 0.0
    lo = items[best_i - 1].score
    hi = items[best_i].score if best_i < len(items) else lo + 1.0
    return round((lo + hi) / 2, 4)


def evaluate_squad(
    index,
    data: SquadData,
    limit: int | None = None,
    retriever: str = "shipped",
    k: int = 5,
    threshold: float | None = None,
    progress: Callable[[int], None] | None = None,
    articles: str | None = None,
) -> dict:
    """Ingest ``data``'s paragraphs into ``index`` (incremental), answer the questions with the
    extractive generator and return the metrics of the module docstring.

    Args:
        index: a :class:`citewise.index.Index`.
        limit: answer only this many questions (deterministic sample).
        threshold: fixed abstention threshold (default: calibrated on the train half).
        progress: called with the number of questions done since the last call.
        articles: ``test`` or ``train``: only questions of those articles
            (:func:`squad_split`; the answer selector is
            trained on ``train``), None: all.
    """
    from citewise.answer.calibrate import COLLECT_THRESHOLD
    from citewise.answer.pipeline import Answerer
    from citewise.answer.unit_cache import UnitCache
    from citewise.evaluation.beir import PrecomputedEmbedder
    from citewise.retrieval.retrievers import make_retriever

    t0 = time.perf_counter()
    report = index.ingestor().ingest_documents(data.documents)
    t_ingest = time.perf_counter() - t0
    pool = data.questions
    if articles is not None:
        titles = {d.doc_id: d.title.replace(" ", "_") for d in data.documents}
        pool = [q for q in pool if squad_split(titles[q.doc_id]) == articles]
    questions = sample_questions(pool, limit)
    t1 = time.perf_counter()
    qemb = PrecomputedEmbedder(index.embedder, [q.question for q in questions])
    t_qemb = time.perf_counter() - t1
    units = UnitCache(index.embedder, max_chunks=max(20000, len(data.documents) * 4), store=index.store)
    t2 = time.perf_counter()
    all_chunks = _all_chunks(index.store, [d.doc_id for d in data.documents])
    units.warm(all_chunks)
    t_units = time.perf_counter() - t2
    answerer = Answerer(
        make_retriever(retriever, index.store, qemb),
        index.store,
        index.embedder,
        threshold=COLLECT_THRESHOLD,
        units=units,
    )
    t3 = time.perf_counter()
    preds: list[Prediction] = []
    for i, q in enumerate(questions):
        a = answerer.answer(q.question, k=k, qvec=qemb.embed([q.question])[0])
        score = float(a.evidence.get("score", 0.0)) if a.evidence else 0.0
        preds.append(
            Prediction(
                q,
                score,
                a.outcome != "abstained",
                a.short,
                a.text if a.outcome != "abstained" else "",
                list(dict.fromkeys(c.doc_id for c in a.citations)),
            )
        )
        if progress and (i + 1) % 50 == 0:
            progress(50)
    if progress:
        progress(len(questions) % 50)
    t_answer = time.perf_counter() - t3
    train = [p for p in preds if calibration_half(p.q.qid)]
    test = [p for p in preds if not calibration_half(p.q.qid)]
    chosen = threshold if threshold is not None else choose_squad_threshold(train)
    return {
        "dataset": str(data.path),
        "paragraphs": len(data.documents),
        "retriever": retriever,
        "k": k,
        "embedder": index.embedder.name,
        "generator": "extractive",
        "threshold": chosen,
        "threshold_source": "given" if threshold is not None else "calibrated on the train half",
        "all": _metrics(preds, chosen),
        "test": _metrics(test, chosen),
        "train": _metrics(train, chosen),
        "no_threshold": _metrics(preds, COLLECT_THRESHOLD),
        "articles": articles or "all",
        "always_abstain_f1": {
            "all": round(100 * sum(p.q.impossible for p in preds) / max(len(preds), 1), 4),
            "test": round(100 * sum(p.q.impossible for p in test) / max(len(test), 1), 4),
        },
        "seconds": {
            "ingest": round(t_ingest, 1),
            "embed_questions": round(t_qemb, 1),
            "embed_units": round(t_units, 1),
            "answer": round(t_answer, 1),
            "per_question_ms": round(1000 * t_answer / max(len(questions), 1), 1),
        },
        "chunks_embedded": report.chunks_embedded,
        "index": str(index.path),
    }


def _all_chunks(store, doc_ids: Iterable[str]) -> list:
    """Every stored chunk of these documents (chunk ids sorted per document), to embed their
    answer units up front."""
    versions = store.chunk_versions()
    ids = [c for d in sorted(set(doc_ids)) for c in sorted({cid for cid, _, _ in versions.get(d, ())})]
    out = []
    for i in range(0, len(ids), 500):
        got = store.get_chunks(ids[i : i + 500])
        out.extend(got[c] for c in ids[i : i + 500] if c in got)
    return out
