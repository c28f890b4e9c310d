"""Extractive generation without an LLM: quote the context's best answer units, cite each.

Deterministic. For a question ``q`` and an assembled :class:`~citewise.answer.context.Context`:

1. Split every context chunk into units (sentences, list items, table rows; short sentences such
   as "Yes." joined with the next; :mod:`citewise.answer.units`). Each unit is embedded with its
   document title and nearest heading, so an FAQ answer is found through its question heading
   and a table row through its column names.
2. Score each unit::

       score(u) = cos(q, u) + lexical_weight · coverage(q, u)

   where ``coverage`` is the IDF-weighted share of the question's content terms found in the
   unit's text and nearest heading, identifiers also in its document title (a question naming
   ``E-1003`` favours the page titled with it; so does an exact name of the question, such as
   the target ``mips64-openwrt-linux-musl``, in the title of the unit's page). When the question names identifiers, a unit that
   names only other identifiers ("What does error E-1009 mean?" for a question on E-1003), or
   names none but comes from a page titled with another one, loses ``lexical_weight``. Units
   ending in ":" (lead-ins to a list or table) and list items starting in lower case (they
   continue such a lead-in) are not quoted: they do not stand on their own. Nor are sentences
   addressed to an AI model ("Ignore previous instructions and ..."; :func:`is_instruction`):
   a document's text is quoted, never obeyed, and an injected order is not an answer. (IDF from the index when an ``idf`` function is given, else
   every term weighs 1), and ``cos`` is the cosine of the embeddings.
3. Choose up to ``max_sentences`` units greedily (maximal marginal relevance in spirit,
   Carbonell & Goldstein 1998): start with the best; then take the unit maximising
   ``score + novelty_weight · (IDF share of question terms it covers that the chosen ones do
   not)``, among units scoring at least ``relative_floor`` of the best, or at least
   ``coverage_floor`` of it when they cover a new term (the second half of "what is X and how do
   I Y?"). A unit whose embedding has cosine ≥ ``redundancy`` with a chosen one is skipped. A
   comparison ("X vs Y", "difference between X and Y") quotes, right after the best unit, the
   best unit about each side the quoted ones are not about (led by it, or naming it).
   A code block is quoted when the question asks for code, or when the block scores at least
   ``code_ratio`` of the best unit; the block is the best one of the best unit's own section
   when that section has one (:func:`code_for`: never a neighbouring entry's example), else the
   best of the context. A question about a default quotes, right after the best unit, the
   sentence of the best unit's entry stating the default (:func:`default_of`), however far into
   the entry it sits. Last, the *runner-up*: the best of the second- and third-ranked units the
   rules above left out, when it scores at least ``runner_up_floor`` of the best and repeats no
   chosen unit, and only when the answer has no more than ``max_sentences`` units yet (not after
   a list's items); after the opening of the entry the question names, only a unit leading an
   entry of that name qualifies. On the 438 in-scope questions of the spent real-docs sets
   (contexts replayed) 0.75 gave 346 -> 356 correct and cited for +35 characters per answer
   (mean 510 -> 545); without the entry condition 0.9: 349, 0.75: 357, 0.7: 358.
   A question asking how to do something ("how do I ...", "how to ...", "steps to ...") whose
   quoted units include an item of a numbered list gets that list's steps in order where the item
   stood (:func:`with_next_steps`, up to ``LIST_ITEMS``): the procedure, not one step of it.
4. Present them best first; each sentence ends with ``[doc:ID]``. The draft also records each
   sentence's offsets in its chunk, so citations point at the quoted text.

It also extracts a *short answer* (:func:`short_answer`) from the best unit for span-level
evaluation such as SQuAD exact match; the answer text shown to users is the cited sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Sequence

import numpy as np

from citewise.answer.citations import join_sentences, split_cited_sentences
from citewise.answer.context import Context
from citewise.answer.evidence import content_terms, exact_words
from citewise.answer.draft import Draft
from citewise.answer.units import Unit, UnitCache, clean, is_instruction, label_named, table_cells
from citewise.core import ABSTENTION_TEXT
from citewise.text.analyzer import analyze, find_identifiers
from citewise.text.names import ASKING, code_names, compared_names, entry_names, entry_offsets, question_subject


@dataclass(frozen=True, eq=False)
class ScoredUnit:
    """A unit of a context chunk with its score and the question terms it covers."""

    score: float
    chunk_index: int
    unit: Unit
    vector: np.ndarray
    terms: frozenset[str]
    dangling: float = 0.0  # the dangling-pronoun penalty in ``score`` (not applied to short answers)


class ExtractiveGenerator:
    """Quote and cite the best sentences of a context (see module docstring).

    Args:
        units: a :class:`UnitCache` over the index's embedder.
        max_sentences: most units quoted.
        relative_floor: a unit is quoted only if its score is at least this share of the best.
        lexical_weight: weight of the question-term coverage in unit scores.
        redundancy: cosine at or above which a unit repeats one already quoted.
        coverage_floor: a unit below ``relative_floor`` but at least this share of the best is
            still quoted when it covers question terms the quoted units do not.
        novelty_weight: weight of newly covered question terms when choosing the next unit.
        idf: optional ``term -> idf`` weights for coverage.
        lead_weight: added to a list item or definition whose lead term the question names, and
            to the unit that opens the reference entry of a name the question asks about.
        dangling_weight: subtracted from a sentence that leans on a personal pronoun in its first
            six words ("On day 20 it cancels."): it is quoted after its antecedent (read on), not
            first.
        code_ratio: a code block scoring at least this share of the best unit is quoted even
            when the question does not ask for code.
        runner_up_floor: the second- or third-best unit left out by the other rules is quoted
            last when it scores at least this share of the best (0 < x; above 1: never).
    """

    name = "extractive"

    def __init__(self, units: UnitCache, max_sentences: int = 3, relative_floor: float = 0.9,
                 lexical_weight: float = 0.3, redundancy: float = 0.9, coverage_floor: float = 0.6,
                 novelty_weight: float = 0.5, idf: Callable[[str], float] | None = None,
                 lead_weight: float = 0.3, dangling_weight: float = 0.15, code_ratio: float = 0.85,
                 runner_up_floor: float = 0.75):
        self.units = units
        self._texts: list[str] | None = None  # the context's chunk texts (set by :meth:`rank_units`)
        self._fragments: dict[str, str] = {}  # term -> the grouped number of the question it is part of
        self.runner_up_floor = runner_up_floor
        self.code_ratio = code_ratio
        self.lead_weight = lead_weight
        self.dangling_weight = dangling_weight
        self.coverage_floor = coverage_floor
        self.novelty_weight = novelty_weight
        self.max_sentences = max_sentences
        self.relative_floor = relative_floor
        self.lexical_weight = lexical_weight
        self.redundancy = redundancy
        self.idf = idf

    def rank_units(self, question: str, context: Context, qvec: np.ndarray,
                   idf: Callable[[str], float] | None = None) -> list[ScoredUnit]:
        """All units of the context with scores, best first (ties: context order, then
        position). ``idf`` overrides the constructor's."""
        terms = content_terms(question)
        idf = idf or self.idf
        weights = {t: (idf(t) if idf else 1.0) for t in terms}
        total = sum(weights.values())
        q = np.asarray(qvec, dtype=np.float32)
        q_ids = set(find_identifiers(question))
        # an option entry led by a flag the question names and its argument ("-t timeout: Cause
        # read to time out ...") is that flag's entry, though the argument's name is not asked
        q_flags = {f for f in code_names(question) if _FLAG.fullmatch(f)}
        # "what does the \# escape show?", "the !# event designator": a name made only of symbols
        # has no analyzed term; an entry led by it is the entry asked about, as exact a match as
        # a flag of the command the question names
        q_symbols = symbol_names(question)
        # "What does the fs.constants.O_DIRECT open flag do?": the table row led by ``O_DIRECT``
        # is the entry of the dotted name's last part (the page writes the constant alone)
        q_leaves = {n.rstrip("()").split(".")[-1]: n for n in code_names(question) if "." in n.strip(".")}
        code_ok = True  # code blocks are ranked always; quoted only as select/generate decide
        self._wants_code = wants_code(question)
        sides = [frozenset(t for t in analyze(side) if len(t) > 1 and t in weights)
                 for side in compared_names(question)]
        # each side by the terms the other side lacks ("symbol" / "debuginfo" of strip=...)
        self._sides = [t for t in (a - b for a, b in zip(sides, sides[::-1])) if t]
        title_ids = [set(find_identifiers(c.title)) for c in context.chunks]
        # a page titled with an exact name the question gives ("mips64-openwrt-linux-musl"):
        # its sentences are about that name though they do not repeat it, as much as the row of
        # another page that does ("target: mips64-openwrt-linux-musl; notes: ...")
        exact = {t[0] for t in (analyze(w) for w in exact_words(question)) if t}
        title_exact = [exact & set(analyze(c.title)) if exact else set() for c in context.chunks]
        # an API page names its functions in headings (``fs.rm(path[, options])``): a unit under
        # that heading covers the function name even when its own text does not repeat it
        heading_ids = [set(analyze(" ".join(c.heading_path))) & code_terms(question) for c in context.chunks]
        scored: list[ScoredUnit] = []
        self._entry_opening: set[ScoredUnit] = set()
        self._values = bool(_VALUES_Q.search(question)) or asks_list(question)
        unset_q = bool(_UNSET_Q.search(question))  # "when I don't pass -C lto", "if omitted"
        self._default = unset_q or bool(_DEFAULT_Q.search(question))  # :func:`asks_default`
        self._read_on = asks_definition(question) or is_keyword_query(question) or self._values
        # the reference entry of the thing asked about opens the answer to "what is/does X ...",
        # "which values can I pass to -C panic?" and the search-box query "keepAliveTimeout default"
        names = entry_names(question) if asks_definition(question) or asks_entry(question) else []
        flag_entries = {n for n in names if _FLAG.fullmatch(n)}
        # "What is a Buffer?": a sentence that says what the subject is ("Buffer objects are used
        # to represent ...", "Duplex streams are streams that ...") is the answer's first candidate
        defines = defining_pattern(question_subject(question)) if asks_definition(question) else None
        # "IGNOREEOF default value": a sentence stating a default belongs to the entry it sits in
        # (its lead term, its headings); one of another entry ("value {boolean} The new default
        # value.") does not answer, however well it reads
        owners = [re.compile(rf"(?<![\w-]){re.escape(n.rstrip('()'))}(?:e?s)?(?![\w-])", re.I)
                  for n in dict.fromkeys(entry_names(question) + exact_words(question))] \
            if _DEFAULT_WORD.search(question) or unset_q else []
        self._owners = owners
        self._unset = bool(owners) and unset_q
        got = self.units.get(context.chunks)
        self._texts = [c.text for c in context.chunks]
        # "20,000 USD" is analyzed as "20" and "000": a unit saying "20 days" holds neither number
        self._fragments = {t: n for n in _GROUPED_NUMBER.findall(question) for t in analyze(n)}
        # "What is mapfile used for?": the builtin ``mapfile`` and the variable ``MAPFILE`` both
        # lead an entry; the one spelled as the question spells it is the one asked about
        variants = case_variants(question, [u.lead for units, _ in got for u in units if u.lead])
        # "How do I export invoices to CSV?": the numbered procedure under a heading that shares a
        # question word ("Creating an export") is the answer, above a table row or a sentence that
        # repeats the question's words; :meth:`generate` then quotes the procedure whole. Not
        # when the question first asks what something is ("What does E-1003 mean and how do I
        # fix it?": the meaning opens, the procedure follows)
        procedure = bool(_PROCEDURE_Q.search(question)) and not _DEFINITION_Q.match(question)
        # "What does the -n option of popd do?": pushd and popd both list a ``-n``; the one in the
        # option list of the command the question names (the entry it follows: :func:`flag_owners`)
        # is that command's option, more specific than the command's own entry; where the
        # question names the command, the same flag of another command is no entry of it
        owners_by_chunk = [flag_owners(units) if q_flags else [frozenset()] * len(units) for units, _ in got]
        asked = set(weights)  # the question's content terms, looked up once per unit below
        owned_flags = {u.lead.split()[0] for (units, _), owners_of in zip(got, owners_by_chunk)
                       for u, o in zip(units, owners_of) if u.lead and u.lead.split()[0] in q_flags and o & asked}
        for ci, (chunk, (units, vecs)) in enumerate(zip(context.chunks, got)):
            if not units:
                continue
            sims = vecs @ q
            quotable = [self._quotable(u, chunk, code_ok) for u in units]
            entry = self._entry_units(chunk, units, quotable, names)
            owners_of = owners_by_chunk[ci]
            for ui, u in enumerate(units):
                if not quotable[ui]:
                    continue
                have = (set(analyze(f"{u.heading} {u.text}")) | title_ids[ci] | heading_ids[ci]
                        | title_exact[ci]) & set(weights)
                owned = bool(u.lead and u.lead.split()[0] in q_flags and owners_of[ui] & asked)  # see above
                if owned:
                    have |= owners_of[ui] & asked
                leaf = u.kind == "row" and u.lead in q_leaves
                if leaf:  # the row of O_DIRECT covers the name fs.constants.O_DIRECT
                    have |= set(analyze(q_leaves[u.lead])[:1]) & asked
                if u.kind == "row" and u.lead and (leaf or lead_match(u.lead, weights, u.text)):
                    # "os.constants SIGPWR signal meaning": the row of the constant, in the table
                    # of the namespace the question names (its headings "OS constants > Signal
                    # constants"), is more specific than the namespace's own entry
                    where = set(analyze(" ".join((chunk.title, *chunk.heading_path, *u.headings))))
                    owned = bool(where & asked - set(analyze(u.lead)))
                cov = sum(weights[t] for t in have) / total if total > 0 else 0.0
                penalty = 0.0
                if q_ids:
                    named = set(find_identifiers(u.text)) or title_ids[ci]
                    if named and not named & q_ids:
                        penalty = self.lexical_weight
                # a list item or definition whose lead term the question names is the entry for
                # that term ("What does the force option do?" -> "`force` {boolean} When true, ...");
                # so is the first sentence under a heading naming the question's code name
                flag = u.lead.split()[0] if u.lead else ""
                other = flag in owned_flags and not owned  # the same flag of another command
                lead = self.lead_weight if not other and ((u.lead and u.lead not in variants and (
                    lead_match(u.lead, weights, u.text) or flag in q_flags or leaf)) or ui in entry) else 0.0
                if owned or (flag and flag.lstrip("\\") in q_symbols):
                    lead += self.lead_weight
                # the entry under a heading that is the very name asked about (``### --no-deprecation``
                # / "Silence deprecation warnings."): the reference entry itself, above another
                # entry's sentence that mentions the name ("The process.noDeprecation property
                # indicates whether the --no-deprecation flag is set"); a flag only: the entry
                # of a plain word ("What is a Widget?") opens with "Many APIs support Widgets.",
                # and its defining sentence (``defines`` below) must win; a target page's
                # opening is no better than the target's row in the support table
                elif ui in entry and not other and u.heading.strip("`*_ ").rstrip(":") in flag_entries:
                    lead += self.lead_weight
                if owners and u.kind != "code" and _DEFAULT_Q.search(u.text):
                    # the sentence's own words count unless it sits in another named entry
                    # ("... to the value of HISTSIZE" under HISTFILESIZE is HISTFILESIZE's default)
                    own = u.lead or u.heading
                    where = " ".join((chunk.title, *chunk.heading_path, *u.headings, u.lead,
                                      "" if exact_words(own) else u.text))
                    if not any(rx.search(where) for rx in owners):
                        penalty += self.lexical_weight
                if (procedure and u.kind == "item" and total > 0
                        and sum(weights[t] for t in procedure_terms(chunk, u) & asked) >= self.PROCEDURE_SHARE * total
                        and step_number(chunk.text, u) is not None):
                    lead += self.lead_weight
                # on top of the entry's opening bonus: the entry of "Buffer" opens with "Many
                # Node.js APIs support Buffers."; its defining sentence comes later
                if defines is not None and u.kind == "sentence" and defines.match(u.text):
                    lead += self.lead_weight
                # "On day 20 it cancels.", "If none of them matches ...": a sentence leaning on a
                # pronoun whose antecedent is in the sentence before does not stand on its own
                dangling = self.dangling_weight if u.kind == "sentence" and _DANGLING.match(u.text) else 0.0
                su = ScoredUnit(float(sims[ui]) + self.lexical_weight * cov + lead - penalty - dangling, ci, u,
                                vecs[ui], frozenset(have), dangling)
                scored.append(su)
                if ui in entry and not other:
                    self._entry_opening.add(su)
        scored.sort(key=lambda s: (-s.score, s.chunk_index, s.unit.start))
        self._weights = (weights, total)
        return scored

    def _repeats(self, su: ScoredUnit, other: ScoredUnit) -> bool:
        """Whether ``su`` says what ``other`` says (cosine at least :attr:`redundancy`). Two rows
        of one table with different first cells never do, however alike they read: "Monthly
        price; Pro: $99" and "Annual price; Pro: $990" are two facts."""
        if (su.unit.kind == other.unit.kind == "row" and su.chunk_index == other.chunk_index
                and _first_cell(su.unit.text) != _first_cell(other.unit.text)):
            return False
        return float(su.vector @ other.vector) >= self.redundancy

    @staticmethod
    def _quotable(u: Unit, chunk, code_ok: bool) -> bool:
        """Whether a unit may be quoted (code blocks when ``code_ok``; :meth:`select` and
        :meth:`generate` decide whether one is shown); never a unit cut off by truncation, a lead-in ending in ':', a lower-case fragment continuing one, an
        instruction addressed to a model, or a bare ``name {type}`` entry, or anything under a
        navigation or reference-list heading ("Related", "See also", "References":
        :data:`_NAVIGATION_HEADINGS`; the chunk's own heading when the unit has none); nor a question ("What's the
        difference between an error from a lint and a regular old error?"), quoted or not (an
        example question on an assistant's help page): the text after it answers, it does not."""
        if u.end > len(chunk.text):
            return False
        if u.kind == "code":
            return code_ok
        path = getattr(chunk, "heading_path", ())
        heading = u.heading or (path[-1] if path else "")
        if heading.strip().lower().rstrip(":") in _NAVIGATION_HEADINGS:
            # "Related": "- Certificate rotation steps for [Okta](...) and [Entra ID](...)"; a
            # "References" list ("A. Crichton. “RFC: Allow changing the default allocator.”
            # GitHub."); also in a chunk that starts inside that section
            return False
        return not (u.text.rstrip("\"'”’)").endswith((":", "?")) or (u.kind == "item" and u.text[0].islower() and not u.lead)
                    or (u.kind == "sentence" and " " not in u.text.strip() and u.text[-1:] not in ".!")
                    or _XREF_ONLY.match(u.text)
                    or is_instruction(u.text) or bare_entry(u))

    #: How deep in the ranking the runner-up is looked for (:meth:`select`: ranks 2 and 3).
    RUNNER_UP_DEPTH = 2

    #: Most list items quoted for a question asking which values / members a list has.
    LIST_ITEMS = 8

    #: How far (characters) after an entry's start its first quotable prose unit may begin.
    ENTRY_REACH = 600

    #: Share of a how-to's question-term weight (IDF) a procedure's heading must hold for the
    #: procedure to be its answer: "Creating an export" holds "export" of "How do I export
    #: invoices to CSV?"; "10.1 Basic Installation" holds only "install" of the long question
    #: about seeing where ``make install`` would install files (answered by a sentence on DESTDIR).
    PROCEDURE_SHARE = 0.25

    def _entry_units(self, chunk, units: list[Unit], quotable: list[bool], names: list[str]) -> set[int]:
        """Indices of the units that open a reference entry for a name the question asks about
        (:func:`citewise.text.names.entry_offsets`): per entry, the first quotable prose unit
        that contains or follows its start, within :attr:`ENTRY_REACH` characters."""
        out: set[int] = set()
        heading = chunk.heading_path[-1] if chunk.heading_path else ""
        for name in names:
            offsets = entry_offsets(chunk.text, name, heading)
            # a definition, item or table row led by the name is its entry proper; a heading
            # that merely contains it ("4.3.2 The Shopt Builtin") only when there is none
            proper = [e for e in offsets if not (e == 0 and heading and not chunk.text.startswith(name))
                      and not chunk.text.startswith("#", e)]
            for e in proper or offsets:
                for ui, u in enumerate(units):
                    if u.end <= e or not quotable[ui] or u.kind == "code" or _ENTRY_META.match(u.text) or _too_short(u.text):
                        continue
                    if u.start - e <= self.ENTRY_REACH:
                        out.add(ui)
                    break
        return out

    @classmethod
    def _entry_followers(cls, first: ScoredUnit, scored: list[ScoredUnit], values: bool = False,
                         texts: Sequence[str] | None = None) -> list[ScoredUnit]:
        """The quotable units after ``first`` in its chunk, under the same headings (while they
        start within :attr:`ENTRY_REACH` characters of it) or in a subsection right under them
        that explains the entry (``Explanation``, ``Description``, ``Details``: the rustc book's
        lint pages put one after an Example), in text order; a list item led by
        another term ends the run (the next option of a list) unless ``values`` (the question
        asks which values an option takes: its items are the answer). Even then the entry's
        siblings end it: after a definition the next definition, and after a list item the next
        item at the same indentation of its chunk text (``texts``: the context's chunk texts), so
        "- **Test sign-in.** ..." is not followed by "- **Customer tags.** ..."; an item nested
        under ``first`` is one of its values."""
        same = sorted((su for su in scored if su.chunk_index == first.chunk_index and su.unit.kind != "code"
                       and su.unit.start > first.unit.start
                       and (su.unit.headings == first.unit.headings
                            # a lint's entry: its opening, an Example (code, skipped), then the
                            # Explanation that says what the lint is for ("This lint is mostly
                            # historical, ..."); read on into such a subsection, however far
                            or _explains(su.unit, first.unit)
                            # the sentences after a definition's first are under its term
                            or (first.unit.kind == "definition" and first.unit.lead
                                and su.unit.headings == (*first.unit.headings, first.unit.lead)))),
                      key=lambda su: su.unit.start)
        out = []
        for su in same:
            if su.unit.start - first.unit.start > cls.ENTRY_REACH and not _explains(su.unit, first.unit):
                break  # past the entry (its explaining subsection may start further on)
            if su.unit.lead and su.unit.lead != first.unit.lead and first.unit.lead and (
                    not values or su.unit.kind == first.unit.kind == "definition"
                    or (texts is not None and su.unit.kind == first.unit.kind == "item"
                        and line_indent(texts[su.chunk_index], su.unit.start)
                        <= line_indent(texts[first.chunk_index], first.unit.start))):
                # the next option of a list (after a sentence, a list holds the entry's values;
                # after a definition, the next definition is its sibling: "cdspell" then
                # "checkhash", not the values of cdspell)
                break
            out.append(su)
        return out

    def select(self, scored: list[ScoredUnit]) -> list[ScoredUnit]:
        """Greedy choice of units to quote (see module docstring, step 3)."""
        if not self._wants_code:
            scored = [su for su in scored if su.unit.kind != "code"]
        if not scored:
            return []
        weights, total = self._weights
        top = scored[0].score
        chosen: list[ScoredUnit] = [scored[0]]
        covered = set(scored[0].terms)
        # "strip=symbols vs strip=debuginfo": each side of a comparison gets the best unit about
        # it (a list item led by it, or a sentence naming it), although the two read alike (the
        # redundancy rule would drop one); a side is told apart by the words the other lacks
        for terms in self._sides:
            if any(terms <= _about(c.unit) for c in chosen):
                continue
            side = next((su for su in scored if su.score >= self.coverage_floor * top
                         and terms <= _about(su.unit)
                         and not any(_same_text(su.unit.text, c.unit.text) for c in chosen)), None)
            if side is not None:
                chosen.append(side)
                covered |= side.terms
        if len(self._sides) == 2 and all(t <= set(analyze(scored[0].unit.text)) for t in self._sides):
            # "deny vs forbid": the best unit names both sides ("'forbid' ... fills the same role
            # for 'deny' ..."); the contrast itself is usually the next sentence ("..., but
            # unlike the 'deny' level, the 'forbid' level can not be overridden ..."): read on one
            nxt = next((su for su in self._entry_followers(scored[0], scored) if su not in chosen), None)
            if nxt is not None and len(chosen) < self.max_sentences:
                chosen.append(nxt)
                covered |= nxt.terms
        if self._default and not STATES_DEFAULT.search(scored[0].unit.text):
            # "How long does Readline wait ... by default?": the best unit opens the entry (the
            # keyseq-timeout definition), its default sits sentences later ("The default value
            # is 500."); quote the sentence stating the default of *that* entry next
            d = default_of(scored[0], scored)
            if d is not None and d not in chosen:
                chosen.append(d)
                covered |= d.terms
            elif d is None and self._unset:
                # "... when I don't pass -C lto?", and the best unit's entry states no default: the
                # context's sentence saying what happens when that option is not given ("If -C
                # lto is not specified, then the compiler will attempt to perform thin local LTO")
                d = next((su for su in scored if su.score >= self.coverage_floor * top and su.unit.kind != "code"
                          and says_unset(su.unit.text, self._owners)), None)
                if d is not None and d not in chosen:
                    chosen.insert(0, d)
                    covered |= d.terms
        if (scored[0] in self._entry_opening or self._read_on) and scored[0].unit.kind != "row":
            # the best unit opens the reference entry the question asks about, or the question
            # asks what something is / is a search-box query: read on (the next sentences under
            # the same heading) before anything else. Not from a table row: the next rows are
            # other facts ("Annual price" then "Seats included", "Maximum seats" for "What is
            # the price of the Pro plan?"); the rows that match come by score
            followers = self._entry_followers(scored[0], scored, self._values, self._texts)
            if self._default and not STATES_DEFAULT.search(scored[0].unit.text):
                # "completion-query-items default": the entry's sentence stating the default
                # ("The default limit is 100.") comes first, wherever it sits in the entry, unless
                # the best unit states it already
                d = next((i for i, su in enumerate(followers) if _DEFAULT_Q.search(su.unit.text)), None)
                if d is not None:
                    followers = [followers[d]] + followers[:d] + followers[d + 1:]
            elif self._values and any(su.unit.lead for su in followers):
                # "Which linker flavors can I pass ...?": the entry's list items are the answer,
                # before the sentences between its opening and the list
                followers = [su for su in followers if su.unit.lead] + [su for su in followers if not su.unit.lead]
            else:
                # "rustc -C target-cpu for the host machine processor": the entry's opening says what
                # the option is; the sentence answering the rest of the question ("native can be
                # passed to use the processor of the host machine") sits further in. The follower
                # covering most of the question's terms the chosen units do not comes first
                followers = _answering_first(followers, covered, weights)
            # a list question gets the list: up to LIST_ITEMS items, however many sentences that is
            room = max(self.max_sentences, self.LIST_ITEMS + 1) if self._values else self.max_sentences
            for su in followers:
                if len(chosen) >= room or (len(chosen) >= self.max_sentences and not su.unit.lead):
                    break
                if su in chosen:
                    continue
                chosen.append(su)
                covered |= su.terms
            # reading on must not crowd out a unit that scores nearly as well as the best one
            # ("-C target-feature ... which one wins": the best unit opens the entry, the answer is
            # its fourth sentence "values passed later override ..."): it takes a fourth place
            rival = next((su for su in scored[1:] if su.score >= self.relative_floor * top and su not in chosen
                          and not any(_same_text(su.unit.text, c.unit.text) for c in chosen)
                          and not any(self._repeats(su, c) for c in chosen)), None)
            if rival is not None and len(chosen) >= self.max_sentences:
                chosen.append(rival)  # one place beyond the read-on: the rival is its own answer
                covered |= rival.terms
        while len(chosen) < self.max_sentences:
            best, best_gain = None, -1.0
            for su in scored:
                if su in chosen or su.score < self.coverage_floor * top:
                    continue
                if any(_same_text(su.unit.text, c.unit.text) for c in chosen):
                    continue  # the same sentence twice (an API documented in three variants)
                if any(self._repeats(su, c) for c in chosen):
                    continue
                # new question terms in the unit's own words: a term only its heading or page title
                # holds ("plan" of "Refunds on the Pro plan") tells the reader nothing new
                own = {t for t in (su.terms - covered) & set(analyze(su.unit.text))
                       if t not in self._fragments or self._fragments[t] in su.unit.text}
                new = sum(weights[t] for t in own) / total if total > 0 else 0.0
                if su.score < self.relative_floor * top and new <= 0:
                    continue
                gain = su.score + self.novelty_weight * new
                if gain > best_gain:
                    best, best_gain = su, gain
            if best is None:
                break
            chosen.append(best)
            covered |= best.terms
        # the runner-up: the second- or third-best unit, when it scores at least
        # ``runner_up_floor`` of the best and the rules above left it out (the read-on filled the
        # places with the best unit's own entry, or a unit covering more question terms won), is
        # quoted last. When two entries read alike ("address {string} ..." / "all {boolean} When
        # true, the callback returns all resolved addresses"), the reader sees both. Not after a
        # list's items or a rival's extra place: the answer is long enough already. Nor when the
        # best unit opens the entry the question names ("the dead_code lint"): another entry's
        # sentence merely mentioning it ("Unlike dead_code, ...") is not its answer, unless it
        # leads an entry of that name too (the ``sorted`` option's item after the prose sentence
        # "The sorted option ensures ...")
        opening = scored[0] in self._entry_opening
        for su in scored[1:1 + self.RUNNER_UP_DEPTH] if len(chosen) <= self.max_sentences else ():
            if (su in chosen or su.score < self.runner_up_floor * top
                    or (opening and not (su.unit.lead and lead_match(su.unit.lead, weights, su.unit.text)))
                    or any(_same_text(su.unit.text, c.unit.text) for c in chosen)
                    or any(self._repeats(su, c) for c in chosen)):
                continue
            chosen.append(su)
            break
        return chosen

    def generate(self, question: str, context: Context, *, qvec: np.ndarray | None = None, **signals) -> Draft:
        """A draft quoting the best units of ``context`` (abstention text when it has none)."""
        if qvec is None:
            qvec = self.units.embedder.embed([question])[0]
        scored = self.rank_units(question, context, qvec, signals.get("idf"))
        if not scored:
            return Draft(ABSTENTION_TEXT, self.name)
        chosen = self.select(scored)
        if not chosen:
            return Draft(ABSTENTION_TEXT, self.name)
        chosen = named_rows(chosen, scored, self._texts, question, self.coverage_floor)
        general = general_rule(chosen[0], scored, context.chunks, question)
        if general is not None:
            # "If you pay for Pro annually ..., the refund window is 45 days": an exception the
            # question did not ask about; the page's general rule comes first
            chosen = [general] + [su for su in chosen if su is not general]
        procedure_quoted = False
        if _PROCEDURE_Q.search(question):
            # "What does E-1003 mean and how do I fix it?": step 1 of "How to fix it" was quoted
            # alone ("how do I rotate ...": step 3); a how-to question gets the procedure
            # a pure how-to reads the procedure's page title and heading path as its heading
            # ("Installing the Zorblax hub" > "Steps"); a question that first asks what something
            # is answers "and how do I ask for a higher one?" with the one step that says so
            pure = not _DEFINITION_Q.match(question)
            before = chosen
            verb = _HOW_VERB.match(question)
            chosen = with_next_steps(chosen, scored, [c.text for c in context.chunks], self.LIST_ITEMS,
                                     content_terms(question), context.chunks if pure else None,
                                     (analyze(verb.group(1) or verb.group(2)) or [""])[0] if verb else "")
            steps = [su for su in chosen if su not in before or step_number(self._texts[su.chunk_index], su.unit)]
            procedure_quoted = len(steps) > 1
            if procedure_quoted and not asks_for_code(question):
                # the steps are the answer; a sample block (the CSV export's example file) is not
                chosen = [su for su in chosen if su.unit.kind != "code"]
            if procedure_quoted and pure:
                # the procedure is the answer: a sentence of another document ("The hub carries
                # a warranty of 42 months", another provider's step "In SAML Certificates, choose
                # Edit") does not belong in its steps. Not when the question first asks what
                # something is ("What is the daily limit on Enterprise, and how do I ask for a
                # higher one?": the limit's row is in another document than the procedure)
                doc = context.chunks[steps[0].chunk_index].doc_id
                chosen = [su for su in chosen if context.chunks[su.chunk_index].doc_id == doc]
        # the best-scoring block of the context (its heading and text match the question; measured
        # on the real-docs dev set it beat "the block after the best sentence"), when the question
        # asks for code or the block matches it nearly as well as the best sentence does
        code = code_for(chosen[0], scored)
        picked = [i for i, su in enumerate(chosen) if su.unit.kind == "code"]
        adjacent = adjacent_code(chosen[0], scored) if asks_for_code(question) else None
        example = example_after(chosen[0], scored) if asks_for_code(question) and adjacent is None else None
        if example is not None and example not in chosen:
            # "Show the command." over a PDF, where the command sits inside the sentence that
            # introduces it ("For example, mkdir /fs1/bash-install make install DESTDIR=..."):
            # that sentence, right after the one it illustrates
            chosen.insert(1, example)
        if adjacent is not None and adjacent not in chosen:
            # the question asks for code and the best sentence is followed by a block: that block
            # is its example ("Show the command." after "you can use the support/mkclone script
            # ..."), however well another section's block reads
            if picked:
                chosen[picked[0]] = adjacent
            else:
                chosen.append(adjacent)
            shown = block_after(adjacent, scored)
            if shown is not None and shown not in chosen:
                # the example's output right after it ("This will produce:" then the lint's
                # warning): "show an example that triggers the lint" reads both, as the page does
                chosen.insert(chosen.index(adjacent) + 1, shown)
        elif (code is not None and picked and chosen[0].unit.kind != "code" and code not in chosen
                and code.score >= chosen[picked[0]].score - OWN_CODE_TIE):
            # the greedy choice took another section's block, and the best unit's own section has
            # one scoring about as well: the own one illustrates the answer (a "create several
            # directories" question: ``mkdir .../{old,new,dist,bugs}`` of Brace Expansion, not a
            # completion function elsewhere that happens to mention directories)
            chosen[picked[0]] = code
        elif code is not None and not picked and (asks_for_code(question) or not procedure_quoted and (
                wants_code(question) or code.score >= self.code_ratio * chosen[0].score)):
            # a how-to answered by a procedure needs no sample block after it (the CSV export's
            # example file after its five steps), unless the question asks to see code
            chosen.append(code)
        target = pointed_at(chosen[0], scored)
        if target is not None and target not in chosen:
            # "notify: Same as -b.": the entry pointed at says what it does
            chosen.insert(1, target)
        prev = antecedent(chosen[0], scored, context.chunks[chosen[0].chunk_index].text)
        if prev is not None and chosen[0] not in self._entry_opening:
            # "This may also be specified by setting the RUST_TEST_NOCAPTURE environment
            # variable ...": the best sentence points back; the one it points at comes first,
            # also when another rule (the runner-up) had already quoted it further down
            if prev in chosen:
                chosen.remove(prev)
            chosen.insert(0, prev)
        chosen = antecedents_first(chosen, scored, [c.text for c in context.chunks])
        sentences, spans = [], {}
        if chosen[0] in self._entry_opening:
            # "## `--cap-lints`: set the most restrictive lint level" heads the entry whose first
            # sentence is "This flag lets you 'cap' lints": the heading's summary says what it does
            chunk = context.chunks[chosen[0].chunk_index]
            head = heading_summary(chunk.text, chosen[0].unit.start)
            if head is not None:
                sentences.append(f"{head[0]} [doc:{chunk.doc_id}]")
                spans[head[0]] = head[1]
        # "Yes. 20 days is inside the 30-day window." answers its FAQ heading's question; quoted
        # after another unit (not as the answer to that question) it says yes to nothing, and
        # first, to a question that is not a yes/no question ("How many accounts can control one
        # hub?"), its "Yes." answers nothing: the rest of it is quoted
        chosen = chosen[:1] + [su for su in chosen[1:] if not bare_reply(su.unit)]
        if bare_reply(chosen[0].unit) and not _YES_NO_Q.match(question):
            rest = _BARE_REPLY.sub("", chosen[0].unit.text, count=1)
            if rest:
                chosen[0] = replace(chosen[0], unit=replace(chosen[0].unit, text=rest))
        for su in chosen:
            chunk, u = context.chunks[su.chunk_index], su.unit
            if u.kind == "row":
                u = _projected(u, chunk.text, question)
            if u.kind == "code":
                sentences.append(f"{u.text} [doc:{chunk.doc_id}]")
                spans.setdefault(u.text, (u.start, u.end))
                continue
            text = u.text if u.text[-1:] in ".!?" else f"{u.text}."
            # a unit may hold more than one sentence ("Yes. 20 days is ..."): cite each; a bold
            # lead-in ("**Test sign-in.** A new button ...") heads the sentence after it as a
            # term does ("Test sign-in: A new button ..."), not a one-line sentence of its own
            lead_in = u.lead if u.lead[-1:] == "." and text.startswith(u.lead) and len(text) > len(u.lead) + 1 else ""
            parts = [sentence for piece in _sub_items(u, chunk.text) or [text[len(lead_in):].lstrip()]
                     for sentence, _ in split_cited_sentences(piece)]
            if lead_in and parts:
                parts[0] = f"{lead_in[:-1]}: {parts[0]}"
            for sentence in parts:
                sentences.append(f"{sentence} [doc:{chunk.doc_id}]")
                spans.setdefault(sentence, (u.start, u.end))
        text = join_sentences(sentences)
        # the short answer is a span: a sentence leaning on a pronoun may hold it as well as any
        prose = [su for su in scored if su.unit.kind != "code"]
        best = max(prose, key=lambda su: su.score + su.dangling).unit.text if prose else scored[0].unit.text
        return Draft(text, self.name, spans=spans, short=short_answer(question, best))


