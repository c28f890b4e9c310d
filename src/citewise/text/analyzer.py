"""The lexical analyzer that builds the BM25 field for every Store backend.

Pipeline (DESIGN.md, "Our own analyzer"): Unicode NFKD with combining marks removed (ascii folding
of accents), lowercase, split into tokens, drop English stop words, stem alphabetic tokens with
the Snowball English stemmer (PyStemmer). The engine then only splits on whitespace, so BM25
behaves the same on every backend.

Identifiers stay whole: a token may contain ``-``, ``_`` or ``.`` between alphanumeric runs, so
``E-1004`` -> ``e-1004``, ``MT103`` -> ``mt103``, ``v4.5`` -> ``v4.5``,
``capture_timeout_ms`` -> ``capture_timeout_ms``. A compound that contains a digit is an
identifier and is emitted whole only (``e-1004`` must not match every text with a ``1004``). A
compound of letters only (``anti-inflammatory``, ``capture_timeout_ms``) is emitted whole *and*
as its stemmed parts, so both the exact form and its words match.

The stop-word list is Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (33 words), which
Anserini's BEIR baselines use.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer

#: Lucene EnglishAnalyzer default stop set (org.apache.lucene.analysis.en.EnglishAnalyzer).
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)

#: Bump when the analyzer's output changes: an index built with another version must be rebuilt.
ANALYZER_VERSION = "1"

_TOKEN = re.compile(r"[^\W_]+(?:[-_.][^\W_]+)*", re.UNICODE)
_SPLIT = re.compile(r"[-_.]")
_HAS_DIGIT = re.compile(r"\d")


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def fold(text: str) -> str:
    """Lowercase and strip accents (NFKD, combining marks removed)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def raw_tokens(text: str) -> list[str]:
    """Folded tokens before stop-word removal and stemming, identifiers whole."""
    return _TOKEN.findall(fold(text))


def _stem(word: str) -> str:
    return _stemmer().stemWord(word)


def analyze(text: str) -> list[str]:
    """Lexical terms of ``text``: the list a BM25 index stores (order kept, duplicates kept).

    >>> analyze("Error E-1004 in the Refunds API v4.5")
    ['error', 'e-1004', 'refund', 'api', 'v4.5']
    """
    out: list[str] = []
    for tok in raw_tokens(text):
        if tok in STOP_WORDS:
            continue
        if _SPLIT.search(tok):
            if _HAS_DIGIT.search(tok):
                out.append(tok)  # identifier: whole only
                continue
            out.append(tok)
            out.extend(_stem(p) for p in _SPLIT.split(tok) if p and p not in STOP_WORDS)
            continue
        out.append(tok if _HAS_DIGIT.search(tok) else _stem(tok))
    return out


def lexical_text(text: str) -> str:
    """``analyze(text)`` joined by single spaces: the string stored in the lexical field."""
    return " ".join(analyze(text))


#: An identifier as users write them: letters then digits with an optional separator
#: (``E-1004``, ``MT103``, ``INV-2041``), or a version (``v4.5``). Used for pinning.
IDENTIFIER = re.compile(r"\b(?:[A-Za-z]{1,5}[-_]?\d{3,}(?:[-_.]\d+)*|v\d+(?:\.\d+)+)\b")


def find_identifiers(text: str) -> list[str]:
    """Identifiers named in ``text``, folded, in order of appearance, unique.

    >>> find_identifiers("What does E-1004 mean, and is MT103 related?")
    ['e-1004', 'mt103']
    """
    seen: dict[str, None] = {}
    for m in IDENTIFIER.finditer(text):
        seen.setdefault(fold(m.group(0)), None)
    return list(seen)
