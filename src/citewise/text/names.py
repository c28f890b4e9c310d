"""Names a question is about: flags and their values, code identifiers, quoted terms, the
subject of "what is X", the X of "the X builtin" and the tool a how-to names; and where a
reference entry for a name starts in a text.

Used by entry pinning (a query naming ``fs.rm`` or ``--emit`` gets the chunk holding its entry
first; :mod:`citewise.retrieval.retrievers`), by the extractive answer that opens with that entry
(:mod:`citewise.answer.select`) and by the evidence checks that abstain when a question names
something the corpus, or the evidence, never mentions (:mod:`citewise.answer.evidence`).
"""

from __future__ import annotations

import re

from citewise.text.hanging import chunk_entries, term_alternatives
from citewise.text.rarity import ordinary_word

#: Things a question can name besides capitalised words: ``--flags``, dotted or called code
#: names (``fs.frobnicate()``, ``path.superJoin``), ``snake_case``, ``camelCase``/``CamelCase``
#: and anything in backticks or quotes.
_FLAG = re.compile(r"(?<![\w-])(?:--[A-Za-z][\w-]*[A-Za-z0-9]|-[A-Za-z](?:[\w-]*[A-Za-z0-9])?)(?![\w-])")
#: The value after a one-letter flag names a setting: ``-C prefer-dynamic``, ``-s nullglob``,
#: ``-o pipefail``, ``-C lto=thin`` (the name before ``=``).
_FLAG_VALUE = re.compile(r"(?<![\w-])-[A-Za-z]\s+([a-z][\w-]*[a-z0-9])(?:=\S+)?")
#: A hyphenated value after a long flag names a setting too: ``--print native-static-libs``,
#: ``--print cache-sizes`` (plain words after a flag are not taken: "--extern link the crate").
_LONG_FLAG_VALUE = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*[A-Za-z0-9]\s+([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w-])")
#: The value given to a flag with '=': ``--emit=wasm-text`` -> ``wasm-text``, ``-C lto=thin`` -> ``thin``.
_EQ_VALUE = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*(?:\s+[a-z][\w-]*)?=([a-z][\w-]*[a-z0-9])\b")
#: Hyphenated identifiers with a digit or underscore: target triples and the like
#: (``x86_64-unknown-linux-gnu``, ``riscv64gc-unknown-linux-gnu``, ``utf-16le``).
_HYPHENATED = re.compile(r"(?<![\w-])(?=[\w-]*[\d_])[A-Za-z0-9][\w]*(?:-[\w]+)+(?![\w-])")
#: Lower-case names of three or more hyphen-joined parts, none a function word: Readline
#: variables and similar settings (``completion-ignore-case``, ``print-completions-horizontally``).
#: English compounds such as ``up-to-date`` or ``end-of-file`` have a function word and are not names.
_KEBAB = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:-[a-z0-9]+){2,}(?![\w-])")
#: A two-part hyphenated name the question calls a setting: "the variable keyseq-timeout",
#: "the bell-style variable", "the mark-directories setting".
_KIND_KEBAB = re.compile(
    r"\b(?:variable|option|setting|directive|lint|builtin|subcommand)\s+([a-z][a-z0-9]*-[a-z0-9]+)(?![\w-])"
    r"|(?<![\w-])([a-z][a-z0-9]*-[a-z0-9]+)\s+(?:variable|option|setting|directive|lint|builtin|subcommand)\b"
)
_FUNCTION_WORDS = frozenset("a an the of to in on at by for from with and or not no up out off as is be".split())
#: Words that follow a flag without being its value ("the -O flag", "-s and -u").
GENERIC_WORDS = frozenset(
    "flag flags option options switch switches argument arguments parameter parameters command commands "
    "setting settings builtin builtins function functions method methods variable variables lint lints "
    "keyword keywords value values and or to in on of for the a an with do does did mean means is are "
    "was work works change changes enable enables control controls set what which how why when where who".split()
)
#: The command a flag belongs to: "disown -h", "shopt -s nullglob", "the read -t option".
_COMMAND_OF_FLAG = re.compile(r"(?:^\s*|\bthe\s+|\bof\s+|\buse\s+)([a-z][\w-]{2,})\s+-{1,2}[A-Za-z]")
#: Dotted names (``fs.frobnicate()``, ``std::fs``) and file names, whose parts may be hyphenated:
#: ``docker-compose.yml`` was read as ``compose.yml`` (a fresh-clone trial: "unknown name" for a
#: file the document names).
_DOTTED = re.compile(
    r"(?<![\w.$-])[A-Za-z_$][\w$]*(?:-[\w$]+)*(?:(?:\.|::)[A-Za-z_$][\w$]*(?:-[\w$]+)*)+(?:\(\))?"
    r"|\b[A-Za-z_$][\w$]*\(\)"
)
#: A name with a leading colon, as manuals write internal tools, symbols and commands
#: (``:merge``, ``:keep-merge3``, ``:wq``); not a colon after a word ("Note: x"), a time or an
#: emoticon (``:p``).
_COLON_NAME = re.compile(r"(?<![\w:])(?::[a-z][a-z0-9]+(?:-[a-z0-9]+)*)(?![\w:-])")
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
_CAMEL = re.compile(r"\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b")
_QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"|“([^”]+)”|‘([^’]+)’|(?<!\w)'([^']+)'(?!\w)")