#: A unit that is only a cross-reference ("(see Section 4.1 [Bourne Shell Builtins], page 48).",
#: the tail of a sentence split at its closing bracket): nothing to quote.
_XREF_ONLY = re.compile(r"^\W*see\s+(?:also\s+)?(?:section|chapter|appendix|page|below|above)\b.{0,100}$", re.I)
_DANGLING = re.compile(r"^\W*(?:[\w'’-]+\W+){0,5}?(?:it|they|them|he|she|him|her)\b", re.I)

#: An entry that only points at another ("notify: Same as -b.", "An alias for --verbose.",
#: "Synonym for mapfile."): the name it points at.
_SAME_AS = re.compile(r"^\W*(?:same as|equivalent to|(?:an? )?synonym for|(?:an? )?alias (?:of|for)|identical to)\s+"
                      r"[‘'`\"]?([\w$.:+/-]*[\w$])[’'`\"]?\s*\.?\s*$", re.I)


def pointed_at(first: ScoredUnit, scored: list[ScoredUnit]) -> ScoredUnit | None:
    """The entry a definition or list item points at when all it says is "Same as X" (or
    "Equivalent to X", "Synonym for X", "An alias for X"): the context's best unit led by X."""
    if not first.unit.lead or first.unit.kind not in ("definition", "item"):
        return None
    m = _SAME_AS.match(first.unit.text[len(first.unit.lead):].lstrip(" :—–-"))
    if not m:
        return None
    name = m.group(1)
    return next((su for su in scored if su.unit.lead and su.unit.lead.split()[0] == name), None)


