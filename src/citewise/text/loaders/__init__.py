"""Loaders: files (Markdown, HTML, plain text, reStructuredText, PDF, DOCX) and BEIR corpus JSONL
into Documents, one module per format.

Every loader either returns a Document or raises :class:`citewise.core.InputError` naming the file
(and line, where there is one): unreadable, binary, not UTF-8, empty, bad front matter. A folder
walk yields one result per file so one bad file never stops the rest.

* Markdown (:mod:`.markdown`): the source text itself, front matter (:mod:`.front_matter`) cut
  off; its structure is CommonMark's (:mod:`citewise.text.blocks`).
* HTML (:mod:`.html`): the page's main content as Markdown-like text; navigation and, within a
  folder, blocks repeated on most of its pages are dropped (:mod:`citewise.text.html`,
  :mod:`citewise.text.furniture`).
* Plain text (:mod:`.text`) and reStructuredText (:mod:`.rst`): headings from underlines,
  overlines and section numbers (docutils for ``.rst``), tables of contents dropped.
* PDF (:mod:`.pdf`, :mod:`.pdf_layout`): the text layer, running headers and footers, page
  numbers and footnote markers removed; headings from the outline or the font sizes.
* DOCX (:mod:`.docx`).

What a loader drops as navigation or furniture is told to :mod:`citewise.text.notes` (read by
``citewise inspect``). A format whose loader changed has its version mixed into the content hash
(:func:`content_hash`), so the next ingest re-reads files an older loader read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from citewise.core import Document, InputError, InputWarning
from citewise.text.loaders.common import (  # noqa: F401 - the package's public names
    DOCX_EXT,
    HTML_EXT,
    LOADER_VERSIONS,
    MARKDOWN_EXT,
    PDF_EXT,
    RST_EXT,
    SUPPORTED_EXT,
    TEXT_EXT,
    _one_line,
    content_hash,
    doc_id_for,
    read_text,
    sha256_hex,
)
from citewise.text.loaders.docx import docx_to_text, load_docx  # noqa: F401
from citewise.text.loaders.folder import NotFollowed, iter_files, load_beir_corpus, scan_folder  # noqa: F401
from citewise.text.loaders.front_matter import (  # noqa: F401
    FRONT_MATTER_KEYS,
    HISTORY_SEP,
    MAX_FRONT_MATTER_BYTES,
    MAX_GROUP_CHARS,
    MAX_ID_CHARS,
    MAX_TITLE_CHARS,
    MAX_VERSION_CHARS,
    check_front_matter_keys,
    check_unread_front_matter,
    edit_distance,
    parse_front_matter,
)
from citewise.text.loaders.html import folder_furniture, html_to_markdown, load_html  # noqa: F401
from citewise.text.loaders.markdown import load_markdown  # noqa: F401
from citewise.text.loaders.pdf import load_pdf, pdf_to_text  # noqa: F401
from citewise.text.loaders.pdf_layout import CODE_MARK, _is_mono, layout_roles  # noqa: F401
from citewise.text.loaders.rst import load_rst  # noqa: F401
from citewise.text.loaders.text import load_text  # noqa: F401


def load_file(path: Path, root: Path, repeated: frozenset[str] = frozenset()) -> Document:
    """Load one file by its extension. ``repeated``: for an HTML page, the fingerprints of blocks
    repeated across its folder (:func:`folder_furniture`).

    Raises:
        InputError: unsupported extension, or any loader error.
    """
    ext = path.suffix.lower()
    if ext in MARKDOWN_EXT:
        return load_markdown(path, root)
    if ext in HTML_EXT:
        return load_html(path, root, repeated) if repeated else load_html(path, root)
    if ext in TEXT_EXT:
        return load_text(path, root)
    if ext in RST_EXT:
        return load_rst(path, root)
    if ext in PDF_EXT:
        return load_pdf(path, root)
    if ext in DOCX_EXT:
        return load_docx(path, root)
    supported = ", ".join(sorted(SUPPORTED_EXT))
    raise InputError(str(path), f"unsupported file type '{ext or '(none)'}' (supported: {supported})")


def load_folder(root: Path, follow_links: bool = False) -> Iterator[Document | InputError]:
    """Load every file below ``root``; yields a Document or the InputError for each file.

    Before loading, the HTML pages of each folder are read once for the blocks most of them
    repeat (:func:`folder_furniture`), which their loads then drop as furniture.

    Any exception while loading one file (not only a loader's own InputError) becomes that
    file's InputError, so one bad file never stops the rest. A file of a type citewise does not
    read (an image beside the docs) is an :class:`InputWarning`, not an error: it is skipped with
    a line and does not make ``ingest`` exit 3. Paths that :func:`scan_folder`
    skips are yielded as their InputError / InputWarning.

    Raises:
        InputError: ``root`` does not exist.
    """
    root = Path(root)
    if not root.exists():
        raise InputError(str(root), "no such file or folder")
    base = root.parent if root.is_file() else root
    found = list(scan_folder(root, follow_links))
    # the ingest-time pass over each folder's HTML pages: blocks most of them repeat are furniture
    furniture = folder_furniture([p for p in found if isinstance(p, Path)])
    for path in found:
        if isinstance(path, InputError):
            yield path
            continue
        ext = path.suffix.lower()
        if ext not in SUPPORTED_EXT:  # an image or a build file beside the docs: not an error
            yield InputWarning(
                str(path),
                f"not a document type citewise reads ('{ext or '(none)'}'); skipped "
                f"(supported: {', '.join(sorted(SUPPORTED_EXT))})",
            )
            continue
        bad = next((ch for ch in str(path) if "\udc80" <= ch <= "\udcff"), None)
        if bad is not None:  # undecodable bytes in the name: no id or row could hold it
            yield InputError(str(path), f"file name is not UTF-8 (byte 0x{ord(bad) - 0xDC00:02x}); rename the file")
            continue
        try:
            yield load_file(path, base, furniture.get(path.parent, frozenset()))
        except InputError as e:
            yield e
        except RecursionError:
            yield InputError(str(path), "could not be loaded: structure nested too deeply")
        except Exception as e:  # a loader bug or library error on a hostile file: that file's error
            yield InputError(str(path), f"could not be loaded ({_one_line(e)})")
