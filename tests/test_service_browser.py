"""The web page in a real Chromium (Playwright for Python driving Debian's ``/usr/bin/chromium``)
against a ``citewise serve`` process: ask, see the answer, open a citation at its highlighted span,
a restricted document never shown without its group, an abstention shown as such.

CI installs the browser with ``apt-get install -y chromium``; where it is absent the tests skip
saying so (Playwright's own browser download is never used).
"""

from __future__ import annotations

import os
import shutil

import httpx
import pytest

from citewise.demo import sample_dir
from citewise.index import Index
from citewise.service.auth import KeyStore

from svc_server import Server

CHROMIUM = os.environ.get("CITEWISE_CHROMIUM", "/usr/bin/chromium")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is absent (CI: apt-get install -y chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]
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


def ask(page, url: str, question: str) -> None:
    page.goto(url + "/")
    page.fill("input[name=q]", question)
    page.click("button:has-text('Ask')")
    page.wait_for_load_state()


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
    assert mark.inner_text() == expected["highlight"]["text"] and mark.inner_text().strip()
    # the cited passage with its context, not the whole document (no --full-documents: no link to it)
    assert page.locator("#excerpt").is_visible() and page.locator("#whole").count() == 0
    shown = page.locator("pre.source").inner_text()
    assert expected["context"]["text"] in shown and len(shown) < expected["length"]
    # the highlighted span is in view (the #cited fragment scrolled to it)
    assert page.evaluate("() => { const r = document.getElementById('cited').getBoundingClientRect();"
                         " return r.top >= 0 && r.top < window.innerHeight; }")


def test_abstention_is_shown_as_such(page, site):
    url, _ = site
    ask(page, url, "What is the capital of Peru?")
    box = page.locator("#abstained")
    assert box.is_visible()
    assert "No answer." in box.inner_text() and "I have no document on this." in box.inner_text()
    assert "unknown name: Peru" in box.inner_text()
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
