"""Citations a small model can give: numbered markers mapped back to ids, and every sentence
checked against the evidence unit that supports it.

**Markers.** The LLM prompt numbers its sources (:mod:`citewise.answer.llm_prompt`); the model
cites ``[2]``, ``[1][3]``, ``[1, 3]``, ``[Source 2]`` or ``【2】``, or copies the fence line
(``[source-3f2a9c01b7e4 2]``). :func:`map_markers` turns each number into the source's
``[doc:ID]``; a number no source has, or a copied fence without one, is removed and reported as
malformed. ``[doc:ID]`` markers the model copied are kept as written.

**Support.** Each sentence of the reply is aligned with the units (sentences, list items, table
rows: :mod:`citewise.answer.units`) of the sources, each unit read with its neighbours and its
chunk's title and headings:

* lexical = the sentence's content terms (analyzed; question words and the absolute words
  below dropped, those being a condition of their own) found in the unit,
  in the unit and the one after it (a sentence may join two), or in the chunk's title and
  headings, each term weighted by ``ln(1 + (N + 1) / (df + 0.5))`` over the N units of all
  sources (a term every source repeats says little; a term no source has weighs most), as a
  share of the sentence's total weight, scaled by ``min(1, terms / MIN_LEXICAL_TERMS)`` (one
  shared word is weak evidence of a claim);
* dense = cosine of the sentence's and the unit's embeddings (the index's embedder; 0 without one);
* ``support = LEXICAL_WEIGHT · lexical + (1 - LEXICAL_WEIGHT) · dense``, and a unit supports a
  sentence only when every number and every absolute word (:data:`ABSOLUTE`: all, every,
  always, never, none ...) the sentence states also occurs in it or the unit after it (a model
  that changes "30 days" to "45 days", or "approved automatically when it fits the rule" to
  "all refunds are approved automatically", keeps most words and the topic);
* units that read as instructions to a model (:func:`citewise.answer.units.is_instruction`)
  support nothing.

A sentence is **supported** when its best unit scores at least :data:`SUPPORT_THRESHOLD`. A
sentence that cites a source keeps that citation when a unit of the cited source supports it;
otherwise it is cited to the source that does (re-attributed); a sentence without a marker, or
with a malformed one, is cited to its best supporting source (attributed after the fact). A
sentence nothing supports is **withdrawn**, and :attr:`Attribution.notes` says so, quoting it:
a model's answer is never dropped silently.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from citewise.answer.citations import BRACKET, ONE, join_sentences, split_cited_sentences
from citewise.answer.evidence import content_terms
from citewise.answer.units import is_instruction, split_units
from citewise.text.analyzer import analyze

#: Weight of the lexical score in ``support`` (the rest is the dense cosine).
LEXICAL_WEIGHT = 0.5
#: Least ``support`` of a unit that supports a sentence.
SUPPORT_THRESHOLD = 0.55
#: Content terms a sentence needs for its lexical share to count in full; a sentence of one
#: content term gets half of it (one shared word says little about a claim).
MIN_LEXICAL_TERMS = 2

_NUMBERED = re.compile(
    # the spaces before a marker are taken from the start of their run only (a run not followed
    # by a marker is then passed over once, not retried from each of its spaces)
    r"(?<![ \t])(?P<ws>[ \t]*)(?:\[\s*(?:sources?\s*(?::\s*)?|doc(?:ument)?\s*)?(?P<nums>\d{1,3}(?:\s*[,;&]\s*"
    r"(?:sources?\s*(?::\s*)?)?\d{1,3}|\s*and\s*\d{1,3})*)\s*\]|【\s*(?P<cjk>\d{1,3})\s*】"
    # the fence line copied as a marker: [source-3f2a9c01b7e4] or [source-3f2a9c01b7e4 2]
    r"|\[\s*(?:<+\s*)?source-[0-9a-f]{6,}(?:\s+\[?(?P<fence>\d{1,3})\]?)?[^\]\n]{0,80}\])",
    re.I,
)
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
#: Absolute words a supporting unit must state too (lower case).
ABSOLUTE_WORDS = "all every everyone everything always never none nobody guarantee guaranteed unlimited".split() + [
    "no one"
]
ABSOLUTE = re.compile(r"\b(" + "|".join(sorted(ABSOLUTE_WORDS, key=len, reverse=True)) + r")\b", re.I)
_FENCE_BLOCK = re.compile(r"^\s{0,3}(```|~~~).*?^\s{0,3}\1[^\n]*$", re.S | re.M)


@dataclass
class EvidenceSource:
    """What a sentence may be attributed to.

    Attributes:
        marker: the marker written after a supported sentence (``[doc:ID]``, ``[tool:NAME]``).
        units: unit texts, in document order.
        vectors: the units' embeddings, shape (len(units), dim), or None (lexical only).
        frame: title and headings, read with every unit.
        keys: the markers that count as citing this source (``[doc:ID]`` and ``[chunk:ID]``).
        typed: the units render typed values (a tool's result rows): a decimal numeral in them
            is a number, compared with a sentence's by value (a tool's 9.9 supports "$9.90"),
            where text numerals such as a version ``3.10`` are compared as written.
    """

    marker: str
    units: list[str]
    vectors: np.ndarray | None = None
    frame: str = ""
    keys: tuple[str, ...] = ()
    typed: bool = False


@dataclass
class Alignment:
    """The best unit of one source for one sentence."""

    source: int
    unit: int
    support: float
    lexical: float
    dense: float


@dataclass
class Attribution:
    """The checked reply.

    Attributes:
        text: the supported sentences, each followed by its marker(s).
        kept: ``(sentence, markers)`` pairs in order.
        withdrawn: sentences nothing supports.
        attributed: sentences cited after the fact (no or malformed marker).
        recited: sentences whose cited source did not support them, cited to one that does.
        malformed: markers that named no source (``[7]`` with three sources).
        fabricated: ``doc:ID`` / ``chunk:ID`` markers the model wrote for ids no source has.
        notes: one line per kind of change, for the reader.
        alignments: ``{sentence: (support, lexical, dense)}`` of the unit chosen (or the best, when withdrawn).
    """

    text: str
    kept: list[tuple[str, list[str]]] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    attributed: list[str] = field(default_factory=list)
    recited: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    fabricated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    alignments: dict[str, tuple[float, float, float]] = field(default_factory=dict)


def map_markers(text: str, markers: Sequence[str]) -> tuple[str, list[str]]:
    """``text`` with numbered markers replaced by ``markers[n - 1]``; also returns the markers
    that named no source (removed). Fenced code blocks are left as they are.

    >>> map_markers("Thirty days [1]. Ask first [2][1]. See [9].", ["[doc:a]", "[doc:b]"])
    ('Thirty days [doc:a]. Ask first [doc:b][doc:a]. See.', ['[9]'])
    >>> map_markers("Declined [source-b07753299c15]. Paid [source-b07753299c15 [2]].", ["[doc:a]", "[doc:b]"])
    ('Declined. Paid [doc:b].', ['[source-b07753299c15]'])
    """
    bad: list[str] = []

    def sub(m: re.Match) -> str:
        if m.group("nums") is not None or m.group("cjk") is not None:
            nums = [int(n) for n in re.findall(r"\d+", m.group("nums") or m.group("cjk"))]
        else:  # a fence marker: its number, if it has one
            nums = [int(m.group("fence"))] if m.group("fence") else [0]
        good = [markers[n - 1] for n in nums if 1 <= n <= len(markers)]
        if len(good) < len(nums):
            bad.append(m.group(0).strip())
        return m.group("ws") + "".join(dict.fromkeys(good)) if good else ""

    out, pos = [], 0
    for block in _FENCE_BLOCK.finditer(text):
        out.append(_NUMBERED.sub(sub, text[pos : block.start()]))
        out.append(block.group(0))
        pos = block.end()
    out.append(_NUMBERED.sub(sub, text[pos:]))
    return "".join(out), bad


_DECIMAL = re.compile(r"\d+\.\d+")


def canonical_number(token: str) -> str:
    """A decimal numeral by its value: trailing fractional zeros dropped (``9.90`` and ``9.9``
    read alike; ``30.0`` reads as ``30``); anything else as it is (``10:30``, ``1.2.3``, ``v2``).

    >>> canonical_number("9.90"), canonical_number("30.0"), canonical_number("1.2.3"), canonical_number("2011")
    ('9.9', '30', '1.2.3', '2011')
    """
    if not _DECIMAL.fullmatch(token):
        return token
    return token.rstrip("0").rstrip(".")


#: :data:`ABSOLUTE_WORDS` of one word as the analyzer writes them (left out of a sentence's
#: lexical share).
_ABSOLUTE_TERMS = frozenset(t for w in ABSOLUTE_WORDS if " " not in w for t in analyze(w))


def _numbers(text: str, by_value: bool = False) -> set[str]:
    """Numbers and absolute words of ``text`` (what a supporting unit must state too); with
    ``by_value``, decimal numerals by value (:func:`canonical_number`)."""
    nums = {n.replace(",", "") for n in _NUMBER.findall(text)}
    if by_value:
        nums = {canonical_number(n) for n in nums}
    return nums | {w.lower() for w in ABSOLUTE.findall(text)}


class Aligner:
    """Scores sentences against sources (module docstring).

    Args:
        sources: the evidence.
        embed: ``texts -> (n, dim)`` L2-normalised embeddings (None: lexical only).
    """

    def __init__(self, sources: Sequence[EvidenceSource], embed=None):
        self.sources = list(sources)
        self.embed = embed
        self._windows: list[list[tuple[list[set[str]], set[str], bool]]] = []
        df: dict[str, int] = {}
        n = 0
        for s in self.sources:
            canon = canonical_number if s.typed else str
            frame = {canon(w) for w in analyze(s.frame)}
            terms = [{canon(w) for w in analyze(u)} for u in s.units]
            for t in terms:
                n += 1
                for w in t:
                    df[w] = df.get(w, 0) + 1
            rows = []
            for i, u in enumerate(s.units):
                nxt = i + 1 < len(terms) and not is_instruction(s.units[i + 1])
                pair = terms[i] | (terms[i + 1] if nxt else set())
                near = " ".join(s.units[i : i + 2] if nxt else [u])
                rows.append(
                    ([frame | terms[i], frame | pair], _numbers(near + " " + s.frame, s.typed), is_instruction(u))
                )
            self._windows.append(rows)
        self._df, self._n = df, n

    def weight(self, term: str) -> float:
        """IDF weight of a term over the sources' units (module docstring)."""
        return math.log(1 + (self._n + 1) / (self._df.get(term, 0) + 0.5))

    def lexical(self, terms: list[str], windows: list[set[str]]) -> float:
        total = sum(self.weight(t) for t in terms)
        if not total:
            return 0.0
        return max(sum(self.weight(t) for t in terms if t in w) for w in windows) / total

    def align(self, sentences: Sequence[str]) -> list[list[Alignment | None]]:
        """For each sentence, the best unit of each source (None: no unit may support it)."""
        svecs = self.embed(list(sentences)) if self.embed is not None and sentences else None
        out: list[list[Alignment | None]] = []
        for k, sentence in enumerate(sentences):
            written = content_terms(sentence) or list(dict.fromkeys(analyze(sentence)))
            # absolute words are a hard condition (below), not part of the claim's subject matter
            written = [t for t in written if t not in _ABSOLUTE_TERMS] or written
            valued = list(dict.fromkeys(canonical_number(t) for t in written))
            nums_written, nums_valued = _numbers(sentence), _numbers(sentence, by_value=True)
            row: list[Alignment | None] = []
            for si, src in enumerate(self.sources):
                terms, nums = (valued, nums_valued) if src.typed else (written, nums_written)
                best: Alignment | None = None
                dense_all = (
                    np.asarray(src.vectors @ svecs[k], dtype=np.float64)
                    if svecs is not None and src.vectors is not None and len(src.vectors)
                    else None
                )
                for ui, (wins, win_nums, instruction) in enumerate(self._windows[si]):
                    if instruction or not nums <= win_nums:
                        continue
                    # one content term found is no evidence of a claim ("So it was held."): with
                    # fewer than MIN_LEXICAL_TERMS terms the lexical share counts only up to that
                    lex = self.lexical(terms, wins) * min(1.0, len(terms) / MIN_LEXICAL_TERMS)
                    dense = max(0.0, float(dense_all[ui])) if dense_all is not None else 0.0
                    w = LEXICAL_WEIGHT if dense_all is not None else 1.0
                    support = w * lex + (1 - w) * dense
                    if best is None or support > best.support:
                        best = Alignment(si, ui, support, lex, dense)
                row.append(best)
            out.append(row)
        return out


