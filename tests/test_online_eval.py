"""Sampled online evaluation in the service: exactly the configured share of answers is scored,
off the request path, into the faithfulness gauge and counters of /metrics."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from citewise.demo import sample_dir
from citewise.index import Index
from citewise.service.app import create_app
from citewise.service.metrics import Metrics
from citewise.settings import load_settings
from citewise.service.online_eval import OnlineEvaluator, Sample, Sampler, verbatim_faithfulness


def test_sampler_takes_exactly_the_rate():
    for rate, n in ((0.05, 400), (0.1, 250), (1.0, 7), (0.0, 50)):
        s = Sampler(rate)
        assert sum(s.take() for _ in range(n)) == round(rate * n)
    with pytest.raises(ValueError):
        Sampler(1.5)


def test_verbatim_faithfulness_counts_quoted_sentences():
    ctx = ["Refunds on Pro are possible within 30 days of the charge.", "Annual plans renew yearly."]
    assert verbatim_faithfulness("Refunds on Pro are possible within 30 days of the charge. [doc:a]", ctx) == 1.0
    assert (
        verbatim_faithfulness(
            "Refunds on Pro are possible within 30 days of the charge. [doc:a] Annual plans renew monthly. [doc:b]", ctx
        )
        == 0.5
    )
    assert verbatim_faithfulness("", ctx) is None


def _metrics(text: str) -> dict:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_gauge_is_the_mean_of_the_last_window_and_llm_answers_need_a_judge():
    m = Metrics()
    ev = OnlineEvaluator(m, rate=1.0, judge=None, window=2)
    ev.submit(Sample("q", "A b c. [doc:x]", ["a b c."], "extractive"))
    ev.submit(Sample("q", "A b c. [doc:x] Not there. [doc:x]", ["a b c."], "extractive"))
    ev.submit(Sample("q", "Paraphrased. [doc:x]", ["a b c."], "llm"))
    ev.drain()
    got = _metrics(m.render().decode())
    assert got[("citewise_rag_faithfulness_score", ())] == pytest.approx((1.0 + 0.5) / 2)
    assert got[("citewise_online_faithfulness_sum_total", ())] == pytest.approx(1.5)
    assert got[("citewise_online_evaluations_total", (("result", "evaluated"),))] == 2
    assert got[("citewise_online_evaluations_total", (("result", "no_judge"),))] == 1
    ev.submit(Sample("q", "Gone. [doc:x]", ["a b c."], "extractive"))  # window of 2: (0.5 + 0) / 2
    ev.drain()
    assert _metrics(m.render().decode())[("citewise_rag_faithfulness_score", ())] == pytest.approx(0.25)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    idx = Index.open(tmp_path_factory.mktemp("online"), embedder="hashing")
    assert not idx.ingest(sample_dir() / "corpus").errors
    return idx


def test_service_samples_answers_into_metrics(index, monkeypatch):
    for k in ("CITEWISE_LLM_BASE_URL", "CITEWISE_LLM_JUDGE_BASE_URL", "OPENAI_BASE_URL", "CITEWISE_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.chdir(index.path)  # no citewise.toml of the working directory
    app = create_app(index.path, rate=0, settings=load_settings(index.path, {"service.eval_rate": 0.5}))
    questions = [
        "How long do I have to request a refund on Pro?",
        "How do I set up Okta SAML?",
        "What does E-1004 mean?",
        "How do I export invoices to CSV?",
    ]
    with TestClient(app) as c:
        outcomes = [c.post("/v1/ask", json={"question": q}).json()["outcome"] for q in questions]
        app.state.service.online.drain()
        got = _metrics(c.get("/metrics").text)
    answered = sum(o != "abstained" for o in outcomes)
    assert answered >= 2
    evaluated = got.get(("citewise_online_evaluations_total", (("result", "evaluated"),)), 0)
    skipped = got.get(("citewise_online_evaluations_total", (("result", "not_sampled"),)), 0)
    assert evaluated + skipped == answered and evaluated == answered // 2  # exactly half, abstentions not sampled
    # extractive answers quote their chunks: every sampled sentence is found verbatim
    assert got[("citewise_rag_faithfulness_score", ())] == pytest.approx(1.0)
