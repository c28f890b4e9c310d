"""Which words of a question can name a thing: by their shape, or by being rare in English.

The unknown-name rule (:meth:`citewise.answer.evidence.EvidenceScorer.unknown_name`) abstains
when a question names something the authorised corpus never mentions. Only *names* may trigger
it; an ordinary English word the pages happen not to use ("minimal", "OK", "employees") is a
paraphrase, not a thing the corpus lacks. A word of the question is a name when

* its **shape** says so (:func:`name_shaped`): letters and digits together (``L4``, ``MT103``;
  not a number with a lower-case unit or ordinal suffix, ``10ms``, ``3g``, ``1st``: a
  quantity; the suffixes are data, ``data/units.yaml``),
  an inner ``_`` ``.`` ``-`` or ``::`` (``x86_64``, ``fs.rm``; single letters joined by dots,
  ``e.g``, ``i.e``, are abbreviations), a leading ``-``/``--`` (a flag),
  CamelCase inside the word (``PayPal``, ``maxHeaderSize``), or all capitals longer than
  :data:`ABBREVIATION_MAX` letters (``SIGPWR``, ``HISTSIZE``; ``OK``, ``CEO``, ``HTTP`` are
  abbreviations, not names); quoted and back-ticked terms are names too
  (:func:`citewise.text.names.code_names` finds those);
* or it is **rare in general English** (:func:`is_rare`): its Zipf frequency in the ``wordfreq``
  package (Speer et al., wordfreq 3; English frequencies blended from Wikipedia, subtitles, news,
  books, web text, Twitter and Reddit; ``zipf = log10(occurrences per billion words)``) is below
  :data:`RARE_ZIPF`, or below :data:`RARE_NAME_ZIPF` when the word is written capitalised after
  the first word of its sentence (a proper noun's shape: "the refund policy of *Stripe*").

The two cut-offs were chosen on the training question sets (``bench/name_rarity.py``: the
real-docs sets dev, heldout, heldout3 … heldout19 and the sample golden / out-of-scope sets; the
held-out sets were not used): no in-scope question of them holds a capitalised word absent from
its corpus with a Zipf frequency under 4.0, and lower-case absent words under 3.0 make three of
706 in-scope questions abstain ("shebang" 2.4, "garbled" 2.6, "retyping" 1.6) against 123 of 449
out-of-scope or false-premise questions caught (2.5: 2 and 117; 3.5: 3 and 127, with "rebuild"
3.9 and "cheapest" 3.8 next in line).

:func:`is_rare` reads a table of the plain ASCII words whose Zipf frequency is at least
:data:`RARE_ZIPF` (about 28,000 of wordfreq's 321,000 English entries, with their exact
``zipf_frequency``): a word of letters a-z absent from it is rare under both cut-offs. The table
is built from wordfreq on first use (importing wordfreq and reading its list costs about half a
CPU second) and kept in :func:`citewise.core.cache_dir` under a name that carries the size and
modification time of wordfreq's English list, so a later process reads a 0.3 MB text file
instead (the :data:`KEEP_TABLES` newest such files are kept, one per installation in use); words with other characters (apostrophes, accents) are looked up in wordfreq itself.

>>> name_shaped("x86_64"), name_shaped("L4"), name_shaped("OK"), name_shaped("SIGPWR"), name_shaped("PayPal")
(True, True, False, True, True)
>>> name_shaped("10ms"), name_shaped("3g"), name_shaped("3DS"), name_shaped("mp3"), name_shaped("2fa")
(False, False, True, True, True)
>>> is_rare("frobnicate"), is_rare("minimal"), is_rare("OK"), is_rare("Stripe", capitalised=True)
(True, False, False, True)
"""

from __future__ import annotations

import importlib.util
import os
import re
from functools import lru_cache
from pathlib import Path

#: Zipf frequency under which a lower-case word is rare in English (a name).
RARE_ZIPF = 3.0
#: Zipf frequency under which a word written capitalised inside its sentence is a name.
RARE_NAME_ZIPF = 4.0
#: All-capital words up to this many letters are abbreviations (``OK``, ``CEO``, ``HTTP``).
ABBREVIATION_MAX = 4

_INNER = re.compile(r"\w(?:[_.\-]|::)\w")
_LETTER_DIGIT = re.compile(r"(?=.*[^\W\d_])(?=.*\d)")
_CAMEL = re.compile(r"[a-z][A-Z]")
#: Single letters joined by dots ("e.g", "i.e.", "U.S"): an abbreviation, not a dotted name.
_DOTTED_ABBREVIATION = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]\.?")
#: A number with a lower-case unit or count suffix ("10ms", "64k", "3g", "1.5x", "1st"): a
#: quantity or an ordinal, not a name. The suffixes are data (``data/units.yaml``).
_QUANTITY = re.compile(r"\d+(?:[.,]\d+)?([a-z]{1,4})")


