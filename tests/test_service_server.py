"""The real server process (``citewise serve`` under uvicorn on a free port) over HTTP: auth,
key revocation by another process, ingest while queries run (0 errors), /metrics parsed with
prometheus_client's parser, and the permission probe (0 restricted chunks in any response)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from citewise.demo import sample_dir
from citewise.index import Index
from citewise.service.auth import KeyStore

from svc_server import SRC, Server
from test_permissions import ADVERSARIAL

# The answer endpoints run the same permission-filtered retrieval as search (every retriever is
# probed with all queries in-process by tests/test_permissions.py); over HTTP they get every third
# adversarial query, which keeps the probe at a third of its former 40 s.
ANSWERED = ADVERSARIAL[::3]

FINANCE_Q = {"query": "refund approval matrix approval bands Financial Controller", "k": 10}


@pytest.fixture(scope="module")
def served_index(tmp_path_factory):
    """A hashing-embedder index of a copy of the sample corpus, with an admin and a finance key."""
    root = tmp_path_factory.mktemp("served")
    shutil.copytree(sample_dir() / "corpus", root / "docs")
    idx = Index.open(root / "index", embedder="hashing")
    assert not idx.ingest(root / "docs").errors
    ks = KeyStore(idx.path)
    return idx, {"admin": ks.add("ops", (), admin=True), "finance": ks.add("fin", ("finance",))}


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-m", "citewise.cli", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_auth_over_http_and_revocation_from_another_process(served_index):
    idx, keys = served_index
    made = cli("keys", "add", "temp", "--groups", "finance,support", "--index", str(idx.path))
    assert made.returncode == 0, made.stderr
    temp_key = made.stdout.strip()
    assert temp_key.startswith("cw_") and "shown once" in made.stderr
    server = Server(idx.path, "--require-auth", "--rate", "0")
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            assert c.post("/v1/search", json=FINANCE_Q).status_code == 401
            assert (
                c.post(
                    "/v1/search", json=FINANCE_Q, headers={"Authorization": "Bearer cw_000000000000_" + "x" * 43}
                ).status_code
                == 401
            )
            r = c.post(
                "/v1/search",
                json={**FINANCE_Q, "groups": ["security"], "principal": {"groups": ["security"]}},
                headers={"Authorization": f"Bearer {temp_key}"},
            )
            assert r.status_code == 200 and r.json()["principal"] == "key:temp"
            docs = {h["doc_id"] for h in r.json()["hits"]}
            assert "internal/finance/refund-approval-matrix" in docs
            assert not any(d.startswith("internal/security/") for d in docs)  # spoofed groups in the body ignored
            revoked = cli("keys", "revoke", "temp", "--index", str(idx.path))
            assert revoked.returncode == 0 and "revoked 1 key" in revoked.stdout
            assert (
                c.post("/v1/search", json=FINANCE_Q, headers={"Authorization": f"Bearer {temp_key}"}).status_code == 401
            )
            listed = cli("keys", "list", "--json", "--index", str(idx.path))
            assert temp_key not in listed.stdout and '"revoked_at": null' in listed.stdout
    finally:
        server.stop()


def test_queries_during_ingest_have_no_errors_and_see_new_documents(served_index, tmp_path):
    idx, keys = served_index
    extra = tmp_path / "extra"
    extra.mkdir()
    for i in range(120):
        (extra / f"note-{i:03d}.md").write_text(
            f"---\ntitle: Field note {i}\n---\n# Field note {i}\n\n"
            + "".join(
                f"Observation {j} of note {i}: the quokka count at station {i * 7 + j} was {j * 3 + i}.\n"
                for j in range(40)
            ),
            encoding="utf-8",
        )
    server = Server(idx.path, "--rate", "0")
    results: list[tuple[float, int, str, str]] = []
    stop = threading.Event()

    def client(n: int) -> None:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            while not stop.is_set():
                if n % 2:
                    r = c.post("/v1/search", json={"query": "refund window Pro plan", "k": 5})
                else:
                    r = c.post("/v1/ask", json={"question": "How long do I have to request a refund on Pro?"})
                results.append(
                    (time.monotonic(), r.status_code, r.url.path, r.text[:200] if r.status_code != 200 else "")
                )

    try:
        workers = [threading.Thread(target=client, args=(n,)) for n in range(4)]
        for w in workers:
            w.start()
        time.sleep(1.0)
        with httpx.Client(base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {keys['admin']}"}) as c:
            t_start = time.monotonic()
            job = c.post("/v1/ingest", json={"path": str(extra)})
            assert job.status_code == 202, job.text
            url = job.json()["status_url"]
            while (state := c.get(url).json())["status"] == "running":
                time.sleep(0.2)
            t_end = time.monotonic()
            time.sleep(0.5)
            stop.set()
            for w in workers:
                w.join(60)
            assert state["status"] == "done", state
            assert state["report"]["added"] == 120 and not state["report"]["errors"]
            hits = c.post("/v1/search", json={"query": "quokka count at station 700", "k": 3}).json()["hits"]
            assert hits and hits[0]["doc_id"].startswith("note-")
            assert c.post("/v1/search", json={"query": "refund window Pro plan", "k": 1}).json()[
                "hits"
            ]  # old docs kept
            metrics = {
                (s.name, tuple(sorted(s.labels.items()))): s.value
                for f in text_string_to_metric_families(c.get("/metrics").text)
                for s in f.samples
            }
    finally:
        stop.set()
        server.stop()
    errors = [r for r in results if r[1] != 200]
    during = [r for r in results if t_start <= r[0] <= t_end]
    assert errors == []
    assert len(during) >= 4, f"only {len(during)} queries overlapped the ingest ({t_end - t_start:.1f} s)"
    assert metrics[("citewise_ingest_documents_total", (("result", "added"),))] == 120.0
    searches = sum(
        v
        for (name, labels), v in metrics.items()
        if name == "citewise_http_requests_total" and dict(labels).get("route") == "/v1/search"
    )
    assert searches == sum(1 for r in results if r[2] == "/v1/search") + 2  # every search was counted
    assert metrics[("citewise_index_chunks", ())] == Index.open(idx.path).store.stats()["chunks"]


RESTRICTED = {"internal/finance/": "finance", "internal/support/": "support", "internal/security/": "security"}
RESTRICTED_TITLES = {
    "finance": ["Refund approval matrix", "Chargeback playbook"],
    "support": ["Support escalation policy"],
    "security": ["SSO incident runbook"],
}


def restricted_in(payload, group_ok: tuple[str, ...] = ()) -> list[str]:
    """Restricted doc ids or titles (of groups not in ``group_ok``) anywhere in a JSON payload."""
    text = json.dumps(payload)
    found = [p for p, g in RESTRICTED.items() if g not in group_ok and p in text]
    return found + [t for g, ts in RESTRICTED_TITLES.items() if g not in group_ok for t in ts if t in text]


def test_permission_probe_no_restricted_chunk_in_any_response(sample_index):
    """The 36 adversarial queries of tests/test_permissions.py through the search endpoints of a
    real server on the MiniLM sample index (every third through ask and chat completions too):
    anonymous callers and a support-only key get 0 restricted chunks (ids or titles)."""
    ks = KeyStore(sample_index.path)
    support = ks.add(f"probe-sup-{os.getpid()}", ("support",))
    finance = ks.add(f"probe-fin-{os.getpid()}", ("finance",))
    leaks, checked = [], 0
    server = Server(sample_index.path, "--rate", "0", "--timeout", "120")
    try:
        with httpx.Client(base_url=server.url, timeout=120) as c:
            for q in ADVERSARIAL:
                for name, headers, ok in (
                    ("anonymous", {}, ()),
                    ("support", {"Authorization": f"Bearer {support}"}, ("support",)),
                ):
                    calls = [
                        ("/v1/search", {"query": q, "k": 5}),
                        ("/v1/vector_stores/default/search", {"query": q, "max_num_results": 5}),
                    ]
                    if q in ANSWERED:  # the answer endpoints: every third query (ANSWERED)
                        calls += [
                            ("/v1/ask", {"question": q}),
                            (
                                "/v1/chat/completions",
                                {"model": "citewise", "messages": [{"role": "user", "content": q}]},
                            ),
                        ]
                    for path, body in calls:
                        r = c.post(path, json=body, headers=headers)
                        assert r.status_code == 200, r.text
                        checked += 1
                        payload = {k: v for k, v in r.json().items() if k != "search_query"}  # the query is echoed
                        if restricted_in(payload, ok):
                            leaks.append((name, q, path))
            # the same queries do reach restricted documents for a principal in the group
            fin = c.post(
                "/v1/search", json={"query": ADVERSARIAL[0], "k": 5}, headers={"Authorization": f"Bearer {finance}"}
            )
            assert any(h["doc_id"].startswith("internal/finance/") for h in fin.json()["hits"])
    finally:
        server.stop()
    assert checked == (len(ADVERSARIAL) * 2 + len(ANSWERED) * 2) * 2
    assert leaks == []


def test_serve_on_a_busy_port_fails_before_saying_it_serves(served_index):
    """The "serving on …" line used to be printed before uvicorn found the port taken; now the
    socket is bound first: one error line naming host:port and the cause, exit 3, no traceback."""
    idx, _ = served_index
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        res = cli("serve", "--index", str(idx.path), "--port", str(port))
    assert res.returncode == 3
    assert res.stdout == ""
    assert res.stderr.splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: address already in use "
        "(another process is listening there; stop it or choose another --port)"
    ]
    res = cli("serve", "--index", str(idx.path), "--host", "host.invalid", "--port", "0")
    assert res.returncode == 3 and res.stderr.startswith("error: cannot listen on host.invalid:0: ")
    assert len(res.stderr.splitlines()) == 1 and "Traceback" not in res.stderr
