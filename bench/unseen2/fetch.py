"""Fetch the four public documentation corpora of the second unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version, so every machine builds the same folder:

* ``xz/``   -- XZ Utils 5.4.1 documentation, plain text: the .xz and .lzma file-format
  specifications, the FAQ and the history note (``doc/*.txt``) and the plain-text renderings of
  the ``xz``, ``xzdec`` and ``lzmainfo`` manual pages (``doc/man/txt/*.txt``), from the upstream
  tarball of the *source* package ``xz-utils``.  7 files, laid out as ``xz/<name>.txt`` and
  ``xz/man/<name>.txt``.
* ``lz4/``  -- LZ4 1.9.4 documentation, Markdown with setext (``===`` / ``---``) top headings and
  ATX (``###``) subheadings: the twelve ``*.md`` files of the upstream tarball of the source
  package ``lz4`` that have at least one setext heading (block and frame format specifications,
  the ``lz4`` CLI manual, the READMEs), laid out under their upstream paths.
* ``m4/``   -- "GNU M4 1.4.19 macro processor" manual, Texinfo-generated HTML, one page per node,
  navigation in ``<div class="header">`` (binary package ``m4-doc``: ``usr/share/doc/m4``).
  105 files.
* ``pari/`` -- "A Tutorial for PARI/GP" (PARI 2.15.2), a 60-page pdfTeX PDF (binary package
  ``pari-doc``: ``usr/share/pari/doc/tutorial.pdf``).  1 file.

Usage::

    python bench/unseen2/fetch.py [--out ~/.cache/citewise/unseen2] [--from DIR]

Without ``--from`` it downloads as ``bench/unseen/fetch.py`` does (its apt helpers, the same
``apt-get download`` / ``apt-get source --download-only --tar-only`` with a private copy of the
machine's apt sources; see its docstring), and every laid-out file is checked against the
SHA-256 digests below, so the folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the two ``.deb`` files
(``m4-doc_*.deb``, ``pari-doc_*.deb``) and the two upstream tarballs
(``xz-utils_5.4.1.orig.tar.xz``, ``lz4_1.9.4.orig.tar.gz``), e.g. copied from a machine that ran
the downloads.  The tarballs are the upstream releases XZ Utils 5.4.1 (``xz-5.4.1.tar.xz``) and
``lz4/lz4`` v1.9.4 on GitHub; one saved in DIR under the Debian file name above should give the
same files, and the digest check tells whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``xz/xz-file-format``, ``xz/man/xz``,
``lz4/doc/lz4_Frame_format``, ``lz4/programs/lz4.1``, ``m4/Changequote``, ``pari/tutorial``.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "m4-doc": "1.4.19-3",
    "pari-doc": "2.15.2-1",
}

#: source package -> (pinned version, upstream tarball glob).
SOURCE = {
    "xz-utils": ("5.4.1-1+deb12u2", "xz-utils_5.4.1.orig.tar.*"),
    "lz4": ("1.9.4-1", "lz4_1.9.4.orig.tar.*"),
}

#: member of the xz tarball (below ``xz-5.4.1/``) -> path under ``xz/``.
XZ_DOCS = {
    "doc/xz-file-format.txt": "xz-file-format.txt",
    "doc/lzma-file-format.txt": "lzma-file-format.txt",
    "doc/faq.txt": "faq.txt",
    "doc/history.txt": "history.txt",
    "doc/man/txt/xz.txt": "man/xz.txt",
    "doc/man/txt/xzdec.txt": "man/xzdec.txt",
    "doc/man/txt/lzmainfo.txt": "man/lzmainfo.txt",
}

#: members of the lz4 tarball (below ``lz4-1.9.4/``), laid out under ``lz4/`` at the same path.
LZ4_DOCS = (
    "README.md",
    "build/README.md",
    "contrib/gen_manual/README.md",
    "contrib/meson/README.md",
    "contrib/snap/README.md",
    "doc/lz4_Block_format.md",
    "doc/lz4_Frame_format.md",
    "lib/README.md",
    "lib/dll/example/README.md",
    "programs/README.md",
    "programs/lz4.1.md",
    "tests/README.md",
)

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "xz": (7, "7ecfe71bda74ba96be44de378619142e22a270829b3dad0aaacfafb512859b4f"),
    "lz4": (12, "1718cdaf48379d8ab67ca7584c9609b9c9cb170edf383c86959ee87a7d79d17c"),
    "m4": (105, "b8a252fcfbe9a63f19aab199a0f45bfa0b65dd5ef6b1a6822a82785e96f0f501"),
    "pari": (1, "629d2175717320ac5c7a565448245556267bc3102eb7a0adc02454809851be6d"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen2"


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
        _SHARED.copy_pages(root / "usr/share/doc/m4", out / "m4")
        (out / "pari").mkdir()
        shutil.copyfile(root / "usr/share/pari/doc/tutorial.pdf", out / "pari" / "tutorial.pdf")
    _SHARED.extract_members(_one(src, SOURCE["xz-utils"][1]), XZ_DOCS, out / "xz")
    _SHARED.extract_members(_one(src, SOURCE["lz4"][1]), {p: p for p in LZ4_DOCS}, out / "lz4")


if __name__ == "__main__":
    _SHARED.main(download, lay_out, DIGESTS, DEFAULT_OUT, __doc__)
