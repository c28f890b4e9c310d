"""SQuAD 2.0 answer evaluation: official normalisation and scores, metrics, a tiny end-to-end run."""

from __future__ import annotations

import json

import pytest

from citewise.core import InputError
from citewise.evaluation.squad import (
    Prediction,
    SquadQuestion,
    _metrics,
    best_scores,
    choose_squad_threshold,
    evaluate_squad,
    exact_match,
    f1_score,
    load_squad,
    normalize_answer,
    sample_questions,
)
from citewise.index import Index

from conftest import shared_dataset


def test_official_normalisation_and_scores():
    assert normalize_answer("  The Normans, of  NORMANDY! ") == "normans of normandy"
    assert normalize_answer("an apple a day") == "apple day"
    assert exact_match("the Normans", "Normans.") == 1 and exact_match("Norman", "Normans") == 0
    # prediction "in 10th century" vs gold "10th century": common 2, p = 2/3, r = 1 -> F1 = 0.8
    assert f1_score("in the 10th century", "10th century") == pytest.approx(0.8)
    assert f1_score("", "") == 1.0 and f1_score("x", "") == 0.0 and f1_score("", "x") == 0.0
    assert best_scores("France", ["Normandy", "france", "in France"]) == (1, 1.0)
    assert best_scores("", []) == (1, 1.0) and best_scores("France", []) == (0, 0.0)


def q(qid, impossible=False, doc="A/0", answers=("Rollo",)):
    return SquadQuestion(qid, "who?", doc, () if impossible else answers, impossible)


def test_metrics_hand_computed():
    preds = [
        Prediction(q("1"), 0.9, True, "Rollo", "Rollo led them. [doc:A/0]", ["A/0"]),  # EM 1
        Prediction(q("2"), 0.8, True, "King Rollo I", "King Rollo I. [doc:A/1]", ["A/1", "A/0"]),  # F1 0.5
        Prediction(q("3"), 0.1, True, "x", "x", ["B/9"]),  # abstains: 0
        Prediction(q("4", True), 0.05, True, "y", "y", ["A/0"]),  # abstains: right
        Prediction(q("5", True), 0.7, True, "Paris", "Paris. [doc:A/0]", ["A/0"]),  # answers: wrong
    ]
    m = _metrics(preds, threshold=0.5)
    assert (m["questions"], m["answerable"], m["unanswerable"]) == (5, 3, 2)
    assert m["exact"] == pytest.approx(100 * 2 / 5) and m["f1"] == pytest.approx(100 * 2.5 / 5)
    assert m["HasAns_exact"] == pytest.approx(100 / 3, abs=1e-3) and m["HasAns_f1"] == pytest.approx(50.0)
    assert m["NoAns_exact"] == 50.0 and m["no_answer_accuracy"] == 0.5
    assert (m["abstention_precision"], m["abstention_recall"]) == (0.5, 0.5)
    # answered answerable: q1 cites [A/0] (gold), q2 cites [A/1, A/0]: 2 gold of 3 cited
    assert m["citation_precision"] == pytest.approx(0.6667) and m["gold_cited"] == 1.0
    assert m["answer_in_quote"] == 1.0
    # threshold: abstaining below 0.75 keeps q1, q2 (gold cited) and abstains q3 (wrong paragraph), q4, q5:
    # 2 + 2 = 4, the best; midpoint of (0.7, 0.8)
    assert choose_squad_threshold(preds) == 0.75


