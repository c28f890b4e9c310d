"""Re-ingest one changed document into a large kept index: wall time and peak RSS, checkouts side by side.

Run (an index kept by ``python bench/scale.py --chunks 1000000 --keep DIR``):

    python bench/reingest_1m.py --index DIR/<size> --work WORK --code main=/work/main/src \
        --code new=src [--rounds 2] [--max-rss-gb 12]

Per ``--code`` the index is copied to ``WORK/<name>`` with hard links (``cp -al``: no space used;
LanceDB and the BM25 postings write new files and never into existing ones, which the script
checks at the end: inode, size and mtime of every entry under ``--index`` unchanged). Then, per
round (checkouts in alternating order, so load drifts hit both alike), a fresh Python process with
``PYTHONPATH`` set to that checkout re-ingests ``doc0000001`` of :mod:`scale`'s corpus with new
text (its body plus ``round<r>marker``) and a new content hash, as ``scale.py``'s build does,
through ``Index.ingestor().ingest_documents`` (commit, index upkeep, BM25 postings). The parent
samples the child's RSS every 0.2 s and kills it above ``--max-rss-gb``; peak RSS and CPU come
from the child's ``wait4`` rusage (what ``/usr/bin/time -v`` reports). After each round a second
fresh process opens the index read-only and runs BM25 for the new marker (must return
``doc0000001``'s chunk) and the previous round's (must return nothing).

The first round of a checkout that keeps term frequencies with the postings, on an index whose
saved postings lack them, is a full build (the "postings" column says which path ran).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
DOC = "doc0000001"


def reingest_child(index: str, chunks: str, marker: str, content_hash: str) -> dict:
    """In a fresh process: re-ingest ``doc0000001`` with ``marker`` appended; seconds and path."""
    import dataclasses

    import numpy as np

    sys.path.insert(0, str(BENCH))
    import scale
    from citewise.core import Document
    from citewise.index import Index
    from citewise.store import postings as postings_mod

    n = int(chunks)  # scale.py seeds the corpus with its size
    words = scale.vocabulary()
    rng = np.random.default_rng(scale.SEED + n)
    docs = []
    for i in range(2):  # as scale.build draws them
        body = " ".join(scale.zipf_words(rng, words, int(rng.integers(60, 141))))
        title = " ".join(scale.zipf_words(rng, words, 3)).title()
        groups = ("restricted",) if i % scale.RESTRICTED_EVERY == 0 else ("public",)
        docs.append(Document(f"doc{i:07d}", title, body, f"synthetic/{i}", "text", f"h{i}", groups=groups))
    path = {"postings": "full build"}
    update = getattr(postings_mod.Postings, "update", None)
    if update is not None:  # record whether the incremental path produced the postings

        def traced(*args, **kwargs):
            p = update(*args, **kwargs)
            if p is not None:
                path["postings"] = "updated"
            return p

        postings_mod.Postings.update = traced
    idx = Index.open(index, embedder="hashing")
    changed = dataclasses.replace(docs[1], text=docs[1].text + " " + marker, content_hash=content_hash)
    t = time.perf_counter()
    report = idx.ingestor(units=False).ingest_documents([changed])
    return {"seconds": time.perf_counter() - t, "updated": report.updated, "errors": report.errors, **path}


def query_child(index: str, new: str, old: str | None) -> dict:
    """In a fresh process (read-only open): BM25 hits of the new and the old marker."""
    from citewise.index import Index

    idx = Index.open(index, read_only=True)
    out = {"new": [h.chunk_id for h in idx.search(new, 5, retriever="bm25")]}
    out["old"] = [h.chunk_id for h in idx.search(old, 5, retriever="bm25")] if old else []
    return out


def listing(root: Path) -> list[tuple]:
    """(path, inode, size, mtime_ns) of every entry under ``root``, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [""] + dirnames + filenames:
            p = Path(dirpath) / name if name else Path(dirpath)
            st = p.lstat()
            out.append((str(p), st.st_ino, st.st_size, st.st_mtime_ns))
    return sorted(set(out))


