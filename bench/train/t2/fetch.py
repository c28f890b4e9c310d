"""Fetch the two public documentation corpora of training set t2 (Graphviz, Mercurial).

Both come from Debian 12 "bookworm", pinned by URL and SHA-256, so every machine builds the
same folder:

* ``graphviz/``  -- two pdfTeX user guides from the binary package ``graphviz-doc``
  2.42.2-7+deb12u1 (``usr/share/doc/graphviz/pdf/{dotguide,neatoguide}.pdf.gz``, gunzipped):
  "Drawing graphs with dot" (40 pages) and "Drawing graphs with NEATO" (11 pages), laid out as
  ``graphviz/dotguide.pdf`` and ``graphviz/neatoguide.pdf``.
* ``mercurial/`` -- Mercurial 6.3.2's help topics, reStructuredText: the twenty-nine
  ``mercurial/helptext/*.txt`` files (not ``internals/``) of the upstream tarball of the source
  package ``mercurial`` 6.3.2-1+deb12u1 (``mercurial_6.3.2.orig.tar.gz``), laid out as
  ``mercurial/<name>.txt``, content unchanged.

Usage::

    python3 bench/train/t2/fetch.py [--out ~/.cache/citewise/train] [--from DIR] [--force]

The output folder is shared by all training sets: only ``graphviz/`` and ``mercurial/`` under
it are (re)written.  When both already match the pinned digests nothing is downloaded and
nothing changes (running the script twice is a no-op); ``--force`` lays them out anew.

Downloads go to the pinned ``deb.debian.org`` pool URLs with Python's ``urllib`` and are checked
against the SHA-256 digests below.  If a pinned file has left the pool (a later stable update
replaced ``graphviz-doc``), the script falls back to ``apt-get download graphviz-doc`` (current
version) and the digest check of the laid-out files decides.  ``--from DIR`` takes the two
files from DIR instead (``graphviz-doc_*.deb``, ``mercurial_6.3.2.orig.tar.gz``).

The ``.deb`` is unpacked in Python (``ar`` members, then ``tarfile`` on ``data.tar.*``); no
``dpkg-deb`` is needed.  Nothing is copied into the repository; the question set names
documents by their id (path under the output folder without extension), e.g.
``graphviz/dotguide``, ``graphviz/neatoguide``, ``mercurial/config``, ``mercurial/revisions``,
``mercurial/hgignore.5``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

POOL = "http://deb.debian.org/debian/pool/main"

#: file name -> (pinned URL, SHA-256 of the file).
FILES = {
    "graphviz-doc_2.42.2-7+deb12u1_all.deb": (
        f"{POOL}/g/graphviz/graphviz-doc_2.42.2-7+deb12u1_all.deb",
        "7239f310587c7ae772bdb3775eeddb2bd82a2c2c3c4326578b906a667c439474",
    ),
    "mercurial_6.3.2.orig.tar.gz": (
        f"{POOL}/m/mercurial/mercurial_6.3.2.orig.tar.gz",
        "cfe6eeb5dd893ab32c0b79c1531aac420773e0fc837a35db3d4d92703df45a98",
    ),
}

GRAPHVIZ_PDFS = ("dotguide", "neatoguide")

MERCURIAL_TOPICS = (
    "bundlespec",
    "color",
    "common",
    "config",
    "dates",
    "deprecated",
    "diffs",
    "environment",
    "evolution",
    "extensions",
    "filesets",
    "flags",
    "glossary",
    "hg-ssh.8",
    "hg.1",
    "hgignore.5",
    "hgignore",
    "hgrc.5",
    "hgweb",
    "merge-tools",
    "pager",
    "patterns",
    "phases",
    "revisions",
    "rust",
    "scripting",
    "subrepos",
    "templates",
    "urls",
)

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "graphviz": (2, "292454c92b5f1ecbff4f61dada0cee8507040184ab9e98da58a881db30a8ba5b"),
    "mercurial": (29, "12e4f4133f486fa697f0dd0be3cc09db6f3e2dfe8cf86507ff0a78de2729070e"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "train"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def download(dest: Path) -> None:
    """Download the pinned files into ``dest`` (falling back to apt-get for the .deb)."""
    for name, (url, digest) in FILES.items():
        try:
            with urllib.request.urlopen(url, timeout=120) as resp:
                data = resp.read()
        except OSError as exc:
            if not name.startswith("graphviz-doc_"):
                sys.exit(f"fetch: {url}: {exc}")
            print(f"fetch: {url}: {exc}; trying apt-get download graphviz-doc", file=sys.stderr)
            proc = subprocess.run(["apt-get", "download", "graphviz-doc"], cwd=dest, capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"fetch: apt-get download graphviz-doc failed: {proc.stderr.strip()}")
            continue
        if sha256(data) != digest:
            sys.exit(f"fetch: {url}: SHA-256 {sha256(data)}, expected {digest}")
        (dest / name).write_bytes(data)


def _one(src: Path, pattern: str) -> Path:
    hits = sorted(src.glob(pattern))
    if not hits:
        sys.exit(f"fetch: no {pattern} in {src}")
    return hits[-1]


def deb_data(deb: Path) -> tarfile.TarFile:
    """The ``data.tar.*`` member of a Debian package, opened (ar archive parsed by hand)."""
    raw = deb.read_bytes()
    if not raw.startswith(b"!<arch>\n"):
        sys.exit(f"fetch: {deb.name} is not an ar archive")
    pos = 8
    while pos + 60 <= len(raw):
        header = raw[pos : pos + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        body = raw[pos + 60 : pos + 60 + size]
        if name.startswith("data.tar"):
            return tarfile.open(fileobj=io.BytesIO(body))  # gz, xz and bz2 via the stdlib
        pos += 60 + size + (size % 2)
    sys.exit(f"fetch: {deb.name} has no data.tar member")


def lay_out(src: Path, out: Path) -> None:
    """Lay the two corpora out under ``out`` (only ``graphviz/`` and ``mercurial/``)."""
    for corpus in DIGESTS:
        if (out / corpus).exists():
            shutil.rmtree(out / corpus)
    (out / "graphviz").mkdir(parents=True)
    with deb_data(_one(src, "graphviz-doc_*.deb")) as tar:
        for name in GRAPHVIZ_PDFS:
            member = tar.extractfile(f"./usr/share/doc/graphviz/pdf/{name}.pdf.gz")
            (out / "graphviz" / f"{name}.pdf").write_bytes(gzip.decompress(member.read()))
    (out / "mercurial").mkdir(parents=True)
    wanted = {f"mercurial/helptext/{t}.txt": f"{t}.txt" for t in MERCURIAL_TOPICS}
    with tarfile.open(_one(src, "mercurial_6.3.2.orig.tar.*")) as tar:
        found = set()
        for m in tar.getmembers():
            rel = m.name.split("/", 1)[1] if "/" in m.name else ""
            if m.isfile() and rel in wanted:
                (out / "mercurial" / wanted[rel]).write_bytes(tar.extractfile(m).read())
                found.add(rel)
        if found != set(wanted):
            sys.exit(f"fetch: tarball lacks {', '.join(sorted(set(wanted) - found))}")


def corpus_digest(folder: Path) -> tuple[int, str]:
    if not folder.is_dir():
        return 0, ""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    lines = "".join(f"{p.relative_to(folder).as_posix()} {sha256(p.read_bytes())}\n" for p in files)
    return len(files), hashlib.sha256(lines.encode()).hexdigest()


def problems(out: Path) -> list[str]:
    bad = []
    for corpus, expected in DIGESTS.items():
        got = corpus_digest(out / corpus)
        if got != expected:
            bad.append(f"{corpus}: {got[0]} files, digest {got[1]}; expected {expected[0]}, {expected[1]}")
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="shared training-corpus root")
    ap.add_argument("--from", dest="src", type=Path, help="folder already holding the two downloaded files")
    ap.add_argument("--force", action="store_true", help="lay the corpora out even if they already match")
    ap.add_argument("--no-verify", action="store_true", help="skip the SHA-256 check of the laid-out files")
    args = ap.parse_args()
    out = args.out.expanduser()
    if not args.force and not problems(out):
        print(f"{out}: graphviz and mercurial already match the pinned digests; nothing to do")
        return
    out.mkdir(parents=True, exist_ok=True)
    if args.src:
        lay_out(args.src.expanduser(), out)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            download(Path(tmp))
            lay_out(Path(tmp), out)
    print(f"{out}: " + ", ".join(f"{c} {corpus_digest(out / c)[0]} files" for c in DIGESTS))
    if not args.no_verify:
        bad = problems(out)
        if bad:
            sys.exit("fetch: the laid-out corpus differs from the pinned one:\n  " + "\n  ".join(bad))
        print("both corpora match the pinned SHA-256 digests")


if __name__ == "__main__":
    main()