#: Latin abbreviations of running text ("e.g.", "i.e.", "etc.", "cf.", "viz."): never a name
#: or a content term (``e.g`` looks like a dotted identifier and analyzes to ``e.g e g``).
ABBREVIATIONS = re.compile(r"\b(?:e\.g|i\.e|etc|cf|viz)\.?(?=\W|$)", re.I)


def code_names(question: str) -> list[str]:
    """Names a question is about, other than capitalised words: flags, code identifiers,
    ``snake_case`` / ``camelCase`` names, names with a leading colon (``:merge``), lower-case names of three or more hyphen-joined parts
    without a function word (``completion-ignore-case``, not ``up-to-date``), a two-part one
    the question calls a variable / option / setting / directive / lint / builtin /
    subcommand, and quoted or back-ticked terms, in order, unique.

    >>> code_names('What does the --turbo-mode flag of fs.frobnicate() do with "hyper mode"?')
    ['--turbo-mode', 'fs.frobnicate()', 'hyper mode']
    >>> code_names("What does shopt -s nullglob do? And the -O flag, -C lto=thin, x86_64-unknown-plan9?")
    ['-s', 'nullglob', '-O', '-C', 'lto', 'thin', 'x86_64-unknown-plan9']
    >>> code_names("How do I use rustc --emit=wasm-text?")
    ['--emit', 'wasm-text']
    >>> code_names("rustc --print cache-sizes"), code_names("does rustc --extern link the crate")
    (['--print', 'cache-sizes'], ['--extern'])
    >>> code_names("How do I take a substring, e.g. 2 characters, i.e. a slice?")
    []
    >>> code_names("How do I enable completion-case-fold? Is the variable keyseq-timeout up-to-date?")
    ['completion-case-fold', 'keyseq-timeout']
    >>> code_names("Who issues acme-office.conf, docker-compose.yml and my-app.config.json?")
    ['acme-office.conf', 'docker-compose.yml', 'my-app.config.json']
    >>> code_names("Does the :keep-both tool differ from :merge? Note: at 10:30 a:b :p")
    [':keep-both', ':merge']
    """
    question = ABBREVIATIONS.sub(lambda m: " " * len(m.group(0)), question)  # offsets kept
    found: dict[str, int] = {}
    for rx in (_FLAG, _DOTTED, _SNAKE, _CAMEL, _HYPHENATED, _COLON_NAME):
        for m in rx.finditer(question):
            if rx is _HYPHENATED and re.fullmatch(r"[\d-]+", m.group(0)):
                continue  # a date or a number range, not a name
            found.setdefault(m.group(0), m.start())
    for m in _KEBAB.finditer(question):
        if not _FUNCTION_WORDS.intersection(m.group(0).split("-")):
            found.setdefault(m.group(0), m.start())
    for m in _KIND_KEBAB.finditer(question):
        g = 1 if m.group(1) else 2
        if not _FUNCTION_WORDS.intersection(m.group(g).split("-")):
            found.setdefault(m.group(g), m.start(g))
    for rx in (_FLAG_VALUE, _LONG_FLAG_VALUE, _EQ_VALUE):
        for m in rx.finditer(question):
            if m.group(1).lower() not in GENERIC_WORDS:
                found.setdefault(m.group(1), m.start(1))
    for m in _QUOTED.finditer(question):
        text = next(g for g in m.groups() if g is not None).strip()
        if text:
            found.setdefault(text, m.start())
    # a name inside a longer one (``frobnicate`` in ``fs.frobnicate()``) is the same name
    names = sorted(found, key=lambda n: (found[n], -len(n)))
    return [n for n in names if not any(n != o and n in o for o in names)]


