"""The lexical analyzer that builds the BM25 field for every Store backend.

Pipeline (DESIGN.md, "Our own analyzer"): fold Unicode dashes, Unicode NFKD with the combining
marks of Latin, Greek and Cyrillic letters removed (ascii folding of accents; NFC afterwards so
Hangul syllables and kana with voicing marks are whole again), lowercase, split into tokens,
segment scripts written without spaces into overlapping bigrams, drop English stop words, stem
alphabetic tokens with the Snowball English stemmer (PyStemmer). The engine then only splits on
whitespace, so BM25 behaves the same on every backend.

What each script gets:

=====================================  ========================================================
Script                                 Terms
=====================================  ========================================================
Latin, Greek, Cyrillic, Armenian,      lowercase, accents removed (Latin/Greek/Cyrillic), split
Hebrew, Arabic, Devanagari and other   at non-word characters; Snowball *English* stemming of
space-separated scripts                alphabetic tokens (words of other languages are mostly
                                       left as they are by it); English stop words dropped
Han, Hiragana, Katakana, Hangul        overlapping character bigrams of each run of these
(CJK)                                  scripts (``申请退款`` -> ``申请 请退 退款``); a run of one
                                       character is kept as a unigram
Thai, Lao, Khmer, Myanmar              the same bigrams (no dictionary ships offline; a
                                       dictionary/ICU segmenter would be more precise)
digits, identifiers                    kept whole (below)
=====================================  ========================================================

Why bigrams, not a dictionary segmenter such as jieba: bigrams need no dictionary, treat Chinese,
Japanese and Korean alike (jieba is Chinese-only and ships a 20 MB dictionary), cannot miss an
out-of-vocabulary word (product names, ``退款`` in a new compound), and are the standard
no-dictionary choice: Lucene's ``CJKAnalyzer`` = ``CJKWidthFilter`` + ``CJKBigramFilter``
(org.apache.lucene.analysis.cjk), which also emits a lone CJK character as a unigram (NFKD does
the width filter's job here: full-width ``ＡＢＣ１`` -> ``abc1``, half-width katakana -> full-width). The cost is
some false bigrams across word boundaries, which BM25's IDF mostly discounts. A one-character
query (``款``) matches only a lone character in the text, as in Lucene.

Identifiers stay whole: a token may contain ``-``, ``_`` or ``.`` between alphanumeric runs, so
``E-1004`` -> ``e-1004``, ``MT103`` -> ``mt103``, ``v4.5`` -> ``v4.5``,
``capture_timeout_ms`` -> ``capture_timeout_ms``. A compound that contains a digit is an
identifier and is emitted whole only (``e-1004`` must not match every text with a ``1004``). A
compound of letters only (``anti-inflammatory``, ``capture_timeout_ms``) is emitted whole *and*
as its stemmed parts, so both the exact form and its words match.

Dashes (identifiers typed in word processors): the hyphens U+2010 and U+2011 (non-breaking) are
folded to ``-`` everywhere and the soft hyphen U+00AD is removed, so ``E\u20111004`` is the
identifier ``e-1004`` and ``motif\u2010bearing`` equals ``motif-bearing``. The dashes U+2012..U+2015
(figure, en, em dash, horizontal bar) and U+2212 (minus) are folded to ``-`` only between a letter
and a digit (``E\u20131004`` -> ``e-1004``); elsewhere they stay separators, so a range
``10\u201320`` still gives ``10`` and ``20`` and ``cells\u2014and`` two words, as before (folding them
everywhere changed the terms of 6% of SciFact's documents). Identifier pinning
(:func:`find_identifiers`) folds the same way.

The stop-word list is Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (33 words), which
Anserini's BEIR baselines use.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import chain

import Stemmer

#: Lucene EnglishAnalyzer default stop set (org.apache.lucene.analysis.en.EnglishAnalyzer).
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)

#: Bump when the analyzer's output changes: an index built with another version must be rebuilt.
#: v2: Unicode dashes folded, CJK/Thai bigrams, marks of non-Latin scripts kept.
ANALYZER_VERSION = "2"

#: Unicode hyphens and dashes that may stand for '-' (see module docstring), and the soft hyphen.
DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_HYPHEN_TABLE = {0x2010: "-", 0x2011: "-", 0x00AD: None}
_DASH_OR_SHY = re.compile("[\u00ad" + DASHES + "]")
#: A dash joining letters to digits (``E\u20131004``): folded to '-' like a hyphen.
_ID_DASH = re.compile(r"(?<=[^\W\d_])[\u2012-\u2015\u2212](?=\d)")


def _mark_class() -> str:
    """A regex class body of every combining mark (category M*) in the BMP and SMP."""
    ranges: list[list[int]] = []
    for cp in range(0x300, 0x20000):
        if unicodedata.category(chr(cp))[0] == "M":
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" if b > a else re.escape(chr(a)) for a, b in ranges)


@lru_cache(maxsize=1)
def _token_re() -> re.Pattern:
    """Tokens whose word characters include combining marks (Devanagari, Thai and kana marks stay
    inside their word). Built on first use: scanning the code points for marks takes ~0.1 s,
    which every ``citewise search`` paid at import although most text has no marks."""
    w = rf"(?:[^\W_]|[{_mark_class()}])"
    return re.compile(rf"{w}+(?:[-_.]{w}+)*", re.UNICODE)


#: :func:`_token_re` for text without combining marks (the alternation per character is what
#: makes it slow), and for ASCII text (where ``[^\W_]`` is ``[0-9a-zA-Z]``): same matches.
_TOKEN_NO_MARKS = re.compile(r"[^\W_]+(?:[-_.][^\W_]+)*", re.UNICODE)
_TOKEN_ASCII = re.compile(r"[0-9A-Za-z]+(?:[-_.][0-9A-Za-z]+)*")
_SPLIT = re.compile(r"[-_.]")
_HAS_DIGIT = re.compile(r"\d")

#: Scripts written without spaces between words: Han (incl. extensions), Hiragana, Katakana,
#: Hangul, Thai, Lao, Khmer, Myanmar. Their runs are segmented into bigrams.
_NOSPACE = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17ff"  # Khmer
    "\u2e80-\u2fdf"  # CJK radicals
    "\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u303c"  # ideographic iteration marks etc.
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f\u31f0-\u31ff"  # Hangul compatibility jamo, Katakana extensions
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\U00020000-\U0003134f"  # CJK extensions B..G
)
_NOSPACE_RUN = re.compile(f"[{_NOSPACE}]+")
_NOSPACE_CHAR = re.compile(f"[{_NOSPACE}]")


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def fold_dashes(text: str) -> str:
    """``text`` with soft hyphens removed, hyphens U+2010/U+2011 folded to ``-``, and the other
    Unicode dashes folded to ``-`` where they join a letter to a digit (module docstring).

    >>> fold_dashes("E\u20111004, E\u2013\u00ad1005, 10\u201320 and a\u2014b")
    'E-1004, E-1005, 10\u201320 and a\u2014b'
    """
    if text.isascii() or not _DASH_OR_SHY.search(text):
        return text
    return _ID_DASH.sub("-", text.translate(_HYPHEN_TABLE))


def _strips_marks(base: str) -> bool:
    """Whether accents on ``base`` are removed: Latin, Greek and Cyrillic letters (and the
    Latin/Greek extended blocks), as ascii folding does; other scripts keep their marks."""
    cp = ord(base)
    return cp < 0x0530 or 0x1D00 <= cp < 0x2000 or 0x2C60 <= cp < 0x2C80 or 0xA720 <= cp < 0xA800


@lru_cache(maxsize=1024)
def _runs_of(chars: str) -> re.Pattern:
    """A pattern matching runs of the given characters (the combining marks found in a text:
    a small class is much faster to match than one of every mark)."""
    return re.compile(f"[{re.escape(chars)}]+")


def _has_mark(text: str) -> bool:
    """Whether ``text`` contains a combining mark (category M, U+0300..U+1FFFF),
    checked on its distinct characters."""
    return any(not c.isascii() and _is_mark(c) for c in set(text))


@lru_cache(maxsize=8192)
def _is_mark(c: str) -> bool:
    return 0x300 <= ord(c) < 0x20000 and unicodedata.category(c)[0] == "M"


def fold(text: str) -> str:
    """Fold dashes, lowercase, strip the accents of Latin, Greek and Cyrillic letters (NFKD,
    their combining marks removed, then NFC so other scripts compose again).

    A run of combining characters is removed when the character before it is one whose accents
    are stripped (:func:`_strips_marks`; a run at the very start is removed too), kept otherwise.
    """
    if text.isascii():
        return text.lower()
    text = fold_dashes(text)
    decomposed = unicodedata.normalize("NFKD", text)
    if decomposed.isascii():  # nothing to strip, nothing to compose
        return decomposed.lower()
    combining = "".join(sorted(c for c in set(decomposed) if unicodedata.combining(c)))
    if not combining:  # nothing to strip; compose what NFKD decomposed in other scripts
        return unicodedata.normalize("NFC", decomposed).lower()
    parts: list[str] = []
    pos = 0
    kept_mark = False
    for m in _runs_of(combining).finditer(decomposed):
        start = m.start()
        parts.append(decomposed[pos:start])
        if start > 0 and not _strips_marks(decomposed[start - 1]):
            parts.append(m.group(0))
            kept_mark = True
        pos = m.end()
    parts.append(decomposed[pos:])
    folded = "".join(parts)
    if kept_mark or not folded.isascii():
        folded = unicodedata.normalize("NFC", folded)
    return folded.lower()


def _segment(tok: str) -> list[str]:
    """A folded token split by script: runs of no-space scripts become overlapping bigrams (a
    one-character run a unigram); the other runs stay tokens (re-split at the run borders)."""
    out: list[str] = []
    pos = 0
    for m in _NOSPACE_RUN.finditer(tok):
        if m.start() > pos:
            out.extend(_token_re().findall(tok[pos : m.start()]))
        run = m.group(0)
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        pos = m.end()
    if pos < len(tok):
        out.extend(_token_re().findall(tok[pos:]))
    return out


def raw_tokens(text: str) -> list[str]:
    """Folded tokens before stop-word removal and stemming, identifiers whole, runs of CJK and
    other no-space scripts as overlapping bigrams.

    >>> raw_tokens("申请退款需要主管批准。")
    ['申请', '请退', '退款', '款需', '需要', '要主', '主管', '管批', '批准']
    """
    folded = fold(text)
    if folded.isascii():
        return _TOKEN_ASCII.findall(folded)
    toks = (_token_re() if _has_mark(folded) else _TOKEN_NO_MARKS).findall(folded)
    if not _NOSPACE_CHAR.search(folded):
        return toks
    out: list[str] = []
    for tok in toks:
        if _NOSPACE_CHAR.search(tok):
            out.extend(_segment(tok))
        else:
            out.append(tok)
    return out


def _stem(word: str) -> str:
    return _stemmer().stemWord(word)


def _token_terms(tok: str) -> tuple[str, ...]:
    """The terms one raw token contributes (see :func:`analyze`)."""
    if tok in STOP_WORDS:
        return ()
    if not tok.isascii() and _NOSPACE_CHAR.match(tok):
        return (tok,)  # a CJK/Thai bigram or unigram: no stemming
    if _SPLIT.search(tok):
        if _HAS_DIGIT.search(tok):
            return (tok,)  # identifier: whole only
        return (tok, *(_stem(p) for p in _SPLIT.split(tok) if p and p not in STOP_WORDS))
    return (tok if _HAS_DIGIT.search(tok) else _stem(tok),)


#: Memo of :func:`_token_terms` (a pure function of the token); replaced by an empty one when it
#: reaches :data:`_TERMS_MAX` entries, so memory stays bounded on any vocabulary. Entries are only
#: ever added to a memo, so a thread holding one sees every token it added itself.
_TERMS: dict[str, tuple[str, ...]] = {}
_TERMS_MAX = 1 << 18


def analyze(text: str) -> list[str]:
    """Lexical terms of ``text``: the list a BM25 index stores (order kept, duplicates kept).

    >>> analyze("Error E-1004 in the Refunds API v4.5")
    ['error', 'e-1004', 'refund', 'api', 'v4.5']
    """
    return list(_analyze(text))


@lru_cache(maxsize=8192)
def _analyze(text: str) -> tuple[str, ...]:
    """:func:`analyze` as a tuple, memoised for the last 8,192 texts: ingestion analyzes each
    chunk twice (the hashing embedder, then the store's lexical column) within one batch."""
    global _TERMS
    memo = _TERMS
    toks = raw_tokens(text)
    per_token = list(map(memo.get, toks))
    if None in per_token:
        if len(memo) >= _TERMS_MAX:
            memo = _TERMS = {}  # replaced, not cleared: another thread may be reading the old one
        for tok in set(toks).difference(memo):
            memo[tok] = _token_terms(tok)
        per_token = list(map(memo.__getitem__, toks))
    return tuple(chain.from_iterable(per_token))


def lexical_text(text: str) -> str:
    """``analyze(text)`` joined by single spaces: the string stored in the lexical field."""
    return " ".join(analyze(text))


#: An identifier as users write them: letters then digits with an optional separator
#: (``E-1004``, ``MT103``, ``INV-2041``), or a version (``v4.5``). Used for pinning. Its borders
#: are ASCII word characters only, so it is found inside unspaced CJK text too (``E-1004是什么``).
IDENTIFIER = re.compile(r"(?<![A-Za-z0-9_])(?:[A-Za-z]{1,5}[-_]?\d{3,}(?:[-_.]\d+)*|v\d+(?:\.\d+)+)(?![A-Za-z0-9_])")


#: A release number with a word that says so on either side: ``version 6.5``, ``release 2.0.1``,
#: ``v6.5`` (also ``v6.5`` itself by :data:`IDENTIFIER`), ``Ledgerly 6.5 release notes``. A bare
#: ``6.5`` is no identifier ("a fee of 2.5 percent"); cued, it pins the page titled with it.
VERSION_CUED = re.compile(
    r"(?i)(?:\b(?:versions?|releases?|ver\.?|v)\s*(\d+(?:\.\d+)+)(?![\w.]*\d)"
    r"|(?<![\w.])(\d+(?:\.\d+)+)\s+(?:versions?|releases?)\b)"
)


def find_identifiers(text: str) -> list[str]:
    """Identifiers named in ``text``, folded, in order of appearance, unique: :data:`IDENTIFIER`
    matches and release numbers with a cue word (:data:`VERSION_CUED`: the number alone).

    Unicode dashes are folded first (:func:`fold_dashes`), so ``E\u20111004`` is ``e-1004``.

    >>> find_identifiers("What does E-1004 mean, and is MT103 related?")
    ['e-1004', 'mt103']
    >>> find_identifiers("What changed in version 6.5?"), find_identifiers("Ledgerly 6.5 release notes")
    (['6.5'], ['6.5'])
    >>> find_identifiers("Upgrade to v4.5"), find_identifiers("a fee of 2.5 percent")
    (['v4.5', '4.5'], [])
    """
    text = fold_dashes(text)
    found = [(m.start(), m.group(0)) for m in IDENTIFIER.finditer(text)]
    found += [(m.start(), m.group(1) or m.group(2)) for m in VERSION_CUED.finditer(text)]
    seen: dict[str, None] = {}
    for _, ident in sorted(found, key=lambda p: p[0]):
        seen.setdefault(fold(ident), None)
    return list(seen)
