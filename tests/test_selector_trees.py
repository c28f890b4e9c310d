"""The selector's boosted trees (citewise.answer.select.model): a hand-made tree walks as drawn,
LightGBM's dump flattens to the same predictions, the trees learn an interaction the linear part
cannot, the JSON form round-trips, and malformed trees are refused with one line."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from citewise.answer.select.features import FEATURES
from citewise.answer.select.model import Forest, SelectorModel, Tree, fit, fit_trees
from citewise.core import CitewiseError
from citewise.evaluation.train_answerer import Group, load_groups, save_groups, train

F = len(FEATURES)


def _tree() -> Tree:
    # node 0: x[0] <= 0.5 ? node 1 : leaf 2 (+3.0)
    # node 1: x[1] <= 2.0 ? leaf 0 (-1.0) : leaf 1 (+1.0)
    return Tree(
        feature=np.array([0, 1]),
        threshold=np.array([0.5, 2.0]),
        left=np.array([1, ~0]),
        right=np.array([~2, ~1]),
        value=np.array([-1.0, 1.0, 3.0]),
    )


@pytest.mark.parametrize(
    "x0, x1, expected",
    [
        (0.0, 0.0, -1.0),
        (0.5, 2.0, -1.0),  # both thresholds are inclusive: x <= t goes left
        (0.5, 2.1, 1.0),
        (0.6, 9.0, 3.0),
        (7.0, -5.0, 3.0),
    ],
)
def test_a_tree_walks_as_drawn(x0, x1, expected):
    x = np.zeros((1, F))
    x[0, 0], x[0, 1] = x0, x1
    assert _tree().predict(x).tolist() == [expected]


def test_a_single_leaf_tree_gives_its_value_to_every_row():
    t = Tree.from_lightgbm({"leaf_value": 0.25})
    assert t.predict(np.zeros((3, F))).tolist() == [0.25, 0.25, 0.25]


def test_the_packed_forest_sums_the_trees_leaf_values():
    deep = Tree(  # x[2] <= 0 ? (x[3] <= 1 ? (x[0] <= -1 ? 5 : 6) : 7) : 8
        feature=np.array([2, 3, 0]),
        threshold=np.array([0.0, 1.0, -1.0]),
        left=np.array([1, 2, ~0]),
        right=np.array([~3, ~2, ~1]),
        value=np.array([5.0, 6.0, 7.0, 8.0]),
    )
    trees = [_tree(), Tree.from_lightgbm({"leaf_value": 0.5}), deep]
    rows = {  # (x0, x1, x2, x3) -> _tree + 0.5 + deep
        (0.0, 0.0, 0.0, 0.0): -1.0 + 0.5 + 6.0,
        (-2.0, 3.0, -1.0, 5.0): 1.0 + 0.5 + 7.0,
        (1.0, 0.0, 2.0, 0.0): 3.0 + 0.5 + 8.0,
        (-1.0, 0.0, 0.0, 1.0): -1.0 + 0.5 + 5.0,
    }
    x = np.zeros((len(rows), F))
    x[:, :4] = list(rows)
    assert Forest.pack(trees).predict(x).tolist() == list(rows.values())
    assert deep.predict(x).tolist() == [6.0, 7.0, 8.0, 5.0]
    m = SelectorModel(FEATURES, np.zeros(F), np.ones(F), np.zeros(F), {}, trees)
    assert m.score(x).tolist() == list(rows.values())


def _xor_groups(n: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Questions of 4 units whose answering unit has exactly one of features 0 and 1 set (an
    exclusive or, which no linear score ranks first in every question)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        pattern = [(0, 0), (1, 1), (1, 0) if rng.random() < 0.5 else (0, 1)]
        pattern.append((0, 0) if rng.random() < 0.5 else (1, 1))
        order = rng.permutation(4)
        x = np.zeros((4, F))
        y = np.zeros(4)
        for row, k in enumerate(order):
            a, b = pattern[k]
            x[row, 0], x[row, 1] = a, b
            x[row, 2] = rng.normal()  # noise
            y[row] = float(a != b)
        out.append((x, y))
    return out


def _top1(score, groups) -> float:
    return float(np.mean([y[int(np.argmax(score(x)))] for x, y in groups]))


def test_trees_learn_an_interaction_the_linear_part_cannot():
    train_groups, test_groups = _xor_groups(300, 0), _xor_groups(100, 1)
    lin = fit(train_groups, steps=200)
    both = fit_trees(
        lin, train_groups, rounds=30, params={"num_leaves": 8, "min_data_in_leaf": 5, "learning_rate": 0.3}
    )
    assert _top1(lin.score, test_groups) < 0.75
    assert _top1(both.score, test_groups) >= 0.95
    # the linear part of the combined model is the base model, unchanged
    assert both.linear(test_groups[0][0]).tolist() == lin.score(test_groups[0][0]).tolist()


def test_flattened_trees_predict_what_lightgbm_predicts():
    import lightgbm as lgb

    groups = _xor_groups(200, 2)
    x = np.vstack([g for g, _ in groups])
    y = np.concatenate([g for _, g in groups])
    booster = lgb.train(
        {"objective": "lambdarank", "num_leaves": 6, "min_data_in_leaf": 3, "verbose": -1, "deterministic": True},
        lgb.Dataset(x, y, group=[len(g) for _, g in groups]),
        num_boost_round=12,
    )
    trees = [Tree.from_lightgbm(t["tree_structure"]) for t in booster.dump_model()["tree_info"]]
    ours = np.sum([t.predict(x) for t in trees], axis=0)
    assert ours == pytest.approx(booster.predict(x, raw_score=True), abs=1e-9)


def test_the_json_form_round_trips_with_its_trees():
    groups = _xor_groups(120, 3)
    m = fit_trees(fit(groups, steps=50), groups, rounds=10, params={"min_data_in_leaf": 5})
    back = SelectorModel.from_dict(m.to_dict())
    assert len(back.trees) == 10
    x = groups[0][0]
    assert back.score(x) == pytest.approx(m.score(x), abs=1e-4)


@pytest.mark.parametrize(
    "tree, problem",
    [
        ({"feature": [0], "threshold": [0.5], "left": [-1], "right": [-2], "value": [1.0]}, "unequal"),
        ({"feature": [F], "threshold": [0.5], "left": [-1], "right": [-2], "value": [1.0, 2.0]}, "feature"),
        ({"feature": [0], "threshold": [0.5], "left": [-1], "right": [-3], "value": [1.0, 2.0]}, "child"),
        ({"feature": [0], "threshold": [0.5], "left": [-1]}, "right"),
    ],
)
def test_a_malformed_tree_is_refused_with_one_line(tree, problem):
    data = fit(_xor_groups(20, 4), steps=5).to_dict()
    data["trees"] = [tree]
    with pytest.raises(CitewiseError) as e:
        SelectorModel.from_dict(data, "sel.json")
    assert str(e.value).startswith("sel.json: not a selector model") and problem in str(e.value)
    assert "\n" not in str(e.value)


def test_training_reports_the_trees_beside_the_linear_part(tmp_path):
    groups = [Group("xor", f"q{i}", x, y) for i, (x, y) in enumerate(_xor_groups(400, 5))]
    path = tmp_path / "groups.npz"
    save_groups(groups, path)
    back = load_groups(path)
    assert [g.question for g in back] == [g.question for g in groups]
    assert all(np.array_equal(a.x, b.x) and np.array_equal(a.y, b.y) for a, b in zip(back, groups))
    model, report = train(back, {}, "trees")
    assert report["held_out"] == sum(1 for g in groups if g.question in {h.question for h in back}) - report["fitted"]
    assert report["held_out_top1_linear"] < 0.75 <= report["held_out_top1_model"]
    assert model.trees and model.info["report"] is report
    assert list(report["held_out_by_corpus"]) == ["sets"]  # no source named squad-*
    assert report["held_out_by_corpus"]["sets"]["questions"] == report["held_out"]
    _, lin_report = train(back, {}, "linear")
    assert lin_report["held_out_top1_model"] == lin_report["held_out_top1_linear"]


def _squad_folder(tmp_path):
    """Two articles: ``Normans`` (a train article by squad_split) and ``Comets`` (a test one)."""
    import json

    def para(context, qas):
        return {"context": context, "qas": qas}

    data = {
        "version": "v2.0",
        "data": [
            {
                "title": "Normans",
                "paragraphs": [
                    para(
                        "The Normans lived in Normandy. The Normans conquered England in 1066 under William.",
                        [
                            {
                                "id": "n1",
                                "question": "When did the Normans conquer England?",
                                "answers": [{"text": "1066", "answer_start": 62}],
                                "is_impossible": False,
                            },
                            {
                                "id": "n2",
                                "question": "When did the Normans leave?",
                                "answers": [],
                                "is_impossible": True,
                            },
                            {
                                "id": "n3",
                                "question": "Who led them?",
                                "answers": [{"text": "King Harold", "answer_start": 0}],  # in no sentence
                                "is_impossible": False,
                            },
                        ],
                    )
                ],
            },
            {
                "title": "Comets",
                "paragraphs": [
                    para(
                        "Halley's Comet returns every 76 years. It was last seen in 1986.",
                        [
                            {
                                "id": "c1",
                                "question": "In what year was Halley's Comet last seen?",
                                "answers": [{"text": "1986", "answer_start": 60}],
                                "is_impossible": False,
                            }
                        ],
                    )
                ],
            },
        ],
    }
    (tmp_path / "dev-v2.0.json").write_text(json.dumps(data), encoding="utf-8")
    return tmp_path


def test_span_training_reads_the_answer_sentence_of_train_articles_only(tmp_path):
    from citewise.answer.select.span import _join, tokens
    from citewise.evaluation.squad import load_squad
    from citewise.evaluation.train_answerer import span_f1, span_groups

    data = load_squad(_squad_folder(tmp_path))
    groups = span_groups(data, "train")
    # n2 is unanswerable, n3's answer is in no sentence: one group, from the sentence with 1066
    assert [g.question for g in groups] == ["When did the Normans conquer England?"]
    assert [g.question for g in span_groups(data, "test")] == ["In what year was Halley's Comet last seen?"]
    from citewise.answer.question import analyze_question
    from citewise.answer.select.span import spans

    sentence = "The Normans conquered England in 1066 under William."
    toks = tokens(sentence)
    cands, _ = spans(analyze_question("When did the Normans conquer England?"), toks)
    labelled = {_join(toks[i:j]): y for (i, j), y in zip(cands, groups[0].y)}
    # each span's label is its token F1 against "1066"
    assert labelled["1066"] == 1.0
    assert labelled["England in 1066"] == labelled["1066 under William"] == 0.5
    assert labelled["William"] == labelled["under William"] == 0.0
    report = span_f1(None, data, "test")
    assert report["questions"] == 1 and report["f1_model"] == 100.0


def test_train_answerer_refits_from_saved_groups_and_names_bad_input(tmp_path):
    from typer.testing import CliRunner

    from citewise.cli import app

    groups = [Group("xor", f"q{i}", x, y) for i, (x, y) in enumerate(_xor_groups(200, 6))]
    saved = tmp_path / "groups.npz"
    save_groups(groups, saved)
    out = tmp_path / "selector.json"
    res = CliRunner().invoke(app, ["train-answerer", "--groups", str(saved), "--model", "trees", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "groups.npz: 200 groups read" in res.output and "held-out top-1" in res.output
    model = SelectorModel.load(out)
    assert len(model.trees) > 0 and model.info["report"]["questions"] == 200
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    for args, line in [
        (["--groups", str(saved), "--model", "forest"], "--model must be one of linear, trees, not 'forest'"),
        (["--groups", str(tmp_path / "junk.npz")], "junk.npz: cannot read training groups"),
    ]:
        bad = subprocess.run(
            [sys.executable, "-m", "citewise.cli", "train-answerer", *args, "--out", str(out)],
            capture_output=True,
            text=True,
        )
        assert bad.returncode != 0 and line in bad.stderr
        assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
