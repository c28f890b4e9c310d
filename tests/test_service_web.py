"""The web page's conversation, streaming, rendering, and the API's OpenAPI document and offline
docs (issue 35), through the real app (FastAPI's TestClient); tests/test_service_browser.py drives
the same page in Chromium."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient

from citewise.index import Index
from citewise.service.app import create_app
from citewise.service.auth import KeyStore
from citewise.service.render import answer_html, mark_span, markdown_html

from conftest import write_doc


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs")
    write_doc(
        root,
        "help/refunds.md",
        "Refunds",
        "Refunds are paid within **30 days** of a request.\n\n"
        "| Plan | Window |\n|---|---|\n| Pro | 45 days |\n\nRefunds on Pro need no approval.",
        department="support",
        year=2025,
    )
    write_doc(
        root,
        "help/invoices.md",
        "Invoices",
        "Invoices are sent on the first day of each month.",
        department="billing",
        year=2024,
    )
    write_doc(
        root, "notes/xss.md", "Notes", "Meeting notes <script>alert(1)</script> and [a link](javascript:alert(1))."
    )
    write_doc(
        root,
        "internal/approvals.md",
        "Refund approvals",
        "Refunds above 75,000 USD need the CFO's approval.",
        permissions=["finance"],
    )
    idx = Index.open(tmp_path_factory.mktemp("idx"), embedder="hashing")
    assert idx.ingest(root).added == 4
    keys = {"finance": KeyStore(idx.path).add("fin", ("finance",))}
    return idx, keys


@pytest.fixture()
def client(site):
    idx, _ = site
    with TestClient(create_app(idx.path, rate=0)) as c:
        yield c


def _turns(html: str) -> list[str]:
    return re.findall(r'<span class="q">([^<]*)</span>', html)


def test_conversation_keeps_scope_and_principal_and_shows_previous_turns(client, site):
    _, keys = site
    r = client.post(
        "/ask", data={"q": "How long do refunds take?", "filters": "department=support"}, follow_redirects=False
    )
    assert r.status_code == 303 and re.fullmatch(r"/c/[0-9a-f]{32}#turn-1", r.headers["location"])
    conv = r.headers["location"].split("#")[0]
    page = client.get(conv).text
    assert (
        'id="scope-line">Searched documents readable by anyone (public documents); where department=support.<' in page
    )
    assert '<span class="outcome outcome-answered" id="outcome">Answered from your documents</span>' in page
    follow = client.post(
        "/ask", data={"q": "When are invoices sent?", "c": conv.split("/")[-1]}, follow_redirects=False
    )
    assert follow.headers["location"] == f"{conv}#turn-2"
    page = client.get(conv).text
    assert _turns(page) == ["How long do refunds take?", "When are invoices sent?"]
    # the follow-up searched within the conversation's filter: the invoices page is department=billing
    last = page[page.index('id="turn-2"') :]
    assert 'id="abstained"' in last and ">No answer<" in last and "help/invoices" not in last
    assert page.count('id="answer"') + page.count('id="abstained"') == 1  # the ids name the latest turn
    # a scoped conversation keeps its scope on the follow-up (the evidence-gap controller answers)
    r = client.post("/ask", data={"q": "When are invoices sent?", "scope": "help/invoices"}, follow_redirects=False)
    cid = r.headers["location"].split("#")[0].split("/")[-1]
    client.post("/ask", data={"q": "Which day of the month?", "c": cid})
    scoped = client.get(f"/c/{cid}").text
    assert "only within help/invoices." in scoped and len(_turns(scoped)) == 2
    assert "help/refunds" not in scoped
    # another principal does not see the conversation, nor may it continue it
    client.post("/signin", data={"key": keys["finance"]})
    assert client.get(conv).status_code == 404
    other = client.post("/ask", data={"q": "refunds?", "c": conv.split("/")[-1]})
    assert other.status_code == 404 and "belongs to another sign-in" in other.text


def test_stream_sends_each_sentence_then_the_conversation_url(client):
    r = client.post("/ask/stream", data={"q": "How long do refunds take?"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = [(m.group(1), json.loads(m.group(2))) for m in re.finditer(r"event: (\w+)\ndata: (.*)\n\n", r.text)]
    names = [n for n, _ in events]
    assert names[0] == "start" and names[-1] == "done" and names.count("sentence") >= 1
    assert events[0][1] == {"question": "How long do refunds take?"}
    sentences = [d["html"] for n, d in events if n == "sentence"]
    assert all('class="cite"' in s for s in sentences)  # each streamed sentence carries its citation link
    final = client.get(events[-1][1]["url"].split("#")[0]).text
    assert final.count('class="cite"') == len(sentences) and "".join(sentences).count("<a ") == len(sentences)
    bad = client.post("/ask/stream", data={"q": "refunds", "filters": "year>=soon"})
    assert [n for n, _ in re.findall(r"event: (\w+)\ndata: (.*)\n\n", bad.text)] == ["start", "error"]
    assert "a range needs a number or a YYYY-MM-DD date" in bad.text


def test_markdown_is_rendered_and_sanitised():
    assert str(markdown_html("**45 days**", inline=True)) == "<strong>45 days</strong>"
    table = str(markdown_html("| Plan | Window |\n|---|---|\n| Pro | 45 days |"))
    assert "<table>" in table and "<td>45 days</td>" in table
    bad = str(
        markdown_html(
            "x <script>alert(1)</script> [a](javascript:alert(1)) <img src=x onerror=alert(1)> "
            "<a href='javascript:alert(1)'>b</a>"
        )
    )
    assert "<script" not in bad and "<img" not in bad and "<a " not in bad  # shown as text, never as markup
    assert str(markdown_html("[ok](https://example.org)", inline=True)) == (
        '<a href="https://example.org" rel="noopener noreferrer">ok</a>'
    )
    marked = str(mark_span("# T\n\nAlpha beta.\n\nGamma delta.", 5, 25))
    assert marked.count("<mark") == 2 and 'id="cited"' in marked  # across two paragraphs, one id
    cits = [
        {
            "doc_id": "a",
            "title": "A",
            "chunk_id": "a#1",
            "start": 0,
            "end": 5,
            "spans": [
                {"sentence": 0, "chunk_id": "a#1", "start": 0, "end": 5},
                {"sentence": 1, "chunk_id": "a#1", "start": 6, "end": 9},
            ],
        }
    ]
    html = str(answer_html("One is **bold**. [doc:a] Two. [doc:a]", cits))
    assert re.findall(r'href="([^"]+)"', html) == ["/doc/a?start=0&amp;end=5#cited", "/doc/a?start=6&amp;end=9#cited"]
    assert "<strong>bold</strong>" in html and "[doc:a]" not in html


def test_sources_are_cards_and_the_document_view_renders(client):
    page = client.get("/", params={"q": "How long do refunds take?"}).text
    card = re.search(r'<li class="card">(.*?)</li>', page, re.S).group(1)
    assert ">Refunds</a>" in card and '<span class="tag">public</span>' in card and "[doc:help/refunds]" in card
    href = re.search(r'<a class="source" href="([^"]+)"', card).group(1).replace("&amp;", "&")
    doc = client.get(href).text
    assert '<mark class="cited" id="cited">' in doc and "<table>" in doc and "<strong>30 days</strong>" in doc
    assert "**" not in doc[doc.index('id="source"') :]
    xss = client.get("/search", params={"q": "meeting notes"}).text
    assert "Meeting notes" in xss
    assert "<script>alert" not in xss and 'href="javascript' not in xss and "&lt;script&gt;" in xss


def test_sign_in_text_is_for_people(site):
    idx, _ = site
    with TestClient(create_app(idx.path, require_auth=True, rate=0)) as c:
        page = c.get("/")
        assert page.status_code == 401 and "Paste the API key your administrator gave you" in page.text
        assert "Authorization" not in page.text and "send an" not in page.text


def test_openapi_has_bearer_security_typed_bodies_and_errors_and_docs_work_offline(client):
    spec = client.get("/openapi.json").json()
    assert spec["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "An API key from 'citewise keys add', or a JWT the server accepts.",
    }
    ask = spec["paths"]["/v1/ask"]["post"]
    assert {"bearer": []} in ask["security"]
    assert set(ask["responses"]) >= {"200", "400", "401", "413", "422", "429", "504"}
    assert ask["responses"]["401"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorResponse"
    }
    ok = ask["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/AnswerJSON"}
    assert "markers" in spec["components"]["schemas"]["AnswerJSON"]["properties"]
    search_body = spec["components"]["schemas"]["SearchRequest"]["properties"]
    assert "filters" in search_body and "raptor-tree" in json.dumps(search_body["retriever"])
    status = spec["paths"]["/v1/status"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert status == {"$ref": "#/components/schemas/StatusResponse"}
    docs = client.get("/docs").text
    assert "/docs-assets/swagger-ui-bundle.js" in docs and "cdn" not in docs.lower() and "https://" not in docs
    js = client.get("/docs-assets/swagger-ui-bundle.js")
    assert js.status_code == 200 and len(js.content) > 500_000
    redoc = client.get("/redoc").text
    assert "/docs-assets/redoc.standalone.js" in redoc and "https://" not in redoc
    assert client.get("/docs-assets/redoc.standalone.js").status_code == 200
