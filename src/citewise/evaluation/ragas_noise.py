"""Noise sensitivity as the tool-calling design document defines it.

``ΔFaithfulness = Faithfulness_clean − Faithfulness_noisy``: the same generator answers the same
question twice, once from the row's contexts (clean) and once from those contexts with controlled
noise added (noisy), and each answer's faithfulness is judged against the contexts it was given.
A Δ above :data:`citewise.evaluation.ragas.NOISE_FLAG` (0.15) is flagged: "the prompt or the LLM
are fragile against contaminated contexts".

Controlled noise: ``n_noise`` contexts drawn from *other* rows of the dataset (never one of this
row's), with a seeded generator per row id so a rerun draws the same ones, interleaved after every
clean context (clean 1, noise 1, clean 2, noise 2, ...; the rest at the end) so the noise is not
all in one place.

The generator is citewise's LLM generator (:class:`citewise.answer.generators.LLMGenerator`, its
prompt and its citation markers, which are stripped before judging): the system under test.
"""

from __future__ import annotations

import hashlib
import random
from typing import Sequence

from citewise.answer.context import Context, ContextChunk
from citewise.evaluation.ragas import NOISE_FLAG, RagasRow, share

#: Noise contexts added per question by default.
N_NOISE = 2


def noisy_contexts(row: RagasRow, rows: Sequence[RagasRow], n_noise: int = N_NOISE, seed: int = 0) -> list[str]:
    """``row``'s contexts with ``n_noise`` contexts of other rows interleaved (module docstring).

    >>> a = RagasRow("a", "q", "x", ("A1", "A2"))
    >>> b = RagasRow("b", "q", "y", ("B1", "B2", "B3"))
    >>> noisy_contexts(a, [a, b], 2) in (["A1", "B1", "A2", "B2"], ["A1", "B2", "A2", "B1"],
    ...                                  ["A1", "B1", "A2", "B3"], ["A1", "B3", "A2", "B1"],
    ...                                  ["A1", "B2", "A2", "B3"], ["A1", "B3", "A2", "B2"])
    True
    """
    own = set(row.contexts)
    pool = sorted({c for r in rows if r.id != row.id for c in r.contexts if c.strip() and c not in own})
    rng = random.Random(int(hashlib.sha256(f"{seed}:{row.id}".encode()).hexdigest()[:12], 16))
    noise = rng.sample(pool, min(n_noise, len(pool)))
    out: list[str] = []
    for i, c in enumerate(row.contexts):
        out.append(c)
        if i < len(noise):
            out.append(noise[i])
    out += noise[len(row.contexts) :]
    return out


def as_context(question: str, texts: Sequence[str]) -> Context:
    """A generator :class:`Context` of plain texts, ids ``ctx-1``, ``ctx-2``, ... in order."""
    chunks = [
        ContextChunk(f"ctx-{i}", f"ctx-{i}", f"context {i}", "", "", (), t, 0, len(t), i)
        for i, t in enumerate(texts, start=1)
    ]
    return Context(question, chunks, budget=0)


def _faithfulness(judge, answer: str, contexts: Sequence[str]) -> tuple[float | None, str | None]:
    from citewise.evaluation.answer_set import strip_citations

    from citewise.core import ABSTENTION_TEXT

    text = strip_citations(answer).strip()
    if not text or text == ABSTENTION_TEXT:
        return None, "the answer abstains (no claim to judge)"
    claims = judge.claims(text)
    if claims is None:
        return 0.0, "unusable judge reply listing claims (0.0)"
    if not claims:
        return None, "the answer makes no claim (an abstention)"
    ok = judge.supported(claims, "\n\n".join(contexts))
    if ok is None:
        return 0.0, "unusable judge reply on claim support (0.0)"
    return share(ok), None


def noise_probe(rows: Sequence[RagasRow], generator, judge, n_noise: int = N_NOISE, seed: int = 0):
    """``probe(row, judgments) -> dict`` for :func:`citewise.evaluation.ragas.run_ragas`:
    ``{"clean", "noisy", "delta", "flagged", "noise_contexts", "clean_answer", "noisy_answer",
    "notes"}``; ``delta`` None when either answer makes no claim or generation failed."""
    from citewise.models.chat import ChatError

    def probe(row: RagasRow, _judgments) -> dict:
        if not row.contexts:
            return {"delta": None, "flagged": False, "notes": ["no contexts: nothing to add noise to"]}
        noisy = noisy_contexts(row, rows, n_noise, seed)
        out: dict = {"noise_contexts": len(noisy) - len(row.contexts), "notes": []}
        for name, texts in (("clean", list(row.contexts)), ("noisy", noisy)):
            try:
                draft = generator.generate(row.question, as_context(row.question, texts))
            except ChatError as e:
                out.update({"delta": None, "flagged": False})
                out["notes"].append(f"{name}: the generator failed: {e}")
                return out
            out[f"{name}_answer"] = draft.text
            out[name], note = _faithfulness(judge, draft.text, texts)
            if note:
                out["notes"].append(f"{name}: {note}")
        if out["clean"] is None or out["noisy"] is None:
            out.update({"delta": None, "flagged": False})
        else:
            out["delta"] = round(out["clean"] - out["noisy"], 6)
            out["flagged"] = out["delta"] > NOISE_FLAG
        return out

    return probe
