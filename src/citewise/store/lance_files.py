"""The files of a Lance table folder, read without the ``lance`` package: which versions exist,
which data, deletion and index files each version needs, and whether those files are whole.

Used by ``citewise index check`` / ``repair`` (:mod:`citewise.store.lance_check`) to name the
damaged file when LanceDB itself only says "failed to fill whole buffer".

Format (Lance table format, ``protos/table.proto`` and ``protos/transaction.proto`` of the lance
repository; file layout of ``lance-table``'s manifest writer):

* ``_versions/<n>.manifest``: version ``u64::MAX - n`` (the "v2" naming LanceDB uses) or ``n``
  (the older naming). The file ends with a 16-byte footer: the manifest's offset (u64, little
  endian), the format's major and minor version (u16 each) and the magic ``LANC``; at that
  offset a u32 length and the ``Manifest`` protobuf message. Every Lance data and index file
  (``*.lance``) ends with the same magic.
* ``Manifest``: field 2 repeated ``DataFragment``, 3 ``version``, 6 ``index_section`` (offset in
  the same file of a u32 length and an ``IndexSection``: field 1 repeated ``IndexMetadata``),
  7 ``timestamp`` (``google.protobuf.Timestamp``: 1 seconds, 2 nanos), 12 ``transaction_file``.
* ``DataFragment``: 1 ``id``, 2 repeated ``DataFile`` (1 ``path`` under ``data/``, 6
  ``file_size_bytes``), 3 ``DeletionFile`` (1 type: 0 Arrow ``.arrow``, 1 bitmap ``.bin``;
  2 ``read_version``; 3 ``id``: the file is ``_deletions/<fragment>-<read_version>-<id>.<ext>``),
  4 ``physical_rows``.
* ``IndexMetadata``: 1 ``uuid`` (a message whose field 1 holds 16 bytes; the index files are in
  ``_indices/<uuid>/``), 2 repeated field ids, 3 ``name``.
* ``_transactions/<file>.txn``: a ``Transaction`` whose operation is the field numbered 100 and
  up: 100 Append, 101 Delete, 102 Overwrite, 103 CreateIndex, 104 Rewrite (compaction), 105
  Merge, 106 Restore, 107 ReserveFragments, 108 Update, 109 Project, 110 UpdateConfig, 111
  DataReplacement. Only Rewrite, CreateIndex, ReserveFragments, Project and UpdateConfig leave
  every row's content as it was.
"""

from __future__ import annotations

import datetime as dt
import struct
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAGIC = b"LANC"
FOOTER = 16
#: Transaction operations (field numbers) that change no row's content (module docstring).
CONTENT_KEEPING_OPS = {103: "create index", 104: "compaction", 107: "reserve fragments", 109: "project", 110: "config"}
#: Names of the transaction operations, looked up with :func:`operation`'s result (None: unknown).
OP_NAMES: dict[int | None, str] = {
    100: "append",
    101: "delete",
    102: "overwrite",
    103: "create index",
    104: "compaction",
    105: "merge",
    106: "restore",
    107: "reserve fragments",
    108: "update",
    109: "project",
    110: "config",
    111: "data replacement",
}


class FormatError(ValueError):
    """A file is not a whole Lance file of the expected kind (truncated, or not Lance)."""


def _varint(b: bytes, i: int) -> tuple[int, int]:
    r = s = 0
    while True:
        if i >= len(b):
            raise FormatError("protobuf varint runs past the end")
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i
        if s > 70:
            raise FormatError("protobuf varint too long")


#: A decoded protobuf field value: int (varint) or bytes (length-delimited, fixed 64/32-bit);
#: which one a field holds is known only from the message's schema, so readers take it as Any.
ProtoValue = Any


def fields(b: bytes) -> list[tuple[int, ProtoValue]]:
    """The ``(field number, value)`` pairs of a protobuf message (wire format: varints as int,
    length-delimited values as bytes, fixed 64/32-bit values as bytes).

    >>> fields(bytes([0x08, 0x96, 0x01, 0x12, 0x02, 0x68, 0x69]))
    [(1, 150), (2, b'hi')]

    Raises:
        FormatError: not a well-formed message.
    """
    i = 0
    out: list[tuple[int, ProtoValue]] = []
    while i < len(b):
        key, i = _varint(b, i)
        num, wire = key >> 3, key & 7
        v: ProtoValue
        if wire == 0:
            v, i = _varint(b, i)
        elif wire == 2:
            n, i = _varint(b, i)
            if i + n > len(b):
                raise FormatError("protobuf field runs past the end")
            v, i = b[i : i + n], i + n
        elif wire == 1:
            v, i = b[i : i + 8], i + 8
        elif wire == 5:
            v, i = b[i : i + 4], i + 4
        else:
            raise FormatError(f"protobuf wire type {wire}")
        if num == 0 or i > len(b):
            raise FormatError("protobuf field runs past the end")
        out.append((num, v))
    return out


def _first(fs: list[tuple[int, ProtoValue]], num: int, default: ProtoValue = None) -> ProtoValue:
    return next((v for n, v in fs if n == num), default)


