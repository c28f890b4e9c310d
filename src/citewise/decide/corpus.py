"""Count a folder's o200k_base tokens per principal (what one user's long-context prompt must hold)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from citewise.core import PUBLIC_GROUP, CitewiseError, InputError


@dataclass(frozen=True)
class CorpusTokens:
    """o200k_base tokens of the documents each principal may read.

    Attributes:
        root: the folder counted.
        tokens: principal (``public`` or a group) → tokens of the documents it may read.
        documents: principal → number of documents it may read.
        groups: every group declared in the corpus's permissions, sorted.
        skipped: one line per file that failed to load (``path: reason``).
        differ: two principals see different document sets (per-user permissions apply).
    """

    root: str
    tokens: dict[str, int]
    documents: dict[str, int]
    groups: tuple[str, ...]
    skipped: tuple[str, ...]
    differ: bool

    @property
    def max_tokens(self) -> int:
        """The largest corpus any one principal may read (what a long-context prompt must hold)."""
        return max(self.tokens.values())


def count_corpus_tokens(root: str | Path, groups: Iterable[str] | None = None) -> CorpusTokens:
    """Count the o200k_base tokens of a folder's documents, per principal.

    Each document's body text (front matter removed) is counted. A document without permissions,
    or whose permissions include ``public``, is readable by everyone (the ingest default). The
    principals are ``public`` plus one per group of ``groups``; each group sees the public
    documents plus those it is named in. Without ``groups``, every group declared in the corpus.
    ``differ`` is True when two principals see different document sets (per-user permissions).

    Raises:
        InputError: ``root`` does not exist, or no document could be loaded.
    """
    from citewise.text.loaders import load_folder
    from citewise.text.tokens import count_tokens_batch

    docs, skipped = [], []
    for item in load_folder(Path(root)):
        if isinstance(item, CitewiseError):
            skipped.append(str(item))
        else:
            docs.append(item)
    if not docs:
        raise InputError(str(root), "no document could be loaded to count its tokens")
    counts = count_tokens_batch([d.text for d in docs])
    declared = tuple(sorted({g for d in docs for g in d.groups if g != PUBLIC_GROUP}))
    principals = [PUBLIC_GROUP] + sorted({g for g in (groups if groups is not None else declared) if g != PUBLIC_GROUP})
    tokens: dict[str, int] = {}
    ndocs: dict[str, int] = {}
    seen: dict[str, frozenset[str]] = {}
    for p in principals:
        visible = [i for i, d in enumerate(docs) if not d.groups or PUBLIC_GROUP in d.groups or p in d.groups]
        tokens[p] = int(sum(int(counts[i]) for i in visible))
        ndocs[p] = len(visible)
        seen[p] = frozenset(docs[i].doc_id for i in visible)
    differ = len(set(seen.values())) > 1
    return CorpusTokens(str(root), tokens, ndocs, declared, tuple(skipped), differ)
