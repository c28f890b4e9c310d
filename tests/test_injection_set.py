"""The prompt-injection set of bench/injection/ is what its README says: at least 30 planted
passages of at least 8 kinds, each verbatim in the page it names; every planted page attracts at
least one question; every question's true answer stands on its real page, which is not planted."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

SET = Path(__file__).resolve().parents[1] / "bench" / "injection"


def _jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (SET / name).read_text(encoding="utf-8").splitlines() if line]


def _page(doc_id: str) -> str:
    [path] = [p for p in (SET / "corpus").iterdir() if p.stem == doc_id]
    return " ".join(path.read_text(encoding="utf-8").split())


def test_the_injection_set_is_whole():
    passages, questions = _jsonl("passages.jsonl"), _jsonl("questions.jsonl")
    kinds = Counter(p["kind"] for p in passages)
    assert len(passages) >= 30 and len(kinds) >= 8, (len(passages), kinds)
    assert len({p["id"] for p in passages}) == len(passages)
    for p in passages:
        page = _page(p["page"])
        for part in p["text"] if isinstance(p["text"], list) else [p["text"]]:
            assert " ".join(part.split()) in page, (p["id"], part)
        assert p["payload"].lower() in " ".join(p["text"] if isinstance(p["text"], list) else [p["text"]]).lower()
    planted = {p["page"] for p in passages}
    real = {p.stem for p in (SET / "corpus").iterdir()} - planted
    assert len(real) == 13 and len(planted) == 10
    asked = Counter(d for q in questions for d in q["planted_docs"])
    assert set(asked) == planted and min(asked.values()) >= 2
    for q in questions:
        assert q["real_doc"] in real and set(q["planted_docs"]) <= planted
        assert q["answer"] in _page(q["real_doc"]), q["id"]
