"""Tool calls as real servers send them (models/toolcalls.py) and the chat client's handling:
calls read from the reply's text, one repair turn, fail closed, tool_choice left out when
refused, tools described in the prompt when ``tools`` is refused."""

from __future__ import annotations

import json

import pytest

from citewise.models.chat import ChatConfig, OpenAIChatModel, ToolCallError
from citewise.models.toolcalls import parse_content

from fake_openai import FakeOpenAI

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "count_invoices",
            "description": "Invoices of a customer",
            "parameters": {"type": "object", "properties": {"customer": {"type": "string"}}},
        },
    },
]


def calls(text):
    p = parse_content(text, TOOLS)
    return [(c.name, c.arguments) for c in p.calls], p.format, p.problem, p.text


@pytest.mark.parametrize(
    "text, fmt",
    [
        # llama-cpp-python 0.2.62, default chat template, Qwen2.5-Coder-0.5B (the benchmark's replies)
        ('```json\n{\n  "name": "get_weather",\n  "arguments": {\n    "city": "Paris"\n  }\n}\n```', "json"),
        ('{"name": "get_weather", "arguments": {"city": "Paris"}}', "json"),
        ('{"function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}', "json"),
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', "tool_call_tags"),
        (
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}',
            "tool_call_tags",
        ),  # cut at the stop token
        ('<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>', "python_tag"),
        ('<|python_tag|>get_weather.call(city="Paris")', "python_tag"),
        ('<function=get_weather>{"city": "Paris"}</function>', "function_tags"),
        ('functions.get_weather:{"city": "Paris"}', "functions_prefix"),
        ('to=functions.get_weather <|constrain|>json {"city": "Paris"}', "functions_prefix"),
    ],
)
def test_every_form_reads_as_the_same_call(text, fmt):
    got, f, problem, rest = calls(text)
    assert (got, f, problem) == ([("get_weather", {"city": "Paris"})], fmt, "")


def test_several_calls_and_the_text_around_them():
    got, fmt, problem, rest = calls(
        'I will check both.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n'
        '</tool_call>\n<tool_call>\n{"name": "count_invoices", "arguments": {"customer": "ACME"}}\n</tool_call>'
    )
    assert got == [("get_weather", {"city": "Oslo"}), ("count_invoices", {"customer": "ACME"})]
    assert (fmt, problem, rest) == ("tool_call_tags", "", "I will check both.")
    got, fmt, _, _ = calls(
        '[{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "count_invoices", "arguments": {}}]'
    )
    assert got == [("get_weather", {"city": "Oslo"}), ("count_invoices", {})] and fmt == "json"
    got, fmt, _, _ = calls(
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}; '
        '{"name": "count_invoices", "parameters": {"customer": "A"}}'
    )
    assert got == [("get_weather", {"city": "Oslo"}), ("count_invoices", {"customer": "A"})] and fmt == "python_tag"


@pytest.mark.parametrize(
    "text, problem",
    [
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"\n</tool_call>', "not a JSON object"),
        ('```json\n{"name": "get_weather", "arguments": {"city": }}\n```', "not valid JSON"),
        ('{"name": "send_email", "arguments": {"to": "x"}}', "'send_email' is not one of the tools offered"),
        ('{"name": "get_weather", "arguments": {}}', "missing its required argument(s) city"),
        ('{"name": "get_weather", "arguments": "city=Paris"}', "are not valid JSON"),
        ("functions.get_weather: city is Paris", "are not valid JSON"),
    ],
)
def test_a_malformed_call_names_its_problem(text, problem):
    got, _, found, _ = calls(text)
    assert got == [] and problem in found


def test_prose_is_an_answer_not_a_call():
    assert calls("It is sunny in Paris today.") == ([], "", "", "It is sunny in Paris today.")
    assert calls("Set {x} in the config.")[:3] == ([], "", "")


def model(server, **kw) -> OpenAIChatModel:
    return OpenAIChatModel(ChatConfig(server.base_url, "m", retries=0, **kw))


