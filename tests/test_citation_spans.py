"""Citation spans per sentence: each marker links to its own sentence's offsets (issue 35)."""

from __future__ import annotations


from citewise.answer.citations import enforce_citations, marker_links
from citewise.answer.context import Context, ContextChunk

TEXT = "Refunds take 30 days. Enterprise refunds need approval. Chargebacks go to finance."


def _ctx():
    # the chunk starts at offset 100 of its source file
    return Context("q", [ContextChunk("a#1", "a", "A", "", "", ("A",), TEXT, 100, 100 + len(TEXT), 1)], 1000)


def test_three_sentences_of_one_document_link_to_three_spans():
    checked = enforce_citations(
        "Refunds take 30 days [doc:a]. Enterprise refunds need approval [doc:a]. Chargebacks go to finance [doc:a].",
        _ctx(),
    )
    assert checked.outcome == "answered"
    (c,) = checked.citations
    assert [(s.sentence, s.start, s.end) for s in c.spans] == [(0, 100, 121), (1, 122, 155), (2, 156, 182)]
    links = marker_links(checked.text, checked.citations)
    assert len(links) == 3
    for link, sentence in zip(
        links, ["Refunds take 30 days.", "Enterprise refunds need approval.", "Chargebacks go to finance."]
    ):
        assert TEXT[link["start"] - 100 : link["end"] - 100] == sentence
        assert checked.text[link["marker_start"] : link["marker_end"]] == "doc:a" and link["number"] == 1
    # the citation's own start/end stay the first sentence's (what one-span readers show)
    assert (c.start, c.end) == (100, 121)


def test_generator_spans_win_and_an_unquoted_sentence_cites_the_chunk():
    checked = enforce_citations(
        "Refunds take a month [doc:a]. Enterprise refunds need approval [doc:a].",
        _ctx(),
        {"Refunds take a month.": (0, 21)},
    )
    assert [(s.start, s.end) for s in checked.citations[0].spans] == [(100, 121), (122, 155)]
    loose = enforce_citations("Refunds are slow [doc:a].", _ctx())
    assert [(s.start, s.end) for s in loose.citations[0].spans] == [(100, 100 + len(TEXT))]


def test_ask_json_markers_each_point_into_their_own_sentence(sample_index, tmp_path):
    from citewise.api import Citewise
    from citewise.service.payloads import answer_json

    cw = Citewise(sample_index)
    data = answer_json(cw.ask("What are the refund rules for the Pro plan?"))
    assert data["outcome"] in ("answered", "partial") and data["markers"]
    per_doc: dict[str, list] = {}
    for m in data["markers"]:
        per_doc.setdefault(m["doc_id"], []).append((m["start"], m["end"]))
        assert data["answer"][m["marker_start"] - 1 : m["marker_end"] + 1] == f"[doc:{m['doc_id']}]"
    for c in data["citations"]:
        assert [(s["start"], s["end"]) for s in c["spans"]] == per_doc[c["doc_id"]]
        assert c["spans"][0]["start"] == c["start"]
