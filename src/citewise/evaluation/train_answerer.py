"""Train the answer selector (``citewise train-answerer``): labelled questions -> unit features
-> a listwise linear model (:mod:`citewise.answer.select.model`).

Training data, each question answered through the same pipeline as ``ask`` (retrieval, evidence,
context assembly), so the features are those the model sees at query time:

* **SQuAD 2.0 dev** (``--squad``): the answerable questions of the *train* articles
  (:func:`squad_split`: first byte of sha256 of the article title even); a unit is labelled 1
  when it holds a gold answer (normalised as the official script). The *test* articles are never
  read here; ``eval squad --articles test`` reports on them.
* **answer sets** (``--set``, repeatable; the real-docs format of
  :mod:`citewise.evaluation.answer_set`) over an index (``--index``): the in-scope questions; a
  unit is labelled 1 when it holds an expected span (:func:`~citewise.evaluation.answer_set.span_in`).

Questions whose context holds no labelled unit, or only labelled units, teach nothing and are
skipped. A fifth of the questions (every fifth by sha256 of the question text) is held out to
report the top-1 accuracy of the fitted model beside cosine alone; the model is then refitted on
all of them and written to ``--out`` (default: the packaged ``citewise/answer/data/selector.json``).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from citewise.answer.select.features import FEATURES
from citewise.answer.select.model import TREE_PARAMS, TREE_ROUNDS, SelectorModel, fit, fit_trees, listwise_loss
from citewise.answer.select.span import SPAN_FEATURES
from citewise.evaluation.squad import squad_split  # noqa: F401 - re-exported

TREE_LEAVES = TREE_PARAMS["num_leaves"]


def _held(text: str) -> bool:
    return hashlib.sha256(text.encode("utf-8")).digest()[0] % 5 == 0


@dataclass
class Group:
    """One question's candidates: features ``x`` (n, F), labels ``y`` (n,), and its source."""

    source: str
    question: str
    x: np.ndarray
    y: np.ndarray


@dataclass
class Collected:
    """Groups collected from one source, with counts of what was skipped."""

    groups: list[Group] = field(default_factory=list)
    asked: int = 0
    abstained: int = 0
    no_label: int = 0


