"""The ReAct agent's final text as a cited :class:`~citewise.core.Answer` (citation check).

Every sentence of the agent's answer must end with a source it really used: ``[doc:ID]`` for a
document that a ``vector_search`` call of this run returned, ``[tool:NAME]`` for a tool call of
this run that succeeded. A sentence without such a citation is dropped (listed in
``Answer.dropped``); an id that no call returned is *fabricated* (listed, and its sentence
dropped). No sentence left: abstained, reason ``model_cited_nothing``. The agent's
"Limitations:" paragraph (failed tools, the iteration cap) is kept as it is after the checked
text. Citations carry the cited passage's document, title, version, date and span.
"""

from __future__ import annotations

import re

from citewise.core import ABSTENTION_TEXT, Answer, Citation, Reason, ReasonCode
from citewise.tools.base import is_error

_MARK = re.compile(r"\[(doc|tool):([^\]\s]+)\]")
_SENTENCE = re.compile(r"[^.!?\n]+(?:\.(?=\d)[^.!?\n]+)*[.!?]*(?:\s*\[(?:doc|tool):[^\]]+\])*[.!?]?")


def agent_answer(result, index=None) -> Answer:
    """The checked answer of an :class:`~citewise.tools.agent.AgentResult` (module docstring).

    ``index``: the index whose store gives the cited passages (None: citations without spans).
    """
    text, _, limits = result.answer.partition("\n\nLimitations: ")
    docs: dict[str, str] = {}  # doc id -> first chunk id a search returned
    tools_ok: set[str] = set()
    calls = []
    for step in result.steps:
        for c in step.calls:
            ok = not is_error(c.observation)
            calls.append(
                {
                    "tool": c.name,
                    "arguments": dict(c.arguments),
                    "error": None if ok else c.observation["error"],
                    "rows": c.observation.get("row_count") if ok else None,
                }
            )
            if not ok:
                continue
            tools_ok.add(c.name)
            for h in c.observation.get("hits") or []:
                docs.setdefault(str(h.get("doc_id")), h.get("chunk_id"))
    kept, dropped, fabricated, cited_docs = [], [], [], []
    for m in _SENTENCE.finditer(text):
        sent = m.group(0).strip()
        if not sent:
            continue
        marks = _MARK.findall(sent)
        bad = [f"{k}:{v}" for k, v in marks if (k == "doc" and v not in docs) or (k == "tool" and v not in tools_ok)]
        fabricated += bad
        if not marks or bad:
            dropped.append(sent)
            continue
        kept.append(sent)
        cited_docs += [v for k, v in marks if k == "doc" and v not in cited_docs]
    citations = []
    if cited_docs:
        chunks = index.store.get_chunks([docs[d] for d in cited_docs if docs[d]]) if index is not None else {}
        for d in cited_docs:
            c = chunks.get(docs[d])
            citations.append(
                Citation(d, c.title, c.version, c.updated, c.chunk_id, c.start, c.end) if c else Citation(d, d, "", "")
            )
    limitations = f"\n\nLimitations: {limits}" if limits else ""
    if not kept:
        ans = Answer(
            ABSTENTION_TEXT + limitations,
            "abstained",
            reason=Reason.of(ReasonCode.MODEL_CITED_NOTHING, checks="the agent's answer"),
        )
    else:
        outcome = "answered" if not limits else "partial"
        ans = Answer(
            " ".join(kept) + limitations, outcome, citations, used_ids=[docs[d] for d in cited_docs if docs[d]]
        )
    # what the agent's own check (Agent.check) withdrew comes first, then what the markers dropped
    ans.dropped = list(getattr(result, "withdrawn", [])) + [
        d for d in dropped if d not in getattr(result, "withdrawn", [])
    ]
    prior = list(getattr(result, "fabricated", []))
    ans.fabricated, ans.tool_calls = prior + [f for f in fabricated if f not in prior], calls
    ans.notes = list(getattr(result, "notes", [])) + list(ans.notes)
    ans.generator = "agent"
    ans.evidence = {"agent": {"stopped": result.stopped, "iterations": result.iterations}}
    return ans
