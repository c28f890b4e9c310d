"""HTML main-content extraction: this checkout's loader beside trafilatura, on one folder of pages.

For each extractor the pages are converted to Markdown-like text, chunked by this checkout's
chunker, and measured as ``measure.py`` does (share of chunks holding navigation or furniture,
found by its own line rules), with the words, headings, pipe-table rows and code blocks kept.

Usage::

    PYTHONPATH=src python bench/structure/html_peers.py HTML_FOLDER [--json]

trafilatura is the ``bench`` extra (``pip install -e '.[bench]'``); it runs with Markdown output,
tables, formatting and ``favor_recall``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).parent))
from measure import figures  # noqa: E402


def _count(texts: list[str]) -> dict:
    joined = "\n".join(texts)
    return {
        "words": len(joined.split()),
        "headings": len(re.findall(r"^#{1,6} ", joined, re.M)),
        "table_rows": len(re.findall(r"^\|.*\|\s*$", joined, re.M)),
        "code_blocks": joined.count("\n```") // 2,
    }


def run(folder: Path) -> dict:
    from citewise.text.chunker import Chunker
    from citewise.text.loaders import load_folder

    pages = sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".html", ".htm"))
    docs = {"citewise": [d for d in load_folder(folder) if hasattr(d, "text")]}
    try:
        import trafilatura

        got = []
        for p in pages:
            text = (
                trafilatura.extract(
                    p.read_text(errors="replace"),
                    output_format="markdown",
                    include_tables=True,
                    include_formatting=True,
                    favor_recall=True,
                )
                or ""
            )
            got.append(SimpleNamespace(doc_id=p.stem, title=p.stem, text=text, format="html", pages=()))
        docs["trafilatura"] = got
    except ImportError:
        pass
    out = {}
    for name, ds in docs.items():
        per_doc = [(d, Chunker().chunk(d.doc_id, d.title, d.text)) for d in ds if d.text.strip()]
        fig = figures(per_doc).get("html", {})
        out[name] = {
            **_count([d.text for d in ds]),
            "documents": fig.get("documents", 0),
            "chunks": fig.get("chunks", 0),
            "with_furniture": fig.get("with_furniture", 0.0),
            "chunks_by_kind": fig.get("chunks_by_kind", {}),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    res = run(args.folder)
    if args.json:
        print(json.dumps(res, indent=1))
        return
    print(
        f"{'extractor':<12} {'docs':>5} {'chunks':>6} {'furniture':>9} {'words':>8} {'heads':>6} {'rows':>6} {'code':>5}"
    )
    for name, r in res.items():
        print(
            f"{name:<12} {r['documents']:>5} {r['chunks']:>6} {r['with_furniture']:>9.1%} {r['words']:>8} "
            f"{r['headings']:>6} {r['table_rows']:>6} {r['code_blocks']:>5}"
        )


if __name__ == "__main__":
    main()