def attribute(text: str, sources: Sequence[EvidenceSource], embed=None, malformed: Sequence[str] = ()) -> Attribution:
    """Check every sentence of ``text`` (markers already mapped to ``[doc:ID]`` form) against
    ``sources`` (module docstring)."""
    pieces = split_cited_sentences(text)
    sentences = [s for s, _ in pieces]
    rows = Aligner(sources, embed).align(sentences) if sentences else []
    result = Attribution("", malformed=list(malformed))
    known = {k for s in sources for k in s.keys}
    kept_text: list[str] = []
    for (sentence, cites), row in zip(pieces, rows):
        cited = {f"[{k}:{i}]" for k, i in cites}
        for k, i in cites:
            if f"[{k}:{i}]" not in known and f"{k}:{i}" not in result.fabricated:
                result.fabricated.append(f"{k}:{i}")
        own = [a for a in row if a is not None and cited & set(sources[a.source].keys)]
        best_own = max(own, key=lambda a: a.support, default=None)
        best_any = max((a for a in row if a is not None), key=lambda a: (a.support, -a.source), default=None)
        if best_own is not None and best_own.support >= SUPPORT_THRESHOLD:
            markers = [sources[a.source].marker for a in own if a.support >= SUPPORT_THRESHOLD]
            chosen = best_own
        elif best_any is not None and best_any.support >= SUPPORT_THRESHOLD:
            markers = [sources[best_any.source].marker]
            chosen = best_any
            (result.recited if cited else result.attributed).append(sentence)
        else:
            result.withdrawn.append(sentence)
            if best_any is not None:
                result.alignments[sentence] = (
                    round(best_any.support, 4),
                    round(best_any.lexical, 4),
                    round(best_any.dense, 4),
                )
            continue
        markers = list(dict.fromkeys(markers))
        result.alignments[sentence] = (round(chosen.support, 4), round(chosen.lexical, 4), round(chosen.dense, 4))
        result.kept.append((sentence, markers))
        kept_text.append(f"{sentence} {' '.join(markers)}")
    result.text = join_sentences(kept_text)
    result.notes = notes(result)
    return result


