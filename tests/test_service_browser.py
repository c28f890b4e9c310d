"""The web page in a real Chromium (Playwright for Python driving Debian's ``/usr/bin/chromium``)
against a ``citewise serve`` process: ask (the answer streamed, then the conversation shown), see
the answer, open a citation at its highlighted span, a restricted document never shown without its
group, an abstention shown as such, a follow-up in the same conversation, /docs offline.

Screenshots (PNG) of a conversation, a source card and an abstention are written to
``$CITEWISE_SCREENSHOTS`` when it is set (else into the test's temp folder).

CI installs the browser with ``apt-get install -y chromium``; where it is absent the tests skip
saying so (Playwright's own browser download is never used).
"""

from __future__ import annotations

import os
from pathlib import Path
import shutil

import httpx
import pytest

from citewise.demo import sample_dir
from citewise.index import Index
from citewise.service.auth import KeyStore

from citewise.service.render import plain

from svc_server import Server


def _words(text: str) -> str:
    return " ".join(text.replace("|", " ").split())


CHROMIUM = os.environ.get("CITEWISE_CHROMIUM", "/usr/bin/chromium")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is absent (CI: apt-get install -y chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
PUBLIC_Q = "How long do I have to request a refund on Pro?"
FINANCE_Q = "Who approves a refund above 75,000 USD?"
FINANCE_DOC = "internal/finance/refund-approval-matrix"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("web")
    shutil.copytree(sample_dir() / "corpus", root / "docs")
    idx = Index.open(root / "index", embedder="hashing")
    assert not idx.ingest(root / "docs").errors
    ks = KeyStore(idx.path)
    keys = {"finance": ks.add("fin", ("finance",)), "support": ks.add("sup", ("support",))}
    server = Server(idx.path, "--rate", "0")
    yield server.url, keys
    server.stop()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    ctx = browser.new_context()
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    yield pg
    ctx.close()


def ask(page, url: str | None, question: str) -> None:
    """Ask ``question`` on a new conversation (``url``) or the one shown (None): the page streams
    the answer, then shows the conversation (``/c/ID#turn-N``)."""
    if url is not None:
        page.goto(url + "/")
    before = page.locator("section.turn:not(.streaming)").count() if url is None else 0
    page.fill("input[name=q]", question)
    page.click("button:has-text('Ask')")
    page.wait_for_url(f"**/c/*#turn-{before + 1}")
    page.wait_for_load_state()
    page.wait_for_function(f"document.querySelectorAll('section.turn:not(.streaming)').length > {before}")


def sign_in(page, url: str, key: str) -> None:
    page.goto(url + "/")
    page.fill("header input[name=key]", key)
    page.click("header button:has-text('Sign in')")
    page.wait_for_load_state()


def test_answer_and_citation_opens_the_highlighted_span(page, site):
    url, _ = site
    ask(page, url, PUBLIC_Q)
    answer = page.locator("#answer")
    assert answer.is_visible() and "Choose Request refund." in answer.inner_text()
    source = page.locator("ol.sources li").first
    assert "Refunds on the Pro plan" in source.inner_text()
    assert "version 3" in source.inner_text() and "updated 2026-09-14" in source.inner_text()
    href = page.locator("#answer a.cite").first.get_attribute("href")
    page.locator("#answer a.cite").first.click()
    page.wait_for_load_state()
    assert page.url.startswith(url + "/doc/help/refunds/refunds-pro?start=")
    assert page.locator("#doc-title").inner_text() == "Refunds on the Pro plan"
    mark = page.locator("mark#cited")
    assert mark.is_visible()
    start, end = (int(x.split("=")[1]) for x in href.split("?")[1].split("#")[0].split("&"))
    expected = httpx.get(f"{url}/v1/documents/help/refunds/refunds-pro", params={"start": start, "end": end}).json()
    marked = "".join(page.locator("mark.cited").all_inner_texts())
    assert "".join(_words(marked).split()) == "".join(_words(plain(expected["highlight"]["text"])).split())
    assert marked.strip()
    # the cited passage with its context, rendered (no Markdown marks), not the whole document
    assert page.locator("#excerpt").is_visible() and page.locator("#whole").count() == 0
    shown = page.locator("#source").inner_text()
    assert _words(plain(expected["context"]["text"]))[5:-5] in _words(shown) and "**" not in shown
    # the highlighted span is in view (the #cited fragment scrolled to it)
    assert page.evaluate(
        "() => { const r = document.getElementById('cited').getBoundingClientRect();"
        " return r.top >= 0 && r.top < window.innerHeight; }"
    )


def test_abstention_is_shown_as_such(page, site):
    url, _ = site
    ask(page, url, "What is the capital of Peru?")
    box = page.locator("#abstained")
    assert box.is_visible()
    assert "No answer." in box.inner_text() and "I have no document on this." in box.inner_text()
    assert "Why: No document you can read mentions “Peru”." in box.inner_text()
    assert page.locator("#outcome").inner_text() == "No answer"
    assert page.locator("#answer").count() == 0 and page.locator("ol.sources").count() == 0


def test_restricted_document_never_shown_without_the_group(page, site):
    url, keys = site
    sign_in(page, url, keys["support"])
    assert page.locator("#principal").inner_text() == "key:sup"
    ask(page, url, FINANCE_Q)
    html = page.content()
    assert FINANCE_DOC not in html and "Refund approval matrix" not in html
    page.goto(f"{url}/search?q=refund+approval+matrix+approval+bands")
    assert page.locator("ol.hits li").count() > 0
    assert FINANCE_DOC not in page.content() and "Refund approval matrix" not in page.content()
    page.goto(f"{url}/doc/{FINANCE_DOC}")
    assert "is visible to you" in page.locator("#error").inner_text()
    assert "Approval bands" not in page.content()
    # signed in with the group, the same question cites it and the link opens it
    page.click("header button:has-text('Sign out')")
    sign_in(page, url, keys["finance"])
    ask(page, url, FINANCE_Q)
    link = page.locator(f"ol.sources a.source[href^='/doc/{FINANCE_DOC}']")
    assert link.count() == 1
    link.click()
    page.wait_for_load_state()
    assert page.locator("#doc-title").inner_text() == "Refund approval matrix"
    assert page.locator("mark#cited").inner_text().strip()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = os.environ.get("CITEWISE_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("shots")
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_conversation_follow_up_sources_and_screenshots(page, site, shots):
    url, keys = site
    page.set_viewport_size({"width": 1100, "height": 1400})
    sign_in(page, url, keys["finance"])
    page.goto(url + "/")
    page.click("details#narrow summary")
    page.fill("input[name=scope]", "help/refunds/")
    ask(page, None, "How long do I have to request a refund on Pro?")
    assert page.url.split("#")[0].startswith(url + "/c/")
    assert "only within help/refunds/" in page.locator("#scope-line").inner_text()
    assert "key:fin (groups: finance)" in page.locator("#scope-line").inner_text()
    first_outcome = page.locator("#outcome").inner_text()
    assert first_outcome in ("Supported by the sources", "Answered from your documents")
    card = page.locator("ol.sources li.card").first
    assert card.locator("a.source").inner_text().startswith("Refunds on the")
    assert "version" in card.inner_text() and "updated" in card.inner_text()
    # a follow-up keeps the scope and the principal; the first turn stays on the page
    ask(page, None, "Can I get a refund after 20 days on the Pro plan?")
    assert page.locator("section.turn").count() == 2
    assert page.locator("section.turn .q").all_inner_texts() == [
        "How long do I have to request a refund on Pro?",
        "Can I get a refund after 20 days on the Pro plan?",
    ]
    assert "only within help/refunds/" in page.locator("#scope-line").inner_text()
    assert all(
        h.startswith("/doc/help/refunds/")
        for h in page.locator("section.turn a.cite, section.turn a.source").evaluate_all(
            "els => els.map(e => e.getAttribute('href'))"
        )
    )
    page.screenshot(path=str(shots / "conversation.png"), full_page=True)
    page.locator("#turn-2 ol.sources li.card").first.screenshot(path=str(shots / "source-card.png"))
    # an abstention in words, with its reason as a sentence
    ask(page, url, "What is the refund policy of Stripe?")
    assert page.locator("#outcome").inner_text() == "No answer"
    assert page.locator("#abstained .why").inner_text() == "Why: No document you can read mentions \u201cStripe\u201d."
    page.locator("section.turn").last.screenshot(path=str(shots / "abstention.png"))
    assert all((shots / n).stat().st_size > 5_000 for n in ("conversation.png", "source-card.png", "abstention.png"))


def test_streamed_sentences_arrive_before_the_page_is_shown(page, site):
    url, _ = site
    page.goto(url + "/")
    events = page.evaluate(
        """async () => {
        const r = await fetch('/ask/stream', {method: 'POST', body: new URLSearchParams({q: %s})});
        const text = await r.text();
        return text.split('\\n\\n').filter(Boolean).map(b => b.split('\\n')[0].slice(7));
    }"""
        % repr(PUBLIC_Q)
    )
    assert events[0] == "start" and events[-1] == "done" and "sentence" in events


def test_api_docs_render_offline(page, site):
    url, _ = site
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(url + "/docs")
    page.wait_for_selector(".opblock-summary-path")
    assert "/v1/ask" in page.locator(".opblock-summary-path").all_inner_texts()
    assert page.locator(".swagger-ui").count() == 1 and page.locator("button.authorize").count() == 1
    assert all(u.startswith(url) for u in requested), [u for u in requested if not u.startswith(url)]
