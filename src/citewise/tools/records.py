"""Record tools declared in YAML as parameterised SQL templates, and the sample records database.

A record tool file (sample: ``citewise/sample/record_tools.yaml``) looks like::

    allowlist: [customers, invoices]
    tools:
      - name: invoice_status
        description: "... Use for ... NOT for ..."
        parameters: {type: object, properties: {invoice_id: {type: integer}}, required: [invoice_id]}
        sql: SELECT status FROM invoices WHERE invoice_id = :invoice_id
        policy: {query: ..., key_field: plan, value_field: outgoing_usd, unit: USD, rule: ...}   # optional
    synonyms: {overdue: past_due}   # optional: phrases a question may use for enum values

Every template is checked by the SQL guard when the file is loaded (a template that writes or
reads off the allowlist is a load error, naming the file and tool), every ``:name`` placeholder
must be a declared parameter, arguments are validated against the JSON Schema and then bound by
SQLite (never interpolated). Optional parameters that are not given are bound as NULL.

The sample database is built from ``sample/records/records.sql`` (the only source; no binary in
git) into the cache folder (``$CITEWISE_CACHE``, else ``$XDG_CACHE_HOME/citewise``, else
``~/.cache/citewise``) as ``records-<sha256 of the script, 12 hex>.db``, once.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from citewise.core import CitewiseError, InputError, cache_dir
from citewise.tools.base import error, validate_args
from citewise.tools.sql import SqlGuardError, SqliteDatabase, parse_db_url

_PLACEHOLDER = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def sample_records_dir() -> Path:
    """Folder of the bundled records script and tool declarations."""
    from citewise.core import sample_dir

    return sample_dir() / "records"


def sample_tools_yaml() -> Path:
    """The bundled record tool declarations (``sample/record_tools.yaml``)."""
    from citewise.core import sample_dir

    return sample_dir() / "record_tools.yaml"


def build_sample_db(folder: str | os.PathLike | None = None, script: Path | None = None) -> Path:
    """Build (once) the SQLite database of ``records.sql`` in ``folder`` and return its path.

    The file name carries the script's hash, so an edited script builds a new file. The build
    writes a temporary file and renames it, so concurrent builders never see a half-built file.

    Raises:
        CitewiseError: the script fails to execute.
    """
    script = script or sample_records_dir() / "records.sql"
    text = script.read_text(encoding="utf-8")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    folder = Path(folder) if folder else cache_dir()
    target = folder / f"records-{digest}.db"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".records-{digest}.{os.getpid()}.tmp"
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.executescript(text)
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, target)
    except sqlite3.Error as e:
        tmp.unlink(missing_ok=True)
        raise CitewiseError(f"{script}: {e}") from None
    return target


def resolve_db(db: str | os.PathLike | None, *, sample_fallback: bool = True) -> Path | None:
    """The records database to use: ``db`` if given, else ``$CITEWISE_DB``, else the sample DB.

    Returns None when nothing is configured and ``sample_fallback`` is False.
    """
    chosen = db or os.environ.get("CITEWISE_DB")
    if chosen:
        return database_path(chosen)
    return build_sample_db() if sample_fallback else None


def is_sample_db(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a build of the bundled sample records script (its file name carries the
    script's hash, :func:`build_sample_db`)."""
    text = (sample_records_dir() / "records.sql").read_bytes()
    return Path(path).name == f"records-{hashlib.sha256(text).hexdigest()[:12]}.db"


def database_tables(path: str | os.PathLike) -> list[str]:
    """Every table and view of a SQLite file, by name (the allowlist when none is configured)."""
    import urllib.parse

    uri = f"file:{urllib.parse.quote(str(Path(path).resolve()))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
    except sqlite3.Error as e:
        raise CitewiseError(f"{path}: not a readable SQLite database ({e})") from None
    finally:
        conn.close()


def database_path(db: str | os.PathLike) -> Path:
    """The SQLite file of a database URL or path; a ``.sql`` script is built once into the cache
    (:func:`build_sample_db`) and that file returned.

    Raises:
        CitewiseError: the script does not exist or fails.
    """
    path = parse_db_url(db)
    if path.suffix.lower() == ".sql":
        if not path.is_file():
            raise CitewiseError(f"{path}: no such SQL script (records.database)")
        return build_sample_db(script=path)
    return path