#: A sentence that opens by pointing back at the one before it ("This may also be specified ...",
#: "It is ignored when ...", "These options ...", "Such a value ...").
_BACK_REFERENCE = re.compile(r"^\W*(?:this|these|that|those|it|its|they|their|such|the latter|the former)\b", re.I)


#: How far (characters) back a section's first sentence may be to be the antecedent of a
#: paragraph opening with a back reference (:func:`antecedent`).
ANTECEDENT_REACH = 600


def antecedent(first: ScoredUnit, scored: list[ScoredUnit], chunk_text: str) -> ScoredUnit | None:
    """The unit ``first`` points back at when it is a sentence opening with a back reference
    (:data:`_BACK_REFERENCE`) or leaning on a pronoun early on (``_DANGLING``: "If none of them
    matches the signature, ..."): the quotable prose unit right before it in its chunk, under the same
    headings and in the same paragraph (``chunk_text`` between them has no blank line); else, when
    it opens a paragraph, the first quotable prose unit of its section within
    :data:`ANTECEDENT_REACH` characters (the section's subject); else None."""
    if first.unit.kind != "sentence" or not (_BACK_REFERENCE.match(first.unit.text) or _DANGLING.match(first.unit.text)):
        return None
    before = [su for su in scored if su.chunk_index == first.chunk_index and su.unit.end <= first.unit.start]
    if not before:
        return None
    # the sentences after a definition's first one sit under its term
    same = [su for su in before if su.unit.kind != "code" and (su.unit.headings == first.unit.headings or (
        su.unit.kind == "definition" and (*su.unit.headings, su.unit.lead) == first.unit.headings))]
    if not same:
        return None
    prev = max(same, key=lambda su: su.unit.start)
    if prev is max(before, key=lambda su: su.unit.start) and "\n\n" not in chunk_text[prev.unit.end:first.unit.start]:
        return prev  # the sentence before, in the same paragraph
    # a paragraph opening "This may also be specified by ..." under the heading ``--nocapture``
    # points at the section's subject: the section's first sentence says what it is
    opening = min(same, key=lambda su: su.unit.start)
    return opening if first.unit.start - opening.unit.start <= ANTECEDENT_REACH else None