#: "What does X do?", "What is X?", "What does X mean?": X is what the question is about.
_SUBJECT = re.compile(
    r"^\s*what\s+(?:does|do|is|are)\s+(?:the\s+|a\s+|an\s+)?(?P<x>[^?]{1,60}?)"
    r"(?:\s+(?:do|does|mean|stand for|used for|for))?(?:\s+in\s+[\w.+-]+)?\s*\??\s*$",
    re.I,
)


def question_subject(question: str) -> str:
    """The thing a definitional question asks about ('' for other questions).

    >>> question_subject("What does cargo frobnicate do?"), question_subject("How do I read a file?")
    ('cargo frobnicate', '')
    >>> question_subject("What does the --dry-run flag do?")
    '--dry-run'
    """
    m = _SUBJECT.match(question)
    if not m or len(m.group("x").split()) > 4:
        return ""
    words = m.group("x").split()
    # "the --dry-run flag", "the shopt builtin": the kind of thing is not part of its name
    while len(words) > 1 and words[-1].lower() in GENERIC_WORDS:
        words.pop()
    return " ".join(words)


_PREPOSITION = (
    r"with|for|in|on|to|from|of|into|by|using|at|that|which|so|when|without|instead|inside|"
    r"after|before|between|across|via|per|than|if|while|and|or|but|vs|versus|against|where|"
    r"whose|whom|who|because|since|until|unless|like|as"
)
#: "How do I set up a Cargo workspace with ...": the verb's object up to its first preposition.
_HOW_TO_OBJECT = re.compile(
    r"^\s*(?:how\s+(?:do|can|should|would|could)\s+(?:i|you|we|one)|how\s+to)\s+[a-z]+"
    r"(?:\s+(?:up|out|off|on|in|down|back))?\s+(?:(?:a|an|the|my|our|your|some)\s+)?"
    rf"(?P<x>.+?)\s*(?:\b(?:{_PREPOSITION})\b|[?,]|$)",
    re.I,
)
#: The wh-words that open a question, or a question embedded in another.
_WH_WORDS = "what|which|who|whom|whose|when|where|why|how"
#: A how-to's object that is an embedded question ("How can I record which commit ...").
_EMBEDDED_QUESTION = re.compile(rf"(?:{_WH_WORDS}|whether|if)\b", re.I)
#: "What is the default memory limit of a lambda function?": the whole noun phrase asked about.
_WHAT_THE = re.compile(r"^\s*what\s+(?:is|are|was|were)\s+(?:the|a|an)\s+(?P<x>[^?,]{1,80}?)\s*\??\s*$", re.I)
#: "How many employees does Ledgerly have?": the things counted (up to three words before the verb).
_HOW_MANY = re.compile(
    r"^\s*how\s+(?:many|much)\s+(?P<x>[A-Za-z][\w.+-]*(?:\s+[A-Za-z][\w.+-]*){0,2}?)\s+"
    r"(?:does|do|did|is|are|was|were|can|could|will|would|should|has|have|had)\b",
    re.I,
)
#: A search-box query: the words before its first preposition ("nginx reverse proxy config for ...").
_QUERY_HEAD = re.compile(rf"^\s*(?P<x>.+?)\s*(?:\b(?:{_PREPOSITION})\b|[?,]|$)", re.I)
#: A text that opens like a question ("what ...", "how ...", "show ..."); the answerer uses it too.
ASKING = re.compile(
    rf"^\s*(?:{_WH_WORDS}|is|are|can|could|does|do|did|"
    r"should|will|would|may|must|show|give|list|tell|explain|describe|define)\b",
    re.I,
)


