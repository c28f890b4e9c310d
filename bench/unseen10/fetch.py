"""Fetch the four public documentation corpora of the tenth unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version and by the SHA-256 of the downloaded ``.deb`` or upstream tarball, so
every machine builds the same folder:

* ``chrony/`` -- the chrony 4.3 manual pages and guides as their AsciiDoc sources, plain text
  (upstream tarball of the source package ``chrony``: ``doc/{chrony.conf,chronyc,chronyd,faq,
  installation}.adoc``), laid out as ``chrony/<name>.txt``, content unchanged.  5 files.
* ``netcdf/`` -- the netCDF-C 4.9.0 Markdown documents with setext (``===`` / ``---``)
  headings: ``INSTALL.md`` and fourteen ``docs/*.md`` of the upstream tarball of the source
  package ``netcdf``, laid out under ``netcdf/`` with the same relative paths, content
  unchanged.  15 files.
* ``knot/``   -- the Knot DNS 3.2.6 documentation site, Sphinx 5.3 HTML (the "nature" theme),
  navigation in ``<div class="related" role="navigation">`` and
  ``<div class="sphinxsidebar" role="navigation">`` (binary package ``knot-doc``: the
  ``*.html`` pages of ``usr/share/doc/knot-doc/`` except the JavaScript-only ``search.html``),
  laid out under ``knot/``.  24 files.
* ``fhs/``    -- "Filesystem Hierarchy Standard", version 3.0, an Apache FOP PDF (binary
  package ``debian-policy``: ``usr/share/doc/debian-policy/fhs/fhs-3.0.pdf.gz``, gunzipped),
  laid out as ``fhs/fhs.pdf``.  1 file.

Usage::

    python bench/unseen10/fetch.py [--out ~/.cache/citewise/unseen10] [--from DIR]

Without ``--from`` it downloads as ``bench/unseen/fetch.py`` does (its apt helpers, the same
``apt-get download`` / ``apt-get source --download-only --tar-only`` with a private copy of the
machine's apt sources; see its docstring).  Each downloaded ``.deb`` and tarball whose name is
in :data:`ARCHIVES` is checked against the SHA-256 there (``check_archives`` of
``bench/unseen/fetch.py``; a mismatch stops the script); one with another name (a later stable
update replaced the pinned version) is reported and taken, and every laid-out file is checked
against the SHA-256 digests in :data:`DIGESTS`, so the folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the two ``.deb`` files
(``knot-doc_*.deb``, ``debian-policy_*.deb``) and the two upstream tarballs
``chrony_4.3.orig.tar.gz`` and ``netcdf_4.9.0.orig.tar.gz``, e.g. copied from a machine that
ran the downloads.  The tarballs are the upstream releases chrony 4.3
(``download.tuxfamily.org/chrony``) and ``v4.9.0`` of ``Unidata/netcdf-c`` on GitHub; one saved
in DIR under the Debian file name above should give the same files (only the members named
below are read, whatever the tarball's top folder is called), and the digest check tells
whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``chrony/chrony.conf``,
``chrony/faq``, ``netcdf/docs/FAQ``, ``netcdf/INSTALL``, ``knot/configuration``,
``knot/reference``, ``fhs/fhs``.
"""

from __future__ import annotations

import gzip
import importlib.util
import shutil
from pathlib import Path

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "knot-doc": "3.2.6-1",
    "debian-policy": "4.6.2.0",
}

#: source package -> (pinned version, upstream tarball glob).
SOURCE = {
    "chrony": ("4.3-2+deb12u3", "chrony_4.3.orig.tar.*"),
    "netcdf": ("1:4.9.0-3", "netcdf_4.9.0.orig.tar.*"),
}

#: downloaded file name -> its SHA-256 (the ``SHA256`` of the bookworm ``Packages`` and
#: ``Sources`` indexes).
ARCHIVES = {
    "knot-doc_3.2.6-1_all.deb": "4b97fefbc2da5e0b94a4d37615250cd9b07ef539578d980d1bd023935c8b327d",
    "debian-policy_4.6.2.0_all.deb": "ef9d01b625c3b87c3a845c2cd1b66f1a16e9240b2b9e5bee53472a00e8457a39",
    "chrony_4.3.orig.tar.gz": "9d0da889a865f089a5a21610ffb6713e3c9438ce303a63b49c2fb6eaff5b8804",
    "netcdf_4.9.0.orig.tar.gz": "9f4cb864f3ab54adb75409984c6202323d2fc66c003e5308f3cdf224ed41c0a6",
}

#: the AsciiDoc members of the chrony tarball -> their name under ``chrony/``.
CHRONY_DOCS = {
    f"doc/{name}.adoc": f"{name}.txt" for name in ("chrony.conf", "chronyc", "chronyd", "faq", "installation")
}

#: the Markdown members of the netCDF-C tarball (all with setext headings), laid out under
#: ``netcdf/``.
NETCDF_DOCS = (
    "INSTALL.md",
    "docs/FAQ.md",
    "docs/attribute_conventions.md",
    "docs/auth.md",
    "docs/building-with-cmake.md",
    "docs/dispatch.md",
    "docs/esg.md",
    "docs/file_format_specifications.md",
    "docs/filters.md",
    "docs/inmemory.md",
    "docs/install-fortran.md",
    "docs/internal.md",
    "docs/known_problems.md",
    "docs/nczarr.md",
    "docs/windows-binaries.md",
)

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "chrony": (5, "2dc62a62dfec42eee9d2fdffbb4ca3f080b2f807724aca745165f1f0fd518321"),
    "netcdf": (15, "f27ff9c5c819cd6f87b553a1fe8455f84624ba423cc49dc83f74213eb55b0660"),
    "knot": (24, "039b827567b5502dcbed6509ccc6f745eab9f0a4f9676e49a0ca8c5eebcc7e64"),
    "fhs": (1, "673b31d24cad3b622d25d693c7c61f7da4b296fe045f143d721eb1aaca80ac22"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen10"


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
        _SHARED.copy_pages(root / "usr/share/doc/knot-doc", out / "knot")
        (out / "knot" / "search.html").unlink()
        (out / "fhs").mkdir()
        gz = root / "usr/share/doc/debian-policy/fhs/fhs-3.0.pdf.gz"
        (out / "fhs" / "fhs.pdf").write_bytes(gzip.decompress(gz.read_bytes()))
    _SHARED.extract_members(_one(src, SOURCE["chrony"][1]), CHRONY_DOCS, out / "chrony")
    _SHARED.extract_members(_one(src, SOURCE["netcdf"][1]), {name: name for name in NETCDF_DOCS}, out / "netcdf")


if __name__ == "__main__":
    _SHARED.main(download, lay_out, DIGESTS, DEFAULT_OUT, __doc__)