#: Subsection headings under an entry that explain it (the rustc book's lint pages: Example, then
#: Explanation); :meth:`ExtractiveGenerator._entry_followers` reads on into them.
_EXPLAINING = frozenset({"explanation", "description", "details"})


def _explains(unit: Unit, entry: Unit) -> bool:
    """Whether ``unit`` sits in a subsection right under ``entry``'s headings that explains it
    (its heading is in :data:`_EXPLAINING`)."""
    h = unit.headings
    return len(h) == len(entry.headings) + 1 and h[:-1] == entry.headings and h[-1].strip().lower() in _EXPLAINING


#: Headings of sections that point elsewhere (their items are links, not statements):
#: nothing under them is quoted.
_NAVIGATION_HEADINGS = frozenset({"related", "related articles", "related topics", "related pages",
                                  "see also", "further reading", "more information", "references",
                                  "bibliography"})
#: A command-line flag as a question or a list item writes it (``-n``, ``--no-deprecation``).
_FLAG = re.compile(r"--?[A-Za-z][\w-]*")
#: A question asking how to do something ("... and how do I fix it?", "steps to rotate ...").
_PROCEDURE_Q = re.compile(r"\bhow\s+(?:do|can|could|should|would)\s+(?:i|we|you|one)\b|\bhow\s+to\b|\bsteps?\s+(?:to|for)\b", re.I)
#: The verb of a how-to ("calibrate" of "How do I calibrate the hub?").
_HOW_VERB = re.compile(r"^\s*how\s+(?:do|can|could|should|would)\s+(?:i|we|you|one)\s+([a-z]+)\b|^\s*how\s+to\s+([a-z]+)\b", re.I)
_STEP_MARK = re.compile(r"[ \t]*(\d{1,3})[.)][ \t]+")


