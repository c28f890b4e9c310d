"""Fetch the four public documentation corpora of the third unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version, so every machine builds the same folder:

* ``curl/``      -- curl 7.88.1 documentation, plain text: the FAQ, the known-bugs list and the
  to-do list (``docs/{FAQ,KNOWN_BUGS,TODO}``), numbered and indented sections under an ASCII-art
  banner, from the upstream tarball of the *source* package ``curl``.  3 files, laid out as
  ``curl/<name>.txt``.
* ``zstd/``      -- Zstandard 1.5.4 documentation, Markdown with setext (``===`` / ``---``)
  headings, most files also with ATX (``##``) ones: the nineteen ``*.md`` files of the upstream
  tarball of the source package ``libzstd`` that have at least one setext heading (the
  compression-format specification, the ``zstd(1)``/``zstdgrep(1)``/``zstdless(1)`` manual
  sources, the READMEs), laid out under their upstream paths.
* ``diffutils/`` -- "Comparing and Merging Files" (GNU Diffutils 3.8), Texinfo-generated HTML,
  one page per node, navigation in ``<div class="header">`` (binary package ``diffutils-doc``:
  ``usr/share/doc/diffutils``).  112 files.
* ``gnuplot/``   -- "gnuplot 5.4, An Interactive Plotting Program", a 311-page PDF (binary
  package ``gnuplot-doc``: ``usr/share/doc/gnuplot/gnuplot.pdf``).  1 file.

Usage::

    python bench/unseen3/fetch.py [--out ~/.cache/citewise/unseen3] [--from DIR]

Without ``--from`` it downloads as ``bench/unseen/fetch.py`` does (its apt helpers, the same
``apt-get download`` / ``apt-get source --download-only --tar-only`` with a private copy of the
machine's apt sources; see its docstring), and every laid-out file is checked against the
SHA-256 digests below, so the folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the two ``.deb`` files
(``diffutils-doc_*.deb``, ``gnuplot-doc_*.deb``) and the two upstream tarballs
(``curl_7.88.1.orig.tar.gz``, ``libzstd_1.5.4+dfsg2.orig.tar.xz``), e.g. copied from a machine
that ran the downloads.  The curl tarball is the upstream release ``curl-7.88.1.tar.gz``; the
zstd one is Debian's repack of ``facebook/zstd`` v1.5.4 (a few non-free files removed, none of
the documents read here); one saved in DIR under the Debian file name above should give the
same files, and the digest check tells whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``curl/FAQ``, ``curl/KNOWN_BUGS``,
``zstd/doc/zstd_compression_format``, ``zstd/programs/zstd.1``, ``diffutils/Unified-Format``,
``gnuplot/gnuplot``.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "diffutils-doc": "1:3.8-4",
    "gnuplot-doc": "5.4.4+dfsg1-2",
}

#: source package -> (pinned version, upstream tarball glob).
SOURCE = {
    "curl": ("7.88.1-10+deb12u15", "curl_7.88.1.orig.tar.*"),
    "libzstd": ("1.5.4+dfsg2-5", "libzstd_1.5.4+dfsg2.orig.tar.*"),
}

#: member of the curl tarball (below ``curl-7.88.1/``) -> path under ``curl/``.
CURL_DOCS = {
    "docs/FAQ": "FAQ.txt",
    "docs/KNOWN_BUGS": "KNOWN_BUGS.txt",
    "docs/TODO": "TODO.txt",
}

#: members of the zstd tarball (below ``zstd-1.5.4/``), laid out under ``zstd/`` at the same path.
ZSTD_DOCS = (
    "TESTING.md",
    "build/README.md",
    "build/meson/README.md",
    "build/single_file_libs/README.md",
    "contrib/externalSequenceProducer/README.md",
    "contrib/gen_html/README.md",
    "contrib/largeNbDicts/README.md",
    "doc/README.md",
    "doc/decompressor_errata.md",
    "doc/educational_decoder/README.md",
    "doc/zstd_compression_format.md",
    "examples/README.md",
    "lib/README.md",
    "programs/README.md",
    "programs/zstd.1.md",
    "programs/zstdgrep.1.md",
    "programs/zstdless.1.md",
    "tests/README.md",
    "zlibWrapper/README.md",
)

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "curl": (3, "6244eff01b289c3d1b99540bc1e9e1178b55ca225d14b960649b31afccc844e9"),
    "zstd": (19, "6eb27d5121a109c4e1fb06a6026574149c87dcd88433c65e63c179d0eee02a36"),
    "diffutils": (112, "e9ce619fbf3131a43a76fadcaa43f05c76f3f6c068d15f13a33f182b08679557"),
    "gnuplot": (1, "d7c1d1e7dda6424aa60d73c6dc5f840cdc9fa9a3298dd4dd473255f4bc290eac"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen3"


def _first_set():
    """The first unseen set's fetch script (``bench/unseen/fetch.py``), whose apt and checking
    helpers this one shares."""
    spec = importlib.util.spec_from_file_location("unseen_fetch", Path(__file__).parent.parent / "unseen" / "fetch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SHARED = _first_set()
_one = _SHARED._one


def download(dest: Path) -> None:
    """Download the two binary packages and the two source packages into ``dest``."""
    _SHARED.download_packages(BINARY, {pkg: version for pkg, (version, _) in SOURCE.items()}, dest)


def lay_out(src: Path, out: Path) -> None:
    """Lay the four corpora out under ``out`` from the packages in ``src``."""
    if out.exists():
        shutil.rmtree(out)
    with _SHARED.unpacked(src, BINARY) as root:
        _SHARED.copy_pages(root / "usr/share/doc/diffutils", out / "diffutils")
        (out / "gnuplot").mkdir()
        shutil.copyfile(root / "usr/share/doc/gnuplot/gnuplot.pdf", out / "gnuplot" / "gnuplot.pdf")
    _SHARED.extract_members(_one(src, SOURCE["curl"][1]), CURL_DOCS, out / "curl")
    _SHARED.extract_members(_one(src, SOURCE["libzstd"][1]), {p: p for p in ZSTD_DOCS}, out / "zstd")


if __name__ == "__main__":
    _SHARED.main(download, lay_out, DIGESTS, DEFAULT_OUT, __doc__)
