"""Fetch the four public documentation corpora of the eleventh unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version and by the SHA-256 of the downloaded ``.deb`` or upstream tarball, so
every machine builds the same folder:

* ``memcached/`` -- the memcached 1.6.18 protocol and design notes, plain text with
  dash-underlined headings (upstream tarball of the source package ``memcached``:
  ``doc/{protocol,storage,threads,new_lru,tls,napi_ids}.txt``), laid out as
  ``memcached/<name>.txt``, content unchanged.  6 files.
* ``civetweb/``  -- the CivetWeb 1.15 Markdown documents with setext (``===`` / ``---``)
  headings: ``README.md``, ``RELEASE_NOTES.md``, ``docs/{Building,Contribution,Embedding,
  Installing,OpenSSL,README,UserManual,mbedtls,yaSSL}.md``, ``examples/README.md``,
  ``examples/https/README.md`` and ``test/README.md`` of the upstream tarball of the source
  package ``civetweb``, laid out under ``civetweb/`` with the same relative paths, content
  unchanged.  14 files.
* ``pam/``       -- The Linux-PAM guides (System Administrators', Module Writers' and
  Application Developers' Guide), DocBook XSL HTML, one page per section, navigation in
  ``<div class="navheader">`` / ``<div class="navfooter">`` tables (binary package
  ``libpam-doc``: the ``*.html`` pages of ``usr/share/doc/libpam-doc/html/``), laid out under
  ``pam/``.  100 files.
* ``reportlab/`` -- "ReportLab PDF Generation User Guide" (ReportLab 3.6.12), a PDF made by
  the ReportLab PDF Library itself (binary package ``python-reportlab-doc``:
  ``usr/share/doc/python-reportlab-doc/reportlab-userguide.pdf``), laid out as
  ``reportlab/userguide.pdf``.  1 file.

Usage::

    python bench/unseen11/fetch.py [--out ~/.cache/citewise/unseen11] [--from DIR]

Without ``--from`` it downloads as ``bench/unseen/fetch.py`` does (its apt helpers, the same
``apt-get download`` / ``apt-get source --download-only --tar-only`` with a private copy of the
machine's apt sources; see its docstring).  Each downloaded ``.deb`` and tarball whose name is
in :data:`ARCHIVES` is checked against the SHA-256 there (``check_archives`` of
``bench/unseen/fetch.py``; a mismatch stops the script); one with another name (a later stable
update replaced the pinned version) is reported and taken, and every laid-out file is checked
against the SHA-256 digests in :data:`DIGESTS`, so the folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the two ``.deb`` files
(``libpam-doc_*.deb``, ``python-reportlab-doc_*.deb``) and the two upstream tarballs
``memcached_1.6.18.orig.tar.xz`` and ``civetweb_1.15+dfsg.orig.tar.xz``, e.g. copied from a
machine that ran the downloads.  The tarballs are the upstream release memcached 1.6.18
(``memcached.org``) and ``v1.15`` of ``civetweb/civetweb`` on GitHub (Debian's ``+dfsg``
repack removes only files outside the documents read here); one saved in DIR under the Debian
file name above should give the same files (only the members named below are read, whatever
the tarball's top folder is called), and the digest check tells whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``memcached/protocol``,
``civetweb/docs/UserManual``, ``pam/sag-pam_limits``, ``reportlab/userguide``.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "libpam-doc": "1.5.2-6+deb12u3",
    "python-reportlab-doc": "3.6.12-1+deb12u1",
}

#: source package -> (pinned version, upstream tarball glob).
SOURCE = {
    "memcached": ("1.6.18-1+deb12u1", "memcached_1.6.18.orig.tar.*"),
    "civetweb": ("1.15+dfsg-4", "civetweb_1.15+dfsg.orig.tar.*"),
}

#: downloaded file name -> its SHA-256 (the ``SHA256`` of the bookworm ``Packages`` and
#: ``Sources`` indexes).
ARCHIVES = {
    "libpam-doc_1.5.2-6+deb12u3_all.deb": "92e95cc4a5735031cf1de9b7933bb6b5ef70f9d7e8896382da02e78fe6e21426",
    "python-reportlab-doc_3.6.12-1+deb12u1_all.deb": "f7d27c209eb0c2063b604f34414681d0694a83280aa1668f0bccc685f607131c",
    "memcached_1.6.18.orig.tar.xz": "35872bd25f8d29d7cc2072d23e74344530891bfd0aa4f4f64184a8ae7291164b",
    "civetweb_1.15+dfsg.orig.tar.xz": "ec372e9737bc820118bbb735f46a07d41f795814ca0f38bc6e67048e7a460f33",
}

#: the plain-text members of the memcached tarball -> their name under ``memcached/``.
MEMCACHED_DOCS = {
    f"doc/{name}.txt": f"{name}.txt" for name in ("protocol", "storage", "threads", "new_lru", "tls", "napi_ids")
}

#: the Markdown members of the CivetWeb tarball (every ``*.md`` with a setext heading except
#: ``LICENSE.md``), laid out under ``civetweb/``.
CIVETWEB_DOCS = (
    "README.md",
    "RELEASE_NOTES.md",
    "docs/Building.md",
    "docs/Contribution.md",
    "docs/Embedding.md",
    "docs/Installing.md",
    "docs/OpenSSL.md",
    "docs/README.md",
    "docs/UserManual.md",
    "docs/mbedtls.md",
    "docs/yaSSL.md",
    "examples/README.md",
    "examples/https/README.md",
    "test/README.md",
)

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "memcached": (6, "184875f3faff184e4e1943447f8dcd46d8a0451143f71cc82bba8438ee819111"),
    "civetweb": (14, "4d87ecf79e250604a146732b8686cd5719aa53bf4f6127853b5e6fd43cd43d7e"),
    "pam": (100, "01d0f66dad3631d033fd31f679b1aea584032abec60fed6fddb8e85edd8fb713"),
    "reportlab": (1, "aa3c487e99044dbdd2aa4e920705dc7bae283ffa4768319b637b07585515c7ad"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen11"


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
        _SHARED.copy_pages(root / "usr/share/doc/libpam-doc/html", out / "pam")
        (out / "reportlab").mkdir()
        shutil.copyfile(
            root / "usr/share/doc/python-reportlab-doc/reportlab-userguide.pdf", out / "reportlab" / "userguide.pdf"
        )
    _SHARED.extract_members(_one(src, SOURCE["memcached"][1]), MEMCACHED_DOCS, out / "memcached")
    _SHARED.extract_members(_one(src, SOURCE["civetweb"][1]), {name: name for name in CIVETWEB_DOCS}, out / "civetweb")


if __name__ == "__main__":
    _SHARED.main(download, lay_out, DIGESTS, DEFAULT_OUT, __doc__)
