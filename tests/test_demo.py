"""README command 1: the demo on the bundled sample corpus, with the real MiniLM embedder."""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

from citewise.demo import TRY_QUESTION, sample_dir


#: A bare environment for the CLI (no PATH), keeping PYTHONPATH so the code under test runs.
ENV = {"COLUMNS": "200", "PATH": "", **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}


def test_demo_answers_cites_abstains_and_filters(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "demo", "--index", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=600,
        env=ENV,
    )
    assert res.returncode == 0, res.stderr
    out = res.stdout
    script = yaml.safe_load((sample_dir() / "demo.yaml").read_text())
    sections = out.split("───")
    text = "\n".join(sections)
    assert "60 added" in out
    assert out.count("Sources:") >= 4  # three sample answers + the finance answer
    # abstention on the out-of-scope question
    after_abstain = out.split(script["abstain"][0]["text"], 1)[1]
    assert after_abstain.lstrip().startswith("I have no document on this.")
    # the restricted document is cited only for the finance principal
    anon, finance = out.split(script["restricted"]["text"])[1:3]
    assert "internal/" not in anon
    assert "[doc:internal/finance/refund-approval-matrix]" in finance
    assert "Traceback" not in res.stderr and text
    # the E-1003 answer quotes and cites the error's page (which sentence opens it is measured by
    # bench/answer_cases.py, case e1003-opens-with-meaning)
    e1003 = out.split(script["questions"][2]["text"], 1)[1].split("Sources:", 1)[0]
    assert "[doc:errors/E-1003]" in e1003 and "signature" in e1003, e1003[:200]
    # the closing hint runs as pasted: a real question, answered with a citation
    hint = next(ln for ln in out.splitlines() if ln.startswith("Try it yourself:"))
    assert f"ask 'How do I rotate the SAML signing certificate in Okta?' --index {tmp_path / 'demo'}" in hint
    tried = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "ask", TRY_QUESTION, "--index", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=300,
        env=ENV,
    )
    assert tried.returncode == 0 and "[doc:" in tried.stdout, tried.stdout + tried.stderr
    # the answer quotes the Okta guide's rotation section (whether all four steps are quoted is
    # measured by bench/answer_cases.py, case okta-rotation-steps)
    assert "[doc:help/sso/okta]" in tried.stdout and "generate a new certificate" in tried.stdout, tried.stdout


def test_the_try_it_hint_names_the_command_as_it_was_run(tmp_path, monkeypatch):
    """After the README's install, `citewise` is not on PATH: the hint gives `.venv/bin/citewise`."""
    from citewise.demo import command_name

    script = tmp_path / ".venv" / "bin" / "citewise"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert command_name(".venv/bin/citewise") == ".venv/bin/citewise"
    monkeypatch.setenv("PATH", str(script.parent))
    assert command_name(str(script)) == "citewise"  # the one on PATH is this one
    assert command_name("/usr/lib/python3/citewise/cli.py") == "citewise"  # python -m citewise.cli
    assert command_name("") == "citewise"


def test_the_demo_settings_follow_the_installation_and_leave_the_users_alone(tmp_path):
    """A demo index keeps working after the checkout that first ran the demo is deleted: the
    settings file the demo wrote names that checkout's record tools, and the next run rewrites
    it; a settings file the user wrote is never touched."""
    from citewise.demo import DEMO_SETTINGS_MARK, configure_sample_records
    from citewise.tools.records import sample_tools_yaml

    stale = tmp_path / "demo"
    stale.mkdir()
    gone = "/gone/checkout/src/citewise/sample/record_tools.yaml"
    (stale / "citewise.toml").write_text(
        f'{DEMO_SETTINGS_MARK}\n[records]\ndatabase = "/gone/records.db"\ntemplates = "{gone}"\n', encoding="utf-8"
    )
    configure_sample_records(stale)
    text = (stale / "citewise.toml").read_text(encoding="utf-8")
    assert text.startswith(DEMO_SETTINGS_MARK) and gone not in text and "/gone/records.db" not in text
    assert str(sample_tools_yaml()) in text

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "citewise.toml").write_text('[records]\ntemplates = "/srv/my_tools.yaml"\n', encoding="utf-8")
    configure_sample_records(mine)
    assert (mine / "citewise.toml").read_text(encoding="utf-8") == '[records]\ntemplates = "/srv/my_tools.yaml"\n'
