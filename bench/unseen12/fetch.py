"""Fetch the four public documentation corpora of the twelfth unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version and by the SHA-256 of the downloaded ``.deb`` or upstream tarball, so
every machine builds the same folder:

* ``mpv/``       -- the mpv 0.35.1 manual, reStructuredText (upstream tarball of the source
  package ``mpv``: the 16 files of ``DOCS/man/``, ``mpv.rst`` and the files it includes,
  ``options.rst``, ``input.rst``, ``lua.rst``, ...), laid out as ``mpv/<name>.txt``, content
  unchanged.  16 files.
* ``symfony/``   -- the Symfony upgrade guides, Markdown with setext (``===`` / ``---``)
  headings: ``UPGRADE-5.0.md`` ... ``UPGRADE-5.4.md``, ``UPGRADE-6.0.md`` and ``README.md``
  of the upstream tarball of the source package ``symfony`` (5.4.53), laid out under
  ``symfony/`` with the same names, content unchanged.  7 files.
* ``cockpit/``   -- the Cockpit Guide (Cockpit 287.1), DocBook XSL HTML in the GTK-Doc
  style, one page per chapter or reference entry, navigation in ``<table class="navigation">``
  (binary package ``cockpit-doc``: the ``*.html`` pages of ``usr/share/doc/cockpit/guide/``),
  laid out under ``cockpit/``.  55 files.
* ``gutenprint/`` -- "Gutenprint 5.2 User's Manual" (title "Gutenprint 5.0 User's Manual and
  Release Notes"), a 73-page PDF written by LibreOffice (binary package ``gutenprint-doc``:
  ``usr/share/doc/gutenprint-doc/gutenprint-users-manual.pdf``), laid out as
  ``gutenprint/users-manual.pdf``.  1 file.

Usage::

    python bench/unseen12/fetch.py [--out ~/.cache/citewise/unseen12] [--from DIR]

Without ``--from`` it downloads as ``bench/unseen/fetch.py`` does (its apt helpers, the same
``apt-get download`` / ``apt-get source --download-only --tar-only`` with a private copy of the
machine's apt sources; see its docstring).  Each downloaded ``.deb`` and tarball whose name is
in :data:`ARCHIVES` is checked against the SHA-256 there (``check_archives`` of
``bench/unseen/fetch.py``; a mismatch stops the script); one with another name (a later stable
update replaced the pinned version) is reported and taken, and every laid-out file is checked
against the SHA-256 digests in :data:`DIGESTS`, so the folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the two ``.deb`` files
(``cockpit-doc_*.deb``, ``gutenprint-doc_*.deb``) and the two upstream tarballs
``mpv_0.35.1.orig.tar.gz`` and ``symfony_5.4.53+dfsg.orig.tar.xz``, e.g. copied from a machine
that ran the downloads.  The tarballs are the upstream releases ``v0.35.1`` of ``mpv-player/mpv``
and ``v5.4.53`` of ``symfony/symfony`` on GitHub (Debian's ``+dfsg`` repack of Symfony removes
only files outside the documents read here); one saved in DIR under the Debian file name above
should give the same files (only the members named below are read, whatever the tarball's top
folder is called), and the digest check tells whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``mpv/options``, ``symfony/UPGRADE-6.0``,
``cockpit/cockpit.conf.5``, ``gutenprint/users-manual``.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "cockpit-doc": "287.1-0+deb12u3",
    "gutenprint-doc": "5.3.4.20220624T01008808d602-1",
}

#: source package -> (pinned version, upstream tarball glob).
SOURCE = {
    "mpv": ("0.35.1-4", "mpv_0.35.1.orig.tar.*"),
    "symfony": ("5.4.53+dfsg-0+deb12u1", "symfony_5.4.53+dfsg.orig.tar.*"),
}

#: downloaded file name -> its SHA-256 (the ``SHA256`` of the bookworm ``Packages`` and
#: ``Sources`` indexes).
ARCHIVES = {
    "cockpit-doc_287.1-0+deb12u3_all.deb": "0bf86777696a4a82d0eaf4ceddaec8c695746ddf5eea2091a6ca1949ebb00cee",
    "gutenprint-doc_5.3.4.20220624T01008808d602-1_all.deb": "717ccc52b77977775f55ee945614cc24224029b4efa50f6f24c1418d1b7065e6",
    "mpv_0.35.1.orig.tar.gz": "41df981b7b84e33a2ef4478aaf81d6f4f5c8b9cd2c0d337ac142fc20b387d1a9",
    "symfony_5.4.53+dfsg.orig.tar.xz": "515820883adad6d72924de6414d2f51f8a4eea5d95d836075c89abd4ae6471f1",
}

#: the reStructuredText members of the mpv tarball (all of ``DOCS/man/``) -> their name under
#: ``mpv/``.
MPV_DOCS = {
    f"DOCS/man/{name}.rst": f"{name}.txt"
    for name in (
        "af",
        "ao",
        "changes",
        "console",
        "encode",
        "input",
        "ipc",
        "javascript",
        "libmpv",
        "lua",
        "mpv",
        "options",
        "osc",
        "stats",
        "vf",
        "vo",
    )
}

#: the Markdown members of the Symfony tarball (the upgrade guides and the README, each with
#: setext headings), laid out under ``symfony/``.
SYMFONY_DOCS = (
    "README.md",
    "UPGRADE-5.0.md",
    "UPGRADE-5.1.md",
    "UPGRADE-5.2.md",
    "UPGRADE-5.3.md",
    "UPGRADE-5.4.md",
    "UPGRADE-6.0.md",
)

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "mpv": (16, "186b9578cbab4249291f86771aaa07f93560039eac055da56241508d735380fc"),
    "symfony": (7, "05b3fbff24b8d61812c0f3c5945ee8ff71f8ac0813bd34b2692bbd8ee1c8e33f"),
    "cockpit": (55, "8b3139a4c3a16aad1969ad263e46e89b4f1e9b430a21c5ff724894e3cbc8d980"),
    "gutenprint": (1, "4911188c1388c6cba935df94a5174f57e76d6a6aaeae716a2d0ddaa06390d390"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen12"


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
        _SHARED.copy_pages(root / "usr/share/doc/cockpit/guide", out / "cockpit")
        (out / "gutenprint").mkdir()
        shutil.copyfile(
            root / "usr/share/doc/gutenprint-doc/gutenprint-users-manual.pdf", out / "gutenprint" / "users-manual.pdf"
        )
    _SHARED.extract_members(_one(src, SOURCE["mpv"][1]), MPV_DOCS, out / "mpv")
    _SHARED.extract_members(_one(src, SOURCE["symfony"][1]), {name: name for name in SYMFONY_DOCS}, out / "symfony")


if __name__ == "__main__":
    _SHARED.main(download, lay_out, DIGESTS, DEFAULT_OUT, __doc__)
