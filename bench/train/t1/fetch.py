"""Fetch the two public documentation corpora of the training question set ``t1``.

Both come from the upstream tarballs of Debian 12 "bookworm" *source* packages (the registry
this project's machines reach), pinned by version, so every machine builds the same folders:

* ``libpng/`` -- the libpng 1.6.39 manual, "libpng-manual.txt - A description on how to use
  and modify libpng": one plain-text file of 5,409 lines (roman-numeral sections ``I.``,
  ``II.`` ... with no underlines, indented C code, ``PNG_TRANSFORM_*`` flag lists).  From
  ``libpng1.6_1.6.39.orig.tar.gz`` (source package ``libpng1.6``), laid out as
  ``libpng/libpng-manual.txt``, content unchanged.  1 file.
* ``pcre2/``  -- the PCRE2 10.42 HTML documentation (man pages turned into HTML by PCRE2's
  ``132html`` script: ``<h2>``/``<br><a name=...><b>`` headings, ``<pre>`` blocks, ``<P>``
  paragraphs): the ``doc/html/*.html`` pages of ``pcre2_10.42.orig.tar.gz`` (source package
  ``pcre2``) except ``index.html`` (only a list of links), laid out as ``pcre2/<name>.html``,
  content unchanged.  94 files.

Usage::

    python3 bench/train/t1/fetch.py [--out ~/.cache/citewise/train] [--from DIR] [--force]

The output folder is shared by all training sets: only ``OUT/libpng`` and ``OUT/pcre2`` are
(re)written, nothing else under OUT is touched.  If both already match the pinned SHA-256
digests below, the script does nothing (running it twice is a no-op); ``--force`` lays them
out again anyway.

Without ``--from`` it downloads the two upstream tarballs as ``bench/unseen/fetch.py`` does
(``apt-get source --download-only --tar-only PKG=VERSION`` with a private ``deb-src`` copy of
the machine's bookworm apt sources; nothing under ``/etc/apt`` changes; if a pinned version
has left the archive the current bookworm one is taken).  The tarballs themselves are checked
against the SHA-256 digests below, and so is every laid-out file.

``--from DIR`` skips the download: DIR must hold ``libpng1.6_1.6.39.orig.tar.gz`` and
``pcre2_10.42.orig.tar.gz`` (the upstream releases libpng 1.6.39 and PCRE2 10.42).

Nothing is copied into the repository; the question set names documents by their id (path
relative to the output folder, without extension): ``libpng/libpng-manual``,
``pcre2/pcre2api``, ``pcre2/pcre2pattern``, ``pcre2/pcre2_set_match_limit``, ...
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

#: source package -> (pinned version, upstream tarball name, its SHA-256).
SOURCE = {
    "libpng1.6": (
        "1.6.39-2+deb12u5",
        "libpng1.6_1.6.39.orig.tar.gz",
        "a00e9d2f2f664186e4202db9299397f851aea71b36a35e74910b8820e380d441",
    ),
    "pcre2": (
        "10.42-1",
        "pcre2_10.42.orig.tar.gz",
        "c33b418e3b936ee3153de2c61cc638e7e4fe3156022a5c77d0711bcbb9d64f1f",
    ),
}

#: corpus -> (number of files, SHA-256 over the sorted "relpath sha256\n" lines of its files).
DIGESTS = {
    "libpng": (1, "24b94b61dba6ea408390566b1cd9d822eb7a26d84b34bfc4c737a091ca988676"),
    "pcre2": (94, "653bc8c7d49d00ba03969071d20e65a4de18132ee45b8fdde127d6f0c17e6dfa"),
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "train"


def _first_set():
    """``bench/unseen/fetch.py``, whose apt helpers this script shares."""
    spec = importlib.util.spec_from_file_location(
        "unseen_fetch", Path(__file__).resolve().parents[2] / "unseen" / "fetch.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def corpus_digest(folder: Path) -> tuple[int, str]:
    if not folder.is_dir():
        return 0, ""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    lines = "".join(f"{p.relative_to(folder).as_posix()} {hashlib.sha256(p.read_bytes()).hexdigest()}\n" for p in files)
    return len(files), hashlib.sha256(lines.encode()).hexdigest()


def problems(out: Path) -> list[str]:
    found = []
    for corpus, expected in DIGESTS.items():
        got = corpus_digest(out / corpus)
        if got != expected:
            found.append(f"{corpus}: {got[0]} files, digest {got[1]}; expected {expected[0]}, {expected[1]}")
    return found


def download(dest: Path) -> None:
    _first_set().download_packages({}, {pkg: version for pkg, (version, _, _) in SOURCE.items()}, dest)


def _tarball(src: Path, pkg: str) -> Path:
    _, name, sha = SOURCE[pkg]
    path = src / name
    if not path.is_file():
        sys.exit(f"fetch: no {name} in {src}")
    got = hashlib.sha256(path.read_bytes()).hexdigest()
    if got != sha:
        sys.exit(f"fetch: {name}: SHA-256 {got}, expected {sha}")
    return path


def lay_out(src: Path, out: Path) -> None:
    """Write ``out/libpng`` and ``out/pcre2`` (replacing only those two folders)."""
    for corpus in DIGESTS:
        if (out / corpus).exists():
            shutil.rmtree(out / corpus)
    (out / "libpng").mkdir(parents=True)
    (out / "pcre2").mkdir(parents=True)
    with tarfile.open(_tarball(src, "libpng1.6")) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.split("/", 1)[-1] == "libpng-manual.txt"]
        if len(members) != 1:
            sys.exit("fetch: libpng tarball: expected one */libpng-manual.txt")
        (out / "libpng" / "libpng-manual.txt").write_bytes(tar.extractfile(members[0]).read())
    with tarfile.open(_tarball(src, "pcre2")) as tar:
        for m in tar.getmembers():
            parts = m.name.split("/")
            if m.isfile() and len(parts) == 4 and parts[1:3] == ["doc", "html"] and parts[3].endswith(".html"):
                if parts[3] != "index.html":
                    (out / "pcre2" / parts[3]).write_bytes(tar.extractfile(m).read())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the shared training root (default %(default)s)")
    ap.add_argument("--from", dest="src", type=Path, help="folder already holding the two upstream tarballs")
    ap.add_argument("--force", action="store_true", help="lay the corpora out again even if they match")
    args = ap.parse_args()
    out = args.out.expanduser()
    if not args.force and not problems(out):
        print(f"{out}: libpng and pcre2 already match the pinned SHA-256 digests; nothing to do")
        return
    if args.src:
        lay_out(args.src.expanduser(), out)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            download(Path(tmp))
            lay_out(Path(tmp), out)
    found = problems(out)
    if found:
        sys.exit("fetch: the laid-out corpus differs from the pinned one:\n  " + "\n  ".join(found))
    print(f"{out}: libpng 1 file, pcre2 94 files; both match the pinned SHA-256 digests")


if __name__ == "__main__":
    main()