@lru_cache(maxsize=1)
def unit_suffixes() -> frozenset[str]:
    """The suffixes of ``citewise/text/data/units.yaml``, read once."""
    import yaml
    from importlib import resources

    raw = yaml.safe_load(resources.files("citewise.text").joinpath("data/units.yaml").read_text(encoding="utf-8"))
    return frozenset(str(raw["suffixes"]).split())


def _quantity(token: str) -> bool:
    m = _QUANTITY.fullmatch(token)
    return bool(m) and m.group(1) in unit_suffixes()


#: A plain word: letters, with at most an inner apostrophe ("don't", "Ledgerly's").
PLAIN_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def name_shaped(token: str) -> bool:
    """Whether ``token`` (one whitespace-separated token, punctuation around it removed) is written
    like a name or identifier rather than a word (module docstring)."""
    t = token.strip()
    if not t:
        return False
    if t.startswith("-") and len(t) > 1 and t.lstrip("-")[:1].isalpha():
        return True
    if _DOTTED_ABBREVIATION.fullmatch(t) or _quantity(t):
        return False
    if _INNER.search(t) or _LETTER_DIGIT.match(t) or _CAMEL.search(t):
        return True
    letters = [c for c in t if c.isalpha()]
    return len(letters) > ABBREVIATION_MAX and all(c.isupper() for c in letters)


_ASCII_WORD = re.compile(r"[a-z]+")


@lru_cache(maxsize=1)
def _zipf():
    from wordfreq import zipf_frequency

    return zipf_frequency


@lru_cache(maxsize=65536)
def zipf(word: str) -> float:
    """The word's Zipf frequency in English (0 for a word wordfreq does not know)."""
    return float(_zipf()(word, "en"))


def _wordlist_stamp() -> str:
    """Size and modification time of wordfreq's English list ('' when it cannot be found),
    found without importing wordfreq."""
    spec = importlib.util.find_spec("wordfreq")
    if spec is None or not spec.origin:
        return ""
    data = Path(spec.origin).parent / "data" / "large_en.msgpack.gz"
    try:
        st = data.stat()
    except OSError:
        return ""
    return f"{st.st_size}-{st.st_mtime_ns}"


def _build_common() -> dict[str, float]:
    """``{word: zipf}`` for wordfreq's English entries of letters a-z with Zipf ≥ RARE_ZIPF."""
    from wordfreq import get_frequency_dict

    out: dict[str, float] = {}
    least = 10 ** (RARE_ZIPF - 9) / 1.01  # zipf = log10(frequency) + 9, rounded to 2 decimals
    for w, f in get_frequency_dict("en").items():
        if f >= least and _ASCII_WORD.fullmatch(w):
            z = zipf(w)
            if z >= RARE_ZIPF:
                out[w] = z
    return out


@lru_cache(maxsize=1)
def common_words() -> dict[str, float]:
    """``{word: zipf}`` of the plain words (letters a-z) at or above :data:`RARE_ZIPF`, read
    from the cache file (module docstring), built and written when missing or stale. A cache that
    cannot be written or read is rebuilt in memory."""
    from citewise.core import cache_dir

    stamp = _wordlist_stamp()
    path = cache_dir() / f"wordfreq-en-{stamp}-zipf{RARE_ZIPF:g}.tsv" if stamp else None
    if path is not None:
        try:
            table: dict[str, float] = {}
            for line in path.read_text(encoding="ascii").splitlines():
                w, _, z = line.partition("\t")
                table[w] = float(z)
            if table:
                return table
        except (OSError, ValueError):
            pass
    table = _build_common()
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text("".join(f"{w}\t{z}\n" for w, z in sorted(table.items())), encoding="ascii")
            os.replace(tmp, path)
            _prune(path)
        except OSError:
            pass
    return table


#: Word tables kept in the cache folder, newest first: one per wordfreq installation in use
#: (each virtual environment's list has its own modification time); older ones are removed.
KEEP_TABLES = 3


def _prune(path) -> None:
    """Remove all but the :data:`KEEP_TABLES` newest word tables beside ``path`` (module
    docstring); ``path`` itself is kept."""
    tables = sorted(
        (p for p in path.parent.glob(f"wordfreq-en-*-zipf{RARE_ZIPF:g}.tsv") if p != path),
        key=lambda p: (p.stat().st_mtime, p.name),
        reverse=True,
    )
    for old in tables[KEEP_TABLES - 1 :]:
        old.unlink(missing_ok=True)


def is_rare(word: str, capitalised: bool = False) -> bool:
    """Whether a plain ``word`` is rare in general English (module docstring); ``capitalised``:
    written with a capital inside its sentence."""
    cut = RARE_NAME_ZIPF if capitalised else RARE_ZIPF
    lower = word.lower()
    if _ASCII_WORD.fullmatch(lower):
        return common_words().get(lower, 0.0) < cut
    return zipf(word) < cut


