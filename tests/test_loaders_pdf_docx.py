"""PDF and DOCX loaders, and one clear error line per malformed file with the rest of the folder ingested.

Test files are generated here: DOCX with python-docx, PDF written by hand (a tiny PDF 1.4 file
with Helvetica text streams, an outline and a correct xref table) — pypdf cannot lay out text.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from citewise.core import InputError
from citewise.index import Index
from citewise.text.chunker import Chunker
from citewise.text.loaders import load_docx, load_file, load_pdf, pdf_to_text

from conftest import make_pdf, write_doc


def make_docx(path: Path, version: str = "") -> Path:
    import docx

    d = docx.Document()
    d.add_paragraph("Travel policy", style="Title")
    d.add_heading("Scope", level=1)
    d.add_paragraph("Applies to all staff who travel for work.")
    d.add_heading("Limits", level=2)
    t = d.add_table(rows=2, cols=2)
    t.cell(0, 0).text, t.cell(0, 1).text = "Item", "Limit"
    t.cell(1, 0).text, t.cell(1, 1).text = "Hotel", "200 USD per night"
    d.add_paragraph("Book early", style="List Bullet")
    d.add_heading("Approvals", level=3)
    d.add_paragraph("Your manager approves trips abroad.")
    d.core_properties.version = version
    d.save(str(path))
    return path


LONG = "Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor."


def test_pdf_text_pages_and_outline_headings(tmp_path):
    pages = [
        [
            "Refund policy",
            "Customers may ask for a refund within 30 days.",
            "Exceptions",
            "Annual plans are refunded pro rata.",
        ],
        ["Second page text about invoices.", "Appendix", "Contact billing support."],
    ]
    path = tmp_path / "policy.pdf"
    path.write_bytes(
        make_pdf(
            pages,
            outline=[("Refund policy", 0, [("Exceptions", 0, [])]), ("Appendix", 1, [])],
            title="Refund policy (PDF)",
        )
    )
    doc = load_pdf(path, tmp_path)
    assert doc.doc_id == "policy" and doc.format == "pdf" and doc.title == "Refund policy (PDF)"
    page1 = "# Refund policy\nCustomers may ask for a refund within 30 days.\n## Exceptions\nAnnual plans are refunded pro rata."
    assert doc.text == page1 + "\n\nSecond page text about invoices.\n# Appendix\nContact billing support.\n"
    assert doc.pages == (0, len(page1) + 2)
    assert doc.text[doc.pages[1] :].startswith("Second page")


def test_pdf_heading_not_found_on_page_is_inserted_at_its_top():
    text, starts = pdf_to_text(["alpha\nbeta", "gamma"], [(1, 2, "Part B")])
    assert text == "alpha\nbeta\n\n## Part B\n\ngamma\n" and starts == (0, 12)


def test_pdf_chunks_report_their_page_range(tmp_path):
    pages = [[f"Section {n} line {i}. {LONG}" for i in range(40)] for n in ("one", "two", "three")]
    root = tmp_path / "docs"
    root.mkdir()
    outline = [(f"Section {n} line 0. {LONG}", p, []) for p, n in enumerate(("one", "two", "three"))]
    (root / "manual.pdf").write_bytes(make_pdf(pages, outline=outline))
    idx = Index.open(tmp_path / "index", embedder="hashing")
    report = idx.ingest(root)
    assert report.errors == [] and report.added == 1
    doc = load_pdf(root / "manual.pdf", root)
    chunks = Chunker().chunk(doc.doc_id, doc.title, doc.text)
    stored = idx.store.get_chunks([c.chunk_id for c in chunks])
    ranges = [(stored[c.chunk_id].page_start, stored[c.chunk_id].page_end) for c in chunks]
    assert len(chunks) >= 3
    # each chunk's page range is the pages its [start, end) offsets overlap
    for c, (p0, p1) in zip(chunks, ranges):
        expect0 = max(i + 1 for i, s in enumerate(doc.pages) if s <= c.start)
        expect1 = max(i + 1 for i, s in enumerate(doc.pages) if s <= c.end - 1)
        assert (p0, p1) == (expect0, expect1)
    assert ranges[0][0] == 1 and ranges[-1][1] == 3
    hit = idx.search("Section three line 7", 1, retriever="bm25")[0]
    assert idx.store.get_chunks([hit.chunk_id])[hit.chunk_id].page_end == 3


def test_docx_headings_tables_lists(tmp_path):
    doc = load_docx(make_docx(tmp_path / "travel.docx", version="2.1"), tmp_path)
    assert doc.title == "Travel policy" and doc.version == "2.1" and doc.format == "docx"
    assert doc.text == (
        "# Travel policy\n\n# Scope\n\nApplies to all staff who travel for work.\n\n## Limits\n\n"
        "| Item | Limit |\n| Hotel | 200 USD per night |\n\n- Book early\n\n### Approvals\n\n"
        "Your manager approves trips abroad.\n"
    )


def test_docx_nested_table_text_is_kept(tmp_path):
    """python-docx's cell.text reads a cell's paragraphs only: a table inside a cell was dropped
    without a word (break-it trial)."""
    import docx

    d = docx.Document()
    t = d.add_table(rows=1, cols=2)
    t.cell(0, 0).text = "outer left"
    cell = t.cell(0, 1)
    cell.text = "outer right"
    inner = cell.add_table(rows=2, cols=2)
    inner.cell(0, 0).text, inner.cell(0, 1).text, inner.cell(1, 0).text = "inner egret", "heron", "crane"
    d.save(tmp_path / "nested.docx")
    doc = load_docx(tmp_path / "nested.docx", tmp_path)
    assert doc.text == "| outer left | outer right inner egret / heron; crane |\n"


def test_bad_files_get_one_error_line_each_and_the_rest_is_ingested(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "good.md", "Good page", "Okta SCIM provisioning syncs groups.")
    make_docx(root / "travel.docx")
    (root / "chargebacks.pdf").write_bytes(make_pdf([["A readable PDF about chargebacks."]]))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("word/document.xml", "<w:document><unclosed")
    bad = {
        "truncated.pdf": make_pdf([["cut short"]])[:60],
        "fake.pdf": b"this is not a pdf at all",
        "scan.pdf": make_pdf([[]]),
        "broken.docx": b"PK\x03\x04 not really a zip",
        "badxml.docx": buf.getvalue(),
        "notzip.docx": b"plain text pretending",
        "binary.html": b"<html>\x00\x01\x02</html>",
        "latin1.txt": "caf\xe9 cr\xe8me".encode("latin-1"),
        "blob.md": bytes(range(256)),
        "frontmatter.md": b"---\ntitle: E-1004: Card declined\n---\nbody\n",
        "empty.html": b"<html><body><script>x()</script></body></html>",
    }
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")  # not a document: a warning
    for name, data in bad.items():
        (root / name).write_bytes(data)
    idx = Index.open(tmp_path / "index", embedder="hashing")
    report = idx.ingest(root)
    assert report.added == 3
    assert sorted(idx.store.documents()) == ["chargebacks", "good", "travel"]
    assert len(report.errors) == len(bad)
    msg = {}
    for name in bad:
        lines = [e for e in report.errors if f"/{name}" in e]
        assert len(lines) == 1, (name, report.errors)
        assert "\n" not in lines[0] and "Traceback" not in lines[0]
        msg[name] = lines[0]
    assert "not a readable PDF" in msg["truncated.pdf"]
    assert "not a PDF file" in msg["fake.pdf"]
    assert "no text layer" in msg["scan.pdf"]
    assert "not a readable DOCX" in msg["broken.docx"] and "not a readable DOCX" in msg["badxml.docx"]
    assert "not a DOCX file" in msg["notzip.docx"]
    assert "binary file" in msg["binary.html"] and "binary file" in msg["blob.md"]
    assert "latin1.txt:1: not UTF-8 text (byte 0xe9 at offset 3)" in msg["latin1.txt"]
    assert "frontmatter.md:2: bad front matter" in msg["frontmatter.md"]
    assert "no text content" in msg["empty.html"]
    assert [w for w in report.warnings if "/image.png" in w] == [
        f"{root / 'image.png'}: not a document type citewise reads ('.png'); skipped "
        "(supported: .docx, .htm, .html, .markdown, .md, .pdf, .rst, .text, .txt)"
    ]


def test_pdf_and_docx_with_one_stem_collide_and_one_is_reported(tmp_path):
    root = tmp_path / "d"
    root.mkdir()
    make_docx(root / "x.docx")
    (root / "x.pdf").write_bytes(make_pdf([["PDF twin"]]))
    report = Index.open(tmp_path / "i", embedder="hashing").ingest(root)
    assert report.added == 1 and len(report.errors) == 1 and "duplicate document id 'x'" in report.errors[0]


def test_load_file_dispatches_pdf_and_docx(tmp_path):
    p = tmp_path / "a.PDF"
    p.write_bytes(make_pdf([["upper-case extension"]]))
    assert load_file(p, tmp_path).format == "pdf"
    (tmp_path / "e.docx").write_bytes(b"")
    with pytest.raises(InputError, match="empty file"):
        load_file(tmp_path / "e.docx", tmp_path)
