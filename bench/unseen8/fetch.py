"""Fetch the four public documentation corpora of the eighth unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version and by the SHA-256 of the downloaded ``.deb`` or upstream tarball, so
every machine builds the same folder:

* ``supervisor/`` -- the Supervisor 4.2.5 documentation, reStructuredText (the Sphinx sources
  ``docs/{api,configuration,development,events,faq,glossary,installing,introduction,logging,
  plugins,running,subprocess,upgrading,xmlrpc}.rst`` and the top-level ``CHANGES.rst``) from
  the upstream tarball of the *source* package ``supervisor``, laid out as plain text:
  ``supervisor/<name>.txt``, content unchanged.  15 files.
* ``redis/``      -- the Redis 7.0.15 Markdown documents with setext (``===`` / ``---``)
  headings: ``README.md``, ``TLS.md``, ``deps/README.md`` and ``tests/README.md`` of the
  upstream tarball of the source package ``redis``, laid out under ``redis/`` with the same
  relative paths, content unchanged.  4 files.
* ``aspell/``     -- "GNU Aspell 0.60.8" user's manual, Texinfo 5.2 HTML, one page per node,
  navigation in ``<div class="header">`` and ``<table class="menu">`` (binary package
  ``aspell-doc``: ``usr/share/doc/aspell-doc/aspell.html/*.html``).  67 files.
* ``gputils/``    -- "gputils 1.4.0" manual, a dvips + Ghostscript PDF (binary package
  ``gputils-doc``: ``usr/share/doc/gputils-doc/gputils.pdf.gz``, gunzipped).  1 file.

Usage::

    python bench/unseen8/fetch.py [--out ~/.cache/citewise/unseen8] [--from DIR]

Without ``--from`` it downloads as ``bench/unseen/fetch.py`` does (its apt helpers, the same
``apt-get download`` / ``apt-get source --download-only --tar-only`` with a private copy of the
machine's apt sources; see its docstring).  Each downloaded ``.deb`` and tarball whose name is
in :data:`ARCHIVES` is checked against the SHA-256 there (``check_archives`` of
``bench/unseen/fetch.py``; a mismatch stops the script); one
with another name (a later stable update replaced the pinned version) is reported and taken,
and every laid-out file is checked against the SHA-256 digests in :data:`DIGESTS`, so the
folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the two ``.deb`` files
(``aspell-doc_*.deb``, ``gputils-doc_*.deb``) and the two upstream tarballs
(``supervisor_4.2.5.orig.tar.gz``, ``redis_7.0.15.orig.tar.gz``), e.g. copied from a machine
that ran the downloads.  They are the upstream releases ``4.2.5`` of ``Supervisor/supervisor``
and ``7.0.15`` of ``redis/redis`` on GitHub; one saved in DIR under the Debian file name above
should give the same files (only the members named below are read, whatever the tarball's top
folder is called), and the digest check tells whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``supervisor/configuration``,
``supervisor/CHANGES``, ``redis/README``, ``redis/deps/README``, ``aspell/The-Options``,
``gputils/gputils``.
"""

from __future__ import annotations

import gzip
import importlib.util
import shutil
from pathlib import Path

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "aspell-doc": "0.60.8-4",
    "gputils-doc": "1.4.0-0.2",
}

#: source package -> (pinned version, upstream tarball glob).
SOURCE = {
    "supervisor": ("4.2.5-1", "supervisor_4.2.5.orig.tar.*"),
    "redis": ("5:7.0.15-1~deb12u10", "redis_7.0.15.orig.tar.*"),
}

#: downloaded file name -> its SHA-256 (the ``SHA256`` of the bookworm ``Packages`` and
#: ``Sources`` indexes).
ARCHIVES = {
    "aspell-doc_0.60.8-4_all.deb": "6c768a7131085af8b9e59e9c1810816a947510edf3a92e589cf6b8a47f33bf71",
    "gputils-doc_1.4.0-0.2_all.deb": "332741308e0c9491f2500fc1ce58eb0481f08e30f385cdd54657a797af0be310",
    "supervisor_4.2.5.orig.tar.gz": "34761bae1a23c58192281a5115fb07fbf22c9b0133c08166beffc70fed3ebc12",
    "redis_7.0.15.orig.tar.gz": "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982",
}

#: the ``docs/<name>.rst`` members of the Supervisor tarball, laid out as ``supervisor/<name>.txt``
#: (``index`` is only a toctree).
SUPERVISOR_DOCS = (
    "api",
    "configuration",
    "development",
    "events",
    "faq",
    "glossary",
    "installing",
    "introduction",
    "logging",
    "plugins",
    "running",
    "subprocess",
    "upgrading",
    "xmlrpc",
)

#: the Markdown members of the Redis tarball (all with setext headings), laid out under ``redis/``.
REDIS_DOCS = ("README.md", "TLS.md", "deps/README.md", "tests/README.md")

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "supervisor": (15, "32d3cb4ff603f4050a13c86ba9e3b6c7b75c50f9383bce715f974ed7faef3905"),
    "redis": (4, "f4982ff15d3d3666ed64075bbc3af0b1eca666575bcf062b61b5b64ef229bafe"),
    "aspell": (67, "8d475d2b3e3a48b5b17fdcb60e03dd093f0cec4f6906b6940def56bf09d8ac50"),
    "gputils": (1, "f67c756d00a1300f67708f173b2f08177cff02c641f3971d788db5954cb8ed47"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen8"


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
    _SHARED.check_archives(src, ARCHIVES)
    if out.exists():
        shutil.rmtree(out)
    with _SHARED.unpacked(src, BINARY) as root:
        _SHARED.copy_pages(root / "usr/share/doc/aspell-doc/aspell.html", out / "aspell")
        (out / "gputils").mkdir()
        gz = root / "usr/share/doc/gputils-doc/gputils.pdf.gz"
        (out / "gputils" / "gputils.pdf").write_bytes(gzip.decompress(gz.read_bytes()))
    supervisor = {f"docs/{name}.rst": f"{name}.txt" for name in SUPERVISOR_DOCS}
    supervisor["CHANGES.rst"] = "CHANGES.txt"
    _SHARED.extract_members(_one(src, SOURCE["supervisor"][1]), supervisor, out / "supervisor")
    _SHARED.extract_members(_one(src, SOURCE["redis"][1]), {name: name for name in REDIS_DOCS}, out / "redis")


if __name__ == "__main__":
    _SHARED.main(download, lay_out, DIGESTS, DEFAULT_OUT, __doc__)