#: A query that opens like a sentence ("a colleague signs in through SSO ...", "let staff log in
#: with ...") is not a search-box noun phrase: its first words are not its subject.
_SENTENCE_START = re.compile(
    r"^\s*(?:a|an|the|my|our|your|their|his|her|its|i|we|you|they|he|she|it|this|that|these|those|some|"
    r"let|make|get|set|help|please|need|want|when|after|if|on|in|with|for|every\w*|some\w+|any\w+|no)\b",
    re.I,
)


def subject_words(question: str) -> list[str]:
    """Words of the noun phrase a question is about: the subject of "what is / does X"
    (:func:`question_subject`), the whole phrase of "what is the X of Y", what "how many / how much"
    counts, the object of a how-to up to its first preposition ("How do I set up a Cargo
    workspace with ..." -> ``Cargo workspace``; none when the object is an embedded question,
    "record which commit ..."), or the head of a search-box query up to its first preposition
    ("nginx reverse proxy config for a Node.js app" -> ``nginx reverse proxy config``; four words
    at most, and not a query that opens like a sentence, :data:`_SENTENCE_START`).
    Words only, without :data:`GENERIC_WORDS`; [] when no pattern fits.

    >>> subject_words("nginx reverse proxy config for a Node.js app")
    ['nginx', 'reverse', 'proxy', 'config']
    >>> subject_words("How do I set up a Cargo workspace with several member crates?")
    ['Cargo', 'workspace']
    >>> subject_words("What is the default memory limit of a lambda function?")
    ['default', 'memory', 'limit', 'lambda']
    >>> subject_words("How many employees does Ledgerly have?")
    ['employees']
    >>> subject_words("How can I record which commit a cherry-picked change came from?")
    []
    >>> subject_words("Why don't my aliases work?"), subject_words("a colleague signs in through SSO")
    ([], [])
    """
    phrase = question_subject(question)
    if not phrase:
        for rx in (_WHAT_THE, _HOW_TO_OBJECT, _HOW_MANY):
            m = rx.match(question)
            if m:
                phrase = m.group("x")
                if rx is _HOW_TO_OBJECT and _EMBEDDED_QUESTION.match(phrase):
                    phrase = ""  # "record which commit a change came from": a clause, no noun phrase
                break
    if not phrase and "?" not in question and not ASKING.match(question) and not _SENTENCE_START.match(question):
        m = _QUERY_HEAD.match(question)
        phrase = m.group("x") if m and len(m.group("x").split()) <= 4 else ""
    words = re.findall(r"[A-Za-z][\w.+-]*", phrase)
    # adverbs ("how deeply nested") describe, they do not name
    return [
        w
        for w in words
        if w.lower() not in GENERIC_WORDS
        and w.lower() not in _FRAME_WORDS
        and not (w.islower() and w.endswith("ly") and len(w) > 4)
    ]


#: Words that frame a question rather than name its subject ("What is the difference between
#: ...", "What is the best way to ...").
_FRAME_WORDS = frozenset(
    "a an the my our your some difference differences between example examples way ways best purpose "
    "meaning reason reasons point use usage syntax right correct proper recommended simplest easiest "
    "quickest fastest preferred good around about through over under within upon onto away again still "
    "just also even only really very everyone everything someone something anyone anything".split()
)


