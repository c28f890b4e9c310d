"""The words of a question as the evidence checks read them: content terms, capitalised names,
exact identifiers, a table row the question names, a name held as a cell, live values.

Split from :mod:`citewise.answer.evidence`, which re-exports these names.
"""

from __future__ import annotations

import re

from citewise.answer.question import lexicon
from citewise.answer.units import TABLE_SEPARATOR, label_named
from citewise.text.analyzer import analyze
from citewise.text.names import ABBREVIATIONS

#: Question words and light verbs that carry no topic, in analyzed (stemmed) form: the question
#: analysis's list (``citewise/answer/data/question.yaml``, ``question_words``).
QUESTION_WORDS = lexicon().question_terms

_COMMON_WORDS: frozenset[str] | None = None

_LIVE_VALUE = re.compile(r"\b(rates?|prices?|weather|temperature|stock|shares?|quotes?|scores?|news|time)\b", re.I)
_LIVE_TIME = re.compile(r"\b(today'?s?|tonight'?s?|right now|at the moment|real[- ]time|live|currently)\b", re.I)
_WORD = re.compile(r"[A-Za-z][\w'’-]*")
#: A token of letters and digits ("L4", "E1004", "v2"): a code a question ties itself to.
#: "What does X <verb>?" with a verb of its own (not "do", "mean", "stand for"): the verb ends the
#: subject :func:`question_subject` reads ("What does the Medium widget weigh?").
_DOES_VERB = re.compile(
    r"^\s*what\s+(?:does|do)\b(?!.*\b(?:do|does|mean|stand for|used for|for)\s*\??\s*$)", re.I | re.S
)

_CODE_TOKEN = re.compile(r"\b(?=\w*[A-Za-z])(?=\w*\d)\w+\b")


def is_common_word(word: str) -> bool:
    """Whether ``word`` (any case) is a whole word of the uncased WordPiece vocabulary shipped
    with the MiniLM embedder (``citewise/models/data/all-MiniLM-L6-v2/vocab.txt``, 30,522 entries
    from BERT's uncased vocabulary: about 20,000 common English words, no ``##`` pieces): "range",
    "salary", "turbo" are; "frobnicate", "shebang", "pathjoin" are not. Read once.

    >>> is_common_word("Range"), is_common_word("frobnicate")
    (True, False)
    """
    global _COMMON_WORDS
    if _COMMON_WORDS is None:
        from citewise.models.embedders import _DATA

        words = (_DATA / "vocab.txt").read_text(encoding="utf-8").split("\n")
        _COMMON_WORDS = frozenset(w for w in words if w.isalpha() and not w.startswith("["))
    return word.lower() in _COMMON_WORDS


def content_terms(question: str) -> list[str]:
    """The question's analyzed terms minus :data:`QUESTION_WORDS`, unique, in order.

    >>> content_terms("What is the refund policy of Stripe?")
    ['refund', 'polici', 'stripe']
    """
    return [t for t in dict.fromkeys(analyze(ABBREVIATIONS.sub(" ", question))) if t not in QUESTION_WORDS]


_CONDITION_CLAUSE = re.compile(
    r"^\s*(?:on|in|with|for|if|when|given|assuming|after|before)\b[^,?]{3,80},\s*(?=(?:what|which|how|who|when|where|why|does|do|is|are|can|should)\b)",
    re.I,
)


def named_terms(question: str) -> list[str]:
    """Words of the question that look like names: capitalised (or all capitals) and not the
    first word of the question or of one of its sentences; ``I`` excluded.

    >>> named_terms("Does Ledgerly sync with Sage 50 desktop? What about Xero")
    ['Ledgerly', 'Sage', 'Xero']
    >>> named_terms("On a machine with 2 GiB of RAM, what size does Node suggest?")
    ['Node']
    """
    out: list[str] = []
    sentence_start = True
    # "On a machine with 2 GiB of RAM, what ... ?": the leading clause states conditions; the
    # names a question is about are in its main clause
    lead = _CONDITION_CLAUSE.match(question)
    if lead:
        question = question[lead.end() :]
    for m in _WORD.finditer(question):
        word = m.group(0)
        before = question[: m.start()].rstrip()
        if before.endswith(("?", ".", "!", ":", ";")):
            sentence_start = True
        if not sentence_start and word[0].isupper() and word != "I":
            out.append(word)
        sentence_start = False
    return out


def asks_live_value(question: str) -> bool:
    """Whether the question asks for a value that changes by the day (see module docstring).

    >>> asks_live_value("What is today's USD to EUR exchange rate?")
    True
    >>> asks_live_value("When does the daily limit reset?")
    False
    """
    return bool(_LIVE_TIME.search(question) and _LIVE_VALUE.search(question))


def _option_entry_of(text: str, flags: list[str], name: str) -> bool:
    """Whether ``text`` has a line opening with one of ``flags`` (a definition or option item:
    ``-t timeout``, ``* `-t` ...``) and names ``name`` as a whole word.

    >>> _option_entry_of("-t timeout\\n: Cause read to time out.", ["-t"], "read")
    True
    >>> _option_entry_of("-t timeout\\n: Cause it to time out.", ["-t"], "read")
    False
    """
    return (
        any(re.search(rf"^[ \t]*(?:[-*+][ \t]+)?`?{re.escape(f)}(?![\w-])", text, re.M) for f in flags)
        and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.I) is not None
    )


