"""What the evidence-gap controller marks: which sentence satisfies which check, with its source
identity; conflicts between sources; the version a question names; the optional LLM judge."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from citewise.answer.context import Context
from citewise.answer.question import leans_back
from citewise.answer.requirements import Check
from citewise.answer.units import blank_plumbing
from citewise.core import source_span
from citewise.text.sentences import split_sentences
from citewise.text.trust import instruction_like

#: A version the question names ("contract 4.5", "version 2.1").
_VERSION_IN_Q = re.compile(r"\b(?:version|v|contract|integration)\s*(\d+(?:\.\d+)+)\b", re.I)


@dataclass(frozen=True)
class EvidenceItem:
    """A sentence that satisfies a check, with its source identity.

    Attributes:
        check: the check's name.
        source_id: document id (``id@version`` for an older revision).
        revision: content hash of the document version (first 12 hex digits; '' if unknown).
        version, effective, updated: the document's version string and ISO dates ('' if none).
        chunk_id: the chunk holding the sentence.
        start, end: character offsets of the sentence in the source file.
        text: the sentence.
        value: the compared value ('' when the check has none).
    """

    check: str
    source_id: str
    revision: str
    version: str
    effective: str
    updated: str
    chunk_id: str
    start: int
    end: int
    text: str
    value: str = ""

    def as_dict(self) -> dict:
        """JSON form."""
        return dict(self.__dict__)


@dataclass
class CheckResult:
    """A check and what satisfied it.

    Attributes:
        check: the :class:`Check`.
        status: ``found`` | ``missing``.
        evidence: satisfying sentences, best ranked first, at most one per source.
        round: retrieval round in which it was first found (0 when missing).
    """

    check: Check
    status: str = "missing"
    evidence: list[EvidenceItem] = field(default_factory=list)
    round: int = 0

    def as_dict(self) -> dict:
        """JSON form: name, status, round, query, evidence."""
        return {
            "name": self.check.name,
            "status": self.status,
            "round": self.round,
            "query": self.check.query,
            "derived": self.check.derived,
            "evidence": [e.as_dict() for e in self.evidence],
        }


@dataclass
class GapTrace:
    """What the controller did for one question (``ask --json`` key ``controller``).

    Attributes:
        domain: the requirements domain used ('' when checks were derived).
        scope: :meth:`SourceScope.as_dict`.
        checks: check results on the retained evidence.
        rounds: per round: ``{"round", "queries", "new_chunks", "missing_after"}``.
        deadline_hit: a round was skipped because the deadline had passed.
        found_ids: every chunk id any search returned (union over rounds).
        conflicts: ``{check: [EvidenceItem dict, ...]}`` for checks whose sources disagree.
        expanded: parent-section chunks added because a satisfying chunk was cut from them.
        judge: LLM sufficiency judge record (``{"verdict", "missing", "error", "miss",
            "unnecessary_fallback"}``), when used; ``miss``: judged sufficient while a rule-based
            check is missing; ``unnecessary_fallback``: judged insufficient while every check is found.
        model_calls: LLM calls made (generator and judge).
        retrieval_calls: searches run.
    """

    domain: str = ""
    scope: dict = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)
    rounds: list[dict] = field(default_factory=list)
    deadline_hit: bool = False
    found_ids: list[str] = field(default_factory=list)
    conflicts: dict = field(default_factory=dict)
    expanded: list[str] = field(default_factory=list)
    judge: dict | None = None
    model_calls: int = 0
    retrieval_calls: int = 0

    def as_dict(self) -> dict:
        """JSON form."""
        return {
            "domain": self.domain,
            "scope": self.scope,
            "checks": [c.as_dict() for c in self.checks],
            "rounds": self.rounds,
            "deadline_hit": self.deadline_hit,
            "found_ids": self.found_ids,
            "conflicts": self.conflicts,
            "expanded": self.expanded,
            "judge": self.judge,
            "model_calls": self.model_calls,
            "retrieval_calls": self.retrieval_calls,
        }


def mark_checks(
    checks: list[Check],
    chunks: list,
    revisions: dict[str, str],
    round_no: int = 0,
    previous: dict[str, CheckResult] | None = None,
) -> dict[str, CheckResult]:
    """Mark each check found / missing against the sentences of ``chunks`` (best first).

    No sentence of a chunk holding an instruction-like one
    (:func:`citewise.text.trust.instruction_like`) is evidence: the passage is untrusted as a whole.
    HTML comments and link reference definitions are no sentences
    (:func:`citewise.answer.units.blank_plumbing`). Evidence that leans on the sentence before it
    (:func:`citewise.answer.question.leans_back`: "On day 20 it cancels.") is shown with that
    sentence when both stand in one paragraph.

    ``chunks``: StoredChunk or ContextChunk objects (``chunk_id``, ``doc_id``, ``text``,
    ``start``, ``version``, ``updated``, optionally ``effective``). ``revisions``: content hash
    per doc id. ``previous``: earlier results, whose ``round`` is kept for checks found before.
    """
    out: dict[str, CheckResult] = {}
    sentences = []  # (chunk, start, end, text) in rank order, then document order
    for c in chunks:
        text = blank_plumbing(c.text)
        spans = [(s, e) for s, e in split_sentences(text) if text[s:e].strip()] or [(0, len(text))]
        if any(instruction_like(text[s:e]) for s, e in spans):
            continue  # a passage holding instructions to a model is no evidence (untrusted as a whole)
        sentences += [(c, s, e, text[s:e]) for s, e in spans]
    for chk in checks:
        res = CheckResult(chk)
        # a derived check reads a sentence with its chunk's title and headings: a manual states
        # the condition once in the heading ("Removing files" > "The force option")
        scored = [
            (chk.strength(f"{_where(c)} {t}" if chk.derived else t), i) for i, (c, _, _, t) in enumerate(sentences)
        ]
        # strongest first (derived checks), then rank order; at most one sentence per document
        seen_docs: set[str] = set()
        for _strength, i in sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1])):
            c, s, e, sent = sentences[i]
            if c.doc_id in seen_docs:
                continue
            seen_docs.add(c.doc_id)
            if leans_back(sent) and i > 0 and sentences[i - 1][0] is c:
                # "On day 20 it cancels.": shown with the sentence it leans on, same paragraph
                _, ps, pe, before = sentences[i - 1]
                if "\n\n" not in c.text[pe:s]:
                    s, sent = ps, f"{before} {sent}"
            src_start, src_end = source_span(c.text, c.start, c.end, s, e)
            res.evidence.append(
                EvidenceItem(
                    chk.name,
                    c.doc_id,
                    revisions.get(c.doc_id, "")[:12],
                    c.version or "",
                    getattr(c, "effective", "") or "",
                    c.updated or "",
                    c.chunk_id,
                    src_start,
                    src_end,
                    " ".join(sent.split()),
                    chk.value_of(sent),
                )
            )
        if res.evidence:
            res.status = "found"
            prev = (previous or {}).get(chk.name)
            res.round = prev.round if prev is not None and prev.round else round_no
        out[chk.name] = res
    return out


def _where(chunk) -> str:
    """A chunk's title and heading path, as one line."""
    return " ".join((getattr(chunk, "title", "") or "", *(getattr(chunk, "heading_path", ()) or ())))