SQUAD = {
    "version": "v2.0",
    "data": [
        {
            "title": "Normans",
            "paragraphs": [
                {
                    "context": "The Normans were the people who gave their name to Normandy, a region in France. "
                    "They descended from Norse raiders led by their leader Rollo.",
                    "qas": [
                        {
                            "id": "n1",
                            "question": "Who led the Norse raiders that settled Normandy?",
                            "answers": [{"text": "Rollo", "answer_start": 150}],
                            "is_impossible": False,
                        },
                        {
                            "id": "n2",
                            "question": "Who led the Danish fleet to Iceland?",
                            "answers": [],
                            "is_impossible": True,
                        },
                    ],
                },
                {
                    "context": "The Norman dynasty had a major political influence on medieval Europe. "
                    "In 1066 the Normans conquered England at the Battle of Hastings.",
                    "qas": [
                        {
                            "id": "n3",
                            "question": "In what year did the Normans conquer England?",
                            "answers": [{"text": "1066", "answer_start": 75}],
                            "is_impossible": False,
                        }
                    ],
                },
            ],
        },
        {
            "title": "Oxygen",
            "paragraphs": [
                {
                    "context": "Oxygen is a chemical element with symbol O and atomic number 8. "
                    "It was discovered by Carl Wilhelm Scheele in 1771.",
                    "qas": [
                        {
                            "id": "o1",
                            "question": "What is the atomic number of oxygen?",
                            "answers": [{"text": "8", "answer_start": 62}],
                            "is_impossible": False,
                        }
                    ],
                }
            ],
        },
    ],
}


def test_tiny_end_to_end_run(tmp_path):
    (tmp_path / "dev-v2.0.json").write_text(json.dumps(SQUAD))
    data = load_squad(tmp_path)
    assert [d.doc_id for d in data.documents] == ["Normans/0", "Normans/1", "Oxygen/0"]
    assert [(x.qid, x.doc_id, x.answers, x.impossible) for x in data.questions] == [
        ("n1", "Normans/0", ("Rollo",), False),
        ("n2", "Normans/0", (), True),
        ("n3", "Normans/1", ("1066",), False),
        ("o1", "Oxygen/0", ("8",), False),
    ]
    idx = Index.open(tmp_path / "idx", embedder="hashing")
    r = evaluate_squad(idx, data, threshold=0.0, k=2)
    assert r["paragraphs"] == 3 and r["all"]["questions"] == 4 and r["threshold"] == 0.0
    m = r["all"]
    # n2 names "Danish" and "Iceland", which no paragraph mentions: the unknown-name rule abstains
    assert (m["NoAns_exact"], m["abstention_precision"], m["abstention_recall"]) == (100.0, 1.0, 1.0)
    # short answers by answer type: who -> "Rollo" (EM), what year -> "1066" (EM),
    # "what is the atomic number" is not a number question for the heuristic -> "O" (miss)
    assert (m["HasAns_exact"], m["exact"], m["gold_cited"], m["citation_precision"], m["answer_in_quote"]) == (
        66.6667,
        75.0,
        1.0,
        1.0,
        1.0,
    )
    again = evaluate_squad(idx, data, threshold=0.0, k=2)
    assert again["chunks_embedded"] == 0 and again["all"] == r["all"]  # incremental, deterministic
    assert [x.qid for x in sample_questions(data.questions, 2)] == [
        x.qid for x in sample_questions(list(reversed(data.questions)), 2)
    ]


def test_bad_input_is_one_clear_error(tmp_path):
    with pytest.raises(InputError, match="no SQuAD v2 file here"):
        load_squad(tmp_path)
    (tmp_path / "dev-v2.0.json").write_text('{"data": [{"title": "T", "paragraphs": [{"qas": []}]}]}')
    with pytest.raises(InputError, match=r"data\[0\] \('T'\): missing field 'context'"):
        load_squad(tmp_path)
    (tmp_path / "dev-v2.0.json").write_text("not json")
    with pytest.raises(InputError, match="not a SQuAD v2 file"):
        load_squad(tmp_path)


def test_real_dev_set_counts():
    data = load_squad(shared_dataset("squad-v2-dev"))
    assert len(data.documents) == 1204 and len(data.questions) == 11873
    assert sum(x.impossible for x in data.questions) == 5945
    assert len({d.doc_id for d in data.documents}) == 1204