_EXACT_WORD = re.compile(r"[A-Za-z0-9][\w-]*[A-Za-z0-9]")


def exact_words(question: str) -> list[str]:
    """Words of a question written like exact identifiers rather than prose: with a digit, an
    inner hyphen or underscore, in capitals (five letters or more) or in camelCase
    (``mipsel-sony-psp``, ``SIGSTKFLT``, ``maxHeaderSize``, ``x86_64``); not flags (``-C``,
    ``--verbose``) nor dotted paths (``os.constants.signals``: :func:`code_names` handles
    those). Unique, in order.

    >>> exact_words("os.constants.signals SIGSTKFLT"), exact_words("mipsel-sony-psp target")
    (['SIGSTKFLT'], ['mipsel-sony-psp'])
    >>> exact_words("What does the --verbose flag do in Node?")
    []
    """
    out: dict[str, None] = {}
    for m in re.finditer(r"\S+", question):
        raw = m.group(0)
        if raw.startswith("-") or "." in raw.strip(".,;:!?'\"()`"):
            continue
        w = _EXACT_WORD.search(raw)
        if w is None or w.group(0) != raw.strip(".,;:!?'\"()`") or len(w.group(0)) < 4:
            continue
        word = w.group(0)
        if (
            (re.search(r"\d", word) and re.search(r"[A-Za-z]", word))
            or re.search(r"\w[-_]\w", word)
            or (word.isupper() and len(word) >= 5)
            or re.search(r"[a-z][A-Z]", word)
        ):
            out.setdefault(word, None)
    return list(out)


def named_row_label(text: str, question: str) -> str:
    r"""The first cell of a Markdown table row of ``text`` (not a header row) that ``question``
    names: every word of the cell is a word of the question, as written, and the cell is a name
    (two words or more, or one that is no English word: ``Small X``, ``SIGPWR``; not ``Total``
    or ``Pro``); '' when there is none.

    >>> t = "| Model | Width |\n|---|---|\n| Small X | 20 cm |\n| Total | 3 |\n"
    >>> named_row_label(t, "How wide is the Small X?"), named_row_label(t, "What is the total?")
    ('Small X', '')
    """
    header = True
    for line in text.splitlines():
        body = line.strip()
        if not body.startswith("|"):
            header = True
            continue
        if header or TABLE_SEPARATOR.match(body):
            header = False
            continue
        label = body.strip("|").split("|", 1)[0].strip().strip("`*_ ")
        parts = re.findall(r"\w+", label)
        if label_named(label, question) and (len(parts) > 1 or not is_common_word(parts[0])):
            return label
    return ""


def names_cell(text: str, word: str) -> bool:
    """Whether ``text`` holds ``word`` (case-insensitive, whole) as a name of its own: in a table
    row (a Markdown ``|`` row or an HTML ``<td>``), a code span, or alone on its line (the term of
    a definition list, ``SRANDOM`` / ``: This variable expands ...``; a heading), not only in prose ("In
    Powershell or Git bash, ..." mentions PowerShell; ``| `mipsel-sony-psp` | * |`` is its row).

    >>> names_cell("| `mipsel-sony-psp` | * | MIPS (LE) Sony PSP |", "mipsel-sony-psp")
    True
    >>> names_cell("<tr><td><code>SIGSTKFLT</code></td>", "sigstkflt"), names_cell("In Powershell or Git bash", "powershell")
    (True, False)
    """
    for m in re.finditer(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.I):
        line = text[
            text.rfind("\n", 0, m.start()) + 1 : text.find("\n", m.end()) if "\n" in text[m.end() :] else len(text)
        ]
        if (
            line.lstrip().startswith("|")
            or "<td" in line.lower()
            or text[m.start() - 1 : m.start()] in ("`", ">")
            or line.strip(" \t#").lower() == word.lower()
        ):  # a definition's term line, a heading
            return True
    return False


#: A word of a query as typed (letters and digits, inner dots, apostrophes and hyphens).
_QUERY_WORD = re.compile(r"[^\W_](?:[\w.'’-]*[^\W_])?")


def missing_words(query: str, texts) -> list[str]:
    """The words of ``query`` that none of ``texts`` holds (compared through the project analyzer,
    question words such as "what" and "does" left out), in query order, as typed.

    ``search`` prints them so a reader sees that the hits match only part of the query, or only
    by meaning ("refund policy of Stripe" -> ``['Stripe']``).

    >>> missing_words("What is the refund policy of Stripe?", ["Refund policy: 30 days."])
    ['Stripe']
    >>> missing_words("refunds", ["Refund policy"]), missing_words("", ["x"])
    ([], [])
    """
    wanted = set(content_terms(query))
    if not wanted:
        return []
    found: set[str] = set()
    for text in texts:
        found |= wanted & set(analyze(text))
        if found == wanted:
            return []
    out: list[str] = []
    told: set[str] = set()
    for m in _QUERY_WORD.finditer(query):
        terms = set(analyze(m.group(0))) & wanted
        if terms and not terms & found and not terms <= told:
            out.append(m.group(0))  # one word per missing term, as first typed
            told |= terms
    return out
