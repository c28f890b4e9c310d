"""Fetch the four public documentation corpora of the fifth unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version, so every machine builds the same folder:

* ``restic/`` -- the restic 0.14.0 documentation, reStructuredText (Sphinx sources with
  overlined ``####`` chapter titles, ``****``/``====``/``----`` underlined headings,
  ``.. code-block:: console`` blocks and ``:ref:`` roles), the twenty-one ``doc/*.rst`` files of
  the upstream tarball of the *source* package ``restic``, laid out as plain text:
  ``restic/<name>.txt``, content unchanged.
* ``sdl/``    -- the SDL 2.26.5 platform and build notes, Markdown, most of them with setext
  (``===`` / ``---``) headings and CRLF line ends: the thirty-four ``docs/*.md`` files of the
  upstream tarball of the source package ``libsdl2``, laid out as ``sdl/<name>.md``, content
  unchanged.
* ``mpfr/``   -- "GNU MPFR, The Multiple Precision Floating-Point Reliable Library" (MPFR
  4.2.0), Texinfo-generated HTML, one page per node, navigation in ``<div class="header">``
  (binary package ``libmpfr-doc``: ``usr/share/doc/libmpfr-doc/mpfr.html``).  48 files.
* ``nauty/``  -- "nauty and Traces User's Guide (Version 2.8.6)", a 109-page pdfTeX PDF (binary
  package ``nauty-doc``: ``usr/share/doc/nauty/nug28.pdf``).  1 file.

Usage::

    python bench/unseen5/fetch.py [--out ~/.cache/citewise/unseen5] [--from DIR]

Without ``--from`` it downloads as ``bench/unseen/fetch.py`` does (its apt helpers, the same
``apt-get download`` / ``apt-get source --download-only --tar-only`` with a private copy of the
machine's apt sources; see its docstring), and every laid-out file is checked against the
SHA-256 digests below, so the folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the two ``.deb`` files
(``libmpfr-doc_*.deb``, ``nauty-doc_*.deb``) and the two upstream tarballs
(``restic_0.14.0.orig.tar.gz``, ``libsdl2_2.26.5+dfsg.orig.tar.gz``), e.g. copied from a
machine that ran the downloads.  They are the upstream release ``v0.14.0`` of
``restic/restic`` on GitHub and Debian's repack of ``SDL2-2.26.5.tar.gz`` (the ``+dfsg`` repack
leaves ``docs/`` alone); one saved in DIR under the Debian file name above should give the same
files (only the members named below are read, whatever the tarball's top folder is called), and
the digest check tells whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``restic/040_backup``,
``restic/design``, ``sdl/README-android``, ``sdl/README-ios``, ``mpfr/Rounding-Modes``,
``nauty/nug28``.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "libmpfr-doc": "4.2.0-1",
    "nauty-doc": "2.8.6+ds-2",
}

#: source package -> (pinned version, upstream tarball glob).
SOURCE = {
    "restic": ("0.14.0-1", "restic_0.14.0.orig.tar.*"),
    "libsdl2": ("2.26.5+dfsg-1", "libsdl2_2.26.5+dfsg.orig.tar.*"),
}

#: the ``doc/<name>.rst`` members of the restic tarball, laid out as ``restic/<name>.txt``.
RESTIC_DOCS = (
    "010_introduction",
    "020_installation",
    "030_preparing_a_new_repo",
    "040_backup",
    "045_working_with_repos",
    "047_tuning_backup_parameters",
    "050_restore",
    "060_forget",
    "070_encryption",
    "075_scripting",
    "080_examples",
    "090_participating",
    "100_references",
    "110_talks",
    "REST_backend",
    "cache",
    "design",
    "developer_information",
    "faq",
    "index",
    "manual_rest",
)

#: the ``docs/<name>.md`` members of the SDL tarball, laid out as ``sdl/<name>.md``.
SDL_DOCS = (
    "CONTRIBUTING",
    "README",
    "README-android",
    "README-cmake",
    "README-directfb",
    "README-dynapi",
    "README-emscripten",
    "README-gdk",
    "README-gesture",
    "README-git",
    "README-hg",
    "README-ios",
    "README-kmsbsd",
    "README-linux",
    "README-macos",
    "README-n3ds",
    "README-nacl",
    "README-ngage",
    "README-os2",
    "README-pandora",
    "README-platforms",
    "README-porting",
    "README-ps2",
    "README-psp",
    "README-raspberrypi",
    "README-riscos",
    "README-touch",
    "README-versions",
    "README-visualc",
    "README-vita",
    "README-wince",
    "README-windows",
    "README-winrt",
    "release_checklist",
)

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "restic": (21, "e7fce00ee08c1b065ff493c52732b0753f0c492e96e94060f547a44d7c718611"),
    "sdl": (34, "a54cf1f01e7156a6a2e7399152454c715c7a8d077ce7300314c588cea4304c0a"),
    "mpfr": (48, "7ec56e65c9b241df1a6c73b6914c80edaf430a9559567faa1b89f99d145efe1d"),
    "nauty": (1, "16023ba1bd466a43f2f2995553654a4f1fea811e65b6933f61fddad61d155140"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen5"


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
        _SHARED.copy_pages(root / "usr/share/doc/libmpfr-doc/mpfr.html", out / "mpfr")
        (out / "nauty").mkdir()
        shutil.copyfile(root / "usr/share/doc/nauty/nug28.pdf", out / "nauty" / "nug28.pdf")
    restic = {f"doc/{name}.rst": f"{name}.txt" for name in RESTIC_DOCS}
    _SHARED.extract_members(_one(src, SOURCE["restic"][1]), restic, out / "restic")
    sdl = {f"docs/{name}.md": f"{name}.md" for name in SDL_DOCS}
    _SHARED.extract_members(_one(src, SOURCE["libsdl2"][1]), sdl, out / "sdl")


if __name__ == "__main__":
    _SHARED.main(download, lay_out, DIGESTS, DEFAULT_OUT, __doc__)