def test_the_client_reads_calls_from_content_and_repairs_once():
    fenced = '```json\n{\n  "name": "get_weather",\n  "arguments": {\n    "city": "Paris"\n  }\n}\n```'
    with FakeOpenAI([{"content": fenced}]) as server:
        r = model(server).chat([{"role": "user", "content": "weather in Paris?"}], tools=TOOLS, tool_choice="auto")
    assert [(c.name, c.arguments) for c in r.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert (r.tool_format, r.repaired, r.content) == ("json", False, None)
    assert server.requests[0]["tool_choice"] == "auto" and server.requests[0]["tools"] == TOOLS
    bad = '<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>'
    with FakeOpenAI(
        [{"content": bad}, {"content": '{"name": "get_weather", "arguments": {"city": "Paris"}}'}]
    ) as server:
        r = model(server).chat([{"role": "user", "content": "weather in Paris?"}], tools=TOOLS)
    assert [(c.name, c.arguments) for c in r.tool_calls] == [("get_weather", {"city": "Paris"})] and r.repaired
    repair = server.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": bad}
    assert repair[-1]["role"] == "user" and "missing its required argument(s) city" in repair[-1]["content"]
    assert "count_invoices(); get_weather(city)" in repair[-1]["content"]
    with FakeOpenAI([{"content": bad}, {"content": bad}]) as server:
        with pytest.raises(
            ToolCallError, match="could not be read, also after one repair turn: 'get_weather' is missing"
        ):
            model(server).chat([{"role": "user", "content": "weather?"}], tools=TOOLS)
    assert len(server.requests) == 2


def test_tool_choice_is_left_out_when_the_server_refuses_it(monkeypatch):
    import httpx

    seen = []
    refusal = (
        '{"object":"error","message":"\\"auto\\" tool choice requires --enable-auto-tool-choice and '
        '--tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}'
    )

    with FakeOpenAI(lambda body: {"content": '{"name": "get_weather", "arguments": {"city": "Rome"}}'}) as server:
        m = model(server)
        real = m._client.post

        def post(url, json=None, **kw):  # the server refuses tool_choice, as vLLM does
            seen.append(dict(json))
            if "tool_choice" in json:
                return httpx.Response(400, text=refusal, request=httpx.Request("POST", url))
            return real(url, json=json, **kw)

        monkeypatch.setattr(m._client, "post", post)
        r = m.chat([{"role": "user", "content": "Rome?"}], tools=TOOLS, tool_choice="auto")
        r2 = m.chat([{"role": "user", "content": "Rome?"}], tools=TOOLS, tool_choice="auto")
    assert [c.name for c in r.tool_calls] == ["get_weather"] == [c.name for c in r2.tool_calls]
    assert ["tool_choice" in b for b in seen] == [True, False, False] and not m.send_tool_choice


def test_tools_go_into_the_prompt_when_the_server_refuses_them(monkeypatch):
    import httpx

    seen = []
    with FakeOpenAI(
        lambda body: {"content": '<tool_call>{"name": "count_invoices", "arguments": {"customer": "A"}}</tool_call>'}
    ) as server:
        m = model(server)
        real = m._client.post

        def post(url, json=None, **kw):
            seen.append(json)
            if "tools" in json:
                return httpx.Response(
                    400, text='{"error": "tools are not supported by this model"}', request=httpx.Request("POST", url)
                )
            return real(url, json=json, **kw)

        monkeypatch.setattr(m._client, "post", post)
        r = m.chat(
            [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "A's invoices?"}], tools=TOOLS
        )
    assert [(c.name, c.arguments) for c in r.tool_calls] == [("count_invoices", {"customer": "A"})]
    assert "tools" not in seen[-1] and not m.native_tools
    system = seen[-1]["messages"][0]["content"]
    assert system.startswith("Be brief.\n\nYou can call these tools.") and json.dumps(TOOLS[0]["function"]) in system


def test_recorded_llama_cpp_python_replies_read_as_calls():
    from llm_replay import ReplayServer, recording

    rec = recording("tool_call_fenced_json")
    request = rec["exchanges"][0]["request"]
    with ReplayServer(rec["exchanges"]) as server:
        r = model(server).chat(request["messages"], tools=request["tools"], tool_choice="auto")
    assert rec["source"]["server"] == "llama-cpp-python 0.2.62"
    assert [(c.name, c.arguments) for c in r.tool_calls] == [
        ("calculate_triangle_area", {"base": 10, "height": 5, "unit": "units"})
    ]
    assert (r.tool_format, r.repaired, r.content) == ("json", False, None)


def test_a_recorded_repair_turn():
    from llm_replay import ReplayServer, recording

    rec = recording("tool_call_repair")
    first, second = rec["exchanges"]
    request = first["request"]
    with ReplayServer(rec["exchanges"]) as server:
        r = model(server).chat(request["messages"], tools=request["tools"], tool_choice="auto")
    # the model named a tool that was not offered; the repair turn said so, and it answered with one
    sent = server.requests[1]["messages"]
    assert sent[-1]["content"].startswith(
        "Your tool call could not be read: 'FIFA World Cup 2010' is not one of the tools offered (stock_ticker)."
    )
    assert sent == second["request"]["messages"]
    assert [(c.name, c.arguments) for c in r.tool_calls] == [("stock_ticker", {"company_name": "Brazil"})]
    assert r.repaired and r.tool_format == "json"