#: Kinds of named things: "the autofixup builtin", "the retry command", "the foo lint".
_KINDS = (
    r"builtins?|commands?|subcommands?|options?|flags?|switch|lints?|functions?|methods?|modules?|"
    r"variables?|keywords?|reserved\s+words?|settings?|targets?|attributes?|macros?|crates?|"
    r"packages?|plugins?|extensions?|classes|class|events?|hooks?|directives?|properties|property"
)
_KIND_SLOT = re.compile(rf"\bthe\s+([A-Za-z][\w.+-]{{3,}})\s+(?:{_KINDS})\b", re.I)
#: Adjectives that fill the slot of "the X crate / option" without naming anything ("for the
#: whole crate", "accept the same option more than once").
NOT_NAMES = frozenset(
    "whole same entire current default other main given specific following previous next last first "
    "right wrong correct proper only single each every new old own standard usual relevant "
    "appropriate corresponding respective above below latter former "
    # pronouns and determiners a tool slot can end on ("replacing one string with another")
    "another others one ones it them this that these those both either neither all any some "
    "something anything everything nothing".split()
)
#: The tool or place a how-to ends on: "... in webpack?", "... with fdisk?", "... using zypper".
LEAD_TOOL_SLOT = re.compile(r"^\s*(?:in|with|using|for)\s+([A-Za-z][\w.+-]{2,})\s*,", re.I)
TOOL_SLOT = re.compile(
    r"\b(?:in|with|using|via|through)\s+(?:the\s+|a\s+|an\s+|my\s+|your\s+)?([A-Za-z][\w.+-]{2,})\s*[?.!]?\s*$", re.I
)


def slot_names(question: str) -> list[str]:
    """Words a question treats as the name of a thing although they are plain lower-case words:
    the ``X`` of "the X builtin / command / option / lint ...", the tool a question ends on
    ("How do I configure code splitting in webpack?", "... with fdisk?") or starts with ("In
    vim, how do I ...?").

    >>> slot_names("What does the autofixup builtin do in bash?")
    ['autofixup', 'bash']
    >>> slot_names("How do I resize a disk partition with fdisk?"), slot_names("How do I read a file?")
    (['fdisk'], [])
    >>> slot_names("In vim, how do I search and replace a word?")
    ['vim']
    >>> slot_names("How do I enable extended globbing in zsh with setopt?")
    ['zsh', 'setopt']
    >>> slot_names("How do I turn a warning into an error for the whole crate?")
    []
    >>> slot_names("bash history rerun last command replacing one string with another")
    []
    """
    out = [m.group(1) for m in _KIND_SLOT.finditer(question) if m.group(1).lower() not in NOT_NAMES]
    m = LEAD_TOOL_SLOT.match(question)  # "In vim, how do I ...?"
    if m:
        out.append(m.group(1))
    m = TOOL_SLOT.search(question)
    if m:
        # "... in zsh with setopt?": the phrase before the last one names a tool too
        before = TOOL_SLOT.search(question[: m.start()].rstrip() + "?")
        if before and before.end() >= m.start() - 1:
            out.append(before.group(1))
        out.append(m.group(1))
    return [w for w in dict.fromkeys(out) if w.lower() not in NOT_NAMES]


#: A configuration section written in brackets: ``[features]``, ``[profile.release]`` (TOML, INI).
_SECTION = re.compile(r"(?<![\w\[])\[([A-Za-z][\w.-]*)\](?![\w\]])")


def section_names(question: str) -> list[str]:
    """Configuration sections a question names in brackets, brackets kept: a file format's
    section is written that way in its documentation, so the evidence must hold it verbatim.

    >>> section_names("How do I declare optional features in the [features] section of Cargo.toml?")
    ['[features]']
    >>> section_names("How do I test a regex with [[ ]]?"), section_names("a[i] and [0]")
    ([], [])
    """
    return list(dict.fromkeys(f"[{m.group(1)}]" for m in _SECTION.finditer(question)))