def step_number(text: str, unit: Unit) -> int | None:
    """The number of the numbered-list item ``unit`` is (``3`` for the item after ``3. ``) in
    its chunk's ``text``; None for any other unit."""
    if unit.kind != "item":
        return None
    m = _STEP_MARK.fullmatch(text, text.rfind("\n", 0, unit.start) + 1, unit.start)
    return int(m.group(1)) if m else None


#: Column headers too generic to be what a question names ("the default of X" names no column).
_GENERIC_COLUMNS = frozenset(analyze(
    "default description value values type name names note notes example meaning status option flag "
    "details comment comments"))


#: Column headers of free text that qualifies a row's other cells (kept by :func:`_projected`).
_FREE_TEXT_COLUMNS = frozenset(analyze("note notes description details comment comments remarks"))


def row_columns(cells: Sequence[tuple[str, str]], question: str) -> list[int]:
    """Indexes of the value columns of a table row that ``question`` names, when it names some
    but not all of three or more value columns ("What is the price of the Pro plan?" over ``| |
    Starter | Pro | Enterprise |`` -> the Pro column; "seats Starter vs Pro" -> both); []
    otherwise, and when every named cell is empty.
    A column is named when every analyzed word of its header is a word of the question, and the
    header is neither empty, longer than three words, nor generic (:data:`_GENERIC_COLUMNS`).

    >>> cells = [("", "Monthly price"), ("Starter", "$29"), ("Pro", "$99"), ("Enterprise", "$799")]
    >>> row_columns(cells, "What is the price of the Pro plan?")
    [2]
    >>> row_columns(cells, "Monthly price of Starter vs Pro?")
    [1, 2]
    >>> row_columns(cells, "Starter, Pro or Enterprise: monthly price?")
    []
    >>> row_columns(cells[:3], "price of the Pro plan")
    []
    """
    values = list(range(1, len(cells)))
    if len(values) < 3:
        return []
    words = set(analyze(question))
    named = []
    for i in values:
        header = analyze(cells[i][0])
        if header and len(header) <= 3 and set(header) <= words and not set(header) & _GENERIC_COLUMNS:
            named.append(i)
    return named if 0 < len(named) < len(values) and any(cells[i][1] for i in named) else []


_ITEM_START = re.compile(r"\n(?=[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+)")
_ITEM_MARK = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+")


def _sub_items(unit: Unit, text: str) -> list[str]:
    """The pieces of a numbered step that took its nested items into one unit ("Calibrate the
    hub." + "Insert the key into the slot marked K." + "Hold the reset button ..."), each as
    displayed, so each is cited as a sentence of its own: joined, "slot marked K. Hold" reads as
    an initial to the sentence splitter. [] for any other unit (also a lead-in ending in ':',
    whose items read as one sentence)."""
    if unit.kind != "item":
        return []
    pieces = [clean(_ITEM_MARK.sub("", p, count=1)) for p in _ITEM_START.split(text[unit.start:unit.end])]
    pieces = [p if p[-1:] in ".!?" else f"{p}." for p in pieces if p]
    if len(pieces) < 2 or pieces[0].endswith(":.") or " ".join(pieces) != unit.text:
        return []
    return pieces


_BARE_REPLY = re.compile(r"^(?:yes|no)\b[.,!]\s*", re.I)
#: A question a "Yes." or "No." answers: it opens with an auxiliary verb ("Can I ...?", "Does
#: the hub ...?"), after an optional conditions clause ("I have been on Pro for 20 days, can I ...?").
_YES_NO_Q = re.compile(r"^(?:[^?]*,\s*)?(?:do|does|did|is|are|was|were|can|could|will|would|should|shall|may|"
                       r"might|must|has|have|had)\b", re.I)


def bare_reply(unit: Unit) -> bool:
    """Whether ``unit`` opens with a bare "Yes." / "No." under a heading that is a question (a
    FAQ answer: "Can I get my money back?" / "Yes. 20 days is inside the 30-day window.").

    >>> bare_reply(Unit(0, 9, "Yes. 20 days is inside.", ("FAQ", "Can I cancel?")))
    True
    >>> bare_reply(Unit(0, 9, "Yes. 20 days is inside.", ("Refunds",)))
    False
    """
    return bool(_BARE_REPLY.match(unit.text)) and unit.heading.rstrip().endswith("?")


#: A sentence that opens with a condition ("If you pay for Pro annually ($990 per year), ...").
_CONDITION = re.compile(r"^\s*(?:if|when|unless|for)\b([^,;:]{3,120}),\s", re.I)
#: A question that states a condition itself ("... if I pay annually?", "when ...").
_CONDITIONAL_Q = re.compile(r"\b(?:if|when|unless)\b", re.I)
#: A condition that points back to the sentence before it ("If none of them matches").
_POINTS_BACK = re.compile(r"\b(?:it|its|they|them|their|these|those|this|that)\b", re.I)
#: A general rule must score at least this share of the conditional best unit (:func:`general_rule`).
GENERAL_RULE_SHARE = 0.75


def general_rule(first: ScoredUnit, scored: list[ScoredUnit], chunks: Sequence, question: str) -> ScoredUnit | None:
    """The unit to quote before ``first`` when ``first`` is an exception the question did not
    ask about: a sentence opening with a condition (:data:`_CONDITION`) that names something the
    question does not ("If you pay for Pro annually ($990 per year), the refund window is 45
    days" for "What is the refund window for Pro?"), while a sentence of the same document
    states no condition, shares a term with the question and scores at least
    :data:`GENERAL_RULE_SHARE` of it ("On Pro, you can request a refund of a subscription charge
    within 30 days"). None otherwise, when the question states a condition itself ("if", "when"),
    when it names a word of the condition that the general rule lacks ("What is the refund
    window for annual Pro?": the exception is the answer), when the condition points back ("If
    none of them matches, ...": the sentence before it is its antecedent, quoted first), and
    when the question asks for a default or
    for code (the default is often stated as a case: "If the variable exists but has no value,
    the default is 10"; measured on the spent real-docs files, 3 answers got worse without this)."""
    m = _CONDITION.match(first.unit.text) if first.unit.kind == "sentence" else None
    if m is None or _CONDITIONAL_Q.search(question) or asks_default(question) or wants_code(question) \
            or _POINTS_BACK.search(m.group(1)):
        return None  # "IGNOREEOF default value": "If the variable exists but has no value, the default is 10"
    asked, condition = set(analyze(question)), set(analyze(m.group(1)))
    if not condition - asked - {"you", "your"}:
        return None  # "If you ...": the condition names nothing the question does not
    doc = chunks[first.chunk_index].doc_id
    general = next((su for su in scored if su is not first and su.score >= GENERAL_RULE_SHARE * first.score
                    and chunks[su.chunk_index].doc_id == doc and su.unit.kind == "sentence"
                    and not _CONDITION.match(su.unit.text) and not bare_reply(su.unit) and su.terms), None)
    if general is None or condition & asked - set(analyze(general.unit.text)):
        return None  # "... for annual Pro?": the question names the condition ("annual"); it is the answer
    return general


def row_label(unit: Unit, text: str) -> str:
    """The first cell of a table row unit: its label (``Medium`` of ``| Medium | 340 g | 27 EUR
    |``, ``O_DIRECT`` of an HTML row led by ``<code>O_DIRECT</code>``)."""
    cells = table_cells(text, unit.start)
    if cells:
        return cells[0][1]
    first = _first_cell(unit.text)
    return unit.lead or first.split(": ", 1)[-1]


def names_row(question: str, unit: Unit, text: str) -> bool:
    """Whether ``question`` names the table row ``unit`` (of chunk ``text``) by its label
    (:func:`row_label`): every word of the label is a word of the question, as written ("Ctrl+A"
    is not named by "What does Ctrl+U do in a line editor?"), and not every one is a stop word
    (:data:`_LABEL_STOP`)."""
    return unit.kind == "row" and label_named(row_label(unit, text), question)


def named_rows(chosen: list[ScoredUnit], scored: list[ScoredUnit], texts: Sequence[str], question: str,
               floor: float) -> list[ScoredUnit]:
    """``chosen`` with the table rows the question names by their label (:func:`row_label`:
    every analyzed word of the first cell is a word of the question, "What does the Medium widget
    weigh?" -> the ``Medium`` row) in place of the rows of the same chunk it does not name (the
    ``Small`` and ``Large`` rows matched "weigh" as well). A named row scoring at least ``floor``
    of the best unit joins when none was chosen. Unchanged when the question names no row
    label, or names every chosen row's."""
    def named(su: ScoredUnit) -> bool:
        return names_row(question, su.unit, texts[su.chunk_index])

    rows = [su for su in chosen if su.unit.kind == "row"]
    if not rows:
        return chosen
    top = scored[0].score
    hits = [su for su in scored if su.unit.kind == "row" and su.score >= floor * top and named(su)]
    if not hits:
        return chosen
    tables = {su.chunk_index for su in hits}
    out, placed = [], False
    for su in chosen:
        if su.unit.kind == "row" and su.chunk_index in tables and not named(su):
            if not placed:
                out += [h for h in hits if h not in chosen and h.chunk_index == su.chunk_index][:1]
                placed = True
            continue
        out.append(su)
    return out or chosen


def _projected(unit: Unit, text: str, question: str) -> Unit:
    """``unit`` (a Markdown table row of the chunk ``text``) shown with only its first cell, the
    columns ``question`` names (:func:`row_columns`) and its free-text columns (notes,
    description: :data:`_FREE_TEXT_COLUMNS`): ``Monthly price; Pro: $99 per workspace`` instead of
    every plan's price. The span (what the citation points at) is the row's. Unchanged when the
    question names no column."""
    cells = table_cells(text, unit.start)
    keep = row_columns(cells, question) if cells else []
    if not keep:
        return unit
    # a free-text column ("notes", "description") qualifies the cells asked about: kept
    keep = sorted(set(keep) | {i for i in range(1, len(cells)) if set(analyze(cells[i][0])) & _FREE_TEXT_COLUMNS})
    if len(keep) == len(cells) - 1:
        return unit
    shown = [cells[0][1] if not cells[0][0] else f"{cells[0][0]}: {cells[0][1]}"]
    shown += [f"{cells[i][0]}: {cells[i][1]}" for i in keep if cells[i][1]]
    return replace(unit, text="; ".join(c for c in shown if c))


def _first_cell(row_text: str) -> str:
    """The first cell of a row unit's display text (``Monthly price`` of ``Monthly price; Starter:
    $29; ...``, ``Constant: O_DIRECT`` of ``Constant: O_DIRECT; Description: ...``)."""
    return row_text.split(";", 1)[0].strip()


