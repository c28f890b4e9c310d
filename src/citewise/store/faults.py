"""Store faults a user can act on: a full disk, and a store whose files are damaged.

A storage engine reports both as its own errors (LanceDB: ``RuntimeError: lance error:
LanceError(IO): No space left on device (os error 28), /root/.cargo/.../writer/structural.rs``,
or ``... failed to fill whole buffer`` for a truncated data file); the user saw that line, with
no file named and no way out (break-it trial). :func:`translate` turns them into

* :class:`DiskFull` — "no space left on device while writing INDEX; every document is at its old
  or new version; free space and re-run" (a store commit is atomic, so a failed write leaves
  every document as the last commit left it); ``citewise`` exits :data:`EXIT_DISK_FULL`;
* :class:`StoreDamaged` — "INDEX: the store cannot be read (CAUSE); run 'citewise index check
  --index INDEX' to name the damaged file, then 'citewise index repair --index INDEX'";
  ``citewise`` exits :data:`EXIT_DAMAGED`.

Any other error is left as it is.
"""

from __future__ import annotations

import errno
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Concatenate, Iterator, ParamSpec, TypeVar

from citewise.core import CitewiseError

#: ``citewise`` exit status when a write ran out of disk space.
EXIT_DISK_FULL = 4
#: ``citewise`` exit status when the store's files cannot be read (``citewise index check`` also
#: exits with it when it finds damage, and ``repair`` when damage is left).
EXIT_DAMAGED = 5

_NO_SPACE = re.compile(r"no space left on device|os error 28|disk quota exceeded|os error 122", re.I)
#: LanceDB / Lance messages of a file that is short, missing or malformed (as met in tests of
#: truncated data, index and manifest files: tests/test_index_repair.py).
_DAMAGE = re.compile(
    r"LanceError\(IO\)|file size is too small|failed to fill whole buffer|Invalid range|"
    r"Not found: .*\.lance|corrupt|unexpected end of file|invalid protobuf|"
    r"Invalid (?:user )?input.*(?:manifest|footer)",
    re.I,
)


#: SQLSTATEs of a full disk (``disk_full``) and of damaged pages (``data_corrupted``,
#: ``index_corrupted``): PostgreSQL, Appendix A "Error Codes".
PG_DISK_FULL = {"53100"}
PG_DAMAGED = {"XX001", "XX002"}
#: SQLSTATE of a write refused by a hot standby (``read_only_sql_transaction``).
PG_READ_ONLY = "25006"


class DiskFull(CitewiseError):
    """A write to the store ran out of disk space (see module docstring)."""

    exit_status = EXIT_DISK_FULL


class StoreDamaged(CitewiseError):
    """The store's files cannot be read (see module docstring)."""

    exit_status = EXIT_DAMAGED


class StoreReadOnly(CitewiseError):
    """A write reached a store that only serves reads (a PostgreSQL hot standby)."""


def one_line(e: BaseException) -> str:
    """The first line of an engine's message, without the Rust source location it ends with.

    >>> one_line(RuntimeError("lance error: LanceError(IO): failed to fill whole buffer, /rustc/x/function.rs:250:5"))
    'lance error: LanceError(IO): failed to fill whole buffer'
    """
    text = " ".join(str(e).split()) or type(e).__name__
    return re.sub(r",\s*/\S+\.rs:\d+:\d+.*$", "", text)


def disk_full_message(index: Path | str) -> str:
    return (
        f"no space left on device while writing {index}; every document is at its old or new version; "
        "free space and re-run"
    )


def damaged_message(index: Path | str, cause: str) -> str:
    return (
        f"{index}: the store cannot be read ({cause}); run 'citewise index check --index {index}' to name "
        f"the damaged file, then 'citewise index repair --index {index}'"
    )


def is_disk_full(e: BaseException) -> bool:
    """Whether ``e`` (or an error it was raised from) says the disk or quota is full."""
    cause: BaseException | None = e
    while cause is not None:
        if isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if _NO_SPACE.search(str(cause)):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def translate(e: BaseException, index: Path | str) -> CitewiseError | None:
    """:class:`DiskFull` or :class:`StoreDamaged` for an engine error, None for anything else
    (including a :class:`CitewiseError`, which already says what to do)."""
    if isinstance(e, (DiskFull, StoreDamaged, StoreReadOnly)):
        return e
    state = getattr(e, "sqlstate", None)  # a PostgreSQL error (psycopg): its SQLSTATE class
    if state in PG_DISK_FULL or is_disk_full(e):
        return DiskFull(disk_full_message(index))
    if isinstance(e, CitewiseError):
        return None
    if state == PG_READ_ONLY:
        return StoreReadOnly(
            f"{index} is a read-only replica (hot standby); ingest into the primary, the replica follows it"
        )
    if state in PG_DAMAGED:
        return StoreDamaged(damaged_message(index, one_line(e)))
    if isinstance(e, (RuntimeError, OSError, ValueError)) and _DAMAGE.search(str(e)):
        return StoreDamaged(damaged_message(index, one_line(e)))
    return None


@contextmanager
def store_faults(index: Path | str) -> Iterator[None]:
    """Re-raise an engine error met inside the block as :class:`DiskFull` / :class:`StoreDamaged`
    (:func:`translate`); other errors pass unchanged."""
    try:
        yield
    except Exception as e:  # noqa: BLE001 - classified, then re-raised as it was or as one line
        t = translate(e, index)
        if t is None or t is e:
            raise
        raise t from None


_P = ParamSpec("_P")
_R = TypeVar("_R")


def guarded(method: Callable[Concatenate[Any, _P], _R]) -> Callable[Concatenate[Any, _P], _R]:
    """Decorate a method of a store whose ``path`` is ``<index>/<store folder>``: engine errors
    raised inside become :class:`DiskFull` / :class:`StoreDamaged` naming ``<index>``."""
    import functools

    @functools.wraps(method)
    def call(self: Any, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        path = getattr(self, "path", None)
        with store_faults(Path(path).parent if path is not None else "the index"):
            return method(self, *args, **kwargs)

    return call
