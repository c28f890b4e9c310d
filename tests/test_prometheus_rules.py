"""deploy/prometheus/citewise.rules.yml is valid for promtool and its alerts fire on the series
they watch (the design document's RAGFaithfulnessLow: 30-minute average below 0.80 for 10 minutes),
and every metric the rules read is one the service exports."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from citewise.service.metrics import Metrics

RULES = Path(__file__).resolve().parents[1] / "deploy" / "prometheus"


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("promtool is missing: .ci/run installs Debian's prometheus package")
        pytest.skip("promtool not installed (apt-get install -y prometheus)")
    return path


def test_promtool_checks_the_rules():
    p = subprocess.run(
        [promtool(), "check", "rules", str(RULES / "citewise.rules.yml")], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SUCCESS: 5 rules found" in p.stdout


def test_promtool_unit_tests_fire_the_alerts():
    p = subprocess.run(
        [promtool(), "test", "rules", "citewise.rules.test.yml"], cwd=RULES, capture_output=True, text=True
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SUCCESS" in p.stdout


def test_the_documents_alert_and_the_metrics_it_reads():
    groups = yaml.safe_load((RULES / "citewise.rules.yml").read_text())["groups"]
    rules = {r["alert"]: r for g in groups for r in g["rules"]}
    low = rules["RAGFaithfulnessLow"]
    assert low["expr"] == "avg_over_time(citewise_rag_faithfulness_score[30m]) < 0.80" and low["for"] == "10m"
    # the exposition a scrape gets: the server's metrics and the per-scrape index gauges
    status = {"chunks": 3, "documents": 2, "lag_s": {"max": 0.0}, "staleness_s": None}
    exposition = Metrics().render(status).decode()
    exported = set(re.findall(r"^# TYPE (citewise_[a-z_]+) ", exposition, re.M))
    exported |= {n + suffix for n in exported for suffix in ("_total", "_count", "_sum")}
    used = {name for r in rules.values() for name in re.findall(r"citewise_[a-z_]+", r["expr"])}
    assert used and used <= exported, used - exported
