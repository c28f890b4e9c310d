"""Lay out the public documentation corpora that document structure was developed and measured on.

Each corpus is one format whose structure the loaders must read (``bench/structure/measure.py``
measures them). Every file comes from a package registry, pinned by version:

* ``mutt-text/``      -- the Mutt manual as plain text (DocBook-generated: numbered section
  lines ``3.6. Title``, a table of contents; ``mutt``: ``manual.txt.gz``).
* ``docutils-rst/``   -- the Docutils documentation, reStructuredText (``docutils-doc``: the
  ``*.txt`` sources, written as ``.rst``).
* ``click-rst/``      -- the Click documentation, Sphinx sources (the ``click`` sdist's ``docs/*.rst``:
  Sphinx roles and directives docutils does not know).
* ``markdown-md/``    -- the Python-Markdown documentation, Markdown with setext headings (the
  ``Markdown`` sdist's ``docs/**.md``).
* ``mutt-html/``      -- the Mutt manual as DocBook chunked HTML (``mutt``: ``html/*.html``, the
  one-page ``manual.html`` left out); Prev/Up/Home/Next bars in plain tables.
* ``zsh-html/``       -- the Zsh manual, Texinfo HTML (``zsh-doc``: ``html/*.html``, pages over
  4 KB: the smaller ones are redirects); navigation in plain ``<div>`` / ``<table>`` headers.
* ``docbook-pdf/``    -- the DocBook XSL Stylesheets reference, PDF made by dblatex/pdfTeX, no
  outline, page numbers on every page (``docbook-xsl-doc-pdf``: ``reference.pdf.gz``).

Usage::

    python bench/structure/fetch.py [--out ~/.cache/citewise/structdev]

Needs ``apt-get download`` and ``dpkg-deb`` (Debian 12) and ``pip download``. Nothing is copied
into the repository.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

#: Debian package -> pinned version (Debian 12 "bookworm").
DEBS = {
    "mutt": "2.2.12-0.1~deb12u2",
    "docutils-doc": "0.19+dfsg-6",
    "zsh-doc": "5.9-4",
    "docbook-xsl-doc-pdf": "1.79.1-1",
}
#: PyPI source distributions whose docs/ folder is a corpus.
SDISTS = {"Markdown": "3.4.1", "click": "8.1.3"}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "structdev"


def _run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"fetch: {' '.join(cmd)} failed: {proc.stderr.strip() or proc.stdout.strip()}")


def _copy(src: Path, dest: Path) -> None:
    """Copy ``src`` to ``dest``, gunzipping a ``.gz`` source."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    data = src.read_bytes()
    dest.write_bytes(gzip.decompress(data) if src.suffix == ".gz" else data)


def fetch(out: Path) -> Path:
    """Download the pinned packages and lay the corpora out under ``out``; returns ``out``."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for pkg, version in DEBS.items():
            _run(["apt-get", "download", f"{pkg}={version}"], work)
        root = work / "x"
        for deb in sorted(work.glob("*.deb")):
            _run(["dpkg-deb", "-x", str(deb), str(root)], work)
        _run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps", "-d", str(work)]
            + [f"{k}=={v}" for k, v in SDISTS.items()],
            work,
        )
        if out.exists():
            shutil.rmtree(out)
        doc = root / "usr/share/doc"
        _copy(doc / "mutt/manual.txt.gz", out / "mutt-text/manual.gz")
        (out / "mutt-text/manual.gz").rename(out / "mutt-text/manual.txt")
        for f in sorted((doc / "docutils-doc").rglob("*.txt")):
            _copy(f, out / "docutils-rst" / f.relative_to(doc / "docutils-doc").with_suffix(".rst"))
        for f in sorted((doc / "mutt/html").glob("*.html")):
            if f.name != "manual.html":
                _copy(f, out / "mutt-html" / f.name)
        for f in sorted((doc / "zsh-common/html").glob("*.html")):
            if f.stat().st_size > 4096:
                _copy(f, out / "zsh-html" / f.name)
        _copy(doc / "docbook-xsl-doc-pdf/doc/reference.pdf.gz", out / "docbook-pdf/reference.pdf")
        for name, version in SDISTS.items():
            with tarfile.open(work / f"{name}-{version}.tar.gz") as tar:
                for m in tar.getmembers():
                    parts = Path(m.name).parts
                    if m.isfile() and len(parts) > 2 and parts[1] == "docs" and m.name.endswith((".md", ".rst")):
                        dest = out / ("markdown-md" if name == "Markdown" else "click-rst") / Path(*parts[2:])
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        dest.write_bytes(tar.extractfile(m).read())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder to create (replaced if present)")
    args = ap.parse_args()
    out = fetch(args.out.expanduser())
    counts = {p.name: sum(1 for f in p.rglob("*") if f.is_file()) for p in sorted(out.iterdir())}
    print(f"{out}: " + ", ".join(f"{k} {v} files" for k, v in counts.items()))


if __name__ == "__main__":
    main()
