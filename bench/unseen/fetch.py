"""Fetch the four public documentation corpora of the unseen answer set.

Every corpus comes from a Debian 12 "bookworm" package (the registry this project's machines
reach), pinned by version, so every machine builds the same folder:

* ``haproxy/``   -- HAProxy 2.6 manuals, plain text with numbered, dash-underlined headings
  (binary package ``haproxy``: ``usr/share/doc/haproxy/{configuration,management,
  proxy-protocol}.txt.gz``, gunzipped).  3 files.
* ``openresty/`` -- OpenResty's nginx module manuals, Markdown with setext headings only
  (the upstream ``README.markdown`` of five Debian *source* packages, ``libnginx-mod-http-*``;
  written as ``<module>.md``, content unchanged).  5 files.
* ``flex/``      -- "Lexical Analysis With Flex" (flex 2.6.4), Texinfo-generated HTML, one page
  per node, navigation in ``<div class="header">`` (``flex-doc``: ``usr/share/doc/flex-doc/html``).
  222 files.
* ``gmpl/``      -- "Modeling Language GNU MathProg, Language Reference for GLPK 5.0", a 74-page
  PDF (``glpk-doc``: ``usr/share/doc/glpk-doc/gmpl.pdf``).  1 file.

Usage::

    python bench/unseen/fetch.py [--out ~/.cache/citewise/unseen] [--from DIR]

Without ``--from`` it needs ``apt-get`` and ``dpkg-deb`` (Debian/Ubuntu) and the machine's
bookworm apt sources: the binary packages are fetched with ``apt-get download PKG=VERSION`` and
the upstream tarballs of the source packages with
``apt-get source --download-only --tar-only PKG=VERSION``, using a private copy of
the machine's apt sources turned into ``deb-src`` entries (nothing in ``/etc/apt`` or
``/var/lib/apt`` is changed).  If a pinned version has left the archive (a later stable update
replaced it), the current bookworm version is taken instead; either way every laid-out file is
checked against the SHA-256 digests below, so the folder is the same or the script fails.

``--from DIR`` skips the downloads: DIR must already hold the three ``.deb`` files
(``haproxy_*.deb``, ``flex-doc_*.deb``, ``glpk-doc_*.deb``) and the five upstream tarballs
(``libnginx-mod-http-lua_0.10.23.orig.tar.gz``, ``libnginx-mod-http-echo_0.63.orig.tar.gz``,
``libnginx-mod-http-headers-more-filter_0.34.orig.tar.gz``,
``libnginx-mod-http-set-misc_0.33.orig.tar.gz``, ``libnginx-mod-http-srcache-filter_0.33.orig.tar.xz``),
e.g. copied from a machine that ran the downloads.  The upstream tarballs are releases of
``openresty/lua-nginx-module`` v0.10.23, ``openresty/echo-nginx-module`` v0.63,
``openresty/headers-more-nginx-module`` v0.34, ``openresty/set-misc-nginx-module`` v0.33 and
``openresty/srcache-nginx-module`` v0.33 on GitHub; an archive of those tags saved in DIR under
the Debian file name above should give the same files (only the ``*/README.markdown`` member is
read), and the digest check tells whether it did.

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension), e.g. ``haproxy/configuration``,
``openresty/lua-nginx-module``, ``flex/Start-Conditions``, ``gmpl/gmpl``.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import hashlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

#: binary package -> pinned version (Debian 12 "bookworm").
BINARY = {
    "haproxy": "2.6.12-1+deb12u4",
    "flex-doc": "2.6.4-8.2",
    "glpk-doc": "5.0-1",
}

#: source package -> (pinned version, upstream tarball glob, document name under openresty/).
SOURCE = {
    "libnginx-mod-http-lua": ("1:0.10.23-1+deb12u1", "libnginx-mod-http-lua_0.10.23.orig.tar.*", "lua-nginx-module"),
    "libnginx-mod-http-echo": ("1:0.63-4", "libnginx-mod-http-echo_0.63.orig.tar.*", "echo-nginx-module"),
    "libnginx-mod-http-headers-more-filter": (
        "1:0.34-3",
        "libnginx-mod-http-headers-more-filter_0.34.orig.tar.*",
        "headers-more-nginx-module",
    ),
    "libnginx-mod-http-set-misc": ("0.33-3", "libnginx-mod-http-set-misc_0.33.orig.tar.*", "set-misc-nginx-module"),
    "libnginx-mod-http-srcache-filter": (
        "0.33-1",
        "libnginx-mod-http-srcache-filter_0.33.orig.tar.*",
        "srcache-nginx-module",
    ),
}

HAPROXY_DOCS = ("configuration", "management", "proxy-protocol")

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "haproxy": (3, "bd98296dba787ee5387086824d26b9f519e0ea4d257ec5a714b2634f806ad459"),
    "openresty": (5, "1798a6e46f3fa5f0d367cc5ca4c9701cf1c7dfe8dd6911273a071142abf87127"),
    "flex": (222, "71a5192cf9a5d8a85f5eee7397cffe76a00d45b3d5d6aa91f8b9706bd7d7937e"),
    "gmpl": (1, "5c7c8bbf8c35af93020f49e64e98cbdec7991deeabbd978666fb0ecca24691a2"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "unseen"


def _run(cmd: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        sys.exit(f"fetch: {' '.join(cmd)} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc


def _apt_get(args: list[str], spec: str, name: str, cwd: Path) -> None:
    """``apt-get ARGS NAME=VERSION``, or ``apt-get ARGS NAME`` when the pinned version is gone."""
    proc = _run(["apt-get", *args, spec], cwd, check=False)
    if proc.returncode != 0:
        print(
            f"fetch: {spec} not available ({proc.stderr.strip().splitlines()[-1:]}); "
            f"trying the current {name}, the digest check decides",
            file=sys.stderr,
        )
        _run(["apt-get", *args, name], cwd)


def _deb_src_config(tmp: Path) -> list[str]:
    """A private apt configuration whose sources are the machine's bookworm ``deb`` entries as
    ``deb-src``; returns the ``-o`` options that select it (after running ``apt-get update``)."""
    stanzas: list[str] = []
    files = sorted(glob.glob("/etc/apt/sources.list.d/*.sources"))
    for f in files:
        for block in re.split(r"\n\s*\n", Path(f).read_text()):
            lines = [l for l in block.splitlines() if l.strip() and not l.lstrip().startswith("#")]
            fields = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines if ":" in l}
            if "deb" in fields.get("types", "").split() and "bookworm" in fields.get("suites", ""):
                out = ["Types: deb-src" if l.lower().startswith("types:") else l for l in lines]
                stanzas.append("\n".join(out))
    one_line: list[str] = []
    for f in ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*.list"))]:
        p = Path(f)
        if not p.exists():
            continue
        for l in p.read_text().splitlines():
            if l.startswith("deb ") and " bookworm" in l:
                one_line.append("deb-src " + l[4:])
    if not stanzas and not one_line:
        sys.exit("fetch: no bookworm apt source found in /etc/apt; use --from DIR (see --help)")
    parts = tmp / "apt" / "sources.list.d"
    parts.mkdir(parents=True)
    (parts / "src.sources").write_text("\n\n".join(stanzas) + "\n")
    (tmp / "apt" / "sources.list").write_text("\n".join(one_line) + "\n")
    (tmp / "apt" / "lists" / "partial").mkdir(parents=True)
    (tmp / "apt" / "cache" / "archives" / "partial").mkdir(parents=True)
    opts = [
        "-o",
        f"Dir::Etc::SourceList={tmp / 'apt' / 'sources.list'}",
        "-o",
        f"Dir::Etc::SourceParts={parts}",
        "-o",
        f"Dir::State::Lists={tmp / 'apt' / 'lists'}",
        "-o",
        f"Dir::Cache={tmp / 'apt' / 'cache'}",
    ]
    _run(["apt-get", *opts, "update"], tmp)
    return opts


def download_packages(binary: dict[str, str], source: dict[str, str], dest: Path) -> None:
    """Download the binary packages ``binary`` (package -> version) and the upstream tarballs of
    the source packages ``source`` (package -> version) into ``dest``. Shared by the later sets'
    scripts."""
    for pkg, version in binary.items():
        _apt_get(["download"], f"{pkg}={version}", pkg, dest)
    with tempfile.TemporaryDirectory() as tmp:
        opts = _deb_src_config(Path(tmp))
        for pkg, version in source.items():
            _apt_get([*opts, "source", "--download-only", "--tar-only"], f"{pkg}={version}", pkg, dest)


def check_archives(src: Path, archives: dict[str, str]) -> None:
    """Check every ``.deb`` and upstream tarball in ``src`` named in ``archives`` (file name ->
    SHA-256) against its digest (exits on a mismatch); report the ones with another name (the
    digest check of the laid-out files then decides). Shared by the later sets' scripts."""
    for path in sorted(p for p in src.iterdir() if p.is_file() and (p.suffix == ".deb" or ".orig.tar." in p.name)):
        expected = archives.get(path.name)
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if expected is None:
            print(
                f"fetch: {path.name} is not a pinned file; the digest check of the laid-out files decides",
                file=sys.stderr,
            )
        elif got != expected:
            sys.exit(f"fetch: {path.name}: SHA-256 {got}, expected {expected}")