def run_watched(cmd: list[str], env: dict, max_rss_kb: int) -> tuple[int, str, dict]:
    """Run ``cmd``; kill it if its RSS exceeds ``max_rss_kb``. Returns (status, stdout, rusage)."""
    out_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"reingest_1m.{os.getpid()}.out"
    with open(out_path, "w") as out:
        p = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.DEVNULL)
        killed = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            try:
                rss = next(int(line.split()[1]) for line in open(f"/proc/{p.pid}/status") if line.startswith("VmRSS"))
            except (OSError, StopIteration):
                rss = 0
            if rss > max_rss_kb and not killed:
                p.kill()
                killed = True
            time.sleep(0.2)
    text = out_path.read_text()
    out_path.unlink()
    return (
        (-9 if killed else os.waitstatus_to_exitcode(status)),
        text,
        {"maxrss_mb": ru.ru_maxrss / 1024, "cpu_s": ru.ru_utime + ru.ru_stime},
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True, help="the kept index (never written: copied with hard links)")
    ap.add_argument("--work", required=True, help="folder for the hard-linked copies (same file system)")
    ap.add_argument("--code", action="append", required=True, help="NAME=path/to/src (PYTHONPATH)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--max-rss-gb", type=float, default=12.0)
    ap.add_argument("--chunks", type=int, default=1_000_000, help="the size the index was built with (its seed)")
    if sys.argv[1:2] == ["--_child"]:
        kind, *args = sys.argv[2:]
        result = reingest_child(*args) if kind == "reingest" else query_child(args[0], args[1], (args[2:] or [None])[0])
        print(json.dumps(result))
        return 0
    a = ap.parse_args()
    index = Path(a.index).resolve()
    work = Path(a.work).resolve()
    before = listing(index)
    codes = [c.split("=", 1) for c in a.code]
    copies = {}
    for name, _ in codes:
        dest = work / name
        if dest.exists():
            raise SystemExit(f"{dest} exists; remove it or choose another --work")
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-al", str(index), str(dest)], check=True)
        copies[name] = dest
    rows = []
    for rnd in range(1, a.rounds + 1):
        for name, src in codes if rnd % 2 else codes[::-1]:
            env = dict(os.environ, PYTHONPATH=str(Path(src).resolve()))
            marker = f"round{rnd}marker"
            load = os.getloadavg()[0]
            t = time.perf_counter()
            status, out, ru = run_watched(
                [
                    sys.executable,
                    __file__,
                    "--_child",
                    "reingest",
                    str(copies[name]),
                    str(a.chunks),
                    marker,
                    f"round{rnd}",
                ],
                env,
                int(a.max_rss_gb * 1024 * 1024),
            )
            wall = time.perf_counter() - t
            res = json.loads(out.strip().splitlines()[-1]) if status == 0 else {}
            q = {}
            if status == 0:
                old = f"round{rnd - 1}marker" if rnd > 1 else None
                qp = subprocess.run(
                    [sys.executable, __file__, "--_child", "query", str(copies[name]), marker] + ([old] if old else []),
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                q = json.loads(qp.stdout.strip().splitlines()[-1])
            rows.append(
                {
                    "code": name,
                    "round": rnd,
                    "status": status,
                    "load": load,
                    "process_s": wall,
                    **ru,
                    **res,
                    "bm25_new": q.get("new"),
                    "bm25_old": q.get("old"),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    after = listing(index)
    print()
    print(
        "| code | round | postings | ingest_documents s | process s | CPU s | peak RSS MB | load | BM25 new marker | old marker |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---|---|")
    for r in rows:
        if r["status"] != 0:
            print(
                f"| {r['code']} | {r['round']} | exit {r['status']} | | {r['process_s']:.1f} | {r['cpu_s']:.1f} | "
                f"{r['maxrss_mb']:,.0f} | {r['load']:.2f} | | |"
            )
            continue
        new_ok = bool(r["bm25_new"]) and all(c.startswith(DOC + "#") for c in r["bm25_new"])
        print(
            f"| {r['code']} | {r['round']} | {r['postings']} | {r['seconds']:.1f} | {r['process_s']:.1f} | "
            f"{r['cpu_s']:.1f} | {r['maxrss_mb']:,.0f} | {r['load']:.2f} | "
            f"{'found' if new_ok else 'MISSING'} ({len(r['bm25_new'])}) | "
            f"{'-' if r['round'] == 1 else 'gone' if not r['bm25_old'] else 'STILL FOUND'} |"
        )
    print()
    print(f"--index unchanged (inode, size, mtime of {len(before):,} entries): {before == after}")
    return 0 if before == after and all(r["status"] == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
