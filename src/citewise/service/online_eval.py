"""Sampled online evaluation of the service's answers, feeding ``/metrics``.

The tool-calling design document: "sampled online eval (5-10 % of production requests) with a
subset of metrics that do not require ground truth (faithfulness, answer relevance)", exposed as
Prometheus gauges that an alert watches (``RAGFaithfulnessLow``: 30-minute average below 0.80 for
10 minutes, ``deploy/prometheus/citewise.rules.yml``).

* **Sampling**: exactly ``rate`` of the answered (non-abstained) requests, deterministically: a
  request is evaluated when the running total ``n * rate`` passes a whole number (with 0.05, the
  20th, 40th, ... answer). Abstentions make no claim and are not sampled.
* **Scoring** runs on one background thread (a bounded queue; when it is full the sample is
  dropped and counted, the request never waits):

  - with a configured judge (:mod:`citewise.evaluation.llm_judge`), faithfulness = supported
    claims / claims and answer relevance = mean cosine of questions generated from the answer
    (:class:`citewise.answer.judges.ClaimJudge`, the RAGAS definitions);
  - without one, faithfulness of an *extractive* answer is measured exactly: the share of its
    sentences found verbatim (after :func:`citewise.evaluation.answer_set.normalise`) in the
    chunks it was given — extractive sentences are quotes, so this is the claim-support test
    without a model. An LLM-written answer without a judge is counted ``no_judge``, not scored.

* **Gauges**: the mean of the last ``window`` scores (default 20), so one bad answer moves the
  gauge by 1/20 and the alert's 30-minute average sees the recent level.
"""

from __future__ import annotations

import collections
import queue
import re
import threading
from dataclasses import dataclass
from typing import Sequence

from citewise.evaluation.answer_set import normalise, strip_citations

#: The design document's range is 5-10% of production requests; the default is its lower end.
DEFAULT_RATE = 0.05


class Sampler:
    """Exactly ``rate`` of calls to :meth:`take` return True, evenly spread (module docstring).

    >>> s = Sampler(0.25)
    >>> [s.take() for _ in range(8)]
    [False, False, False, True, False, False, False, True]
    """

    def __init__(self, rate: float):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"online evaluation rate must be in [0, 1], got {rate!r}")
        self.rate = rate
        self._n = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            before = int(self._n * self.rate + 1e-9)
            self._n += 1
            return int(self._n * self.rate + 1e-9) > before


def verbatim_faithfulness(answer: str, contexts: Sequence[str]) -> float | None:
    """Share of the answer's sentences that occur verbatim (normalised) in one of ``contexts``;
    None for an answer with no sentence.

    An extractive answer renders a list as ``term: value; next item``; each part between those
    separators must be a quote.

    >>> verbatim_faithfulness("Refunds take 30 days. [doc:a] Pets fly free. [doc:b]", ["Refunds take 30 days."])
    0.5
    >>> verbatim_faithfulness("Fill in: Name: Email; Format: ID. [doc:a]", ["Fill in\\n- Name\\n- Email\\n- Format\\n- ID"])
    1.0
    """
    from citewise.text.sentences import split_sentences

    text = strip_citations(answer)
    sentences = [normalise(text[s:e]).rstrip(".") for s, e in split_sentences(text)]
    sentences = [s for s in sentences if s]
    if not sentences:
        return None
    hay = [normalise(c) for c in contexts]

    def quoted(sentence: str) -> bool:
        # an extractive answer joins a list's items with ": " and "; " (a term and its value,
        # consecutive items): each part must be a quote, not the joined sentence
        parts = [p.strip(" .") for p in re.split(r"[;:]\s", sentence)]
        return all(any(p in h for h in hay) for p in parts if p)

    return sum(quoted(s) for s in sentences) / len(sentences)


@dataclass
class Sample:
    question: str
    answer: str
    contexts: list[str]
    generator: str
    embedder: object | None = None


