"""Enforced citations: every sentence of an answer must cite a chunk that was in its context.

Rules (applied to every generator's draft, extractive or LLM):

1. The draft is split into sentences; citation markers ``[doc:ID]`` / ``[chunk:ID]`` (also
   several ids in one bracket, ``[doc:A, doc:B]``) right after a sentence's end belong to that
   sentence.
2. A marker whose id is not in the context (no context chunk has that chunk id, or that doc id)
   is **fabricated**: it is reported and its sentence is dropped.
3. A sentence without any marker is **uncited** and dropped.
4. Outcome: nothing left → ``abstained`` (the answer becomes the abstention text); something
   dropped → ``partial``; otherwise ``answered``.

The kept text is rebuilt from the kept sentences with their markers normalised to
``[doc:ID]`` (a ``[chunk:ID]`` marker is kept as written).

Spans: each kept sentence's citation of a source records where *that sentence* is supported
(:class:`citewise.core.CitedSpan`): the offsets the generator gave for the sentence, else the
sentence's own place in the cited chunk when it is quoted there verbatim, else the whole chunk.
:func:`marker_links` pairs every marker of the answer text with its sentence's span.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from citewise.answer.context import Context
from citewise.core import ABSTENTION_TEXT, Citation, CitedSpan

#: One citation inside brackets; a bracket may hold several, separated by commas or semicolons.
_ONE = r"(?:doc|chunk):[^\]\s,;\[]+"
BRACKET = re.compile(rf"\[\s*{_ONE}(?:\s*[,;]\s*{_ONE})*\s*\]")
ONE = re.compile(r"(doc|chunk):([^\]\s,;\[]+)")
_END = re.compile(r"[.!?][\"'”’)\]]*")
#: After a full stop, a word in lower case or a closing bracket goes on with the same sentence ("a
#: script executed with the . or source builtins", "e.g. the", "(k1 v1 ... )"): no sentence starts so.
_GOES_ON = re.compile(r"(?<=\.)[ \t]+[a-z)\]}]")
#: Before a full stop, an initial or a common abbreviation ("R. Á. de Espíndola", "Fig. 3"): not
#: the end of a sentence.
_ABBREV = re.compile(r"(?:^|[\s(\[])(?:[^\W\d_]|Figs?|vs|cf|e\.g|i\.e|Dr|Mr|Mrs|Ms|St|Vol|pp|Sec|Eq|Ref)$")

_INITIAL = re.compile(r"(?:^|[\s(\[])[A-Z]$")


def _no_end(line: str, i: int) -> bool:
    """Whether the end mark at ``line[i]`` does not end a sentence: a lone mark (". . ." written
    with spaces, the operators in "! ~: logical and bitwise negation") or a full stop after an
    initial or an abbreviation (:data:`_ABBREV`).

    >>> [s for s, _ in split_cited_sentences("! ~: logical and bitwise negation. [doc:b]")]
    ['! ~: logical and bitwise negation.']
    """
    if i == 0 or line[i - 1].isspace():
        return True
    return line[i] == "." and bool(_ABBREV.search(line, max(0, i - 6), i))


_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def split_cited_sentences(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """``[(sentence text without markers, [(kind, id), ...])]`` (see module docstring).

    A sentence ends at ``.``, ``!`` or ``?`` followed by whitespace or the end (plus the markers
    that directly follow it), or at a line break; not at a ``.`` followed by a word in lower case
    ("executed with the . or source builtins"), nor at a lone ``.`` or one after an initial or a
    common abbreviation ("R. Á. de Espíndola", "Fig. 3").

    >>> split_cited_sentences("A is 30 days [doc:x]. B is 45. [doc:y] C")
    [('A is 30 days.', [('doc', 'x')]), ('B is 45.', [('doc', 'y')]), ('C', [])]
    >>> [s for s, _ in split_cited_sentences("Run it with the . or source builtins. Then stop.")]
    ['Run it with the . or source builtins.', 'Then stop.']
    >>> [s for s, _ in split_cited_sentences("See Fig. 3. R. Á. de Espíndola wrote it. Done.")]
    ['See Fig. 3.', 'R. Á. de Espíndola wrote it.', 'Done.']
    >>> [s for s, _ in split_cited_sentences("Use slot K. [doc:a] Hold it. [doc:a]")]
    ['Use slot K.', 'Hold it.']
    >>> [s for s, _ in split_cited_sentences("A host (e.g. [doc:a] 'x.org') here. [doc:a]")]
    ["A host (e.g. 'x.org') here."]
    """
    out: list[tuple[str, list[tuple[str, str]]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        fence = _FENCE.match(line)
        if fence:
            # a fenced code block is one "sentence", kept verbatim; markers after its closing fence
            block = [line.rstrip()]
            rest = ""
            while i < len(lines):
                m = re.match(rf"^\s*{re.escape(fence.group(1))}`*~*(.*)$", lines[i])
                i += 1
                if m:
                    block.append(lines[i - 1][: m.start(1)].rstrip())
                    rest = m.group(1)
                    break
                block.append(lines[i - 1])
            cites = [c for b in BRACKET.findall(rest) for c in ONE.findall(b)]
            if not cites and i < len(lines) and BRACKET.match(lines[i].strip()):
                cites = [c for b in BRACKET.findall(lines[i]) for c in ONE.findall(b)]
                i += 1
            out.append(("\n".join(block), cites))
            continue
        pos = 0
        buf: list[str] = []
        cites: list[tuple[str, str]] = []
        n = len(line)
        while pos < n:
            m = BRACKET.match(line, pos)
            if m:
                cites.extend(ONE.findall(m.group(0)))
                pos = m.end()
                # "30 days [doc:x]." / "A [doc:x], b": the space before the marker goes with it
                nxt = _skip_ws(line, pos)
                if nxt < n and line[nxt] in ",;:.!?" and (nxt + 1 == n or not line[nxt + 1].isalnum()):
                    while buf and buf[-1].isspace():
                        buf.pop()
                    pos = nxt
                continue
            e = _END.match(line, pos)
            # a citation marker right after a full stop ends the sentence, also after a capital
            # letter that reads as an initial ("into the slot marked K. [doc:setup] Hold ..."); not
            # after an abbreviation ("(e.g. [doc:x] 'nodejs.org')": a unit cut there is joined again)
            marked = e is not None and bool(BRACKET.match(line, _skip_ws(line, e.end())))
            initial = marked and line[e.start()] == "." and bool(_INITIAL.search(line, 0, e.start()))
            if (
                e
                and (e.end() == n or line[e.end()].isspace() or marked)
                and not _GOES_ON.match(line, e.end())
                and (initial or not _no_end(line, e.start()))
            ):
                buf.append(e.group(0))
                pos = e.end()
                # markers after the end punctuation belong to this sentence
                while True:
                    q = _skip_ws(line, pos)
                    m2 = BRACKET.match(line, q)
                    if not m2:
                        break
                    cites.extend(ONE.findall(m2.group(0)))
                    pos = m2.end()
                # a marker followed by end punctuation again ("... [doc:x].")
                p2 = _END.match(line, pos)
                if p2 and (p2.end() == n or line[p2.end()].isspace()):
                    pos = p2.end()
                _flush(out, buf, cites)
                buf, cites = [], []
                continue
            buf.append(line[pos])
            pos += 1
        _flush(out, buf, cites)
    return out


def _skip_ws(line: str, pos: int) -> int:
    while pos < len(line) and line[pos] in " \t":
        pos += 1
    return pos


def _flush(out, buf, cites) -> None:
    # the source's spacing stays as written ("Available options are : 01"): only the space
    # before a removed citation marker is dropped (where the marker was read)
    sentence = " ".join("".join(buf).split())
    sentence = (
        sentence.lstrip("-*•0123456789.) ").strip() if re.match(r"^\s*(?:[-*•]|\d+[.)])\s", sentence) else sentence
    )
    if sentence or cites:
        if sentence:
            out.append((sentence, list(cites)))
        elif out:
            out[-1][1].extend(cites)


@dataclass
class CheckedAnswer:
    """The result of the citation check.

    Attributes:
        text: the kept sentences, each with its markers (or the abstention text).
        outcome: ``answered`` | ``partial`` | ``abstained``.
        citations: one :class:`Citation` per cited chunk/document, in first-cited order.
        used_ids: chunk ids the kept sentences cite.
        fabricated: cited ids (``doc:ID`` / ``chunk:ID``) that were not in the context.
        dropped: sentences removed (uncited or citing a fabricated id).
    """

    text: str
    outcome: str
    citations: list[Citation] = field(default_factory=list)
    used_ids: list[str] = field(default_factory=list)
    fabricated: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def is_abstention(text: str) -> bool:
    """Whether a draft says it has no answer (the abstention sentence, any case/punctuation)."""
    norm = " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())
    return not norm or norm == " ".join(re.sub(r"[^\w\s]", " ", ABSTENTION_TEXT.lower()).split())


def enforce_citations(draft: str, context: Context, spans: dict[str, tuple[int, int]] | None = None) -> CheckedAnswer:
    """Apply the rules of the module docstring to ``draft`` against ``context``.

    Args:
        draft: generator output.
        context: the context the generator saw.
        spans: optional ``{sentence text: (start, end)}`` offsets inside the cited chunk (the
            extractive generator knows them), used for precise citation offsets.
    """
    if is_abstention(draft):
        return CheckedAnswer(ABSTENTION_TEXT, "abstained")
    by_chunk = {c.chunk_id: c for c in context.chunks}
    by_doc: dict[str, list] = {}
    for c in context.chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    kept: list[str] = []
    result = CheckedAnswer("", "answered")
    cited_keys: dict[str, Citation] = {}
    sentence_spans: dict[str, list[CitedSpan]] = {}
    for sentence, cites in split_cited_sentences(draft):
        if not cites:
            result.dropped.append(sentence)
            continue
        bad = [f"{k}:{i}" for k, i in cites if (k == "chunk" and i not in by_chunk) or (k == "doc" and i not in by_doc)]
        if bad:
            for b in bad:
                if b not in result.fabricated:
                    result.fabricated.append(b)
            result.dropped.append(sentence)
            continue
        markers = []
        for kind, ident in dict.fromkeys(cites):
            chunk = by_chunk[ident] if kind == "chunk" else _best_chunk(by_doc[ident], sentence)
            markers.append(f"[{kind}:{ident}]")
            if chunk.chunk_id not in result.used_ids:
                result.used_ids.append(chunk.chunk_id)
            key = chunk.doc_id if kind == "doc" else chunk.chunk_id
            span = (spans or {}).get(sentence) or _quoted(chunk.text, sentence)
            cited = chunk.citation(*span) if span else chunk.citation()
            cited_keys.setdefault(key, cited)
            sentence_spans.setdefault(key, []).append(CitedSpan(len(kept), chunk.chunk_id, cited.start, cited.end))
        kept.append(f"{sentence} {' '.join(markers)}")
    result.citations = [dataclasses.replace(c, spans=tuple(sentence_spans[k])) for k, c in cited_keys.items()]
    if not kept:
        result.text, result.outcome = ABSTENTION_TEXT, "abstained"
        result.used_ids = []
        return result
    result.text = join_sentences(kept)
    result.outcome = "partial" if result.dropped else "answered"
    return result


def _quoted(text: str, sentence: str) -> tuple[int, int] | None:
    """``(start, end)`` of ``sentence`` in ``text`` when the chunk holds it verbatim (whitespace
    runs may differ), else None."""
    words = sentence.split()
    if not words:
        return None
    m = re.search(r"\s+".join(re.escape(w) for w in words), text)
    return (m.start(), m.end()) if m else None


def marker_links(text: str, citations) -> list[dict]:
    """Every citation marker in an answer's ``text`` with the span it links to.

    The n-th ``[doc:ID]`` (or ``[chunk:ID]``) marker of the text belongs to the n-th sentence
    citing that source, so it links to ``spans[n]`` of the source's :class:`Citation` (its own
    sentence's offsets); a citation without spans links every marker to its ``start``/``end``.
    ``citations``: :class:`Citation` objects, or their JSON dicts (``spans`` as dicts).

    Returns:
        ``[{"marker_start", "marker_end", "kind", "id", "doc_id", "chunk_id", "title", "start",
        "end", "number"}]`` in text order: ``marker_start``/``marker_end`` are the offsets of
        ``kind:id`` in ``text``; ``number`` is the source's 1-based place among the answer's
        sources. A marker naming no citation is left out.

    >>> c = Citation("a", "A", "", "", "a#x", 0, 5, (CitedSpan(0, "a#x", 0, 5), CitedSpan(1, "a#x", 6, 9)))
    >>> [(m["start"], m["end"]) for m in marker_links("One. [doc:a] Two. [doc:a]", [c])]
    [(0, 5), (6, 9)]
    """

    def get(c, name):
        return c.get(name) if isinstance(c, dict) else getattr(c, name)

    by_doc: dict[str, object] = {}
    by_chunk: dict[str, object] = {}
    number: dict[int, int] = {}
    for c in citations:
        if id(c) not in number:
            number[id(c)] = len(number) + 1
        by_doc.setdefault(get(c, "doc_id"), c)
        by_chunk.setdefault(get(c, "chunk_id"), c)
    seen: dict[tuple[str, str], int] = {}
    out = []
    for b in BRACKET.finditer(text):
        for m in ONE.finditer(text, b.start(), b.end()):
            kind, ident = m.group(1), m.group(2)
            c = (by_doc if kind == "doc" else by_chunk).get(ident)
            if c is None:
                continue
            n = seen.get((kind, ident), 0)
            seen[(kind, ident)] = n + 1
            spans = get(c, "spans") or ()
            sp = spans[n] if n < len(spans) else None
            start, end, chunk_id = (
                (get(c, "start"), get(c, "end"), get(c, "chunk_id"))
                if sp is None
                else (get(sp, "start"), get(sp, "end"), get(sp, "chunk_id"))
            )
            out.append(
                {
                    "marker_start": m.start(),
                    "marker_end": m.end(),
                    "kind": kind,
                    "id": ident,
                    "doc_id": get(c, "doc_id"),
                    "chunk_id": chunk_id,
                    "title": get(c, "title"),
                    "start": start,
                    "end": end,
                    "number": number[id(c)],
                }
            )
    return out


def join_sentences(pieces: list[str]) -> str:
    """Join cited sentences into answer text: prose with single spaces, a fenced code block on
    lines of its own (its indentation untouched).

    >>> join_sentences(["A. [doc:a]", "```py\\nif x:\\n    y()\\n``` [doc:a]", "B. [doc:b]"])
    'A. [doc:a]\\n```py\\nif x:\\n    y()\\n``` [doc:a]\\nB. [doc:b]'
    """
    out = ""
    prev_block = False
    for piece in pieces:
        block = bool(_FENCE.match(piece))
        if out:
            out += "\n" if block or prev_block else " "
        out += piece
        prev_block = block
    return out


def _best_chunk(chunks: list, sentence: str):
    """The chunk of a document that a ``[doc:ID]`` sentence most likely quotes: the one sharing
    the most words with it (ties: presentation order)."""
    if len(chunks) == 1:
        return chunks[0]
    words = set(re.findall(r"\w+", sentence.lower()))
    return max(chunks, key=lambda c: (len(words & set(re.findall(r"\w+", c.text.lower()))), -chunks.index(c)))