def extract_members(tarball: Path, members: dict[str, str], out: Path) -> None:
    """Write each tar member ``<top>/<name>`` (``name`` a key of ``members``) to ``out/<value>``;
    exits naming the missing members. Shared by the later sets' scripts."""
    with tarfile.open(tarball) as tar:
        found: dict[str, tarfile.TarInfo] = {}
        for m in tar.getmembers():
            name = m.name.split("/", 1)[1] if "/" in m.name else ""
            if m.isfile() and name in members:
                found[name] = m
        missing = sorted(set(members) - set(found))
        if missing:
            sys.exit(f"fetch: {tarball.name}: missing {', '.join(missing)}")
        for name, m in sorted(found.items()):
            dest = out / members[name]
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(tar.extractfile(m).read())


@contextmanager
def unpacked(src: Path, packages: Iterable[str]) -> Iterator[Path]:
    """The binary packages ``packages`` (their ``<name>_*.deb`` in ``src``) unpacked together into
    a temporary root folder, removed on exit. Shared by the later sets' scripts."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "x"
        for pkg in packages:
            _run(["dpkg-deb", "-x", str(_one(src, f"{pkg}_*.deb")), str(root)], src)
        yield root


def copy_pages(folder: Path, dest: Path) -> None:
    """Copy the ``*.html`` pages of ``folder`` (a symlinked page as its target) into ``dest``,
    created with its parents. Shared by the later sets' scripts."""
    dest.mkdir(parents=True, exist_ok=True)
    for html in sorted(folder.glob("*.html")):
        shutil.copyfile(html.resolve() if html.is_symlink() else html, dest / html.name)