def procedure_terms(chunk, unit: Unit) -> set[str]:
    """Analyzed terms of what a numbered list is the procedure for: the unit's headings, the
    chunk's heading path and its document title ("Installing the Zorblax hub" > "Steps")."""
    return set(analyze(" ".join((getattr(chunk, "title", "") or "", *chunk.heading_path, *unit.headings))))


def with_next_steps(chosen: list[ScoredUnit], scored: list[ScoredUnit], texts: Sequence[str],
                    most: int, question_terms: Iterable[str] | None = None,
                    chunks: Sequence | None = None, verb: str = "") -> list[ScoredUnit]:
    """``chosen`` with the whole procedure around its first numbered-list item: the quotable
    items of the same list (same chunk and headings, numbered without a gap), in order, where
    that item stood; from step 1 when the procedure has at most ``most`` steps, else ``most``
    steps from the chosen one (a step chosen elsewhere moves there). ``texts``: the context's
    chunk texts. Unchanged when no chosen unit is a numbered item, and, given the question's
    analyzed ``question_terms``, when the chosen item is not step 1 and the procedure's heading
    shares no term with the question: that step answers on its own ("... and how do I ask for a
    higher one?" -> step 4 of "How to fix it", "request a higher limit under Settings → ...";
    "What does E-1003 mean and how do I fix it?" gets the whole "How to fix it"). Given the
    context's ``chunks``, the heading path and title count as the heading too
    (:func:`procedure_terms`: "Installing the Zorblax hub" > "Steps"). Given the how-to's
    analyzed ``verb`` ("calibr" of "How do I calibrate the hub?"), the one step of the procedure
    that opens with it ("3. Calibrate the hub." and its sub-steps) answers alone, unless the
    heading names that verb too (then the procedure is what the question asks for)."""
    first = next((su for su in chosen if step_number(texts[su.chunk_index], su.unit) is not None), None)
    if first is None:
        return chosen
    heading = (procedure_terms(chunks[first.chunk_index], first.unit) if chunks is not None
               else set(analyze(first.unit.heading)))
    if verb and verb not in heading:
        opening = [su for su in scored if su.chunk_index == first.chunk_index and su.unit.headings == first.unit.headings
                   and step_number(texts[su.chunk_index], su.unit) is not None
                   and analyze(su.unit.text)[:1] == [verb]]
        if len(opening) == 1:
            # that step alone: the procedure's other steps are not what is asked
            step = opening[0]
            return [step if su is first else su for su in chosen if su is first or not (
                su.chunk_index == first.chunk_index and su.unit.headings == first.unit.headings
                and step_number(texts[su.chunk_index], su.unit) is not None)]
    if question_terms is not None and step_number(texts[first.chunk_index], first.unit) != 1:
        asked = set(question_terms)
        # "How do I calibrate the hub?" over "Installing the Zorblax hub": step 3 "Calibrate the
        # hub." (with its sub-steps) says more of what is asked than the procedure's title does;
        # that step answers on its own
        if not heading & asked or len(set(analyze(first.unit.text)) & asked) > len(heading & asked):
            return chosen
    same = sorted((su for su in scored if su.chunk_index == first.chunk_index
                   and su.unit.headings == first.unit.headings), key=lambda su: su.unit.start)
    at_first = same.index(first)
    n = step_number(texts[first.chunk_index], first.unit)
    before: list[ScoredUnit] = []
    for su in reversed(same[:at_first]):
        if step_number(texts[su.chunk_index], su.unit) != n - len(before) - 1:
            break
        before.insert(0, su)
    after: list[ScoredUnit] = []
    for su in same[at_first + 1:]:
        if step_number(texts[su.chunk_index], su.unit) != n + len(after) + 1:
            break
        after.append(su)
    steps = before + [first] + after
    steps = steps[:most] if len(steps) <= most else ([first] + after)[:most]
    if len(steps) == 1:
        return chosen
    at = chosen.index(first)
    rest = [su for su in chosen if su not in steps]
    return rest[:at] + steps + rest[at:]


def antecedents_first(chosen: list[ScoredUnit], scored: list[ScoredUnit], texts: Sequence[str]) -> list[ScoredUnit]:
    """``chosen`` with every quoted sentence that points back (:func:`antecedent`) placed after
    the one it points at when that one is quoted later ("Ledgerly checks every response against
    the certificates ..." before "If none of them matches ..."); ``texts``: the chunk texts by
    chunk index. The first unit keeps its place (its antecedent is added by the caller)."""
    out = list(chosen)
    for i in range(1, len(out)):
        prev = antecedent(out[i], scored, texts[out[i].chunk_index])
        if prev is not None and prev in out[i + 1:]:
            out.remove(prev)
            out.insert(i, prev)
    return out


#: Status lines that open an API entry without saying what it does (Node.js: "Stability: 2 -
#: Stable", "Added in: v14.14.0").
_ENTRY_META = re.compile(r"^\s*(?:Stability:\s*\d|Added in:|Deprecated since:|Since:)", re.I)

#: Questions that ask for code: "show me the code / an example / the syntax", "how do I ...".
_CODE_REQUEST = re.compile(
    r"\b(?:code|example|examples|snippet|sample|syntax|show me|write|output|messages?|command[ -]line)\b"
    r"|\bshow\s+(?:us|how|the|an?|some)\b|\blooks?\s+like\b"
    r"|^\s*(?:how\s+(?:do|can|should|would|could)\s+(?:i|you|we|one)|how\s+to)\b", re.I)
_CODE_TERM = re.compile(r"`[^`]+`|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\(\))?|\b[A-Za-z_$][\w$]*\(\)")


_DEFINITION_Q = re.compile(r"^\s*(?:what\s+(?:is|are|does|do)|define|explain|describe)\b", re.I)
_SECOND_PART = re.compile(r"\b(?:and|also|then)\s+(?:how|what|why|when|where|which|who|can|do|does|is|should)\b|\?.*\?", re.I)


#: A question (or a sentence) about a default value: "by default", "default limit", "Defaults to".
_DEFAULT_Q = re.compile(r"\bdefaults?\b", re.I)
#: A sentence stating a default value ("The default value is 500.", "Defaults to 16 KiB.",
#: "Default: 100", "The shell sets the default value to 500", "This is the default if --emit is
#: not specified", "include default libraries (the default)"), not merely saying "default"
#: ("controls which default set of key bindings is used").
STATES_DEFAULT = re.compile(r"\bdefaults?\s+(?:value\s+|limit\s+|setting\s+|level\s+)?(?:is|are|was|to)\b"
                            r"|\bdefault\s*:|\bdefault\s+(?:value|limit|setting|level)s?\b"
                            r"|\b(?:is|are)\s+the\s+default\b|\(the\s+default\)", re.I)
#: "default" as a word of its own, not inside "allow-by-default" (a lint level, not a value).
_DEFAULT_WORD = re.compile(r"(?<![\w-])defaults?(?![\w-])", re.I)
#: A question about a default in other words: "when I do not specify it", "if it is omitted",
#: "if TMOUT is unset", "out of the box".
_UNSET_Q = re.compile(r"\b(?:if|when|unless|without)\b[^?.]{0,40}?(?:\bnot|n['’]t|\bnever)\s+(?:specif|set|pass|give|provid|suppli|configur|chang)\w*"
                      r"|\b(?:omitted|unset|unspecified)\b|\bout\s+of\s+the\s+box\b", re.I)


#: "Which linker flavors can I pass ...", "What lints are in ...": which/what, at most one more
#: word, a plural noun (not one of the -s words below), then a verb.
_LIST_Q = re.compile(r"^\s*(?:which|what)\s+(?:[a-z][\w-]*\s+)?"
                     r"(?!(?:is|was|does|has|this|its|class|process|access|address|alias|status|less|unless|plus|bus)\b)"
                     r"[a-z][\w-]*[^s\W]s\s+(?:can|could|do|does|are|is|should|may|will|must|did|exist)\b", re.I)


def asks_list(question: str) -> bool:
    """Whether a question asks for the members of a list ("Which linker flavors can I pass to
    rustc?", "What lints are in the unused group?"): its answer is the items of the entry's list,
    not more sentences about the entry.

    >>> asks_list("Which linker flavors can I pass to rustc with -C linker-flavor?")
    True
    >>> asks_list("What does -C linker-flavor do?"), asks_list("What is the default linker flavor?")
    (False, False)
    """
    return bool(_LIST_Q.match(question))


def asks_default(question: str) -> bool:
    """Whether a question asks for a default value: it says "default", or what happens when the
    thing is not given ("What does rustc use for tune-cpu when I do not specify it?", "... if the
    option is omitted", "... out of the box").

    >>> asks_default("What does rustc use for tune-cpu when I do not specify it?")
    True
    >>> asks_default("HISTSIZE default"), asks_default("How do I set HISTSIZE?")
    (True, False)
    """
    return bool(_DEFAULT_Q.search(question) or _UNSET_Q.search(question))


_VALUES_Q = re.compile(r"\b(?:what|which|possible|allowed|valid)\s+values?\b|\bvalues?\s+(?:can|does|do)\b|\baccepts?\b", re.I)


def is_keyword_query(question: str) -> bool:
    """Whether ``question`` is typed like a search-box query rather than a question: no
    question mark and no question word or request verb first.

    >>> is_keyword_query("net server.listen backlog default"), is_keyword_query("How do I read a file?")
    (True, False)
    """
    return "?" not in question and not ASKING.match(question)


_WHAT_Q = re.compile(r"^\s*(?:what|which)\b", re.I)


def asks_entry(question: str) -> bool:
    """Whether the reference entry of a name the question gives answers it: a *what / which*
    question ("What values can I pass to -C panic?", "What highWaterMark does fs.createReadStream
    use by default?") or a search-box query ("crypto.scrypt cost default"). *How / why* and
    yes-no questions ask for reasoning or steps that the entry's opening seldom holds: measured on
    the 186 real-docs questions, opening those with the entry lost 3 correct answers and won
    none, while what/which questions and queries won 4 and lost none.

    >>> asks_entry("What values can I pass to -C panic?"), asks_entry("Why would I pass -C embed-bitcode=no?")
    (True, False)
    """
    return bool(_WHAT_Q.match(question)) or is_keyword_query(question)


def defining_pattern(subject: str) -> re.Pattern | None:
    """A pattern matching a sentence that says what ``subject`` is: the subject (plural allowed)
    first, after an article, then at most two words, then *is* / *are* and a defining phrase
    (*a*, *one*, *used*, *streams that* ...: "Buffer objects are used to represent ...", "A
    Duplex stream is one that ...", not "The X variable is only read ..."); None for an empty subject or one of
    more than three words.

    >>> rx = defining_pattern("Buffer")
    >>> bool(rx.match("Buffer objects are used to represent a fixed-length sequence of bytes."))
    True
    >>> bool(rx.match("Many Node.js APIs support Buffers.")), bool(rx.match("Buffering is slow."))
    (False, False)
    >>> bool(defining_pattern("NODE_DEBUG").match("The NODE_DEBUG environment variable is only read once."))
    False
    """
    words = re.findall(r"[\w.$-]+", subject)
    if not words or len(words) > 3:
        return None
    name = r"\s+".join(re.escape(w) for w in words)
    return re.compile(rf"^(?:(?:a|an|the)\s+)?{name}(?:e?s)?(?:\s+[\w-]+){{0,2}}?\s+(?:is|are)\s+"
                      r"(?:a|an|one|used|(?:the\s+)?[\w-]+\s+(?:that|which|of|for|to))\b", re.I)


