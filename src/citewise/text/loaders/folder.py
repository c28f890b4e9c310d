"""Walking a folder (special files, links, hidden files) and BEIR corpus files."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Iterator

from citewise.core import Document, InputError, InputWarning
from citewise.text.loaders.common import SUPPORTED_EXT, sha256_hex


class NotFollowed(InputError):
    """A path the folder walk skips on purpose (special file, dangling symlink, link out of the
    folder): reported, and a document previously indexed from it is not kept."""


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def scan_folder(root: Path, follow_links: bool = False) -> Iterator[Path | InputError]:
    """Walk ``root`` in sorted order: yield each regular file to load, or an InputError (an
    :class:`~citewise.core.InputWarning` for harmless oddities) naming each path that is skipped.

    Hidden files and folders are skipped silently. Never opens a file, so a FIFO cannot hang it.
    Skipped with a line: FIFOs, sockets and devices; dangling symlinks; symlinks (to files or
    folders) whose target is outside ``root`` unless ``follow_links``; symlinked folders unless
    ``follow_links`` (then followed once each, loops cut). A folder named like a document
    (``notes.md/``) gets a warning and is walked as a folder. A folder that cannot be listed
    (permissions) is an InputError naming it.
    """
    root = Path(root)
    if not root.is_dir():
        try:
            mode = os.stat(root).st_mode
        except OSError as e:
            yield InputError(str(root), f"cannot read file: {e.strerror or e}")
            return
        if stat.S_ISREG(mode):
            yield root
        else:
            yield NotFollowed(str(root), f"{_kind(mode)}, not a regular file; skipped")
        return
    real_root = os.path.realpath(root)
    seen_dirs = {real_root}

    def link_problem(p: Path) -> InputError | None:
        target = os.path.realpath(p)
        if not os.path.exists(target):
            try:
                os.stat(p)
            except OSError as e:
                if e.errno == errno.ELOOP:  # a -> b -> a: realpath stops, nothing is missing
                    return NotFollowed(str(p), f"symlink loop (its target {os.readlink(p)} leads back to it); skipped")
            return NotFollowed(str(p), f"dangling symlink (its target {os.readlink(p)} does not exist); skipped")
        if not follow_links and not _inside(target, real_root):
            return NotFollowed(
                str(p),
                f"symlink to {target}, outside the ingested folder; not followed (use --follow-links to ingest it)",
            )
        return None

    unreadable: list[OSError] = []  # os.walk skips a folder it cannot list unless told
    for dirpath, dirnames, filenames in os.walk(root, followlinks=follow_links, onerror=unreadable.append):
        while unreadable:
            e = unreadable.pop(0)
            yield InputError(
                str(e.filename),
                f"cannot read folder: {e.strerror or e}; its files are skipped (their indexed versions are kept)",
            )
        keep = []
        for d in sorted(dirnames):
            if d.startswith("."):
                continue
            p = Path(dirpath) / d
            if p.is_symlink():
                problem = link_problem(p)
                if problem is None and not follow_links:
                    problem = InputWarning(str(p), "symlinked folder, not followed (use --follow-links to ingest it)")
                if problem is not None:
                    yield problem
                    continue
            real = os.path.realpath(p)
            if real in seen_dirs:
                yield InputWarning(
                    str(p), f"folder already ingested as {real} (a symlink loop or a second link); skipped"
                )
                continue
            seen_dirs.add(real)
            if p.suffix.lower() in SUPPORTED_EXT:
                yield InputWarning(str(p), "a folder named like a document file; ingesting the files inside it")
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            if f.startswith("."):
                continue
            p = Path(dirpath) / f
            if p.is_symlink():
                problem = link_problem(p)
                if problem is not None:
                    yield problem
                    continue
            try:
                mode = os.stat(p).st_mode
            except OSError as e:
                yield InputError(str(p), f"cannot read file: {e.strerror or e}")
                continue
            if not stat.S_ISREG(mode):
                yield NotFollowed(str(p), f"{_kind(mode)}, not a regular file; skipped")
                continue
            yield p
    for e in unreadable:  # the root itself, or the last folder walked
        yield InputError(
            str(e.filename),
            f"cannot read folder: {e.strerror or e}; its files are skipped (their indexed versions are kept)",
        )


def iter_files(root: Path, follow_links: bool = False) -> list[Path]:
    """Regular files below ``root`` that :func:`load_folder` would load, in sorted order
    (hidden files and folders, special files and links it would skip are left out)."""
    return [p for p in scan_folder(Path(root), follow_links) if isinstance(p, Path)]


def load_beir_corpus(path: Path) -> Iterator[Document]:
    """Documents of a BEIR ``corpus.jsonl`` (``{"_id", "title", "text"}`` per line).

    The document text is the BEIR text; the title is kept separately (and prepended to the
    indexed text by the chunker's heading path, as BEIR's title+text convention does).

    Raises:
        InputError: a line that is not JSON or lacks ``_id``, naming the line.
    """
    path = Path(path)
    source = str(path)
    try:
        fh = path.open("rb")
    except OSError as e:
        raise InputError(source, f"cannot read file: {e.strerror or e}") from None
    with fh:
        for n, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise InputError(source, f"not a JSON object: {e}", n) from None
            if not isinstance(row, dict) or "_id" not in row:
                raise InputError(source, "missing '_id'", n)
            title = str(row.get("title") or "")
            text = str(row.get("text") or "")
            yield Document(
                doc_id=str(row["_id"]),
                title=title,
                text=text if text.strip() else title,
                source=f"{source}:{n}",
                format="beir",
                content_hash=sha256_hex(raw.strip()),
            )
