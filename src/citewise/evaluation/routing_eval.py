"""``citewise eval tools``: routers measured on a routing set, and on BFCL categories.

:func:`evaluate_tools` builds the routers once and scores them with
:func:`citewise.tools.tsa.evaluate_router` (TSA, route accuracy, argument accuracy, wrong
source): the rule router (with the index probe), the embedding baseline, and with an LLM the
LLM router. The bundled sample routing set runs over the sample records and their named
queries; any other set runs over the records configuration of the settings (``[records]``:
database, templates, allowlists, entity patterns). BFCL categories are scored with
:func:`citewise.tools.bfcl.evaluate_bfcl`: the embedding baseline, and with an LLM native
function calling (``llm``) and the LLM router's JSON route (``llm_router``).
"""

from __future__ import annotations

import os
from pathlib import Path

from citewise.core import CitewiseError

#: BFCL category names that are files under another name.
BFCL_ALIASES = {"simple": "simple_python"}


def bfcl_root(bfcl_dir: str | Path | None = None) -> Path:
    """The BFCL folder: ``bfcl_dir``, else ``$CITEWISE_SHARED_DATA/bfcl``, else ``../shared/data/bfcl``."""
    if bfcl_dir:
        return Path(bfcl_dir)
    return Path(os.environ.get("CITEWISE_SHARED_DATA", Path.cwd().parent / "shared" / "data")) / "bfcl"


def evaluate_tools(
    idx,
    cases,
    settings,
    *,
    sample: bool,
    db: str | None = None,
    llm: bool = False,
    bfcl: list[str] = (),
    bfcl_dir=None,
    limit: int | None = None,
) -> dict:
    """The ``eval tools`` result (module docstring): ``{"routers": [...], "bfcl": {category: ...}}``.

    Raises:
        CitewiseError: a non-sample routing set without a records database in the settings;
            ``llm`` without an LLM configured.
    """
    from citewise.tools.bfcl import embedding_selector, evaluate_bfcl, llm_selector, load_bfcl
    from citewise.tools.catalog import RecordsCatalog
    from citewise.tools.llm_router import router_selector
    from citewise.tools.question import load_cues
    from citewise.tools.registry import build_toolset, records_toolset
    from citewise.tools.router import EmbeddingRouter, LLMRouter, RuleRouter, index_probe
    from citewise.tools.tsa import evaluate_router

    cues = load_cues(settings.routing.cues or None)
    if sample:
        ts = build_toolset(db, index=idx)
        entities = settings.records.entities
    else:
        if db:
            from dataclasses import replace

            settings.records = replace(settings.records, database=db)
        if not settings.records.database:
            raise CitewiseError(
                "this routing set needs a records database: set records.database (and templates) "
                "in the settings (--config), CITEWISE_DB or --db"
            )
        ts = records_toolset(settings.records, index=idx, web_search_url=settings.routing.web_search_url)
        entities = settings.records.entities
    tools = list(ts.tools.values())
    db_obj = ts["sql_query"].db if "sql_query" in ts else None
    catalog = RecordsCatalog(tools, cues, db_obj, entities)
    routers = [
        RuleRouter(tools, idx.question_embedder, index_probe(idx), catalog=catalog, cues=cues),
        EmbeddingRouter(tools, idx.embedder),
    ]
    model = None
    if llm:
        from citewise.models.chat import ChatConfig, OpenAIChatModel

        conf = settings.llm.for_use("router")
        if not conf.configured:
            raise CitewiseError(
                "--llm needs an LLM: set llm.base_url and llm.model (CITEWISE_LLM_BASE_URL, CITEWISE_LLM_MODEL)"
            )
        model = OpenAIChatModel(ChatConfig.from_settings(settings.llm, "router"))
        routers.append(LLMRouter(model, tools))
    result: dict = {"routers": [evaluate_router(r, cases).as_dict() for r in routers]}
    if bfcl:
        root = bfcl_root(bfcl_dir)
        result["bfcl"] = {}
        for category in bfcl:
            name = category if (root / f"BFCL_v4_{category}.json").is_file() else BFCL_ALIASES.get(category, category)
            bcases = load_bfcl(root, name, limit)
            out = {"embedding": evaluate_bfcl(embedding_selector(idx.embedder), bcases)}
            if model is not None:
                out["llm"] = evaluate_bfcl(llm_selector(model), bcases)
                out["llm_router"] = evaluate_bfcl(router_selector(model), bcases)
            result["bfcl"][name] = {k: {m: v for m, v in r.items() if m != "per_case"} for k, r in out.items()}
    return result
