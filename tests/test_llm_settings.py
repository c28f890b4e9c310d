"""LLM settings per use, timeouts that name their setting, the context window read from the
server, serve's request timeout derived from the client's, and prompts of the reranker and the
summariser cut to the window."""

from __future__ import annotations

import pytest

from citewise.cli_llm import llm_deadline_s, serve_timeout
from citewise.models.chat import ChatConfig, ChatTimeout, OpenAIChatModel, document_room
from citewise.retrieval.rerank import LLMReranker
from citewise.settings import load_settings
from citewise.text.tokens import count_tokens

from fake_openai import FakeOpenAI
from llm_replay import ReplayServer


def settings(tmp_path, text: str, env: dict | None = None):
    (tmp_path / "citewise.toml").write_text(text)
    return load_settings(None, env=env or {}, cwd=tmp_path)


def test_each_use_reads_llm_with_its_overrides(tmp_path):
    s = settings(
        tmp_path,
        '[llm]\nbase_url = "http://h:8080/v1"\nmodel = "small"\nread_timeout_s = 300\n'
        '[llm.judge]\nmodel = "big"\nread_timeout_s = 900\n[llm.router]\nmax_output_tokens = 128\n',
        env={"CITEWISE_LLM_ANSWER_CONTEXT_WINDOW": "2048"},
    )
    answer, judge, router = (ChatConfig.from_settings(s.llm, u) for u in ("answer", "judge", "router"))
    assert (answer.model, answer.read_timeout_s, answer.context_window, answer.use) == ("small", 300.0, 2048, "answer")
    assert (judge.model, judge.read_timeout_s, judge.context_window) == ("big", 900.0, None)
    assert (router.max_output_tokens, judge.max_output_tokens) == (128, 512)
    # (connect 10 + read 300) x (1 retry + 1) + 0.5 s backoff
    assert answer.deadline_s == 620.5
    assert answer.setting("read_timeout_s") == "llm.read_timeout_s (or llm.answer.read_timeout_s)"


def test_a_timeout_names_the_setting_to_raise():
    with FakeOpenAI([{"content": "late"}], delay=1.0) as server:
        cfg = ChatConfig(server.base_url, "m", read_timeout_s=0.2, retries=0, use="judge")
        with pytest.raises(ChatTimeout) as e:
            OpenAIChatModel(cfg).chat([{"role": "user", "content": "q"}])
    assert str(e.value) == (
        f"{server.base_url}: timed out after 0.2 s without a reply (a small model on a CPU can "
        "take minutes to read a long prompt); raise llm.read_timeout_s (or "
        "llm.judge.read_timeout_s), e.g. CITEWISE_LLM_READ_TIMEOUT_S=300 or --llm-timeout 300"
    )


def test_serve_waits_longer_than_its_llm_client(tmp_path):
    s = load_settings(None, env={}, cwd=tmp_path)
    # answer client: (10 + 60) x 2 + 0.5 = 140.5 s, plus one more connect for an overflow retry
    assert llm_deadline_s(s) == 150.5
    assert serve_timeout(s, None, llm=False) == (30.0, "")
    t, why = serve_timeout(s, None, llm=True)
    assert t == 165.5 and why == (
        "request timeout raised from 30 s to 165.5 s: the LLM client may wait 150.5 s "
        "(llm.connect_timeout_s + llm.read_timeout_s, llm.retries)"
    )
    assert serve_timeout(s, 600.0, llm=True) == (600.0, "")


@pytest.mark.parametrize(
    "props, models, window",
    [
        ({"default_generation_settings": {"n_ctx": 8192}}, None, 8192),  # llama.cpp server
        (None, {"object": "list", "data": [{"id": "local", "max_model_len": 32768}]}, 32768),  # vLLM
        (None, {"data": [{"id": "local", "meta": {"n_ctx_train": 131072}}]}, 131072),  # llama.cpp, training window
        (None, None, 4096),  # llama-cpp-python reports none: the default
    ],
)
def test_the_context_window_is_read_from_the_server(props, models, window):
    with ReplayServer([], props=props, models=models) as server:
        m = OpenAIChatModel(ChatConfig(server.base_url, "local"))
        assert m.context_window() == window
        assert m.window_source == ("default" if window == 4096 else "server")
        assert OpenAIChatModel(ChatConfig(server.base_url, "local", context_window=1024)).context_window() == 1024


def test_the_listwise_reranker_slides_over_a_list_the_window_cannot_hold():
    passages = [f"passage {i} " + "about refunds and other things " * 20 for i in range(12)]
    with FakeOpenAI(lambda body: {"content": "[2] > [1]"}) as server:
        chat = OpenAIChatModel(ChatConfig(server.base_url, "m", context_window=1024))
        scores = LLMReranker(chat, "listwise").rerank("refund window", passages)
        room = document_room(chat, 200, "x")
        for body in server.requests:
            assert (
                count_tokens(body["messages"][0]["content"]) + count_tokens(body["messages"][1]["content"]) < 1024 - 200
            )
    # 1024 x 0.9 - 200 output - 48 instructions - 12 query = 661 tokens: 661 // (80 + 12) = 7 passages
    # a window, sliding back by 3: [5..11], [2..8], [0..6]
    firsts = [int(b["messages"][1]["content"].split("<passage>\npassage ")[1].split()[0]) for b in server.requests]
    assert firsts == [5, 2, 0] and room > 0
    # each window puts its second passage first: [.., 6, 5, 7 ..], then 3 before 2, then 1 before 0
    assert sorted(range(12), key=lambda i: -scores[i]) == [1, 0, 3, 2, 4, 6, 5, 7, 8, 9, 10, 11]


def test_pointwise_passages_and_summaries_are_cut_to_the_window():
    from citewise.retrieval.hierarchical import DocEntry, LLMSummarizer

    long = "refund rules " * 2000
    with FakeOpenAI(lambda body: {"content": "7"}) as server:
        chat = OpenAIChatModel(ChatConfig(server.base_url, "m", context_window=2048))
        LLMReranker(chat, "pointwise", passage_chars=10**6).rerank("refund", [long])
        s = LLMSummarizer(chat, "m", max_chars=10**6)
        entry = DocEntry("d", "Refunds", (), "old summary", "extractive", "h", ("public",))
        s(entry, [long])
    assert len(server.requests) == 2
    for body in server.requests:  # the window binds: 2048 x 0.9 - 200 output tokens (texts are
        # counted apart, so a token may merge across the cut: 2 tokens of slack)
        used = sum(count_tokens(m["content"]) + 8 for m in body["messages"])
        assert 1600 < used <= int(2048 * 0.9) - 200 + 2


def test_the_judge_reads_llm_judge(tmp_path):
    from citewise.answer.judges import ClaimJudge, LLMFaithfulnessJudge

    s = settings(
        tmp_path,
        '[llm]\nbase_url = "http://h:1/v1"\nmodel = "m"\n[llm.judge]\nmodel = "judge-m"\nmax_output_tokens = 200\n',
    )
    j = LLMFaithfulnessJudge.from_settings(s)
    assert (j.model.config.model, j.model.config.use, j.max_tokens) == ("judge-m", "judge", 200)
    assert ClaimJudge.from_settings(s).model.config.model == "judge-m"
