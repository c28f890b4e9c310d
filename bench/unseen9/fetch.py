"""Fetch the four public documentation corpora of the ninth unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version and by the SHA-256 of the downloaded ``.deb`` or upstream tarball, so
every machine builds the same folder:

* ``postfix/`` -- the Postfix 3.7.11 README files, plain text (binary package ``postfix-doc``:
  the ``*_README`` files of ``usr/share/doc/postfix/`` except the two superseded
  ``POSTSCREEN_3_5_README`` and ``TLS_LEGACY_README``, plus ``OVERVIEW``, ``COMPATIBILITY``,
  ``README`` and ``RELEASE_NOTES``; gunzipped where gzipped), laid out as
  ``postfix/<NAME>.txt``, content unchanged.  58 files.
* ``thrift/``  -- the Apache Thrift 0.17.0 Markdown documents with setext (``===`` / ``---``)
  headings: ``README.md``, six ``doc/specs/*.md``, fourteen ``lib/*/README*.md`` and
  ``tutorial/README.md`` of the upstream tarball of the source package ``thrift``, laid out
  under ``thrift/`` with the same relative paths, content unchanged.  22 files.
* ``privoxy/`` -- the Privoxy 3.0.34 documentation site, Modular DocBook HTML, navigation in
  ``<div class="NAVHEADER">`` / ``"NAVFOOTER"`` tables (binary package ``privoxy``:
  ``usr/share/doc/privoxy/{index.html,user-manual,faq,developer-manual,man-page}``, the
  ``*.html`` pages only), laid out under ``privoxy/`` with the same relative paths.  33 files.
* ``sbcl/``    -- "SBCL User Manual" for SBCL 2.2.9, a Texinfo/pdfTeX PDF (binary package
  ``sbcl-doc``: ``usr/share/doc/sbcl/sbcl.pdf.gz``, gunzipped).  1 file.

Usage::

    python bench/unseen9/fetch.py [--out ~/.cache/citewise/unseen9] [--from DIR]

Without ``--from`` it downloads as ``bench/unseen/fetch.py`` does (its apt helpers, the same
``apt-get download`` / ``apt-get source --download-only --tar-only`` with a private copy of the
machine's apt sources; see its docstring).  Each downloaded ``.deb`` and tarball whose name is
in :data:`ARCHIVES` is checked against the SHA-256 there (``check_archives`` of
``bench/unseen/fetch.py``; a mismatch stops the script); one
with another name (a later stable update replaced the pinned version, or ``privoxy`` for
another architecture than amd64) is reported and taken, and every laid-out file is checked
against the SHA-256 digests in :data:`DIGESTS`, so the folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the three ``.deb`` files
(``postfix-doc_*.deb``, ``privoxy_*.deb``, ``sbcl-doc_*.deb``) and the upstream tarball
``thrift_0.17.0.orig.tar.gz``, e.g. copied from a machine that ran the downloads.  The tarball
is the upstream release ``v0.17.0`` of ``apache/thrift`` on GitHub; one saved in DIR under the
Debian file name above should give the same files (only the members named below are read,
whatever the tarball's top folder is called), and the digest check tells whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``postfix/TLS_README``,
``thrift/doc/specs/thrift-compact-protocol``, ``thrift/lib/go/README``,
``privoxy/user-manual/config``, ``privoxy/faq/misc``, ``sbcl/sbcl``.
"""

from __future__ import annotations

import gzip
import importlib.util
import shutil
import sys
from pathlib import Path

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "postfix-doc": "3.7.11-0+deb12u1",
    "privoxy": "3.0.34-1",
    "sbcl-doc": "2:2.2.9-1",
}

#: source package -> (pinned version, upstream tarball glob).
SOURCE = {
    "thrift": ("0.17.0-2", "thrift_0.17.0.orig.tar.*"),
}

#: downloaded file name -> its SHA-256 (the ``SHA256`` of the bookworm ``Packages`` and
#: ``Sources`` indexes).
ARCHIVES = {
    "postfix-doc_3.7.11-0+deb12u1_all.deb": "6b07bcc68991703acf747dc2500355bdd02aef0a048419b939752c39faf47d8d",
    "privoxy_3.0.34-1_amd64.deb": "767b14a2faefac1dbb3eab9eeacb368f48bb3b0bc1d3d37cb07e6e72a89ded07",
    "sbcl-doc_2%3a2.2.9-1_all.deb": "cbb347501ecb4cd6011b805495684b41375a9efbee45f3c33a388da910fa01a0",
    "thrift_0.17.0.orig.tar.gz": "f5888bcd3b8de40c2c2ab86896867ad9b18510deb412cba3e5da76fb4c604c29",
}