class OnlineEvaluator:
    """Sample answers and score them in the background (module docstring).

    Args:
        metrics: the service's :class:`citewise.service.metrics.Metrics`.
        rate: share of answered requests evaluated, in [0, 1] (default :data:`DEFAULT_RATE`).
        judge: a :class:`~citewise.answer.judges.ClaimJudge`, or None (verbatim scoring of
            extractive answers only).
        window: scores averaged into the gauges.
        queue_size: samples waiting at most; more are dropped.
    """

    def __init__(self, metrics, rate: float = DEFAULT_RATE, judge=None, window: int = 20, queue_size: int = 64):
        self.metrics = metrics
        self.sampler = Sampler(rate)
        self.judge = judge
        self.faith: collections.deque = collections.deque(maxlen=window)
        self.relevance: collections.deque = collections.deque(maxlen=window)
        self._queue: queue.Queue = queue.Queue(maxsize=queue_size)
        self._worker: threading.Thread | None = None
        self._lock = threading.Lock()

    def wants(self, outcome: str) -> bool:
        """Whether this answer is sampled (counts ``not_sampled`` otherwise); abstentions never are."""
        if outcome == "abstained" or self.sampler.rate == 0:
            return False
        if self.sampler.take():
            return True
        self.metrics.online_evaluations.labels("not_sampled").inc()
        return False

    def submit(self, sample: Sample) -> None:
        """Queue a sampled answer for scoring (dropped and counted when the queue is full)."""
        if self.judge is None and sample.generator != "extractive":
            self.metrics.online_evaluations.labels("no_judge").inc()
            return
        try:
            self._queue.put_nowait(sample)
        except queue.Full:
            self.metrics.online_evaluations.labels("dropped").inc()
            return
        with self._lock:
            if self._worker is None:
                self._worker = threading.Thread(target=self._run, name="citewise-online-eval", daemon=True)
                self._worker.start()

    def drain(self, timeout: float = 60.0) -> None:
        """Wait until every queued sample is scored (tests, shutdown)."""
        done = threading.Event()

        def waiter():
            self._queue.join()
            done.set()

        threading.Thread(target=waiter, daemon=True).start()
        done.wait(timeout)

    def _run(self) -> None:
        while True:
            sample = self._queue.get()
            try:
                self._score(sample)
            except Exception:  # noqa: BLE001 - a scoring bug must not kill the worker; it is counted
                self.metrics.online_evaluations.labels("judge_failed").inc()
            finally:
                self._queue.task_done()

    def _score(self, s: Sample) -> None:
        if self.judge is None:
            faith, rel = verbatim_faithfulness(s.answer, s.contexts), None
        else:
            from citewise.answer.judges import _answer_relevancy, _faithfulness

            f, note = _faithfulness(self.judge, strip_citations(s.answer), s.contexts)
            faith = None if note else f
            rel = None
            if s.embedder is not None:
                r, rnote = _answer_relevancy(self.judge, s.embedder, s.question, strip_citations(s.answer), 3)
                rel = None if rnote else r
        if faith is None:
            self.metrics.online_evaluations.labels("judge_failed").inc()
            return
        self.faith.append(faith)
        self.metrics.faithfulness.set(sum(self.faith) / len(self.faith))
        self.metrics.faithfulness_sum.inc(faith)
        if rel is not None:
            self.relevance.append(rel)
            self.metrics.relevance.set(sum(self.relevance) / len(self.relevance))
        self.metrics.online_evaluations.labels("evaluated").inc()


def online_evaluator(metrics, rate: float = DEFAULT_RATE, settings=None) -> OnlineEvaluator:
    """The service's evaluator: the judge of ``settings`` (:func:`citewise.evaluation.llm_judge.judge_model`)
    when one is configured, else verbatim scoring of extractive answers.

    Raises:
        InputError: ``rate`` outside [0, 1] (naming the setting ``service.eval_rate``).
    """
    from citewise.answer.judges import ClaimJudge
    from citewise.core import InputError
    from citewise.evaluation.llm_judge import judge_model

    if not 0.0 <= rate <= 1.0:
        raise InputError("setting service.eval_rate", f"{rate!r} is not a share in [0, 1] (0.05 = 5% of answers)")
    model = judge_model(settings) if rate > 0 else None
    return OnlineEvaluator(metrics, rate, ClaimJudge(model) if model is not None else None)


def sample_of(idx, question: str, answer) -> Sample:
    """A :class:`Sample` of an :class:`citewise.core.Answer` of ``idx``: the texts of the chunks the
    generator was shown (``context_ids``, else ``retrieved_ids``)."""
    ids = list(answer.context_ids or answer.retrieved_ids)
    chunks = idx.store.get_chunks(ids) if ids else {}
    return Sample(
        question,
        answer.text,
        [chunks[i].text for i in ids if i in chunks],
        answer.generator or "",
        getattr(idx, "embedder", None),
    )