def _quote(sentences: list[str], limit: int = 3) -> str:
    shown = "; ".join(f"\u201c{s}\u201d" for s in sentences[:limit])
    return shown + (f" and {len(sentences) - limit} more" if len(sentences) > limit else "")


def notes(a: Attribution) -> list[str]:
    """The reader's lines for what the check changed (empty when nothing changed)."""
    out = []
    if a.withdrawn:
        out.append(
            f"Withdrawn {len(a.withdrawn)} sentence{'s' if len(a.withdrawn) != 1 else ''} of the model's "
            f"answer that no source supports: {_quote(a.withdrawn)}."
        )
    if a.attributed:
        out.append(
            f"The model cited no source for {len(a.attributed)} sentence{'s' if len(a.attributed) != 1 else ''}; "
            f"each was cited to the source passage that supports it."
        )
    if a.recited:
        out.append(
            f"{len(a.recited)} sentence{'s' if len(a.recited) != 1 else ''} cited a source that does not "
            f"support {'them' if len(a.recited) != 1 else 'it'}; cited to the one that does."
        )
    if a.malformed or a.fabricated:
        bad = list(a.malformed) + [f"[{f}]" for f in a.fabricated]
        out.append(f"Ignored citation marker{'s' if len(bad) != 1 else ''} naming no source: {', '.join(bad)}.")
    return out


def context_sources(chunks, units=None) -> list[EvidenceSource]:
    """Evidence sources of context chunks (:class:`citewise.answer.context.ContextChunk`): one per
    chunk, marker ``[doc:ID]``, its units and unit vectors from ``units`` (a
    :class:`~citewise.answer.units.UnitCache`; without one, units are split here and there are no
    vectors)."""
    got = units.get(chunks) if units is not None else [([u for u in split_units(c.text)], None) for c in chunks]
    out = []
    for c, (us, vecs) in zip(chunks, got):
        texts = [u.text for u in us] or [c.text]
        vectors = vecs if vecs is not None and len(us) and len(vecs) == len(us) else None
        out.append(
            EvidenceSource(
                f"[doc:{c.doc_id}]",
                texts,
                vectors,
                " ".join((c.title, *c.heading_path)),
                (f"[doc:{c.doc_id}]", f"[chunk:{c.chunk_id}]"),
            )
        )
    return out


def cited_markers(text: str) -> list[str]:
    """The ``[doc:ID]`` / ``[chunk:ID]`` markers in ``text``, each once, in order."""
    return list(dict.fromkeys(f"[{k}:{i}]" for b in BRACKET.findall(text) for k, i in ONE.findall(b)))
