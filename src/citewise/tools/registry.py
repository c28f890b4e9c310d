"""A named set of tools: what a router or agent may call, and the OpenAI ``tools`` list for an LLM."""

from __future__ import annotations

import os
from pathlib import Path

from citewise.core import Principal
from citewise.telemetry import traced_tool_call
from citewise.tools.base import Tool, coerce_args, error, spec


class ToolSet:
    """Tools by name, in the order given. ``call`` of an unknown name is an error observation."""

    def __init__(self, tools: list[Tool]):
        self.tools: dict[str, Tool] = {}
        for t in tools:
            self.tools[t.name] = t

    def __contains__(self, name: str) -> bool:
        return name in self.tools

    def __getitem__(self, name: str) -> Tool:
        return self.tools[name]

    def names(self) -> list[str]:
        return list(self.tools)

    def specs(self) -> list[dict]:
        """The tools in the OpenAI tools format."""
        return [spec(t) for t in self.tools.values()]

    def for_groups(self, groups) -> "ToolSet":
        """The tools a principal in ``groups`` may use: record tools that declare ``groups`` only
        for a principal in one of them; every other tool."""
        mine = set(groups)
        return ToolSet([t for t in self.tools.values() if not getattr(t, "groups", None) or mine & set(t.groups)])

    def for_principal(self, principal: Principal | None, index=None) -> "ToolSet":
        """:meth:`for_groups` of ``principal``'s groups, with ``vector_search`` searching as
        ``principal`` (a new search tool over ``index`` when one is given)."""
        from citewise.tools.vector import VectorSearchTool

        principal = principal or Principal()
        out = self.for_groups(principal.all_groups())
        if index is not None and "vector_search" in out.tools:
            out.tools["vector_search"] = VectorSearchTool(index.retriever("shipped"), index.store, principal)
        return out

    @traced_tool_call
    def call(self, name: str, args: dict) -> dict:
        """Call tool ``name`` with ``args``; never raises. A quoted scalar is first converted to
        the type the tool's schema declares for it (:func:`citewise.tools.base.coerce_args`), so
        a model writing ``"2011"`` for an integer reaches the tool as 2011.

        Returns:
            The tool's observation, or an error observation ``{"error", "tool"}`` for an unknown
            name, arguments that are not a JSON object, or an exception a tool let escape.
        """
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return error(str(name), f"unknown tool '{name}' (valid: {', '.join(self.tools)})")
        if not isinstance(args, dict):
            return error(name, f"arguments must be a JSON object, got {type(args).__name__}")
        try:
            obs = tool.call(coerce_args(args, tool.parameters))
        except Exception as e:  # a tool broke the seam's contract; still an observation (DESIGN.md)
            return error(name, f"{type(e).__name__}: {str(e)[:200]}")
        return obs if isinstance(obs, dict) else {"tool": name, "result": obs}


def build_toolset(
    db: str | os.PathLike | None = None,
    index=None,
    principal: Principal | None = None,
    tools_yaml: str | os.PathLike | None = None,
    sample_fallback: bool = True,
    all_groups: bool = False,
) -> ToolSet:
    """The standard tools: ``vector_search`` (when ``index`` is given), ``sql_query`` and the record
    tools of ``tools_yaml`` (when a database resolves, see :func:`citewise.tools.records.resolve_db`;
    without ``tools_yaml``, the sample's named queries for the sample database and none for any
    other), and ``web_search`` (when ``CITEWISE_WEB_SEARCH_URL`` is set).

    Record tools that declare ``groups`` are offered only to a principal in one of them (every
    record tool with ``all_groups``: then :meth:`ToolSet.for_principal` picks a principal's).

    Raises:
        CitewiseError / InputError: the database file is missing or the YAML is invalid.
    """
    from citewise.tools.records import database_tables, is_sample_db, load_record_tools, resolve_db, sample_tools_yaml
    from citewise.tools.sql import SqliteDatabase, SqlQueryTool
    from citewise.tools.vector import VectorSearchTool
    from citewise.tools.web import WebSearchTool

    import yaml

    tools: list[Tool] = []
    if index is not None:
        tools.append(VectorSearchTool(index.retriever("shipped"), index.store, principal))
    path = resolve_db(db, sample_fallback=sample_fallback)
    if path is not None:
        if not path.is_file():
            from citewise.core import CitewiseError

            raise CitewiseError(f"{path}: no such database file")
        yaml_path = Path(tools_yaml) if tools_yaml else (sample_tools_yaml() if is_sample_db(path) else None)
        allow = (
            ((yaml.safe_load(yaml_path.read_text(encoding="utf-8")) or {}).get("allowlist") or []) if yaml_path else []
        )
        if not allow:
            allow = database_tables(path)
        database = SqliteDatabase(path, allow)
        tools.append(SqlQueryTool(database))
        groups = set((principal or Principal()).all_groups())
        if yaml_path is not None:
            tools += [
                t
                for t in load_record_tools(yaml_path, database)
                if all_groups or not t.groups or groups & set(t.groups)
            ]
    web = WebSearchTool.from_env()
    if web is not None:
        tools.append(web)
    return ToolSet(tools)


def records_toolset(records, index=None, web_search_url: str = "") -> ToolSet:
    """The tools of a ``[records]`` configuration (:class:`citewise.settings.RecordsSettings`):
    ``vector_search`` (when ``index`` is given), ``sql_query`` over the allowlisted tables and
    columns, the named query templates of ``records.templates`` (every group's; pick a
    principal's with :meth:`ToolSet.for_principal`), and ``web_search`` when a URL is given.

    The table allowlist is ``records.tables``, else the templates file's ``allowlist``, else
    every table of the database.

    Raises:
        CitewiseError / InputError: the database or templates file is missing or invalid.
    """
    import yaml

    from citewise.core import CitewiseError, InputError
    from citewise.tools.records import database_path, database_tables, load_record_tools
    from citewise.tools.sql import SqliteDatabase, SqlQueryTool
    from citewise.tools.vector import VectorSearchTool
    from citewise.tools.web import WebSearchTool

    path = database_path(records.database)
    if not path.is_file():
        raise CitewiseError(f"{path}: no such database file (records.database)")
    allow = list(records.tables)
    templates = Path(records.templates) if records.templates else None
    if not allow and templates is not None:
        try:
            allow = (yaml.safe_load(templates.read_text(encoding="utf-8")) or {}).get("allowlist") or []
        except (OSError, yaml.YAMLError) as e:
            raise InputError(str(templates), f"cannot read record tools: {str(e).splitlines()[0]}") from None
    if not allow:
        allow = database_tables(path)
    database = SqliteDatabase(
        path, allow, timeout_s=records.timeout_s, max_rows=records.max_rows, columns=records.columns or None
    )
    tools: list[Tool] = []
    if index is not None:
        tools.append(VectorSearchTool(index.retriever("shipped"), index.store, None))
    tools.append(SqlQueryTool(database))
    if templates is not None:
        tools += load_record_tools(templates, database)
    if web_search_url:
        tools.append(WebSearchTool(web_search_url))
    return ToolSet(tools)
