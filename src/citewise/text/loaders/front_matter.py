"""Markdown front matter: YAML between ``---`` lines at the top of a file, read with a safe loader
without aliases; every key is type-checked; every key without a meaning of its own is the
document's metadata (``Document.metadata``, :mod:`citewise.metadata`: stored and filterable); a
misspelled ``permissions`` and a blank group are errors (fail closed)."""

from __future__ import annotations

import datetime as dt
import re

import yaml

from citewise.core import InputError
from citewise.metadata import (
    KEY as METADATA_KEY,
    MAX_METADATA_BYTES,
    YamlFloat,
    normalize as normalize_metadata,
    to_json,
)

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def _key_line(block: str, key: str, base_line: int) -> int:
    for i, line in enumerate(block.splitlines()):
        if line.lstrip().startswith(f"{key}:"):
            return base_line + i
    return base_line


#: Front matter keys with a meaning of their own; any other key is the document's metadata.
FRONT_MATTER_KEYS = ("id", "title", "version", "updated", "effective", "permissions")
#: Limits on front matter, so a hostile or broken file cannot exhaust memory or the index.
MAX_FRONT_MATTER_BYTES = 64 * 1024
MAX_ID_CHARS = 256
MAX_TITLE_CHARS = 500
MAX_VERSION_CHARS = 64
MAX_GROUP_CHARS = 128
#: The separator of history ids (``doc_id@version``), reserved: no document id may contain it.
HISTORY_SEP = "@"

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _FrontMatterLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` without aliases (a few hundred bytes of ``*a`` references can expand
    to gigabytes: a "billion laughs" bomb), without implicit timestamps (dates stay strings, so
    an impossible date is our clear error rather than a constructor ``ValueError``), and refusing
    a key given twice (``permissions`` twice was last-wins,
    so a later ``permissions: [public]`` silently opened a restricted document)."""

    def compose_node(self, parent, index):  # noqa: D102 - PyYAML hook
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not allowed in front matter", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):  # noqa: D102 - PyYAML hook
        seen: set = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, str) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key '{key}' is given twice (which one counts would be a guess)", key_node.start_mark
                )
            if isinstance(key, str):
                seen.add(key)
        return super().construct_mapping(node, deep)


# a number with a fraction keeps the text written: "version: 1.10" is "1.10", not the float 1.1
# (which made version 1.9 the newer one); integers stay numbers (type checks refuse them as groups)
_FrontMatterLoader.add_constructor(
    "tag:yaml.org,2002:float", lambda loader, node: YamlFloat(loader.construct_scalar(node))
)

_FrontMatterLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _short(value, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (error lines stay one short line)."""
    r = repr(value)
    return r if len(r) <= limit else r[: limit - 1] + "…"


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance between two strings.

    >>> edit_distance("permission", "permissions")
    1
    """
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


_FENCED_TOP = re.compile(r"\A\s*(-{3,}|\+{3,})[ \t]*\r?\n(.*?)\r?\n[ \t]*\1[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_PERMISSIONS_LINE = re.compile(r"^\s*permissions\s*[:=]", re.M | re.I)
_KEY_VALUE_LINE = re.compile(r"^[ \t]*[\w-]+[ \t]*[:=]")
#: An unfenced block of ``key: value`` lines at the top of a file is read as metadata-like (and
#: refused when it names ``permissions``) up to this many lines.
MAX_BARE_BLOCK_LINES = 10


def _bare_permissions_block(text: str) -> bool:
    """Whether the file opens (after blank lines) with a ``permissions:`` line, or with a
    paragraph of at most :data:`MAX_BARE_BLOCK_LINES` ``key: value`` lines one of which is
    ``permissions``: front matter written without its ``---`` fences."""
    block = []
    for line in text.lstrip("\r\n \t").splitlines()[: MAX_BARE_BLOCK_LINES + 1]:
        if not line.strip():
            break
        block.append(line)
    if block and _PERMISSIONS_LINE.match(block[0]):
        return True
    return (
        0 < len(block) <= MAX_BARE_BLOCK_LINES
        and all(_KEY_VALUE_LINE.match(x) for x in block)
        and any(_PERMISSIONS_LINE.match(x) for x in block)
    )


def check_unread_front_matter(text: str, source: str, kind: str = "markdown") -> None:
    """Refuse a file whose top is a front-matter block naming ``permissions`` that is not read as
    front matter: after blank lines or indented, TOML (``+++``), fenced with more than three
    dashes, without fences (a paragraph of ``key: value`` lines, :func:`_bare_permissions_block`),
    or in a ``.txt`` / ``.html`` file. Indexed as text, the document took the default permission
    (often public) and its ``permissions:`` line became searchable text (break-it trials): fail
    closed instead.

    Raises:
        InputError: such a block, with how to fix it.
    """
    m = _FENCED_TOP.match(text)
    fenced = bool(m and _PERMISSIONS_LINE.search(m.group(2)))
    if not fenced and not _bare_permissions_block(text):
        return
    if kind != "markdown":
        fix = (
            "front matter is read only in Markdown files; use a policy rule"
            + (' or <meta name="permissions" content="...">' if kind == "html" else "")
            + " to restrict this file"
        )
    elif not fenced:
        fix = "front matter goes between '---' lines, the first of them the file's first line"
    elif m.group(1).startswith("+"):
        fix = "TOML front matter (+++) is not read; write it as YAML between '---' lines"
    elif m.group(1) != "---":
        fix = f"front matter fences are exactly three dashes ('---'), not {m.group(1)!r}"
    else:
        fix = "front matter must start on the first line, unindented; remove what comes before '---'"
    raise InputError(
        source,
        f"a front-matter block naming 'permissions' is not read here, so they would not "
        f"apply and the file would take the default permission: {fix}",
        1,
    )


def parse_front_matter(text: str, source: str) -> tuple[dict, str, int]:
    """Split YAML front matter from a Markdown text.

    The YAML is read with a safe loader that refuses aliases and keeps dates as strings, and the
    block may be at most :data:`MAX_FRONT_MATTER_BYTES`.

    Returns:
        (metadata dict, body text, character offset of the body in ``text``).

    Raises:
        InputError: the YAML does not parse (with its line in the file), uses aliases, is too
            big, or is not a mapping.
    """
    m = _FRONT.match(text)
    if not m:
        if text.startswith("---\n") or text.startswith("---\r\n"):
            raise InputError(source, "front matter is not closed by a '---' line", 1)
        check_unread_front_matter(text, source)
        return {}, text, 0
    block = m.group(1) or ""
    size = len(block.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONT_MATTER_BYTES:
        raise InputError(source, f"front matter is {size:,} bytes (limit {MAX_FRONT_MATTER_BYTES:,})", 1)
    try:
        meta = yaml.load(block, Loader=_FrontMatterLoader) if block.strip() else {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        if "mapping values are not allowed" in problem:
            problem += " (quote a value that contains ': ', e.g. title: \"E-1004: Card declined\")"
        raise InputError(source, f"bad front matter: {problem}", line) from None
    except RecursionError:
        raise InputError(source, "bad front matter: nested too deeply", 1) from None
    except Exception as e:  # ValueError from an explicit !!timestamp tag, ...
        raise InputError(source, f"bad front matter: {type(e).__name__}: {' '.join(str(e).split())[:120]}", 1) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InputError(source, "bad front matter: expected 'key: value' lines", 2)
    return meta, text[m.end() :], m.end()


def _scalar_text(meta: dict, key: str, source: str, line: int, limit: int) -> str | None:
    """A front matter value that must be a short piece of text (numbers are accepted as text)."""
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(source, f"front matter '{key}' must be text, got {type(value).__name__} {_short(value)}", line)
    text = str(value).strip()
    if "\n" in text or "\r" in text:
        raise InputError(source, f"front matter '{key}' must be one line", line)
    if len(text) > limit:
        raise InputError(source, f"front matter '{key}' is {len(text):,} characters (limit {limit})", line)
    return text


def _front_matter_date(meta: dict, key: str, source: str, line: int) -> dt.date | None:
    value = meta.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}([Tt ].{0,40})?", value.strip()):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError as e:
            raise InputError(
                source, f"front matter '{key}': {value.strip()[:10]} is not a real date ({e})", line
            ) from None
    raise InputError(source, f"front matter '{key}' must be an ISO date (YYYY-MM-DD), got {_short(value)}", line)


def _front_matter_groups(meta: dict, source: str, line: int) -> tuple[str, ...]:
    """``permissions``: a list of non-blank group names (or one comma-separated string).

    A blank group is an error, not "no permissions": dropping it would make the document follow
    the default (often public) when its author meant to restrict it.
    """
    if "permissions" in meta and meta["permissions"] in (None, []):
        # "permissions: ~", or a list whose items are all commented out: an author who wrote the
        # key meant to restrict the document; the default would often make it public
        raise InputError(source, "front matter 'permissions' is empty (remove the key, or name the groups)", line)
    value = meta.get("permissions")
    if value is None:
        return ()
    if isinstance(value, str):
        if not value.strip():
            raise InputError(source, "front matter 'permissions' is blank (remove the key, or name the groups)", line)
        value = [g for g in re.split(r"[,\s]+", value) if g]
    if not isinstance(value, list):
        raise InputError(source, f"front matter 'permissions' must be a list of group names, got {_short(value)}", line)
    groups = set()
    for g in value:
        if not isinstance(g, str):
            raise InputError(source, f"front matter 'permissions' must list group names (text), got {_short(g)}", line)
        if not g.strip():
            raise InputError(source, f"front matter 'permissions' has a blank group {g!r}", line)
        if len(g.strip()) > MAX_GROUP_CHARS:
            raise InputError(
                source,
                f"front matter 'permissions' group is {len(g.strip()):,} characters (limit {MAX_GROUP_CHARS})",
                line,
            )
        groups.add(g.strip())
    return tuple(sorted(groups))


def check_front_matter_keys(meta: dict, block: str, source: str) -> list[str]:
    """Warnings for front matter keys kept as metadata that cannot be filtered on (naming file
    and line): a key that is not text, or not letters, digits, ``_``, ``.`` and ``-``.

    Raises:
        InputError: a key that looks like a misspelling of ``permissions`` (``Permissions``,
            ``permission``, ``permisions``): keeping it as metadata would silently widen access,
            so the file is refused (fail closed).
    """
    warnings = []
    for key in meta:
        k = str(key)
        if k in FRONT_MATTER_KEYS:
            continue
        line = _key_line(block, k, 1)
        if edit_distance(k.strip().lower(), "permissions") <= 2:
            raise InputError(
                source,
                f"front matter key '{k}' is not 'permissions' (spelled exactly, lower case); "
                "refusing the file rather than ignoring its permissions",
                line,
            )
        if not isinstance(key, str) or not METADATA_KEY.match(k):
            warnings.append(
                f"{source}:{line}: front matter key {_short(k, 40)} is kept as metadata but cannot be "
                "filtered on (use letters, digits, '_', '.' or '-')"
            )
    return warnings


def front_matter_metadata(meta: dict, source: str) -> dict:
    """The metadata of a front matter mapping: every key but :data:`FRONT_MATTER_KEYS`,
    normalised (:func:`citewise.metadata.normalize`).

    Raises:
        InputError: the metadata is over :data:`citewise.metadata.MAX_METADATA_BYTES` as JSON
            (it is stored with every chunk of the document).
    """
    out = normalize_metadata({str(k): v for k, v in meta.items() if str(k) not in FRONT_MATTER_KEYS})
    size = len(to_json(out).encode("utf-8", "surrogatepass"))
    if size > MAX_METADATA_BYTES:
        raise InputError(
            source,
            f"front matter metadata is {size:,} bytes as JSON (limit {MAX_METADATA_BYTES:,}); "
            "keep long text in the body",
            1,
        )
    return out
