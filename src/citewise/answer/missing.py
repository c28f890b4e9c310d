"""Names a question asks about that the evidence chunks do not hold: the "not in the evidence"
rules of :class:`citewise.answer.evidence.EvidenceScorer` that need no corpus statistics."""

from __future__ import annotations

import re
from typing import Sequence

from citewise.answer.known_forms import evidence_terms
from citewise.answer.question_words import QUESTION_WORDS, _option_entry_of
from citewise.core import Reason, ReasonCode
from citewise.text.analyzer import analyze, fold_dashes
from citewise.text.names import NOT_NAMES, code_names, entry_offsets, heading_pattern, slot_names
from citewise.text.rarity import ordinary_word

#: "the X builtin / lint / reserved word": kinds of things a reference documents as entries (a
#: heading or a definition led by the name). Options and variables are left out: "the same
#: option" names nothing, and a PDF manual's variable glossary has no entry markup to find.
ENTRY_SLOT = re.compile(r"\bthe\s+([a-z][\w-]{2,})\s+(?:builtins?|lints?|reserved\s+words?)\b", re.I)


def missing_name(question: str, seen: set[str]) -> Reason | None:
    """``'not in the evidence: X'`` when the question names a thing (a code name or a slot
    name, :func:`citewise.text.names.slot_names`) that occurs in the corpus but in none of the
    evidence chunks (``seen``: their analyzed terms), else ''. "How do I use the retry
    reserved word in bash?" retrieves bash chunks; "retry" occurs only in other documents,
    so whatever those chunks say, it is not about the thing asked for. An ordinary English
    word among the code names (the word after a one-letter flag: "does less -i still ignore
    case") is never missed: it may be the sentence going on."""
    question = fold_dashes(question)
    for name in code_names(question):
        if ordinary_word(name):  # "less -i still ignore case": a word, not a thing named
            continue
        terms = analyze(name)
        # a name with a digit (SHA-256, x86_64-...) is often written another way (sha256);
        # its absence from the whole corpus is :meth:`unknown_name`'s business
        if terms and " " not in name.strip() and not re.search(r"\d", name) and terms[0] not in seen:
            if not any(t in seen for t in evidence_terms(name)):  # fs.constants.O_DIRECT: its row
                return Reason.of(ReasonCode.NOT_IN_EVIDENCE, what=name)
    for word in slot_names(question):
        terms = [t for t in analyze(word) if t not in QUESTION_WORDS]
        if terms and not any(t in seen for t in terms):
            return Reason.of(ReasonCode.NOT_IN_EVIDENCE, what=word)
    return None


def missing_entry(question: str, chunks: Sequence) -> Reason | None:
    """``'not in the evidence: the X builtin'`` when the question asks about "the X builtin"
    (or lint, or reserved word; :data:`ENTRY_SLOT`) and no chunk of ``chunks`` has an entry
    for X (a heading naming it, a list item or definition led by it:
    :func:`citewise.text.names.entry_offsets`), else ''. "How do I use the repeat builtin?"
    retrieves the manual's chunks that say "repeat" in prose; a builtin that exists has its
    entry. A chunk holding the entry of the option the question names (``-t timeout`` / ``:
    Cause read to time out ...``) and saying X counts too: a long builtin's options run into
    the next chunk, past its heading ("What does the -t option of the read builtin do?")."""
    flags = [f for f in code_names(question) if re.fullmatch(r"--?[A-Za-z][\w-]*", f)]
    for m in ENTRY_SLOT.finditer(question):
        name = m.group(1)
        if name.lower() in NOT_NAMES:  # "the same lint" names nothing
            continue
        rx = heading_pattern(name)
        if not any(
            entry_offsets(c.text, name, c.heading_path[-1] if c.heading_path else "")
            or any(rx.search(h) for h in c.heading_path)
            or _option_entry_of(c.text, flags, name)
            for c in chunks
        ):
            return Reason.of(ReasonCode.NOT_IN_EVIDENCE, what=m.group(0))
    return None
