"""Settings: defaults, then citewise.toml files (index, then working directory or
$CITEWISE_CONFIG), then the environment, then flags; every value knows its source."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from citewise.core import InputError
from citewise.settings import Settings, env_name, load_settings, to_toml


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_and_their_source(tmp_path):
    s = load_settings(None, env={}, cwd=tmp_path)
    assert (s.answer.k, s.search.k, s.answer.generator, s.llm.read_timeout_s) == (5, 10, "extractive", 60.0)
    assert s.source("answer.k") == "default" and s.threshold_for("hashing-256").abstain == 0.0594
    assert s.threshold_for("all-MiniLM-L6-v2-int8").passage_gate == 0.09
    assert s.threshold_for("some-other-model").abstain == 0.25


def test_each_source_overrides_the_one_before(tmp_path):
    index = tmp_path / "idx"
    write(index / "citewise.toml", "[answer]\nk = 7\nretriever = 'bm25'\n[llm]\nmodel = 'from-index'\n")
    write(tmp_path / "work" / "citewise.toml", "[answer]\nk = 8\n[llm]\nbase_url = 'http://127.0.0.1:9/v1'\n")
    env = {"CITEWISE_LLM_MODEL": "from-env", "CITEWISE_ANSWER_GENERATOR": "llm"}
    s = load_settings(index, {"answer.generator": None, "search.k": 3}, env=env, cwd=tmp_path / "work")
    assert (s.answer.k, s.answer.retriever, s.llm.model, s.llm.base_url) == (
        8,
        "bm25",
        "from-env",
        "http://127.0.0.1:9/v1",
    )
    assert (s.answer.generator, s.search.k) == ("llm", 3)  # a None flag is a flag not given
    assert s.source("answer.k") == str(tmp_path / "work" / "citewise.toml")
    assert s.source("answer.retriever") == str(index / "citewise.toml")
    assert s.source("llm.model") == "env CITEWISE_LLM_MODEL" and s.source("search.k") == "flag"


def test_config_env_replaces_the_working_directory_file(tmp_path):
    write(tmp_path / "citewise.toml", "[answer]\nk = 8\n")
    named = write(tmp_path / "other.toml", "[answer]\nk = 9\n")
    assert load_settings(env={"CITEWISE_CONFIG": str(named)}, cwd=tmp_path).answer.k == 9
    with pytest.raises(InputError, match="no such settings file"):
        load_settings(env={"CITEWISE_CONFIG": str(tmp_path / "missing.toml")}, cwd=tmp_path)


def test_aliases_and_per_use_llm_settings(tmp_path):
    write(tmp_path / "citewise.toml", "[llm]\nmodel = 'small'\nread_timeout_s = 300\n[llm.judge]\nmodel = 'big'\n")
    env = {"CITEWISE_DB": "/data/records.db", "OPENAI_API_KEY": "sk-x", "CITEWISE_LLM_ROUTER_TEMPERATURE": "0.5"}
    s = load_settings(env=env, cwd=tmp_path)
    assert s.records.database == "/data/records.db" and s.source("records.database") == "env CITEWISE_DB"
    judge, router, answer = s.llm.for_use("judge"), s.llm.for_use("router"), s.llm.for_use("answer")
    assert (judge.model, judge.read_timeout_s, router.model, router.temperature) == ("big", 300.0, "small", 0.5)
    assert (answer.model, answer.api_key) == ("small", "sk-x")
    assert env_name("llm.judge.model") == "CITEWISE_LLM_JUDGE_MODEL"
    # secrets never printed
    assert ("llm.api_key", "***", "env OPENAI_API_KEY") in s.rows() and "sk-x" not in to_toml(s)


@pytest.mark.parametrize(
    "text, message",
    [
        ("[answer]\nkk = 3\n", "unknown setting 'answer.kk'; did you mean 'answer.k'?"),
        ("[answer]\nk = 'five'\n", "setting 'answer.k': expected a whole number, got 'five'"),
        ("[answr]\nk = 3\n", "unknown setting 'answr'; did you mean 'answer'?"),
        ("answer = 3\n", "setting 'answer' is a table ([answer]), not a single value"),
        ("[answer\nk = 3\n", "not valid TOML"),
        (
            "[answer.thresholds.minilm]\nabstain = 'x'\n",
            "setting 'answer.thresholds.minilm.abstain': expected a number",
        ),
    ],
)
def test_a_bad_file_is_one_line_naming_it_and_the_key(tmp_path, text, message):
    path = write(tmp_path / "citewise.toml", text)
    with pytest.raises(InputError) as e:
        load_settings(env={}, cwd=tmp_path)
    assert str(e.value).startswith(f"{path}: ") and message in str(e.value) and "\n" not in str(e.value)


def test_a_bad_environment_value_names_the_variable(tmp_path):
    with pytest.raises(InputError, match=r"^env CITEWISE_ANSWER_K: setting 'answer.k': expected a whole number"):
        load_settings(env={"CITEWISE_ANSWER_K": "many"}, cwd=tmp_path)


def test_thresholds_table_and_explicit_threshold_reach_the_index(tmp_path):
    from citewise.api import Citewise
    from citewise.index import Index

    idx = Index.open(tmp_path / "idx", embedder="hashing")
    assert idx.abstain_threshold == 0.0594
    write(tmp_path / "idx" / "citewise.toml", "[answer.thresholds.hashing]\nabstain = 0.2\npassage_gate = 0.05\n")
    cw = Citewise.open(tmp_path / "idx")
    assert (cw.index.abstain_threshold, cw.index.passage_gate) == (0.2, 0.05)
    idx.set_abstain_threshold(0.3)  # calibrated for this index: wins over the table
    assert Citewise.open(tmp_path / "idx").index.abstain_threshold == 0.3
    explicit = Citewise.open(tmp_path / "idx", overrides={"answer.threshold": 0.4})  # the user said so
    assert explicit.index.abstain_threshold == 0.4
    assert explicit.index.answerer().threshold == 0.4 and explicit.index.answerer().passage_gate == 0.05


def test_config_show_prints_values_and_sources(tmp_path, monkeypatch):
    from citewise.cli import app

    write(tmp_path / "citewise.toml", "[answer]\nk = 6\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITEWISE_LLM_API_KEY", "secret-key")
    run = CliRunner().invoke(app, ["config", "show", "--json"])
    assert run.exit_code == 0, run.output
    data = json.loads(run.stdout)
    rows = {r["key"]: (r["value"], r["source"]) for r in data["settings"]}
    assert rows["answer.k"] == (6, str(tmp_path / "citewise.toml")) and rows["search.k"] == (10, "default")
    assert rows["llm.api_key"] == ("***", "env CITEWISE_LLM_API_KEY") and "secret-key" not in run.stdout
    assert data["files"] == [str(tmp_path / "citewise.toml")]
    toml = CliRunner().invoke(app, ["config", "show", "--toml"]).stdout
    import tomllib

    assert tomllib.loads(toml)["answer"]["k"] == 6


def test_config_show_table_names_the_folder_an_empty_index_path_means(tmp_path, monkeypatch):
    """The table shows what an empty ``index.path`` resolves to (the --index folder, else the
    default data folder), in parentheses; the JSON keeps the raw empty value."""
    from citewise.cli import app
    from citewise.core import default_index_dir

    def cell(output: str, key: str) -> tuple[str, str]:
        """The value and source cells of ``key``'s row, its wrapped lines joined."""
        rows = [[c.strip() for c in ln.split("│")[1:4]] for ln in output.splitlines() if ln.count("│") >= 4]
        i = next(n for n, r in enumerate(rows) if r[0] == key)
        value, source = rows[i][1], rows[i][2]
        for r in rows[i + 1 :]:
            if r[0]:
                break
            value, source = value + r[1], source + r[2]
        return value, source

    from citewise.cli.common import out

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(out, "width", 100)  # whatever terminal the tests run in
    default = CliRunner().invoke(app, ["config", "show"])
    assert cell(default.stdout, "index.path") == (f"({default_index_dir()})", "default")
    given = CliRunner().invoke(app, ["config", "show", "--index", str(tmp_path / "idx")])
    assert cell(given.stdout, "index.path")[0] == f"({tmp_path / 'idx'})"
    raw = json.loads(CliRunner().invoke(app, ["config", "show", "--json"]).stdout)
    assert {r["key"]: r["value"] for r in raw["settings"]}["index.path"] == ""


def test_settings_are_plain_dataclasses():
    s = Settings()
    assert s.get("answer.k") == 5 and s.get("answer.thresholds.hashing.abstain") == 0.0594