def collect(
    answerer,
    questions: Iterable[tuple[str, Callable[[str], bool]]],
    source: str,
    k: int = 5,
    qvecs: dict[str, np.ndarray] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Collected:
    """Candidates and labels for ``questions`` (``(text, holds(unit_text) -> bool)``) through
    ``answerer`` (:class:`~citewise.answer.pipeline.Answerer` with the extractive generator)."""
    from citewise.retrieval.retrievers import effective_filters

    out = Collected()
    gen = answerer.generator
    f = effective_filters(None, None)
    for text, holds in questions:
        out.asked += 1
        a = answerer.assess(text, k, qvec=(qvecs or {}).get(text))
        if a.reason is not None or not a.hits:
            out.abstained += 1
            continue
        context = answerer.context_of(a)
        _, cands, _ = gen.rank(a.question or text, context, a.qvec, idf=lambda t: answerer.scorer.idf(t, f))
        y = np.array([1.0 if holds(c.unit.text) else 0.0 for c in cands])
        if len(y) < 2 or not 0 < y.sum() < len(y):
            out.no_label += 1
            continue
        out.groups.append(Group(source, text, np.vstack([c.features for c in cands]), y))
        if progress:
            progress(1)
    return out


def top1(model_scores: Callable[[np.ndarray], np.ndarray], groups: Sequence[Group]) -> float:
    """Share of ``groups`` whose best-scoring unit is labelled 1."""
    if not groups:
        return float("nan")
    return float(np.mean([g.y[int(np.argmax(model_scores(g.x)))] for g in groups]))


#: ``--model`` choices of :func:`train`.
MODELS = ("linear", "trees")


def _describe(model: str) -> str:
    return "listwise linear (ListNet top-one, Adam, L2 1e-3)" + (
        f" + {TREE_ROUNDS} boosted trees (LightGBM, the same listwise loss, {TREE_LEAVES} leaves)"
        if model == "trees"
        else ""
    )


def _fit(groups: Sequence[Group], model: str, features: Sequence[str] = FEATURES) -> SelectorModel:
    pairs = [(g.x, g.y) for g in groups]
    m = fit(pairs, features=features)
    return fit_trees(m, pairs) if model == "trees" else m


def train(groups: Sequence[Group], info: dict, model: str = "linear") -> tuple[SelectorModel, dict]:
    """Fit on 4/5 of ``groups``, report held-out top-1 (model vs cosine alone, and the linear
    part alone for ``trees``) and the loss, then refit on all; returns the final model (``info``
    and the report stored in it) and the report. ``model``: one of :data:`MODELS`."""
    held = [g for g in groups if _held(g.question)]
    fitted = [g for g in groups if not _held(g.question)]
    m = _fit(fitted, model)
    cos = FEATURES.index("cos")
    report = {
        "questions": len(groups),
        "fitted": len(fitted),
        "held_out": len(held),
        "held_out_top1_model": round(top1(m.score, held), 4),
        "held_out_top1_linear": round(top1(m.linear, held), 4),
        "held_out_top1_cosine": round(top1(lambda x: x[:, cos], held), 4),
        "held_out_loss": round(listwise_loss(m, [(g.x, g.y) for g in held]), 4),
        "by_source": {},
    }
    for src in sorted({g.source for g in groups}):
        hs = [g for g in held if g.source == src]
        report["by_source"][src] = {
            "questions": sum(g.source == src for g in groups),
            "held_out": len(hs),
            "top1_model": round(top1(m.score, hs), 4),
            "top1_linear": round(top1(m.linear, hs), 4),
            "top1_cosine": round(top1(lambda x: x[:, cos], hs), 4),
        }
    by_corpus: dict[str, list[Group]] = {}
    for g in held:
        by_corpus.setdefault("squad" if g.source.startswith("squad") else "sets", []).append(g)
    report["held_out_by_corpus"] = {
        name: {
            "questions": len(hs),
            "top1_model": round(top1(m.score, hs), 4),
            "top1_linear": round(top1(m.linear, hs), 4),
            "top1_cosine": round(top1(lambda x: x[:, cos], hs), 4),
        }
        for name, hs in sorted(by_corpus.items())
    }
    final = _fit(groups, model)
    final.info = {**info, "report": report, "trained": time.strftime("%Y-%m-%d")}
    return final, report


def save_groups(groups: Sequence[Group], path: str | Path) -> None:
    """Write collected groups to an ``.npz`` file (read back by :func:`load_groups`), so a model
    can be refitted without answering every training question again."""
    arrays: dict[str, np.ndarray] = {
        "source": np.array([g.source for g in groups]),
        "question": np.array([g.question for g in groups]),
        "sizes": np.array([len(g.y) for g in groups], dtype=np.int64),
        "features": np.array(FEATURES),
    }
    if groups:
        arrays["x"] = np.vstack([g.x for g in groups])
        arrays["y"] = np.concatenate([g.y for g in groups])
    np.savez_compressed(path, **arrays)


def load_groups(path: str | Path) -> list[Group]:
    """Groups written by :func:`save_groups`.

    Raises:
        CitewiseError: unreadable file, or groups collected for other features than
            :data:`FEATURES`.
    """
    from citewise.core import CitewiseError

    try:
        with np.load(path, allow_pickle=False) as z:
            if tuple(str(f) for f in z["features"]) != FEATURES:
                raise CitewiseError(f"{path}: groups were collected for other features; collect them again")
            sizes = z["sizes"]
            x = z["x"] if len(sizes) else np.zeros((0, len(FEATURES)))
            y = z["y"] if len(sizes) else np.zeros(0)
            ends = np.cumsum(sizes)
            return [
                Group(str(src), str(q), x[e - n : e], y[e - n : e])
                for src, q, n, e in zip(z["source"], z["question"], sizes, ends)
            ]
    except (OSError, KeyError, ValueError) as e:
        raise CitewiseError(f"{path}: cannot read training groups ({e})") from None


def _answerable(data, split: str) -> list:
    """The answerable SQuAD questions of ``split``'s articles (:func:`squad_split`), in sha256
    order of their id (deterministic)."""
    titles = {d.doc_id: d.title for d in data.documents}
    qs = [q for q in data.questions if not q.impossible and squad_split(titles[q.doc_id].replace(" ", "_")) == split]
    return sorted(qs, key=lambda q: hashlib.sha256(q.qid.encode()).hexdigest())


def squad_questions(data, split: str = "train", limit: int | None = None):
    """``(text, holds)`` of the answerable SQuAD questions of ``split``'s articles (deterministic
    order: sha256 of the id)."""
    from citewise.evaluation.squad import normalize_answer

    for q in _answerable(data, split)[:limit]:
        golds = [normalize_answer(a) for a in q.answers if normalize_answer(a)]
        yield q.question, (lambda text, golds=golds: any(g in normalize_answer(text) for g in golds))


def set_questions(path: str | Path, doc_ids: Iterable[str]):
    """``(text, holds)`` of an answer set's in-scope questions."""
    from citewise.evaluation.answer_set import normalise, read_answer_set, span_in

    for q in read_answer_set(path, doc_ids):
        if q.kind != "in_scope" or not q.expected_answer:
            continue
        spans = list(q.expected_answer)
        yield q.text, (lambda text, spans=spans: any(span_in(normalise(s), normalise(text)) for s in spans))


def run_training(
    squad: str | Path | None,
    squad_index: str | Path | None,
    sets: Sequence[str | Path],
    index: str | Path | None,
    out: str | Path | None,
    squad_limit: int | None = 3000,
    k: int = 5,
    log: Callable[[str], None] = print,
    model: str = "linear",
    groups_in: Sequence[str | Path] = (),
    groups_out: str | Path | None = None,
    span_out: str | Path | None = None,
    span_model: str = "trees",
) -> dict:
    """``citewise train-answerer``: collect groups from SQuAD's train articles and from the answer
    sets (and/or read groups saved before: ``groups_in``), fit ``model`` (:data:`MODELS`), write
    it (``out``; default: the packaged file) and return the report. ``groups_out``: also save the
    collected groups (:func:`save_groups`). With ``squad``, the span model (``span_model``, one of
    :data:`MODELS`) is fitted too (:func:`span_groups`) and written to ``span_out`` (default: the
    packaged ``span.json``).

    Raises:
        CitewiseError: no source given, an unknown model, or no usable question collected.
    """
    from citewise.core import CitewiseError
    from citewise.index import Index

    if not squad and not sets and not groups_in:
        raise CitewiseError("train-answerer: give --squad DIR and/or --set FILE (with --index), or --groups FILE")
    for flag, value in (("--model", model), ("--span-model", span_model)):
        if value not in MODELS:
            raise CitewiseError(f"train-answerer: {flag} must be one of {', '.join(MODELS)}, not {value!r}")
    groups: list[Group] = []
    info: dict = {"model": _describe(model), "k": k, "sources": {}}
    for path in groups_in:
        got_groups = load_groups(path)
        log(f"{Path(path).name}: {len(got_groups)} groups read")
        groups += got_groups
        info["sources"][Path(path).name] = {"used": len(got_groups)}
    if squad:
        from citewise.evaluation.beir import PrecomputedEmbedder
        from citewise.evaluation.squad import load_squad
        from citewise.retrieval.retrievers import make_retriever
        from citewise.answer.calibrate import COLLECT_THRESHOLD
        from citewise.answer.pipeline import Answerer
        from citewise.answer.unit_cache import UnitCache

        data = load_squad(squad)
        spans_got = span_groups(data, "train")
        fitted_span = _fit(spans_got, span_model, SPAN_FEATURES)
        fitted_span.info = {
            "model": _describe(span_model),
            "trained_on": f"SQuAD 2.0 dev, train articles: {len(spans_got)} answerable questions, the sentence "
            "holding a gold answer; each span labelled with its token F1 against the gold answers",
            "test_articles": span_f1(fitted_span, data, "test"),
            "trained": time.strftime("%Y-%m-%d"),
        }
        span_target = (
            Path(span_out) if span_out else Path(__file__).resolve().parents[1] / "answer" / "data" / "span.json"
        )
        fitted_span.save(span_target)
        log(
            f"span model: {len(spans_got)} questions; test articles, sentence given: F1 "
            f"{fitted_span.info['test_articles']['f1_model']} (answer-type rule "
            f"{fitted_span.info['test_articles']['f1_rule']}); written to {span_target}"
        )
        if squad_index is None:
            raise CitewiseError("train-answerer: --squad needs --squad-index (the index 'citewise eval squad' builds)")
        idx = Index.open(squad_index)
        idx.ingestor().ingest_documents(data.documents)
        qs = list(squad_questions(data, "train", squad_limit))
        qemb = PrecomputedEmbedder(idx.embedder, [t for t, _ in qs])
        units = UnitCache(idx.embedder, max_chunks=20000, store=idx.store)
        answerer = Answerer(
            make_retriever("shipped", idx.store, qemb),
            idx.store,
            idx.embedder,
            threshold=COLLECT_THRESHOLD,
            units=units,
        )
        got = collect(answerer, qs, "squad-train", k, qvecs={t: qemb.embed([t])[0] for t, _ in qs})
        log(
            f"squad train articles: {got.asked} asked, {len(got.groups)} used, {got.abstained} abstained, "
            f"{got.no_label} without a labelled unit"
        )
        groups += got.groups
        info["sources"]["squad"] = {
            "file": Path(data.path).name,
            "split": "train articles (squad_split)",
            "asked": got.asked,
            "used": len(got.groups),
        }
    if sets:
        if index is None:
            raise CitewiseError("train-answerer: --set needs --index (the index of the set's corpus)")
        idx = Index.open(index)
        answerer = idx.answerer()
        doc_ids = list(idx.store.documents())
        for path in sets:
            got = collect(answerer, set_questions(path, doc_ids), Path(path).stem, k)
            log(
                f"{Path(path).name}: {got.asked} asked, {len(got.groups)} used, {got.abstained} abstained, "
                f"{got.no_label} without a labelled unit"
            )
            groups += got.groups
            info["sources"][Path(path).name] = {"asked": got.asked, "used": len(got.groups)}
    if not groups:
        raise CitewiseError("train-answerer: no question gave both an answering and another unit")
    if groups_out:
        save_groups(groups, groups_out)
    fitted, report = train(groups, info, model)
    target = Path(out) if out else Path(__file__).resolve().parents[1] / "answer" / "data" / "selector.json"
    fitted.save(target)
    log(
        f"held-out top-1: model {report['held_out_top1_model']:.3f} (linear part {report['held_out_top1_linear']:.3f}) "
        f"vs cosine {report['held_out_top1_cosine']:.3f} ({report['held_out']} questions); written to {target}"
    )
    return report


# -- the span model ---------------------------------------------------------------------------------
def _answer_sentences(data, split: str, limit: int | None):
    """``(question, sentence)`` for the answerable SQuAD questions of ``split``'s articles (sha256
    order of the id, at most ``limit``) whose paragraph has a sentence holding a gold answer
    (normalised): its first such sentence."""
    from citewise.evaluation.squad import normalize_answer
    from citewise.text.sentences import split_sentences

    texts = {d.doc_id: d.text for d in data.documents}
    for q in _answerable(data, split)[:limit]:
        golds = [normalize_answer(a) for a in q.answers if normalize_answer(a)]
        text = texts[q.doc_id]
        sentence = next(
            (text[s:e] for s, e in split_sentences(text) if any(g in normalize_answer(text[s:e]) for g in golds)),
            None,
        )
        if sentence is not None:
            yield q, sentence


def span_groups(data, split: str, limit: int | None = None) -> list[Group]:
    """One group per answerable SQuAD question of ``split``'s articles whose paragraph has a
    sentence holding a gold answer (normalised): that sentence's candidate spans
    (:func:`citewise.answer.select.span.spans`), each labelled with its token F1 against the
    gold answers (the SQuAD metric, 0..1: the listwise loss then gives an exact span the most
    weight and a span with one extra word of three less). Groups whose spans all score 0 are left
    out."""
    from citewise.answer.question import analyze_question
    from citewise.answer.select.span import _join, spans, tokens
    from citewise.evaluation.squad import best_scores

    out: list[Group] = []
    for q, sentence in _answer_sentences(data, split, limit):
        qa = analyze_question(q.question)
        toks = tokens(sentence)
        cands, x = spans(qa, toks)
        y = np.array([best_scores(_join(toks[i:j]), q.answers)[1] for i, j in cands])
        if len(y) > 1 and 0 < y.sum() < len(y):
            out.append(Group("squad-" + split, q.question, x.astype(np.float64), y))
    return out


def span_f1(model: SelectorModel, data, split: str, limit: int | None = None) -> dict:
    """Mean token F1 (%) of the span ``model`` picks from the sentence holding a gold answer, over
    the answerable questions of ``split``'s articles that have one (the reading step alone: the
    sentence is given), beside the fallback answer-type rule
    (:func:`citewise.answer.select.short.short_answer`)."""
    from citewise.answer.question import analyze_question
    from citewise.answer.select.short import short_answer
    from citewise.answer.select.span import best_span
    from citewise.evaluation.squad import best_scores

    got, rule = [], []
    for q, sentence in _answer_sentences(data, split, limit):
        qa = analyze_question(q.question)
        got.append(best_scores(best_span(qa, sentence, model), q.answers)[1])
        rule.append(best_scores(short_answer(qa, sentence), q.answers)[1])
    return {
        "questions": len(got),
        "f1_model": round(100 * float(np.mean(got)), 2) if got else None,
        "f1_rule": round(100 * float(np.mean(rule)), 2) if rule else None,
    }