def download(dest: Path) -> None:
    """Download the three binary packages and the five source packages into ``dest``."""
    download_packages(BINARY, {pkg: version for pkg, (version, _, _) in SOURCE.items()}, dest)


def _one(src: Path, pattern: str) -> Path:
    hits = sorted(src.glob(pattern))
    if not hits:
        sys.exit(f"fetch: no {pattern} in {src}")
    return hits[-1]


def lay_out(src: Path, out: Path) -> None:
    """Lay the four corpora out under ``out`` from the packages in ``src``."""
    if out.exists():
        shutil.rmtree(out)
    with unpacked(src, BINARY) as root:
        (out / "haproxy").mkdir(parents=True)
        for name in HAPROXY_DOCS:
            gz = root / "usr/share/doc/haproxy" / f"{name}.txt.gz"
            (out / "haproxy" / f"{name}.txt").write_bytes(gzip.decompress(gz.read_bytes()))
        copy_pages(root / "usr/share/doc/flex-doc/html", out / "flex")
        (out / "gmpl").mkdir()
        shutil.copyfile(root / "usr/share/doc/glpk-doc/gmpl.pdf", out / "gmpl" / "gmpl.pdf")
    (out / "openresty").mkdir()
    for _pkg, (_, pattern, name) in SOURCE.items():
        with tarfile.open(_one(src, pattern)) as tar:
            members = [m for m in tar.getmembers() if m.isfile() and re.fullmatch(r"[^/]+/README\.markdown", m.name)]
            if len(members) != 1:
                sys.exit(f"fetch: {pattern}: expected one */README.markdown, found {len(members)}")
            (out / "openresty" / f"{name}.md").write_bytes(tar.extractfile(members[0]).read())


def corpus_digest(folder: Path) -> tuple[int, str]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    lines = "".join(f"{p.relative_to(folder).as_posix()} {hashlib.sha256(p.read_bytes()).hexdigest()}\n" for p in files)
    return len(files), hashlib.sha256(lines.encode()).hexdigest()


def verify(out: Path, digests: dict | None = None) -> list[str]:
    """Differences of the corpora under ``out`` from ``digests`` (default: this set's)."""
    problems = []
    for corpus, expected in (DIGESTS if digests is None else digests).items():
        got = corpus_digest(out / corpus)
        if got != expected:
            problems.append(f"{corpus}: {got[0]} files, digest {got[1]}; expected {expected[0]}, {expected[1]}")
    return problems


def main(fetch=None, place=None, digests=None, default_out=DEFAULT_OUT, doc=__doc__) -> None:
    """The command line: download (``fetch(dest)``, default :func:`download`) or take ``--from``,
    lay out (``place(src, out)``, default :func:`lay_out`) and check against ``digests``
    (default :data:`DIGESTS`); another set's script passes its own."""
    fetch, place = fetch or download, place or lay_out
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--out", type=Path, default=default_out, help="folder to create (replaced if present)")
    ap.add_argument(
        "--from",
        dest="src",
        type=Path,
        help="folder already holding the .deb files and upstream tarballs (no download)",
    )
    ap.add_argument("--no-verify", action="store_true", help="skip the SHA-256 check of the laid-out files")
    args = ap.parse_args()
    out = args.out.expanduser()
    if args.src:
        place(args.src.expanduser(), out)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            fetch(Path(tmp))
            place(Path(tmp), out)
    counts = {p.name: sum(1 for f in p.rglob("*") if f.is_file()) for p in sorted(out.iterdir())}
    print(f"{out}: " + ", ".join(f"{k} {v} files" for k, v in counts.items()))
    if not args.no_verify:
        problems = verify(out, digests)
        if problems:
            sys.exit("fetch: the laid-out corpus differs from the pinned one:\n  " + "\n  ".join(problems))
        print("all four corpora match the pinned SHA-256 digests")


if __name__ == "__main__":
    main()
