"""Fetch the four public documentation corpora of the fourth unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version, so every machine builds the same folder:

* ``libuv/``     -- the libuv 1.44.2 documentation, reStructuredText (Sphinx sources with
  ``====``/``----``/``^^^^`` underlined headings, ``.. c:function::`` directives and ``:c:func:``
  roles), the thirty-three ``docs/src/*.rst`` files of the upstream tarball of the *source*
  package ``libuv1``, laid out as plain text: ``libuv/<name>.txt``, content unchanged.
* ``openssl/``   -- OpenSSL 3.0.20 documentation, Markdown with setext (``===`` / ``---``)
  headings, ``INSTALL.md`` and a few others also with ATX (``###``) ones: the thirty-five
  ``*.md`` files of the upstream tarball of the source package ``openssl`` except the release
  notes ``CHANGES.md`` and ``NEWS.md`` (every one of them has a setext heading), laid out under
  their upstream paths.
* ``libgcrypt/`` -- "The Libgcrypt Reference Manual" (Libgcrypt 1.10.1), Texinfo-generated
  HTML, one page per node plus twelve redirect pages for anchors, navigation in
  ``<div class="header">`` (binary package ``libgcrypt20-doc``:
  ``usr/share/doc/libgcrypt20-doc/html``).  101 files.
* ``asymptote/`` -- "Asymptote: the Vector Graphics Language" (version 2.85), a 196-page PDF
  (binary package ``asymptote-doc``: ``usr/share/doc/asymptote/asymptote.pdf``).  1 file.

Usage::

    python bench/unseen4/fetch.py [--out ~/.cache/citewise/unseen4] [--from DIR]

Without ``--from`` it downloads as ``bench/unseen/fetch.py`` does (its apt helpers, the same
``apt-get download`` / ``apt-get source --download-only --tar-only`` with a private copy of the
machine's apt sources; see its docstring), and every laid-out file is checked against the
SHA-256 digests below, so the folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the two ``.deb`` files
(``libgcrypt20-doc_*.deb``, ``asymptote-doc_*.deb``) and the two upstream tarballs
(``libuv1_1.44.2.orig.tar.gz``, ``openssl_3.0.20.orig.tar.gz``), e.g. copied from a machine
that ran the downloads.  They are the upstream releases ``libuv-v1.44.2`` (``libuv/libuv`` on
GitHub) and ``openssl-3.0.20.tar.gz``; one saved in DIR under the Debian file name above should
give the same files (only the members named below are read, whatever the tarball's top folder
is called), and the digest check tells whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``libuv/threadpool``, ``libuv/fs``,
``openssl/INSTALL``, ``openssl/NOTES-WINDOWS``, ``libgcrypt/Available-ciphers``,
``asymptote/asymptote``.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "libgcrypt20-doc": "1.10.1-3+deb12u1",
    "asymptote-doc": "2.85+ds-1",
}

#: source package -> (pinned version, upstream tarball glob).
SOURCE = {
    "libuv1": ("1.44.2-1+deb12u1", "libuv1_1.44.2.orig.tar.*"),
    "openssl": ("3.0.20-1~deb12u2", "openssl_3.0.20.orig.tar.*"),
}

#: the ``docs/src/<name>.rst`` members of the libuv tarball, laid out as ``libuv/<name>.txt``.
LIBUV_DOCS = (
    "api",
    "async",
    "check",
    "design",
    "dll",
    "dns",
    "errors",
    "fs",
    "fs_event",
    "fs_poll",
    "guide",
    "handle",
    "idle",
    "index",
    "loop",
    "metrics",
    "migration_010_100",
    "misc",
    "pipe",
    "poll",
    "prepare",
    "process",
    "request",
    "signal",
    "stream",
    "tcp",
    "threading",
    "threadpool",
    "timer",
    "tty",
    "udp",
    "upgrading",
    "version",
)

#: members of the OpenSSL tarball (below ``openssl-3.0.20/``), laid out under ``openssl/`` at
#: the same path.
OPENSSL_DOCS = (
    "ACKNOWLEDGEMENTS.md",
    "AUTHORS.md",
    "CONTRIBUTING.md",
    "Configurations/README-design.md",
    "Configurations/README.md",
    "HACKING.md",
    "INSTALL.md",
    "NOTES-ANDROID.md",
    "NOTES-DJGPP.md",
    "NOTES-NONSTOP.md",
    "NOTES-PERL.md",
    "NOTES-UNIX.md",
    "NOTES-VALGRIND.md",
    "NOTES-VMS.md",
    "NOTES-WINDOWS.md",
    "README-ENGINES.md",
    "README-FIPS.md",
    "README-PROVIDERS.md",
    "README.md",
    "SUPPORT.md",
    "crypto/README-sparse_array.md",
    "crypto/engine/README.md",
    "crypto/err/README.md",
    "crypto/objects/README.md",
    "crypto/perlasm/README.md",
    "crypto/property/README.md",
    "doc/README.md",
    "doc/life-cycles/README.md",
    "fuzz/README.md",
    "ssl/record/README.md",
    "ssl/statem/README.md",
    "test/README-dev.md",
    "test/README-external.md",
    "test/README.md",
    "test/README.ssltest.md",
)

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "libuv": (33, "5e0782844a7547171872a7c2ee7bea3929d3b72891fb1852f2390c24bffdfbbf"),
    "openssl": (35, "2ef3aa9d3295f111caf76f1abcafca82cad47871e198ef848e592d353ae96b6d"),
    "libgcrypt": (101, "b35c2bd7c1821db21996383f7ef998ee8c69692a5f8321d7ed4116702216ec31"),
    "asymptote": (1, "fc012ea9023c6807510c70c6c1c3986ee1da6c7986d76deab493f449e66a8cfa"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen4"


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
        _SHARED.copy_pages(root / "usr/share/doc/libgcrypt20-doc/html", out / "libgcrypt")
        (out / "asymptote").mkdir()
        shutil.copyfile(root / "usr/share/doc/asymptote/asymptote.pdf", out / "asymptote" / "asymptote.pdf")
    libuv = {f"docs/src/{name}.rst": f"{name}.txt" for name in LIBUV_DOCS}
    _SHARED.extract_members(_one(src, SOURCE["libuv1"][1]), libuv, out / "libuv")
    _SHARED.extract_members(_one(src, SOURCE["openssl"][1]), {p: p for p in OPENSSL_DOCS}, out / "openssl")


if __name__ == "__main__":
    _SHARED.main(download, lay_out, DIGESTS, DEFAULT_OUT, __doc__)
