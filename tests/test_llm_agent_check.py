"""The ReAct agent's final answer goes through the sentence check: passages from vector_search
and rows from record tools are its sources; what they do not support is withdrawn, visibly."""

from __future__ import annotations

from citewise.answer.agent_check import check_agent_answer
from citewise.core import ABSTENTION_TEXT
from citewise.models.chat import ChatConfig, OpenAIChatModel
from citewise.tools.agent import Agent
from citewise.tools.base import FunctionTool

from fake_openai import FakeOpenAI

QUERY = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
INVOICE = {"type": "object", "properties": {"invoice_id": {"type": "integer"}}, "required": ["invoice_id"]}


def tools():
    search = FunctionTool(
        "vector_search",
        "Search the documents.",
        QUERY,
        lambda query: {
            "tool": "vector_search",
            "hits": [
                {
                    "doc_id": "help/refunds/pro",
                    "chunk_id": "help/refunds/pro#0",
                    "title": "Refunds on Pro",
                    "score": 1.0,
                    "rank": 1,
                    "text": "On the Pro plan you can request a refund within 30 days of the charge. Refunds go back to the card.",
                }
            ],
        },
    )
    status = FunctionTool(
        "invoice_status",
        "Status of one invoice.",
        INVOICE,
        lambda invoice_id: {
            "tool": "invoice_status",
            "rows": [{"invoice_id": invoice_id, "status": "paid", "amount_usd": 120.5}],
            "row_count": 1,
        },
    )
    return [search, status]


def run(final: str):
    script = [
        {
            "tool_calls": [
                {"name": "vector_search", "arguments": {"query": "refund window pro"}},
                {"name": "invoice_status", "arguments": {"invoice_id": 2041}},
            ]
        },
        {"content": final},
    ]
    with FakeOpenAI(script) as server:
        return Agent(OpenAIChatModel(ChatConfig(server.base_url, "m")), tools(), check=check_agent_answer).run(
            "Refund window, and invoice 2041?"
        )


def test_the_final_answer_keeps_what_the_observations_support():
    r = run(
        "On Pro you can request a refund within 30 days of the charge [doc:help/refunds/pro]. "
        "Invoice 2041 is paid [tool:invoice_status]. Refunds are processed within 2 hours."
    )
    assert r.stopped == "answered"
    assert r.answer == (
        "On Pro you can request a refund within 30 days of the charge. [doc:help/refunds/pro] "
        "Invoice 2041 is paid. [tool:invoice_status]"
    )
    assert r.withdrawn == ["Refunds are processed within 2 hours."]
    assert r.notes == [
        "Withdrawn 1 sentence of the model's answer that no source supports: "
        "\u201cRefunds are processed within 2 hours.\u201d."
    ]
    assert r.raw_answer.endswith("Refunds are processed within 2 hours.")


def test_an_uncited_answer_is_cited_and_a_wholly_unsupported_one_withdrawn():
    r = run("The invoice 2041 status is paid, amount 120.5 USD.")
    assert r.answer == "The invoice 2041 status is paid, amount 120.5 USD. [tool:invoice_status]"
    assert r.notes == [
        "The model cited no source for 1 sentence; each was cited to the source passage that supports it."
    ]
    none = run("Invoice 2041 was refunded in March.")
    assert none.answer == ABSTENTION_TEXT and none.withdrawn == ["Invoice 2041 was refunded in March."]


def test_a_tool_rows_numbers_are_compared_by_value_and_text_numbers_as_written():
    """A record tool returns 120.5; the model writes $120.50 without a marker: the row supports
    it (cited after the fact). A passage's text numerals are compared as written, and a wrong
    amount is still withdrawn."""
    r = run(
        "Invoice 2041 is paid, for an amount of $120.50. "
        "Invoice 2041 is paid, for an amount of $120.55. "
        "On Pro you can request a refund within 30.0 days of the charge."
    )
    assert r.answer == "Invoice 2041 is paid, for an amount of $120.50. [tool:invoice_status]"
    assert r.withdrawn == [
        "Invoice 2041 is paid, for an amount of $120.55.",
        "On Pro you can request a refund within 30.0 days of the charge.",
    ]


def test_canonical_number():
    from citewise.answer.attribution import canonical_number

    assert [canonical_number(t) for t in ("9.90", "9.9", "120.500", "3.10", "10:30", "1,000", "7.")] == [
        "9.9",
        "9.9",
        "120.5",
        "3.1",
        "10:30",
        "1,000",
        "7.",
    ]


def test_a_marker_for_a_tool_not_called_is_named_as_the_model_wrote_it():
    r = run("Invoice 2041 is paid [tool:sql_query].")
    assert r.answer == "Invoice 2041 is paid. [tool:invoice_status]"
    assert r.fabricated == ["tool:sql_query"]
    assert "Ignored citation marker naming no source: [tool:sql_query]." in r.notes