#: the files of ``usr/share/doc/postfix/`` (``NAME`` or ``NAME.gz``), laid out as
#: ``postfix/NAME.txt``.
POSTFIX_DOCS = (
    "ADDRESS_CLASS_README",
    "ADDRESS_REWRITING_README",
    "ADDRESS_VERIFICATION_README",
    "BACKSCATTER_README",
    "BASIC_CONFIGURATION_README",
    "BDAT_README",
    "BUILTIN_FILTER_README",
    "CDB_README",
    "COMPATIBILITY",
    "COMPATIBILITY_README",
    "CONNECTION_CACHE_README",
    "CONTENT_INSPECTION_README",
    "DATABASE_README",
    "DB_README",
    "DEBUG_README",
    "DSN_README",
    "ETRN_README",
    "FILTER_README",
    "FORWARD_SECRECY_README",
    "IPV6_README",
    "LDAP_README",
    "LINUX_README",
    "LMDB_README",
    "LOCAL_RECIPIENT_README",
    "MAILDROP_README",
    "MAILLOG_README",
    "MEMCACHE_README",
    "MILTER_README",
    "MULTI_INSTANCE_README",
    "MYSQL_README",
    "NFS_README",
    "OVERVIEW",
    "PACKAGE_README",
    "PCRE_README",
    "PGSQL_README",
    "POSTSCREEN_README",
    "QMQP_README",
    "QSHAPE_README",
    "README",
    "RELEASE_NOTES",
    "RESTRICTION_CLASS_README",
    "SASL_README",
    "SCHEDULER_README",
    "SMTPD_ACCESS_README",
    "SMTPD_POLICY_README",
    "SMTPD_PROXY_README",
    "SMTPUTF8_README",
    "SOHO_README",
    "SQLITE_README",
    "STANDARD_CONFIGURATION_README",
    "STRESS_README",
    "TLS_README",
    "TUNING_README",
    "UUCP_README",
    "VERP_README",
    "VIRTUAL_README",
    "XCLIENT_README",
    "XFORWARD_README",
)

#: the Markdown members of the Thrift tarball (all with setext headings), laid out under
#: ``thrift/``.
THRIFT_DOCS = (
    "README.md",
    "doc/specs/HeaderFormat.md",
    "doc/specs/thrift-binary-protocol.md",
    "doc/specs/thrift-compact-protocol.md",
    "doc/specs/thrift-protocol-spec.md",
    "doc/specs/thrift-rpc.md",
    "doc/specs/thrift-tconfiguration.md",
    "lib/c_glib/README.md",
    "lib/d/README.md",
    "lib/dart/README.md",
    "lib/delphi/README.md",
    "lib/go/README.md",
    "lib/haxe/README.md",
    "lib/java/README.md",
    "lib/js/README.md",
    "lib/nodejs/README.md",
    "lib/ocaml/README.md",
    "lib/php/README.apache.md",
    "lib/py/README.md",
    "lib/st/README.md",
    "lib/swift/README.md",
    "tutorial/README.md",
)

#: the folders of ``usr/share/doc/privoxy/`` whose ``*.html`` pages are laid out under ``privoxy/``.
PRIVOXY_DIRS = ("", "user-manual", "faq", "developer-manual", "man-page")

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "postfix": (58, "dbf0413edc9bcaf7ce9ff0fe262b621595a3b448788e60594d908267768e94af"),
    "thrift": (22, "c400e8a2e5f555447256b1b470e0e52526eb2b954a6f0b79acbfa8cc6fd007fc"),
    "privoxy": (33, "d8c778525dbaa29dc998231b6bcb4a43dd14088a6c15af10dfd90d1185cdd7be"),
    "sbcl": (1, "2bd1949848dd96552a1746788779936baf52bb41c2f78e1205fb35d9449f209e"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen9"


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
    """Download the three binary packages and the source package into ``dest``."""
    _SHARED.download_packages(BINARY, {pkg: version for pkg, (version, _) in SOURCE.items()}, dest)


def lay_out(src: Path, out: Path) -> None:
    """Lay the four corpora out under ``out`` from the packages in ``src``."""
    _SHARED.check_archives(src, ARCHIVES)
    if out.exists():
        shutil.rmtree(out)
    with _SHARED.unpacked(src, BINARY) as root:
        doc = root / "usr/share/doc/postfix"
        (out / "postfix").mkdir(parents=True)
        for name in POSTFIX_DOCS:
            plain, packed = doc / name, doc / f"{name}.gz"
            if plain.is_file():
                data = plain.read_bytes()
            elif packed.is_file():
                data = gzip.decompress(packed.read_bytes())
            else:
                sys.exit(f"fetch: postfix-doc: missing {name}")
            (out / "postfix" / f"{name}.txt").write_bytes(data)
        for sub in PRIVOXY_DIRS:
            _SHARED.copy_pages(root / "usr/share/doc/privoxy" / sub, out / "privoxy" / sub)
        (out / "sbcl").mkdir()
        gz = root / "usr/share/doc/sbcl/sbcl.pdf.gz"
        (out / "sbcl" / "sbcl.pdf").write_bytes(gzip.decompress(gz.read_bytes()))
    _SHARED.extract_members(_one(src, SOURCE["thrift"][1]), {name: name for name in THRIFT_DOCS}, out / "thrift")


if __name__ == "__main__":
    _SHARED.main(download, lay_out, DIGESTS, DEFAULT_OUT, __doc__)
