"""One settings object for every front end: defaults, then ``citewise.toml`` files, then the
environment, then command-line flags (each later source wins).

Sources, in the order they are applied:

1. the defaults declared on the dataclasses below;
2. ``<index>/citewise.toml`` (settings that travel with an index: its records database, its
   thresholds);
3. ``./citewise.toml`` in the working directory, or the file named by ``$CITEWISE_CONFIG``
   (which replaces it; a missing file named there is an error);
4. the environment: each field ``section.key`` is read from ``CITEWISE_SECTION_KEY``
   (``llm.base_url`` from ``CITEWISE_LLM_BASE_URL``, ``llm.judge.model`` from
   ``CITEWISE_LLM_JUDGE_MODEL``), plus the aliases in :data:`ENV_ALIASES` (``CITEWISE_DB``,
   ``OPENAI_BASE_URL`` ...);
5. flags: ``overrides`` given to :func:`load_settings` as ``{"section.key": value}``.

Every value remembers where it came from (:meth:`Settings.source`), which ``citewise config
show`` prints. A file with an unknown key or a value of the wrong type is refused with one line
naming the file and the key (:class:`citewise.core.InputError`).

Example ``citewise.toml``::

    [answer]
    k = 8

    [llm]
    base_url = "http://127.0.0.1:8080/v1"
    model = "qwen2.5-1.5b-instruct"
    read_timeout_s = 300

    [llm.judge]
    model = "a-bigger-model"

    [records]
    database = "sqlite:///records.db"
    templates = "record_tools.yaml"

    [records.entities]
    customer_id = 'C-[0-9]{4}'
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from citewise.core import InputError

#: The settings file name looked for in the working directory and in the index folder.
FILE_NAME = "citewise.toml"
#: Environment variable naming a settings file that replaces ``./citewise.toml``.
CONFIG_ENV = "CITEWISE_CONFIG"


@dataclass
class IndexSettings:
    """Where the index lives and what a new index is built with."""

    path: str = ""  # '' = $CITEWISE_INDEX, else ~/.local/share/citewise/index
    store: str = ""  # '' or 'lancedb' = embedded LanceDB; else a postgresql:// URL
    embedder: str = "minilm"  # for new indexes (an existing index keeps its own)


@dataclass
class SearchSettings:
    """``search`` defaults."""

    k: int = 10
    retriever: str = "shipped"
    reranker: str = ""  # '' = none; a reranker spec (see docs/retrievers.md)
    rerank_depth: int = 0  # 0 = the reranker's default


@dataclass
class EmbedderThresholds:
    """The evidence gates of one embedder (cosine-based scores, 0..1)."""

    abstain: float = 0.25  # evidence score below which an answer abstains
    passage_gate: float = 0.0  # dense² × passage below which "no one passage holds the subject"


def _default_thresholds() -> dict[str, EmbedderThresholds]:
    # abstain: fitted with ``citewise calibrate --fit all`` on the sample golden set (40 in-scope,
    # 14 out-of-scope questions; ``citewise calibrate`` stores an index's own value in index.json).
    # passage_gate: the midpoint between the highest out-of-scope and the lowest in-scope
    # ``dense² × passage`` on the real-docs, sample and abstain-probe sets (bench/realdocs)
    return {
        "all-MiniLM-L6-v2-int8": EmbedderThresholds(abstain=0.1403, passage_gate=0.09),
        "hashing": EmbedderThresholds(abstain=0.0594, passage_gate=0.0),
    }


@dataclass
class AnswerSettings:
    """``ask`` defaults."""

    k: int = 5  # chunks retrieved as evidence
    retriever: str = "shipped"
    generator: str = "extractive"  # extractive | llm
    reranker: str = ""
    rerank_depth: int = 0
    #: the abstention threshold for every index ('' → the index's calibrated value, else the
    #: embedder's entry in ``thresholds``)
    threshold: float | None = None
    thresholds: dict[str, EmbedderThresholds] = field(default_factory=_default_thresholds)
    #: evidence-gap controller without a controller option: ``off`` (only with --scope, --max-rounds,
    #: --deadline-ms, --budget-tokens or --requirements), ``auto`` (the default: also for a question
    #: with condition clauses or an always / never / guaranteed / safe / cannot claim:
    #: :attr:`citewise.answer.question.QuestionAnalysis.conditional`), ``always``
    sufficiency: str = "auto"
    max_rounds: int = 2  # retrieval rounds of the evidence-gap controller, the first included
    budget_tokens: int = 4000  # token budget of the assembled evidence (controller)
    deadline_ms: float | None = None  # no follow-up round starts after this (controller)
    route: bool = True  # route record questions to the records tools when a database is configured


@dataclass
class LLMUse:
    """Overrides of :class:`LLMSettings` for one use (None: inherit ``[llm]``)."""

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    connect_timeout_s: float | None = None
    read_timeout_s: float | None = None
    retries: int | None = None
    max_prompt_tokens: int | None = None
    max_output_tokens: int | None = None
    context_window: int | None = None
    temperature: float | None = None
    stream: bool | None = None


@dataclass
class LLMSettings:
    """An OpenAI-compatible chat endpoint (``[llm]``), with per-use overrides
    (``[llm.answer]``, ``[llm.judge]``, ``[llm.router]``, ``[llm.summarizer]``, ``[llm.reranker]``).
    Timeouts in seconds; token counts in the model's tokens."""

    base_url: str = ""
    model: str = ""
    api_key: str = ""
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 60.0
    retries: int = 1
    max_prompt_tokens: int | None = None  # None: what the context window leaves
    max_output_tokens: int = 512
    context_window: int | None = None  # None: ask the server (llama.cpp /props), else 4096
    temperature: float = 0.0
    stream: bool = False
    #: when the model fails or times out: ``extractive`` (answer extractively, with a note) | ``error``
    fallback: str = "extractive"
    answer: LLMUse = field(default_factory=LLMUse)
    judge: LLMUse = field(default_factory=LLMUse)
    router: LLMUse = field(default_factory=LLMUse)
    summarizer: LLMUse = field(default_factory=LLMUse)
    reranker: LLMUse = field(default_factory=LLMUse)

    USES = ("answer", "judge", "router", "summarizer", "reranker")

    def for_use(self, use: str) -> "LLMSettings":
        """These settings with ``[llm.<use>]``'s overrides applied (per-use tables dropped)."""
        if use not in self.USES:
            raise ValueError(f"unknown LLM use {use!r}; one of {', '.join(self.USES)}")
        over = getattr(self, use)
        base = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in self.USES}
        base.update({k: v for k, v in dataclasses.asdict(over).items() if v is not None})
        return LLMSettings(**base)

    @property
    def configured(self) -> bool:
        """Whether an endpoint and a model are set."""
        return bool(self.base_url and self.model)


