"""ReAct loop against the local OpenAI-wire-format server: cap, concurrency, timeouts, retry, cache."""

from __future__ import annotations

import time

from fake_openai import FakeOpenAI

from citewise.models.chat import ChatConfig, OpenAIChatModel
from citewise.tools.agent import Agent, ToolCache
from citewise.tools.base import FunctionTool

EMPTY = {"type": "object", "properties": {}}


def sleeper(name, seconds, calls=None):
    def fn():
        if calls is not None:
            calls.append(name)
        time.sleep(seconds)
        return {"slept": seconds}

    return FunctionTool(name, f"sleep {seconds}s. NOT for anything else.", EMPTY, fn)


def model(server, timeout=10.0):
    return OpenAIChatModel(ChatConfig(server.base_url, "m", timeout=timeout), sleep=lambda s: None)  # no backoff pause


def test_iteration_cap_respected():
    with FakeOpenAI([{"content": "thinking", "tool_calls": [{"name": "a", "arguments": {}}]}]) as server:
        result = Agent(model(server), [sleeper("a", 0)], max_iterations=3).run("loop forever")
        n_requests = len(server.requests)
    assert n_requests == 3 and result.iterations == 3 and result.stopped == "iteration_cap"
    assert "stopped after 3 iterations" in result.answer and "iteration cap of 3 reached" in result.answer
    assert [s.thought for s in result.steps] == ["thinking"] * 3


def test_parallel_calls_run_concurrently():
    script = [
        {
            "tool_calls": [
                {"name": "a", "arguments": {}},
                {"name": "b", "arguments": {}},
                {"name": "c", "arguments": {}},
            ]
        },
        {"content": "done"},
    ]
    with FakeOpenAI(script) as server:
        agent = Agent(model(server), [sleeper("a", 0.3), sleeper("b", 0.3), sleeper("c", 0.3)])
        t0 = time.perf_counter()
        result = agent.run("three things")
        wall = time.perf_counter() - t0
        second = server.requests[1]["messages"]
    assert result.answer == "done" and result.stopped == "answered" and result.iterations == 2
    assert all(c.seconds >= 0.3 for c in result.steps[0].calls)
    assert wall < 0.75, wall  # max (0.3) plus overhead, not the sum (0.9)
    tool_msgs = [m for m in second if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["call_0", "call_1", "call_2"]


def test_tool_timeout_becomes_observation_and_answer_says_so():
    script = [{"tool_calls": [{"name": "slow", "arguments": {}}]}, {"content": "I could not check the records."}]
    with FakeOpenAI(script) as server:
        result = Agent(model(server), [sleeper("slow", 2.0)], tool_timeout_s=0.2).run("q")
        obs_msg = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][0]
    call = result.steps[0].calls[0]
    assert call.observation == {"error": "timed out after 0.2s", "tool": "slow", "retryable": True}
    assert call.attempts == 2  # retried once, not more
    assert '"error": "timed out after 0.2s"' in obs_msg["content"]
    assert "Limitations: tool slow {} failed after 2 attempt(s): timed out after 0.2s" in result.answer


def test_failed_tool_retried_once_then_succeeds_and_validation_errors_not_retried():
    attempts = []

    def flaky():
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("reset")
        return {"ok": True}

    typed = FunctionTool(
        "typed",
        "needs n",
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        lambda n: {"n": n},
    )
    script = [
        {"tool_calls": [{"name": "flaky", "arguments": {}}, {"name": "typed", "arguments": {"n": "x"}}]},
        {"content": "ok"},
    ]
    with FakeOpenAI(script) as server:
        result = Agent(model(server), [FunctionTool("flaky", "flaky", EMPTY, flaky), typed]).run("q")
    flaky_call, typed_call = result.steps[0].calls
    assert flaky_call.observation == {"ok": True} and flaky_call.attempts == 2
    assert typed_call.attempts == 1 and typed_call.observation["error"].startswith("argument 'n' must be integer")
    assert result.limitations == [
        'tool typed {"n":"x"} failed after 1 attempt(s): argument \'n\' must be integer, got str "x"'
    ]


def test_tool_cache_ttl_and_key():
    now = [100.0]
    cache = ToolCache(ttl_s=60, clock=lambda: now[0])
    calls = []
    script = [
        {"tool_calls": [{"name": "a", "arguments": {"x": 1, "y": 2}}]},
        {"tool_calls": [{"name": "a", "arguments": {"y": 2, "x": 1}}]},
        {"content": "done"},
    ]
    tool = FunctionTool(
        "a",
        "a",
        {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}},
        lambda x, y: calls.append((x, y)) or {"sum": x + y},
    )
    with FakeOpenAI(script) as server:
        result = Agent(model(server), [tool], cache=cache).run("q")
    assert calls == [(1, 2)] and result.steps[1].calls[0].cached and result.steps[1].calls[0].observation == {"sum": 3}
    assert cache.get("a", {"x": 1, "y": 2}) == {"sum": 3}
    now[0] += 61
    assert cache.get("a", {"x": 1, "y": 2}) is None
    cache.put("a", {}, {"error": "boom", "tool": "a"})
    assert cache.get("a", {}) is None  # errors are never cached


def test_llm_failure_is_stated():
    with FakeOpenAI([{"content": "x"}], status=500) as server:
        result = Agent(model(server), [sleeper("a", 0)]).run("q")
    assert result.stopped == "llm_error" and "the language model failed" in result.answer