#: "X vs Y", "X versus Y", "the difference between X and Y".
_VS = re.compile(r"\s+(?:vs\.?|versus)\s+", re.I)
_BETWEEN = re.compile(r"\bdifferences?\s+between\s+(\S.*?)\s+and\s+(\S.*?)\s*(?:[?!]|\.\s|\.?$)", re.I)
#: Words that end a compared side ("... vs strip=debuginfo difference", "... which one should I use").
_SIDE_STOP = GENERIC_WORDS | frozenset(
    "difference differences between better best which one should use using i we you it compared "
    "than vs versus like my your their its".split()
)


def _side(words: list[str]) -> str:
    out = []
    words = [w.strip("?!,;:()\"'`“”‘’") for w in words]
    while words and words[0].lower() in ("a", "an", "the", "my", "your"):
        words = words[1:]
    for w in words:
        if not w or w.lower() in _SIDE_STOP or len(out) == 2:
            break
        out.append(w)
    return " ".join(out)


def compared_names(question: str) -> list[str]:
    """The two things a comparison question sets against each other ("X vs Y", "X versus Y",
    "the difference between X and Y"), each at most two words next to the comparison word; []
    when the question compares nothing. A comparison is about both sides: the evidence must
    name each (:meth:`citewise.answer.evidence.EvidenceScorer.missing_name`).

    >>> compared_names("What is the difference between npm ci and npm install?")
    ['npm ci', 'npm install']
    >>> compared_names("queueMicrotask vs process.nextTick which one should I use")
    ['queueMicrotask', 'process.nextTick']
    >>> compared_names("rustc -C strip=symbols vs strip=debuginfo difference"), compared_names("How do I X?")
    (['-C strip=symbols', 'strip=debuginfo'], [])
    """
    m = _BETWEEN.search(question)
    if m:
        sides = [_side(m.group(1).split()[-2:]), _side(m.group(2).split())]
    else:
        parts = _VS.split(question, maxsplit=1)
        if len(parts) != 2:
            return []
        left = list(reversed(parts[0].split()))
        sides = [" ".join(reversed(_side(left).split())), _side(parts[1].split())]
    return [x for x in sides if x] if all(sides) else []


def entry_names(question: str) -> list[str]:
    """Names whose reference entry answers the question: its code names (a one-letter flag
    followed by a value names the value: ``-s nullglob`` -> ``nullglob``) and the subject of a
    definitional question ("What does the shopt builtin do?" -> ``shopt``), then the command a
    flag belongs to (``disown -h`` -> ``-h``, ``disown``).

    >>> entry_names("disown -h what does it do"), entry_names("what is a metacharacter in bash")
    (['-h', 'disown'], ['metacharacter'])
    """
    from citewise.text.analyzer import find_identifiers  # identifiers pin by title instead

    ids = {i.lower() for i in find_identifiers(question)}
    names = [n for n in code_names(question) if n.lower() not in ids]
    # a one-letter flag gives way to the value named after it (``-s nullglob``), not to an
    # ordinary English word that may be the sentence going on ("does less -i still ignore case")
    valued = any(not ordinary_word(n) for n in names if not re.fullmatch(r"-[A-Za-z]", n))
    names = [n for n in names if not (re.fullmatch(r"-[A-Za-z]", n) and valued)]
    subject = question_subject(question)
    if subject and len(subject.split()) <= 2:
        names.append(subject.split()[0] if len(subject.split()) == 2 else subject)
    # the command a flag belongs to, after the flag: "disown -h" pins the disown entry too
    names += [m.group(1) for m in _COMMAND_OF_FLAG.finditer(question) if m.group(1).lower() not in GENERIC_WORDS]
    return list(dict.fromkeys(n for n in names if n.strip()))


