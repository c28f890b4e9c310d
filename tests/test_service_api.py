"""The HTTP API in process (FastAPI's TestClient): auth, permissions, abstention, rate limit,
ingest jobs, OpenAI-compatible shapes (parsed by the real ``openai`` client), metrics, source view.

Most tests use the sample corpus under the deterministic hashing embedder (fast); the permission
probe uses the MiniLM sample index and the adversarial query set of tests/test_permissions.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import time

import jwt
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from citewise.core import ABSTENTION_TEXT, CitewiseError
from citewise.demo import configure_sample_records, sample_dir
from citewise.index import Index
from citewise.service.app import create_app, openai_filters, ApiError
from citewise.service.auth import AuthError, JwtConfig, KeyStore
from citewise.service.ratelimit import TokenBuckets


RESTRICTED = {"internal/finance/": "finance", "internal/support/": "support", "internal/security/": "security"}
RESTRICTED_TITLES = {
    "finance": ["Refund approval matrix", "Chargeback playbook"],
    "support": ["Support escalation policy"],
    "security": ["SSO incident runbook"],
}
FINANCE_DOC = "internal/finance/refund-approval-matrix"
PUBLIC_Q = "How long do I have to request a refund on Pro?"


@pytest.fixture(scope="module")
def hindex(tmp_path_factory):
    """The sample corpus in a hashing-embedder index, with keys: finance (groups finance),
    support, admin (admin, no groups) and a revoked one."""
    idx = Index.open(tmp_path_factory.mktemp("svc-index"), embedder="hashing")
    assert not idx.ingest(sample_dir() / "corpus").errors
    configure_sample_records(idx.path)
    ks = KeyStore(idx.path)
    keys = {
        "finance": ks.add("fin", ("finance",)),
        "support": ks.add("sup", ("support",)),
        "admin": ks.add("ops", (), admin=True),
        "revoked": ks.add("old", ("finance",)),
    }
    ks.revoke("old")
    return idx, keys


def bearer(key: str) -> dict:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def client(hindex):
    idx, _ = hindex
    with TestClient(create_app(idx.path, rate=0)) as c:
        yield c


def restricted_in(payload, group_ok: tuple[str, ...] = ()) -> list[str]:
    """Restricted doc ids or titles (of groups not in ``group_ok``) anywhere in a JSON payload."""
    text = json.dumps(payload)
    found = [p for p, g in RESTRICTED.items() if g not in group_ok and p in text]
    found += [t for g, ts in RESTRICTED_TITLES.items() if g not in group_ok for t in ts if t in text]
    return found


# -- keys ---------------------------------------------------------------------------------------
def test_key_store_keeps_only_a_scrypt_hash(tmp_path):
    ks = KeyStore(tmp_path)
    key = ks.add("alice", ("finance", "support"))
    assert key.startswith("cw_")
    key_id, secret = key[3:15], key[16:]
    raw = (tmp_path / "api_keys.json").read_text()
    assert secret not in raw and key not in raw
    assert oct((tmp_path / "api_keys.json").stat().st_mode & 0o777) == "0o600"
    entry = json.loads(raw)["keys"][0]
    assert entry["key_id"] == key_id and entry["groups"] == ["finance", "support"] and entry["admin"] is False
    # the stored hash is scrypt(secret, salt) with the documented parameters
    want = hashlib.scrypt(
        secret.encode(), salt=base64.b64decode(entry["salt"]), n=2**14, r=8, p=1, maxmem=64 * 1024 * 1024, dklen=64
    )
    assert base64.b64decode(entry["hash"]) == want
    caller = ks.verify(key)
    assert caller.principal.groups == ("finance", "support") and caller.principal.name == "key:alice"
    with pytest.raises(AuthError):
        ks.verify(key[:-1] + ("A" if key[-1] != "A" else "B"))  # same id, wrong secret
    with pytest.raises(AuthError):
        ks.verify("cw_000000000000_" + secret)
    with pytest.raises(CitewiseError, match="active key named 'alice'"):
        ks.add("alice")
    assert ks.revoke("alice") == 1
    with pytest.raises(AuthError):
        ks.verify(key)  # revoked, even though it was verified (and cached) before
    assert [k["name"] for k in ks.list()] == ["alice"] and ks.list()[0]["revoked_at"]
    assert "hash" not in ks.list()[0] and "salt" not in ks.list()[0]


def test_revocation_by_another_handle_is_seen(tmp_path):
    server, cli = KeyStore(tmp_path), KeyStore(tmp_path)
    key = cli.add("bob", ("support",))
    assert server.verify(key).principal.groups == ("support",)
    time.sleep(0.01)
    cli.revoke("bob")
    with pytest.raises(AuthError):
        server.verify(key)


# -- auth paths ---------------------------------------------------------------------------------
def test_a_request_body_over_the_limit_is_413_before_it_is_read(client):
    from citewise.service.app import MAX_BODY_BYTES

    body = b'{"query": "refund", "pad": "' + b"x" * (MAX_BODY_BYTES + 1) + b'"}'
    r = client.post("/v1/search", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["type"] == "request_too_large"
    assert client.post("/v1/search", json={"query": "refund", "k": 1}).status_code == 200


def test_a_chunked_body_over_the_limit_is_413_not_400(client):
    """A body sent without Content-Length (chunked) passed the limit while FastAPI read it, and
    FastAPI answered its own 400 "error parsing the body" (break-it trial)."""
    from citewise.service.app import MAX_BODY_BYTES

    def pieces():  # no length known up front: httpx sends Transfer-Encoding: chunked
        yield b'{"query": "refund", "pad": "'
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b"x" * 65536
        yield b'"}'

    r = client.post("/v1/search", content=pieces(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"] == {
        "message": f"request body over {MAX_BODY_BYTES:,} bytes",
        "type": "request_too_large",
    }
    small = client.post(
        "/v1/search", content=iter([b'{"query": "refund", ', b'"k": 1}']), headers={"content-type": "application/json"}
    )
    assert small.status_code == 200 and len(small.json()["hits"]) == 1


def test_concurrent_key_adds_from_processes_all_survive(tmp_path):
    """Eight concurrent `citewise keys add` kept four keys, though each printed its key (each
    read the file before the others replaced it); the file is now changed under a flock."""
    import subprocess
    import sys

    code = (
        "import sys; from citewise.service.auth import KeyStore; "
        "ks = KeyStore(sys.argv[1]); [ks.add(f'{sys.argv[2]}-{i}') for i in range(3)]"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path), f"p{n}"]) for n in range(6)]
    assert [p.wait(timeout=120) for p in procs] == [0] * 6
    assert len(KeyStore(tmp_path).list()) == 18


def test_anonymous_sees_public_only_and_key_groups_apply(client, hindex):
    _, keys = hindex
    q = {"query": "refund approval matrix approval bands Financial Controller", "k": 10}
    anon = client.post("/v1/search", json=q)
    assert anon.status_code == 200 and anon.json()["hits"] and anon.json()["principal"] == "anonymous"
    assert restricted_in(anon.json()) == []
    fin = client.post("/v1/search", json=q, headers=bearer(keys["finance"])).json()
    assert fin["hits"][0]["doc_id"] == FINANCE_DOC and fin["principal"] == "key:fin"
    assert restricted_in(fin, ("finance",)) == []
    sup = client.post("/v1/search", json=q, headers={"X-API-Key": keys["support"]}).json()
    assert restricted_in(sup, ("support",)) == []
    # the query's words no visible hit holds, as `citewise search --json` and the MCP tool say
    odd = client.post("/v1/search", json={"query": "refund zyxxyq", "k": 5}).json()
    assert odd["hits"] and odd["missing_words"] == ["zyxxyq"]
    assert client.post("/v1/search", json={"query": "refund", "k": 5}).json()["missing_words"] == []


def test_spoofed_principal_in_body_is_ignored(client, hindex):
    _, keys = hindex
    body = {
        "query": "refund approval matrix approval bands",
        "k": 10,
        "principal": {"name": "x", "groups": ["finance"]},
        "groups": ["finance"],
        "as": ["finance"],
        "as_": ["finance"],
    }
    for headers in ({}, bearer(keys["support"])):
        r = client.post("/v1/search", json=body, headers=headers)
        assert r.status_code == 200 and r.json()["hits"]
        assert restricted_in(r.json(), ("support",)) == []
    r = client.post(
        "/v1/ask",
        json={"question": "Who approves a refund above 75,000 USD?", "groups": ["finance"], "principal": "finance"},
    )
    assert r.status_code == 200 and restricted_in(r.json()) == []


def test_bad_and_revoked_keys_are_401_never_anonymous(client, hindex):
    _, keys = hindex
    for headers in (
        bearer("cw_0123456789ab_" + "x" * 43),
        bearer(keys["revoked"]),
        bearer("not-a-key"),
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"X-API-Key": "cw_nope"},
    ):
        r = client.post("/v1/search", json={"query": "refund"}, headers=headers)
        assert r.status_code == 401, headers
        assert r.headers["www-authenticate"] == "Bearer" and r.json()["error"]["type"] == "authentication_error"


def test_require_auth_refuses_anonymous(hindex):
    idx, keys = hindex
    with TestClient(create_app(idx.path, require_auth=True, rate=0)) as c:
        r = c.post("/v1/search", json={"query": "refund"})
        assert r.status_code == 401 and "authentication required" in r.json()["error"]["message"]
        assert c.get("/v1/status").status_code == 401
        assert c.post("/v1/search", json={"query": "refund"}, headers=bearer(keys["revoked"])).status_code == 401
        assert c.post("/v1/search", json={"query": "refund"}, headers=bearer(keys["support"])).status_code == 200
        assert c.get("/healthz").status_code == 200  # probes need no credential
        page = c.get("/")
        assert page.status_code == 401 and "shows its documents to people who sign in" in page.text
        assert "Authorization" not in page.text  # words for a person, not for an HTTP client


def test_metrics_need_a_credential_under_require_auth_unless_public_metrics(hindex):
    """/metrics was open under --require-auth; now it is behind the same credentials, and
    ``public_metrics`` (``serve --public-metrics``) opens it explicitly."""
    idx, keys = hindex
    with TestClient(create_app(idx.path, require_auth=True, rate=0)) as c:
        r = c.get("/metrics")
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert "authentication required" in r.json()["error"]["message"]
        assert c.get("/metrics", headers=bearer(keys["revoked"])).status_code == 401
        ok = c.get("/metrics", headers=bearer(keys["support"]))
        assert ok.status_code == 200 and "citewise_index_chunks" in ok.text
        assert c.get("/metrics", headers={"X-API-Key": keys["admin"]}).status_code == 200
    with TestClient(create_app(idx.path, require_auth=True, rate=0, public_metrics=True)) as c:
        r = c.get("/metrics")
        assert r.status_code == 200 and "citewise_index_chunks" in r.text
        assert c.post("/v1/search", json={"query": "refund"}).status_code == 401  # only /metrics is opened
        assert c.get("/metrics", headers=bearer(keys["revoked"])).status_code == 401  # a bad key is never anonymous
    with TestClient(create_app(idx.path, rate=0)) as c:  # no --require-auth: anonymous, as every route
        assert c.get("/metrics").status_code == 200


def test_jwt_groups_claim_admin_group_and_failures(hindex):
    idx, keys = hindex
    cfg = JwtConfig(secret="s3cret-for-tests-only-0123456789ab", groups_claim="realm_access.roles", audience="citewise")
    now = int(time.time())

    def token(claims, secret="s3cret-for-tests-only-0123456789ab"):
        base = {"sub": "dana", "aud": "citewise", "exp": now + 300, "realm_access": {"roles": ["finance"]}}
        return jwt.encode({**base, **claims}, secret, algorithm="HS256")

    with TestClient(create_app(idx.path, jwt=cfg, rate=0)) as c:
        q = {"query": "refund approval matrix approval bands Financial Controller", "k": 5}
        ok = c.post("/v1/search", json=q, headers=bearer(token({})))
        assert ok.status_code == 200 and ok.json()["principal"] == "jwt:dana"
        assert ok.json()["hits"][0]["doc_id"] == FINANCE_DOC
        assert c.post("/v1/search", json=q, headers=bearer(token({"exp": now - 3600}))).status_code == 401
        assert (
            c.post(
                "/v1/search", json=q, headers=bearer(token({}, secret="other-secret-0123456789abcdef0123"))
            ).status_code
            == 401
        )
        assert c.post("/v1/search", json=q, headers=bearer(token({"aud": "someone-else"}))).status_code == 401
        bad_claim = c.post("/v1/search", json=q, headers=bearer(token({"realm_access": {"roles": [1, 2]}})))
        assert bad_claim.status_code == 401 and "realm_access.roles" in bad_claim.json()["error"]["message"]
        # API keys still work next to JWTs; a JWT without the admin group may not ingest
        assert c.post("/v1/search", json=q, headers=bearer(keys["support"])).status_code == 200
        assert c.post("/v1/ingest", json={"path": "/tmp"}, headers=bearer(token({}))).status_code == 403
        admin = bearer(token({"realm_access": {"roles": ["citewise-admin"]}}))
        r = c.post("/v1/ingest", json={"path": "relative/path"}, headers=admin)
        assert r.status_code == 400 and "absolute path" in r.json()["error"]["message"]


def test_source_view_is_permission_checked_and_offsets_point_into_it(client, hindex):
    idx, keys = hindex
    assert client.get(f"/v1/documents/{FINANCE_DOC}").status_code == 404
    assert client.get(f"/v1/documents/{FINANCE_DOC}", headers=bearer(keys["support"])).status_code == 404
    assert (
        client.get("/v1/documents/no/such/doc").json()["error"]["message"] == "no document 'no/such/doc' visible to you"
    )
    ans = client.post("/v1/ask", json={"question": PUBLIC_Q}).json()
    assert ans["outcome"] == "answered"
    c = ans["citations"][0]
    view = client.get(f"/v1/documents/{c['doc_id']}", params={"start": c["start"], "end": c["end"]}).json()
    assert view["exact"] is True and view["title"] == c["title"] and view["version"] == c["version"]
    # relative to the ingested folder, as the document id is: the server's folders stay private
    assert view["source"] == f"{c['doc_id']}.md" and not view["source"].startswith("/")
    assert view["text"] is None and view["full"] is False  # not the whole document by default
    with TestClient(create_app(idx.path, rate=0, full_documents=True)) as full_client:
        whole = full_client.get(
            f"/v1/documents/{c['doc_id']}", params={"start": c["start"], "end": c["end"], "full": "true"}
        ).json()
        fin = full_client.get(
            f"/v1/documents/{FINANCE_DOC}", params={"full": "true"}, headers=bearer(keys["finance"])
        ).json()
    text = whole["text"]
    assert whole["full"] is True and len(text) == whole["length"] == view["length"]
    assert text == (sample_dir() / "corpus" / f"{c['doc_id']}.md").read_text(encoding="utf-8")
    assert view["highlight"]["text"] == text[c["start"] : c["end"]] and view["highlight"]["text"].strip()
    ctx = view["context"]
    assert ctx["text"] == text[ctx["start"] : ctx["end"]] and ctx["start"] <= c["start"] < c["end"] <= ctx["end"]
    # 300 characters each side, each edge moved in to a word boundary (never more than a word)
    assert c["start"] - 300 <= ctx["start"] and ctx["end"] <= c["end"] + 300
    assert ctx["start"] == 0 or text[ctx["start"] - 1].isspace()
    assert ctx["end"] == len(text) or text[ctx["end"]].isspace()
    assert c["start"] - ctx["start"] > 250 and ctx["end"] - c["end"] > 250
    # every chunk's stored text sits at its offsets in the whole text
    chunks = idx.store.get_chunks([ch["chunk_id"] for ch in view["chunks"]])
    for ch in view["chunks"]:
        stored = chunks[ch["chunk_id"]]
        assert text[ch["start"] : ch["end"]] == stored.text[len(stored.text) - (stored.end - stored.start) :]
    assert fin["title"] == "Refund approval matrix" and fin["text"].startswith("---\ntitle:")
    bad_span = client.get(f"/v1/documents/{c['doc_id']}", params={"start": 5, "end": 10**9}).json()
    assert bad_span["highlight"] is None and bad_span["context"]["start"] == 0  # the opening instead
    assert len(bad_span["context"]["text"]) <= 600


def test_whole_document_only_when_asked_and_allowed(client, hindex):
    idx, keys = hindex
    doc = "help/refunds/refunds-pro"
    text = (sample_dir() / "corpus" / f"{doc}.md").read_text(encoding="utf-8")
    refused = client.get(f"/v1/documents/{doc}", params={"full": "true"})
    assert refused.status_code == 403 and "--full-documents" in refused.json()["error"]["message"]
    assert text[1000:1400] not in refused.text
    opening = client.get(f"/v1/documents/{doc}", params={"context": 50}).json()
    assert opening["highlight"] is None and opening["context"] == {"start": 0, "end": 98, "text": text[:98]}
    assert text[98].isspace() and not text[99].isspace()  # 2 x 50 characters, the cut word left out
    none = client.get(f"/v1/documents/{doc}", params={"start": 900, "end": 950, "context": 0}).json()
    assert none["context"] == none["highlight"] == {"start": 900, "end": 950, "text": text[900:950]}
    assert client.get(f"/v1/documents/{doc}", params={"context": 2001}).status_code == 422
    assert client.get(f"/v1/documents/{doc}", params={"context": -1}).status_code == 422
    # the web page follows the same rule: the cited passage in context, whole only when allowed
    page = client.get(f"/doc/{doc}", params={"start": 2000, "end": 2100})
    assert page.status_code == 200 and 'id="excerpt"' in page.text and 'id="whole"' not in page.text
    assert '<mark class="cited" id="cited">' in page.text
    lo, hi = map(int, re.search(r"characters (\d+)–(\d+) of 5154", page.text).groups())
    assert 1000 <= lo < 1020 and 3080 < hi <= 3100  # 1,000 characters each side, cut at word boundaries
    assert "paused for as long as the dispute is open" not in page.text  # text[3300:3400], outside the window
    assert "paused for as long as the dispute is open" in text[3300:3400]
    assert client.get(f"/doc/{doc}", params={"full": "1"}).status_code == 403
    with TestClient(create_app(idx.path, rate=0, full_documents=True)) as c:
        page = c.get(f"/doc/{doc}", params={"start": 2000, "end": 2100})
        assert 'href="/doc/help/refunds/refunds-pro?start=2000&amp;end=2100&amp;full=1#cited"' in page.text
        whole = c.get(f"/doc/{doc}", params={"start": 2000, "end": 2100, "full": "1"})
        assert whole.status_code == 200 and 'id="excerpt"' not in whole.text
        assert "paused for as long as the dispute is open" in whole.text


# -- answers ------------------------------------------------------------------------------------
def test_ask_json_matches_the_cli_shape_and_abstains(client):
    from citewise.service.payloads import answer_to_dict
    from citewise.core import Answer

    keys = list(answer_to_dict(Answer("x", "answered")))
    r = client.post("/v1/ask", json={"question": "What is the capital of Peru?"})
    assert r.status_code == 200 and list(r.json()) == keys
    body = r.json()
    assert body["outcome"] == "abstained" and body["answer"] == ABSTENTION_TEXT and body["citations"] == []
    assert body["abstain_reason"] == "unknown name: Peru"
    ok = client.post("/v1/ask", json={"question": PUBLIC_Q}).json()
    assert ok["outcome"] == "answered" and ok["citations"][0]["doc_id"] == "help/refunds/refunds-pro"
    assert set(ok["citations"][0]) == {"doc_id", "title", "version", "updated", "chunk_id", "start", "end", "spans"}


def test_record_question_reports_its_tool_call(client):
    body = client.post("/v1/ask", json={"question": "What is the status of invoice 2041?"}).json()
    assert body["tool_calls"] and body["tool_calls"][0]["tool"] and body["tool_calls"][0]["error"] is None
    assert f"[tool:{body['tool_calls'][0]['tool']}]" in body["answer"]


def test_query_length_cap_and_empty_query(client):
    r = client.post("/v1/search", json={"query": "x" * 2001})
    assert r.status_code == 413 and r.json()["error"]["message"] == "'query' is 2,001 characters; the limit is 2,000"
    assert client.post("/v1/ask", json={"question": "y" * 2001}).status_code == 413
    assert client.post("/v1/search", json={"query": "   "}).status_code == 400
    bad = client.post("/v1/search", json={"query": "a", "k": 0})
    assert (
        bad.status_code == 422
        and bad.json()["error"]["message"] == "body.k: Input should be greater than or equal to 1"
    )
    missing = client.post("/v1/ask", json={"q": "a"})
    assert missing.status_code == 422 and missing.json()["error"]["message"] == "body.question: Field required"
    assert client.post("/v1/search", json={"query": "x" * 2000}).status_code == 200


def test_request_timeout_is_504(hindex):
    idx, _ = hindex
    with TestClient(create_app(idx.path, rate=0, request_timeout_s=1e-6)) as c:
        r = c.post("/v1/ask", json={"question": PUBLIC_Q})
        assert r.status_code == 504 and r.json()["error"]["type"] == "timeout"


# -- rate limit ---------------------------------------------------------------------------------
def test_token_bucket_refill_arithmetic():
    now = [100.0]
    tb = TokenBuckets(rate=2.0, burst=2, clock=lambda: now[0])
    assert tb.take("a") == 0.0 and tb.take("a") == 0.0
    assert tb.take("a") == pytest.approx(0.5)  # empty: one token takes 1/rate s
    assert tb.take("b") == 0.0  # buckets are per key
    now[0] += 0.25
    assert tb.take("a") == pytest.approx(0.25)  # half a token refilled
    now[0] += 0.25
    assert tb.take("a") == 0.0
    now[0] += 100
    assert [tb.take("a") for _ in range(3)][:2] == [0.0, 0.0]  # refills only up to burst
    assert TokenBuckets(rate=0, burst=1).take("x") == 0.0  # off


def test_rate_limit_per_key_429_with_retry_after(hindex):
    idx, keys = hindex
    with TestClient(create_app(idx.path, rate=0.01, burst=3)) as c:
        codes = [
            c.post("/v1/search", json={"query": "refund"}, headers=bearer(keys["finance"])).status_code
            for _ in range(4)
        ]
        assert codes == [200, 200, 200, 429]
        r = c.post("/v1/search", json={"query": "refund"}, headers=bearer(keys["finance"]))
        assert (
            r.status_code == 429
            and int(r.headers["retry-after"]) >= 1
            and r.json()["error"]["type"] == "rate_limit_exceeded"
        )
        assert c.post("/v1/search", json={"query": "refund"}, headers=bearer(keys["support"])).status_code == 200
        metrics = {s.name: s.value for f in text_string_to_metric_families(c.get("/metrics").text) for s in f.samples}
        assert metrics["citewise_rate_limited_total"] == 2.0


# -- ingest -------------------------------------------------------------------------------------
def test_ingest_is_admin_only_and_runs_as_a_job(client, hindex, tmp_path):
    idx, keys = hindex
    docs = tmp_path / "new-docs"
    docs.mkdir()
    (docs / "late-fees.md").write_text(
        "---\ntitle: Late fees\n---\n# Late fees\n\nA late fee of 40 zorkmids applies after 14 days.\n",
        encoding="utf-8",
    )
    assert client.post("/v1/ingest", json={"path": str(docs)}).status_code == 403
    assert client.post("/v1/ingest", json={"path": str(docs)}, headers=bearer(keys["finance"])).status_code == 403
    assert (
        client.post("/v1/ingest", json={"path": str(tmp_path / "nope")}, headers=bearer(keys["admin"])).status_code
        == 400
    )
    r = client.post("/v1/ingest", json={"path": str(docs)}, headers=bearer(keys["admin"]))
    assert r.status_code == 202, r.text
    job = r.json()
    assert job["status"] in ("running", "done") and job["status_url"] == f"/v1/ingest/{job['job_id']}"
    assert client.get(job["status_url"], headers=bearer(keys["finance"])).status_code == 403
    for _ in range(300):
        state = client.get(job["status_url"], headers=bearer(keys["admin"])).json()
        if state["status"] != "running":
            break
        time.sleep(0.1)
    assert state["status"] == "done", state
    assert state["report"]["added"] == 1 and state["requested_by"] == "key:ops"
    hits = client.post("/v1/search", json={"query": "zorkmids late fee", "k": 1}).json()["hits"]
    assert hits[0]["doc_id"] == "late-fees"
    metrics = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(client.get("/metrics").text)
        for s in f.samples
    }
    assert metrics[("citewise_ingest_documents_total", (("result", "added"),))] == 1.0
    assert client.get("/v1/ingest/nope", headers=bearer(keys["admin"])).status_code == 404


def test_ingest_roots_confine_paths(hindex, tmp_path):
    idx, keys = hindex
    with TestClient(create_app(idx.path, rate=0, ingest_roots=[tmp_path / "allowed"])) as c:
        r = c.post("/v1/ingest", json={"path": str(sample_dir() / "corpus")}, headers=bearer(keys["admin"]))
        assert r.status_code == 403 and "outside the folders" in r.json()["error"]["message"]


def test_ingest_roots_are_checked_before_existence_so_paths_cannot_be_probed(hindex, tmp_path):
    """Outside the roots, an existing and a missing path get the same 403 (the existence check
    used to come first: 400 "no such file" for a missing path told an admin key holder which
    server paths exist); inside the roots a missing path is still a 400."""
    idx, keys = hindex
    (tmp_path / "allowed").mkdir()
    (tmp_path / "secret").mkdir()
    with TestClient(create_app(idx.path, rate=0, ingest_roots=[tmp_path / "allowed"])) as c:

        def post(path):
            r = c.post("/v1/ingest", json={"path": str(path)}, headers=bearer(keys["admin"]))
            return r.status_code, r.json()["error"]

        roots = f"({tmp_path / 'allowed'})"
        for path in (
            tmp_path / "secret",
            tmp_path / "no-such-folder",
            tmp_path / "allowed" / ".." / "secret",
            tmp_path / "allowed" / ".." / "missing",
        ):
            assert post(path) == (
                403,
                {
                    "message": f"path {str(path)!r} is outside the folders this server may ingest {roots}",
                    "type": "forbidden",
                },
            ), path
        assert post(tmp_path / "allowed" / "missing") == (
            400,
            {
                "message": f"path {str(tmp_path / 'allowed' / 'missing')!r}: no such file or folder on the server",
                "type": "invalid_request_error",
            },
        )


# -- OpenAI-compatible shapes, parsed by the openai client ---------------------------------------
def test_openai_client_parses_chat_completion_with_citations(client, hindex):
    openai = pytest.importorskip("openai", reason="the openai client is in the test extra")
    _, keys = hindex
    oa = openai.OpenAI(base_url="http://testserver/v1", api_key=keys["finance"], http_client=client)
    done = oa.chat.completions.create(
        model="citewise", messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": PUBLIC_Q}]
    )
    msg = done.choices[0].message
    assert msg.role == "assistant" and "[doc:help/refunds/refunds-pro]" in msg.content
    ann = msg.annotations[0]
    assert ann.type == "url_citation"
    assert msg.content[ann.url_citation.start_index : ann.url_citation.end_index] == "[doc:help/refunds/refunds-pro]"
    assert (
        "/doc/help/refunds/refunds-pro?start=" in ann.url_citation.url
        and ann.url_citation.title == "Refunds on the Pro plan"
    )
    extra = done.model_extra
    assert extra["outcome"] == "answered" and extra["citations"][0]["doc_id"] == "help/refunds/refunds-pro"
    no = oa.chat.completions.create(
        model="citewise", messages=[{"role": "user", "content": "What is the capital of Peru?"}]
    )
    assert no.choices[0].message.content == ABSTENTION_TEXT and no.model_extra["outcome"] == "abstained"
    stream = oa.chat.completions.create(model="citewise", stream=True, messages=[{"role": "user", "content": PUBLIC_Q}])
    text = "".join(ch.choices[0].delta.content or "" for ch in stream)
    assert text == msg.content


def test_openai_client_parses_vector_store_search(client, hindex):
    openai = pytest.importorskip("openai", reason="the openai client is in the test extra")
    _, keys = hindex
    oa = openai.OpenAI(base_url="http://testserver/v1", api_key=keys["finance"], http_client=client)
    page = oa.vector_stores.search(vector_store_id="default", query="refund approval bands", max_num_results=3)
    rows = list(page)
    assert 1 <= len(rows) <= 3 and rows[0].file_id == FINANCE_DOC and rows[0].content[0].type == "text"
    assert rows[0].attributes["chunk_id"].startswith(FINANCE_DOC + "#")
    only = oa.vector_stores.search(
        vector_store_id="default",
        query="refund",
        max_num_results=5,
        filters={"type": "eq", "key": "doc_id", "value": "help/refunds/refunds-pro"},
    )
    assert {r.file_id for r in only} == {"help/refunds/refunds-pro"}
    bad = openai.OpenAI(base_url="http://testserver/v1", api_key="cw_000000000000_" + "x" * 43, http_client=client)
    with pytest.raises(openai.AuthenticationError):
        bad.vector_stores.search(vector_store_id="default", query="refund")


def test_openai_filters_translation_and_errors():
    f = openai_filters(
        {
            "type": "and",
            "filters": [
                {"type": "in", "key": "doc_id", "value": ["a", "b"]},
                {"type": "eq", "key": "doc_id", "value": "b"},
                {"type": "eq", "key": "version", "value": 3},
                {"type": "eq", "key": "as_of", "value": "2026-01-31"},
            ],
        }
    )
    assert f.doc_ids == ("b",) and f.version == "3" and str(f.as_of) == "2026-01-31"
    assert openai_filters(None) is None
    with pytest.raises(ApiError, match=r"filters.filters\[0\]: unsupported filter"):
        openai_filters({"type": "and", "filters": [{"type": "gt", "key": "updated", "value": 1}]})
    with pytest.raises(ApiError, match="not a YYYY-MM-DD date"):
        openai_filters({"type": "eq", "key": "as_of", "value": "yesterday"})


# -- status, health, metrics --------------------------------------------------------------------
def test_health_ready_status_and_openapi(client, hindex):
    idx, keys = hindex
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ready"}  # no credential, so no count
    st = client.get("/v1/status").json()
    docs = idx.store.documents()
    public = [e for e in docs.values() if "public" in e.groups]
    assert len(public) < len(docs)  # the fixture has restricted documents
    # an anonymous caller is told how many documents it may read, not how many exist
    assert (st["documents"], st["chunks"]) == (len(public), sum(e.chunk_count for e in public))
    assert st["index"] is None and "lag_s" in st
    full = client.get("/v1/status", headers=bearer(keys["admin"])).json()
    assert full["index"] == str(idx.path) and full["documents"] == idx.store.stats()["documents"]
    spec = client.get("/openapi.json").json()
    for path in (
        "/v1/search",
        "/v1/ask",
        "/v1/ingest",
        "/v1/status",
        "/v1/chat/completions",
        "/v1/vector_stores/{vector_store_id}/search",
        "/v1/documents/{doc_id}",
        "/healthz",
        "/readyz",
    ):
        assert path in spec["paths"], path
    assert client.get("/docs").status_code == 200


def _gauges(c, headers=None) -> dict:
    return {
        s.name: s.value
        for f in text_string_to_metric_families(c.get("/metrics", headers=headers or {}).text)
        for s in f.samples
        if s.name.startswith("citewise_index_")
    }


def test_no_total_reaches_a_caller_who_cannot_read_every_document(hindex):
    """/readyz (no credential even under --require-auth) and /metrics reported the chunk and
    document totals of the whole index, restricted documents included (break-it trial)."""
    idx, keys = hindex
    docs = idx.store.documents()
    count = lambda groups: (
        sum(1 for e in docs.values() if groups & set(e.groups)),  # noqa: E731
        sum(e.chunk_count for e in docs.values() if groups & set(e.groups)),
    )
    public, finance = count({"public"}), count({"public", "finance"})
    assert public[0] < finance[0] < len(docs)  # the fixture has restricted documents of several groups
    with TestClient(create_app(idx.path, require_auth=True, rate=0, public_metrics=True)) as c:
        assert c.get("/readyz").json() == {"status": "ready"}
        anonymous, fin, admin = _gauges(c), _gauges(c, bearer(keys["finance"])), _gauges(c, bearer(keys["admin"]))
        st = c.get("/v1/status", headers=bearer(keys["finance"])).json()
    assert (anonymous["citewise_index_documents"], anonymous["citewise_index_chunks"]) == public
    assert (fin["citewise_index_documents"], fin["citewise_index_chunks"]) == finance
    assert (admin["citewise_index_documents"], admin["citewise_index_chunks"]) == (
        len(docs),
        idx.store.stats()["chunks"],
    )
    assert (st["documents"], st["chunks"]) == finance
    # figures that cannot be split by document are not told to a non-admin
    assert st["unindexed_rows"] is None and st["last_run_errors"] is None and st["index"] is None


def test_status_hides_restricted_stale_documents_from_non_admins(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(sample_dir() / "corpus", docs)
    idx = Index.open(tmp_path / "idx", embedder="hashing")
    idx.ingest(docs)
    (docs / "internal/finance/chargeback-playbook.md").unlink()
    (docs / "help/refunds/refunds-pro.md").unlink()
    admin = KeyStore(idx.path).add("ops", (), admin=True)
    fin = KeyStore(idx.path).add("fin", ("finance",))
    with TestClient(create_app(idx.path, rate=0)) as c:
        stale = lambda h: sorted(s["doc_id"] for s in c.get("/v1/status", headers=h).json()["stale"])  # noqa: E731
        assert stale({}) == ["help/refunds/refunds-pro"]
        assert stale(bearer(fin)) == ["help/refunds/refunds-pro", "internal/finance/chargeback-playbook"]
        assert stale(bearer(admin)) == ["help/refunds/refunds-pro", "internal/finance/chargeback-playbook"]
        page = c.get("/index-status")
        assert "help/refunds/refunds-pro" in page.text and "chargeback-playbook" not in page.text


def test_metrics_parse_and_count(hindex):
    idx, keys = hindex
    with TestClient(create_app(idx.path, rate=0)) as c:
        for _ in range(3):
            c.post("/v1/search", json={"query": "refund"})
        c.post("/v1/search", json={"query": "refund"}, headers=bearer("cw_bad"))
        c.post("/v1/ask", json={"question": "What is the capital of Peru?"})
        c.post("/v1/ask", json={"question": PUBLIC_Q})
        samples = [s for f in text_string_to_metric_families(c.get("/metrics").text) for s in f.samples]
    value = lambda name, **labels: sum(
        s.value
        for s in samples  # noqa: E731
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    )
    assert value("citewise_http_requests_total", route="/v1/search", status="200") == 3
    assert value("citewise_http_requests_total", route="/v1/search", status="401") == 1
    assert value("citewise_http_requests_total", route="/v1/ask", status="200") == 2
    assert value("citewise_abstentions_total", reason="unknown_name") == 1
    assert value("citewise_answer_duration_seconds_count") == 2
    assert value("citewise_retrieval_duration_seconds_count") == 5  # 3 searches + 2 asks (both retrieved)
    public = [e for e in idx.store.documents().values() if "public" in e.groups]
    assert value("citewise_index_chunks") == sum(e.chunk_count for e in public)  # an anonymous scrape
    assert value("citewise_fabricated_citations_total") == 0 and value("citewise_judge_failures_total") == 0
    names = {s.name for s in samples}
    assert "citewise_index_lag_seconds" in names and "citewise_index_staleness_seconds" in names


# -- web page (server-rendered; the browser test drives it in Chromium) ---------------------------
def test_web_sign_in_ask_and_source_link(hindex):
    idx, keys = hindex
    with TestClient(create_app(idx.path, rate=0)) as c:
        assert "You see public documents only." in c.get("/").text
        bad = c.post("/signin", data={"key": "cw_nope"})
        assert bad.status_code == 401 and "Sign-in failed" in bad.text
        r = c.post("/signin", data={"key": keys["finance"]}, follow_redirects=False)
        assert r.status_code == 303 and "httponly" in r.headers["set-cookie"].lower()
        assert "samesite=strict" in r.headers["set-cookie"].lower()
        page = c.get("/", params={"q": "Who approves a refund above 75,000 USD?"})
        assert 'id="principal">key:fin<' in page.text and "refund-approval-matrix" in page.text
        no = c.get("/", params={"q": "What is the capital of Peru?"}).text
        assert 'id="abstained"' in no and "No answer." in no and "No document you can read mentions “Peru”." in no
        assert "unknown name" not in no  # the reason as a sentence, not its code
        c.post("/signout")
        assert "You see public documents only." in c.get("/").text
        assert c.get(f"/doc/{FINANCE_DOC}").status_code == 404


def test_jwt_rs256_with_public_key_file_and_jwks(tmp_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    priv = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = priv.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    (tmp_path / "pub.pem").write_bytes(pem)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(priv.public_key()))
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [{**jwk, "kid": "k1", "alg": "RS256", "use": "sig"}]}))
    claims = {"sub": "erin", "exp": int(time.time()) + 60, "groups": "finance support"}
    good = jwt.encode(claims, priv, algorithm="RS256", headers={"kid": "k1"})
    forged = jwt.encode(claims, other, algorithm="RS256", headers={"kid": "k1"})
    for cfg in (JwtConfig(public_key_file=str(tmp_path / "pub.pem")), JwtConfig(jwks_file=str(tmp_path / "jwks.json"))):
        caller = cfg.verify(good)
        assert caller.principal.groups == ("finance", "support") and caller.method == "jwt" and not caller.admin
        with pytest.raises(AuthError):
            cfg.verify(forged)
        with pytest.raises(AuthError):  # an HS256 token signed with the public key text must not pass
            cfg.verify(jwt.encode(claims, "x" * 32, algorithm="HS256"))
    with pytest.raises(AuthError, match="unknown key id"):
        JwtConfig(jwks_file=str(tmp_path / "jwks.json")).verify(
            jwt.encode(claims, priv, algorithm="RS256", headers={"kid": "k9"})
        )
    with pytest.raises(CitewiseError, match="exactly one"):
        JwtConfig()
    with pytest.raises(CitewiseError, match="not a usable JWKS file"):
        (tmp_path / "bad.json").write_text("{}")
        JwtConfig(jwks_file=str(tmp_path / "bad.json"))


def test_metrics_abstention_reason_labels_and_fabricated_count():
    from citewise.service.metrics import Metrics

    m = Metrics()
    from citewise.core import Reason, ReasonCode

    def abstained(code, **fields):
        return {"outcome": "abstained", "reason": Reason.of(code, **fields).as_dict()}

    m.observe_answer(abstained(ReasonCode.BELOW_THRESHOLD, score=0.051, threshold=0.14), 0.2)
    m.observe_answer(abstained(ReasonCode.UNKNOWN_NAME, name="Stripe"), 0.1)
    m.observe_answer(abstained(ReasonCode.UNKNOWN_NAME, name="Peru"), 0.1)
    m.observe_answer({"outcome": "partial", "abstain_reason": "", "fabricated_citations": ["doc:x", "chunk:y#z"]}, 0.3)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(m.render().decode())
        for s in f.samples
    }
    assert samples[("citewise_abstentions_total", (("reason", "below_threshold"),))] == 1
    assert samples[("citewise_abstentions_total", (("reason", "unknown_name"),))] == 2
    assert samples[("citewise_fabricated_citations_total", ())] == 2
    assert samples[("citewise_answer_duration_seconds_count", ())] == 4
    assert samples[("citewise_answer_duration_seconds_sum", ())] == pytest.approx(0.7)
    assert samples[("citewise_answer_duration_seconds_bucket", (("le", "0.25"),))] == 3


def test_tool_descriptions_are_embedded_once_per_process_and_a_question_once_per_ask(tmp_path):
    """The router is built per question; its tool descriptions never change, so they are
    embedded once per process (a served index re-embedded them on every ask: 0.85 of 1.5 s);
    the question itself goes through the index's question memo, shared with retrieval."""
    import numpy as np

    from citewise.models.embedders import make_embedder
    from citewise.tools.router import description_vectors

    base = make_embedder("hashing")
    calls = []

    class Counting:
        name, dim = base.name + "-counting-test", base.dim

        def embed(self, texts):
            calls.append(tuple(texts))
            return base.embed(texts)

    emb = Counting()
    first = description_vectors(emb, ["refund window", "E-1004"])
    first[0, 0] = 99.0  # callers may scribble on the result; the cache keeps its own copy
    again = description_vectors(emb, ["E-1004", "refund window"])
    assert np.allclose(again, base.embed(["E-1004", "refund window"])) and again.shape == (2, base.dim)
    # one text per call (the question's single-text session), each once, in sorted order
    assert calls == [("E-1004",), ("refund window",)]
    description_vectors(emb, ["refund window", "chargebacks"])
    assert calls[-1] == ("chargebacks",) and len(calls) == 3

    from citewise.api import Citewise
    from citewise.index import Index

    idx = Index.open(tmp_path / "idx", embedder="hashing")
    assert not idx.ingest(sample_dir() / "corpus").errors
    configure_sample_records(idx.path)
    cw = Citewise(idx)
    seen = []
    inner = idx.question_embedder.embedder

    class Spy:
        name, dim = inner.name, inner.dim

        def embed(self, texts):
            seen.append(tuple(texts))
            return inner.embed(texts)

    idx.question_embedder.embedder = Spy()
    q = "What is the refund window for annual plans?"
    ans = cw.ask(q)  # routed (a document question: the router hands it on), then answered
    assert not ans.tool_calls and ans.citations
    assert seen.count((q,)) == 1, seen  # the router and the answerer embedded it once between them
    cw.ask(q)
    assert seen.count((q,)) == 1, seen