def asks_definition(question: str) -> bool:
    """Whether a question asks what one thing is or does ("What does shopt -s nullglob do?",
    "What is AsyncLocalStorage?"), not a second thing besides ("... mean and how do I fix it?").

    >>> asks_definition("What does the dead_code lint detect?"), asks_definition("How often does X run?")
    (True, False)
    >>> asks_definition("What does error E-1003 mean and how do I fix it?")
    False
    """
    return bool(_DEFINITION_Q.match(question)) and not _SECOND_PART.search(question)


def wants_code(question: str) -> bool:
    """Whether a question asks for code (an example, a snippet, the syntax, or "how do I ...").

    >>> wants_code("How do I read a file line by line?"), wants_code("What is the default retryDelay?")
    (True, False)
    >>> wants_code("Can you show how to create a temporary directory?"), wants_code("Show the command.")
    (True, True)
    >>> wants_code("What does a minimal test function look like?"), wants_code("What does jobs -l show?")
    (True, False)
    """
    return bool(_CODE_REQUEST.search(question))


_SHOW_CODE = re.compile(r"\b(?:code|examples?|snippet|sample|syntax|show|looks?\s+like)\b", re.I)
_SHOW_OUTPUT = re.compile(r"\b(?:warnings?|messages?|output|errors?|diagnostics?|prints?|produces?)\b", re.I)


def asks_for_code(question: str) -> bool:
    """Whether a question asks to see code itself (an example, a snippet, the syntax, "show the
    command", "what does ... look like"), not its output ("lint example warning", "warning
    message") nor how to do something in general ("How can I ...?", which :func:`wants_code`
    also takes).

    >>> asks_for_code("Show the command."), asks_for_code("unused_results lint code example")
    (True, True)
    >>> asks_for_code("non_camel_case_types lint example warning"), asks_for_code("How do I read a file?")
    (False, False)
    """
    return bool(_SHOW_CODE.search(question)) and not _SHOW_OUTPUT.search(question)


#: A number written with group separators ("20,000", "1,250.50"): the analyzer splits it into
#: pieces ("20", "000") that are no numbers of their own.
_GROUPED_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def code_terms(question: str) -> set[str]:
    """Analyzed terms of the code names in a question (``fs.rm``, ```force```, ``rl.close()``)."""
    return {t for m in _CODE_TERM.finditer(question) for t in analyze(m.group(0))}


def case_variants(question: str, leads: Sequence[str]) -> set[str]:
    r"""The leads that name, in other letter case, a name the question spells exactly as another
    lead does: with leads ``mapfile`` and ``MAPFILE``, "What is mapfile used for?" makes
    ``MAPFILE`` a variant (a shell, Rust or JavaScript name is case-sensitive). A question that
    spells no lead exactly ("histsize default") makes none.

    >>> sorted(case_variants("What is mapfile used for?", ["mapfile", "MAPFILE", "-t"]))
    ['MAPFILE']
    >>> case_variants("histsize default", ["HISTSIZE", "HISTFILESIZE"])
    set()
    >>> case_variants("What does \\V show in a bash prompt string?", ["\\v", "\\V", "\\w"])
    {'\\v'}
    """
    words = set(re.findall(r"\\?[\w$.:-]+", question))  # a prompt escape keeps its backslash (\V vs \v)
    firsts = {lead: lead.split()[0] for lead in leads if lead.split()}
    exact = {f for f in firsts.values() if f in words}
    folded = {f.casefold() for f in exact}
    return {lead for lead, f in firsts.items() if f not in exact and f.casefold() in folded}


def lead_match(lead: str, weights: dict[str, float], text: str = "") -> bool:
    """Whether an item's lead term is a short name (at most three words) all of whose analyzed
    terms are content terms of the question (``weights`` keys). A long bold lead ("**Directory
    Sync for Google Workspace.**") is a title, not a term, and never matches; nor does a lead
    that ends a sentence in the item's ``text`` ("**Wire transfer references.** Enterprise
    invoices now ..." in release notes: a headline, not a term being defined).

    >>> w = {"wire": 1.0, "transfer": 1.0, "refer": 1.0}
    >>> lead_match("Wire transfer references", w, "Wire transfer references. Invoices now ...")
    False
    >>> lead_match("Wire transfer references", w, "Wire transfer references: how to pay ...")
    True
    >>> lead_match("Wire transfer references.", w)
    False
    """
    if len(lead.split()) > 3 or lead.rstrip().endswith((".", "!", "?")):
        return False
    i = text.find(lead)
    if i >= 0 and text[i + len(lead):i + len(lead) + 1] in (".", "!", "?"):
        return False
    terms = analyze(lead)
    return bool(terms) and all(t in weights for t in terms)


_TYPE = re.compile(r"\{[^{}]*\}")


def bare_entry(unit: Unit) -> bool:
    """A list item that only names its lead term and a type (``options {Object}``,
    ``path {string|Buffer|URL}``) or its synopsis (``shopt: shopt [-pqsu] [optname ...]``):
    nothing to quote."""
    if not unit.lead or unit.kind not in ("item", "definition"):
        return False
    rest = _TYPE.sub(" ", unit.text.replace(unit.lead, " ", 1))
    if re.match(rf"\W*{re.escape(unit.lead)}\b[^.]*\[", rest):
        # a synopsis: "shopt: shopt [-pqsu] [-o] [optname ...]" -- unless a sentence follows its
        # bracketed arguments ("caller: caller [expr] Returns the context of any active ...")
        words = re.sub(r"\[[^\[\]]*\]", " ", re.sub(r"\[[^\[\]]*\]", " ", rest))
        return len(re.findall(r"[A-Za-z]\w*", words.replace(unit.lead, " "))) < 4
    return len(re.findall(r"\w+", rest)) < 2


_LAST_HEADING = re.compile(r"^#{1,6}[ \t]+(?P<name>`[^`\n]+`(?:\s*/\s*`[^`\n]+`)*):[ \t]+(?P<summary>[^\n]+?)[ \t]*\n\s*\Z", re.M)


def symbol_names(question: str) -> set[str]:
    r"""The names made only of symbols a question gives as words of their own, a leading
    backslash dropped (the Markdown form of a PDF's ``\#`` is ``#``): prompt escapes, history
    designators, operators. One character of sentence punctuation alone is no name.

    >>> sorted(symbol_names(r"In a bash prompt string, what does the \# escape show?"))
    ['#']
    >>> sorted(symbol_names("What does the !# event designator refer to?"))
    ['!#']
    >>> sorted(symbol_names("bash arithmetic ! and ~ operators"))
    ['!', '~']
    >>> symbol_names("Is it fast - or slow?")
    set()
    """
    out = set()
    for word in question.split():
        word = word.strip("\"'`‘’“”")
        if word.startswith("\\") and len(word) > 1:
            word = word[1:]
        if 0 < len(word) <= 3 and not re.search(r"[\w\s]", word) and word not in _SENTENCE_MARKS:
            out.add(word)
    return out


_SENTENCE_MARKS = frozenset({"-", "–", "—", ",", ".", ";", ":", "?", "!?", "...", "/", "(", ")", "&"})


def flag_owners(units: Sequence[Unit]) -> list[frozenset[str]]:
    """For each unit of a chunk (in text order), the analyzed name of the entry whose option list
    it sits in: the last definition before it under the same headings whose lead is a name, not a
    flag (``popd: popd [-n] [+N | -N] Removes ...`` owns the items ``-n``, ``+N``, ``-N`` after
    it); empty when there is none.

    >>> u = [Unit(0, 22, "popd: Removes entries.", ("Dirs",), "definition", "popd"),
    ...      Unit(24, 42, "-n: Suppresses cd.", ("Dirs",), "definition", "-n"),
    ...      Unit(44, 53, "See also.", ("Other",))]
    >>> [sorted(o) for o in flag_owners(u)]
    [['popd'], ['popd'], []]
    """
    out: list[frozenset[str]] = []
    current: tuple[tuple[str, ...], frozenset[str]] | None = None
    for u in units:
        if u.kind == "definition" and u.lead and not u.lead.startswith(("-", "+")):
            current = (u.headings, frozenset(analyze(u.lead.split()[0])))
        out.append(current[1] if current is not None and current[0] == u.headings else frozenset())
    return out


def heading_summary(text: str, start: int) -> tuple[str, tuple[int, int]] | None:
    """The summary of a reference heading of the form ``## `name`: summary`` that directly
    precedes offset ``start`` of ``text`` (only blank lines between), as the sentence
    ``"name: summary."`` and the heading line's offsets; None when there is no such heading.

    >>> heading_summary("## `--cap-lints`: set the most restrictive lint level\\n\\nThis flag lets you cap lints.", 54)
    ('--cap-lints: set the most restrictive lint level.', (0, 53))
    >>> heading_summary("## Capping lints\\n\\nThis flag lets you cap lints.", 18) is None
    True
    """
    m = None
    for m in _LAST_HEADING.finditer(text[:start]):
        pass
    if m is None or len(m.group("summary").split()) < 2:
        return None
    name = m.group("name").replace("`", "").replace(" ", "")
    summary = m.group("summary").rstrip(".")
    return f"{name}: {summary}.", (m.start(), m.start() + len(m.group(0).rstrip()))


def _answering_first(followers: list[ScoredUnit], covered: set[str], weights: dict[str, float]) -> list[ScoredUnit]:
    """``followers`` (text order) with the one covering the greatest IDF weight of question
    terms outside ``covered`` moved to the front (ties: the higher score, then the earlier);
    unchanged when none covers a new term."""
    gains = [sum(weights[t] for t in su.terms - covered) for su in followers]
    if not gains or max(gains) <= 0:
        return followers
    i = max(range(len(followers)), key=lambda j: (gains[j], followers[j].score, -j))
    return [followers[i]] + followers[:i] + followers[i + 1:]


def entry_of(first: ScoredUnit, scored: list[ScoredUnit]) -> list[ScoredUnit]:
    """The units (of ``scored``) of the entry ``first`` belongs to, in text order: a definition
    and the sentences under its term (``editing-mode`` / ": Controls which ... The default value
    is emacs."), a list item alone (an option item holds its own sentences), else the units under
    the same headings in the same chunk (the section)."""
    same = [su for su in scored if su.chunk_index == first.chunk_index]
    u = first.unit
    if u.kind == "definition" and u.lead:
        term, heads = u.lead, u.headings
    else:
        d = next((su for su in same if su.unit.kind == "definition" and su.unit.lead
                  and u.headings == (*su.unit.headings, su.unit.lead)), None)
        term, heads = (d.unit.lead, d.unit.headings) if d is not None else ("", u.headings)
    if term:
        out = [su for su in same if (su.unit.kind == "definition" and su.unit.lead == term and su.unit.headings == heads)
               or su.unit.headings == (*heads, term)]
    elif u.kind == "item" and u.lead:
        out = [first]
    else:
        out = [su for su in same if su.unit.headings == heads and su.unit.kind != "code"]
    return sorted(out, key=lambda su: su.unit.start)