def heading_pattern(name: str) -> re.Pattern:
    """A regex that finds ``name`` in a heading as a whole name: ``fs.rm`` matches
    ``fs.rm(path[, options])`` but not ``fs.rmdir`` or ``fsPromises.rm``; ``--emit`` matches
    ``--emit: specifies ...``. Case-insensitive except one-letter flags (``-C`` is not ``-c``);
    '-' and '_' match each other; a trailing ``()`` in ``name`` is optional.

    >>> bool(heading_pattern("fs.rm").search("`fs.rm(path[, options], callback)`"))
    True
    >>> bool(heading_pattern("fs.rm()").search("fs.rmdir(path)"))
    False
    >>> bool(heading_pattern("dead_code").search("dead-code"))
    True
    """
    core = name.strip()
    if core.endswith("()"):
        core = core[:-2]
    # ``dead_code`` is headed ``dead-code`` (rustc's lint listing): '-' and '_' match each other
    body = "".join("[-_]" if ch in "-_" else re.escape(ch) for ch in core)
    # one-letter flags are case-sensitive (rustc's -C is not -c); other names are not
    flags = 0 if re.fullmatch(r"-[A-Za-z]", core) else re.I
    return re.compile(rf"(?<![\w.$-]){body}(?![\w$-]|\.[\w$])", flags)


_HEADING_LINE = re.compile(r"^#{1,6}\s+(.*)$")
_ITEM_LINE = re.compile(r"^\s*(?:[*+-]|\d+[.)])\s+(.*)$")


#: The key binding after a Readline command's name on its term line (``operate-and-get-next
#: (C-o)``, ``yank-last-arg (M-. or M-_)``, ``dabbrev-expand ()``): not part of the name.
_KEY_BINDING = re.compile(r"\s+\((?:[^()\n]|[CM]-(?:x\s+)?[()]){0,24}\)$")


def entry_offsets(text: str, name: str, heading: str = "") -> list[int]:
    """Character offsets in ``text`` where the reference entry for ``name`` starts: a heading
    line naming it (``## `fs.rm(path[, options])` ``, ``### Class: AsyncLocalStorage``), a list
    item or definition whose lead term is it (``* `force` {boolean} ...``, ``- **nullglob**:
    ...``, ``nullglob`` followed by a ``: definition`` line), or a table row whose first cell is
    it, or a plain-text term line naming it with its body indented below (one of its
    alternatives: ``-k, --keep``; :mod:`citewise.text.hanging`). ``heading``: the section heading
    the text sits under; when it names ``name``, offset 0
    counts too. Matching is :func:`heading_pattern`'s ('-' and '_' alike, case-insensitive).

    >>> entry_offsets("Intro.\\n\\n* `force` {boolean} When true...\\n| `lto` | x |\\nnullglob\\n: If set", "force")
    [8]
    >>> entry_offsets("a\\n| `lto` | thin |\\n", "lto"), entry_offsets("x\\nnullglob\\n: If set", "nullglob")
    ([2], [2])
    >>> entry_offsets("x\\noperate-and-get-next (C-o)\\n: Accept", "operate-and-get-next")
    [2]
    >>> entry_offsets("x\\n\\n  -k, --keep\\n      Keep input files.\\n", "--keep")
    [5]
    """
    rx = heading_pattern(name)
    out: list[int] = [0] if heading and rx.search(heading) else []
    lines = text.splitlines(keepends=True)
    pos = 0
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        m = _HEADING_LINE.match(body)
        if m and rx.search(m.group(1)):
            out.append(pos)
        elif (m := _ITEM_LINE.match(body)) is not None:
            rest = m.group(1)
            lead = rest.lstrip("`*_")
            hit = rx.match(lead)
            if hit and (rest[:1] in "`*_" or lead[hit.end() : hit.end() + 1] == ":"):
                out.append(pos)
        elif body.startswith("|"):
            cells = body.strip().strip("|").split("|")
            if cells and rx.fullmatch(cells[0].strip().strip("`*_ ")):
                out.append(pos)
        else:
            term = _KEY_BINDING.sub("", body.strip()).strip("`*_")
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if term and rx.fullmatch(term) and nxt.lstrip().startswith(": "):
                out.append(pos)
            elif (hit := rx.match(body)) is not None and body[hit.end() : hit.end() + 2] == ": ":
                out.append(pos)
        pos += len(line)
    # a plain-text manual's entry: a term line with its body indented below (``-k, --keep``)
    for start, _, _, term in chunk_entries(text):
        if any(rx.match(alt) for alt in term_alternatives(term)):
            out.append(start)
    return sorted(set(out))
