"""Fetch the four public documentation corpora of the seventh unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version, so every machine builds the same folder:

* ``jinja/``         -- the Jinja 3.1.2 documentation, reStructuredText (the Sphinx sources
  ``docs/{api,extensions,faq,integration,intro,nativetypes,sandbox,switching,templates,tricks}.rst``
  and the top-level ``CHANGES.rst``) from the upstream tarball of the *source* package
  ``jinja2``, laid out as plain text: ``jinja/<name>.txt``, content unchanged.  11 files.
* ``libjpeg-turbo/`` -- the libjpeg-turbo 2.1.5 documentation, Markdown with setext
  (``===`` / ``---``) and ATX headings: the four top-level ``*.md`` files of the upstream
  tarball of the source package ``libjpeg-turbo`` (``README.md``, ``BUILDING.md``,
  ``ChangeLog.md``, ``LICENSE.md``), laid out as ``libjpeg-turbo/<name>.md``, content
  unchanged.  4 files.
* ``nano/``          -- "The GNU nano text editor" (nano 7.2), the whole manual as one HTML page
  made by makeinfo, plus the hand-written nano FAQ page (binary package ``nano``:
  ``usr/share/doc/nano/{nano,faq}.html``).  2 files.
* ``sdcc/``          -- "SDCC Compiler User Guide" (SDCC 4.2.0), a LaTeX/pdfTeX PDF (binary
  package ``sdcc-doc``: ``usr/share/doc/sdcc-doc/sdccman.pdf.gz``, gunzipped).  1 file.

Usage::

    python bench/unseen7/fetch.py [--out ~/.cache/citewise/unseen7] [--from DIR]

Without ``--from`` it downloads as ``bench/unseen/fetch.py`` does (its apt helpers, the same
``apt-get download`` / ``apt-get source --download-only --tar-only`` with a private copy of the
machine's apt sources; see its docstring), and every laid-out file is checked against the
SHA-256 digests below, so the folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the two ``.deb`` files
(``nano_*.deb``, ``sdcc-doc_*.deb``) and the two upstream tarballs
(``jinja2_3.1.2.orig.tar.gz``, ``libjpeg-turbo_2.1.5.orig.tar.gz``), e.g. copied from a machine
that ran the downloads.  They are the upstream releases ``3.1.2`` of ``pallets/jinja`` and
``2.1.5`` of ``libjpeg-turbo/libjpeg-turbo`` on GitHub; one saved in DIR under the Debian file
name above should give the same files (only the members named below are read, whatever the
tarball's top folder is called), and the digest check tells whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``jinja/templates``, ``jinja/api``,
``libjpeg-turbo/BUILDING``, ``nano/nano``, ``nano/faq``, ``sdcc/sdccman``.
"""

from __future__ import annotations

import gzip
import importlib.util
import shutil
from pathlib import Path

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "nano": "7.2-1+deb12u1",
    "sdcc-doc": "4.2.0+dfsg-1",
}

#: source package -> (pinned version, upstream tarball glob).
SOURCE = {
    "jinja2": ("3.1.2-1+deb12u3", "jinja2_3.1.2.orig.tar.*"),
    "libjpeg-turbo": ("1:2.1.5-2", "libjpeg-turbo_2.1.5.orig.tar.*"),
}

#: the ``docs/<name>.rst`` members of the Jinja tarball, laid out as ``jinja/<name>.txt``
#: (``index``, ``changes`` and ``license`` are only a toctree and two ``include`` stubs).
JINJA_DOCS = (
    "api",
    "extensions",
    "faq",
    "integration",
    "intro",
    "nativetypes",
    "sandbox",
    "switching",
    "templates",
    "tricks",
)

#: the ``<name>.md`` members of the libjpeg-turbo tarball, laid out as ``libjpeg-turbo/<name>.md``.
LIBJPEG_DOCS = ("BUILDING", "ChangeLog", "LICENSE", "README")

#: the HTML pages of ``usr/share/doc/nano``, laid out as ``nano/<name>.html``.
NANO_DOCS = ("faq", "nano")

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "jinja": (11, "21a182531610756a7dd34cd4c87b247f605512db7dbc05b4cadd524a22b4d532"),
    "libjpeg-turbo": (4, "7e46858c3b805ef53a749a888fd7dbf647aea44c7af46c1f3da762b7e7b574bc"),
    "nano": (2, "0afc14e3c2a33da0c0df33cb306573f8dd9917bf21969b30e64a75fd335bc17b"),
    "sdcc": (1, "5e54c4d07439cb8ce4b2076b77e74a7456fd217b709e82821531000929266100"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen7"


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
        (out / "nano").mkdir(parents=True)
        for name in NANO_DOCS:
            html = root / "usr/share/doc/nano" / f"{name}.html"
            shutil.copyfile(html.resolve() if html.is_symlink() else html, out / "nano" / f"{name}.html")
        (out / "sdcc").mkdir()
        gz = root / "usr/share/doc/sdcc-doc/sdccman.pdf.gz"
        (out / "sdcc" / "sdccman.pdf").write_bytes(gzip.decompress(gz.read_bytes()))
    jinja = {f"docs/{name}.rst": f"{name}.txt" for name in JINJA_DOCS}
    jinja["CHANGES.rst"] = "CHANGES.txt"
    _SHARED.extract_members(_one(src, SOURCE["jinja2"][1]), jinja, out / "jinja")
    libjpeg = {f"{name}.md": f"{name}.md" for name in LIBJPEG_DOCS}
    _SHARED.extract_members(_one(src, SOURCE["libjpeg-turbo"][1]), libjpeg, out / "libjpeg-turbo")


if __name__ == "__main__":
    _SHARED.main(download, lay_out, DIGESTS, DEFAULT_OUT, __doc__)