def ordinary_word(name: str) -> bool:
    """Whether ``name`` is a plain word that is common in English (:func:`is_rare`):
    as a name it may be the sentence going on rather than a thing named.

    >>> ordinary_word("still"), ordinary_word("nullglob"), ordinary_word("--emit")
    (True, False, False)
    """
    return bool(PLAIN_WORD.fullmatch(name)) and not is_rare(name)


def name_words(text: str) -> list[str]:
    """Tokens of ``text`` that are names by shape or by rarity, in order, unique; a token's
    surrounding punctuation is removed first. A word opening a sentence counts as capitalised only
    by its shape (every sentence opens with a capital).

    >>> name_words("Is it OK for a program to use minimal memory?")
    []
    >>> name_words("What is the refund policy of Stripe? Does frobnicate need L4?")
    ['Stripe', 'frobnicate', 'L4']
    """
    out: dict[str, None] = {}
    start = True
    for raw in text.split():
        tok = raw.strip(".,;:!?()[]{}\"'`“”‘’<>*")
        ends = raw.rstrip("\"')”’*").endswith((".", "?", "!", ":", ";"))
        if tok:
            if name_shaped(tok):
                out.setdefault(tok, None)
            elif PLAIN_WORD.fullmatch(tok):
                cap = tok[0].isupper() and not start and tok != "I"
                if is_rare(tok, capitalised=cap):
                    out.setdefault(tok, None)
            start = False
        if ends:
            start = True
    return list(out)


def name_phrases(text: str, function_words: frozenset[str] = frozenset()) -> list[str]:
    """Runs of two or more capitalised words of ``text`` that are not a sentence's first word:
    the shape of a multi-word proper name ("Visual Studio Code", "Protocol Buffers"), in order,
    unique. A capitalised word has a lower-case letter: all-capital abbreviations ("SAML",
    "API") and "I" are not part of a run. A run ends at a word without a capital, at a function
    word (``function_words``, lower case: "the", "my", "to"), at punctuation after a word, at a
    sentence's end, and after a possessive ("Node's Buffer" is no name). Each word is one token,
    its surrounding quotes and brackets removed; an inner hyphen keeps it one word ("Sign-In").
    A text written in Title Case (a function word capitalised inside a sentence: "How Do I Change
    My Payment Method?") has no such runs: its capitals say nothing of names.

    >>> name_phrases("How do I install a Visual Studio Code extension?")
    ['Visual Studio Code']
    >>> name_phrases("Open Settings and the Sign-In Log, then Protocol Buffers. Single Sign-On works.")
    ['Sign-In Log', 'Protocol Buffers']
    >>> name_phrases("Is the Pro plan on Stripe billed monthly? Is Node's Buffer Pool large?")
    ['Buffer Pool']
    >>> name_phrases("How Do I Change My Payment Method?", frozenset({"do", "my"}))
    []
    """
    out: dict[str, None] = {}
    run: list[str] = []

    def close() -> None:
        if len(run) >= 2:
            out.setdefault(" ".join(run), None)
        run.clear()

    start = True
    for raw in text.split():
        tok = raw.strip("\"'`“”‘’()[]{}<>*.,;:!?")
        word = tok.replace("-", "")
        function = tok.lower() in function_words
        if function and not start and tok[:1].isupper() and tok != "I":
            return []  # Title Case
        capital = bool(PLAIN_WORD.fullmatch(word)) and tok[0].isupper() and not word.isupper() and not function
        possessive = tok.endswith(("'s", "’s"))
        if capital and not start:
            run.append(tok[:-2] if possessive else tok)
        else:
            close()
        if possessive:  # "Node's Buffer": the name ends at the possessive
            close()
        if raw.rstrip("\"')”’*").endswith((".", ",", "?", "!", ":", ";")):
            close()
        start = raw.rstrip("\"')”’*").endswith((".", "?", "!", ":", ";"))
    close()
    return list(out)


def squeezed(text: str) -> str:
    r"""``text`` lower-cased with spaces, hyphens, underscores and apostrophes removed, and every
    other run of punctuation, a tab or a blank line turned into one ``|`` (a barrier between
    words): the form :meth:`citewise.answer.evidence.EvidenceScorer.phrase_occurs` compares.

    >>> squeezed("Bacs Direct-Debit, or the Pro\t| Enterprise plans")
    'bacsdirectdebit|orthepro|enterpriseplans'
    """
    t = re.sub(r"\n[ \t]*\n|\t", "|", text.lower())
    t = re.sub(r"[\s\-_'’]+", "", t)
    return re.sub(r"\W+", "|", t)
