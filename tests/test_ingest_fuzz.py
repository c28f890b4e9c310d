"""Fuzz-style folder: ≥ 40 kinds of malformed input beside good files, ingested in one run.

Every good file must be indexed; every bad one must get exactly one line (error or warning)
naming it, and no line may name a good file. Hashing embedder; runs in a few seconds.
Unreadable files (chmod 000) are left out: the suite runs as root, which reads them anyway.
"""

from __future__ import annotations

import io
import os
import random
from pathlib import Path

from citewise.index import Index

from conftest import make_pdf

BODY = "# Heading\n\nA paragraph about refunds and invoices.\n"


def _fm(front: str, body: str = BODY) -> bytes:
    return f"---\n{front}\n---\n{body}".encode()


def _docx(paragraphs: list[str]) -> bytes:
    import docx

    d = docx.Document()
    for p in paragraphs:
        d.add_paragraph(p)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


ALIAS_BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
    + ["version: *i"]
)

#: name -> bytes of files that must load.
GOOD = {
    "good-plain.md": BODY.encode(),
    "good-front.md": _fm('title: "Good front"\nversion: 2\nupdated: 2026-03-01\npermissions: [finance]'),
    "good-crlf.md": b"---\r\ntitle: CRLF\r\n---\r\n# CRLF\r\n\r\nWindows line ends.\r\n",
    "good-text.txt": b"Plain text title\n\nPlain text body about refunds.\n",
    "good-page.html": b"<html><head><title>Page</title></head><body><h1>Page</h1><p>HTML body text.</p></body></html>",
    "good-utf16.md": b"\xff\xfe" + "# UTF-16\n\nDecoded from UTF-16 with a BOM.\n".encode("utf-16-le"),
    "good-utf16be.txt": b"\xfe\xff" + "UTF-16 BE\n\nBig endian text.\n".encode("utf-16-be"),
    "good-bom.md": b"\xef\xbb\xbf# BOM\n\nUTF-8 with a byte order mark.\n",
    "good-doc.pdf": make_pdf([["Good PDF", "A PDF page about invoices."]]),
    "good-word.docx": _docx(["Good DOCX", "A Word paragraph about refunds."]),
    "good-date-time.md": _fm("updated: 2026-03-01T10:00:00Z"),
    "sub/good-nested.md": _fm("id: nested-doc\npermissions: finance, hr"),
}

#: name -> bytes of files that must be refused (one error line each).
BAD = {
    "bad-date.md": _fm("updated: 2026-02-30"),
    "bad-effective.md": _fm("effective: 2026-13-01"),
    "bad-date-type.md": _fm("updated: 20260101"),
    "bad-date-list.md": _fm("updated: [2026-01-01]"),
    "alias-bomb.md": _fm(ALIAS_BOMB),
    "simple-alias.md": _fm("a: &x finance\npermissions: [*x]"),
    "misspelled-Permissions.md": _fm("Permissions: [finance]"),
    "misspelled-permission.md": _fm("permission: [finance]"),
    "misspelled-permisions.md": _fm("permisions: [finance]"),
    "blank-group.md": _fm("permissions: [' ']"),
    "blank-group-mixed.md": _fm("permissions: [finance, '']"),
    "blank-permissions.md": _fm("permissions: '   '"),
    "permissions-int.md": _fm("permissions: [1, 2]"),
    "permissions-map.md": _fm("permissions: {finance: true}"),
    "not-utf8.md": "Caf\xe9 au lait\n".encode("latin-1"),
    "binary.txt": bytes(random.Random(7).randrange(256) for _ in range(2048)) + b"\x00",
    "empty.md": b"",
    "whitespace.txt": b"   \n\t\n",
    "nul-bytes.md": b"# Title\n\nText with a \x00 NUL byte.\n",
    "bad-utf16.md": b"\xff\xfe" + "ok".encode("utf-16-le") + b"\x00",
    "truncated.pdf": make_pdf([["Cut short"]])[:120],
    "not-really.pdf": b"just text pretending to be a PDF\n",
    "truncated.docx": _docx(["Cut short"])[:300],
    "not-really.docx": b"PK\x03\x04 not a zip at all",
    "bad-yaml.md": _fm("title: [unclosed"),
    "bad-yaml-colon.md": _fm("title: E-1004: Card declined"),
    "bad-yaml-tab.md": _fm("title: x\n\tversion: 2"),
    "unterminated.md": b"---\ntitle: never closed\n# Heading\n\nBody.\n",
    "front-matter-list.md": _fm("- a\n- b"),
    "only-front-matter.md": b"---\ntitle: Nothing else\n---\n",
    "huge-title.md": _fm("title: " + "T" * 10_000),
    "title-dict.md": _fm("title: {a: 1}"),
    "title-multiline.md": _fm("title: |\n  one\n  two"),
    "id-list.md": _fm("id: [a, b]"),
    "id-blank.md": _fm("id: '  '"),
    "id-history.md": _fm("id: pay@1"),
    "version-list.md": _fm("version: [1, 2]"),
    "version-bool.md": _fm("version: yes"),
    "version-huge.md": _fm("version: " + "9" * 200),
    "deep-nesting.md": _fm("x: " + "[" * 5000 + "]" * 5000),
    "huge-front-matter.md": _fm("title: x\n" + "# padding\n" * 8000),
    "explicit-timestamp.md": _fm("updated: !!timestamp 2026-02-30"),
    "dup-b.md": _fm("id: dup\nversion: 1"),  # same id and version as dup-a.md (good): the second is refused
    "empty.html": b"<html><head><script>var x;</script></head><body></body></html>",
    "named@1.md": b"# At\n\nA file whose name looks like a history id.\n",
}
GOOD["dup-a.md"] = _fm("id: dup\nversion: 1")