def says_unset(text: str, owners: Sequence[re.Pattern]) -> bool:
    r"""Whether ``text`` says what happens when a thing ``owners`` names is not given: an
    :data:`_UNSET_Q` phrase with the name inside it or just before it ("If -C lto is not
    specified, ...", "if FCEDIT is unset"), not a name elsewhere in the sentence.

    >>> owners = [re.compile(r"(?<![\w-])lto(?![\w-])", re.I)]
    >>> says_unset('If -C lto is not specified, the compiler performs "thin local LTO".', owners)
    True
    >>> says_unset("When -C opt-level is not specified, lto is off.", owners)
    False
    """
    for m in _UNSET_Q.finditer(text):
        window = text[max(0, m.start() - 20):m.end()]
        if any(rx.search(window) for rx in owners):
            return True
    return False


def default_of(first: ScoredUnit, scored: list[ScoredUnit]) -> ScoredUnit | None:
    """The unit of ``first``'s entry (:func:`entry_of`) that states a default value
    (:data:`STATES_DEFAULT`; failing that, one that says "default" at all): the nearest after
    ``first``, else the nearest before it; None when the entry states none."""
    entry = [su for su in entry_of(first, scored) if su is not first]
    for rx in (STATES_DEFAULT, _DEFAULT_Q):  # "The default value is emacs." before "By default, ..."
        cands = [su for su in entry if rx.search(su.unit.text)]
        after = [su for su in cands if su.unit.start > first.unit.start]
        if after:
            return after[0]
        if cands:
            return cands[-1]
    return None


#: A block of the best unit's own section is preferred to the context's best block when it scores
#: at least this share of it. Measured on the 150 in-scope real-docs questions (code requests):
#: own blocks of the right entry scored 0.93-0.97 of a neighbouring entry's best block
#: ("readline ... for await" vs ``filehandle.readLines``, ``events.once``), while an intro
#: section's incidental block scored 0.69 of the worked example (rustc PGO).
OWN_CODE_SHARE = 0.8


#: Cosine by which a block of the best unit's own section may trail the block the greedy choice
#: took and still replace it (:meth:`ExtractiveGenerator.generate`): a tie, not a worse match.
#: Seen on the spent real-docs sets: own blocks trailing by 0.009 were the right example, by
#: 0.048 and 0.15 the wrong one.
OWN_CODE_TIE = 0.02


def code_for(first: ScoredUnit, scored: list[ScoredUnit]) -> ScoredUnit | None:
    """The code block to quote with ``first`` (the best unit): the best-scoring block of its own
    section (same chunk, under the same non-empty headings or a subsection of them) when it
    scores at least :data:`OWN_CODE_SHARE` of the context's best block, so an example is not
    taken from a neighbouring entry when the entry asked about has a fitting one; else the
    context's best block; None when there is no block."""
    blocks = [su for su in scored if su.unit.kind == "code"]
    heads = first.unit.headings
    if first.unit.kind != "definition" and heads and any(
            su.unit.kind == "definition" and su.unit.lead == heads[-1] for su in scored
            if su.chunk_index == first.chunk_index):
        heads = heads[:-1]  # a sentence under a definition's term: its section is the term's
    own = [su for su in blocks if heads and su.chunk_index == first.chunk_index
           and su.unit.headings[:len(heads)] == heads]
    if own and own[0].score >= OWN_CODE_SHARE * blocks[0].score:
        return own[0]
    return blocks[0] if blocks else None


#: Most characters between the end of the best unit and the start of the code block that follows
#: it for :func:`adjacent_code` (a lead-in such as "Here's an example that creates a build
#: directory ...:" or "### Example" sits between them).
ADJACENT_CODE_GAP = 400


def units_after(su: ScoredUnit, scored: list[ScoredUnit]) -> list[ScoredUnit]:
    """The units of ``scored`` after ``su`` in its chunk, in text order."""
    return sorted((o for o in scored if o.chunk_index == su.chunk_index and o.unit.start >= su.unit.end),
                  key=lambda o: o.unit.start)


def adjacent_code(first: ScoredUnit, scored: list[ScoredUnit]) -> ScoredUnit | None:
    """The code block that comes right after ``first`` (the best unit) in its chunk: the next
    quotable unit in text order is a block, under the same headings or a subsection of them,
    starting at most :data:`ADJACENT_CODE_GAP` characters after ``first`` ends. It is the
    example of what ``first`` says ("you can use the support/mkclone script to create a build
    tree ..." then ``bash .../support/mkclone -s ...``; a lint's description then its Example);
    None when prose comes first or ``first`` is itself a block."""
    if first.unit.kind == "code":
        return None
    later, heads = units_after(first, scored), first.unit.headings
    if (later and later[0].unit.kind == "code" and later[0].unit.start - first.unit.end <= ADJACENT_CODE_GAP
            and later[0].unit.headings[:len(heads)] == heads):
        return later[0]
    return None


def block_after(block: ScoredUnit, scored: list[ScoredUnit]) -> ScoredUnit | None:
    """The code block right after the code block ``block``: the next quotable unit of its chunk
    is a block under the same headings, starting at most :data:`ADJACENT_CODE_GAP` characters
    after ``block`` ends (only a lead-in such as "This will produce:" between them): the output
    of the example. None otherwise."""
    later = units_after(block, scored)
    if later and later[0].unit.kind == "code" and later[0].unit.headings == block.unit.headings \
            and later[0].unit.start - block.unit.end <= ADJACENT_CODE_GAP:
        return later[0]
    return None


def line_indent(text: str, pos: int) -> int:
    r"""Leading blanks of the line of ``text`` holding offset ``pos`` (a list item's nesting depth).

    >>> line_indent("- a\n  - b\n", 8), line_indent("- a\n  - b\n", 2)
    (2, 0)
    """
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", start)
    line = text[start:] if end < 0 else text[start:end]
    return len(line) - len(line.lstrip(" \t"))


_EXAMPLE_LEAD = re.compile(r"^\W*(?:for\s+example|for\s+instance|e\.\s?g\.|example:|here\s+is\s+an\s+example)", re.I)
#: Most units between the best one and the "For example, ..." sentence :func:`example_after` takes.
EXAMPLE_REACH = 2


def example_after(first: ScoredUnit, scored: list[ScoredUnit]) -> ScoredUnit | None:
    """The sentence opening with "For example" / "For instance" / "e.g." among the
    :data:`EXAMPLE_REACH` units after ``first`` (the best unit) in its chunk, under the same
    headings: the example of what ``first`` says, when it is written in prose (a PDF manual sets
    its commands inside such sentences). None when there is none."""
    later = units_after(first, scored)[:EXAMPLE_REACH]
    return next((su for su in later if su.unit.kind == "sentence" and su.unit.headings == first.unit.headings
                 and _EXAMPLE_LEAD.match(su.unit.text)), None)


def _too_short(text: str) -> bool:
    """A status or value line that does not say what an entry is, so it does not open one: under
    four words with a colon ("Type: End-of-Life.", "Default: 0."), or under three words
    ("Deprecated."). A short sentence that says what the entry does ("Silence deprecation
    warnings." under ``--no-deprecation``) opens it.

    >>> [_too_short(t) for t in ("Default: 0.", "Deprecated.", "Silence deprecation warnings.")]
    [True, True, False]
    """
    words = len(re.findall(r"[\w'’-]+", text))
    return words < 3 or (words < 4 and ":" in text)


def _about(unit: Unit) -> set[str]:
    """What a unit is about: its lead term's analyzed terms when it has one (a list item
    ``symbols - same as debuginfo, ...`` is about *symbols*, not *debuginfo*), else its text's."""
    return set(analyze(unit.lead)) if unit.lead else set(analyze(unit.text))


def _same_text(a: str, b: str) -> bool:
    return " ".join(re.findall(r"\w+", a.lower())) == " ".join(re.findall(r"\w+", b.lower()))


# -- short answers ---------------------------------------------------------------------------
_NUMBER = r"(?:[$€£]\s?)?\d[\d,.]*(?:\s?(?:%|percent|per cent))?"
_MONTHS = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_DATE = re.compile(rf"\b(?:{_MONTHS}\s+\d{{1,2}},?\s+\d{{3,4}}|\d{{1,2}}\s+{_MONTHS}\s+\d{{3,4}}|{_MONTHS}\s+\d{{3,4}}|(?:in\s+)?\d{{3,4}}s?)\b")
_QUANTITY = re.compile(rf"{_NUMBER}(?:\s+(?:million|billion|thousand|hundred))?(?:\s+[a-z]+)?")
_NAME = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|de|von|van|the|and|du|la)?\s*[A-Z][\w'’.-]*)*")


def short_answer(question: str, sentence: str) -> str:
    """A short answer span from ``sentence`` by expected answer type (rule based; no QA model).

    * *when / what year / what century* → the first date or year not in the question;
    * *how many / how much / what percentage / how long / how old* → the first number with the
      word after it, not in the question;
    * *who / whom / whose / where / which / what (name)* → the first run of capitalised words
      not in the question;
    * otherwise → the sentence without the words it shares with the question, up to 12 words.

    Returns '' when nothing fits. This is the classic answer-type heuristic of pre-neural QA
    systems (e.g. Moldovan et al. 2000); it is weak, and is there so span-level metrics mean
    something without an LLM.
    """
    q = question.lower()
    q_words = set(re.findall(r"\w+", q))

    def fresh(span: str) -> bool:
        words = set(re.findall(r"\w+", span.lower()))
        return bool(words) and not words <= q_words

    if re.search(r"\b(when|what year|which year|what century|what decade|what date)\b", q):
        for m in _DATE.finditer(sentence):
            if fresh(m.group(0)):
                return m.group(0).removeprefix("in ").strip()
    if re.search(r"\b(how many|how much|what percentage|what percent|how long|how old|how far|how large|how big|what number)\b", q):
        for m in _QUANTITY.finditer(sentence):
            if fresh(m.group(0)):
                return m.group(0).strip(" ,.")
    if re.search(r"\b(who|whom|whose|where|which|what)\b", q):
        first = True
        for m in _NAME.finditer(sentence):
            span = m.group(0).strip(" .,")
            if first and m.start() == 0 and " " not in span:
                first = False
                continue
            first = False
            if fresh(span):
                return span
    words = [w for w in re.findall(r"[\w'’-]+", sentence) if w.lower() not in q_words]
    return " ".join(words[:12])
