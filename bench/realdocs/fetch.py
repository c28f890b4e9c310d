"""Fetch the three public documentation corpora of the real-docs answer set.

The corpora come from Debian's documentation packages (the registry this project's machines
reach), pinned by version, so every machine builds the same folder:

* ``nodejs/``  -- Node.js 18 API reference, Markdown (``nodejs-doc``: ``api/*.md.gz``, gunzipped).
* ``rustc/``   -- The rustc book, an mdBook HTML site (``rust-doc``: ``html/rustc/**.html``).
* ``bash/``    -- The GNU Bash Reference Manual, PDF (``bash-doc``: ``bashref.pdf``).

Usage::

    python bench/realdocs/fetch.py [--out ~/.cache/citewise/realdocs]

Needs ``apt-get download`` (Debian/Ubuntu) and ``dpkg-deb``. Nothing is copied into the
repository; the question sets under ``bench/realdocs/`` name documents by their id in an index
built from this folder (``citewise ingest OUT --index ...``).
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: package -> pinned version (Debian 12 "bookworm").
PACKAGES = {
    "nodejs-doc": "18.20.4+dfsg-1~deb12u3",
    "rust-doc": "1.63.0+dfsg1-2",
    "bash-doc": "5.2.15-2",
}

DEFAULT_OUT = Path.home() / ".cache" / "citewise" / "realdocs"


def _run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"fetch: {' '.join(cmd)} failed: {proc.stderr.strip() or proc.stdout.strip()}")


def fetch(out: Path) -> Path:
    """Download the pinned packages and lay the three corpora out under ``out``; returns ``out``."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for pkg, version in PACKAGES.items():
            _run(["apt-get", "download", f"{pkg}={version}"], work)
        root = work / "x"
        for deb in sorted(work.glob("*.deb")):
            _run(["dpkg-deb", "-x", str(deb), str(root)], work)
        if out.exists():
            shutil.rmtree(out)
        (out / "nodejs").mkdir(parents=True)
        for gz in sorted((root / "usr/share/doc/nodejs/api").glob("*.md.gz")):
            (out / "nodejs" / gz.name[:-3]).write_bytes(gzip.decompress(gz.read_bytes()))
        src = root / "usr/share/doc/rust-doc/html/rustc"
        for html in sorted(src.rglob("*.html")):
            dest = out / "rustc" / html.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(html.resolve() if html.is_symlink() else html, dest)
        (out / "bash").mkdir()
        shutil.copyfile(root / "usr/share/doc/bash/bashref.pdf", out / "bash" / "bashref.pdf")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder to create (replaced if present)")
    args = ap.parse_args()
    out = fetch(args.out.expanduser())
    counts = {p.name: sum(1 for f in p.rglob("*") if f.is_file()) for p in sorted(out.iterdir())}
    print(f"{out}: " + ", ".join(f"{k} {v} files" for k, v in counts.items()))


if __name__ == "__main__":
    main()
