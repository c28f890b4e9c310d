"""Retrievals per chunk: search and ask record what they return (across processes), and
'citewise status' reports the documents never retrieved."""

from __future__ import annotations

import json
import subprocess
import sys

from citewise.index import Index
from citewise.usage import RetrievalLog, usage_report

from conftest import write_doc


def test_counts_and_never_retrieved_report(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "refunds.md", "Refunds", "# Refunds\n\nRefunds on Pro are possible within 30 days.")
    write_doc(root, "sso.md", "SSO", "# SSO\n\nOkta SAML single sign-on needs the certificate.")
    write_doc(root, "fonts.md", "Fonts", "# Fonts\n\nThe brand typeface is Garamond.")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    assert not idx.ingest(root).errors
    hits = idx.search("refund within 30 days", k=1)
    assert [h.doc_id for h in hits] == ["refunds"]
    idx.search("refund within 30 days", k=1)
    ans = idx.ask("How do I set up Okta SAML single sign-on?", k=1)
    assert ans.retrieved_ids and all(c.startswith("sso") for c in ans.retrieved_ids)
    counts = idx.usage.counts()
    assert counts[hits[0].chunk_id] == 2 and counts[ans.retrieved_ids[0]] == 1 and len(counts) == 2
    rep = usage_report(idx.store, counts).as_dict()
    assert rep["retrievals"] == 3 and rep["chunks_retrieved"] == 2 and rep["never_retrieved_documents"] == ["fonts"]
    assert rep["top"][0] == [hits[0].chunk_id, 2]
    # another process adds to the same counts; status reports them
    p = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "search", "Okta SAML certificate", "--index", str(idx.path), "--k", "1"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "status", "--index", str(idx.path), "--json"],
        capture_output=True,
        text=True,
    )
    r = json.loads(p.stdout)["retrievals"]
    assert (r["retrievals"], r["chunks_never_retrieved"], r["never_retrieved_documents"]) == (4, 1, ["fonts"])
    p = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "status", "--index", str(idx.path)], capture_output=True, text=True
    )
    assert "1 document never retrieved (unnecessary or badly split?): fonts" in p.stdout


def test_unwritable_log_warns_once_and_never_fails(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "usage.sqlite").mkdir()  # a folder where the file should be: sqlite cannot open it
    log = RetrievalLog(folder)
    log.record(["a#x"])
    log.flush()
    log.record(["a#y"])
    log.flush()
    assert capsys.readouterr().err.count("retrieval counts not recorded") == 1
    assert log.counts() == {}