@dataclass
class RecordTool:
    """One record tool: a JSON-Schema-typed, parameterised SELECT (see module docstring).

    ``call`` returns ``{"tool", "args", "columns", "rows", "row_count", "truncated"}`` or an
    error observation. ``policy`` (dict or None) names the document rule a record is compared
    with (used by the router's *both* route).
    """

    name: str
    description: str
    parameters: dict
    sql: str
    db: SqliteDatabase
    policy: dict | None = None
    groups: tuple[str, ...] = field(default_factory=tuple)
    synonyms: dict = field(default_factory=dict)

    def call(self, args: dict) -> dict:
        problem = validate_args(args, self.parameters)
        if problem:
            return error(self.name, problem)
        params = {k: args.get(k) for k in (self.parameters.get("properties") or {})}
        try:
            result = self.db.query(self.sql, params)
        except SqlGuardError as e:
            return error(self.name, str(e))
        except Exception as e:  # anything else is still an observation (DESIGN.md: Tool seam)
            return error(self.name, f"{type(e).__name__}: {e}")
        return {"tool": self.name, "args": args, **result}


def load_record_tools(path: str | os.PathLike, db: SqliteDatabase | str | os.PathLike) -> list[RecordTool]:
    """Record tools of a YAML file, bound to a database.

    Args:
        path: the YAML file.
        db: a :class:`SqliteDatabase` or a database path/URL (opened with the file's allowlist).

    Raises:
        InputError: the file is not valid YAML, a field is missing or wrong, or a template is
            refused by the SQL guard (the message names the file and tool).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
        data = yaml.safe_load(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise InputError(str(path), f"cannot read record tools: {str(e).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tools"), list):
        raise InputError(str(path), "expected a mapping with a 'tools' list")
    allowlist = data.get("allowlist")
    if not isinstance(allowlist, list) or not allowlist:
        raise InputError(str(path), "field 'allowlist' must be a non-empty list of table names")
    synonyms = data.get("synonyms") or {}
    if not isinstance(synonyms, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in synonyms.items()
    ):
        raise InputError(str(path), "field 'synonyms' must map phrases to values (overdue: past_due)")
    if not isinstance(db, SqliteDatabase):
        db = SqliteDatabase(parse_db_url(db), allowlist)
    tools, seen = [], set()
    marker = _guard_marker(raw, db.guard.allowlist)
    guarded = marker is not None and marker.exists()
    for i, t in enumerate(data["tools"]):
        where = f"tools[{i}]"
        if not isinstance(t, dict):
            raise InputError(str(path), f"{where}: expected a mapping")
        for key in ("name", "description", "parameters", "sql"):
            if not t.get(key):
                raise InputError(str(path), f"{where}: missing field '{key}'")
        name = t["name"]
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name) or name in seen:
            raise InputError(str(path), f"{where}: name '{name}' must be unique snake_case")
        seen.add(name)
        params = t["parameters"]
        if not isinstance(params, dict) or params.get("type") != "object":
            raise InputError(str(path), f"tool '{name}': parameters must be a JSON Schema of type object")
        try:
            if not guarded:
                db.guard.check(t["sql"])
        except SqlGuardError as e:
            raise InputError(str(path), f"tool '{name}': SQL refused by the guard: {e}") from None
        declared = set(params.get("properties") or {})
        used = set(_PLACEHOLDER.findall(t["sql"]))
        if used - declared:
            raise InputError(str(path), f"tool '{name}': SQL uses undeclared parameters {sorted(used - declared)}")
        tools.append(
            RecordTool(
                name,
                " ".join(str(t["description"]).split()),
                params,
                t["sql"],
                db,
                t.get("policy"),
                tuple(t.get("groups") or ()),
                dict(synonyms),
            )
        )
    if marker is not None and not guarded:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:
            pass  # not an error: the next load checks the templates again
    return tools


def _guard_marker(raw: bytes, allowlist) -> Path | None:
    """The marker file saying the SQL guard passed every template of these record tools
    (``<cache_dir>/verified/records-<sha256>``): the hash covers the YAML bytes, the allowlist,
    the guard's source (:mod:`citewise.tools.sql`) and sqlglot's version, so any change checks
    them again. Checking parsed each template with sqlglot, whose import alone was ~1 s of every
    cold ``citewise ask`` over the sample corpus (bench/cold_ask.py). None when the version of
    sqlglot cannot be read."""
    from importlib.metadata import PackageNotFoundError, version

    from citewise.tools import sql

    try:
        h = hashlib.sha256(
            raw
            + b"\x00"
            + "\x00".join(sorted(allowlist)).encode()
            + b"\x00"
            + Path(sql.__file__).read_bytes()
            + version("sqlglot").encode()
        )
    except (OSError, PackageNotFoundError):
        return None
    return cache_dir() / "verified" / f"records-{h.hexdigest()}"