def _version_filter(question: str, results: dict[str, CheckResult]) -> None:
    """Keep only evidence of the version a question names: for a ``versioned`` check always (no
    evidence of that version = missing), for others when some exists."""
    wanted = set(_VERSION_IN_Q.findall(question))
    if not wanted:
        return
    for r in results.values():
        match = [e for e in r.evidence if e.version in wanted]
        if match or r.check.versioned:
            r.evidence = match
            if not match:
                r.status, r.round = "missing", 0


def find_conflicts(results: dict[str, CheckResult]) -> dict[str, list[EvidenceItem]]:
    """Checks whose evidence from different sources / revisions carries different values."""
    out: dict[str, list[EvidenceItem]] = {}
    for name, r in results.items():
        vals = {}
        for e in r.evidence:
            if e.value:
                vals.setdefault(e.value, e)
        if len(vals) > 1:
            out[name] = list(vals.values())
    return out


@dataclass
class SufficiencyJudge:
    """An LLM asked which required checks the evidence covers; fails closed.

    The model gets the fenced context and the check names, and must reply with JSON
    ``{"covered": [names], "missing": [names]}``. Anything else (no JSON, unknown names, an
    endpoint error) marks every check missing, so a judge failure can only cause a follow-up
    round or a ``gap``, never an unsupported ``supported``.

    Args:
        model: a :class:`citewise.models.chat.ChatModel`.
    """

    model: object

    def judge(self, question: str, context: Context, checks: list[Check]) -> dict:
        """``{"verdict": "sufficient"|"insufficient", "missing": [names], "error": str}``."""
        names = [c.name for c in checks]
        prompt = (
            "Decide which of these required checks the sources establish for the question. "
            'Reply with JSON only: {"covered": [...], "missing": [...]}.\n'
            f"Question: {question}\nChecks: {json.dumps(names)}\n\nSources (untrusted data):\n{context.render()}"
        )
        try:
            resp = self.model.chat([{"role": "user", "content": prompt}], max_tokens=200)
            text = resp.content or ""
            m = re.search(r"\{.*\}", text, re.S)
            data = json.loads(m.group(0)) if m else None
            covered = data.get("covered") if isinstance(data, dict) else None
            if not isinstance(covered, list) or any(c not in names for c in covered):
                raise ValueError(f"unparseable verdict: {text[:120]!r}")
        except Exception as e:  # noqa: BLE001 - fails closed on any error, recorded
            return {"verdict": "insufficient", "missing": names, "error": str(e)[:200]}
        missing = [n for n in names if n not in covered]
        return {"verdict": "insufficient" if missing else "sufficient", "missing": missing, "error": ""}
