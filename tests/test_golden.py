"""Golden-set loading and validation against an index; out-of-scope questions."""

from __future__ import annotations

import json

import pytest

from citewise.core import InputError
from citewise.demo import sample_dir
from citewise.evaluation.golden import load_golden, read_golden, read_out_of_scope


def write_lines(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


GOOD = {"id": "g1", "kind": "identifier", "text": "What does E-1004 mean?", "relevant": {"errors/E-1004": 2}}


class FakeStore:
    def __init__(self, docs, chunks=()):
        self.docs, self.chunks = set(docs), set(chunks)

    def documents(self):
        return {d: None for d in self.docs}

    def get_chunks(self, ids):
        return {c: None for c in ids if c in self.chunks}


def test_bundled_golden_set_loads_against_the_sample_index(sample_index):
    g = load_golden(sample_dir() / "golden.jsonl", sample_index.store)
    assert len(g.queries) == 40
    assert {k: len(v) for k, v in g.slices.items()} == {"all": 40, "identifier": 12, "keyword": 14, "paraphrase": 14}
    assert g.qrels["q04"] == {"errors/E-1004": 2}
    assert set(g.levels().values()) == {"doc"}


def test_chunk_ids_validate_against_the_index(sample_index, tmp_path):
    chunk_id = sample_index.search("E-1004", k=1, retriever="bm25")[0].chunk_id  # a real chunk id
    assert "#" in chunk_id
    ok = write_lines(tmp_path / "ok.jsonl", [{**GOOD, "relevant": {chunk_id: 2}}])
    assert load_golden(ok, sample_index.store).queries[0].level == "chunk"
    bad = write_lines(
        tmp_path / "bad.jsonl", [GOOD, {**GOOD, "id": "g2", "relevant": {"errors/E-1004#no-such-section": 2}}]
    )
    with pytest.raises(
        InputError,
        match=r"bad.jsonl:2: .*unknown chunk id 'errors/E-1004#no-such-section'.*document 'errors/E-1004' exists",
    ):
        load_golden(bad, sample_index.store)


def test_renamed_document_fails_naming_file_line_and_the_closest_id(tmp_path):
    path = write_lines(
        tmp_path / "golden.jsonl",
        [GOOD, "", {**GOOD, "id": "g2", "relevant": {"errors/E-1004": 2, "help/sso/okta-setup": 1}}],
    )
    store = FakeStore(["errors/E-1004", "help/sso/okta", "help/sso/onelogin"])
    with pytest.raises(InputError) as e:
        load_golden(path, store)
    assert e.value.line == 3
    assert str(e.value) == (
        f"{path}:3: query 'g2': unknown document id 'help/sso/okta-setup' "
        "(not in the index; renamed or removed?); did you mean 'help/sso/okta'?"
    )
    assert len(load_golden(write_lines(tmp_path / "ok.jsonl", [GOOD]), store).queries) == 1


@pytest.mark.parametrize(
    "row, message",
    [
        ({k: v for k, v in GOOD.items() if k != "kind"}, "missing field 'kind'"),
        ({**GOOD, "kind": " "}, "'kind' must be a non-empty string"),
        ({**GOOD, "kind": "all"}, "kind 'all' is reserved"),
        ({**GOOD, "relevant": {"errors/E-1004": 1}}, "needs at least one grade-2 id"),
        ({**GOOD, "relevant": {"errors/E-1004": 3}}, "must be 0, 1 or 2, got 3"),
        ({**GOOD, "relevant": {"errors/E-1004": True}}, "must be 0, 1 or 2, got True"),
        ({**GOOD, "relevant": {}}, "'relevant' must be a non-empty object"),
        ({**GOOD, "relevant": {"errors/E-1004": 2, "errors/E-1001#cause": 1}}, "mixes document and chunk ids"),
        ({**GOOD, "text": ""}, "'text' must be a non-empty string"),
        ('{"id": "g1", "kind": ', "invalid JSON"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_bad_lines_fail_with_file_and_line(tmp_path, row, message):
    path = write_lines(tmp_path / "golden.jsonl", [{**GOOD, "id": "g0"}, row])
    with pytest.raises(InputError, match=message) as e:
        read_golden(path)
    assert e.value.line == 2 and e.value.source == str(path)


def test_duplicate_ids_and_empty_files_are_rejected(tmp_path):
    with pytest.raises(InputError, match=r"golden.jsonl:3: duplicate query id 'g1' \(first on line 1\)"):
        read_golden(write_lines(tmp_path / "golden.jsonl", [GOOD, {**GOOD, "id": "g2"}, GOOD]))
    with pytest.raises(InputError, match="no queries"):
        read_golden(write_lines(tmp_path / "empty.jsonl", [""]))
    with pytest.raises(InputError, match="cannot read golden set"):
        read_golden(tmp_path / "absent.jsonl")


def test_out_of_scope_questions_load(tmp_path):
    oos = read_out_of_scope(sample_dir() / "out_of_scope.jsonl")
    assert len(oos) == 14 and oos["oos01"] == "What is the capital of Australia?"
    with pytest.raises(InputError, match=r"x.jsonl:2: duplicate id 'a'"):
        read_out_of_scope(write_lines(tmp_path / "x.jsonl", [{"id": "a", "text": "t"}, {"id": "a", "text": "u"}]))