def has_magic(path: Path) -> bool:
    """Whether ``path`` ends with the Lance magic (a whole Lance file; a truncated one does not)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            if fh.tell() < len(MAGIC):
                return False
            fh.seek(-len(MAGIC), 2)
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def _message_at(data: bytes, offset: int) -> bytes:
    if offset + 4 > len(data):
        raise FormatError("message offset past the end")
    (n,) = struct.unpack_from("<I", data, offset)
    if offset + 4 + n > len(data):
        raise FormatError("message runs past the end")
    return data[offset + 4 : offset + 4 + n]


@dataclass(frozen=True)
class DataFile:
    """A data or deletion file a version needs: its path and recorded size (0 = not recorded)."""

    path: Path
    size: int
    fragment: int
    kind: str  # "data" | "deletions"


@dataclass
class Manifest:
    """What one version of a table needs (see module docstring)."""

    path: Path
    version: int
    timestamp: dt.datetime | None
    files: list[DataFile] = field(default_factory=list)
    fragments: dict[int, int] = field(default_factory=dict)  # id -> physical rows
    indexes: dict[str, str] = field(default_factory=dict)  # uuid -> index name
    transaction: str = ""


def version_of(manifest: Path) -> int:
    """The version a ``_versions/<n>.manifest`` file holds (v2 naming or the older one)."""
    n = int(manifest.stem)
    return (2**64 - 1 - n) if n >= 2**63 else n


def manifests(table: Path) -> dict[int, Path]:
    """Every manifest file of the table folder by version (missing folder: empty)."""
    out = {}
    for p in sorted((table / "_versions").glob("*.manifest")):
        try:
            out[version_of(p)] = p
        except ValueError:
            continue
    return out


def read_manifest(path: Path) -> Manifest:
    """Parse one manifest file.

    Raises:
        FormatError: truncated, no Lance footer, or an unreadable protobuf message.
        OSError: it cannot be read.
    """
    data = path.read_bytes()
    if len(data) < FOOTER or data[-4:] != MAGIC:
        raise FormatError("no Lance footer (the file is truncated or not a manifest)")
    (offset,) = struct.unpack_from("<Q", data, len(data) - FOOTER)
    fs = fields(_message_at(data, offset))
    table = path.parent.parent
    ts = _first(fs, 7)
    when = None
    if isinstance(ts, bytes):
        t = fields(ts)
        when = dt.datetime.fromtimestamp(_first(t, 1, 0) + _first(t, 2, 0) / 1e9, dt.timezone.utc)
    m = Manifest(path, int(_first(fs, 3, 0)), when, transaction=(_first(fs, 12, b"") or b"").decode("utf-8", "replace"))
    for num, frag in fs:
        if num != 2:
            continue
        ff = fields(frag)
        fid = int(_first(ff, 1, 0))
        m.fragments[fid] = int(_first(ff, 4, 0))
        for n, f in ff:
            if n == 2:
                df = fields(f)
                m.files.append(
                    DataFile(table / "data" / _first(df, 1, b"").decode(), int(_first(df, 6, 0)), fid, "data")
                )
            elif n == 3:
                d = fields(f)
                ext = "bin" if _first(d, 1, 0) == 1 else "arrow"
                name = f"{fid}-{_first(d, 2, 0)}-{_first(d, 3, 0)}.{ext}"
                m.files.append(DataFile(table / "_deletions" / name, 0, fid, "deletions"))
    section = _first(fs, 6)
    if section is not None:
        for num, meta in fields(_message_at(data, int(section))):
            if num != 1:
                continue
            im = fields(meta)
            raw = _first(fields(_first(im, 1, b"")), 1, b"")
            name = (_first(im, 3, b"") or b"").decode("utf-8", "replace")
            if len(raw) == 16:
                m.indexes[str(uuid.UUID(bytes=raw))] = name
    return m


def damaged_files(m: Manifest) -> list[tuple[Path, str]]:
    """The files version ``m`` needs that are missing or not whole: ``(path, what is wrong)``.

    A data file is whole when its size is the size the manifest recorded (or, unrecorded, when
    it ends with the Lance magic); a deletion file when it exists; an index when its folder
    exists and each of its ``.lance`` files ends with the magic.
    """
    out = []
    for f in m.files:
        try:
            size = f.path.stat().st_size
        except OSError:
            out.append((f.path, f"missing ({f.kind} file of fragment {f.fragment})"))
            continue
        if f.kind == "data" and f.size and size != f.size:
            out.append((f.path, f"{size:,} bytes, the manifest recorded {f.size:,} (truncated or overwritten)"))
        elif f.kind == "data" and not f.size and not has_magic(f.path):
            out.append((f.path, "no Lance footer (truncated)"))
    for uid, name in sorted(m.indexes.items()):
        folder = m.path.parent.parent / "_indices" / uid
        if not folder.is_dir():
            out.append((folder, f"missing (index {name})"))
            continue
        for p in sorted(folder.iterdir()):
            if p.suffix == ".lance" and not has_magic(p):
                out.append((p, f"no Lance footer (index {name}, truncated)"))
    return out


def operation(table: Path, m: Manifest) -> int | None:
    """The field number of the operation that made version ``m`` (:data:`OP_NAMES`), or None when
    its transaction file is absent or unreadable."""
    if not m.transaction:
        return None
    try:
        fs = fields((table / "_transactions" / m.transaction).read_bytes())
    except (OSError, FormatError):
        return None
    return next((n for n, _ in fs if n >= 100), None)


def operation_of_version(table: Path, version: int) -> int | None:
    """The operation that made ``version`` when its manifest cannot be read: the transaction
    files are named ``<read version>-<uuid>.txn``, so the one transaction read at ``version - 1``
    made it (None when there is not exactly one, or it cannot be read)."""
    found = sorted((table / "_transactions").glob(f"{version - 1}-*.txn"))
    if len(found) != 1:
        return None
    try:
        fs = fields(found[0].read_bytes())
    except (OSError, FormatError):
        return None
    return next((n for n, _ in fs if n >= 100), None)