@dataclass
class RecordsSettings:
    """The records database that record questions are routed to (``[records]``; docs/records.md)."""

    database: str = ""  # sqlite:///PATH, a path, or a .sql script (built once); '' = no records routing
    timeout_s: float = 2.0  # per SQL statement
    max_rows: int = 200
    #: table allowlist ([] = the templates file's allowlist, else every table of the database)
    tables: list[str] = field(default_factory=list)
    #: column allowlist per table ([records.columns] customers = ["customer_id", "name"]; a table
    #: not listed: all its columns)
    columns: dict[str, list[str]] = field(default_factory=dict)
    templates: str = ""  # YAML file of named query templates ('' = none: sql_query only)
    #: entity patterns: parameter name -> regular expression (group 1 = the value), e.g.
    #: customer_id = 'C-[0-9]{4}', invoice_id = '(?i)invoice\s*#?(\d+)'
    entities: dict[str, str] = field(default_factory=dict)


@dataclass
class RoutingSettings:
    """How questions are routed to records, live data or documents (``[routing]``)."""

    router: str = "rule"  # rule (no LLM) | llm (the [llm.router] endpoint)
    #: text-to-SQL for record questions no template answers, when an LLM is configured
    sql: bool = True
    agent: bool = False  # answer with the ReAct agent (needs an LLM)
    max_iterations: int = 5  # the agent's chat requests at most
    cues: str = ""  # a question-cues YAML replacing the bundled one ('' = bundled)
    web_search_url: str = ""  # a web search endpoint for live questions ('' = none: live questions abstain)


@dataclass
class ServiceSettings:
    """``citewise serve`` (``[service]``)."""

    host: str = "127.0.0.1"
    port: int = 8000
    request_timeout_s: float = 30.0
    rate: float = 20.0  # requests per second per key; 0 = no limit
    burst: int = 40
    require_auth: bool = False
    full_documents: bool = False
    public_metrics: bool = False
    #: share of answered requests evaluated online for the faithfulness gauge of /metrics
    #: (citewise.service.online_eval; the design documents' 5-10%); 0 = off
    eval_rate: float = 0.05


