"""Judge agreement with hand labels: Cohen's kappa cross-checked with scikit-learn, and the gate
that refuses a judge measured on too few labels, for another model, or below the configured kappa."""

from __future__ import annotations

import json
import random

import pytest

from citewise.core import InputError
from citewise.evaluation.judge_agreement import cohen_kappa, judge_identity, read_labels, require_agreement


@pytest.mark.parametrize("seed", range(6))
def test_kappa_equals_scikit_learn(seed):
    from sklearn.metrics import cohen_kappa_score  # here: scikit-learn's import is a second of collection

    rng = random.Random(seed)
    n = rng.randint(5, 60)
    a = [rng.random() < 0.6 for _ in range(n)]
    b = [x if rng.random() < 0.8 else not x for x in a]
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_kappa_hand_computed_and_degenerate_cases():
    # 30 items: both say faithful 18, both say not 6, they disagree on 6 (3 each way)
    a = [True] * 18 + [False] * 6 + [True] * 3 + [False] * 3
    b = [True] * 18 + [False] * 6 + [False] * 3 + [True] * 3
    # p_o = 24/30 = 0.8; p_a = p_b = 21/30 = 0.7; p_e = 0.49 + 0.09 = 0.58; kappa = 0.22 / 0.42
    assert cohen_kappa(a, b) == pytest.approx(0.22 / 0.42)
    assert cohen_kappa([True, True], [True, True]) == 1.0
    with pytest.raises(ValueError):
        cohen_kappa([], [])


class _Cfg:
    model = "qwen2.5-0.5b-instruct"


class _Model:
    config = _Cfg()


class _Judge:
    model = _Model()


def _record(tmp_path, n=32, kappa=0.7, model="qwen2.5-0.5b-instruct"):
    who = {**judge_identity(_Judge()), "model": model}
    f = tmp_path / "agreement.json"
    f.write_text(json.dumps({"judge": who, "n": n, "kappa": kappa, "accuracy": 0.85}))
    return f


def test_gate_accepts_a_measured_judge_and_refuses_the_rest(tmp_path):
    assert require_agreement(_record(tmp_path), _Judge(), 0.6)["kappa"] == 0.7
    with pytest.raises(InputError, match="kappa 0.550 .* below the configured 0.60"):
        require_agreement(_record(tmp_path, kappa=0.55), _Judge(), 0.6)
    with pytest.raises(InputError, match="measured on 29 labels, fewer than 30"):
        require_agreement(_record(tmp_path, n=29), _Judge(), 0.6)
    with pytest.raises(InputError, match="the record is for judge other-model"):
        require_agreement(_record(tmp_path, model="other-model"), _Judge(), 0.6)
    with pytest.raises(InputError, match="agreement with hand labels is unknown"):
        require_agreement(None, _Judge())
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    with pytest.raises(InputError, match="not a judge agreement record"):
        require_agreement(bad, _Judge())


def test_labels_reader_names_line_and_field(tmp_path):
    f = tmp_path / "labels.jsonl"
    f.write_text(json.dumps({"id": "a", "question": "q", "answer": "x", "contexts": ["c"], "faithful": "yes"}) + "\n")
    with pytest.raises(InputError, match=r"labels.jsonl:1: field 'faithful': must be true or false"):
        read_labels(f)


def test_ragas_floors_refuse_an_unmeasured_or_weak_judge_before_any_llm_call(tmp_path):
    """The gate runs before the judge is asked anything: the endpoint below does not exist."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    data = Path(__file__).parent / "data" / "ragas" / "redis.jsonl"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CITEWISE_", "OPENAI_"))},
        "CITEWISE_LLM_JUDGE_BASE_URL": "http://127.0.0.1:9/v1",
        "CITEWISE_LLM_JUDGE_MODEL": "qwen2.5-0.5b-instruct",
    }
    floors = tmp_path / "floors.yaml"
    floors.write_text("floors:\n  faithfulness: 0.85\n")
    run = lambda: subprocess.run(
        [sys.executable, "-m", "citewise.cli", "eval", "ragas", str(data), "--floors", str(floors)],  # noqa: E731
        capture_output=True,
        text=True,
        env=env,
    )
    p = run()
    assert p.returncode == 2 and "agreement with hand labels is unknown" in p.stderr and "Traceback" not in p.stderr
    _record(tmp_path, kappa=0.41)
    floors.write_text("floors:\n  faithfulness: 0.85\njudge:\n  agreement: agreement.json\n  min_kappa: 0.6\n")
    p = run()
    assert p.returncode == 2 and "kappa 0.410" in p.stderr and "below the configured 0.60" in p.stderr
    floors.write_text("floors:\n  faithfulness: 1.5\n")
    p = run()
    assert p.returncode == 2 and "floors.faithfulness: must be a number in [0, 1], got 1.5" in p.stderr


def test_check_floors_treats_noise_as_a_ceiling_and_missing_as_a_breach():
    from citewise.evaluation.ragas_gate import RagasFloors, check_floors

    fl = RagasFloors({"faithfulness": 0.8, "noise_sensitivity": 0.15, "context_recall": 0.7}, None)
    means = {"faithfulness": {"mean": 0.75}, "noise_sensitivity": {"mean": 0.2}, "context_recall": {"mean": None}}
    assert check_floors(means, fl) == [
        "faithfulness: 0.750 < floor 0.8",
        "noise_sensitivity: 0.200 > ceiling 0.15",
        "context_recall: not measured (floor 0.7)",
    ]
    assert (
        check_floors(
            {"faithfulness": {"mean": 0.9}, "noise_sensitivity": {"mean": 0.1}, "context_recall": {"mean": 0.7}}, fl
        )
        == []
    )
