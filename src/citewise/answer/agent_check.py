"""The citation check of a ReAct agent's final answer (:class:`citewise.tools.agent.Agent`).

The sources are the agent's successful observations: each ``vector_search`` hit is a source
cited ``[doc:ID]`` (its text split into answer units), each record tool's result a source cited
``[tool:NAME]`` (one unit per row, ``column: value; ...``, at most 50 rows; its numbers are
compared by value, so a row's 9.9 supports "$9.90"). The answer's
sentences are attributed to them as an LLM answer's are (:func:`citewise.answer.attribution.attribute`):
a sentence nothing supports is withdrawn, and the notes say so.

The steps are read by shape (``step.calls``, each with ``name``, ``arguments`` and
``observation``), so this module does not import the tools layer; the agent receives
:func:`check_agent_answer` from the layer that builds it (:meth:`citewise.api.Citewise.ask_agent`).
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from citewise.answer.attribution import EvidenceSource, attribute
from citewise.answer.units import split_units
from citewise.core import ABSTENTION_TEXT

#: Rows of one record tool's result that count as sources.
MAX_ROWS = 50


def observation_sources(steps: Sequence) -> list[EvidenceSource]:
    """Evidence sources of the steps' successful observations (module docstring)."""
    out = []
    for step in steps:
        for r in step.calls:
            obs = r.observation
            if not isinstance(obs, dict) or "error" in obs:
                continue
            if isinstance(obs.get("hits"), list):
                for h in obs["hits"]:
                    units = [u.text for u in split_units(h.get("text") or "")] or [h.get("text") or ""]
                    out.append(
                        EvidenceSource(
                            f"[doc:{h.get('doc_id')}]",
                            units,
                            None,
                            h.get("title") or "",
                            (f"[doc:{h.get('doc_id')}]", f"[chunk:{h.get('chunk_id')}]"),
                        )
                    )
            elif isinstance(obs.get("rows"), list):
                args = "; ".join(f"{k}: {v}" for k, v in r.arguments.items())
                rows = [
                    "; ".join(f"{k}: {v}" for k, v in row.items())
                    for row in obs["rows"][:MAX_ROWS]
                    if isinstance(row, dict)
                ]
                out.append(
                    EvidenceSource(
                        f"[tool:{r.name}]",
                        rows or [f"no rows for {args}"],
                        None,
                        f"{r.name.replace('_', ' ')} {args}",
                        (f"[tool:{r.name}]", f"[chunk:tool:{r.name}]"),
                        typed=True,
                    )
                )
    return out


def check_agent_answer(
    text: str, steps: Sequence, embed: Callable | None = None
) -> tuple[str, list[str], list[str], list[str]]:
    """``(answer, withdrawn sentences, notes, fabricated ids)`` of the agent's final ``text`` checked against
    its ``steps``' observations; ``embed``: ``texts -> (n, dim)`` L2-normalised vectors for the
    dense half of the check (None: lexical only). With no observation to cite, ``text`` is kept
    as is with a note saying it is unchecked; when nothing is supported, the answer is
    :data:`citewise.core.ABSTENTION_TEXT`."""
    sources = observation_sources(steps)
    # a [tool:NAME] marker read as a citation marker of the checker's form ([chunk:tool:NAME])
    plain = re.sub(r"\[tool:([^\]\s]+)\]", r"[chunk:tool:\1]", text)
    checked = attribute(plain, sources, embed) if plain.strip() else None
    if checked is None or not sources:
        if not sources:
            notes = (
                ["No tool returned anything to cite; the model's answer is shown unchecked."] if text.strip() else []
            )
            return text, [], notes, []
        return ABSTENTION_TEXT, [], ["The model gave no answer to check."], []
    fabricated = [re.sub(r"^chunk:tool:", "tool:", f) for f in checked.fabricated]
    notes = [n.replace("[chunk:tool:", "[tool:") for n in checked.notes]  # as the model wrote them
    return (checked.text if checked.kept else ABSTENTION_TEXT), list(checked.withdrawn), notes, fabricated