@dataclass
class Settings:
    """Every setting (see the module docstring for where each comes from)."""

    index: IndexSettings = field(default_factory=IndexSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    answer: AnswerSettings = field(default_factory=AnswerSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    records: RecordsSettings = field(default_factory=RecordsSettings)
    routing: RoutingSettings = field(default_factory=RoutingSettings)
    service: ServiceSettings = field(default_factory=ServiceSettings)
    #: dotted key -> where its value came from ('default', a file path, 'env NAME', 'flag')
    sources: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def source(self, key: str) -> str:
        """Where ``key`` (dotted, e.g. ``llm.model``) got its value."""
        return self.sources.get(key, "default")

    def get(self, key: str) -> Any:
        """The value of a dotted key (``answer.k``)."""
        node: Any = self
        for part in key.split("."):
            node = node[part] if isinstance(node, dict) else getattr(node, part)
        return node

    def threshold_for(self, embedder_name: str) -> EmbedderThresholds:
        """The thresholds of ``embedder_name`` (the ``hashing`` entry for any hashing embedder;
        defaults for an embedder with no entry)."""
        key = "hashing" if embedder_name.startswith("hashing") else embedder_name
        return self.answer.thresholds.get(key, EmbedderThresholds())

    def rows(self) -> list[tuple[str, Any, str]]:
        """``(dotted key, value, source)`` for every leaf setting, in declaration order; secrets
        (``api_key``) are shown as ``***`` when set."""
        out: list[tuple[str, Any, str]] = []
        for key, value in _leaves(self, ""):
            if key.rsplit(".", 1)[-1] == "api_key" and value:
                value = "***"
            out.append((key, value, self.source(key)))
        return out


#: Environment variables read besides ``CITEWISE_<SECTION>_<KEY>``: name -> dotted key. The
#: names users already set for other tools (``OPENAI_*``) come after citewise's own.
ENV_ALIASES: dict[str, str] = {
    "CITEWISE_DB": "records.database",
    "CITEWISE_WEB_SEARCH_URL": "routing.web_search_url",
    "CITEWISE_INDEX": "index.path",
    "CITEWISE_STORE": "index.store",
    "OPENAI_BASE_URL": "llm.base_url",
    "OPENAI_API_KEY": "llm.api_key",
}


def _leaves(obj: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` of every leaf of a settings dataclass (dict values are leaves,
    except the per-embedder threshold table, whose entries are listed)."""
    for f in dataclasses.fields(obj):
        if f.name == "sources":
            continue
        value = getattr(obj, f.name)
        key = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(value):
            yield from _leaves(value, key + ".")
        elif isinstance(value, dict) and value and all(dataclasses.is_dataclass(v) for v in value.values()):
            for name in sorted(value):
                yield from _leaves(value[name], f"{key}.{name}.")
        else:
            yield key, value


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _coerce(value: Any, hint: Any, where: str) -> Any:
    """``value`` as type ``hint`` (from TOML, or from an environment string).

    Raises:
        ValueError: it cannot be (the message says what was expected).
    """
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null")):
            if len(args) < len(typing.get_args(hint)):
                return None
        return _coerce(value, args[0], where)
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
            return True
        if isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected true or false")
    if hint is int:
        if isinstance(value, bool):
            raise ValueError("expected a whole number")
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise ValueError("expected a whole number")
    if hint is float:
        if isinstance(value, bool):
            raise ValueError("expected a number")
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise ValueError("expected a number")
    if hint is str:
        if isinstance(value, str):
            return value
        raise ValueError("expected text")
    if origin is dict:
        if isinstance(value, str):
            import json

            try:
                value = json.loads(value)
            except ValueError:
                raise ValueError("expected a table (as JSON in an environment variable)") from None
        if not isinstance(value, dict):
            raise ValueError("expected a table")
        _, item = typing.get_args(hint)
        return {str(k): _coerce(v, item, where) for k, v in value.items()}
    if origin is list:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list):
            raise ValueError("expected a list")
        (item,) = typing.get_args(hint)
        return [_coerce(v, item, where) for v in value]
    raise ValueError(f"unsupported setting type {hint}")


def _unknown(name: str, choices: Iterable[str], where: str) -> InputError:
    near = difflib.get_close_matches(name, list(choices), n=1)
    hint = f"; did you mean '{near[0]}'?" if near else f"; known keys: {', '.join(sorted(choices))}"
    return InputError(where, f"unknown setting '{name}'{hint}")


def _apply_table(obj: Any, table: Mapping[str, Any], prefix: str, source: str, sources: dict[str, str]) -> None:
    """Set ``obj``'s fields from a TOML table (nested tables into nested dataclasses)."""
    hints = _hints(type(obj))
    names = {f.name for f in dataclasses.fields(obj)} - {"sources"}
    for name, value in table.items():
        key = f"{prefix}{name}"
        if name not in names:
            raise _unknown(key, [f"{prefix}{n}" for n in names], source)
        current = getattr(obj, name)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, dict):
                raise InputError(source, f"setting '{key}' is a table ([{key}]), not a single value")
            _apply_table(current, value, key + ".", source, sources)
        elif name == "thresholds" and isinstance(current, dict):
            if not isinstance(value, dict):
                raise InputError(source, f"setting '{key}' is a table of embedder names")
            for emb, entry in value.items():
                if not isinstance(entry, dict):
                    raise InputError(source, f"setting '{key}.{emb}' is a table (abstain = ..., passage_gate = ...)")
                target = current.setdefault(emb, EmbedderThresholds())
                _apply_table(target, entry, f"{key}.{emb}.", source, sources)
        else:
            try:
                setattr(obj, name, _coerce(value, hints[name], source))
            except ValueError as e:
                raise InputError(source, f"setting '{key}': {e}, got {value!r}") from None
            sources[key] = source


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as e:
        raise InputError(str(path), f"cannot read settings file ({e.strerror or e})") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(str(path), f"not valid TOML ({e})") from None


def env_name(key: str) -> str:
    """The environment variable of a dotted key: ``llm.judge.model`` → ``CITEWISE_LLM_JUDGE_MODEL``."""
    return "CITEWISE_" + key.replace(".", "_").upper()


def _set_key(settings: Settings, key: str, value: Any, source: str) -> None:
    parts = key.split(".")
    node: Any = settings
    for part in parts[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(part, EmbedderThresholds())
        elif dataclasses.is_dataclass(node) and hasattr(node, part):
            node = getattr(node, part)
        else:
            raise _unknown(key, [k for k, _ in _leaves(settings, "")], source)
    name = parts[-1]
    if not dataclasses.is_dataclass(node) or name not in {f.name for f in dataclasses.fields(node)}:
        raise _unknown(key, [k for k, _ in _leaves(settings, "")], source)
    try:
        setattr(node, name, _coerce(value, _hints(type(node))[name], source))
    except ValueError as e:
        raise InputError(source, f"setting '{key}': {e}, got {value!r}") from None
    settings.sources[key] = source


def setting_files(
    index_dir: str | Path | None = None, cwd: str | Path | None = None, env: Mapping[str, str] | None = None
) -> list[Path]:
    """The settings files :func:`load_settings` reads, in order (existing files only, except a
    ``$CITEWISE_CONFIG`` file, which must exist)."""
    env = os.environ if env is None else env
    files: list[Path] = []
    if index_dir is not None and (Path(index_dir) / FILE_NAME).is_file():
        files.append(Path(index_dir) / FILE_NAME)
    named = env.get(CONFIG_ENV)
    if named:
        p = Path(named).expanduser()
        if not p.is_file():
            raise InputError(f"${CONFIG_ENV}", f"{p}: no such settings file")
        files.append(p)
    else:
        here = Path(cwd or os.getcwd()) / FILE_NAME
        if here.is_file() and here not in files:
            files.append(here)
    return files


def load_settings(
    index_dir: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
) -> Settings:
    """Settings from defaults, files, environment and ``overrides`` (module docstring).

    Args:
        index_dir: the index folder whose ``citewise.toml`` applies (None: none).
        overrides: flag values by dotted key; None values are ignored (a flag not given).
        env: the environment (default ``os.environ``).
        cwd: the working directory (default the process's).

    Raises:
        InputError: a settings file that cannot be read, is not TOML, has an unknown key or a
            value of the wrong type; an environment variable or override of the wrong type.
    """
    env = os.environ if env is None else env
    settings = Settings()
    for path in setting_files(index_dir, cwd, env):
        _apply_table(settings, _read_toml(path), "", str(path), settings.sources)
    leaves = [k for k, _ in _leaves(settings, "")]
    for alias, key in ENV_ALIASES.items():
        if env.get(alias) and env_name(key) not in env:
            _set_key(settings, key, env[alias], f"env {alias}")
    for key in leaves:
        name = env_name(key)
        if name in env and ".thresholds." not in key:
            _set_key(settings, key, env[name], f"env {name}")
    for key, value in (overrides or {}).items():
        if value is not None:
            _set_key(settings, key, value, "flag")
    return settings


def to_toml(settings: Settings) -> str:
    """The effective settings as a ``citewise.toml`` text (secrets masked, None values left out)."""
    tables: dict[str, list[str]] = {}
    for key, value, source in settings.rows():
        head, _, name = key.rpartition(".")
        if value is not None:
            tables.setdefault(head, []).append(f"{name} = {_toml_value(value)}  # {source}")
    return "\n\n".join(f"[{head}]\n" + "\n".join(lines) for head, lines in tables.items()) + "\n"


def _toml_value(value: Any) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)
