"""Fetch the four public documentation corpora of the sixth unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version, so every machine builds the same folder:

* ``fio/``     -- the fio 3.33 documentation, reStructuredText (the Sphinx sources ``HOWTO.rst``,
  the full job-file and command-line reference with ``.. option::`` entries, and ``README.rst``)
  from the upstream tarball of the *source* package ``fio``, laid out as plain text:
  ``fio/HOWTO.txt`` and ``fio/README.txt``, content unchanged.  2 files.
* ``fzf/``     -- the fzf 0.38.0 documentation, Markdown with setext (``===`` / ``---``) and ATX
  headings: the five top-level ``*.md`` files of the upstream tarball of the source package
  ``fzf`` (``README.md``, ``ADVANCED.md``, ``README-VIM.md``, ``BUILD.md``, ``CHANGELOG.md``),
  laid out as ``fzf/<name>.md``, content unchanged.  5 files.
* ``gettext/`` -- "GNU gettext utilities" (gettext 0.21), HTML made by texi2html 1.78a, one page
  per chapter, appendix or index part, navigation in ``<table>`` button bars (binary package
  ``gettext-doc``: ``usr/share/doc/gettext/gettext_*.html``).  33 files.
* ``r-admin/`` -- "R Installation and Administration" (R 4.2.2), a Texinfo-made pdfTeX PDF
  (binary package ``r-doc-pdf``: ``usr/share/R/doc/manual/R-admin.pdf``).  1 file.

Usage::

    python bench/unseen6/fetch.py [--out ~/.cache/citewise/unseen6] [--from DIR]

Without ``--from`` it downloads as ``bench/unseen/fetch.py`` does (its apt helpers, the same
``apt-get download`` / ``apt-get source --download-only --tar-only`` with a private copy of the
machine's apt sources; see its docstring), and every laid-out file is checked against the
SHA-256 digests below, so the folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the two ``.deb`` files
(``gettext-doc_*.deb``, ``r-doc-pdf_*.deb``) and the two upstream tarballs
(``fio_3.33.orig.tar.gz``, ``fzf_0.38.0.orig.tar.gz``), e.g. copied from a machine that ran the
downloads.  They are the upstream releases ``fio-3.33`` of ``axboe/fio`` and ``0.38.0`` of
``junegunn/fzf`` on GitHub; one saved in DIR under the Debian file name above should give the
same files (only the members named below are read, whatever the tarball's top folder is
called), and the digest check tells whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``fio/HOWTO``, ``fzf/README``,
``fzf/ADVANCED``, ``gettext/gettext_10``, ``r-admin/R-admin``.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "gettext-doc": "0.21-12",
    "r-doc-pdf": "4.2.2.20221110-2",
}

#: source package -> (pinned version, upstream tarball glob).
SOURCE = {
    "fio": ("3.33-3", "fio_3.33.orig.tar.*"),
    "fzf": ("0.38.0-1", "fzf_0.38.0.orig.tar.*"),
}

#: the ``<name>.rst`` members of the fio tarball, laid out as ``fio/<name>.txt``.
FIO_DOCS = ("HOWTO", "README")

#: the ``<name>.md`` members of the fzf tarball, laid out as ``fzf/<name>.md``.
FZF_DOCS = ("ADVANCED", "BUILD", "CHANGELOG", "README", "README-VIM")

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "fio": (2, "c9836c9fe0d5778b80cc40d99430c567ae1469a60db9f6298822374da46899a3"),
    "fzf": (5, "40d301cfd6ad56a3482cd37db4347c7fdaf732613a33b84806a5a100ef00faad"),
    "gettext": (33, "3623bcbf6831e205a32f6bcc87c6271d40929334e28cb5b32d125c8c2f3d18b2"),
    "r-admin": (1, "1e848767bbe4691b803ccbb1a80083490b1f774698f08c6e140bda8699826727"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen6"


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
        (out / "gettext").mkdir(parents=True)
        for html in sorted((root / "usr/share/doc/gettext").glob("gettext_*.html")):
            shutil.copyfile(html.resolve() if html.is_symlink() else html, out / "gettext" / html.name)
        (out / "r-admin").mkdir()
        pdf = root / "usr/share/R/doc/manual/R-admin.pdf"
        shutil.copyfile(pdf.resolve() if pdf.is_symlink() else pdf, out / "r-admin" / "R-admin.pdf")
    fio = {f"{name}.rst": f"{name}.txt" for name in FIO_DOCS}
    _SHARED.extract_members(_one(src, SOURCE["fio"][1]), fio, out / "fio")
    fzf = {f"{name}.md": f"{name}.md" for name in FZF_DOCS}
    _SHARED.extract_members(_one(src, SOURCE["fzf"][1]), fzf, out / "fzf")


if __name__ == "__main__":
    _SHARED.main(download, lay_out, DIGESTS, DEFAULT_OUT, __doc__)
