"""Prometheus metrics of one server (prometheus_client), on a registry of its own so several apps
in one process (tests) do not collide. Served at ``GET /metrics`` in the text exposition format.

Latency histograms are in seconds with the client library's default buckets plus 10 s and 30 s
(an ``ask`` on a cold cache or a long ingest lands there).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 30.0)


class Metrics:
    """The server's metrics (names are what Grafana dashboards will query):

    * ``citewise_http_requests_total{route,method,status}`` and
      ``citewise_http_request_duration_seconds{route}``: every request, by route template.
    * ``citewise_retrieval_duration_seconds``, ``citewise_answer_duration_seconds``,
      ``citewise_tool_duration_seconds{tool}`` (routing plus the record tool call): stage latencies.
    * ``citewise_abstentions_total{reason}``: abstentions by reason code
      (:class:`citewise.core.ReasonCode`: ``below_threshold``, ``unknown_name`` ...; a few values).
    * ``citewise_fabricated_citations_total``: citations dropped because they named a source the
      generator was not shown.
    * ``citewise_judge_failures_total``: judge verdicts that failed or could not be parsed (the
      service runs no judge today; kept at 0 so dashboards need no change when one is added).
    * ``citewise_ingest_documents_total{result}``: added, updated, unchanged, deleted, error.
    * ``citewise_index_chunks``, ``citewise_index_documents``, ``citewise_index_lag_seconds``
      (max indexed − source changed) and ``citewise_index_staleness_seconds`` (now − last
      completed ingest; -1 when there was none), computed on every scrape for the scraping
      caller (:meth:`render`: counts and lag over the documents the caller may read; only an
      admin's scrape counts every document); on a replica store also
      ``citewise_replica_lag_seconds`` and ``citewise_replica_lag_bytes``
      (:mod:`citewise.store.pg_replication`).
    * ``citewise_rate_limited_total``, ``citewise_request_timeouts_total``.
    * Sampled online evaluation (:mod:`citewise.service.online_eval`):
      ``citewise_rag_faithfulness_score`` and ``citewise_rag_answer_relevance_score`` (mean of the
      last evaluations; what ``deploy/prometheus/citewise.rules.yml`` alerts on),
      ``citewise_online_evaluations_total{result}`` (``evaluated``, ``not_sampled``, ``no_judge``,
      ``judge_failed``, ``dropped``) and ``citewise_online_faithfulness_sum`` (sum of the scores:
      ``rate(sum) / rate(evaluations_total{result="evaluated"})`` is the exact mean over a window).
    """

    def __init__(self):
        r = self.registry = CollectorRegistry()
        self.requests = Counter(
            "citewise_http_requests_total", "HTTP requests", ["route", "method", "status"], registry=r
        )
        self.request_seconds = Histogram(
            "citewise_http_request_duration_seconds", "HTTP request latency", ["route"], buckets=_BUCKETS, registry=r
        )
        self.retrieval_seconds = Histogram(
            "citewise_retrieval_duration_seconds", "Retrieval latency", buckets=_BUCKETS, registry=r
        )
        self.answer_seconds = Histogram(
            "citewise_answer_duration_seconds", "Answer latency (retrieval included)", buckets=_BUCKETS, registry=r
        )
        self.tool_seconds = Histogram(
            "citewise_tool_duration_seconds",
            "Record tool answer latency (routing and the call)",
            ["tool"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.abstentions = Counter("citewise_abstentions_total", "Abstentions by reason", ["reason"], registry=r)
        self.fabricated = Counter("citewise_fabricated_citations_total", "Citations dropped as fabricated", registry=r)
        self.judge_failures = Counter(
            "citewise_judge_failures_total", "Failed or unparseable judge verdicts", registry=r
        )
        self.ingest_documents = Counter(
            "citewise_ingest_documents_total", "Documents handled by ingest jobs", ["result"], registry=r
        )
        self.rate_limited = Counter("citewise_rate_limited_total", "Requests refused by the rate limit", registry=r)
        self.timeouts = Counter("citewise_request_timeouts_total", "Requests that hit the request timeout", registry=r)
        self.faithfulness = Gauge(
            "citewise_rag_faithfulness_score",
            "Faithfulness of sampled answers (mean of the last online evaluations)",
            registry=r,
        )
        self.relevance = Gauge(
            "citewise_rag_answer_relevance_score",
            "Answer relevance of sampled answers (mean of the last online evaluations)",
            registry=r,
        )
        self.online_evaluations = Counter(
            "citewise_online_evaluations_total", "Online evaluation outcomes per answer", ["result"], registry=r
        )
        self.faithfulness_sum = Counter(
            "citewise_online_faithfulness_sum", "Sum of online faithfulness scores", registry=r
        )

    def observe_answer(self, payload: dict, seconds: float) -> None:
        """Record one answer (the :func:`citewise.service.payloads.answer_json` JSON)."""
        self.answer_seconds.observe(seconds)
        if payload["outcome"] == "abstained":
            reason = payload.get("reason") or {}
            self.abstentions.labels(reason.get("code") or "unspecified").inc()
        if payload.get("fabricated_citations"):
            self.fabricated.inc(len(payload["fabricated_citations"]))

    def render(self, index: dict | None = None) -> bytes:
        """The text exposition of every metric, with the index gauges of ``index`` (the caller's
        :meth:`citewise.service.app.Service.status` dict; None: the index could not be read, no
        index gauges). The gauges are built per scrape in a registry of their own, so two callers
        scraping at once each get their own figures."""
        text = generate_latest(self.registry)
        if index is None:
            return text
        r = CollectorRegistry()
        Gauge("citewise_index_chunks", "Chunks in the index (that the caller may read)", registry=r).set(
            index["chunks"]
        )
        Gauge("citewise_index_documents", "Documents in the index (that the caller may read)", registry=r).set(
            index["documents"]
        )
        Gauge("citewise_index_lag_seconds", "Max index lag: indexed minus source changed", registry=r).set(
            index["lag_s"]["max"]
        )
        Gauge("citewise_index_staleness_seconds", "Seconds since the last completed ingest (-1: none)", registry=r).set(
            -1 if index["staleness_s"] is None else index["staleness_s"]
        )
        rep = index.get("replication")
        if rep and rep["role"] == "replica":
            Gauge(
                "citewise_replica_lag_seconds",
                "Replay lag of this replica store (0: all received WAL replayed)",
                registry=r,
            ).set(rep["lag_s"])
            Gauge(
                "citewise_replica_lag_bytes", "WAL received by this replica store but not yet replayed", registry=r
            ).set(rep["lag_bytes"])
        return text + generate_latest(r)