#: warnings: the file (or folder) is still used, or it is not a document type citewise reads
#: (skipped, never an error: an image beside the docs must not fail an ingest), with one line.
# (a front matter key is metadata; one that cannot be filtered on, with a space, is kept with a warning)
WARN = {
    "unknown-key.md": _fm("title: Unknown\nteam lead: Ana"),
    "unsupported.xyz": b"some data",
    "README": b"no extension",
}


def build(root: Path, outside: Path) -> tuple[list[Path], list[Path], list[Path]]:
    good, bad, warn = [], [], []
    for table, acc in ((GOOD, good), (BAD, bad), (WARN, warn)):
        for name, data in table.items():
            p = root / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
            acc.append(p)
    # special files and links
    os.mkfifo(root / "fifo.md")
    bad.append(root / "fifo.md")
    (root / "dangling.md").symlink_to(outside / "no-such-target.md")
    bad.append(root / "dangling.md")
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.md").write_bytes(BODY.encode())
    (root / "link-out.md").symlink_to(outside / "secret.md")
    bad.append(root / "link-out.md")
    (root / "dirlink-out").symlink_to(outside, target_is_directory=True)
    bad.append(root / "dirlink-out")
    (root / "link-in.md").symlink_to(root / "good-plain.md")  # inside the folder: fine
    good.append(root / "link-in.md")
    (root / "folder.md").mkdir()
    (root / "folder.md" / "inside.md").write_bytes(BODY.encode())
    warn.append(root / "folder.md")
    good.append(root / "folder.md" / "inside.md")
    (root / ".hidden.md").write_bytes(b"\x00")  # hidden: skipped silently, by design
    return good, bad, warn


def test_fuzz_folder_every_good_file_in_every_bad_file_one_line(tmp_path):
    root, outside = tmp_path / "docs", tmp_path / "outside"
    root.mkdir()
    good, bad, warn = build(root, outside)
    assert len(bad) + len(warn) >= 40
    idx = Index.open(tmp_path / "index", embedder="hashing")
    report = idx.ingest(root)
    lines = report.errors + report.warnings

    def naming(p: Path) -> list[str]:
        # a line names a path when it starts with it followed by ':' (path, or path:line)
        return [ln for ln in lines if ln.startswith(f"{p}:")]

    for p in bad:
        assert len(naming(p)) == 1, (p.name, naming(p))
        assert naming(p)[0] in report.errors, p.name
    for p in warn:
        assert len(naming(p)) == 1 and naming(p)[0] in report.warnings, (p.name, naming(p))
    for p in good:
        assert naming(p) == [], (p.name, naming(p))
    assert len(lines) == len(bad) + len(warn), [
        ln for ln in lines if not any(ln.startswith(f"{p}:") for p in bad + warn)
    ]
    assert all("Traceback" not in ln and len(ln) < 400 for ln in lines)
    sources = {e.source for e in idx.store.documents().values()}
    for p in good + [root / "unknown-key.md"]:
        assert str(p) in sources, p.name
    assert not any(s.startswith(str(outside)) or "secret" in s for s in sources)
    # a second run changes nothing and reports the same lines
    again = idx.ingest(root)
    assert again.added == again.updated == again.deleted == 0
    assert sorted(again.errors) == sorted(report.errors)