# -- MCP over the service -----------------------------------------------------------------------
def _mcp_call(c, headers: dict, method: str, params: dict, rid: int = 1):
    h = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", **headers}
    return c.post("/mcp", headers=h, json={"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def test_mcp_endpoint_on_serve_uses_the_service_credentials(client, hindex):
    _, keys = hindex
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    assert _mcp_call(client, bearer(keys["revoked"]), "initialize", init).status_code == 401
    assert _mcp_call(client, bearer("cw_nosuch_key"), "initialize", init).status_code == 401
    r = _mcp_call(client, {}, "initialize", init)
    assert r.status_code == 200, r.text
    assert r.json()["result"]["serverInfo"]["name"]
    q = {"name": "search", "arguments": {"query": "approval thresholds for payments", "k": 10}}
    anon = _mcp_call(client, {}, "tools/call", q, rid=2)
    fin = _mcp_call(client, bearer(keys["finance"]), "tools/call", q, rid=2)
    assert anon.status_code == fin.status_code == 200
    anon_ids = [h["doc_id"] for h in anon.json()["result"]["structuredContent"]["hits"]]
    fin_ids = [h["doc_id"] for h in fin.json()["result"]["structuredContent"]["hits"]]
    assert not restricted_in(anon.json())
    assert restricted_in(fin.json(), ("finance",)) == [] and set(fin_ids) - set(anon_ids)
